"""Mutation analysis of ``impl/``: run-time mutants (one realistic bug each), the world each needs,
and ``groupcheck mutants``, which searches each mutant with the systems' differential check.

Imports ``systems`` and below; imported by ``campaign`` (campaigns and counterexample files
against a mutant) and the CLI.
"""
