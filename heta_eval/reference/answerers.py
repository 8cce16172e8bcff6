"""Answerers turn a query and its retrieved chunks into an answer string."""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from heta_eval.llm import LLMClient
from heta_eval.models.records import QueryResult
from heta_eval.reference.chunking import split_sentences

__all__ = ["Answerer", "ChatAnswerer", "ExtractiveAnswerer", "make_answerer"]

_WORD = re.compile(r"\w\w+")


@runtime_checkable
class Answerer(Protocol):
    """Anything with ``async answer(query, results) -> str | None``."""

    async def answer(self, query: str, results: Sequence[QueryResult]) -> str | None: ...


class ExtractiveAnswerer:
    """No LLM: answers with the sentence of the top chunks sharing most query terms.

    Terms are lower-cased, stemmed (Snowball English) and stopword-free; a sentence scores
    ``matched terms / log2(2 + its length)`` so short precise sentences win; ties go to the
    higher-ranked chunk.

    >>> import asyncio
    >>> chunks = [QueryResult(text="Paris is big. Paris is the capital of France.")]
    >>> asyncio.run(ExtractiveAnswerer().answer("What is the capital of France?", chunks))
    'Paris is the capital of France.'
    """

    def __init__(self, *, top_chunks: int = 3) -> None:
        import Stemmer
        from bm25s.stopwords import STOPWORDS_EN

        self.top_chunks = top_chunks
        self._stem = Stemmer.Stemmer("english").stemWords
        self._stop = set(STOPWORDS_EN)

    def _terms(self, text: str) -> list[str]:
        return self._stem([w for w in _WORD.findall(text.lower()) if w not in self._stop])

    async def answer(self, query: str, results: Sequence[QueryResult]) -> str | None:
        wanted = set(self._terms(query))
        best, best_score = None, -1.0
        for result in results[: self.top_chunks]:
            for start, end in split_sentences(result.text):
                sentence = result.text[start:end]
                terms = self._terms(sentence)
                score = len(wanted.intersection(terms)) / math.log2(2 + len(terms))
                if score > best_score:
                    best, best_score = sentence, score
        return best


SYSTEM_PROMPT = (
    "You answer questions using only the numbered context passages. Answer concisely "
    "(a short phrase or one sentence). If the context does not contain the answer, say "
    '"I don\'t know".'
)


class ChatAnswerer:
    """Answers with an OpenAI-compatible chat model over the top chunks.

    >>> answerer = ChatAnswerer(LLMClient(base_url="http://127.0.0.1:9/v1", model="m"))
    >>> answerer.top_chunks
    5
    """

    def __init__(
        self,
        client: LLMClient | None = None,
        *,
        top_chunks: int = 5,
        system_prompt: str = SYSTEM_PROMPT,
    ) -> None:
        self.client = client or LLMClient.from_env()
        self.top_chunks = top_chunks
        self.system_prompt = system_prompt

    async def answer(self, query: str, results: Sequence[QueryResult]) -> str | None:
        context = "\n\n".join(
            f"[{i}] {r.text}" for i, r in enumerate(results[: self.top_chunks], 1)
        )
        messages = [
            {"role": "system", "content": self.system_prompt},
            {"role": "user", "content": f"Context:\n{context}\n\nQuestion: {query}\nAnswer:"},
        ]
        return (await self.client.chat(messages)).strip()


def make_answerer(spec: object) -> Answerer | None:
    """The answerer an :class:`~heta_eval.reference.recipe.AnswererSpec` describes."""
    kind = getattr(spec, "kind", "extractive")
    top = getattr(spec, "top_chunks", 3)
    if kind == "none":
        return None
    if kind == "llm":
        client = LLMClient.from_env(
            model=getattr(spec, "model", None), base_url=getattr(spec, "base_url", None)
        )
        return ChatAnswerer(client, top_chunks=top)
    return ExtractiveAnswerer(top_chunks=top)
