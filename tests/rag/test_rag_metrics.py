"""Context precision and citation precision / recall: hand-built cases (chunks cut through the
evidence, dangling citations, both citation forms) and a run on real SciFact claims."""

from __future__ import annotations

import asyncio

import pytest
from support.kb_fixtures import FirstClaims
from support.paths import shared_path

from heta_eval.adapters.scifact_claims import SciFactClaimsBenchmark
from heta_eval.evaluation import BenchmarkCase, EvidenceRecallAtK, QueryResponse, evaluate_responses
from heta_eval.models.protocol import BenchmarkEvaluatorProtocol
from heta_eval.rag.citations import CitationPrecision, CitationRecall, resolve_citations
from heta_eval.rag.context import ContextPrecisionAtK
from heta_eval.reference import Recipe
from heta_eval.reference.chunking import chunk_document
from heta_eval.runner import BenchmarkRunner

SKY = "The sky appears blue because air scatters short wavelengths more strongly."
GRASS = "Grass is green because chlorophyll absorbs red and blue light."
CASE = BenchmarkCase(
    id="q",
    query="Why is the sky blue and grass green?",
    expected={"evidence": [{"locator": {"document_id": "sky"}, "text": SKY}, {"text": GRASS}]},
)


def run(evaluator, response: dict, case: BenchmarkCase = CASE):
    return asyncio.run(evaluator.evaluate(case=case, response=QueryResponse(query="?", **response)))


def chunk(text: str, document_id: str | None = None, **extra) -> dict:
    source = {"document_id": document_id} if document_id else {}
    return {"text": text, "source": source, **extra}


RESULTS = [
    chunk("Unrelated text about oceans.", "ocean"),  # 1: nothing
    chunk("Any text at all.", "sky"),  # 2: holds SKY by locator
    chunk("Intro. " + GRASS + " Outro.", "plants"),  # 3: holds GRASS by text
    chunk("Grass is green because chlorophyll", "plants"),  # 4: GRASS cut by a chunk boundary
    chunk(SKY, "moon"),  # 5: SKY's text, but in another document: not evidence
]


def test_evaluators_follow_the_protocol():
    for evaluator in (ContextPrecisionAtK(3), CitationPrecision(), CitationRecall()):
        assert isinstance(evaluator, BenchmarkEvaluatorProtocol)
    assert ContextPrecisionAtK(3).name == "context_precision@3"
    with pytest.raises(ValueError, match="positive integer"):
        ContextPrecisionAtK(0)


def test_context_precision_counts_chunks_holding_any_gold_item():
    score = run(ContextPrecisionAtK(5), {"results": RESULTS})
    assert score.value == 2 / 5 and score.metadata["relevant_ranks"] == [2, 3]
    assert score.metadata["relevant_chunks"] == [{"rank": 2, "gold": [0]}, {"rank": 3, "gold": [1]}]
    # The chunk cut through GRASS holds it only when partial overlap is allowed.
    cut = run(ContextPrecisionAtK(5, min_token_overlap=0.5), {"results": RESULTS})
    assert cut.metadata["relevant_ranks"] == [2, 3, 4]


def test_context_precision_divides_by_k_like_p_at_k():
    assert run(ContextPrecisionAtK(10), {"results": RESULTS[:3]}).value == 2 / 10
    assert run(ContextPrecisionAtK(1), {"results": RESULTS}).value == 0.0
    empty = run(ContextPrecisionAtK(5), {"results": []})
    assert empty.value == 0.0 and not empty.skipped and empty.metadata["retrieved"] == 0


def test_context_precision_agrees_with_evidence_recall_matching():
    # Same matcher: a gold item recall finds is held by a chunk precision counts, and back.
    for k in (1, 2, 3, 5):
        recall = run(EvidenceRecallAtK(k), {"results": RESULTS})
        precision = run(ContextPrecisionAtK(k), {"results": RESULTS})
        found_ranks = {d["rank"] for d in recall.metadata["details"] if d["rank"]}
        assert found_ranks <= set(precision.metadata["relevant_ranks"])
        held = {g for c in precision.metadata["relevant_chunks"] for g in c["gold"]}
        assert len(held) == recall.metadata["matched"]


def test_cases_without_gold_evidence_are_skipped_never_zero():
    no_gold = BenchmarkCase(id="n", query="?", expected={"answers": ["x"]})
    for evaluator in (ContextPrecisionAtK(3), CitationPrecision(), CitationRecall()):
        score = run(evaluator, {"results": RESULTS, "answer": "x [1]"}, case=no_gold)
        assert score.skipped and score.value is None
        assert score.metadata["skip_reason"] == "case has no gold evidence"


