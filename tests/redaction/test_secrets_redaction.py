"""Secrets are never written: a knowledge-base service and an LLM judge on loopback echo every
configured secret (a ``--kb-header`` bearer token, a ``Basic`` credential, the judge's API
key) in every form a server may use (bare, URL-encoded, base64, JSON- and HTML-escaped), in
every place (a 401 body, a 500 body after retries, a body that is not JSON, an answer, chunk
texts, document ids, metadata keys and values, a reply that does not validate, the judge's
verdict and refusal). A real ``heta-eval run`` and ``heta-eval report`` follow; every file
they write and all they print are then searched for every form, computed here with the
standard library, independently of :mod:`heta_eval.redaction`."""

from __future__ import annotations

import base64
import html
import json
import os
import re
import sqlite3
import subprocess
import sys
from pathlib import Path
from urllib.parse import quote, quote_plus

import pytest
from support.chat_server import ChatServer, completion_body
from support.loopback import LoopbackService

from heta_eval.redaction import MIN_LENGTH, Secrets, secret_forms
from heta_eval.remote import RetryPolicy, post_json

# Chosen so that every encoding differs from the value: "/", "+", "=", '"', "\\", "&", "<",
# "'" and "%" change under URL, JSON and HTML escaping; its base64 holds "+" and "/".
TOKEN = "Zx9/+Tq=k\"v\\m&p<1'%e~Ab?>"
USER, PASSWORD = "svc-user", 'pw/+"Secret&42?~>'
BASIC = base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode()
API_KEY = "sk-judge~/+key=\"7\\x&y<z'9?>"
# A header value of digits only: a service may echo it as a JSON number.
ACCOUNT = 86753091234


def forms_of(value: str) -> set[str]:
    """What a server may echo of ``value``, by the standard library's own encoders."""
    found = {value, html.escape(value), html.escape(value, quote=False)}
    for safe in ("/", ""):
        found |= {quote(value, safe=safe), quote_plus(value, safe=safe)}
    found.add(quote(quote(value, safe=""), safe=""))
    found |= {json.dumps(value)[1:-1], json.dumps(value, ensure_ascii=False)[1:-1]}
    found.add(json.dumps(value)[1:-1].replace("/", "\\/"))  # PHP
    raw = value.encode()
    found |= {raw.hex(), raw.hex().upper()}
    for encoded in (base64.b64encode(raw), base64.urlsafe_b64encode(raw)):
        found |= {encoded.decode(), encoded.decode().rstrip("=")}
    return found


def every_form() -> set[str]:
    values = [
        f"Bearer {TOKEN}",
        TOKEN,
        f"Basic {BASIC}",
        BASIC,
        f"{USER}:{PASSWORD}",
        PASSWORD,
        f"Bearer {API_KEY}",
        API_KEY,
        str(ACCOUNT),
    ]
    return {form for value in values for form in forms_of(value)}


def wrapped_forms(value: str) -> list[str]:
    """``value`` inside a longer text, base64-encoded and broken into lines as MIME
    (``base64.encodebytes``: 76 columns), ``openssl base64`` (64) and others write it, in
    both alphabets, with LF, CRLF or a JSON-escaped ``\\n``: each break falls inside the
    secret's own characters."""
    out = []
    for pad in (40, 41, 42):  # every alignment of the value in base64's 3-byte groups
        raw = b"x" * pad + value.encode() + b" expired"
        mime = base64.encodebytes(raw).decode()
        plain = base64.b64encode(raw).decode()
        safe = base64.urlsafe_b64encode(raw).decode()
        for width, text in ((76, mime.replace("\n", "")), (64, plain), (64, safe), (76, safe)):
            lines = [text[i : i + width] for i in range(0, len(text), width)]
            out += ["\n".join(lines), "\r\n".join(lines), "\\n".join(lines)]
        out.append(mime)
    return out


def test_the_standard_encoders_really_change_the_test_secrets() -> None:
    for value in (TOKEN, PASSWORD, API_KEY):
        changed = (quote(value), quote_plus(value), json.dumps(value)[1:-1], html.escape(value))
        assert value not in changed, value
        raw = base64.b64encode(value.encode()).decode()
        assert raw != base64.urlsafe_b64encode(value.encode()).decode()


