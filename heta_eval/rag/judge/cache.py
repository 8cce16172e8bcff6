"""A persistent cache of LLM judge calls, so a rerun of the same judgments costs nothing.

Entries live in one SQLite file (safe for several processes at once), keyed by the SHA-256 of
the model, the messages (the rendered prompt) and every parameter that changes the reply:
temperature, which repeat and which attempt of a judgment it is. The server's URL is not part
of the key: the same model given the same prompt is the same call wherever it is served.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
from pathlib import Path
from typing import Any

from heta_eval import config
from heta_eval.llm import ChatReply

__all__ = ["JudgeCache", "default_judge_cache_path"]


def default_judge_cache_path() -> Path:
    """``$HETA_EVAL_CACHE_DIR/llm/judge.sqlite``, else ``~/.cache/heta-eval/llm/judge.sqlite``.

    >>> default_judge_cache_path().name
    'judge.sqlite'
    """
    return config.cache_dir("llm") / "judge.sqlite"


class JudgeCache:
    """Replies of judge calls on disk, by call key.

    >>> import tempfile
    >>> cache = JudgeCache(Path(tempfile.mkdtemp()) / "judge.sqlite")
    >>> key = JudgeCache.key("m", [{"role": "user", "content": "hi"}], {"temperature": 0.0})
    >>> cache.get(key) is None
    True
    >>> cache.put(key, ChatReply("ok", {"prompt_tokens": 5, "completion_tokens": 1}))
    >>> cache.get(key)
    ChatReply(content='ok', usage={'prompt_tokens': 5, 'completion_tokens': 1})
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._db = sqlite3.connect(self.path, timeout=30, check_same_thread=False)
        with self._lock, self._db:
            self._db.execute(
                "CREATE TABLE IF NOT EXISTS calls (key TEXT PRIMARY KEY, content TEXT NOT NULL,"
                " usage TEXT, model TEXT)"
            )

    def __repr__(self) -> str:
        return f"JudgeCache({str(self.path)!r})"

    @staticmethod
    def key(model: str, messages: list[dict[str, str]], params: dict[str, Any]) -> str:
        """The cache key of one call."""
        blob = json.dumps(
            {"model": model, "messages": messages, "params": params},
            sort_keys=True,
            ensure_ascii=False,
        )
        return hashlib.sha256(blob.encode("utf-8")).hexdigest()

    def get(self, key: str) -> ChatReply | None:
        with self._lock:
            row = self._db.execute(
                "SELECT content, usage FROM calls WHERE key = ?", (key,)
            ).fetchone()
        if row is None:
            return None
        return ChatReply(row[0], json.loads(row[1]) if row[1] else None)

    def put(self, key: str, reply: ChatReply, *, model: str = "") -> None:
        usage = json.dumps(reply.usage) if reply.usage is not None else None
        with self._lock, self._db:
            self._db.execute(
                "INSERT OR REPLACE INTO calls (key, content, usage, model) VALUES (?, ?, ?, ?)",
                (key, reply.content, usage, model),
            )

    def __len__(self) -> int:
        with self._lock:
            return int(self._db.execute("SELECT COUNT(*) FROM calls").fetchone()[0])
