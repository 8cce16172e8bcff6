"""A loopback file server for downloads (truncation, delay, hit counts) and a small BEIR zip."""

from __future__ import annotations

import io
import socket
import threading
import time
import zipfile
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

CORPUS = (
    '{"_id": "d1", "title": "A", "text": "alpha"}\n{"_id": "d2", "title": "B", "text": "beta"}\n'
)

QUERIES = '{"_id": "q1", "text": "first"}\n'

QRELS = "query-id\tcorpus-id\tscore\nq1\td1\t1\n"


def beir_zip(top: str = "scifact", extra: dict[str, bytes] | None = None) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as zf:
        zf.writestr(f"{top}/corpus.jsonl", CORPUS)
        zf.writestr(f"{top}/queries.jsonl", QUERIES)
        zf.writestr(f"{top}/qrels/test.tsv", QRELS)
        for name, data in (extra or {}).items():
            zf.writestr(name, data)
    return buffer.getvalue()


class Server:
    """Serves ``files[path] = bytes``; ``truncate[path] = n`` sends only the first n bytes
    (with the full Content-Length) to the first n_truncated requests, then closes."""

    def __init__(self) -> None:
        self.files: dict[str, bytes] = {}
        self.truncate: dict[str, int] = {}
        self.truncate_times: dict[str, int] = {}
        self.delay = 0.0
        self.hits: dict[str, int] = {}
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:  # keep test output clean
                pass

            def do_GET(self) -> None:
                server.hits[self.path] = server.hits.get(self.path, 0) + 1
                data = server.files.get(self.path)
                if data is None:
                    self.send_error(404)
                    return
                time.sleep(server.delay)
                self.send_response(200)
                self.send_header("Content-Type", "application/zip")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                cut = server.truncate.get(self.path)
                if cut is not None and server.truncate_times.get(self.path, 0) > 0:
                    server.truncate_times[self.path] -= 1
                    self.wfile.write(data[:cut])
                    self.wfile.flush()
                    self.close_connection = True
                    self.connection.shutdown(socket.SHUT_RDWR)
                    return
                self.wfile.write(data)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}{path}"

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