# ------------------------------------------------------------------ the forms


@pytest.mark.parametrize(
    "value", [f"Bearer {TOKEN}", f"Basic {BASIC}", API_KEY, "Bearer clé-ünï-ß"]
)
def test_every_form_of_a_secret_and_of_its_credential_is_redacted(value: str) -> None:
    secrets = Secrets([value])
    bare = value.split(" ", 1)[1] if value.startswith(("Bearer ", "Basic ")) else value
    expected = forms_of(value) | forms_of(bare)
    if value.startswith("Basic "):
        expected |= forms_of(f"{USER}:{PASSWORD}") | forms_of(PASSWORD)
    for form in expected:
        assert form in secret_forms(value), form
        text = f"the service said <{form}> twice: {form}."
        assert secrets.redact(text) == "the service said <***> twice: ***.", form


def test_json_escapes_of_non_ascii_secrets_in_upper_or_lower_case_hex() -> None:
    secret = "clé-ünï-ß-0042"
    lower = json.dumps(secret)[1:-1]
    assert "\\u00e9" in lower
    secrets = Secrets([secret])
    for echoed in (
        lower,
        lower.replace("\\u00e9", "\\u00E9")
        .replace("\\u00fc", "\\u00FC")
        .replace("\\u00ef", "\\u00EF")
        .replace("\\u00df", "\\u00DF"),
    ):
        assert secrets.redact(f"[{echoed}]") == "[***]"


def test_a_secret_inside_a_longer_base64_text_is_redacted_at_every_alignment() -> None:
    secrets = Secrets([TOKEN])
    for prefix in (b"", b"a", b"ab", b"abc"):
        for alphabet in (base64.b64encode, base64.urlsafe_b64encode):
            blob = alphabet(prefix + TOKEN.encode() + b" expired").decode()
            redacted = secrets.redact(blob)
            assert "***" in redacted
            # What is left decodes to no more than two bytes of the token at each edge.
            assert len(blob) - len(redacted) >= len(base64.b64encode(TOKEN.encode())) - 8


def test_overlapping_forms_become_one_mark_and_short_forms_are_left_alone() -> None:
    secrets = Secrets([f"Bearer {TOKEN}"])
    assert secrets.redact(f"Bearer {TOKEN}{quote(TOKEN, safe='')}!") == "***!"
    assert MIN_LENGTH == 4
    short = Secrets(["abc", "Bearer xyz"])
    assert short.redact("abc xyz abcd") == "abc xyz abcd"  # 3 characters would blank words
    assert Secrets(["abcd"]).redact("abcd abcde") == "*** ***e"
    forms = secret_forms("abcd")
    assert min(map(len, forms)) >= MIN_LENGTH and {"YWJjZA==", "YWJjZA", "61626364"} <= forms
    # Base64 fragments this short would match ordinary encoded text by chance: left out.
    assert Secrets(["abcd"]).redact("JhYmNk SmFiY2Q") == "JhYmNk SmFiY2Q"


@pytest.mark.parametrize("value", [f"Bearer {TOKEN}", TOKEN, API_KEY])
def test_base64_broken_into_lines_is_redacted_at_76_and_64_columns_in_both_alphabets(value):
    secrets = Secrets([f"Bearer {TOKEN}", API_KEY])
    for text in wrapped_forms(value):
        assert any(brk in text for brk in ("\n", "\\n"))
        redacted = secrets.redact(f"echo: {text} end")
        assert "***" in redacted and redacted.startswith("echo: ") and redacted.endswith(" end")
        # What is left of the encoded text decodes to no more than the padding around it.
        rest = re.sub(r"\r|\n|\\n", "", redacted[6:-4]).split("***")
        assert sum(map(len, rest)) <= len(base64.b64encode(b"x" * 42 + b" expired")) + 8


