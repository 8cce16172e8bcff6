"""sentence-transformers' tokenization of a batch, straight into padded numpy arrays.

Hugging Face's tokenizer ``__call__`` spends most of its time in Python: each encoding becomes
a dict of lists, then a ``BatchEncoding``, then tensors (~200 µs a SciFact abstract here, in
one thread, whatever the cores). :class:`BatchTokenizer` runs the same Rust tokenizer (a copy
of the model's, so normalization, word pieces and special tokens are the model's own) through
``encode_batch_fast`` (Rust threads, the GIL released) and writes each text's ids into one
preallocated int64 array (~15 µs a text in Python). The ids and masks are identical to what
sentence-transformers feeds the model; the tests compare them on real SciFact passages.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import numpy as np

__all__ = ["BatchTokenizer"]

#: A text longer than this many characters per kept token is first tokenized only up to a
#: space past that point (see ``BatchTokenizer._cut``); SciFact: 9 of 5,183 abstracts need
#: a second, full pass at 6, 623 at 5.
CHARS_PER_TOKEN = 6


class BatchTokenizer:
    """Tokenizes batches of texts as sentence-transformers does (no stripping, truncation at
    ``max_length`` tokens including the special ones, padding to the batch's longest text):
    ``tokenizer(texts)`` gives ``{name: int64 array (texts, longest)}`` for each of the
    model's input names (e.g. input_ids, token_type_ids, attention_mask).

    ``hf_tokenizer`` is the model's fast (Rust-backed) Hugging Face tokenizer; it is copied,
    not changed. Safe to call from several threads at once.

    >>> from transformers import AutoTokenizer
    >>> from heta_eval.kb.dense import default_model_path
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
        # encode_batch_fast (tokenizers >= 0.20) skips the character offsets nobody reads.
        self._encode = getattr(self.tokenizer, "encode_batch_fast", self.tokenizer.encode_batch)
        probe = self._encode(["a b"])[0]
        # Single texts get one type id (0 for BERT) everywhere: no per-text copy is needed.
        self._type_id = probe.type_ids[0] if len(set(probe.type_ids)) == 1 else None
        self._cut_at = self.max_length * CHARS_PER_TOKEN if _cut_is_exact(self) else None

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
        """The truncated encodings of ``texts``; long texts are first tokenized only up to a
        space past ``_cut_at`` characters (tokens past the truncation point cost as much as
        the kept ones, and 71% of SciFact abstracts are truncated)."""
        if self._cut_at is None:
            return self._encode(texts)
        cut_at = self._cut_at
        cuts = [text.find(" ", cut_at) if len(text) > cut_at else -1 for text in texts]
        encodings = self._encode([t if c < 0 else t[:c] for t, c in zip(texts, cuts, strict=True)])
        # A cut text that still fills max_length tokens is truncated exactly where the whole
        # text is (its words are the whole text's first words); the rest are done again whole.
        again = [i for i, c in enumerate(cuts) if c >= 0 and len(encodings[i]) < self.max_length]
        if again:
            for i, encoding in zip(again, self._encode([texts[i] for i in again]), strict=True):
                encodings[i] = encoding
        return encodings

    def _type_ids(self, encodings: list[Any], mask: np.ndarray, starts: np.ndarray) -> np.ndarray:
        if self._type_id is not None:
            return np.where(mask, self._type_id, 0).astype(np.int64)
        type_ids = np.zeros(mask.shape, dtype=np.int64)
        for row, (start, encoding) in enumerate(zip(starts.tolist(), encodings, strict=True)):
            type_ids[row, start : start + len(encoding)] = encoding.type_ids
        return type_ids


def _cut_is_exact(tokenizer: BatchTokenizer) -> bool:
    """Whether tokenizing a text only up to a space gives the whole text's first tokens: true
    for BERT's pipeline (per-character normalization, words split at spaces and punctuation,
    word pieces per word, special tokens only around the text, truncation on the right) when
    no added token contains a space."""
    spec = json.loads(tokenizer.tokenizer.to_str())
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
