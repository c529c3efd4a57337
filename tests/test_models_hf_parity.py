"""etude's Llama, Qwen3-MoE and DeepSeek-V3 equal transformers' own classes: logits (fp32,
max |Δ| / max |logit| ≤ 1e-4) and 20-token greedy continuations, for tiny random instances
built from transformers' config classes and for SmolLM2-135M's real weights; the KV cache
(shared and per-row start positions) equals the full forward."""

from __future__ import annotations

import pytest
import torch
from hf_tiny import VOCAB, save_tiny, tiny_configs

from etude.models import KVCache, load_pretrained
from etude.models.hf_checkpoint import check_source, from_transformers, open_checkpoint

pytestmark = pytest.mark.slow
TOLERANCE = 1e-4


def relative_error(a: torch.Tensor, b: torch.Tensor) -> float:
    return ((a - b).abs().max() / b.abs().max()).item()


def greedy(model, prompt: torch.Tensor, steps: int) -> list[int]:
    """Greedy continuation with etude's KV cache: the prompt once, then one token a step."""
    cache = KVCache.empty(model.config, batch=1, max_len=prompt.shape[1] + steps)
    with torch.no_grad():
        logits = model(prompt, cache=cache, start_pos=0)
        out = []
        for i in range(steps):
            token = logits[:, -1].argmax(-1)
            out.append(int(token))
            logits = model(token[:, None], cache=cache, start_pos=prompt.shape[1] + i)
    return out


def hf_greedy(hf, prompt: torch.Tensor, steps: int) -> list[int]:
    """transformers' own greedy decoding (its KV cache), never stopping at an EOS token."""
    hf.generation_config.eos_token_id = None
    with torch.no_grad():
        out = hf.generate(
            prompt,
            attention_mask=torch.ones_like(prompt),
            max_new_tokens=steps,
            do_sample=False,
            pad_token_id=0,
        )
    return out[0, prompt.shape[1] :].tolist()


@pytest.fixture(scope="module", params=list(tiny_configs()))
def pair(request, tmp_path_factory):
    directory = tmp_path_factory.mktemp(request.param)
    hf = save_tiny(request.param, directory)
    model, _ = load_pretrained(directory)
    return request.param, hf, model.eval()


