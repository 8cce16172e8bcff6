"""An OpenAI-compatible ``POST /v1/chat/completions`` server on loopback for the LLM tests.

Real HTTP: a ``ThreadingHTTPServer`` on 127.0.0.1, one thread per request. What it answers is
a ``respond(index, body, headers) -> (status, raw body, delay seconds)`` function (the index
counts requests from 0); every request is recorded. The ``chat_servers`` fixture in
``conftest.py`` starts them and shuts them down after the test.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from heta_eval.llm import LLMClient, RetryPolicy

Reply = tuple[int, bytes, float]  # HTTP status, raw body, seconds to wait before answering
Respond = Callable[[int, dict, dict], Reply]


def completion_body(content: str, usage: dict | None = None) -> bytes:
    """A chat-completions reply holding ``content`` (and ``usage`` when given)."""
    reply: dict = {"choices": [{"index": 0, "message": {"role": "assistant", "content": content}}]}
    if usage is not None:
        reply["usage"] = usage
    return json.dumps(reply).encode()


class ChatServer:
    """Answers each request with ``respond``; ``requests`` holds (path, body, headers)."""

    def __init__(self, respond: Respond) -> None:
        self.respond = respond
        self.requests: list[tuple[str, dict, dict]] = []
        self.lock = threading.Lock()  # respond runs under it: replies may keep counters
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                headers = dict(self.headers)
                with outer.lock:
                    outer.requests.append((self.path, body, headers))
                    code, raw, delay = outer.respond(len(outer.requests) - 1, body, headers)
                time.sleep(delay)
                try:
                    self.send_response(code)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(raw)))
                    self.end_headers()
                    self.wfile.write(raw)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up waiting (a timeout under test)

            def log_message(self, *args: object) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.httpd.block_on_close = False
        self.base_url = f"http://127.0.0.1:{self.httpd.server_port}/v1"
        threading.Thread(target=self.httpd.serve_forever, args=(0.05,), daemon=True).start()

    def client(self, *, attempts: int = 3, timeout: float = 30.0, **kwargs) -> LLMClient:
        """An ``LLMClient`` for model ``judge-1`` here, with fast retries. The timeout is
        generous (on a loaded machine a prompt reply can take seconds); a test of timeouts
        passes a short one and makes the slow reply far slower."""
        policy = RetryPolicy(max_attempts=attempts, backoff=0.01, timeout=timeout)
        return LLMClient(base_url=self.base_url, model="judge-1", policy=policy, **kwargs)

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
