"""``make figures``: measure on this CPU what the README and the docs quote, keep it as this
kind of CPU's record (``bench/records/<kind>.json``), and rewrite the docs' generated tables
from every kind's record. No figure in those tables is typed by hand.

    python bench/figures.py                  # make bench + SciFact per route, record, render
    python bench/figures.py --skip-bench     # SciFact per route only (bench rows kept)
    python bench/figures.py --render         # rewrite the tables from the records only
    python bench/figures.py --check          # exit 1 where a table differs from the records
    python bench/figures.py --import-results REV   # a committed bench/results.json as a record

What it measures here: ``bench/run_all.py`` (``make bench``: every speed row, the encoding
routes against sentence-transformers, the cold ``make eval``), then SciFact (test split, the
dataset's own recipe: whole documents) through ``heta-eval run`` once per encoding route this
CPU runs, nDCG@10 of keyword, vector and hybrid search. A record carries the CPU (model,
kind, flags, cores), the date, the load, and the code it was measured with (heta-eval's
version, the git commit, the encoding version and the int8 schemes). A table row from a record
of older code (another encoding version or scheme) says so: its figures are not those the
code gives now. Records of CPUs not at hand stay as they were measured.

Generated tables sit between ``<!-- figures:NAME -->`` and ``<!-- /figures -->`` in the docs;
``tests/project/test_figures.py`` fails when one differs from what the records give.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import re
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
RECORDS = BENCH / "records"
#: The documents whose tables are generated, and the tables each holds.
DOCS = {
    "README.md": ("scifact", "speed"),
    "docs/benchmarks.md": ("scifact", "bench"),
    "docs/encoding.md": ("defaults", "encoding"),
}
MODES = ("keyword_search", "vector_search", "hybrid_search")
#: The order kinds are listed in (heta_eval.encoding.cpu.KINDS).
KIND_ORDER = ("amx", "avx512-bf16-amd", "avx512-bf16-intel", "vnni", "avx2", "other")
ROUTE_ORDER = (
    "torch-float32",
    "torch-bfloat16",
    "torch-float16",
    "onnxruntime-int8",
    "openvino-int8",
)
#: The goal of a cold ``make eval DATASET=scifact`` (issue 53), seconds.
COLD_EVAL_GOAL = 100
#: The README's speed rows: a label and the ``make bench`` targets that give it (the first
#: present in a record); ``per_kind``: a row for every kind (what depends on the CPU kind),
#: else one row from the newest record of the current code (or the newest record).
SPEED = (
    ("run-file evaluation (6,980 x 1,000) vs BEIR's path", ("run-file evaluation",), False),
    ("run-file evaluation vs ranx", ("run-file evaluation vs ranx",), False),
    (
        "`heta-eval evaluate` whole process, SciFact run, vs a plain pytrec_eval script",
        ("one-shot evaluate (SciFact run, 300 queries)",),
        False,
    ),
    (
        "`heta-eval evaluate` whole process, run file, vs BEIR's path",
        ("run-file evaluation, whole process",),
        False,
    ),
    (
        "`heta-eval trec_eval` 2CR line vs trec_eval 9.0.8 (C)",
        ("trec_eval 2CR shape (-c -m ndcg_cut.10 -m recall.100,1000 -m map)",),
        False,
    ),
    ("`heta-eval trec_eval -m all_trec` vs trec_eval 9.0.8 (C)", ("trec_eval -m all_trec",), False),
    (
        "25 metrics on chunk-level responses, columns, vs pytrec_eval alone",
        ("chunk-level responses, columns (25 metrics)",),
        False,
    ),
    (
        "25 metrics on chunk-level responses, objects, vs pytrec_eval alone",
        ("chunk-level responses, objects (25 metrics)",),
        False,
    ),
    ("BM25 top-1000 batch search vs bm25s (numba)", ("keyword_search top-1000 batch",), False),
    (
        "fusion of two 7,000 x 1,000 runs vs `ranx.fuse`, rrf",
        ("fusion, 2 runs x 7,000 queries x 1,000, rrf",),
        False,
    ),
    ("MiniLM encoding, `auto`'s route, vs sentence-transformers float32", ("(auto)",), True),
    ("`make eval DATASET=scifact`, three modes, cold cache", ("(cold cache)",), True),
)


# -- the code a record was measured with --------------------------------------------------


def current_code() -> dict[str, Any]:
    """What makes figures comparable: heta-eval's version, the git commit, the encoding
    version and the int8 schemes."""
    sys.path.insert(0, str(ROOT))
    import heta_eval
    from heta_eval.encoding import dense, onnx_int8, openvino_int8

    return {
        "version": heta_eval.__version__,
        "commit": _git("rev-parse", "--short", "HEAD") or "unknown",
        "encoding": dense.ENCODING_VERSION,
        "schemes": {"onnxruntime-int8": onnx_int8.SCHEME, "openvino-int8": openvino_int8.SCHEME},
    }


def is_current(record: dict[str, Any], code: dict[str, Any]) -> bool:
    """Whether a record's figures are what the current code gives (same encoding version and
    int8 schemes; other changes do not move them)."""
    mine = record.get("code", {})
    return mine.get("encoding") == code["encoding"] and mine.get("schemes") == code["schemes"]


def _git(*args: str) -> str:
    try:
        done = subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True)
    except OSError:
        return ""
    return done.stdout.strip() if done.returncode == 0 else ""


def _show(rev: str, module: str) -> str:
    """An encoding module's text at ``rev``: in ``heta_eval/encoding/`` since issue 50's
    rooms, in ``heta_eval/kb/`` before."""
    return _git("show", f"{rev}:heta_eval/encoding/{module}.py") or _git(
        "show", f"{rev}:heta_eval/kb/{module}.py"
    )


# -- records ------------------------------------------------------------------------------


def load_records(folder: Path = RECORDS) -> list[dict[str, Any]]:
    """Every record, in the kinds' order."""
    records = [json.loads(p.read_text(encoding="utf-8")) for p in sorted(folder.glob("*.json"))]
    return sorted(records, key=lambda r: KIND_ORDER.index(r["kind"]))


