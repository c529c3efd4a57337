"""Muon: momentum, then Newton–Schulz per matrix, head or expert; AdamW for the rest.

One optimizer for one process and for sharded training: a parameter may be a plain tensor
or a DTensor (FSDP2 / HSDP `Shard`, expert-parallel `Shard(0)`, both), and the update is the
same as unsharded Muon on the full parameters. Sharded orthogonalization is in `sharded.py`,
the elementwise passes (momentum, Nesterov, decay, update) in `elementwise.py`; this file
holds the learning-rate adjustment and the optimizer's front door.

Which parameters Muon takes, and at which granularity, is decided per parameter by the
rules of `routing.py` (group options first, then shape and name); `Muon.routing` and
`Muon.routing_report()` list the decision and its reason for every parameter, and
`strict=True` refuses a matrix-shaped parameter that would fall back to AdamW untold.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterable
from dataclasses import replace
from functools import partial
from typing import Any

import torch
import torch.distributed as dist
from torch import Tensor
from torch.distributed.tensor import DTensor
from torch.optim.adamw import adamw

from etude.optim.elementwise import (
    JustInTime,
    SideStreams,
    apply_update,
    fused,
    momentum_advance,
    momentum_direction,
    momentum_direction_only,
)
from etude.optim.newton_schulz import METHODS, QUINTIC, coefficient_schedule
from etude.optim.ns_choice import AccuracyTable, NSChoice, load_accuracy_table, ns_choice
from etude.optim.routing import Route, check_strict, report, route
from etude.optim.sharded import (
    DataPath,
    Located,
    ParamSpec,
    Plan,
    StepStats,
    build_plan,
    data_path,
    orthogonalize,
)
from etude.optim.units import Granularity, shard_boxes, unit_matrix_shape, validate

ADJUST_LR_FNS = (None, "original", "match_rms_adamw")


def adjusted_lr(lr: float, adjust_lr_fn: str | None, shape: tuple[int, int]) -> float:
    """Scale `lr` for an orthogonalized `rows x cols` unit, as `torch.optim.Muon` does."""
    rows, cols = shape
    if adjust_lr_fn is None or adjust_lr_fn == "original":
        return lr * math.sqrt(max(1.0, rows / cols))
    if adjust_lr_fn == "match_rms_adamw":
        return lr * 0.2 * math.sqrt(max(rows, cols))
    raise ValueError(f"adjust_lr_fn must be one of {ADJUST_LR_FNS}, got {adjust_lr_fn!r}")


def _granularity(group: dict) -> Granularity:
    if group.get("experts"):
        return Granularity("experts")
    if "heads" in group:
        return Granularity("heads", int(group["heads"]), int(group.get("head_dim", 0)))
    return Granularity("matrix")


class Muon(torch.optim.Optimizer):
    """Muon with per-head / per-expert Newton–Schulz, sharding-aware, AdamW for the rest.

    Arguments up to `adjust_lr_fn` mean what they mean in `torch.optim.Muon` and have its
    defaults. Beyond those:

    - ns_coefficients: a triple `(a, b, c)` used at every step, "polar_express", or
      "minimax_4" (designed for ns_steps=4 only, `newton_schulz.MINIMAX_4`).
    - ns_dtype: precision of Newton–Schulz (bfloat16 as in torch.optim.Muon, or float32).
    - ns_method: "standard", "gram", "gram_triangular" or "auto" (default: per shape, the
      one with the fewest FLOPs, as `newton_schulz.choose_method` decides; "standard" is
      torch.optim.Muon's).
    - ns_block: None (default): the Gram iteration with full products. An int opts into
      block-triangular symmetric products ("gram_triangular") with blocks of that many rows
      (`newton_schulz.SYMMETRIC_BLOCK`, 256, is the suggested size), which "auto" then
      takes wherever a unit's short side exceeds one block. Opt-in because their speed-up
      is not measured on a GPU and, with the default `job_numel`, the planner predicts
      the host cannot issue their ops fast enough (docs/muon.md).
    - ns_accuracy: None (default), or a measured accuracy table (`ns_choice.AccuracyTable`,
      or the path of `benchmarks/results/ns_accuracy.json`): each unit shape then runs 4
      steps of "minimax_4" where the table says that is within 1.10x the 5-step quintic's
      polar error in the formulation it would run and costs fewer FLOPs, 5 quintic steps
      elsewhere (`ns_choice.ns_schedule_for`, which the planner asks too); ns_coefficients
      and ns_steps must stay at their defaults. With `strict=True` a unit shape the
      table has not measured is an error at construction instead of 5 quintic steps.
    - ns_fp8: False (default). True lets the accuracy table (required) also choose, per unit
      shape, 5 quintic steps whose first steps run their products in FP8 e4m3
      (`fp8_matmul`), where it measured them within the same bar and they cost less with
      FP8 products at half the bf16 time (H100/H200 tensor cores). Opt-in: it needs
      ns_dtype bf16 and FP8 hardware (or CPU), and the GPU's own FP8 numerics are not
      measured (docs/muon.md, "FP8 steps").
    - adamw_lr / adamw_betas / adamw_eps / adamw_weight_decay: hyperparameters of the AdamW
      part (lr and weight decay default to Muon's); a group may override them with the
      same keys.
    - fused_elementwise: run momentum + Nesterov + cast, and weight decay + update, as one
      compiled kernel each (`elementwise.py`); None (default) compiles on CUDA only, False
      runs the same expressions eagerly.
    - overlap_elementwise: issue each parameter's momentum pass just before Newton–Schulz
      first reads its direction and its update as soon as its last result is back
      (`elementwise.JustInTime`), on side CUDA streams, so that both run beside the
      Newton–Schulz of other parameters, and with them the copies that need no NS of their
      own (a job's loads into its NS stacks and stores out of its results, the replicas'
      exchange, a spread group's momentum buffers' advance); None (default) turns it on for
      CUDA parameters, False runs every momentum pass, then Newton–Schulz, then every
      update. On CPU, True runs the same per-parameter order without streams; results are
      bit-identical either way.
    - spread_replicas: a parameter replicated on one mesh dimension (HSDP) has each of its
      units orthogonalized by one replica and the results all-gathered across replicas
      (`sharded.py`), instead of by every replica; False repeats the work on every copy.
    - job_numel, max_in_flight: about how many elements each rank orthogonalizes per
      all-to-all job, and how many transfers per shard group may be outstanding (1 turns
      overlap off).

    Param groups may add `"heads": H, "head_dim": 0 | 1` (split rows or columns into H
    blocks, each orthogonalized alone), `"experts": True` (a `[E, out, in]` tensor, one unit
    per expert), or `"algorithm": "muon" | "adamw"`; without them a 3-D tensor is taken as
    stacked experts (see `routing`). `strict=True` raises, naming the parameter, when a
    parameter of 2 or more dims would fall back to AdamW without being told to; `routing`
    and `routing_report()` say where each parameter went and why. After each step,
    `last_step_stats` holds this rank's telemetry (`StepStats`) and `last_step_time_s` the
    step's time.
    """

    def __init__(
        self,
        params: Iterable[Any],
        lr: float = 1e-3,
        weight_decay: float = 0.1,
        momentum: float = 0.95,
        nesterov: bool = True,
        ns_coefficients: tuple[float, float, float] | str = QUINTIC,
        eps: float = 1e-7,
        ns_steps: int = 5,
        adjust_lr_fn: str | None = None,
        *,
        ns_dtype: torch.dtype = torch.bfloat16,
        ns_method: str = "auto",
        ns_block: int | None = None,
        adamw_lr: float | None = None,
        adamw_betas: tuple[float, float] = (0.9, 0.95),
        adamw_eps: float = 1e-8,
        adamw_weight_decay: float | None = None,
        job_numel: int = 1 << 24,
        max_in_flight: int = 4,
        strict: bool = False,
        fused_elementwise: bool | None = None,
        overlap_elementwise: bool | None = None,
        spread_replicas: bool = True,
        ns_accuracy: AccuracyTable | str | None = None,
        ns_fp8: bool = False,
    ) -> None:
        if lr < 0 or momentum < 0 or weight_decay < 0:
            raise ValueError(
                f"lr, momentum and weight_decay must be >= 0, got {lr}, {momentum}, {weight_decay}"
            )
        if adjust_lr_fn not in ADJUST_LR_FNS:
            raise ValueError(f"adjust_lr_fn must be one of {ADJUST_LR_FNS}, got {adjust_lr_fn!r}")
        if ns_method not in METHODS:
            raise ValueError(f"ns_method must be one of {METHODS}, got {ns_method!r}")
        if ns_block is not None and (
            isinstance(ns_block, bool) or not isinstance(ns_block, int) or ns_block < 1
        ):
            raise ValueError(f"ns_block must be an int >= 1 or None, got {ns_block!r}")
        if ns_method == "gram_triangular" and ns_block is None:
            raise ValueError("ns_method='gram_triangular' needs an ns_block, got None")
        if not ns_dtype.is_floating_point:
            raise ValueError(f"ns_dtype must be a floating dtype, got {ns_dtype}")
        if max_in_flight < 1:
            raise ValueError(f"max_in_flight must be >= 1, got {max_in_flight}")
        if overlap_elementwise not in (None, True, False):
            raise ValueError(
                f"overlap_elementwise must be True, False or None, got {overlap_elementwise!r}"
            )
        coefficient_schedule(ns_coefficients, ns_steps)  # validates both
        if ns_fp8 and ns_accuracy is None:
            raise ValueError(
                "ns_fp8=True chooses FP8 steps per unit shape from a measured accuracy table: "
                "pass ns_accuracy (benchmarks/results/ns_accuracy.json)"
            )
        if ns_fp8 and ns_dtype != torch.bfloat16:
            raise ValueError(f"ns_fp8=True needs ns_dtype=torch.bfloat16, got {ns_dtype}")
        if isinstance(ns_accuracy, str):
            ns_accuracy = load_accuracy_table(ns_accuracy, fp8=ns_fp8)
        elif ns_accuracy is not None and ns_accuracy.fp8 != ns_fp8:
            ns_accuracy = replace(ns_accuracy, fp8=ns_fp8)
        self.ns_accuracy = ns_accuracy
        self.strict = strict
        self.ns_dtype = ns_dtype
        self.ns_method = ns_method
        self.ns_block = ns_block
        self.job_numel = job_numel
        self.max_in_flight = max_in_flight
        self.fused_elementwise = fused_elementwise
        self.overlap_elementwise = overlap_elementwise
        self.spread_replicas = spread_replicas
        adamw_defaults = {
            "lr": lr if adamw_lr is None else adamw_lr,
            "betas": adamw_betas,
            "eps": adamw_eps,
            "weight_decay": weight_decay if adamw_weight_decay is None else adamw_weight_decay,
        }
        defaults = {
            "lr": lr,
            "weight_decay": weight_decay,
            "momentum": momentum,
            "nesterov": nesterov,
            "ns_coefficients": ns_coefficients,
            "eps": eps,
            "ns_steps": ns_steps,
            "adjust_lr_fn": adjust_lr_fn,
        }
        groups, self._routes, self._labels = _split_groups(params, adamw_defaults, strict)
        super().__init__(groups, defaults)
        for group in self.param_groups:
            if group["algorithm"] == "muon":
                for name, p in self._named(group):
                    _validate_muon_param(name, p, group)
                    self.ns_choice(group, p)  # refuses bad NS settings before any step
        self._plans: dict[tuple, tuple[Plan, DataPath]] = {}
        self._process_groups: dict[tuple, Any] = {}
        self._side_streams: dict[torch.device, SideStreams] = {}
        self.last_step_stats = StepStats()
        self.last_step_time_s = 0.0

    @property
    def routing(self) -> tuple[Route, ...]:
        """Per parameter, in the order given: Muon (with its units) or AdamW, and why."""
        return self._routes

    def routing_report(self) -> str:
        """`routing` as a readable table, one line per parameter, and a Muon share."""
        return report(list(self._routes))

    def ns_choice(self, group: dict, p: Tensor) -> NSChoice:
        """The NS formulation and schedule of the units of `p` (in `group`), as its plan
        takes them (`ns_choice.ns_choice`)."""
        return ns_choice(
            unit_matrix_shape(tuple(p.shape), _granularity(group)),
            self.ns_method,
            group["ns_coefficients"],
            group["ns_steps"],
            self.ns_block,
            self.ns_accuracy,
            self.strict,
        )

    def _named(self, group: dict) -> list[tuple[str, Tensor]]:
        names = group.get("param_names") or [None] * len(group["params"])
        return [(name or self._labels[id(p)], p) for name, p in zip(names, group["params"])]

    @torch.no_grad()
    def step(self, closure=None):
        """Perform one optimization step; returns the closure's loss if one is given."""
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        t0 = time.perf_counter()
        for group in self.param_groups:
            if group["algorithm"] == "adamw":
                self._adamw_step(group)
        self.last_step_stats = self._muon_step()
        self.last_step_time_s = time.perf_counter() - t0
        return loss

    def _muon_step(self) -> StepStats:
        muon_groups = [g for g in self.param_groups if g["algorithm"] == "muon"]
        t0 = time.perf_counter()
        checks = _check_grads_agree([p for g in muon_groups for _, p in self._named(g)])
        total = StepStats(
            collectives=checks, comm_wait_s=time.perf_counter() - t0 if checks else 0.0
        )
        # One plan per Newton–Schulz setting; almost always there is only one.
        by_setting: dict[tuple, list[tuple[dict, str, Tensor]]] = {}
        for group in muon_groups:
            setting = (str(group["ns_coefficients"]), group["ns_steps"], group["eps"])
            for name, p in self._named(group):
                if p.grad is None:
                    continue
                if p.grad.dtype != p.dtype:
                    raise ValueError(
                        f"parameter {name!r}: gradient dtype {p.grad.dtype} differs from the "
                        f"parameter's {p.dtype}; cast the gradient (or use FSDP2's "
                        "MixedPrecisionPolicy, which hands the optimizer gradients in the "
                        "parameter dtype)"
                    )
                by_setting.setdefault(setting, []).append((group, name, p))
        for (_, ns_steps, eps), items in by_setting.items():
            plan, path = self._plan(items, items[0][0]["ns_coefficients"], ns_steps)
            momentum, update = [], []  # per parameter, its two passes (`elementwise.py`)
            advance = {}  # the momentum buffers that advance in a pass of their own
            split_params = set(path.advanced)
            for i, ((group, _, p), inputs, outputs) in enumerate(
                zip(items, path.inputs, path.outputs)
            ):
                state = self.state[p]
                if "momentum_buffer" not in state:
                    state["momentum_buffer"] = torch.zeros_like(p)
                grad, buf, param = _local(p.grad), _local(state["momentum_buffer"]), _local(p)
                if any(at is not None for _, at in inputs) and not grad.is_contiguous():
                    grad = grad.contiguous()  # read only: its parts are located on this layout
                # One call per part: the direction written straight where NS or the
                # all-to-all reads it, the update read where NS or the all-to-all leaves it.
                split = i in split_params  # its inputs are only what its replica runs
                momentum_pass = self._elementwise(
                    momentum_direction_only if split else momentum_direction, p
                )
                update_pass = self._elementwise(apply_update, p)
                if split:
                    advance[i] = partial(
                        self._elementwise(momentum_advance, p), grad, buf, group["momentum"]
                    )
                step = adjusted_lr(
                    group["lr"],
                    group["adjust_lr_fn"],
                    unit_matrix_shape(tuple(p.shape), _granularity(group)),
                )
                momentum.append(
                    partial(
                        _run_all,
                        [
                            partial(
                                momentum_pass,
                                _view(grad, at),
                                _view(buf, at),
                                group["momentum"],
                                group["nesterov"],
                                direction,
                            )
                            for direction, at in inputs
                        ],
                    )
                )
                update.append(
                    partial(
                        _run_all,
                        [
                            partial(
                                update_pass,
                                _view(param, at),
                                result,
                                1 - group["lr"] * group["weight_decay"],
                                step,
                            )
                            for result, at in outputs
                        ],
                    )
                )
            device = _local(items[0][2]).device
            overlap = self.overlap_elementwise
            if overlap is None:
                overlap = device.type == "cuda"
            if overlap:
                passes = JustInTime(momentum, advance, update, self._streams(device))
                stats = orthogonalize(
                    plan,
                    path,
                    eps=eps,
                    max_in_flight=self.max_in_flight,
                    prepare=passes.prepare,
                    finished=passes.finished,
                    advance=passes.advance,
                    aside=passes.aside,
                    ahead=passes.ahead,
                    behind=passes.behind,
                )
                passes.close()
            else:
                for run in [*momentum, *advance.values()]:
                    run()
                stats = orthogonalize(plan, path, eps=eps, max_in_flight=self.max_in_flight)
                for run in update:
                    run()
            _accumulate(total, stats)
        return total

    def _streams(self, device: torch.device) -> SideStreams | None:
        """The side streams of `JustInTime` on a CUDA `device`, made once; None elsewhere."""
        if device.type != "cuda":
            return None
        if device not in self._side_streams:
            self._side_streams[device] = SideStreams(
                *(torch.cuda.Stream(device) for _ in SideStreams._fields)
            )
        return self._side_streams[device]

    def _elementwise(self, fn: Callable, p: Tensor) -> Callable:
        """`fn` compiled into one kernel where `fused_elementwise` says so, else eager."""
        compiled = self.fused_elementwise
        if compiled is None:
            compiled = _local(p).is_cuda
        return fused(fn) if compiled else fn

    def _plan(
        self, items: list[tuple[dict, str, Tensor]], coefficients, ns_steps: int
    ) -> tuple[Plan, DataPath]:
        """The plan of `items` and its data path (buffers and located copies), made on first
        use and kept; it holds each unit's NS schedule."""
        key = (str(coefficients), ns_steps, tuple(id(p) for _, _, p in items))
        if key not in self._plans:
            specs = []
            for group, name, p in items:
                spec = ParamSpec(name, tuple(p.shape), _granularity(group))
                if isinstance(p, DTensor):
                    spec = ParamSpec(
                        name, tuple(p.shape), spec.granularity, p.device_mesh, tuple(p.placements)
                    )
                    _check_grad_layout(name, p)
                specs.append(spec)
            plan = build_plan(
                specs,
                ns_steps=ns_steps,
                method=self.ns_method,
                ns_block=self.ns_block,
                job_numel=self.job_numel,
                group_cache=self._process_groups,
                spread_replicas=self.spread_replicas,
                ns_coefficients=coefficients,
                ns_accuracy=self.ns_accuracy,
                ns_strict=self.strict,
            )
            for (_, name, p), box in zip(items, plan.local_boxes):
                held = tuple(int(b) for b in box[:, 1] - box[:, 0])
                if held != tuple(_local(p).shape):
                    raise ValueError(
                        f"parameter {name!r}: its local shard has shape {tuple(_local(p).shape)}"
                        f" but placements {getattr(p, 'placements', ())} imply {held}"
                    )
            device = _local(items[0][2]).device
            # A shard that is not contiguous keeps a direction buffer: the passes' views of
            # the others are located on a contiguous layout.
            strided = {k for k, (_, _, p) in enumerate(items) if not _local(p).is_contiguous()}
            path = data_path(plan, self.ns_dtype, device, buffered=strided)
            self._plans[key] = (plan, path)
        return self._plans[key]

    def _adamw_step(self, group: dict) -> None:
        params, grads, exp_avgs, exp_avg_sqs, steps = [], [], [], [], []
        for _, p in self._named(group):
            if p.grad is None:
                continue
            state = self.state[p]
            if "step" not in state:
                state["step"] = torch.tensor(0.0)
                state["exp_avg"] = torch.zeros_like(p)
                state["exp_avg_sq"] = torch.zeros_like(p)
            params.append(_local(p))
            grads.append(_local(p.grad))
            exp_avgs.append(_local(state["exp_avg"]))
            exp_avg_sqs.append(_local(state["exp_avg_sq"]))
            steps.append(state["step"])
        if not params:
            return
        beta1, beta2 = group["betas"]
        adamw(
            params,
            grads,
            exp_avgs,
            exp_avg_sqs,
            [],
            steps,
            foreach=False,
            amsgrad=False,
            beta1=beta1,
            beta2=beta2,
            lr=group["lr"],
            weight_decay=group["weight_decay"],
            eps=group["eps"],
            maximize=False,
        )


def _split_groups(
    params: Iterable[Any], adamw_defaults: dict, strict: bool
) -> tuple[list[dict], tuple[Route, ...], dict[int, str]]:
    """Route the user's params or groups (`routing.route`) into groups tagged "muon" or
    "adamw"; also return every route and each parameter's label for messages."""
    user_groups = list(params)
    if not user_groups:
        raise ValueError("Muon got an empty parameter list")
    if not isinstance(user_groups[0], dict):
        user_groups = [{"params": user_groups}]
    groups, routes, labels = [], [], {}
    for g, user in enumerate(user_groups):
        options = {k: v for k, v in user.items() if k != "params"}
        # Muon entries whose 3-D shape implied experts get a group of their own.
        split: dict[tuple[str, bool], list] = {}
        for i, entry in enumerate(user["params"]):
            name, p = entry if isinstance(entry, tuple) else (None, entry)
            r = route(name or f"group {g}, parameter {i}", name, tuple(p.shape), options)
            if strict:
                check_strict(r)
            routes.append(r)
            labels[id(p)] = r.label
            implied = r.granularity is not None and r.granularity.kind == "experts"
            key = (r.algorithm, implied and not options.get("experts"))
            split.setdefault(key, []).append(entry)
        for (algorithm, implied_experts), entries in sorted(
            split.items(), key=lambda kv: kv[0][0] != "muon"
        ):
            if algorithm == "muon":
                muon_options = {k: v for k, v in options.items() if not k.startswith("adamw_")}
                if implied_experts:
                    muon_options["experts"] = True
                groups.append({**muon_options, "params": entries, "algorithm": "muon"})
            else:
                adamw_options = {
                    k: options.get("adamw_" + k, default) for k, default in adamw_defaults.items()
                }
                groups.append({"params": entries, **adamw_options, "algorithm": "adamw"})
    return groups, tuple(routes), labels


def _validate_muon_param(name: str, p: Tensor, group: dict) -> None:
    if group.get("experts") and "heads" in group:
        raise ValueError(f"parameter {name!r}: a group cannot set both 'heads' and 'experts'")
    validate(name, tuple(p.shape), _granularity(group))
    if isinstance(p, DTensor):
        shard_boxes(name, tuple(p.shape), tuple(p.device_mesh.shape), tuple(p.placements))


def _check_grad_layout(name: str, p: DTensor) -> None:
    if not isinstance(p.grad, DTensor) or tuple(p.grad.placements) != tuple(p.placements):
        got = getattr(p.grad, "placements", "a plain tensor")
        raise ValueError(
            f"parameter {name!r}: its gradient must be a DTensor with the parameter's placements "
            f"{tuple(p.placements)}, got {got}"
        )


def _check_grads_agree(params: list[Tensor]) -> int:
    """Fail clearly, rather than hang, if ranks disagree on which sharded params have grads.

    Returns the number of collectives it ran (0 or 1)."""
    sharded = [p for p in params if isinstance(p, DTensor)]
    if not sharded or not dist.is_initialized() or dist.get_world_size() == 1:
        return 0
    has_grad = torch.tensor([p.grad is not None for p in sharded], dtype=torch.int32)
    total = has_grad.clone()
    dist.all_reduce(total)
    disagree = [i for i, t in enumerate(total.tolist()) if t not in (0, dist.get_world_size())]
    if disagree:
        raise RuntimeError(
            f"ranks disagree on which sharded parameters have gradients (indices {disagree}); "
            "every rank must call backward on the same parameters before step()"
        )
    return 1


def _local(t: Tensor) -> Tensor:
    return t.to_local() if isinstance(t, DTensor) else t


def _view(t: Tensor, at: Located | None) -> Tensor:
    """The part `at` of a local shard `t` (None: all of it)."""
    return t if at is None else at.of(t)


def _run_all(calls: list[Callable[[], None]]) -> None:
    for call in calls:
        call()


def _accumulate(total: StepStats, stats: StepStats) -> None:
    for field_name in (
        "ns_flops",
        "ns_units",
        "ns_calls",
        "bytes_sent",
        "bytes_received",
        "collectives",
    ):
        setattr(total, field_name, getattr(total, field_name) + getattr(stats, field_name))
    total.comm_wait_s += stats.comm_wait_s
    total.ns_time_s += stats.ns_time_s
    total.imbalance = max(total.imbalance, stats.imbalance)