def test_logits_and_greedy_continuations_equal_transformers(pair):
    name, hf, model = pair
    tokens = torch.randint(0, VOCAB, (3, 17), generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        want = hf(tokens).logits
        got = model(tokens)
    assert relative_error(got, want) <= TOLERANCE, name
    prompt = tokens[:1, :6]
    assert greedy(model, prompt, 20) == hf_greedy(hf, prompt, 20)


def test_incremental_and_per_row_decoding_equal_full_forward(pair):
    _, _, model = pair
    tokens = torch.randint(0, VOCAB, (2, 12), generator=torch.Generator().manual_seed(2))
    with torch.no_grad():
        full = model(tokens)
        cache = KVCache.empty(model.config, batch=2, max_len=16)
        steps = [model(tokens[:, :5], cache=cache, start_pos=0)]
        steps += [model(tokens[:, p : p + 1], cache=cache, start_pos=p) for p in range(5, 12)]
        torch.testing.assert_close(torch.cat(steps, dim=1), full, rtol=0, atol=1e-5)
        # Rows continue prefixes of different lengths (4 and 7) from one call.
        cache = KVCache.empty(model.config, batch=2, max_len=16)
        model(tokens[:, :7], cache=cache, start_pos=0)
        starts = torch.tensor([4, 7])
        nxt = torch.stack([tokens[0, 4:7], tokens[1, 7:10]])
        per_row = model(nxt, cache=cache, start_pos=starts)
    torch.testing.assert_close(per_row[0], full[0, 4:7], rtol=0, atol=1e-5)
    torch.testing.assert_close(per_row[1], full[1, 7:10], rtol=0, atol=1e-5)


def test_loaded_configs_carry_each_architecture_feature(pair):
    name, hf, model = pair
    c = model.config
    if name == "llama":
        assert c.tie_embeddings and c.rope_theta == 100000.0 and c.n_kv_heads == 2
        assert not hasattr(model, "output")
    elif name == "qwen3_moe":
        assert c.qk_norm and c.dense_layer_ids == (1,) and c.norm_topk_prob
    else:
        assert c.attention == "mla" and c.router == "sigmoid" and c.rope_interleave
        bias = model.layers[-1].moe.router_bias
        torch.testing.assert_close(bias, hf.model.layers[-1].mlp.gate.e_score_correction_bias)


def test_smollm2_real_weights_equal_transformers():
    # transformers dequantizes the GGUF once (its own LlamaForCausalLM, the reference);
    # etude converts that model's tensors, which is what load_pretrained(gguf) does after
    # the same call (the benchmark times load_pretrained(gguf) itself). One GGUF load, not
    # two, keeps this test to half the time.
    from etude.serving.hf_model import load_smollm2

    hf, tok = load_smollm2()
    model = from_transformers(hf)
    assert model.config.tie_embeddings and model.config.n_kv_heads == 3
    assert model.config.rope_theta == hf.config.rope_parameters["rope_theta"]
    ids = tok("def fibonacci(n):\n    ", return_tensors="pt").input_ids
    batch = torch.cat([ids, ids.flip(1)])
    with torch.no_grad():
        want, got = hf(batch).logits, model(batch)
    assert relative_error(got, want) <= TOLERANCE
    assert greedy(model, ids, 20) == hf_greedy(hf, ids, 20)


def test_parameter_names_cover_the_checkpoint(tmp_path):
    # Every checkpoint tensor transformers writes is used by exactly the etude layout.
    save_tiny("deepseek_v3", tmp_path)
    config, _, source = open_checkpoint(tmp_path)
    layout = check_source(source, config)
    used = {p.key for ps in layout.values() for p in ps}
    assert used == set(source.names())


def test_muon_granularity_metadata(pair):
    # named_parameters equals parameter_shapes (what the optimizer and planner read), and
    # heads / experts / AdamW are marked as Muon needs them.
    name, _, model = pair
    shapes = model.config.parameter_shapes()
    assert [(n, tuple(p.shape)) for n, p in model.named_parameters()] == [
        (s.name, s.shape) for s in shapes
    ]
    muon = {s.name: s.muon for s in shapes}
    h = model.config.n_heads
    for key, opts in muon.items():
        leaf = key.rsplit(".", 2)[-2] if key.endswith(".weight") else key.rsplit(".", 1)[-1]
        if "norm" in key or leaf in ("router", "router_bias", "tok_embeddings", "output"):
            assert opts is None, key
        elif ".moe.experts." in key:
            assert opts == {"experts": True}, key
        elif leaf in ("wq", "wq_b", "wkv_b"):
            assert opts == {"heads": h, "head_dim": 0}, key
        elif leaf == "wo":
            assert opts == {"heads": h, "head_dim": 1}, key
    if name.startswith("deepseek"):
        assert muon["layers.1.moe.router_bias"] is None
        assert muon["layers.0.attention.wkv_a.weight"] == {}


def test_yarn_logits_equal_transformers_past_the_original_context(tmp_path):
    # 50 positions, the last 34 beyond original_max_position_embeddings=16; full forward
    # and cached decoding. Without YaRN the same weights give different logits, so the
    # comparison sees the scaling.
    import dataclasses
    import json

    from etude.models import MoEConfig, MoETransformer

    hf = save_tiny("deepseek_v3_yarn", tmp_path)
    model, _ = load_pretrained(tmp_path)
    yarn = model.config.yarn
    assert (yarn.factor, yarn.original_max_position_embeddings) == (4.0, 16)
    assert (yarn.mscale, yarn.mscale_all_dim) == (0.7, 1.0)
    # as a DCP checkpoint's meta.json stores the config and `etude export` reads it back
    stored = json.loads(json.dumps(dataclasses.asdict(model.config)))
    assert MoEConfig(**stored) == model.config
    tokens = torch.randint(0, VOCAB, (2, 50), generator=torch.Generator().manual_seed(3))
    with torch.no_grad():
        want, got = hf(tokens).logits, model(tokens)
        cache = KVCache.empty(model.config, batch=2, max_len=50)
        steps = [model(tokens[:, :20], cache=cache, start_pos=0)]
        steps += [model(tokens[:, p : p + 10], cache=cache, start_pos=p) for p in (20, 30, 40)]
        plain = MoETransformer(dataclasses.replace(model.config, yarn=None))
        plain.load_state_dict(model.state_dict())
        unscaled = plain(tokens)
    assert relative_error(got, want) <= TOLERANCE
    torch.testing.assert_close(torch.cat(steps, dim=1), got, rtol=0, atol=1e-5)
    assert relative_error(unscaled, want) > 100 * TOLERANCE


@pytest.mark.parametrize(
    "rope_scaling,theta",
    [
        # DeepSeek-V3 / R1 and Kimi-K2-Instruct config.json values
        (
            {
                "type": "yarn",
                "factor": 40,
                "original_max_position_embeddings": 4096,
                "beta_fast": 32,
                "beta_slow": 1,
                "mscale": 1.0,
                "mscale_all_dim": 1.0,
            },
            10000.0,
        ),
        (
            {
                "type": "yarn",
                "factor": 32.0,
                "original_max_position_embeddings": 4096,
                "beta_fast": 1.0,
                "beta_slow": 1.0,
                "mscale": 1.0,
                "mscale_all_dim": 1.0,
            },
            50000.0,
        ),
        # no mscale pair: the attention factor is 0.1 ln(factor) + 1
        ({"type": "yarn", "factor": 8.0, "original_max_position_embeddings": 512}, 10000.0),
    ],
)
def test_yarn_frequencies_and_scales_equal_transformers(rope_scaling, theta):
    from transformers import DeepseekV3Config
    from transformers.modeling_rope_utils import ROPE_INIT_FUNCTIONS
    from transformers.models.deepseek_v3.modeling_deepseek_v3 import yarn_apply_mscale

    from etude.models.hf_config import config_from_hf
    from etude.models.rope import rope_frequencies, yarn_attention_factor, yarn_softmax_scale

    hf = DeepseekV3Config(
        rope_theta=theta, rope_scaling=dict(rope_scaling), max_position_embeddings=163840
    )
    inv_freq, attention_factor = ROPE_INIT_FUNCTIONS["yarn"](hf)
    raw = {**hf.to_dict(), "architectures": ["DeepseekV3ForCausalLM"]}
    yarn = config_from_hf(raw).yarn
    assert torch.equal(rope_frequencies(64, theta, yarn), inv_freq)
    assert yarn_attention_factor(yarn) == attention_factor
    assert yarn_softmax_scale(yarn) == yarn_apply_mscale(hf.rope_parameters, 1.0)
