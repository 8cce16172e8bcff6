"""BatchTokenizer feeds the model exactly what sentence-transformers feeds it: the same
input_ids, token_type_ids and attention masks, on real SciFact passages (71% of them past the
256-token truncation), odd strings and random word sequences, batched as the encoder batches."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from heta_eval.encoding.dense import default_model_path
from heta_eval.encoding.tokenization import BatchTokenizer

ODD = [
    "",
    " ",
    "\t\n \r",
    "  leading and trailing spaces  ",
    "control\x00chars\x07and\x1bescapes\u200b",
    "[CLS] [SEP] [MASK] [PAD] [UNK] literal special tokens",
    "[cls] lowercase [mask] look-alikes, and [Mask]",
    "ascii controls\x0b\x0cform feed\x7fdelete\x01 \r\n\t end",
    "Café naïve résumé Ångström — “quotes” … ½ µm ≥ 5%",
    "ΣΑΣ σίσυφος ΟΔΟΣ. İstanbul ǅ ﬁ",
    "emoji 🧬🔬 and CJK 细胞凋亡是程序性细胞死亡 mixed",
    "细胞" * 1000,  # no space to cut at, 2,000 tokens
    "x" * 5000,  # one word past WordPiece's 100 characters: [UNK]
    "internationalization " * 200,  # ~10 characters a token: the cut text falls short
    "internationalization " * 127,  # exactly 254 word pieces, longer than the cut point
    "a " * 3000,  # one character a token
    "word\u00a0with\u00a0no-break\u3000spaces " * 150,
    "(((((((((( )))))))))) " * 200,
    "tabs\tand\nnewlines\nbetween words " * 120,
]


@pytest.fixture(scope="module")
def peer():
    from sentence_transformers import SentenceTransformer

    return SentenceTransformer(default_model_path(), device="cpu")


@pytest.fixture(scope="module")
def tokenizer(peer) -> BatchTokenizer:
    return BatchTokenizer(peer.tokenizer, peer.max_seq_length)


def peer_features(peer, texts: list[str]) -> dict[str, np.ndarray]:
    # sentence-transformers >= 6 calls it preprocess; older releases tokenize.
    features = getattr(peer, "preprocess", peer.tokenize)(texts)
    return {k: v.numpy() for k, v in features.items() if k != "modality"}


def assert_same_features(ours: dict[str, np.ndarray], theirs: dict[str, np.ndarray]) -> None:
    assert list(ours) == list(theirs)
    for name, array in theirs.items():
        assert ours[name].dtype == np.int64, name
        np.testing.assert_array_equal(ours[name], array, err_msg=name)


def test_scifact_passages_are_tokenized_as_sentence_transformers_does(
    peer, tokenizer, scifact_dir
) -> None:
    with (scifact_dir / "corpus.jsonl").open(encoding="utf-8") as f:
        docs = [json.loads(line) for line in f if line.strip()]
    texts = [f"{d['title']} {d['text']}".strip() for d in docs]  # as BEIR encodes them
    assert peer.max_seq_length == 256 and tokenizer._cut_at is not None
    # Long texts are cut before they are tokenized, and ASCII ones skip the Rust normalizer:
    # both paths are taken by many of these.
    assert sum(len(t) > tokenizer._cut_at for t in texts) > 500
    assert tokenizer._plain_encode is not None and sum(t.isascii() for t in texts) > 2000
    texts.sort(key=len, reverse=True)  # the encoder's batches: longest first
    for start in range(0, len(texts), 512):
        batch = texts[start : start + 512]
        assert_same_features(tokenizer(batch), peer_features(peer, batch))
    # Mixed lengths in one batch: padding, masks and truncation row by row.
    mixed = texts[::37] + ODD
    assert_same_features(tokenizer(mixed), peer_features(peer, mixed))


@pytest.mark.parametrize("text", ODD, ids=range(len(ODD)))
def test_odd_strings_are_tokenized_as_sentence_transformers_does(peer, tokenizer, text) -> None:
    assert_same_features(tokenizer([text]), peer_features(peer, [text]))
    pair = [text, "a short one"]
    assert_same_features(tokenizer(pair), peer_features(peer, pair))


ASCII_WORD = st.one_of(
    st.text(alphabet=st.sampled_from("abcdefXYZ-.,'()_[]#\t\x7f\x0c0123456789"), max_size=25),
    st.sampled_from(["internationalization", "Mitochondrial", "[MASK]", "[sep]", "[CLS]"]),
)
WORD = st.one_of(ASCII_WORD, st.text(alphabet=st.sampled_from("aé细ßΣ\u00a0\u0301µ"), max_size=9))


def cycled(words: list[str], n: int) -> str:
    return " ".join(words[i % len(words)] for i in range(n))


# Words cycled up to 800 times: texts from a few characters to past the cut point, with
# words of every length (so the cut text sometimes holds fewer than 254 word pieces); half
# of them plain ASCII (the path without the Rust normalizer).
TEXT = st.one_of(
    st.builds(cycled, st.lists(ASCII_WORD, min_size=1, max_size=30), st.integers(0, 800)),
    st.builds(cycled, st.lists(WORD, min_size=1, max_size=30), st.integers(0, 800)),
)


@settings(
    max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(texts=st.lists(TEXT, min_size=1, max_size=4))
def test_random_word_sequences_are_tokenized_as_sentence_transformers_does(
    peer, tokenizer, texts
) -> None:
    assert_same_features(tokenizer(texts), peer_features(peer, texts))


def test_an_empty_batch_gives_empty_arrays(tokenizer) -> None:
    features = tokenizer([])
    assert list(features) == ["input_ids", "token_type_ids", "attention_mask"]
    assert all(a.shape == (0, 0) and a.dtype == np.int64 for a in features.values())


def test_other_tokenizers_left_padding_and_no_cut_match_hugging_face() -> None:
    """A tokenizer of another kind (BPE, byte-level, left padding, no token types): the text
    is never cut, and the arrays equal Hugging Face's ``__call__``."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    rust = Tokenizer(models.BPE(unk_token="<unk>"))
    rust.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    rust.decoder = decoders.ByteLevel()
    corpus = ["the cell divides", "apoptosis of the cell", "mitochondria make energy"] * 20
    rust.train_from_iterator(
        corpus, trainers.BpeTrainer(vocab_size=300, special_tokens=["<pad>", "<unk>"])
    )
    hf = PreTrainedTokenizerFast(
        tokenizer_object=rust,
        pad_token="<pad>",
        unk_token="<unk>",
        padding_side="left",
        model_input_names=["input_ids", "attention_mask"],
    )
    ours = BatchTokenizer(hf, 12)
    assert ours._cut_at is None and ours.left_padding
    texts = ["the cell", "", "  mitochondria make energy for the cell " * 5, "apoptosis"]
    theirs = hf(texts, padding=True, truncation="longest_first", max_length=12, return_tensors="np")
    assert_same_features(ours(texts), {k: v.astype(np.int64) for k, v in theirs.items()})


