"""SciFact claims as a chunk-level evidence benchmark (the SciFact release layout).

BEIR judges whole documents; SciFact's release also says *which sentences* of an abstract
support or contradict each claim. This adapter keeps those rationales, so
:class:`~heta_eval.evaluation.EvidenceRecallAtK` can check whether the retrieved chunks hold
the evidence, not only whether the right abstract came back.

* documents: one per abstract; ``text`` = the sentences joined by single spaces (byte for
  byte BEIR SciFact's corpus text), ``sentences`` = each sentence's character span in it, so
  chunks know which sentences they hold (``source["sentence_index"]``).
* cases: the 300 dev claims (the BEIR SciFact test queries, same ids); gold evidence = each
  rationale sentence (locator ``{"document_id", "sentence_index"}`` plus its text);
  ``relevance`` = the claim's ``cited_doc_ids`` (exactly BEIR SciFact's test qrels); gold
  answer = the label ``SUPPORT``/``CONTRADICT``, or ``NOT_ENOUGH_INFO`` without evidence.

>>> bench = SciFactClaimsBenchmark(data_dir="../shared/datasets/scifact-release")  # doctest: +SKIP
>>> case = bench.cases()[1]  # doctest: +SKIP
>>> case.id, case.expected.answers, case.expected.evidence[0].locator  # doctest: +SKIP
('3', ['SUPPORT'], {'document_id': '14717500', 'sentence_index': 2})
>>> doc = bench.document_map()["14717500"]  # doctest: +SKIP
>>> doc.text[slice(*doc.sentences[2])] == case.expected.evidence[0].text  # doctest: +SKIP
True
>>> sentence_spans(["Cats purr.", "Dogs bark."])
('Cats purr. Dogs bark.', [(0, 10), (11, 21)])
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Sequence
from functools import cached_property
from pathlib import Path
from typing import Any

from heta_eval.data.download import DownloadError, download_dataset
from heta_eval.data.locate import (
    SHARED_DATA,
    DatasetNotFoundError,
    how_to_get,
    resolve_data_root,
)
from heta_eval.data.registry import DatasetInfo, get_dataset
from heta_eval.models.records import (
    BenchmarkCase,
    Document,
    EvaluationScore,
    ExpectedOutput,
    GoldEvidence,
    QueryResponse,
)
from heta_eval.rag.answers import AnswerExactMatch
from heta_eval.rag.evidence import EvidenceRecallAtK
from heta_eval.rag.normalize import normalize_answer
from heta_eval.retrieval.metric import beir_default_metrics

__all__ = [
    "EVIDENCE_K_VALUES",
    "LABELS",
    "RETRIEVAL_K_VALUES",
    "ClaimLabelExactMatch",
    "SciFactClaimsBenchmark",
    "find_release",
    "sentence_spans",
]

NAME = "scifact-claims"
#: The claim labels; ``NOT_ENOUGH_INFO`` is the gold answer of a claim without evidence.
LABELS = ("SUPPORT", "CONTRADICT", "NOT_ENOUGH_INFO")
#: k values of :class:`EvidenceRecallAtK` in :meth:`SciFactClaimsBenchmark.evaluators`.
EVIDENCE_K_VALUES = (1, 3, 5, 10)
#: k values of the BEIR metrics (BEIR's defaults without 1000: the runner fetches 100 hits).
RETRIEVAL_K_VALUES = (1, 3, 5, 10, 100)

_SPLITS = ("train", "dev", "test")


def sentence_spans(sentences: Sequence[str]) -> tuple[str, list[tuple[int, int]]]:
    """The abstract's text (sentences joined by single spaces, as BEIR SciFact built its
    corpus) and each sentence's ``(start, end)`` span in it.

    A span covers the sentence without surrounding whitespace: about 3,700 release sentences
    end in ``"   \\n"``, which stays in the text (BEIR parity) but not in the span.

    >>> text, spans = sentence_spans(["A b.  \\n", "C d."])
    >>> text, spans, [text[s:e] for s, e in spans]
    ('A b.  \\n C d.', [(0, 4), (8, 12)], ['A b.', 'C d.'])
    """
    spans: list[tuple[int, int]] = []
    offset = 0
    for sentence in sentences:
        stripped = sentence.strip()
        start = offset + (sentence.find(stripped) if stripped else 0)
        spans.append((start, start + len(stripped)))
        offset += len(sentence) + 1  # the joining space
    return " ".join(sentences), spans


def _has_release(folder: Path, split: str) -> bool:
    return (folder / "corpus.jsonl").is_file() and (folder / f"claims_{split}.jsonl").is_file()


def find_release(data_dir: str | os.PathLike[str] | None = None, split: str = "dev") -> Path | None:
    """The folder holding ``corpus.jsonl`` and ``claims_<split>.jsonl``, or None.

    Looked for under the data root (``data_dir``, else ``$HETA_EVAL_DATA``, else the cache):
    the root itself (``--data-dir ../shared/datasets/scifact-release``), ``<root>/data``,
    ``<root>/scifact-claims`` and ``<root>/scifact-claims/data`` (the release tarball
    unpacks to a ``data/`` folder).

    >>> find_release("/nonexistent") is None
    True
    """
    root = resolve_data_root(data_dir)
    folders = [root, root / "data", root / NAME, root / NAME / "data"]
    if data_dir is None:  # the shared data beside the checkout, as `make eval` uses it
        folders.append(SHARED_DATA / "scifact-release")
    for folder in folders:
        if _has_release(folder, split):
            return folder
    return None


class ClaimLabelExactMatch(AnswerExactMatch):
    """:class:`AnswerExactMatch` on the claim label, for knowledge bases that answer with one.

    An answer that is not one of :data:`LABELS` (case, punctuation and ``_``/space
    insensitive) is *skipped*, not scored False: the reference knowledge base answers with
    an extracted sentence, and a 0% label accuracy for it would be noise, not a finding.
    The run summary's skipped count shows how many answers were not labels.

    >>> import asyncio
    >>> case = BenchmarkCase(id="1", query="?", expected={"answers": ["NOT_ENOUGH_INFO"]})
    >>> def score(answer):
    ...     response = QueryResponse(query="?", answer=answer)
    ...     return asyncio.run(ClaimLabelExactMatch().evaluate(case=case, response=response))
    >>> score("not enough info").value, score("SUPPORT").value, score("Cells divide.").skipped
    (True, False, True)
    """

    name = "label_exact_match"

    async def evaluate(self, *, case: BenchmarkCase, response: QueryResponse) -> EvaluationScore:
        answer = response.answer or ""
        form = _label_form(answer)
        if case.expected.answers and form not in _LABEL_FORMS:
            return EvaluationScore.skip(
                self.name,
                "the answer is not a claim label (SUPPORT, CONTRADICT, NOT_ENOUGH_INFO)",
                answer=answer[:200],
            )
        if not case.expected.answers:
            return await super().evaluate(case=case, response=response)
        matched = next((g for g in case.expected.answers if _label_form(g) == form), None)
        return EvaluationScore(
            name=self.name,
            value=matched is not None,
            passed=matched is not None,
            metadata={"matched_answer": matched, "normalized_answer": form},
        )


def _label_form(text: str) -> str:
    # SQuAD's normalization deletes "_" (NOT_ENOUGH_INFO -> notenoughinfo); a label written
    # with spaces is the same label, so "_" counts as a space here.
    return normalize_answer(text.replace("_", " "))


_LABEL_FORMS = frozenset(_label_form(label) for label in LABELS)


class SciFactClaimsBenchmark:
    """The SciFact release as a benchmark: abstracts with sentence spans, claims with
    sentence-level rationales, document relevance and label answers.

    Data is looked up with :func:`find_release` and, when missing and ``download`` is True,
    downloaded from the registry's URL (the release tarball; its checksum is pinned on first
    download). ``split`` is ``dev`` (300 labelled claims = BEIR SciFact test) or ``train``;
    ``test`` has no labels, so its cases carry no gold.
    """

    name = NAME

    def __init__(
        self,
        data_dir: str | os.PathLike[str] | None = None,
        download: bool = True,
        split: str = "dev",
    ) -> None:
        if split not in _SPLITS:
            raise ValueError(f"split must be one of {_SPLITS}, got {split!r}")
        self.info: DatasetInfo = get_dataset(NAME)
        self.data_dir = data_dir
        self.download = download
        self.split = split
        self.ignore_identical_ids = self.info.ignore_identical_ids

    def __repr__(self) -> str:
        return f"SciFactClaimsBenchmark(split={self.split!r})"

    # ------------------------------------------------------------------ data
    @cached_property
    def folder(self) -> Path:
        """The release folder on disk (downloaded first if needed and allowed)."""
        found = find_release(self.data_dir, self.split)
        if found is not None:
            return found
        root = resolve_data_root(self.data_dir)
        if not self.download:
            raise DatasetNotFoundError(how_to_get(NAME, root / NAME))
        try:
            download_dataset(NAME, data_dir=self.data_dir)
        except DownloadError as error:
            raise DatasetNotFoundError(str(error)) from error
        found = find_release(self.data_dir, self.split)
        if found is None:
            raise DatasetNotFoundError(
                f"{NAME}: the download holds no corpus.jsonl + claims_{self.split}.jsonl under "
                f"{root / NAME}"
            )
        return found

    @cached_property
    def _abstracts(self) -> dict[str, dict[str, Any]]:
        # Doc id -> raw corpus record, in file order (documents() streams in this order).
        with (self.folder / "corpus.jsonl").open(encoding="utf-8") as handle:
            records = (json.loads(line) for line in handle if line.strip())
            return {str(r["doc_id"]): r for r in records}

    def _document(self, record: dict[str, Any]) -> Document:
        text, spans = sentence_spans(record["abstract"])
        return Document(
            id=str(record["doc_id"]),
            title=record.get("title", ""),
            text=text,
            sentences=spans,
            metadata={"structured": bool(record.get("structured", False))},
        )

    def documents(self) -> Iterator[Document]:
        """One :class:`Document` per abstract, in corpus order."""
        return (self._document(record) for record in self._abstracts.values())

    def document_map(self) -> dict[str, Document]:
        """Every document by id."""
        return {doc.id: doc for doc in self.documents()}

    @cached_property
    def claims(self) -> list[dict[str, Any]]:
        """The raw claim records of the split, in file order."""
        path = self.folder / f"claims_{self.split}.jsonl"
        with path.open(encoding="utf-8") as handle:
            return [json.loads(line) for line in handle if line.strip()]

    def _case(self, claim: dict[str, Any]) -> BenchmarkCase:
        evidence: list[GoldEvidence] = []
        labels: list[str] = []
        for doc_id, rationales in claim.get("evidence", {}).items():
            abstract = self._abstracts[str(doc_id)]["abstract"]
            for rationale in rationales:
                labels.append(rationale["label"])
                for index in rationale["sentences"]:
                    evidence.append(
                        GoldEvidence(
                            locator={"document_id": str(doc_id), "sentence_index": index},
                            text=abstract[index].strip(),
                        )
                    )
        if len(set(labels)) > 1:  # never in the release; refuse rather than pick one
            raise ValueError(f"claim {claim['id']} mixes labels {sorted(set(labels))}")
        # The test split hides evidence and labels: no gold answer rather than a wrong NEI.
        labelled = "evidence" in claim
        answers = [labels[0] if labels else "NOT_ENOUGH_INFO"] if labelled else []
        return BenchmarkCase(
            id=str(claim["id"]),
            query=claim["claim"],
            expected=ExpectedOutput(
                answers=answers,
                evidence=evidence,
                # BEIR's SciFact qrels are the cited documents (NEI claims included), not the
                # evidence keys: 112 dev claims have no evidence yet are judged.
                relevance={str(doc_id): 1 for doc_id in claim.get("cited_doc_ids", [])},
            ),
            metadata={"label": answers[0] if answers else None},
        )

    def cases(self) -> list[BenchmarkCase]:
        """One case per claim of the split, in file order."""
        return [self._case(claim) for claim in self.claims]

    # ------------------------------------------------------------------ scoring policy
    def evaluators(self) -> tuple[Any, ...]:
        """Evidence recall at k = 1, 3, 5, 10, the BEIR metrics on the cited documents
        (k = 1, 3, 5, 10, 100) and :class:`ClaimLabelExactMatch` (scored only for answers
        that are labels; others are skipped).

        >>> names = [e.name for e in SciFactClaimsBenchmark(download=False).evaluators()]
        >>> names[:4]
        ['evidence_recall@1', 'evidence_recall@3', 'evidence_recall@5', 'evidence_recall@10']
        >>> names[4], names[-1]
        ('ndcg@1', 'label_exact_match')
        """
        return (
            *(EvidenceRecallAtK(k) for k in EVIDENCE_K_VALUES),
            *beir_default_metrics(
                k_values=RETRIEVAL_K_VALUES, ignore_identical_ids=self.ignore_identical_ids
            ),
            ClaimLabelExactMatch(),
        )


def _main(argv: Sequence[str] | None = None) -> int:
    import argparse

    parser = argparse.ArgumentParser(
        prog="python -m heta_eval.adapters.scifact_claims",
        description="Summarize the SciFact claims benchmark (counts, labels, evidence).",
    )
    parser.add_argument("--data-dir")
    parser.add_argument("--split", default="dev", choices=_SPLITS)
    args = parser.parse_args(argv)
    bench = SciFactClaimsBenchmark(data_dir=args.data_dir, split=args.split)
    cases = bench.cases()
    from collections import Counter

    labels = Counter(case.expected.answers[0] if case.expected.answers else None for case in cases)
    print(f"{bench.name} ({bench.split}) from {bench.folder}")
    print(f"  documents: {len(bench._abstracts)}  claims: {len(cases)}  labels: {dict(labels)}")
    print(f"  evidence sentences: {sum(len(c.expected.evidence) for c in cases)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(_main())