def test_a_secret_echoed_as_a_number_is_redacted_as_its_json_text() -> None:
    secrets = Secrets([str(ACCOUNT), f"Bearer {TOKEN}"])
    reply = {
        "results": [
            {"source": {"document_id": ACCOUNT}, "score": 1.5, "ok": True},
            {"id": ACCOUNT * 10 + 7, "n": None, "f": float(ACCOUNT)},
        ]
    }
    assert secrets.scrub(reply) == {
        "results": [
            {"source": {"document_id": "***"}, "score": 1.5, "ok": True},
            {"id": "***7", "n": None, "f": "***.0"},
        ]
    }
    raw = json.dumps({"id": ACCOUNT, "score": 2.5e-3, "big": 1.0e300}).replace("2.5e-03", "2.5E-3")
    assert secrets.loads(raw.encode()) == {"id": "***", "score": 0.0025, "big": 1e300}
    # As written, not as Python prints it: a float literal holding the digits.
    assert secrets.loads(f"[{ACCOUNT}.000, {ACCOUNT}E0]") == ["***.000", "***E0"]
    # A secret of letters never touches a number or a word; a reply without one is kept.
    letters = Secrets(["Bearer abcdefgh"])
    clean = {"a": 12345678, "b": True, "c": None}
    assert letters.scrub(clean) is clean and letters.loads(json.dumps(clean)) == clean
    assert Secrets(["false"]).scrub([False, True]) == ["***", True]  # a word, as its text


def test_ordinary_text_is_left_as_it_is() -> None:
    secrets = Secrets([f"Bearer {TOKEN}", f"Basic {BASIC}", API_KEY])
    text = "Cats purr when they are content. Basic search, Bearer bonds: 100% = 1/1 & <ok>."
    assert secrets.redact(text) == text
    assert repr(secrets) == "Secrets(3 values)" and TOKEN not in repr(secrets)


def test_scrub_redacts_every_string_of_a_reply_keys_and_values() -> None:
    secrets = Secrets([API_KEY])
    reply = {"a": [1, 2.5, None, True, {API_KEY: f"x{quote(API_KEY)}"}], "b": API_KEY}
    assert secrets.scrub(reply) == {"a": [1, 2.5, None, True, {"***": "x***"}], "b": "***"}
    assert Secrets([]).scrub(reply) is reply
    clean = {"results": [{"text": "nothing secret here", "score": 1.0}]}
    assert secrets.scrub(clean) is clean  # a reply without a secret is not rebuilt


async def test_a_transport_error_and_the_url_are_redacted() -> None:
    import httpx

    url = f"http://127.0.0.1:9/q?key={quote(TOKEN, safe='')}"
    async with httpx.AsyncClient() as client:
        with pytest.raises(Exception) as info:
            await post_json(
                client,
                url,
                {},
                policy=RetryPolicy(max_attempts=1, timeout=2),
                headers={"Authorization": f"Bearer {TOKEN}"},
            )
    message = str(info.value)
    assert "connection failed" in message and "key=***" in message
    assert not [form for form in every_form() if form in message]


# ------------------------------------------------------------------ a whole run

DOCS = {"paris": "Paris is the capital of France.", "rome": "Rome is the capital of Italy."}


def echo(value: str) -> str:
    """Every form of ``value`` and of its credential, in one text."""
    bare = value.split(" ", 1)[1] if " " in value else value
    return " | ".join(sorted(forms_of(value) | forms_of(bare)))


