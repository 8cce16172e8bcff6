"""sentence-transformers' tokenization of a batch, straight into padded numpy arrays.

Hugging Face's tokenizer ``__call__`` spends much of its time in Python, in one thread
whatever the cores: each encoding becomes a dict of lists, then a ``BatchEncoding``, then
tensors. :class:`BatchTokenizer` runs a copy of the model's own Rust tokenizer through
``encode_batch_fast`` (Rust threads, the GIL released) and writes each text's ids into one
preallocated int64 array (docs/encoding.md has the figures). For BERT's pipeline
(all-MiniLM-L6-v2 and most sentence-transformers models) it also skips work whose result is
known: tokens past the truncation point (long texts are cut at a space first, and done again
whole when the cut falls short), and the Rust normalizer on plain ASCII texts (lowercasing is
all it does to them). The ids and masks are identical to what sentence-transformers feeds the
model; the tests compare them on real SciFact passages, odd strings and random texts.
"""

from __future__ import annotations

import json
import os
import re
from collections import deque
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np

from heta_eval._runtime import usable_cpus

__all__ = ["BatchTokenizer", "ahead_threads", "rust_threads", "tokenized_ahead"]

#: A text longer than this many characters per kept token is first tokenized only up to a
#: space past that point (``BatchTokenizer._cut_encoded``); SciFact: 9 of 5,183 abstracts
#: need a second, full pass at 6, 623 at 5.
CHARS_PER_TOKEN = 6


