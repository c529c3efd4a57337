"""The coding loop's checkpoint: what a resumed run needs, written so that an interrupted
write never leaves a checkpoint that looks valid.

`<out_dir>/checkpoint/` holds
    model.safetensors, config.json, tokenizer files   the policy (Hugging Face layout)
    optimizer.pt        the optimizer's state_dict (Muon momentum, AdamW moments) and torch's RNG
    run_config.json     the CodingConfig the run was made with
    state.json          iteration, Python's RNG state, that iteration's metrics line (last)

It is built in `checkpoint.tmp/` and moved into place with renames: `checkpoint/` is either
the previous complete checkpoint or the new complete one. A crash between the two renames
leaves `checkpoint.old/` (complete) and no `checkpoint/`; `find_checkpoint` falls back to it.

Under FSDP2 (several ranks) every rank calls `save_checkpoint` and `load_checkpoint`: the
sharded weights and optimizer state are gathered into full tensors and rank 0 writes the
same files as one process would; loading reads them on every rank and shards them again,
so a checkpoint moves between one process and any number of ranks.

`metrics.jsonl` is kept consistent with the checkpoint on (re)start by `reconcile_metrics`:
lines of iterations after the checkpoint (done again after the resume) move to
`metrics.discarded.jsonl`, and a line lost to a crash right after the checkpoint is restored
from `state.json`.

A new run can start its policy from such a checkpoint's weights alone (`model.init`:
`check_warm_start`, `load_weights`); `etude sft` writes the same layout.
"""

from __future__ import annotations

import json
import os
import random
import shutil
from dataclasses import asdict
from pathlib import Path

import torch
import torch.distributed as dist
from torch.distributed.tensor import DTensor, distribute_tensor

from etude.recipes.coding.config import CodingConfig

# Settings a resumed run may change: they do not change what is trained or how.
RESUMABLE_CHANGES = {
    "iterations",
    "checkpoint_every",
    "model.device",
    "out_dir",
    "tasks.workers",
    "tasks.heldout_every",  # which iterations are evaluated, not what is trained
    "rollout.concurrency",
    "rollout.keep_workspaces",
    "reward.grade_concurrency",
    "judge.timeout_s",
}


class CheckpointError(ValueError):
    """A checkpoint that cannot be used to resume (missing, incomplete or incompatible)."""


def find_checkpoint(out_dir: Path) -> Path | None:
    """The complete checkpoint under `out_dir`, or None."""
    for name in ("checkpoint", "checkpoint.old"):
        path = Path(out_dir) / name
        if (path / "state.json").is_file():
            return path
    return None


def save_checkpoint(
    path: Path, model, tok, optimizer, cfg: CodingConfig, iteration: int, summary: dict
) -> None:
    """Write the checkpoint of `iteration` (whose metrics line is `summary`) to `path`,
    replacing the previous one only once the new one is complete. (`save_pretrained`
    refuses models loaded from GGUF, so the weights are written with safetensors directly;
    `AutoModelForCausalLM.from_pretrained` reads them.)"""
    from types import SimpleNamespace

    from safetensors.torch import save_model

    weights, optimizer_state = _full_state(model.state_dict()), optimizer.state_dict()
    optimizer_state["state"] = {k: _full_state(v) for k, v in optimizer_state["state"].items()}
    if dist.is_initialized() and dist.get_rank() != 0:
        dist.barrier()  # returns once rank 0 has written it
        return
    path = Path(path)
    staging = path.with_name(path.name + ".tmp")
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    # save_model only reads `state_dict()`: tied weights are stored once, as for the model
    gathered = SimpleNamespace(state_dict=lambda: weights)
    save_model(gathered, str(staging / "model.safetensors"), metadata={"format": "pt"})
    config = model.config.to_dict()
    config.pop("quantization_config", None)
    (staging / "config.json").write_text(json.dumps(config, indent=2) + "\n")
    tok.save_pretrained(staging)
    torch.save(
        {"optimizer": optimizer_state, "torch_rng": torch.get_rng_state()},
        staging / "optimizer.pt",
    )
    (staging / "run_config.json").write_text(json.dumps(asdict(cfg), indent=2) + "\n")
    state = {"iteration": iteration, "python_rng": random.getstate(), "metrics": summary}
    _write_synced(staging / "state.json", json.dumps(state) + "\n")  # last: marks complete
    old = path.with_name(path.name + ".old")
    if path.exists():  # else `old` may be the only complete checkpoint: keep it till now
        shutil.rmtree(old, ignore_errors=True)
        path.rename(old)
    staging.rename(path)
    shutil.rmtree(old, ignore_errors=True)
    if dist.is_initialized():
        dist.barrier()


