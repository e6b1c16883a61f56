"""What must hold, and how groupcheck looks for violations: one wing per idea.

A *wing* is a subpackage of ``properties`` or one of its top-level modules. The data flow reads in
the folder names — seed → schedule (``explore``) → system(s) under test (``systems``) → verdict
(``catalogue``) → campaign → report (``campaign``) — and dependencies point one way, from the
command line down to the model. :data:`LAYERS` is the layering, top first; this diagram is the same
list with what each wing is for (``tests/test_layout.py`` checks that the two agree)::

    cli                                         the groupcheck command
      → conform/                                broker conformance: virtual members, the judge, groupcheck conform broker
      → clients/                                client conformance: runners, fault schedules, the client judge
      → campaign/                               Spark job, report, counterexample files, replay, explore
      → kip848/                                 KIP-848: its properties, walker, command, campaign part, broker judge
      → targets                                 the registry of systems groupcheck can check: how each starts, its profile
      → profiles/                               brokers' profiles: what the model is told, as TOML files, and their loader
      → bench_versions                          two checkouts' differential steps per second on the same schedules
      → mutation/, proofs/, live/, bench        mutants of impl/; z3 proofs; impl/ and others on TCP; steps per second
      → systems/                                what can be checked: the model, impl/ in the simulated world
      → explore/, impl_checks, coverage         how schedules are searched; always properties on impl's state; what was reached
      → catalogue, junit, error_paths           the properties: what must hold / be reached; a report as JUnit XML; the error-path matrices
      → engine/, findings, decisions            the run engine: tasks, executors, child processes; the one report shape; Kafka's coordinator decisions
      → errors, progress, provenance            the usage-error type, the progress line, where a result came from
      → model/, impl/

A module may import from its own wing and from the wings of the layers below it, never from a wing
of its own layer or above (``tests/test_layout.py`` checks this, that no import cycle exists, and
that every wing is declared here). **A new wing** — a new subpackage or top-level module of
``properties`` — goes into :data:`LAYERS` and into the diagram above, in the highest layer below
every wing that imports it and above every wing it imports (a layer of its own between two others
is fine); the layout test fails, naming the wing, until it is.
"""

#: The wings of ``properties``, top layer first. A name with a ``/`` in the diagram above is a
#: subpackage; the others are top-level modules. ``model`` and ``impl`` lie below every layer.
LAYERS = (
    ("cli",),
    ("conform",),
    ("clients",),
    ("campaign",),
    ("kip848",),
    ("targets",),
    ("profiles",),
    ("bench_versions",),
    ("mutation", "proofs", "live", "bench"),
    ("systems",),
    ("explore", "impl_checks", "coverage"),
    ("catalogue", "junit", "error_paths"),
    ("engine", "findings", "decisions"),
    ("errors", "progress", "provenance"),
)
