"""Campaigns and what they produce: the Spark job (``spark``: tasks of seeds, merging, the Spark
session, ``groupcheck campaign`` and the ``spark-submit`` entry), its benchmark (``bench``), the
report folder (``report``), counterexample files (``counterexample``) and ``groupcheck replay``
(``replay``), and the per-member timeline of a shrunk schedule (``timeline``).

May import every wing below it (``mutation``, ``proofs``, ``systems``, ``explore``, the catalogue);
imported only by the CLI and the benchmark command.
"""