def _full_state(state: dict) -> dict:
    """`state` with every DTensor gathered into a full CPU tensor (a collective: every rank
    calls it); tensors shared by several keys (tied weights) stay shared."""
    full: dict[int, torch.Tensor] = {}
    out = {}
    for key, value in state.items():
        if isinstance(value, DTensor):
            if id(value) not in full:
                full[id(value)] = value.full_tensor().cpu()
            value = full[id(value)]
        out[key] = value
    return out


def _shard_like(value, like):
    """A full tensor `value` sharded as the DTensor `like` (other values as they are)."""
    if isinstance(like, DTensor) and isinstance(value, torch.Tensor) and value.shape == like.shape:
        return distribute_tensor(value.to(like.device), like.device_mesh, like.placements)
    return value


def _write_synced(path: Path, text: str) -> None:
    with open(path, "w") as f:
        f.write(text)
        f.flush()
        os.fsync(f.fileno())


def read_state(path: Path) -> dict:
    """The checkpoint's state.json."""
    return json.loads((Path(path) / "state.json").read_text())


def config_differences(saved: dict, current: dict, prefix: str = "") -> list[str]:
    """`key: saved -> current` for every setting that differs (tables compared key by key)."""
    out = []
    for key in sorted(set(saved) | set(current)):
        a, b = saved.get(key), current.get(key)
        name = prefix + key
        if isinstance(a, dict) and isinstance(b, dict) and not name.endswith("weights"):
            out += config_differences(a, b, name + ".")
        elif a != b:
            out.append(f"{name}: {a!r} -> {b!r}")
    return out


def check_resumable(path: Path, cfg, resumable: set[str] = RESUMABLE_CHANGES) -> None:
    """Raise CheckpointError naming every setting of the run config `cfg` (a dataclass:
    the coding loop's or `etude sft`'s) that differs from the checkpoint's in a way that
    matters (any dotted key outside `resumable`)."""
    saved = json.loads((Path(path) / "run_config.json").read_text())
    blocking = [
        d for d in config_differences(saved, asdict(cfg)) if d.split(":")[0] not in resumable
    ]
    if blocking:
        raise CheckpointError(
            f"cannot resume from {path}: the config differs from the one it was made with "
            f"({'; '.join(blocking)}); restore those settings or use a new out_dir"
        )


def check_warm_start(path: Path) -> dict:
    """The state.json of the checkpoint at `path` to start a run's policy from (`model.init`);
    raises CheckpointError when `path` is not a complete checkpoint."""
    path = Path(path)
    if not path.is_dir():
        raise CheckpointError(f"model.init {path} is not a directory")
    missing = [f for f in ("state.json", "model.safetensors") if not (path / f).is_file()]
    if missing:
        inside = find_checkpoint(path)
        advice = f"; its checkpoint is {inside}" if inside is not None else ""
        raise CheckpointError(
            f"model.init {path} is not a checkpoint of the coding loop or `etude sft` "
            f"(no {' or '.join(missing)}){advice}"
        )
    try:
        return read_state(path)
    except (json.JSONDecodeError, UnicodeDecodeError) as err:
        raise CheckpointError(f"model.init {path}: state.json is not valid JSON: {err}") from err