class BatchTokenizer:
    """Tokenizes batches of texts as sentence-transformers does (no stripping, truncation at
    ``max_length`` tokens including the special ones, padding to the batch's longest text):
    ``tokenizer(texts)`` gives ``{name: int64 array (texts, longest)}`` for each of the
    model's input names (e.g. input_ids, token_type_ids, attention_mask).

    ``hf_tokenizer`` is the model's fast (Rust-backed) Hugging Face tokenizer; it is copied,
    not changed. Safe to call from several threads at once.

    >>> from transformers import AutoTokenizer
    >>> from heta_eval.encoding.dense import default_model_path
    >>> tokenizer = BatchTokenizer(AutoTokenizer.from_pretrained(default_model_path()), 256)
    >>> tokenizer(["a cat", ""])["input_ids"].tolist()
    [[101, 1037, 4937, 102], [101, 102, 0, 0]]
    """

    def __init__(self, hf_tokenizer: Any, max_length: int) -> None:
        from tokenizers import Tokenizer

        backend = getattr(hf_tokenizer, "backend_tokenizer", None)
        if backend is None:
            raise ValueError(
                f"{type(hf_tokenizer).__name__} is not a fast (Rust) tokenizer: dense encoding "
                "needs a model with a tokenizer.json"
            )
        names = list(hf_tokenizer.model_input_names)
        unknown = set(names) - {"input_ids", "token_type_ids", "attention_mask"}
        if unknown:
            raise ValueError(f"tokenizer inputs {sorted(unknown)} are not supported")
        self.input_names = names
        self.max_length = int(max_length)
        self.pad_id = int(hf_tokenizer.pad_token_id or 0)
        self.left_padding = hf_tokenizer.padding_side == "left"
        # A copy: the Hugging Face tokenizer re-sets truncation and padding on its backend at
        # each call, and this one must not change under threads that are using it.
        self.tokenizer = Tokenizer.from_str(backend.to_str())
        self.tokenizer.no_padding()
        self.tokenizer.enable_truncation(
            self.max_length, strategy="longest_first", direction=hf_tokenizer.truncation_side
        )
        self._encode = _batch_encoder(self.tokenizer)
        probe = self._encode(["a b"])[0]
        # Single texts get one type id (0 for BERT) everywhere: no per-text copy is needed.
        self._type_id = probe.type_ids[0] if len(set(probe.type_ids)) == 1 else None
        spec = json.loads(self.tokenizer.to_str())
        bert = _is_bert_pipeline(spec)
        self._cut_at = self.max_length * CHARS_PER_TOKEN if bert else None
        # ASCII texts skip the Rust normalizer (a large share of the time): for them BERT's is
        # lowercasing (or nothing), once control characters and added tokens are ruled out.
        self._plain_encode: Any = None
        if bert:
            plain = Tokenizer.from_str(self.tokenizer.to_str())
            plain.normalizer = None
            self._plain_encode = _batch_encoder(plain)
            self._lowercase = bool(spec["normalizer"].get("lowercase"))
            added = [re.escape(t["content"]) for t in spec.get("added_tokens") or []]
            self._not_plain = re.compile("|".join([_ASCII_CONTROL, *added]), re.IGNORECASE)

    def __call__(self, texts: Sequence[str]) -> dict[str, np.ndarray]:
        texts = list(texts)
        encodings = self._encoded(texts)
        ids = [encoding.ids for encoding in encodings]
        lengths = np.fromiter(map(len, ids), dtype=np.int64, count=len(ids))
        longest = int(lengths.max()) if len(ids) else 0
        input_ids = np.full((len(ids), longest), self.pad_id, dtype=np.int64)
        starts = longest - lengths if self.left_padding else np.zeros_like(lengths)
        for row, (start, text_ids) in enumerate(zip(starts.tolist(), ids, strict=True)):
            input_ids[row, start : start + len(text_ids)] = text_ids
        positions = np.arange(longest)
        mask = (positions >= starts[:, None]) & (positions < (starts + lengths)[:, None])
        features = {"input_ids": input_ids, "attention_mask": mask.astype(np.int64)}
        if "token_type_ids" in self.input_names:
            features["token_type_ids"] = self._type_ids(encodings, mask, starts)
        return {name: features[name] for name in self.input_names}

    def _encoded(self, texts: list[str]) -> list[Any]:
        """The truncated encodings of ``texts``, in order."""
        if self._plain_encode is None:
            return self._cut_encoded(self._encode, texts)
        plain, other = [], []
        for i, text in enumerate(texts):
            (plain if text.isascii() and not self._not_plain.search(text) else other).append(i)
        lower = self._lowercase
        encodings: list[Any] = [None] * len(texts)
        for encode, rows, inputs in (
            (self._plain_encode, plain, [texts[i].lower() if lower else texts[i] for i in plain]),
            (self._encode, other, [texts[i] for i in other]),
        ):
            if rows:
                for i, encoding in zip(rows, self._cut_encoded(encode, inputs), strict=True):
                    encodings[i] = encoding
        return encodings

    def _cut_encoded(self, encode: Any, texts: list[str]) -> list[Any]:
        """``encode(texts)``, where long texts are first tokenized only up to a space past
        ``_cut_at`` characters: tokens past the truncation point cost as much as the kept
        ones, and 71% of SciFact abstracts are truncated."""
        if self._cut_at is None:
            return encode(texts)
        cut_at = self._cut_at
        cuts = [text.find(" ", cut_at) if len(text) > cut_at else -1 for text in texts]
        encodings = encode([t if c < 0 else t[:c] for t, c in zip(texts, cuts, strict=True)])
        # A cut text that still fills max_length tokens is truncated exactly where the whole
        # text is (its words are the whole text's first words); the rest are done again whole.
        again = [i for i, c in enumerate(cuts) if c >= 0 and len(encodings[i]) < self.max_length]
        if again:
            for i, encoding in zip(again, encode([texts[i] for i in again]), strict=True):
                encodings[i] = encoding
        return encodings

    def _type_ids(self, encodings: list[Any], mask: np.ndarray, starts: np.ndarray) -> np.ndarray:
        if self._type_id is not None:
            return np.where(mask, self._type_id, 0).astype(np.int64)
        type_ids = np.zeros(mask.shape, dtype=np.int64)
        for row, (start, encoding) in enumerate(zip(starts.tolist(), encodings, strict=True)):
            type_ids[row, start : start + len(encoding)] = encoding.type_ids
        return type_ids