def kb_reply(raw: bytes, got: dict[str, str]) -> tuple[int, bytes, dict[str, str]]:
    """Echoes the headers it got, in every form, wherever the query asks."""
    query = json.loads(raw)["query"]
    said = echo(got.get("authorization", "")) + " || " + echo(got.get("x-upstream-auth", ""))
    basic = echo(f"{USER}:{PASSWORD}") + " " + echo(PASSWORD)
    if got.get("authorization") != f"Bearer {TOKEN}":
        return 401, json.dumps({"error": "unauthorized"}).encode(), {}
    if "refuse" in query:
        return 401, f"token {TOKEN} expired; you sent {said} {basic}".encode(), {}
    if "broken" in query:
        return 500, json.dumps({"error": said, "basic": basic}).encode(), {}
    if "garbled" in query:
        return 200, f"<html>{said}</html>".encode(), {}
    if "invalid" in query:
        return 200, json.dumps({"results": said}).encode(), {}
    doc = "paris" if "France" in query else "rome"
    results = [
        {
            "text": f"{DOCS[doc]} {said}",
            "score": 2.0,
            "source": {"document_id": doc},
            "metadata": {said: basic, "title": said},
        },
        {"text": basic, "score": 1.0, "source": {"document_id": f"doc-{BASIC}"}},
        {
            "text": "x",
            "score": 0.5,
            "source": {"document_id": f"doc-{base64.urlsafe_b64encode(TOKEN.encode()).decode()}"},
        },
    ]
    wrapped = " ".join(wrapped_forms(got.get("authorization", "")))
    results += [
        {
            "text": wrapped,
            "score": 0.4,
            "source": {"document_id": int(got["x-account"])},
            "metadata": {"wrapped": wrapped, "account": int(got["x-account"])},
        },
    ]
    answer = f"{doc.title()}; your token {TOKEN} and {said}"
    body = json.dumps({"query": query, "results": results, "answer": answer})
    return 200, body.encode(), {}


def judge_reply(index: int, body: dict, headers: dict) -> tuple[int, bytes, float]:
    prompt = body["messages"][0]["content"]
    said = echo(headers.get("Authorization", ""))
    if "Italy" in prompt:
        return 401, f'{{"error": "invalid key {API_KEY}: {said}"}}'.encode(), 0.0
    verdict = {"score": 1.0, "passed": True, "reason": f"key {API_KEY} said {said}"}
    return 200, completion_body(json.dumps(verdict)), 0.0


_JSON_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')


def readable(text: str, depth: int = 2) -> list[str]:
    """``text`` as written and as read back: HTML unescaped, and every JSON string in it
    decoded (a JSON text inside a JSON string too), so that a writer's own escaping cannot
    hide a secret from the search."""
    # Line breaks out, raw and JSON-escaped: base64 broken into lines reads whole.
    joined = re.sub(r"\r|\n|\\r|\\n", "", text)
    views = [text, html.unescape(text), joined, html.unescape(joined)]
    if depth:
        for view in views[:2]:
            strings = []
            for literal in _JSON_STRING.findall(view):
                try:
                    strings.append(json.loads(literal))
                except ValueError:
                    continue
            views += readable("\n".join(strings), depth - 1)
    return views


@pytest.fixture
def services(chat_servers):
    kb = LoopbackService(kb_reply)
    judge = chat_servers(ChatServer(judge_reply))
    yield kb, judge
    kb.close()


def cli(args: list[str], cwd: Path, **env: str) -> subprocess.CompletedProcess:
    environment = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2]), **env}
    for name in ("HETA_EVAL_KB_TOKEN", "OPENAI_API_KEY"):
        environment.pop(name, None)
    return subprocess.run(
        [sys.executable, "-m", "heta_eval", *args],
        cwd=cwd,
        env=environment,
        capture_output=True,
        text=True,
        timeout=300,
    )


def write_benchmark(folder: Path) -> None:
    (folder / "docs").mkdir()
    for doc_id, text in DOCS.items():
        (folder / "docs" / f"{doc_id}.txt").write_text(text + "\n")
    queries = {
        "ok1": "capital of France",
        "ok2": "capital of Italy",
        "refuse": "refuse France",
        "broken": "broken France",
        "garbled": "garbled Italy",
        "invalid": "invalid France",
    }
    cases = [
        {
            "id": case_id,
            "query": query,
            "expected": {
                "relevance": {"paris" if "France" in query else "rome": 1},
                "answers": ["Paris" if "France" in query else "Rome"],
            },
        }
        for case_id, query in queries.items()
    ]
    (folder / "cases.jsonl").write_text("".join(json.dumps(c) + "\n" for c in cases))


