"""The Java oracle of heta-eval's Lucene analysis and BM25 (:mod:`heta_eval.lucene`):
Anserini 0.22.1 on Java 17 (:mod:`.anserini`, the programs it compiles in
``java/``) and the developer checks around it (``python -m
tools.lucene_oracle.oracle``, ``make lucene-oracle``). Developer tooling and benchmarks only:
not in the wheel, never needed by ``make test`` (the tests that use it skip without Java).
"""
