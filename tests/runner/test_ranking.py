"""A record's documents held as a compact :class:`Ranking`: the same pairs, the same files."""

from __future__ import annotations

import json
import pickle
import random
import sys

import pytest
from pydantic import ValidationError

from heta_eval.runner.ranking import Ranking
from heta_eval.runner.results import QueryRecord, ResultsFormatError, load_results


def _pairs(n: int, seed: int) -> list[tuple[str, float]]:
    rng = random.Random(seed)
    # One to four bytes; a newline (no valid id holds one, but a Ranking takes any string).
    alphabet = ["a", "Z", "7", "ä", "é\u200d", "👍🏽", "-", "#", "/", *(["\n"] * (seed % 2))]
    return [
        ("".join(rng.choices(alphabet, k=rng.randint(1, 12))) + str(i), rng.uniform(-50, 50))
        for i in range(n)
    ]


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("n", [0, 1, 2, 1001])
def test_a_ranking_reads_as_the_list_of_pairs_it_stands_for(n, seed):
    pairs = _pairs(n, seed=seed) + [("", 1.0)] * (n == 2)  # an empty id too
    n = len(pairs)
    ranking = Ranking(pairs)
    assert list(ranking) == pairs and len(ranking) == n and bool(ranking) == bool(n)
    assert ranking == pairs and ranking == [list(p) for p in pairs] and ranking == Ranking(pairs)
    assert ranking.ids == [d for d, _ in pairs] and ranking.scores == [s for _, s in pairs]
    assert dict(ranking) == dict(pairs)
    for index in [0, n - 1, -1, -n, n // 2] if n else []:
        assert ranking[index] == pairs[index]
    for part in [slice(None, 10), slice(3, -3), slice(None, None, -2), slice(n, None)]:
        assert ranking[part] == pairs[part]
    for bad in (n, -n - 1):
        with pytest.raises(IndexError):
            ranking[bad]
    assert pickle.loads(pickle.dumps(ranking)) == ranking
    assert Ranking.of(ranking.ids, ranking.scores) == ranking


def test_scores_keep_every_bit():
    # A run file writes repr(score): the held value must be the very float given.
    scores = [0.1 + 0.2, 1e-310, -0.0, 2.0**-1074, 1.7976931348623157e308, 3]
    ranking = Ranking((f"d{i}", s) for i, s in enumerate(scores))
    assert [repr(s) for s in ranking.scores] == [repr(float(s)) for s in scores]


def test_a_ranking_is_far_smaller_than_the_list():
    # ASCII ids, as BEIR's: a str of them takes a byte a character (others take 2 or 4).
    rng = random.Random(1)
    pairs = [(f"doc{rng.randrange(10**7)}", rng.random()) for _ in range(1000)]
    as_list = sys.getsizeof(pairs) + sum(
        sys.getsizeof(p) + sys.getsizeof(p[0]) + sys.getsizeof(p[1]) for p in pairs
    )
    ranking = Ranking(pairs)
    held = sum(sys.getsizeof(part) for part in (ranking._ids, ranking._ends, ranking._scores))
    assert held * 5 < as_list


def test_a_record_writes_and_reads_back_the_same_json():
    pairs = _pairs(50, seed=2)
    record = QueryRecord(case_id="q1", mode="m", query="q", documents=pairs)
    assert isinstance(record.documents, Ranking)
    line = record.model_dump_json()
    assert json.loads(line)["documents"] == [[d, s] for d, s in pairs]  # the file's format
    again = QueryRecord.model_validate_json(line)
    assert again == record and list(again.documents) == pairs
    assert record.model_dump()["documents"] == pairs
    assert QueryRecord(case_id="q", mode="m", query="q").documents == []
    schema = QueryRecord.model_json_schema()["properties"]["documents"]
    assert schema["type"] == "array"


@pytest.mark.parametrize(
    ("documents", "message"),
    [
        ([["d1", 1.0], ["d2", "high"]], "document 1: score 'high' is not a number"),
        ([["d1", 1.0], [7, 2.0]], "document 1: id 7 is not a string"),
        ([["d1", 1.0, 3]], "document 0: ['d1', 1.0, 3] is not a [document id, score] pair"),
        ([["d1", True]], "document 0: score True is not a number"),
        ("d1", "expected a list of [document id, score] pairs, got str"),
        ({"d1": 1.0}, "expected a list of [document id, score] pairs, got dict"),
    ],
)
def test_a_bad_documents_field_is_refused_naming_the_pair(documents, message):
    with pytest.raises(ValidationError, match=message.replace("[", r"\[")):
        QueryRecord(case_id="q", mode="m", query="q", documents=documents)


def test_a_bad_line_in_a_results_folder_is_named(tmp_path):
    good = QueryRecord(case_id="q1", mode="m", query="q", documents=[("d1", 1.0)])
    bad = good.model_dump_json().replace('["d1",1.0]', '["d1",null]')
    (tmp_path / "per_query.jsonl").write_text(good.model_dump_json() + "\n" + bad + "\n")
    summary = {"benchmark": "b", "knowledge_base": "k", "evaluators": [], "top_k": 10, "modes": {}}
    (tmp_path / "summary.json").write_text(json.dumps(summary))
    with pytest.raises(
        ResultsFormatError, match=r"per_query\.jsonl:2: .*field documents: .*score None"
    ) as caught:
        load_results(tmp_path)
    assert "\n" not in str(caught.value)  # one line, as every error at the boundary
    (tmp_path / "summary.json").write_text(json.dumps({**summary, "top_k": "ten"}))
    with pytest.raises(
        ResultsFormatError, match=r"summary\.json: not a heta-eval summary: field top_k: "
    ) as caught:
        load_results(tmp_path)
    assert "\n" not in str(caught.value)