def test_no_form_of_any_secret_reaches_a_file_or_the_console(services, tmp_path) -> None:
    kb, judge = services
    write_benchmark(tmp_path)
    run = cli(
        [
            "run",
            "--benchmark",
            "cases.jsonl",
            "--documents",
            "docs",
            "--modes",
            "m",
            "--output",
            "out",
            "--kb-url",
            kb.url,
            "--kb-header",
            f"Authorization: Bearer {TOKEN}",
            "--kb-header",
            "X-Upstream-Auth: ${UPSTREAM}",
            "--kb-header",
            f"X-Account: {ACCOUNT}",
            "--judge",
            "--no-cache",
        ],
        tmp_path,
        UPSTREAM=f"Basic {BASIC}",
        HETA_EVAL_LLM_API_KEY=API_KEY,
        HETA_EVAL_LLM_BASE_URL=judge.base_url,
        HETA_EVAL_LLM_MODEL="judge-1",
        HETA_EVAL_CACHE_DIR=str(tmp_path / "cache"),
    )
    assert run.returncode == 3, run.stderr  # partial: four queries answered, two failed
    assert judge.requests and judge.requests[0][2]["Authorization"] == f"Bearer {API_KEY}"
    report = cli(["report", "out"], tmp_path)
    assert report.returncode == 0, report.stderr
    out = tmp_path / "out"
    assert (out / "report.html").is_file()
    written = {p: p.read_text(errors="replace") for p in out.rglob("*") if p.is_file()}
    texts = {
        **{str(p): t for p, t in written.items()},
        "run stdout": run.stdout,
        "run stderr": run.stderr,
        "report stdout": report.stdout,
        "report stderr": report.stderr,
    }
    leaks = {
        (where, form)
        for where, text in texts.items()
        for view in readable(text)
        for form in every_form()
        if form in view
    }
    assert not leaks, sorted(leaks)[:5]
    # What was redacted is marked, where it was: failures, answers, chunks, ids, the judge.
    records = [json.loads(line) for line in (out / "per_query.jsonl").read_text().splitlines()]
    by_case = {r["case_id"]: json.dumps(r) for r in records}
    assert "HTTP 401" in by_case["refuse"] and "***" in by_case["refuse"]
    assert "HTTP 500" in by_case["broken"] and "***" in by_case["broken"]
    assert "not valid JSON" in by_case["garbled"] and "***" in by_case["garbled"]
    assert "not a valid QueryResponse" in by_case["invalid"] and "***" in by_case["invalid"]
    assert "your token *** and" in by_case["ok1"] and "doc-***" in by_case["ok1"]
    # The account number echoed as a JSON number is an id no more: "***" in its place.
    assert '["***", 0.4]' in by_case["ok1"] and "Q0 *** " in (out / "runs" / "m.trec").read_text()
    assert "***" in written[out / "report.html"] and "HTTP 401" in run.stderr + run.stdout


# ------------------------------------------------------------------ credentials in the URL


async def test_credentials_in_the_url_are_sent_as_basic_auth_and_shown_nowhere() -> None:
    from heta_eval.runner.checks import system_identity
    from heta_eval.systems import HttpKnowledgeBase
    from heta_eval.systems.http_client import HttpKnowledgeBaseError

    seen: list[str] = []

    def reply(raw: bytes, got: dict[str, str]) -> tuple[int, bytes, dict[str, str]]:
        seen.append(got.get("authorization", ""))
        if "refuse" in json.loads(raw)["query"]:
            return 401, f"bad password {PASSWORD} for {quote(PASSWORD, safe='')}".encode(), {}
        answer = {"query": "hello", "results": [], "answer": f"hi {USER}:{PASSWORD}"}
        return 200, json.dumps(answer).encode(), {}

    service = LoopbackService(reply)
    try:
        host = service.url.split("://", 1)[1]
        kb = HttpKnowledgeBase(f"http://{USER}:{quote(PASSWORD, safe='')}@{host}")
        assert (await kb.query("hello")).answer == "hi ***"
        assert seen == [f"Basic {BASIC}"]
        with pytest.raises(HttpKnowledgeBaseError) as info:
            await kb.query("refuse")
        shown = [str(info.value), repr(kb), kb.url, json.dumps(system_identity(None, kb, "kb"))]
        for text in shown:
            assert not [form for form in every_form() for view in readable(text) if form in view]
        assert "HTTP 401" in shown[0] and "bad password *** for ***" in shown[0]
        assert kb.url == service.url
        await kb.aclose()
    finally:
        service.close()


