"""`etude train`: train the MoE transformer under a dual-mesh layout.

Launch on N ranks with torchrun, or run as one process (the layout must then be all ones)::

    python -m torch.distributed.run --standalone --nproc-per-node 8 -m etude train \\
        --config configs/tiny-8rank.toml
    etude train --config configs/tiny.toml

Continue training an open checkpoint (Llama, Qwen3-MoE, DeepSeek-V3 / Kimi-K2: a Hugging
Face directory or a GGUF file) with `--init`; each rank reads only its shards, and the
corpus is tokenized with the checkpoint's own tokenizer (`--data` for your own text or
JSONL files; documents packed, EOS-separated); `etude export --hf OUT` writes the result::

    etude train --config configs/smollm2.toml --init path/to/hf_dir --steps 200
    etude export --hf exported/ runs/smollm2/checkpoints/step_200

Each step reads the same global batch of the embedded corpus on every layout (seeded by
step), computes each rank's loss (mean cross-entropy over its tokens plus the weighted
load-balancing loss; the log's `loss` is the cross-entropy over all ranks' tokens),
reduces gradients per family as the layout derives, clips them over both meshes at once,
and steps `etude.optim.Muon` (or AdamW). Rank 0 appends one JSON object per logged step
to `<out>/log.jsonl` (loss, tokens/s, per-rank collective bytes per family, memory) and
shows progress; checkpoints go to `<out>/checkpoints/step_<N>` atomically, and `--resume`
continues from the latest one.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import resource
import time
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch import Tensor
from torch.distributed.tensor import DTensor

from etude.config import ConfigError, field_values, from_dict, read_toml
from etude.models import MoETransformer, preset
from etude.models.config import MoEConfig
from etude.models.hf_checkpoint import open_checkpoint
from etude.optim import Muon
from etude.parallel import checkpoint
from etude.parallel.analytic import is_expert
from etude.parallel.clip import clip_grad_norm_
from etude.parallel.comm import CollectiveBytes
from etude.parallel.data import global_batch, local_batch, stdlib_corpus, token_corpus
from etude.parallel.fsdp import parallelize
from etude.parallel.layout import Layout, LayoutError
from etude.parallel.mesh import build_meshes
from etude.parallel.pretrained import load_sharded
from etude.process_groups import release_process_groups


@dataclass
class TrainConfig:
    """One training job; TOML sections [model], [layout], [train] map onto these fields.

    `model` is a preset name and `model_overrides` replaces preset fields; `batch_size` is
    the global number of sequences per step, each `seq_len` tokens long. `init` (a Hugging
    Face directory or GGUF file) replaces the preset with that checkpoint's architecture and
    weights; `data` (text / JSONL files, only with `init`) replaces the stdlib corpus.
    `bias_update_rate` is DeepSeek-V3's γ: after each optimizer step every router
    score-correction bias (DeepSeek-V3 / Kimi-K2 models; the optimizer never trains it)
    moves by γ towards equal expert loads over the step's whole batch; 0 freezes it.
    `trust_remote_code` lets the tokenizer of `init` run Python code the checkpoint ships
    (Kimi-K2's tiktoken tokenizer); off, such a tokenizer is refused by name."""

    model: str = "tiny"
    model_overrides: dict[str, Any] = field(default_factory=dict)
    layout: Layout = field(default_factory=Layout)
    steps: int = 100
    batch_size: int = 8
    seq_len: int = 64
    optimizer: str = "muon"
    lr: float = 0.02
    adamw_lr: float = 3e-3
    weight_decay: float = 0.0
    grad_clip: float = 1.0
    bf16: bool = False
    seed: int = 0
    log_every: int = 1
    checkpoint_every: int = 0
    out: str = "runs/train"
    init: str = ""
    data: list[str] = field(default_factory=list)
    bias_update_rate: float = 0.001  # γ of auxiliary-loss-free balancing (DeepSeek-V3 paper)
    trust_remote_code: bool = False

    def model_config(self) -> MoEConfig:
        return dataclasses.replace(preset(self.model), **self.model_overrides)


TABLES = ("model", "layout", "train")
"""The tables of an `etude train` config file."""


def load_config(path: str | Path, layout_overrides: dict[str, int] | None = None) -> TrainConfig:
    """Read an `etude train` TOML config through `etude.config`: [model] holds `preset` and
    MoEConfig fields to override, [layout] Layout fields (`layout_overrides`, from
    `--layout`, replace them), [train] the other TrainConfig fields. An unknown key or a
    value of the wrong type is a ConfigError naming its dotted key (`train.steps`)."""
    data = read_toml(path)
    train_keys = tuple(
        f.name
        for f in dataclasses.fields(TrainConfig)
        if f.name not in ("model", "model_overrides", "layout")
    )
    try:
        unknown = sorted(set(data) - set(TABLES))
        if unknown:
            raise ConfigError(f"unknown table(s) {unknown}; known: {', '.join(TABLES)}")
        model = dict(_table(data, "model"))
        name = model.pop("preset", "tiny")
        if not isinstance(name, str):
            raise ConfigError(f"model.preset must be a preset name, got {name!r}")
        overrides = field_values(MoEConfig, model, "model")
        layout = from_dict(Layout, {**_table(data, "layout"), **(layout_overrides or {})}, "layout")
        train = field_values(TrainConfig, _table(data, "train"), "train", names=train_keys)
    except ConfigError as err:
        raise ConfigError(f"{path}: {err}") from None
    return TrainConfig(model=name, model_overrides=overrides, layout=layout, **train)


def _table(data: dict[str, Any], name: str) -> dict[str, Any]:
    table = data.get(name, {})
    if not isinstance(table, dict):
        raise ConfigError(f"[{name}] must be a table, got {table!r}")
    return table


def training_loss(
    model: MoETransformer, inputs: Tensor, targets: Tensor, positions: Tensor
) -> tuple[Tensor, Tensor, Tensor]:
    """(loss, cross-entropy, balance loss) on this rank's tokens; inputs/targets [b, t],
    positions [t]. The cross-entropy is the mean over this rank's tokens."""
    logits, aux = model(inputs, positions=positions, return_aux_loss=True)
    ce = F.cross_entropy(logits.float().flatten(0, 1), targets.flatten())
    return ce + model.config.aux_loss_weight * aux, ce, aux


def muon_param_groups(model: MoETransformer) -> list[dict]:
    """Muon's parameter groups for `model`: one per distinct Muon option set of
    `MoEConfig.parameter_shapes()` (per head, per expert, ...), and one AdamW group for the
    parameters it marks as not Muon's; parameters as (name, tensor) pairs."""
    options = {s.name: s.muon for s in model.config.parameter_shapes()}
    groups: dict[str, dict] = {}
    for name, p in model.named_parameters():
        opts = options[name]
        key = "adamw" if opts is None else json.dumps(opts, sort_keys=True)
        extra = {"algorithm": "adamw"} if opts is None else opts
        groups.setdefault(key, {"params": [], **extra})["params"].append((name, p))
    return list(groups.values())


def build_optimizer(model: MoETransformer, cfg: TrainConfig) -> torch.optim.Optimizer:
    """Muon with per-head groups for attention, per-expert groups for experts and AdamW for
    the rest (as `MoEConfig.parameter_shapes()` marks them), or AdamW for everything."""
    named = list(model.named_parameters())
    if cfg.optimizer == "adamw":
        return torch.optim.AdamW(
            [p for _, p in named], lr=cfg.adamw_lr, weight_decay=cfg.weight_decay
        )
    if cfg.optimizer != "muon":
        raise ValueError(f"optimizer must be 'muon' or 'adamw', got {cfg.optimizer!r}")
    return Muon(
        muon_param_groups(model),
        lr=cfg.lr,
        weight_decay=cfg.weight_decay,
        adamw_lr=cfg.adamw_lr,
        ns_dtype=torch.float32,
        adjust_lr_fn="match_rms_adamw",
    )


def local_state_bytes(
    model: torch.nn.Module, optimizer: torch.optim.Optimizer
) -> dict[str, dict[str, int]]:
    """This rank's bytes of parameters, gradients and optimizer state, by family."""

    def local(t: Tensor) -> Tensor:
        return t.to_local() if isinstance(t, DTensor) else t

    out = {f: {"params": 0, "grads": 0, "optimizer": 0} for f in ("dense", "expert")}
    for name, p in model.named_parameters():
        family = "expert" if is_expert(name) else "dense"
        out[family]["params"] += local(p).numel() * p.element_size()
        if p.grad is not None:
            out[family]["grads"] += local(p.grad).numel() * p.grad.element_size()
        for value in optimizer.state.get(p, {}).values():
            if isinstance(value, Tensor) and value.numel() > 1:
                out[family]["optimizer"] += local(value).numel() * value.element_size()
    return out


def _init_distributed() -> int:
    """Join the torchrun job if launched by torchrun; returns the world size."""
    world = int(os.environ.get("WORLD_SIZE", "1"))
    if world > 1 and not dist.is_initialized():
        backend = "nccl" if torch.cuda.is_available() else "gloo"
        dist.init_process_group(backend, timeout=timedelta(minutes=5))
        if backend == "gloo":
            local = int(os.environ.get("LOCAL_WORLD_SIZE", world))
            torch.set_num_threads(max(1, (os.cpu_count() or 1) // local))
    return dist.get_world_size() if dist.is_initialized() else 1


def _all_gather_object(obj: Any) -> list[Any]:
    if not dist.is_initialized():
        return [obj]
    out: list[Any] = [None] * dist.get_world_size()
    dist.all_gather_object(out, obj)
    return out


def train(cfg: TrainConfig, resume: bool = False, stop_after: int | None = None) -> list[dict]:
    """Run the job (collective on every rank); returns the logged records (rank 0's view).

    `stop_after` ends the run after that many steps of this invocation, as if it had been
    killed there (tests use it to compare a resumed run with an uninterrupted one)."""
    if cfg.data and not cfg.init:
        raise ValueError("--data needs --init: etude's own model reads the stdlib corpus as bytes")
    opened = open_checkpoint(cfg.init) if cfg.init else None
    config = opened[0] if opened else cfg.model_config()
    world = _init_distributed()
    layout = cfg.layout
    layout.check_fits(world, config, cfg.seq_len, cfg.batch_size)
    if cfg.seq_len > config.max_seq_len:
        raise LayoutError(
            f"seq_len {cfg.seq_len} exceeds the model's max_seq_len {config.max_seq_len}"
        )
    if cfg.bf16 and world == 1:
        raise ValueError(
            "bf16 mixed precision is FSDP2's policy and needs a distributed run (torchrun)"
        )
    out = Path(cfg.out)
    ckpt_dir = out / "checkpoints"
    if not resume and (out / "log.jsonl").exists():
        raise ValueError(
            f"{out} already holds a run (log.jsonl); pass --resume or choose another --out"
        )
    resume_from = checkpoint.latest(ckpt_dir) if resume else None
    if resume_from is not None:
        checkpoint.read_meta(resume_from, config)  # a wrong model fails before collectives
    rank = dist.get_rank() if world > 1 else 0

    torch.manual_seed(cfg.seed)
    meshes = build_meshes(layout) if world > 1 else None
    if opened is not None:
        # A resumed run takes its weights from the DCP checkpoint: skip reading them twice.
        model, tokenizer, hf_config = load_sharded(
            cfg.init,
            meshes,
            bf16=cfg.bf16,
            opened=opened,
            weights=resume_from is None,
            trust_remote_code=cfg.trust_remote_code,
        )
        corpus = token_corpus(tokenizer, cfg.data or None)
        if int(corpus.max()) >= config.vocab_size:
            raise ValueError(
                f"the tokenizer of {cfg.init} produces id {int(corpus.max())}, beyond the "
                f"model's vocabulary of {config.vocab_size}"
            )
        if rank == 0 and not (out / "tokenizer").exists():
            tokenizer.save_pretrained(out / "tokenizer")  # for `etude export`
    else:
        model = MoETransformer(config)
        if meshes is not None:
            parallelize(model, meshes, bf16=cfg.bf16)
        corpus, hf_config = stdlib_corpus(), None
    optimizer = build_optimizer(model, cfg)
    start = 0
    if resume_from is not None:
        start = checkpoint.load(resume_from, model, optimizer, config)["step"]
    if resume and rank == 0 and (out / "log.jsonl").exists():
        # Steps after the checkpoint (all of them without one) run again: drop their records.
        kept = [r for r in iter_log(out / "log.jsonl") if r["step"] <= start]
        (out / "log.jsonl").write_text("".join(json.dumps(r) + "\n" for r in kept))
    data_rank = meshes.data_rank() if meshes else 0
    cp_rank = meshes.cp_rank() if meshes else 0
    labels = meshes.labels if meshes else {}
    log_path = out / "log.jsonl"
    if rank == 0:
        out.mkdir(parents=True, exist_ok=True)
    records = []
    end = cfg.steps if stop_after is None else min(cfg.steps, start + stop_after)
    with _Progress(rank == 0, start, cfg.steps) as progress:
        for step in range(start, end):
            t0 = time.perf_counter()
            batch = global_batch(corpus, step, cfg.batch_size, cfg.seq_len, cfg.seed)
            inputs, targets, positions = local_batch(batch, layout, data_rank, cp_rank)
            with CollectiveBytes(labels) as comm:
                loss, ce, aux = training_loss(model, inputs, targets, positions)
                loss.backward()
            norm = clip_grad_norm_(model.parameters(), cfg.grad_clip) if cfg.grad_clip else None
            optimizer.step()
            model.update_router_biases(cfg.bias_update_rate)
            logging = (step + 1) % cfg.log_every == 0 or step + 1 == end
            state = local_state_bytes(model, optimizer) if logging else None
            optimizer.zero_grad()
            stats = torch.stack([ce.detach().float(), aux.detach().float()])
            if meshes is not None:
                dist.all_reduce(stats, group=meshes.stats)
                stats /= world
            seconds = time.perf_counter() - t0
            if logging:
                per_rank = _all_gather_object(
                    {
                        "collective_bytes": comm.by_family(),
                        "collective_bytes_by_group": {
                            f"{label}:{kind}": n for (label, kind), n in comm.bytes.items()
                        },
                        # Muon's telemetry: NS FLOPs, bytes, collectives, waiting, imbalance.
                        "optimizer": asdict(optimizer.last_step_stats)
                        if isinstance(optimizer, Muon)
                        else None,
                        "state_bytes": state,
                        "max_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                    }
                )
                record = {
                    "step": step + 1,
                    "loss": stats[0].item(),
                    "aux_loss": stats[1].item(),
                    "grad_norm": None if norm is None else norm.item(),
                    "seconds": seconds,
                    "tokens_per_s": cfg.batch_size * cfg.seq_len / seconds,
                    "ranks": per_rank,
                }
                records.append(record)
                if rank == 0:
                    with log_path.open("a") as f:
                        f.write(json.dumps(record) + "\n")
                progress.update(step + 1, record)
            if cfg.checkpoint_every and (step + 1) % cfg.checkpoint_every == 0:
                meta = {
                    "model": dataclasses.asdict(config),
                    "layout": dataclasses.asdict(layout),
                }
                if hf_config is not None:
                    meta.update(init=cfg.init, hf_config=hf_config)
                checkpoint.save(ckpt_dir, step + 1, model, optimizer, meta)
    return records


class _Progress:
    """A rich progress bar with the latest loss and throughput, on rank 0 only."""

    def __init__(self, enabled: bool, start: int, total: int):
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

        self.progress = Progress(
            TextColumn("[bold]train"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[info]}"),
            disable=not enabled,
        )
        self.task = self.progress.add_task("train", total=total, completed=start, info="")

    def __enter__(self) -> _Progress:
        self.progress.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self.progress.__exit__(*exc)

    def update(self, step: int, record: dict) -> None:
        comm = record["ranks"][0]["collective_bytes"]
        info = f"loss {record['loss']:.3f}  {record['tokens_per_s']:.0f} tok/s  " + "  ".join(
            f"{k} {v / 1e6:.2f} MB" for k, v in sorted(comm.items())
        )
        self.progress.update(self.task, completed=step, info=info)


def main(args: argparse.Namespace) -> int:
    """`etude train`: parse overrides, run, and leave the process group cleanly."""
    from etude.parallel.layout import parse_layout

    cfg = load_config(args.config, parse_layout(args.layout or ""))
    if args.steps is not None:
        cfg.steps = args.steps
    if args.out is not None:
        cfg.out = args.out
    if args.optimizer is not None:
        cfg.optimizer = args.optimizer
    if getattr(args, "init", None):
        cfg.init = args.init
    if getattr(args, "data", None):
        cfg.data = list(args.data)
    if getattr(args, "trust_remote_code", False):
        cfg.trust_remote_code = True
    try:
        train(cfg, resume=args.resume)
    finally:
        release_process_groups()  # the model is gone with train()'s frame
    return 0


def iter_log(path: str | Path) -> Iterable[dict]:
    """The records of a log.jsonl."""
    with Path(path).open() as f:
        for line in f:
            yield json.loads(line)