def load_weights(path: Path, model) -> None:
    """Load only the weights of the checkpoint at `path` into `model` (a warm start: the
    optimizer and RNG states are not touched); raises CheckpointError when they do not fit
    the model (other names or shapes)."""
    from safetensors import SafetensorError
    from safetensors.torch import load_model

    try:
        load_model(model, str(Path(path) / "model.safetensors"))
    except (RuntimeError, SafetensorError) as err:
        detail = " ".join(str(err).split())[:400]
        raise CheckpointError(
            f"model.init {path}: its weights do not fit the policy being trained "
            f"(a checkpoint of another model?): {detail}"
        ) from err


def load_checkpoint(path: Path, model, optimizer) -> dict:
    """Load the weights, optimizer state and RNG states of the checkpoint at `path` into
    `model`, `optimizer` and this process; returns its state.json."""
    from safetensors.torch import load_file, load_model
    from torch.distributed.checkpoint.state_dict import StateDictOptions, set_model_state_dict

    path = Path(path)
    # on the CPU: `load_state_dict` moves the state to each parameter's device, so a run
    # saved from one device resumes on another
    saved = torch.load(path / "optimizer.pt", weights_only=True, map_location="cpu")
    if any(isinstance(p, DTensor) for p in model.parameters()):
        weights, current = load_file(path / "model.safetensors"), model.state_dict()
        for key, value in current.items():  # a tied weight is stored under one name
            twin = next((k for k, v in current.items() if v is value and k in weights), None)
            if key not in weights and twin is not None:
                weights[key] = weights[twin]
        set_model_state_dict(model, weights, options=StateDictOptions(full_state_dict=True))
        params = [p for group in optimizer.param_groups for p in group["params"]]
        for k, entry in saved["optimizer"]["state"].items():
            if int(k) < len(params):
                entry.update({n: _shard_like(v, params[int(k)]) for n, v in entry.items()})
    else:
        load_model(model, str(path / "model.safetensors"))
    try:
        optimizer.load_state_dict(saved["optimizer"])
    except ValueError as err:
        raise CheckpointError(f"{path}: the optimizer state does not fit: {err}") from err
    state = read_state(path)
    restore_rng(saved["torch_rng"], state["python_rng"])
    return state


def restore_rng(torch_rng: torch.Tensor, python_rng: list) -> None:
    """Set this process's torch and Python RNGs to the states a checkpoint stored
    (`python_rng` as JSON gives it back: lists where `random.getstate` has tuples)."""
    torch.set_rng_state(torch_rng)
    version, internal, gauss = python_rng
    random.setstate((version, tuple(internal), gauss))


def reconcile_metrics(out_dir: Path, iteration: int | None, last_summary: dict | None) -> None:
    """Make `out_dir/metrics.jsonl` hold exactly the lines of iterations 0..`iteration`, in
    order (0: the held-out evaluation before the first update; `iteration` None: a new run,
    no line): later lines (their iterations run again) are appended to
    `metrics.discarded.jsonl`, and the checkpoint's own line `last_summary` is restored if a
    crash lost it. The file is replaced atomically."""
    metrics = Path(out_dir) / "metrics.jsonl"
    if not metrics.is_file():
        lines = []
    else:
        lines = [line for line in metrics.read_text().splitlines() if line.strip()]
    kept, dropped = [], []
    for line in lines:
        try:
            it = json.loads(line)["iteration"]
        except (json.JSONDecodeError, KeyError, TypeError):
            dropped.append(line)  # a line cut short by a crash
            continue
        (kept if iteration is not None and it <= iteration else dropped).append(line)
    if last_summary is not None and not any(
        json.loads(line)["iteration"] == iteration for line in kept
    ):
        restored = last_summary | {"restored_from_checkpoint": True}
        kept.append(json.dumps(restored, ensure_ascii=False))
    if dropped:
        with open(Path(out_dir) / "metrics.discarded.jsonl", "a") as f:
            f.write("\n".join(dropped) + "\n")
    if lines == kept:
        return
    staging = metrics.with_name(metrics.name + ".tmp")
    _write_synced(staging, "".join(line + "\n" for line in kept))
    os.replace(staging, metrics)