async def test_a_reply_nested_too_deeply_is_a_one_line_error() -> None:
    from heta_eval.systems import HttpKnowledgeBase
    from heta_eval.systems.http_client import HttpKnowledgeBaseError

    deep = b"[" * 100_000 + b"]" * 100_000
    service = LoopbackService(lambda raw, got: (200, deep, {}))
    try:
        kb = HttpKnowledgeBase(service.url, headers={"X-Api-Key": API_KEY})
        with pytest.raises(HttpKnowledgeBaseError, match="nested too deeply"):
            await kb.query("anything")
        await kb.aclose()
    finally:
        service.close()


def test_a_header_value_outside_ascii_is_refused_without_showing_it(tmp_path) -> None:
    write_benchmark(tmp_path)
    done = cli(
        [
            "run",
            "--benchmark",
            "cases.jsonl",
            "--documents",
            "docs",
            "--modes",
            "m",
            "--output",
            "out",
            "--kb-url",
            "http://127.0.0.1:9/q",
            "--kb-header",
            "X-Api-Key: clé-secrète-99",
        ],
        tmp_path,
    )
    assert done.returncode == 2
    assert done.stderr.strip() == (
        "heta-eval run: error: --kb-header X-Api-Key: the value holds a character outside ASCII"
    )
    assert not (tmp_path / "out").exists()


async def test_a_judge_reply_cached_before_redaction_does_not_bring_the_key_back(
    chat_servers, tmp_path
) -> None:
    from heta_eval.models.records import BenchmarkCase, QueryResponse
    from heta_eval.rag.judge.cache import JudgeCache
    from heta_eval.rag.judge.judge import LLMJudge

    verdict = {"score": 1.0, "passed": True, "reason": "fresh"}
    server = chat_servers(
        ChatServer(lambda i, b, h: (200, completion_body(json.dumps(verdict)), 0.0))
    )
    case = BenchmarkCase(id="q", query="capital of France?", expected={"answers": ["Paris"]})
    response = QueryResponse(query=case.query, answer="Paris")
    cache = JudgeCache(tmp_path / "judge.sqlite")
    judge = LLMJudge(server.client(api_key=API_KEY), cache=cache)
    fresh = await judge.evaluate(case=case, response=response)
    assert fresh.metadata["reason"] == "fresh" and len(server.requests) == 1
    # The stored reply, as an earlier version would have kept it: the key in its reason.
    stale = {"score": 1.0, "passed": True, "reason": f"key {API_KEY} / {quote(API_KEY)}"}
    with sqlite3.connect(tmp_path / "judge.sqlite") as db:
        db.execute("UPDATE calls SET content = ?", (json.dumps(stale),))
    again = await LLMJudge(server.client(api_key=API_KEY), cache=cache).evaluate(
        case=case, response=response
    )
    assert len(server.requests) == 1  # served from the cache
    assert again.metadata["reason"] == "key *** / ***"


async def test_the_token_of_the_environment_is_a_secret_even_when_a_header_replaces_it(
    monkeypatch,
) -> None:
    from heta_eval.systems import HttpKnowledgeBase

    other = "env-token-7f3/+c=9"
    encoded = base64.b64encode(other.encode()).decode()

    def reply(raw: bytes, got: dict[str, str]) -> tuple[int, bytes, dict[str, str]]:
        answer = f"{got['authorization']} | {other} | {encoded} | {quote_plus(other)}"
        return 200, json.dumps({"query": "q", "results": [], "answer": answer}).encode(), {}

    service = LoopbackService(reply)
    monkeypatch.setenv("HETA_EVAL_KB_TOKEN", other)
    try:
        kb = HttpKnowledgeBase.from_env(service.url, headers={"Authorization": f"Bearer {TOKEN}"})
        assert (await kb.query("q")).answer == "*** | *** | *** | ***"
        await kb.aclose()
    finally:
        service.close()
