"""Open checkpoints in and out: HF -> etude -> HF round trips give identical tensors and
the same logits in transformers (one file and a sharded index); every bad input is a clear
error naming what is wrong, a non-zero exit of `etude export`, and leaves nothing behind."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
from hf_tiny import VOCAB, save_tiny
from safetensors import safe_open
from safetensors.torch import load_file, save_file

from etude.cli import main as etude_main
from etude.models import MoETransformer, load_pretrained, preset, save_pretrained
from etude.models.hf_config import CheckpointError

pytestmark = pytest.mark.slow


def tensors_of(directory: Path) -> dict[str, torch.Tensor]:
    out = {}
    for f in sorted(directory.glob("*.safetensors")):
        with safe_open(str(f), "pt") as h:
            out.update({k: h.get_tensor(k) for k in h.keys()})  # noqa: SIM118
    return out


@pytest.mark.parametrize(
    "name,shard",
    [("llama", None), ("qwen3_moe", "40KB"), ("deepseek_v3", "40KB"), ("deepseek_v3_yarn", None)],
)
def test_round_trip_identical_tensors_and_logits(tmp_path, name, shard):
    from transformers import AutoModelForCausalLM

    src, out = tmp_path / "src", tmp_path / "out"
    hf = save_tiny(name, src, max_shard_size=shard)
    assert (src / "model.safetensors.index.json").exists() == bool(shard)
    model, tok = load_pretrained(src)
    save_pretrained(model, out, tok, max_shard_bytes=40_000 if shard else 5 << 30)
    assert (out / "model.safetensors.index.json").exists() == bool(shard)
    want, got = tensors_of(src), tensors_of(out)
    assert sorted(got) == sorted(want)
    for key in want:
        assert torch.equal(got[key], want[key]), key
    back = AutoModelForCausalLM.from_pretrained(out).eval()
    tokens = torch.randint(0, VOCAB, (2, 11), generator=torch.Generator().manual_seed(0))
    with torch.no_grad():
        torch.testing.assert_close(back(tokens).logits, hf(tokens).logits, rtol=0, atol=0)
    assert not (tmp_path / "out.partial").exists()


def test_export_cli_converts_an_hf_directory(tmp_path):
    save_tiny("qwen3_moe", tmp_path / "src")
    assert etude_main(["export", "--hf", str(tmp_path / "out"), str(tmp_path / "src")]) == 0
    assert tensors_of(tmp_path / "out").keys() == tensors_of(tmp_path / "src").keys()
    # a second export to the same place is refused, the first one stays intact
    assert etude_main(["export", "--hf", str(tmp_path / "out"), str(tmp_path / "src")]) == 2
    assert (tmp_path / "out" / "config.json").exists()


def test_etude_own_moe_has_no_hf_architecture(tmp_path):
    with pytest.raises(CheckpointError, match="no Hugging Face architecture"):
        save_pretrained(MoETransformer(preset("tiny")), tmp_path / "out")
    assert not (tmp_path / "out").exists() and not (tmp_path / "out.partial").exists()


def _edit_config(directory: Path, **changes) -> None:
    path = directory / "config.json"
    raw = json.loads(path.read_text())
    raw.update(changes)
    path.write_text(json.dumps(raw))


def _unknown_architecture(d: Path) -> str:
    _edit_config(d, architectures=["GPT2LMHeadModel"])
    return "unknown architecture ['GPT2LMHeadModel']"


def _unsupported_field(d: Path) -> str:
    _edit_config(d, attention_bias=True)
    return "unsupported config field attention_bias=True"


def _unsupported_rope(d: Path) -> str:
    _edit_config(d, rope_parameters={"rope_type": "yarn", "rope_theta": 1e4, "factor": 4.0})
    return "rope_parameters.rope_type='yarn'"


def _quantized(d: Path) -> str:
    _edit_config(d, quantization_config={"quant_method": "gptq", "bits": 4})
    return "unsupported config field quantization_config='gptq'"


def _fp8_without_blocks(d: Path) -> str:
    _edit_config(d, quantization_config={"quant_method": "fp8", "fmt": "e4m3"})
    return "unsupported config field quantization_config.weight_block_size=None"


def _missing_shard(d: Path) -> str:
    index = json.loads((d / "model.safetensors.index.json").read_text())
    shard = sorted(set(index["weight_map"].values()))[1]
    (d / shard).unlink()
    return f"shard {shard} listed in"


def _truncated_shard(d: Path) -> str:
    index = json.loads((d / "model.safetensors.index.json").read_text())
    shard = d / sorted(set(index["weight_map"].values()))[0]
    shard.write_bytes(shard.read_bytes()[:-1000])
    return "is truncated or corrupt"


def _wrong_shape(d: Path) -> str:
    index = json.loads((d / "model.safetensors.index.json").read_text())
    key = "model.layers.0.self_attn.k_proj.weight"
    shard = d / index["weight_map"][key]
    tensors = load_file(str(shard))
    tensors[key] = torch.zeros(16, 64)
    save_file(tensors, str(shard), metadata={"format": "pt"})
    return f"tensor '{key}' has shape [16, 64], expected [32, 64]"


def _missing_tokenizer(d: Path) -> str:
    (d / "tokenizer.json").unlink()
    return "has no tokenizer"


SHIPPED_TOKENIZER = """from transformers import PreTrainedTokenizerFast


