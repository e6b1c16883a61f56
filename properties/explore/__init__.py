"""How schedules are searched: the seeded walker (``walker``), the Hypothesis state machines
(``machines``) and their settings profiles (``profiles``), and shrinking a failing schedule with
its failure signature (``shrink``).

Everything here works on the model world, with an optional *companion* (a system run beside the
model on every event) handed in by the caller; it imports the catalogue and ``model``, never
``properties.systems`` or anything above it. Imported by ``systems``, ``mutation``, ``proofs``,
``campaign`` and the CLI.
"""
