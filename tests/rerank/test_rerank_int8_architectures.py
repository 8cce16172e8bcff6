"""The cross-encoder's int8 route beyond BERT: the families public rerankers and encoders are
built on (RoBERTa and XLM-R: BGE's rerankers; ELECTRA; DeBERTa-v2: mxbai's; DistilBERT: TAS-B),
each a small seeded model of the real transformers class under the bundled MiniLM tokenizer,
loaded through sentence-transformers' ``CrossEncoder``. In the int8 graph every quantized
product sits inside the encoder, each layer's FFN output projection stays float32 whatever the
family names it (DistilBERT's ``ffn.lin2`` was once quantized), the pooler and classification
head stay float32, and the scores differ from float32's (int8 arithmetic ran) by less than the
tolerance."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from heta_eval.encoding.onnx_int8 import _quantized_model, classifier_source, is_ffn_output
from heta_eval.encoding.runners import default_model_path
from heta_eval.rerank import CrossEncoderReranker
from heta_eval.rerank.cross_encoder import INT8_SCORE_TOLERANCE

onnx = pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")

PAIRS = [
    ("what causes fever", "Fever is caused by infection and inflammation of tissue."),
    ("a", "b c d"),
    ("proteins that bind DNA", "Transcription factors " * 60),
]
#: Each family's config beyond the shared small shape.
FAMILIES = {
    "roberta": {},
    "electra": {"embedding_size": 64},
    "deberta-v2": {},
    "distilbert": {"hidden_dim": 128},
}


def _small_cross_encoder(family: str, folder: Path):  # type: ignore[no-untyped-def]
    import torch
    from transformers import AutoConfig, AutoModelForSequenceClassification, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(default_model_path())
    config = AutoConfig.for_model(
        family,
        vocab_size=tokenizer.vocab_size,
        hidden_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        intermediate_size=128,
        pad_token_id=tokenizer.pad_token_id,
        num_labels=1,
        **FAMILIES[family],
    )
    torch.manual_seed(48)
    model = AutoModelForSequenceClassification.from_config(config).eval()
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return model, tokenizer


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_int8_quantizes_the_encoder_only_and_scores_within_the_tolerance(family, tmp_path):
    model, tokenizer = _small_cross_encoder(family, tmp_path)
    wide = CrossEncoderReranker(str(tmp_path), precision="float32", device="cpu", cache_dir=False)
    narrow = CrossEncoderReranker(str(tmp_path), precision="int8", device="cpu", cache_dir=False)
    assert narrow.route == "onnxruntime-int8"
    gap = np.abs(narrow.score(PAIRS) - wide.score(PAIRS))
    assert 0 < gap.max() < INT8_SCORE_TOLERANCE, gap

    graph = onnx.load(str(_quantized_model(classifier_source(model, tokenizer)))).graph
    body = f"/transformer/{model.base_model_prefix}/"
    quantized = [n.name for n in graph.node if n.op_type == "MatMulInteger"]
    # 2 layers x (query, key, value, attention output, FFN input); FFN outputs stay float32
    assert len(quantized) == 10, quantized
    assert all(name.startswith(body) for name in quantized), quantized
    products = [n.name for n in graph.node if n.op_type in ("MatMul", "Gemm")]
    assert len([name for name in products if is_ffn_output(name)]) == 2, products
    head = [
        n.name
        for n in graph.node
        if n.op_type in ("MatMul", "Gemm") and not n.name.startswith(body)
    ]
    assert head and all("classifier" in n or "pooler" in n for n in head), head
