"""What must hold, and how groupcheck looks for violations: one wing per idea.

The data flow reads in the folder names — seed → schedule (``explore``) → system(s) under test
(``systems``) → verdict (``catalogue``) → campaign → report (``campaign``) — and dependencies point
one way, from the command line down to the model::

    cli, bench
      → campaign/     Spark job, report, counterexample files, replay
      → mutation/, proofs/, live/   mutants of impl/; z3 proofs; impl/ and others on TCP
      → systems/      what can be checked: the model, impl/ in the simulated world
      → explore/      how schedules are searched: seeded walker, Hypothesis, shrinking
      → catalogue, impl_checks, coverage   what must hold / be reached
      → errors        the one usage-error type every command shares
      → model/, impl/

A module may import from its own wing and from the wings below it, never from a wing above
(``tests/test_layout.py`` checks this and that no import cycle exists).
"""
