"""LLMClient, ChatAnswerer and LLMJudge against a real OpenAI-compatible server on loopback."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from support.chat_server import ChatServer, completion_body

from heta_eval.llm import LLMClient, LLMError
from heta_eval.models.records import BenchmarkCase, QueryResponse, QueryResult
from heta_eval.rag.judge.judge import JUDGE_PROMPT, JudgeError, LLMJudge, parse_judgement
from heta_eval.reference.answerers import ChatAnswerer

# A behaviour maps the request (body, headers) to (status, raw body, delay seconds).
Behaviour = Callable[[dict, dict], tuple[int, bytes, float]]


def completion(content: str) -> Behaviour:
    return lambda body, headers: (200, completion_body(content), 0.0)


def status(code: int) -> Behaviour:
    return lambda body, headers: (code, b'{"error": {"message": "overloaded"}}', 0.0)


def slow(delay: float) -> Behaviour:
    return lambda body, headers: (200, b"{}", delay)


@pytest.fixture(autouse=True)
def private_judge_cache(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The judge caches its calls by default; each test gets its own empty cache.
    monkeypatch.setenv("HETA_EVAL_CACHE_DIR", str(tmp_path / "cache"))


@pytest.fixture
def serve(chat_servers) -> Callable[[list[Behaviour]], ChatServer]:
    """A server answering request n with behaviour n (the last one from then on)."""

    def start(behaviours: list[Behaviour]) -> ChatServer:
        def respond(n: int, body: dict, headers: dict) -> tuple[int, bytes, float]:
            return behaviours[min(n, len(behaviours) - 1)](body, headers)

        return chat_servers(ChatServer(respond))

    return start


CASE = BenchmarkCase(
    id="q1", query="What is the capital of France?", expected={"answers": ["Paris"]}
)
RESPONSE = QueryResponse(
    query=CASE.query,
    answer="It is Paris.",
    results=[QueryResult(text="Paris is the capital of France.", source={"document_id": "d1"})],
)


async def test_client_sends_openai_request(serve) -> None:
    server = serve([completion("hello")])
    client = server.client(api_key="sk-test")
    assert await client.chat([{"role": "user", "content": "hi"}]) == "hello"
    path, body, headers = server.requests[0]
    assert path == "/v1/chat/completions"
    assert body["model"] == "judge-1" and body["messages"][0]["content"] == "hi"
    assert headers["Authorization"] == "Bearer sk-test"


async def test_client_from_env(serve, monkeypatch: pytest.MonkeyPatch) -> None:
    server = serve([completion("ok")])
    monkeypatch.setenv("HETA_EVAL_LLM_BASE_URL", server.base_url)
    monkeypatch.setenv("HETA_EVAL_LLM_MODEL", "env-model")
    monkeypatch.delenv("HETA_EVAL_LLM_API_KEY", raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-env")
    client = LLMClient.from_env()
    assert await client.chat([{"role": "user", "content": "x"}]) == "ok"
    assert server.requests[0][1]["model"] == "env-model"
    assert server.requests[0][2]["Authorization"] == "Bearer sk-env"
    monkeypatch.delenv("HETA_EVAL_LLM_MODEL")
    with pytest.raises(ValueError, match="HETA_EVAL_LLM_MODEL"):
        LLMClient.from_env()


async def test_client_retries_500_then_succeeds(serve) -> None:
    server = serve([status(500), status(429), completion("fine")])
    assert await server.client().chat([{"role": "user", "content": "x"}]) == "fine"
    assert len(server.requests) == 3


async def test_client_always_500_is_a_clear_error(serve) -> None:
    server = serve([status(502)])
    with pytest.raises(LLMError, match="gave up after 3 attempts") as info:
        await server.client().chat([{"role": "user", "content": "x"}])
    assert server.base_url in str(info.value) and len(server.requests) == 3


async def test_client_timeout_then_success(serve) -> None:
    # The first reply would come a minute late; the client gives up on it after 5 s.
    server = serve([slow(60.0), completion("late but ok")])
    client = server.client(timeout=5.0)
    assert await client.chat([{"role": "user", "content": "x"}]) == "late but ok"
    assert len(server.requests) == 2


async def test_client_malformed_reply(serve) -> None:
    server = serve([lambda b, h: (200, b"{not json", 0.0)])
    with pytest.raises(LLMError, match="not valid JSON") as info:
        await server.client().chat([{"role": "user", "content": "x"}])
    assert server.base_url in str(info.value)
    server2 = serve([lambda b, h: (200, b'{"choices": []}', 0.0)])
    with pytest.raises(LLMError, match=r"no choices\[0\]\.message\.content"):
        await server2.client().chat([{"role": "user", "content": "x"}])


async def test_chat_answerer_uses_the_top_chunks(serve) -> None:
    server = serve([completion("  Paris  ")])
    answerer = ChatAnswerer(server.client(), top_chunks=1)
    results = [QueryResult(text="Paris is the capital."), QueryResult(text="Unrelated.")]
    assert await answerer.answer("Capital of France?", results) == "Paris"
    prompt = server.requests[0][1]["messages"][-1]["content"]
    assert "[1] Paris is the capital." in prompt and "Unrelated" not in prompt
    assert "Question: Capital of France?" in prompt


async def test_judge_scores_and_keeps_reason(serve) -> None:
    server = serve([completion('{"score": 1, "passed": true, "reason": "Same city."}')])
    judge = LLMJudge(server.client())
    score = await judge.evaluate(case=CASE, response=RESPONSE)
    assert (score.name, score.value, score.passed) == ("llm_judge", 1.0, True)
    assert score.metadata["reason"] == "Same city." and score.metadata["model"] == "judge-1"
    prompt = server.requests[0][1]["messages"][0]["content"]
    assert "- Paris" in prompt and "It is Paris." in prompt
    assert "[1] Paris is the capital of France." in prompt  # evidence included by default
    assert server.requests[0][1]["temperature"] == 0.0


async def test_judge_without_evidence_and_partial_credit(serve) -> None:
    server = serve(
        [completion('Sure! ```json\n{"score": 0.5, "passed": false, "reason": "vague"}```')]
    )
    judge = LLMJudge(server.client(), include_evidence=False)
    score = await judge.evaluate(case=CASE, response=RESPONSE)
    assert (score.value, score.passed, score.metadata["reason"]) == (0.5, False, "vague")
    assert "Retrieved evidence" not in server.requests[0][1]["messages"][0]["content"]


async def test_judge_skips_cases_without_gold_answers(serve) -> None:
    server = serve([completion("unused")])
    case = BenchmarkCase(id="q2", query="?", expected={"relevance": {"d1": 1}})
    score = await LLMJudge(server.client()).evaluate(case=case, response=RESPONSE)
    assert score.skipped and score.value is None and server.requests == []


async def test_judge_missing_answer_is_wrong_without_a_call(serve) -> None:
    server = serve([completion("unused")])
    response = QueryResponse(query=CASE.query, answer=None)
    score = await LLMJudge(server.client()).evaluate(case=CASE, response=response)
    assert (score.value, score.passed, score.metadata["judged"]) == (0.0, False, False)
    assert server.requests == []


async def test_judge_retries_unparseable_verdict_then_raises(serve) -> None:
    server = serve([completion("I think it is right."), completion('{"score": 7, "passed": 1}')])
    judge = LLMJudge(server.client(), attempts=2)
    with pytest.raises(JudgeError, match="no valid judgement for case 'q1' after 2 attempts"):
        await judge.evaluate(case=CASE, response=RESPONSE)
    assert len(server.requests) == 2


async def test_judge_retries_bad_verdict_then_succeeds(serve) -> None:
    server = serve(
        [completion("garbage"), completion('{"score": 0, "passed": false, "reason": "no"}')]
    )
    score = await LLMJudge(server.client(), attempts=2).evaluate(case=CASE, response=RESPONSE)
    assert (score.value, score.passed) == (0.0, False)


async def test_judge_transport_failure_raises(serve) -> None:
    server = serve([status(500)])
    with pytest.raises(JudgeError, match="case 'q1'") as info:
        await LLMJudge(server.client()).evaluate(case=CASE, response=RESPONSE)
    assert "HTTP 500" in str(info.value) and server.base_url in str(info.value)
    assert len(server.requests) == 3  # the client's attempts; the judge does not add any


def test_parse_judgement_and_prompt() -> None:
    assert parse_judgement('{"score": 0.25, "passed": false, "reason": "x"}')["score"] == 0.25
    for bad in ['{"score": true, "passed": true}', '{"score": 0.5}', "[1, 2]", "nothing"]:
        with pytest.raises(ValueError):
            parse_judgement(bad)
    assert '"score"' in JUDGE_PROMPT and '"passed"' in JUDGE_PROMPT and '"reason"' in JUDGE_PROMPT