class ShippedTokenizer(PreTrainedTokenizerFast):
    pass
"""


def _ship_tokenizer_as_code(d: Path) -> None:
    """Make d's tokenizer a class defined in a module of the checkpoint (as Kimi-K2 does)."""
    (d / "tokenization_shipped.py").write_text(SHIPPED_TOKENIZER)
    config = json.loads((d / "tokenizer_config.json").read_text())
    config["auto_map"] = {"AutoTokenizer": [None, "tokenization_shipped.ShippedTokenizer"]}
    config["tokenizer_class"] = "ShippedTokenizer"
    (d / "tokenizer_config.json").write_text(json.dumps(config))


def _tokenizer_shipped_as_code(d: Path) -> str:
    _ship_tokenizer_as_code(d)
    return "tokenization_shipped.ShippedTokenizer defined by Python code shipped"


BAD_INPUTS = [
    _unknown_architecture,
    _unsupported_field,
    _unsupported_rope,
    _quantized,
    _fp8_without_blocks,
    _missing_shard,
    _truncated_shard,
    _wrong_shape,
    _missing_tokenizer,
    _tokenizer_shipped_as_code,
]


@pytest.mark.parametrize("breaks", BAD_INPUTS, ids=[f.__name__[1:] for f in BAD_INPUTS])
def test_bad_checkpoints_are_named_errors_and_write_nothing(tmp_path, capsys, breaks):
    src, out = tmp_path / "src", tmp_path / "out"
    save_tiny("qwen3_moe", src, max_shard_size="40KB")
    message = breaks(src)
    with pytest.raises((CheckpointError, FileNotFoundError)) as err:
        load_pretrained(src)
    assert message in str(err.value)
    assert etude_main(["export", "--hf", str(out), str(src)]) == 2
    assert message in capsys.readouterr().err
    assert not out.exists() and not (tmp_path / "out.partial").exists()


def test_a_tokenizer_shipped_as_code_runs_with_trust_remote_code(tmp_path):
    src, out = tmp_path / "src", tmp_path / "out"
    save_tiny("deepseek_v3", src)
    _ship_tokenizer_as_code(src)
    _, tok = load_pretrained(src, trust_remote_code=True)
    assert type(tok).__name__ == "ShippedTokenizer"
    assert etude_main(["export", "--trust-remote-code", "--hf", str(out), str(src)]) == 0
    assert tensors_of(out).keys() == tensors_of(src).keys()
