"""The providers behind the one evaluator: pytrec_eval is imported by its provider's module
alone, each provider's ``supports`` says exactly what it computes (against real pytrec_eval
and the compiled engine's own kernels), and the one choice hands ``engine=`` values to them."""

from __future__ import annotations

import ast
import math
import random
from pathlib import Path

import pytest
import pytrec_eval_ext

from heta_eval.io.validate import validate_qrels, validate_run
from heta_eval.measures.measure import TREC_FAMILIES, Measure, parse_measures
from heta_eval.providers import backends
from heta_eval.providers.compiled import COMPILED
from heta_eval.providers.provider import Provider
from heta_eval.providers.pytrec import PYTREC

ROOT = Path(__file__).resolve().parents[2]


def pytrec_importers(root: Path) -> set[str]:
    """Source files under ``root``'s package (and adapters) that import pytrec_eval or its
    C extension, by statement or by ``import_module`` / ``__import__`` with a literal."""
    found = set()
    for path in [*(root / "heta_eval").rglob("*.py"), *(root / "adapters").rglob("*.py")]:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                names = [node.module or ""] if not node.level else []
            elif isinstance(node, ast.Call) and ast.unparse(node.func).endswith(
                ("import_module", "__import__")
            ):
                names = [arg.value for arg in node.args if isinstance(arg, ast.Constant)]
            else:
                continue
            if any(str(name).split(".")[0] in ("pytrec_eval", "pytrec_eval_ext") for name in names):
                found.add(path.relative_to(root).as_posix())
    return found


def test_pytrec_eval_is_imported_only_by_the_pytrec_provider():
    assert pytrec_importers(ROOT) == {"heta_eval/providers/pytrec.py"}


def test_the_import_scan_finds_imports(tmp_path):
    package = tmp_path / "heta_eval"
    package.mkdir()
    (package / "a.py").write_text("def f():\n    from pytrec_eval_ext import RelevanceEvaluator\n")
    (package / "b.py").write_text("import importlib\nimportlib.import_module('pytrec_eval')\n")
    (package / "c.py").write_text('"""pytrec_eval, in words only."""\nimport heta_eval\n')
    assert pytrec_importers(tmp_path) == {"heta_eval/a.py", "heta_eval/b.py"}


def test_each_engine_value_names_a_provider():
    assert isinstance(PYTREC, Provider) and isinstance(COMPILED, Provider)
    assert backends.ENGINES == {"pytrec": PYTREC, "fast": COMPILED}
    ndcg = [Measure.parse("nDCG@10")]
    for engine, provider in backends.ENGINES.items():
        assert backends.choose_provider(engine, ndcg, large=False) is provider
        assert backends.choose_backend(engine, ndcg, large=True) == provider.name
    assert backends.choose_provider("auto", ndcg, large=False) is PYTREC
    assert backends.choose_provider("auto", ndcg, large=True) is COMPILED
    assert backends.choose_provider("auto", [*ndcg, Measure.parse("bpref")], large=True) is PYTREC
    with pytest.raises(ValueError, match="engine must be 'auto', 'pytrec' or 'fast', got 'numba'"):
        backends.choose_provider("numba", ndcg, large=True)
    with pytest.raises(ValueError, match="the compiled engine has no Bpref, RR@3; use engine="):
        backends.choose_provider("fast", parse_measures("bpref nDCG@3 RR@3"), large=False)


# Every trec_eval family (bare cutoff families expand to trec_eval's defaults), parameters,
# and the rules computed beside pytrec_eval; BEIR's families at cutoffs on both sides of the
# engine's Hole limit.
MEASURES = [
    *parse_measures(
        " ".join(TREC_FAMILIES)
        + " P.3 recall.2 ndcg_cut.1,4 map_cut.2 success.2 iprec_at_recall.0.25 set_F.0.5"
        + " utility.1,-1,0,0 ndcg.1=0,2=3 Judged@3 RR@2 MRR@1 MRR@3 R_cap@2 Hole@3 Accuracy@2"
        + f" NDCG@1 MAP@3 Recall@2 P@1 Hole@{2**53} Hole@{2**53 + 1}"
    )
]
# Hand-made measures no parse gives: a family pytrec_eval does not know, text families, and
# families whose key needs a cutoff or level (trec_eval's default is several keys).
UNPARSED = [Measure(f) for f in ("bogus", "runid", "relstring", "P", "iprec_at_recall")]
UNPARSED += [Measure(f) for f in ("judged", "mrr", "hole")]

DOCS = [f"d{i}" for i in range(8)]
# Ties, float32-close values (distinct in float64, equal in float32), negatives, zeros.
SCORES = [0.0, 1.0, 1.0, 2.5, -1.0, 1.0000000001, 1.0000000002, 3.0, 0.5]


