"""Weight sync to llama.cpp: the GGUF export maps Hugging Face names and the q/k row
permutation exactly (checked against the original GGUF's own tensors), and a real server
restarted on the export of a deliberately changed layer serves what the trained model now
computes (its logprobs match the Hugging Face model's after the change, and not before)."""

import gguf
import pytest
import torch

from etude.serving.gguf_export import export_gguf, gguf_tensor, permute_rotary
from etude.serving.hf_model import smollm2_gguf
from etude.serving.weight_sync import (
    ServedPolicy,
    max_logprob_gap,
    model_logprobs,
    server_completion,
)

PROMPT = "The capital of France is"
LAYER = "model.layers.29."


def test_permute_rotary_interleaves_the_halves_of_each_head():
    rows = torch.arange(8.0)[:, None]  # 2 heads of dimension 4
    assert permute_rotary(rows, 2).flatten().tolist() == [0, 2, 1, 3, 4, 6, 5, 7]


def test_export_maps_names_and_permutation_exactly(smollm2, tmp_path):
    """For every kind of tensor of a layer, the exported array equals the original GGUF's
    tensor dequantized: so names, permutation and orientation are llama.cpp's. A bad dtype
    is refused before anything is written."""
    model, _ = smollm2
    reader = gguf.GGUFReader(str(smollm2_gguf()))
    originals = {t.name: t for t in reader.tensors}
    tensor_map = gguf.get_tensor_name_map(gguf.MODEL_ARCH.LLAMA, model.config.num_hidden_layers)
    params = dict(model.named_parameters())
    names = [n for n in params if n.startswith(LAYER)] + ["model.norm.weight"]
    assert len(names) == 10
    for name in names:
        gguf_name, data = gguf_tensor(name, params[name], model.config, tensor_map)
        original = originals[gguf_name]
        expected = gguf.quants.dequantize(original.data, original.tensor_type)
        assert data.shape == expected.shape, name
        assert abs(data - expected).max() < 1e-6, name
    with pytest.raises(ValueError, match="dtype"):
        export_gguf(model, smollm2_gguf(), tmp_path / "q.gguf", names, dtype="q4")
    assert not (tmp_path / "q.gguf").exists()


@pytest.mark.slow
def test_server_serves_the_changed_weights_after_a_sync(smollm2, tmp_path):
    """Llama.cpp computes Q4_1 matmuls with 8-bit activations, so its logprobs differ from
    the fp32 Hugging Face model's by up to ~0.15 even on the same weights (measured); the
    tolerance is 0.3, and the change moves logprobs by far more."""
    model, tok = smollm2
    for name, p in model.named_parameters():
        p.requires_grad_(name.startswith(LAYER))
    served = ServedPolicy(tmp_path / "served", smollm2_gguf())
    try:
        served.sync(model, 0)
        before_text, before_server = server_completion(served.base_url, PROMPT)
        assert max_logprob_gap(before_server, model_logprobs(model, tok, PROMPT, before_text)) < 0.3
        layer = model.model.layers[29]
        saved = {k: v.clone() for k, v in layer.state_dict().items()}
        with torch.no_grad():  # the deliberate change to one trained layer
            model.model.layers[29].mlp.down_proj.weight.mul_(3.0)
            model.model.layers[29].self_attn.q_proj.weight[:64].mul_(4.0)
        served.sync(model, 1)
        assert served.version == 1
        assert not (tmp_path / "served" / "policy-0000.gguf").exists()
        after_text, after_server = server_completion(served.base_url, PROMPT)
        written = {t.name: t for t in gguf.GGUFReader(str(served.server.model_path)).tensors}
    finally:
        served.stop()
        for p in model.parameters():
            p.requires_grad_(True)
    original = {t.name: t.tensor_type for t in gguf.GGUFReader(str(smollm2_gguf())).tensors}
    assert written.keys() == original.keys()
    for name, tensor in written.items():  # the trained layer exactly, the rest untouched
        kind = gguf.GGMLQuantizationType.F32 if name.startswith("blk.29.") else original[name]
        assert tensor.tensor_type == kind, name
    assert after_text != before_text
    assert max_logprob_gap(after_server, model_logprobs(model, tok, PROMPT, after_text)) < 0.3
    layer.load_state_dict(saved)  # the weights before the change (restored for other tests)
    assert max_logprob_gap(after_server, model_logprobs(model, tok, PROMPT, after_text)) > 1.0