def test_a_slow_tokenizer_is_refused_with_a_clear_error() -> None:
    class Slow:
        model_input_names = ("input_ids",)

    with pytest.raises(ValueError, match="not a fast"):
        BatchTokenizer(Slow(), 256)


@pytest.mark.parametrize(
    ("environ", "expected"),
    [
        ({"TOKENIZERS_PARALLELISM": "false"}, 1),
        ({"TOKENIZERS_PARALLELISM": "0", "RAYON_NUM_THREADS": "4"}, 1),
        ({"TOKENIZERS_PARALLELISM": "true", "RAYON_NUM_THREADS": "3"}, 3),
        ({"RAYON_NUM_THREADS": "5"}, 5),
        ({"TOKENIZERS_NUM_THREADS": "6", "RAYON_NUM_THREADS": "5"}, 6),
        ({}, None),  # the usable CPUs
    ],
)
def test_rust_threads_follow_the_tokenizers_environment(monkeypatch, environ, expected) -> None:
    from heta_eval._runtime import usable_cpus
    from heta_eval.encoding import dense
    from heta_eval.encoding.tokenization import ahead_threads, rust_threads

    for name in ("TOKENIZERS_PARALLELISM", "TOKENIZERS_NUM_THREADS", "RAYON_NUM_THREADS"):
        monkeypatch.delenv(name, raising=False)
    for name, value in environ.items():
        monkeypatch.setenv(name, value)
    assert rust_threads() == (expected or usable_cpus())
    # On CUDA, a single-threaded Rust tokenizer gets one tokenizer thread per CPU instead.
    assert ahead_threads() == (max(1, usable_cpus() - 1) if rust_threads() == 1 else 3)
    assert dense.DenseEncoder(device="cpu").tokenizer_workers == 0