def write_record(record: dict[str, Any], folder: Path = RECORDS) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{record['kind']}.json"
    path.write_text(json.dumps(record, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return path


def _route_of(target: str) -> str:
    """The encoding route an encoding row names (old rows named the precision)."""
    name = target.removeprefix("vector_search encoding").strip().split(" (")[0]
    name = name.removeprefix("in ").split(" ")[0]
    return {
        "": "onnxruntime-int8",
        "bfloat16": "torch-bfloat16",
        "int8": "onnxruntime-int8",
        "float32": "torch-float32",
    }.get(name, name)


def _from_e2e(row: dict[str, Any]) -> tuple[str, dict[str, float]]:
    """The route and the nDCG@10 per mode a cold ``make eval`` row's notes give."""
    notes = row.get("notes", "")
    precision = re.search(r"precision=([\w-]+)", notes)
    route = _route_of(f"vector_search encoding {precision.group(1)}") if precision else "?"
    scores = {m: float(v) for m, v in re.findall(r"(\w+_search) (0\.\d+)", notes)}
    return route, scores


def import_results(rev: str, kind: str | None = None) -> dict[str, Any]:
    """A committed ``bench/results.json`` (a full ``make bench``) as its kind's record, with
    the code of that commit."""
    results = json.loads(_git("show", f"{rev}:bench/results.json"))
    machine = results["machine"]
    dense = _show(rev, "dense")
    found = re.search(r"^ENCODING_VERSION = (\d+)", dense, re.MULTILINE)
    schemes = {}
    for route, path in (("onnxruntime-int8", "onnx_int8"), ("openvino-int8", "openvino_int8")):
        text = _show(rev, path)
        scheme = re.search(r'^SCHEME = "([^"]+)"', text, re.MULTILINE)
        if scheme:
            schemes[route] = scheme.group(1)
    if kind is None:
        flags = set(machine.get("bf16") or [])
        intel = "intel" in str(machine.get("cpu", "")).lower()
        kind = (
            "amx"
            if "amx_bf16" in flags
            else ("avx512-bf16-intel" if intel else "avx512-bf16-amd")
            if flags
            else "avx2"
        )
    rows = results["rows"]
    scifact: dict[str, dict[str, float]] = {}
    auto = None
    for row in rows:
        if row["target"].endswith("(cold cache)"):
            route, scores = _from_e2e(row)
            scifact[route] = scores
        if row["target"].startswith("vector_search encoding") and (
            "(auto)" in row["target"] or row["target"] == "vector_search encoding"
        ):
            auto = _route_of(row["target"])
    return {
        "kind": kind,
        "cpu": machine.get("cpu"),
        "cores": machine.get("cores"),
        "flags": machine.get("bf16"),
        "date": results["date"][:10],
        "load": results.get("load_average"),
        "code": {
            "version": _git("show", f"{rev}:heta_eval/__init__.py")
            .split('__version__ = "')[-1]
            .split('"')[0]
            or "unknown",
            "commit": _git("rev-parse", "--short", rev),
            "encoding": int(found.group(1)) if found else 1,
            "schemes": schemes,
        },
        "source": f"make bench at commit {_git('rev-parse', '--short', rev)} "
        "(its bench/results.json), imported by bench/figures.py --import-results",
        "auto_route": auto,
        "bench": rows,
        "scifact": scifact,
        "scifact_note": "from the cold make eval row: auto's route only",
    }


# -- measuring ----------------------------------------------------------------------------


def measure_scifact(routes: list[str]) -> dict[str, dict[str, float]]:
    """nDCG@10 (BEIR's unrounded value) of each mode on SciFact through ``heta-eval run``,
    once per route; the embedding cache serves vectors an earlier run of a route encoded
    (a text's vector depends on the text and the route only)."""
    cli = [sys.executable, "-m", "heta_eval"]
    out: dict[str, dict[str, float]] = {}
    with tempfile.TemporaryDirectory(prefix="heta-figures-") as tmp:
        for route in routes:
            folder = Path(tmp) / route
            print(f"figures: SciFact through {route}", file=sys.stderr, flush=True)
            cmd = [
                *cli,
                "run",
                "--dataset",
                "scifact",
                "--modes",
                ",".join(MODES),
                "--precision",
                route.removeprefix("torch-"),
                "--output",
                str(folder),
                "--quiet",
            ]
            done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
            if done.returncode != 0:
                raise RuntimeError(f"heta-eval run ({route}) failed: {done.stderr[-500:]}")
            summary = json.loads((folder / "summary.json").read_text(encoding="utf-8"))
            if summary["build"].get("route") != route:
                raise RuntimeError(f"asked for {route}, ran {summary['build'].get('route')}")
            scores = {}
            for mode in MODES:
                metric = summary["modes"][mode]["metrics"]["ndcg@10"]
                scores[mode] = round(float(metric.get("beir_unrounded", metric["value"])), 5)
            out[route] = scores
    return out


def measure(skip_bench: bool, previous: dict[str, Any] | None) -> dict[str, Any]:
    """This CPU's record: ``make bench`` (unless skipped: the previous record's rows are kept,
    with their own date) and SciFact per route."""
    sys.path.insert(0, str(ROOT))
    sys.path.insert(0, str(BENCH))
    from run_all import load as load_average
    from run_all import machine

    from heta_eval.encoding.cpu import this_cpu
    from heta_eval.encoding.dense import DenseEncoder
    from heta_eval.encoding.routes import candidate_routes

    cpu = this_cpu()
    started, before = dt.datetime.now(dt.timezone.utc), load_average()
    record: dict[str, Any] = {
        "kind": cpu.kind,
        "cpu": cpu.model,
        "cores": machine().get("cores"),
        "flags": sorted(
            cpu.flags
            & {"avx2", "avx512f", "avx512_vnni", "avx_vnni", "avx512_bf16", "amx_bf16", "amx_int8"}
        ),
        "date": started.date().isoformat(),
        "code": current_code(),
        "source": "make figures (bench/figures.py)",
        "auto_route": DenseEncoder(device="cpu").route,
    }
    if skip_bench:
        if previous is None:
            raise SystemExit(f"--skip-bench: no record of {cpu.kind} to keep bench rows from")
        record["bench"] = previous.get("bench", [])
        record["bench_date"] = previous.get("bench_date", previous["date"])
        record["bench_code"] = previous.get("bench_code", previous["code"])
    else:
        subprocess.run([sys.executable, str(BENCH / "run_all.py")], cwd=ROOT, check=True)
        results = json.loads((BENCH / "results.json").read_text(encoding="utf-8"))
        record["bench"] = results["rows"]
        record["bench_date"] = results["date"][:10]
        record["bench_code"] = record["code"]
    routes = candidate_routes(
        cpu.flags, onnxruntime=cpu.has_onnxruntime(), openvino=cpu.has_openvino()
    )
    record["scifact"] = measure_scifact(routes)
    record["load"] = {"before": before, "after": load_average()}
    return record


# -- tables -------------------------------------------------------------------------------


def stamp(
    record: dict[str, Any], code: dict[str, Any], *, key: str = "code", encoding: bool = True
) -> str:
    """Where, when and by what code a record's figures were measured; for figures that depend
    on the encoding (``encoding``), whether that code is older than the current."""
    mine = record.get(key) or record["code"]
    date = record.get("bench_date", record["date"]) if key == "bench_code" else record["date"]
    cores = f", {record['cores']} cores" if record.get("cores") else ""
    text = (
        f"`{record['kind']}` ({record['cpu']}{cores}), {date}, {mine['version']} {mine['commit']}"
    )
    older = mine.get("encoding") != code["encoding"] or mine.get("schemes") != code["schemes"]
    if encoding and older:
        text += f"; **older code** (encoding {mine.get('encoding')}): not re-measured"
    return text


def _ratio(row: dict[str, Any]) -> str:
    if row.get("ratio") is None:
        return "–"
    value = row["ratio"]
    return f"{value:.2f}×" if value < 100 else f"{value:,.0f}×"


def _met(row: dict[str, Any]) -> str:
    return {True: "✓", False: "✗", None: "–"}[row.get("met")]


def _find(record: dict[str, Any], targets: tuple[str, ...]) -> dict[str, Any] | None:
    for wanted in targets:
        for row in record.get("bench", []):
            if "error" in row:
                continue
            name = row["target"]
            if name == wanted or (wanted.startswith("(") and name.endswith(wanted)):
                return row
            if wanted == "(auto)" and name == "vector_search encoding":  # before routes
                return row
    return None


def table_scifact(records: list[dict[str, Any]], code: dict[str, Any]) -> str:
    lines = [
        "| route | keyword_search | vector_search | hybrid_search | measured on |",
        "|---|---|---|---|---|",
    ]
    for record in records:
        routes = sorted(record.get("scifact", {}), key=ROUTE_ORDER.index)
        for route in routes:
            scores = record["scifact"][route]
            auto = " (`auto`)" if route == record.get("auto_route") else ""
            cells = [f"{scores[m]:.5f}" if m in scores else "–" for m in MODES]
            lines.append(f"| `{route}`{auto} | {' | '.join(cells)} | {stamp(record, code)} |")
    return "\n".join(lines)


def table_speed(records: list[dict[str, Any]], code: dict[str, Any]) -> str:
    lines = [
        "| target | ours against the peer | goal | met | measured on |",
        "|---|---|---|---|---|",
    ]
    newest = sorted(
        records, key=lambda r: (is_current(r, code), r.get("bench_date", r["date"])), reverse=True
    )
    for label, targets, per_kind in SPEED:
        chosen = records if per_kind else newest
        for record in chosen:
            row = _find(record, targets)
            if row is None:
                continue
            what = label
            if per_kind and "(auto)" in targets:
                what = f"{label} (`{_route_of(row['target'])}`)"
            goal, met = row.get("goal", ""), _met(row)
            if row["target"].endswith("(cold cache)"):  # timed alone, against a goal in seconds
                seconds = row["ours_s"]
                value, goal = f"{seconds:.1f} s", f"<= {COLD_EVAL_GOAL} s"
                met = _met({"met": seconds <= COLD_EVAL_GOAL})
            else:
                value = _ratio(row)
            where = stamp(record, code, key="bench_code", encoding=per_kind)
            lines.append(f"| {what} | {value} | {goal} | {met} | {where} |")
            if not per_kind:
                break
    return "\n".join(lines)


def table_encoding(records: list[dict[str, Any]], code: dict[str, Any]) -> str:
    lines = [
        "| CPU kind | each route against sentence-transformers float32 (min cosine to float32) "
        "| cold `make eval` | measured on |",
        "|---|---|---|---|",
    ]
    for record in records:
        cells = []
        for row in record.get("bench", []):
            target = row["target"]
            if not target.startswith("vector_search encoding") or row.get("ratio") is None:
                continue
            route = _route_of(target)
            cosine = re.search(r"cosine to float32 min (\d\.\d+)", row.get("notes", ""))
            mark = " (`auto`)" if route == record.get("auto_route") else ""
            cells.append(
                f"`{route}`{mark} {row['ratio']:.2f}×" + (f" ({cosine.group(1)})" if cosine else "")
            )
        cold = _find(record, ("(cold cache)",))
        eval_s = f"{cold['ours_s']:.0f} s" if cold and cold.get("ours_s") else "–"
        lines.append(
            f"| `{record['kind']}` | {'; '.join(cells) or '–'} | {eval_s} | "
            f"{stamp(record, code, key='bench_code')} |"
        )
    return "\n".join(lines)


def table_defaults(records: list[dict[str, Any]], code: dict[str, Any]) -> str:
    sys.path.insert(0, str(ROOT))
    from heta_eval.encoding.cpu import KINDS
    from heta_eval.encoding.route_defaults import DEFAULT_ROUTES

    lines = [
        "| kind of CPU | `auto`'s route | the measurements it was chosen from |",
        "|---|---|---|",
    ]
    for kind in KIND_ORDER:
        default = DEFAULT_ROUTES[kind]
        lines.append(f"| `{kind}`: {KINDS[kind]} | `{default.route}` | {default.evidence} |")
    return "\n".join(lines)


def table_bench(records: list[dict[str, Any]], code: dict[str, Any]) -> str:
    sys.path.insert(0, str(BENCH))
    from run_all import table

    parts = []
    for record in records:
        if not record.get("bench"):
            continue
        load = record.get("load") or {}
        parts.append(
            f"**{stamp(record, code, key='bench_code')}** ({record['source']}; load "
            f"average before/after {load.get('before')} / {load.get('after')}):\n\n"
            + table(record["bench"])
        )
    return "\n\n".join(parts)


TABLES: dict[str, Callable[[list[dict[str, Any]], dict[str, Any]], str]] = {
    "scifact": table_scifact,
    "speed": table_speed,
    "encoding": table_encoding,
    "defaults": table_defaults,
    "bench": table_bench,
}
_REGION = re.compile(r"(<!-- figures:(\w+) -->\n)(.*?)(<!-- /figures -->)", re.DOTALL)


def render(text: str, records: list[dict[str, Any]], code: dict[str, Any]) -> str:
    """``text`` with every generated region rewritten from ``records``."""

    def fill(match: re.Match) -> str:
        name = match.group(2)
        if name not in TABLES:
            raise ValueError(f"unknown generated table {name!r}")
        return f"{match.group(1)}{TABLES[name](records, code)}\n{match.group(4)}"

    return _REGION.sub(fill, text)


def stale(records: list[dict[str, Any]], code: dict[str, Any]) -> list[str]:
    """The documents whose generated tables differ from what ``records`` give."""
    out = []
    for name, tables in DOCS.items():
        text = (ROOT / name).read_text(encoding="utf-8")
        found = {m.group(2) for m in _REGION.finditer(text)}
        if found != set(tables) or render(text, records, code) != text:
            out.append(name)
    return out


def rewrite(records: list[dict[str, Any]], code: dict[str, Any]) -> None:
    for name in DOCS:
        path = ROOT / name
        text = path.read_text(encoding="utf-8")
        path.write_text(render(text, records, code), encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    what = parser.add_mutually_exclusive_group()
    what.add_argument("--render", action="store_true", help="rewrite the tables only")
    what.add_argument("--check", action="store_true", help="exit 1 if a table is stale")
    what.add_argument("--import-results", metavar="REV", help="a committed results.json")
    parser.add_argument("--kind", help="with --import-results: the CPU kind it ran on")
    parser.add_argument("--skip-bench", action="store_true", help="keep the last bench rows")
    args = parser.parse_args(argv)
    code = current_code()
    if args.import_results:
        print(f"wrote {write_record(import_results(args.import_results, args.kind))}")
    elif not (args.render or args.check):
        kind_path = None
        sys.path.insert(0, str(ROOT))
        from heta_eval.encoding.cpu import this_cpu

        kind_path = RECORDS / f"{this_cpu().kind}.json"
        previous = json.loads(kind_path.read_text()) if kind_path.is_file() else None
        print(f"wrote {write_record(measure(args.skip_bench, previous))}")
    records = load_records()
    if args.check:
        bad = stale(records, code)
        for name in bad:
            print(
                f"{name}: its generated tables differ from bench/records (run "
                "python bench/figures.py --render)"
            )
        return 1 if bad else 0
    rewrite(records, code)
    print(
        f"rewrote the generated tables of {', '.join(DOCS)} from {len(records)} records",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