def rust_threads() -> int:
    """How many threads the Rust tokenizer spreads one batch over: 1 where
    ``TOKENIZERS_PARALLELISM`` is off, else ``TOKENIZERS_NUM_THREADS`` (newer tokenizers) or
    ``RAYON_NUM_THREADS`` (tokenizers <= 0.23) where set, else the usable CPUs.

    >>> rust_threads() >= 1
    True
    """
    flag = os.environ.get("TOKENIZERS_PARALLELISM")
    if flag is not None and flag.lower() in ("", "off", "false", "f", "no", "n", "0"):
        return 1
    for name in ("TOKENIZERS_NUM_THREADS", "RAYON_NUM_THREADS"):
        try:
            return max(1, int(os.environ[name]))
        except (KeyError, ValueError):
            continue
    return usable_cpus()


def ahead_threads() -> int:
    """Threads that tokenize ahead of a GPU: a few where the Rust tokenizer spreads each
    batch over the CPUs itself (while one thread fills arrays, the others' batches are in
    Rust), one per CPU but the GPU's own where it runs single-threaded
    (``TOKENIZERS_PARALLELISM=false``).

    >>> ahead_threads() >= 1
    True
    """
    return 3 if rust_threads() > 1 else max(1, usable_cpus() - 1)


def tokenized_ahead(
    tokenizer: BatchTokenizer, texts: Sequence[str], batches: Sequence[np.ndarray], threads: int
) -> Iterator[tuple[np.ndarray, dict[str, np.ndarray]]]:
    """``(rows, tokenizer(texts of rows))`` for each array of row numbers in ``batches``, in
    order; with ``threads`` the next batches are tokenized while the caller works on one.

    Threads, not processes: the Rust tokenizer releases the GIL (and runs its own thread
    pool), so only the filling of arrays holds it.
    """

    def inputs(rows: np.ndarray) -> dict[str, np.ndarray]:
        return tokenizer([texts[i] for i in rows])

    if threads <= 0 or len(batches) < 2:
        for rows in batches:
            yield rows, inputs(rows)
        return
    pool = ThreadPoolExecutor(threads, thread_name_prefix="heta-tokenize")
    try:
        ahead: deque = deque()
        for rows in batches:
            ahead.append((rows, pool.submit(inputs, rows)))
            if len(ahead) > threads:
                done_rows, future = ahead.popleft()
                yield done_rows, future.result()
        while ahead:
            done_rows, future = ahead.popleft()
            yield done_rows, future.result()
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


#: ASCII characters BERT's normalizer deletes (controls other than tab, newline, return).
_ASCII_CONTROL = r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]"


def _batch_encoder(tokenizer: Any) -> Any:
    # encode_batch_fast (tokenizers >= 0.20) skips the character offsets nobody reads.
    return getattr(tokenizer, "encode_batch_fast", tokenizer.encode_batch)


def _is_bert_pipeline(spec: dict[str, Any]) -> bool:
    """Whether the tokenizer (its tokenizer.json ``spec``) is BERT's pipeline: per-character
    normalization, words split at whitespace and punctuation, word pieces per word, special
    tokens only around the text, truncation on the right, no added token with a space in it.
    Then tokenizing a text only up to a space gives the whole text's first tokens, and an
    ASCII text without control characters or added tokens is normalized by lowercasing."""
    added = spec.get("added_tokens") or []
    return (
        (spec.get("normalizer") or {}).get("type") == "BertNormalizer"
        and (spec.get("pre_tokenizer") or {}).get("type") == "BertPreTokenizer"
        and (spec.get("model") or {}).get("type") == "WordPiece"
        and (spec.get("post_processor") or {}).get("type")
        in ("TemplateProcessing", "BertProcessing")
        and (spec.get("truncation") or {}).get("direction") == "Right"
        and not any(" " in token.get("content", "") for token in added)
    )
