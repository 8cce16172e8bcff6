"""A JSON service on 127.0.0.1 for the tests: real HTTP through a real socket, with a function
that says what to answer each POST."""

from __future__ import annotations

import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

#: ``reply(body, headers) -> (status, payload, extra headers)``; ``headers`` lower-cased.
Reply = Callable[[bytes, dict[str, str]], tuple[int, bytes, dict[str, str]]]


class LoopbackService:
    """Serves ``reply`` on ``http://127.0.0.1:<free port><path>`` in a daemon thread until
    :meth:`close`."""

    def __init__(self, reply: Reply, path: str = "/query") -> None:
        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["Content-Length"]))
                headers = {k.lower(): v for k, v in self.headers.items()}
                status, payload, extra = reply(body, headers)
                self.send_response(status)
                for name, value in extra.items():
                    self.send_header(name, value)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, *args: object) -> None:
                pass  # the tests' output stays theirs

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_port}{path}"
        threading.Thread(target=self.httpd.serve_forever, args=(0.05,), daemon=True).start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
