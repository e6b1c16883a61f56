"""z3 proofs: inductive proofs of the server-side always properties over a symbolic group
(``symbolic``), the timing arithmetic in Java's bit widths (``timing``), and ``groupcheck prove``
with its proof table (``prove``).

Imports the catalogue and ``model``; imported by ``campaign`` (the report's proof table) and the CLI.
"""
