"""The retrieval evaluator's public names, each from the module that does the job:

* :func:`~heta_eval.retrieval.run.evaluate_run` scores a document-level run (BEIR's
  semantics by default, any trec_eval measure with ``measures=``);
* :func:`~heta_eval.retrieval.run_file.evaluate_run_file` scores a run file;
* :func:`~heta_eval.retrieval.columnar_run.evaluate_columnar_run` scores a run held in arrays;
* :class:`~heta_eval.retrieval.metric.BeirRetrievalMetric` is the per-case evaluator of
  chunk-level responses, :func:`~heta_eval.retrieval.metric.beir_default_metrics` BEIR's grid.

>>> evaluate_run({"q": {"d": 1}}, {"q": {"d": 1.0}}).beir_dict()["ndcg"]["NDCG@10"]
1.0
"""

from __future__ import annotations

from heta_eval.retrieval.collapse import (
    CollapsedBatch,
    DocumentRanking,
    DocumentResolver,
    collapse_batch,
    collapse_to_documents,
    default_document_resolver,
)
from heta_eval.retrieval.columnar_run import DuplicateRowsError, evaluate_columnar_run
from heta_eval.retrieval.metric import BeirRetrievalMetric, beir_default_metrics
from heta_eval.retrieval.result import RunEvaluation
from heta_eval.retrieval.run import evaluate_run
from heta_eval.retrieval.run_file import evaluate_run_file

__all__ = [
    "BeirRetrievalMetric",
    "CollapsedBatch",
    "DocumentRanking",
    "DocumentResolver",
    "DuplicateRowsError",
    "RunEvaluation",
    "beir_default_metrics",
    "collapse_batch",
    "collapse_to_documents",
    "default_document_resolver",
    "evaluate_columnar_run",
    "evaluate_run",
    "evaluate_run_file",
]
