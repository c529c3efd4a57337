"""Open checkpoints on gloo ranks: sharded loading from meta-device modules reads only each
rank's shards (peak RSS measured, well below one full copy), and loaded Qwen3-MoE and
DeepSeek-V3 instances under dense R_d=2 S_d=2 CP=2 | experts S_e=2 EP=4 give the
single-process loss, gradients (fp32, ≤ 1e-5) and sharded-Muon step."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
import torch
import torch.distributed as dist
from hf_tiny import VOCAB, save_tiny, tiny_tokenizer, write_jsonl

from etude.models import MoETransformer, load_pretrained, save_pretrained
from etude.models.config import MoEConfig
from etude.models.hf_checkpoint import SafetensorsSource, check_source, read_box
from etude.parallel.data import local_batch
from etude.parallel.layout import Layout
from etude.parallel.mesh import build_meshes
from etude.parallel.pretrained import load_sharded
from etude.parallel.train import TrainConfig, build_optimizer, train, training_loss
from etude.spawn import run_on_ranks

pytestmark = [pytest.mark.dist, pytest.mark.slow]

BATCH, SEQ = 4, 16
PARITY_LAYOUT = dict(dense_replicate=2, dense_shard=2, cp=2, expert_shard=2, ep=4)
LOAD_LAYOUT = dict(dense_shard=2, cp=2, ep=4)
RESUME_LAYOUT = dict(dense_shard=4, cp=2, ep=8)
TRAIN = TrainConfig(lr=0.02, adamw_lr=3e-3, batch_size=BATCH, seq_len=SEQ)
# ~110 MB of fp32 weights, mostly experts: big enough that a full copy stands out in RSS.
BIG = MoEConfig(
    vocab_size=4096,
    dim=256,
    n_layers=4,
    n_heads=4,
    n_kv_heads=2,
    head_dim=64,
    n_experts=16,
    top_k=2,
    expert_ffn_dim=512,
    n_shared_experts=0,
    n_dense_layers=0,
    dense_ffn_dim=512,
    qk_norm=True,
)


def _batch() -> torch.Tensor:
    return torch.randint(0, VOCAB, (BATCH, SEQ + 1), generator=torch.Generator().manual_seed(3))


def _peak_rss_reset() -> None:
    # Writing 5 to clear_refs resets VmHWM (the peak RSS) to the current RSS (Linux).
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")


def _status_kb(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise KeyError(field)


def _rank_load(directory: str, warm_up: str) -> dict:
    meshes = build_meshes(Layout(**LOAD_LAYOUT))
    # The first load pays fixed costs whatever the model size (transformers' import, ~100
    # MB; FSDP2/DTensor state, ~35 MB): a tiny checkpoint's load pays them first, then the
    # measurement is of what the big checkpoint's weights cost.
    load_sharded(warm_up, meshes)
    dist.barrier()
    _peak_rss_reset()
    before = _status_kb("VmRSS")
    model, _, _ = load_sharded(directory, meshes)
    peak = _status_kb("VmHWM")
    local = sum(p.to_local().numel() * 4 for p in model.parameters())
    # Check every shard against the checkpoint (after the measurement; rank 0 only reads).
    source = SafetensorsSource(directory)
    layout = check_source(source, model.config)
    worst = 0.0
    for name, p in model.named_parameters():
        full = p.full_tensor()
        if dist.get_rank() == 0:
            want = read_box(source, layout[name], tuple((0, n) for n in full.shape), full.dtype)
            worst = max(worst, (full - want).abs().max().item())
    return {"peak_increase": (peak - before) * 1024, "local_bytes": local, "error": worst}


def _grads(model) -> dict[str, torch.Tensor]:
    out = {}
    for n, p in model.named_parameters():
        if p.grad is not None:
            g = p.grad.full_tensor() if hasattr(p.grad, "full_tensor") else p.grad
            out[n] = g
    return out


def _params(model) -> dict[str, torch.Tensor]:
    return {
        n: (p.full_tensor() if hasattr(p, "full_tensor") else p).detach()
        for n, p in model.named_parameters()
    }


def _train_step(directory: str, layout: Layout | None) -> dict:
    meshes = build_meshes(layout) if layout else None
    model, _, _ = load_sharded(directory, meshes)
    batch = _batch()
    if layout is None:
        inputs, targets, positions = batch[:, :-1], batch[:, 1:], torch.arange(SEQ)
    else:
        inputs, targets, positions = local_batch(
            batch, layout, meshes.data_rank(), meshes.cp_rank()
        )
    loss, _, _ = training_loss(model, inputs, targets, positions)
    loss.backward()
    grads = _grads(model)
    optimizer = build_optimizer(model, TRAIN)
    optimizer.step()
    loss = loss.detach().clone()
    if layout is not None:
        dist.all_reduce(loss)
        loss /= dist.get_world_size()
    return {"loss": loss.item(), "grads": grads, "params": _params(model)}


def _init_run(directory: str, data: str, out: str, steps: int, layout: dict) -> TrainConfig:
    return dataclasses.replace(
        TRAIN,
        init=directory,
        data=[data],
        steps=steps,
        checkpoint_every=2,
        out=out,
        layout=Layout(**layout),
    )


def _rank_parity(directories: dict[str, str], data: str, run: str) -> dict:
    layout = Layout(**PARITY_LAYOUT)
    out = {name: _train_step(d, layout) for name, d in directories.items()}
    # `etude train --init` on this layout for 2 steps (checkpoint), then resumed for a
    # third step under another layout (dense S_d=4 CP=2 | experts EP=8): DCP reshards.
    deepseek = directories["deepseek_v3"]
    first = train(_init_run(deepseek, data, run, 2, PARITY_LAYOUT))
    resumed = train(_init_run(deepseek, data, run, 3, RESUME_LAYOUT), resume=True)
    out["train"] = [r["loss"] for r in first + resumed]
    return out if dist.get_rank() == 0 else {}


@pytest.fixture(scope="module")
def tiny_dirs(tmp_path_factory):
    dirs = {}
    for name in ("qwen3_moe", "deepseek_v3"):
        d = tmp_path_factory.mktemp(name)
        save_tiny(name, d, max_shard_size="40KB")
        dirs[name] = str(d)
    return dirs


def test_sharded_loading_reads_only_each_ranks_shards(tmp_path):
    torch.manual_seed(0)
    model = MoETransformer(BIG)
    full_bytes = sum(p.numel() * 4 for p in model.parameters())
    save_pretrained(model, tmp_path / "big", tiny_tokenizer(), max_shard_bytes=32 << 20)
    small = dataclasses.replace(BIG, n_layers=1, n_experts=4, expert_ffn_dim=64, vocab_size=256)
    save_pretrained(MoETransformer(small), tmp_path / "small", tiny_tokenizer())
    del model
    results = run_on_ranks(
        _rank_load, 4, str(tmp_path / "big"), str(tmp_path / "small"), timeout_s=240
    )
    assert results[0]["error"] == 0.0
    for r in results:
        assert r["local_bytes"] <= full_bytes / 4 + 64 * 1024
        # The load's peak resident growth is the rank's quarter plus working room (seen:
        # ~1.05x its shards), far from one full copy; and the measurement does see memory.
        assert 0.9 * r["local_bytes"] <= r["peak_increase"] < 0.4 * full_bytes, (r, full_bytes)


@pytest.fixture(scope="module")
def world8(tiny_dirs, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("run")
    data = str(write_jsonl(tmp / "docs.jsonl"))
    results = run_on_ranks(_rank_parity, 8, tiny_dirs, data, str(tmp / "run8"), timeout_s=300)
    return results[0], data, tmp


def test_train_init_on_two_layouts_with_resume_equals_one_process(world8, tiny_dirs):
    results, data, tmp = world8
    one = train(_init_run(tiny_dirs["deepseek_v3"], data, str(tmp / "run1"), 3, {}))
    assert results["train"] == pytest.approx([r["loss"] for r in one], abs=1e-5)
    # the 8-rank DCP checkpoint exports on one process
    from transformers import AutoModelForCausalLM

    from etude.parallel.export import export, from_training_checkpoint

    step = tmp / "run8" / "checkpoints" / "step_2"
    export(step, tmp / "exported")
    hf = AutoModelForCausalLM.from_pretrained(tmp / "exported").eval()
    trained, _ = from_training_checkpoint(step)
    tokens = _batch()
    with torch.no_grad():
        want = hf(tokens).logits
        err = ((trained(tokens) - want).abs().max() / want.abs().max()).item()
    assert err <= 1e-4


def test_loaded_moe_gradients_and_muon_step_equal_one_process(world8, tiny_dirs):
    results = world8[0]
    for name, d in tiny_dirs.items():
        want = _reference(d)
        got = results[name]
        assert got["loss"] == pytest.approx(want["loss"], abs=1e-6), name
        assert set(got["grads"]) == set(want["grads"]), name
        for key, g in want["grads"].items():
            err = (got["grads"][key] - g).abs().max().item()
            assert err <= 1e-5, f"{name}: gradient of {key} off by {err:.2e}"
        for key, p in want["params"].items():
            err = (got["params"][key] - p).abs().max().item()
            assert err <= 1e-5, f"{name}: {key} after one Muon step off by {err:.2e}"


def _reference(directory: str) -> dict:
    # One process through the public single-process path (load_pretrained, no meshes).
    model, _ = load_pretrained(directory)
    batch = _batch()
    loss, _, _ = training_loss(model, batch[:, :-1], batch[:, 1:], torch.arange(SEQ))
    loss.backward()
    grads = _grads(model)
    build_optimizer(model, dataclasses.replace(TRAIN)).step()
    return {"loss": loss.item(), "grads": grads, "params": _params(model)}