def random_case(seed: int) -> tuple[dict, dict]:
    """Judged, empty-qrels and unjudged queries; empty rankings; self-hits; labels -2..3;
    validated, as every provider receives its input."""
    rng = random.Random(seed)
    qrels = {}
    for qid in rng.sample(["q1", "q2", "q3", "q4"], rng.randint(1, 4)):
        docs = rng.sample([*DOCS, qid], rng.randint(0, 6))
        qrels[qid] = {doc: rng.randint(-2, 3) for doc in docs}
    run = {}
    for qid in rng.sample(["q1", "q2", "q3", "q4", "q9"], rng.randint(1, 5)):
        docs = rng.sample([*DOCS, qid], rng.randint(0, 7))
        run[qid] = {doc: rng.choice(SCORES) for doc in docs}
    return validate_qrels(qrels), validate_run(run)


CASES = [random_case(seed) for seed in range(40)]


def scored_queries(qrels, run, m: Measure) -> set[str]:
    """The queries pytrec_eval and BEIR score: non-empty qrels (BEIR's custom families: any
    qrels entry)."""
    custom = m.rule.startswith("beir_")
    return {q for q in run if q in qrels and (custom or qrels[q])}


def pytrec_eval_answers(m: Measure) -> bool:
    """Whether real pytrec_eval gives ``m``'s key for ``m``'s request."""
    try:
        evaluator = pytrec_eval_ext.RelevanceEvaluator({"q": {"a": 1}}, {m.trec_name}, 1, False)
        return m.trec_key in evaluator.evaluate({"q": {"a": 1.0, "b": 0.5}})["q"]
    except (KeyError, TypeError):  # no key for its family, or a request it cannot resolve
        return False


def same(a: float, b: float) -> bool:
    return a == b or (math.isnan(a) and math.isnan(b))


@pytest.mark.parametrize("m", MEASURES + UNPARSED, ids=str)
def test_pytrec_supports_what_pytrec_eval_and_the_rules_beside_it_compute(m):
    if m.rule == "trec_eval":
        assert PYTREC.supports([m]) == pytrec_eval_answers(m)
    else:  # computed here, on the first k: a rule without its cutoff measures nothing
        assert PYTREC.supports([m]) == (m.param is not None)
    if not PYTREC.supports([m]):
        return
    for qrels, run in CASES:
        values = PYTREC.evaluate(qrels, run, [m])
        assert {q for q, row in values.items() if m in row} == scored_queries(qrels, run, m)
        if m.rule != "trec_eval":
            continue
        # Real pytrec_eval on the ranked queries.
        judged = {q: docs for q, docs in qrels.items() if docs}
        ranked = {q: docs for q, docs in run.items() if q in judged and docs}
        if ranked:
            evaluator = pytrec_eval_ext.RelevanceEvaluator(judged, {m.trec_name}, 1, False)
            for qid, row in evaluator.evaluate(ranked).items():
                assert same(values[qid][m], row[m.trec_key]), (qid, m)


def raw_engine_values(qrels, run, m: Measure) -> dict[str, float] | None:
    """The compiled engine's kernels asked directly for ``m`` (not through the provider), on
    the queries pytrec_eval scores; None when the engine has no column for it."""
    from heta_eval.providers.engine import columnar_run_from_dict, evaluate_columnar, measure_column

    if m.legacy is None:
        return None
    k = int(m.param or 0)
    values, _ = evaluate_columnar(
        columnar_run_from_dict(run, ignore_identical_ids=False), qrels, (k,), [m.legacy]
    )
    rows = dict(zip(run, values[:, measure_column(m, (k,))].tolist(), strict=True))
    return {q: rows[q] for q in scored_queries(qrels, run, m)}


@pytest.mark.parametrize("m", MEASURES + UNPARSED, ids=str)
def test_compiled_supports_exactly_what_its_kernels_compute_as_pytrec_eval_does(m):
    supported = COMPILED.supports([m])
    agrees = m.legacy is not None
    for qrels, run in CASES if agrees else ():
        pytrec = {q: row[m] for q, row in PYTREC.evaluate(qrels, run, [m]).items() if m in row}
        agrees = agrees and raw_engine_values(qrels, run, m) == pytrec
    assert supported == agrees
    if supported:  # and the provider gives those numbers, from a dict or from arrays
        from heta_eval.providers.engine import columnar_run_from_dict

        for qrels, run in CASES:
            expected = PYTREC.evaluate(qrels, run, [m])
            assert COMPILED.evaluate(qrels, run, [m]) == expected
            arrays = columnar_run_from_dict(run, ignore_identical_ids=False)
            assert COMPILED.evaluate(qrels, arrays, [m]) == expected
    else:
        with pytest.raises(ValueError, match="the compiled engine has no"):
            COMPILED.evaluate(CASES[0][0], CASES[0][1], [m])
