"""The compiled engine's kernels (numba, ``cache=True``), one module per job, as ranx lays
out its metrics: :mod:`.queries` drives them query by query; :mod:`.dedup` drops self-hits and
repeated doc ids; :mod:`.judgments` finds each row's label; :mod:`.order` ranks as trec_eval
does; :mod:`.ndcg`, :mod:`.ap`, :mod:`.recall` and :mod:`.precision` each compute one family
at every cutoff, :mod:`.custom` BEIR's ``evaluate_custom`` four (MRR, R_cap, Hole,
Accuracy). See :mod:`heta_eval.providers.engine` for the arrays they take.

Two things keep them as fast as one hand-fused kernel: the comparison in the merge sort is
written out, not a helper with numba's ``inline="always"`` (IR inlining made the sort
slower: docs/install.md); and numba's disk cache checks only the calling function's file, so
after editing a kernel module in a checkout, delete ``heta_eval/providers/kernels/__pycache__``
(an installed package gets fresh files, and so a fresh cache).
"""