def test_citation_markers_resolve_to_result_positions():
    response = {"results": RESULTS, "answer": "Blue sky [2]. Green [3, 1]; more [3][7] and [0]."}
    citations = resolve_citations(QueryResponse(query="?", **response))
    assert citations.source == "markers" and citations.positions == [1, 2, 0]
    assert citations.dangling == [7, 0]  # past the last result, and positions are 1-based
    precision = run(CitationPrecision(), response)
    # 5 distinct citations: [2] and [3] hold evidence, [1] does not, [7] and [0] dangle.
    assert precision.value == 2 / 5 and precision.metadata["supporting_ranks"] == [2, 3]
    assert precision.metadata["dangling"] == [7, 0]
    recall = run(CitationRecall(), response)
    assert recall.value == 1.0 and recall.metadata["missing"] == []


def test_citation_of_text_from_the_wrong_document_supports_nothing():
    response = {"results": RESULTS, "answer": "Because of scattering [5]."}
    assert run(CitationPrecision(), response).value == 0.0
    recall = run(CitationRecall(), response)
    assert recall.value == 0.0 and len(recall.metadata["missing"]) == 2


def test_citations_field_wins_over_markers_and_takes_reference_ids():
    results = [dict(r, reference_id=f"c{i}") for i, r in enumerate(RESULTS, 1)]
    response = {"results": results, "answer": "Blue [1].", "citations": ["c2", 4, "nope"]}
    citations = resolve_citations(QueryResponse(query="?", **response))
    assert citations.source == "field"
    assert (citations.positions, citations.dangling) == ([1, 3], ["nope"])
    assert run(CitationPrecision(), response).value == 1 / 3
    assert run(CitationRecall(), response).value == 1 / 2  # GRASS is only cut in chunk 4
    assert run(CitationRecall(min_token_overlap=0.5), response).value == 1.0


def test_an_answer_citing_nothing():
    response = {"results": RESULTS, "answer": "The sky is blue."}
    precision = run(CitationPrecision(), response)
    assert precision.skipped and "cites nothing" in precision.metadata["skip_reason"]
    recall = run(CitationRecall(), response)
    assert recall.value == 0.0 and recall.metadata["reason"] == "the answer cites nothing"
    none = run(CitationRecall(), {"results": RESULTS, "answer": None})
    assert none.value == 0.0 and none.metadata["reason"] == "response has no answer"


def test_a_malformed_citations_field_fails_loudly_and_is_recorded():
    for bad, message in [("1,2", "must be a list"), ([1.5], r"citations\[0\]"), ([True], "True")]:
        with pytest.raises(ValueError, match=message):
            resolve_citations(QueryResponse(query="?", results=RESULTS, citations=bad))
    report = evaluate_responses(
        [CASE], {"q": {"query": "?", "results": RESULTS, "citations": "1"}}, [CitationRecall()]
    )
    assert report.metrics["citation_recall"].failed == 1 and report.failures


# ------------------------------------------------------------------------- real SciFact


@pytest.fixture(scope="module")
def release():
    return shared_path("datasets", "scifact-release")


def test_context_precision_on_scifact_chunks_cut_through_the_rationale(release):
    bench = SciFactClaimsBenchmark(data_dir=release, download=False)
    case = next(c for c in bench.cases() if c.id == "3")  # doc 14717500, sentences 2, 5, 7
    chunks = chunk_document(bench.document_map()["14717500"], size=150, overlap=0)
    results = [{"text": c.text, "source": c.source()} for c in chunks]
    other = {"text": case.expected.evidence[0].text, "source": {"document_id": "4983"}}
    score = run(ContextPrecisionAtK(3), {"results": [other, *results]}, case=case)
    assert score.value == 2 / 3 and score.metadata["relevant_chunks"] == [
        {"rank": 2, "gold": [0]},
        {"rank": 3, "gold": [1, 2]},
    ]


def test_context_precision_through_the_runner_on_scifact_claims(release, tmp_path):
    bench = FirstClaims(40, data_dir=release, download=False)
    evaluators = [
        EvidenceRecallAtK(1),
        EvidenceRecallAtK(5),
        ContextPrecisionAtK(1),
        ContextPrecisionAtK(5),
    ]
    results = BenchmarkRunner(progress=False).run(
        benchmark=bench,
        recipe=Recipe(modes=["keyword_search"], chunking={"size": 64}),
        query_modes=("keyword_search",),
        evaluators=evaluators,
        output_dir=tmp_path / "out",
        cache_dir=False,
    )
    with_evidence = sum(bool(c.expected.evidence) for c in bench.cases())
    cp5 = results.metric("keyword_search", "context_precision@5")
    assert cp5.scored == with_evidence and cp5.skipped == 40 - with_evidence
    assert 0 < cp5.value < 1 and not results.partial
    for record in results.records:
        scores = record.scores
        if scores["context_precision@5"].skipped:
            assert scores["evidence_recall@5"].skipped
            continue
        # At k=1 the top chunk holds evidence exactly when recall@1 found some.
        assert (scores["context_precision@1"].value == 1.0) == (
            scores["evidence_recall@1"].value > 0
        )
        found = {d["rank"] for d in scores["evidence_recall@5"].metadata["details"] if d["rank"]}
        assert found <= set(scores["context_precision@5"].metadata["relevant_ranks"])
