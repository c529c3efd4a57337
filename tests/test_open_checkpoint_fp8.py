"""Block-FP8 checkpoints (DeepSeek-V3, Kimi-K2): a tiny DeepSeek-V3 written with float8
weights and a `weight_scale_inv` per block (blocks that do not divide the shapes) loads as
exactly the hand-dequantized weights, gives transformers' logits on them, and is read
region by region; real DeepSeek-V3 and Kimi-K2 config.json files parse and build."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
from hf_tiny import VOCAB, save_tiny_fp8
from safetensors.torch import load_file, save_file

from etude.models import MoETransformer, load_pretrained, save_pretrained
from etude.models.fp8_blocks import dequantize, scale_region
from etude.models.hf_checkpoint import from_transformers, open_checkpoint
from etude.models.hf_config import CheckpointError, config_from_hf, fp8_block_size

pytestmark = pytest.mark.slow

BLOCK = (16, 24)  # divides none of 24, 64, 96, 112 rows or 16, 24, 48, 64, 96 columns
DATA = Path(__file__).parent / "data" / "open_checkpoints"


@pytest.fixture(scope="module")
def fp8_dir(tmp_path_factory):
    directory = tmp_path_factory.mktemp("fp8")
    hf, written = save_tiny_fp8("deepseek_v3", directory, BLOCK)
    return directory, hf.eval(), written


def test_loads_the_hand_dequantized_weights_and_transformers_logits(fp8_dir, tmp_path):
    from transformers import AutoModelForCausalLM

    directory, hf, written = fp8_dir
    assert sum(t.dtype == torch.float8_e4m3fn for t in written.values()) > 40
    model, _ = load_pretrained(directory)
    reference = from_transformers(hf)  # transformers' model holding the dequantized weights
    got, want = dict(model.named_parameters()), dict(reference.named_parameters())
    assert got.keys() == want.keys()
    for name in want:
        assert torch.equal(got[name], want[name]), name
    tokens = torch.randint(0, VOCAB, (2, 13), generator=torch.Generator().manual_seed(0))
    with torch.no_grad():
        ref, out = hf(tokens).logits, model.eval()(tokens)
    assert ((out - ref).abs().max() / ref.abs().max()).item() <= 1e-4
    # the export is an unquantized checkpoint that transformers loads as such
    save_pretrained(model, tmp_path / "out")
    assert "quantization_config" not in json.loads((tmp_path / "out/config.json").read_text())
    back = AutoModelForCausalLM.from_pretrained(tmp_path / "out").eval()
    with torch.no_grad():
        torch.testing.assert_close(back(tokens).logits, ref, rtol=0, atol=1e-6)


def test_regions_read_only_their_blocks_and_equal_the_whole(fp8_dir):
    directory, _, written = fp8_dir
    _, _, source = open_checkpoint(directory)
    key = "model.layers.1.self_attn.kv_b_proj.weight"  # [112, 16]
    assert key + "_scale_inv" not in source.names()
    whole = source.read(key, (slice(0, 112), slice(0, 16)))
    # a region straddling block edges in both dimensions, as a rank's shard would
    part = source.read(key, (slice(37, 90), slice(5, 16)))
    assert torch.equal(part, whole[37:90, 5:16])
    index = scale_region((slice(37, 90), slice(5, 16)), BLOCK)
    assert (index[0].start, index[0].stop, index[1].start, index[1].stop) == (2, 6, 0, 1)
    scales = written[key + "_scale_inv"][index]
    torch.testing.assert_close(
        dequantize(written[key][37:90, 5:16], scales, BLOCK, (37, 5)), part, rtol=0, atol=0
    )


def _rewrite(directory: Path, change) -> None:
    tensors = load_file(str(directory / "model.safetensors"))
    change(tensors)
    save_file(tensors, str(directory / "model.safetensors"), metadata={"format": "pt"})


def test_bad_fp8_checkpoints_are_named_errors(tmp_path):
    key = "model.layers.0.mlp.down_proj.weight"
    d = tmp_path / "no_scale"
    save_tiny_fp8("deepseek_v3", d, BLOCK)
    _rewrite(d, lambda t: t.pop(key + "_scale_inv"))
    with pytest.raises(CheckpointError, match=f"FP8 tensor '{key}' has no"):
        load_pretrained(d)
    d = tmp_path / "wrong_grid"
    save_tiny_fp8("deepseek_v3", d, BLOCK)
    _rewrite(d, lambda t: t.update({key + "_scale_inv": torch.ones(3, 4)}))  # of [64, 96]
    with pytest.raises(CheckpointError, match=r"has shape \[3, 4\], expected \[4, 4\]"):
        load_pretrained(d)
    raw = json.loads((d / "config.json").read_text())
    del raw["quantization_config"]
    (d / "config.json").write_text(json.dumps(raw))
    with pytest.raises(CheckpointError, match="declares no quantization_config"):
        load_pretrained(d)


@pytest.mark.parametrize(
    "name,total,unit",
    # published totals: DeepSeek-V3's main model 671B (its MTP layer is not built), K2 1T
    [("deepseek_v3_config.json", 671, 1e9), ("kimi_k2_instruct_config.json", 1, 1e12)],
)
def test_real_configs_parse_and_build_on_meta(name, total, unit):
    raw = json.loads((DATA / name).read_text())
    config = config_from_hf(raw)
    assert fp8_block_size(raw) == (128, 128)
    assert config.attention == "mla" and config.router == "sigmoid" and config.router_bias
    assert config.yarn.factor == raw["rope_scaling"]["factor"]
    assert config.yarn.original_max_position_embeddings == 4096
    assert config.rope_theta == raw["rope_theta"]
    with torch.device("meta"):
        model = MoETransformer(config)
    n = sum(p.numel() for p in model.parameters())
    assert n == config.num_parameters()
    assert round(n / unit) == total
