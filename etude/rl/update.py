"""One RL update for every policy: L = L_RL + ref_kl·KL_ref + Σ_h λ_category(h)·KL_h.

Each hint category has a feedback mode (`etude.rl.feedback_modes`): "kl" adds λ·KL_h as
above, "gated" adds λ·(σ-gated KL_h), "advantage_weight" adds nothing and instead weighs the
advantages of the hinted turn's tokens inside L_RL. The teacher is the policy itself reading
the hint (its cached prefix reused), or a separate `teacher` policy with its own weights
(`etude.rl.teacher_weights`: a frozen snapshot or an EMA), which runs its own forward.

Thin orchestration over the pure pieces: tokenize (`trajectory`: the sampled ids of policy
turns, the chat template for the rest), advantages (`advantages`, `effort`), the clipped
policy-gradient term with ratios against the sampler's log-probs and truncated importance
sampling, the reference term (`loss`), the cached teacher pass (`teacher`, through the
`policy` protocol) and the estimators (`distill`).

The batch is split into `minibatches` (one optimizer step each), run for `passes`; each
minibatch runs in micro-batches of `micro_batch` trajectories whose gradients accumulate.
Every loss term is a sum over tokens or trajectories divided by its minibatch's normalizer,
so micro-batching (and sharding over data-parallel ranks) does not change the update.

Bad input: a trajectory without token ids (the old format) is refused, naming the fix,
unless `retokenize=True` (then its re-tokenized text trains, with a warning). A trajectory
that does not fit the template, is longer than `max_tokens` or has no policy tokens, and a
hint that cannot apply, are dropped and reported in the returned metrics (`errors`); the
rest trains.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field, replace

import torch
import torch.distributed as dist
from torch import Tensor

from etude.rl.advantages import group_advantages, weigh_negatives
from etude.rl.batch import pad_batch
from etude.rl.distill import estimate, teacher_advantage, teacher_path_length
from etude.rl.effort import shape_lengths
from etude.rl.feedback.hints import Hint, HintError, validate_hint
from etude.rl.feedback_modes import (
    DEFAULT_MODE,
    FeedbackMode,
    advantage_weights,
    check_modes,
    gated_distillation,
    sampled_gap,
)
from etude.rl.loss import (
    IS_MODES,
    HintKL,
    distillation_loss,
    policy_gradient_loss,
    ratio_statistics,
    reference_kl,
    token_logprobs,
)
from etude.rl.policy import Policy
from etude.rl.teacher import TeacherQuery, build_query
from etude.rl.trajectory import (
    DEMONSTRATION,
    ChatTokenizer,
    TemplateError,
    TokenizedTrajectory,
    Trajectory,
    TrajectoryFormatError,
    tokenize,
)

AGGREGATIONS = ("token", "sequence")  # how the policy-gradient term sums its tokens


@dataclass
class StepSettings:
    """Knobs of one update. `weights`: λ per hint category (missing = 0); `modes`: the
    feedback mode per category (`etude.rl.feedback_modes`; missing:
    `feedback_modes.DEFAULT_MODE`, "advantage_weight"); a category gets a teacher pass when
    its λ is non-zero or its mode is set to "advantage_weight" (which does not use λ), so a
    category with a λ and no mode is weighted by advantage and its λ only switches it on;
    `weight_bound`: c of the advantage weights' clamp [1/c, c];
    `gate_temperature`: τ of the "gated" mode's σ(gap/τ);
    `scope`: "turn" (targeted: the hint before the turn that went wrong, on that turn),
    "next_turn" (the hint after the failed call's replies, on the turn after it, where the
    student recovers or not) or "trajectory" (the hint before the first turn, KL on every
    trainable token); `gate`: drop a hint unless the teacher finds the sampled turn less
    likely than the student does by more than `gate_margin` nats/token; `truncate`: distill a
    hinted turn only up to its first token that is not the teacher's arg-max
    (`distill.teacher_path_length`); `lambda_schedule`: "constant", or "linear" (every λ
    falls linearly toward 0 over the run's RL steps; applied by the trainer through
    `scheduled`). `clip_low`/`clip_high`: the ratio's clip range; `is_cap`/`is_mode`:
    truncated importance sampling (`loss.policy_gradient_loss`; None: off);
    `aggregation`: how the policy-gradient term sums its tokens, "token" (every trainable token
    of the minibatch weighs the same, DAPO / Dr. GRPO: a long trajectory counts more) or
    "sequence" (each trajectory's tokens averaged first, then the trajectories, as GRPO:
    a long failed trajectory and a short successful one carry their advantages with the
    same total weight); `negative_weight`: the factor on negative advantages
    (`advantages.weigh_negatives`: 1 plain GRPO, 0 only the rollouts above their group's
    mean are learnt from);
    `minibatches`/`passes`: optimizer steps per batch; `micro_batch`: trajectories per
    forward (0: a whole minibatch); `max_tokens`: longer trajectories are dropped (0: no
    limit)."""

    weights: dict[str, float] = field(default_factory=dict)
    modes: dict[str, FeedbackMode] = field(default_factory=dict)
    weight_bound: float = 2.0
    gate_temperature: float = 1.0
    estimator: str = "reverse_kl"
    teacher_temperature: float = 1.0
    jsd_beta: float = 0.5
    topk: int = 16
    scope: str = "turn"
    hint_role: str = "user"
    gate: bool = False
    gate_margin: float = 0.0
    truncate: bool = False
    lambda_schedule: str = "constant"
    clip_low: float = 0.2
    clip_high: float = 0.28
    is_cap: float | None = None
    is_mode: str = "truncate"
    normalize_std: bool = False
    aggregation: str = "token"
    negative_weight: float = 1.0
    ref_kl: float = 0.0
    effort_alpha: float = 0.0
    minibatches: int = 1
    passes: int = 1
    micro_batch: int = 0
    max_tokens: int = 0

    def __post_init__(self):
        if self.aggregation not in AGGREGATIONS:
            raise ValueError(f"aggregation must be one of {AGGREGATIONS}, got {self.aggregation!r}")
        if self.is_mode not in IS_MODES:
            raise ValueError(f"is_mode must be one of {IS_MODES}, got {self.is_mode!r}")
        for name in ("minibatches", "passes"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be at least 1, got {getattr(self, name)}")
        if self.negative_weight < 0:
            raise ValueError(f"negative_weight must be >= 0, got {self.negative_weight}")
        if self.micro_batch < 0 or self.max_tokens < 0:
            raise ValueError("micro_batch and max_tokens must be 0 (off) or positive")
        check_modes(self.modes)
        if self.weight_bound < 1:
            raise ValueError(f"weight_bound must be >= 1, got {self.weight_bound}")
        if self.gate_temperature <= 0:
            raise ValueError(f"gate_temperature must be > 0, got {self.gate_temperature}")

    def mode(self, category: str) -> str:
        """The feedback mode of hint `category` (`DEFAULT_MODE` when none is set)."""
        return self.modes.get(category, DEFAULT_MODE)

    def uses(self, category: str) -> bool:
        """Whether hints of `category` reach the update (and so need a teacher pass): a
        non-zero λ, or the mode "advantage_weight" set for it. A category in neither stays
        out whatever the default mode is."""
        return bool(self.weights.get(category)) or self.modes.get(category) == "advantage_weight"

    def uses_any(self) -> bool:
        return any(map(self.uses, {*self.weights, *self.modes}))


def scheduled(settings: StepSettings, step: int, steps: int) -> StepSettings:
    """The settings for RL step `step` of `steps` (0-based): under the "linear" schedule
    every λ is scaled by 1 − step/steps ("advantage_weight" categories, which use no λ, are
    not scheduled); "constant" leaves them as they are."""
    if settings.lambda_schedule == "constant":
        return settings
    if settings.lambda_schedule != "linear":
        raise ValueError(
            f"lambda_schedule must be 'constant' or 'linear', got {settings.lambda_schedule!r}"
        )
    factor = 1 - step / steps
    return replace(settings, weights={k: v * factor for k, v in settings.weights.items()})


def has_signal(
    trajs: list[Trajectory], groups: list[int], hints: list[list[Hint]], settings: StepSettings
) -> bool:
    """Whether an update on this batch has a signal to learn from: some group's rewards
    differ (so some advantage is non-zero, "advantage_weight" credit included), or a hint
    reaches a mode with a distillation term ("kl", "gated" with a non-zero λ). With effort
    shaping, which can separate equal rewards by length, every batch counts. A reference KL
    (`ref_kl`) alone does not: it restrains a step that learns, and Muon, which normalizes
    its step and keeps momentum, turns its small gradient into a full-size step mostly
    along earlier updates' momentum; measured on a coding-loop batch, such a step moved
    the weights away from the reference and raised the KL it was meant to lower
    (benchmarks/kl_only_step.py)."""
    if settings.effort_alpha:
        return True
    by_group: dict[int, set[float]] = {}
    for t, g in zip(trajs, groups):
        by_group.setdefault(g, set()).add(float(t.reward or 0.0))
    if any(len(r) > 1 for r in by_group.values()):
        return True
    return any(
        settings.uses(h.category) and settings.mode(h.category) != "advantage_weight"
        for hs in hints
        for h in hs
    )


def hint_queries(
    trajectory: Trajectory,
    tt: TokenizedTrajectory,
    tok: ChatTokenizer,
    hints: list[Hint],
    settings: StepSettings,
    errors: list[str],
    index: int,
) -> list[TeacherQuery]:
    """Teacher queries for the hints of one trajectory whose category the update uses.

    A hint that does not fit (not a policy turn, a template that will not render it) is
    dropped with a message in `errors`, so the rest of the batch still trains."""
    queries = []
    for h in hints:
        if not settings.uses(h.category):
            continue
        try:
            validate_hint(trajectory, h)
            queries.append(
                build_query(
                    trajectory.messages,
                    tt,
                    tok,
                    h,
                    scope=settings.scope,
                    hint_role=settings.hint_role,
                )
            )
        except (HintError, TemplateError, ValueError) as err:
            errors.append(f"trajectory {index}: hint dropped: {err}")
    return queries


@dataclass
class _Item:
    """One trajectory of the batch, tokenized, with its advantage and teacher queries."""

    index: int
    tokenized: TokenizedTrajectory
    advantage: float
    queries: list[TeacherQuery]


def _prepare(
    tok: ChatTokenizer,
    trajectories: list[Trajectory],
    settings: StepSettings,
    retokenize: bool,
    errors: list[str],
) -> list[tuple[int, TokenizedTrajectory]]:
    """(index, tokenized) of the trajectories that train; refuses the old format unless
    `retokenize` (see module doc), drops the others with a message in `errors`."""
    for i, traj in enumerate(trajectories):
        if traj.source == DEMONSTRATION:
            raise TrajectoryFormatError(
                f"trajectory {i} is a demonstration (no turn of it was sampled): "
                "demonstrations train with `etude sft`, never in the RL update"
            )
        unsampled = traj.unsampled_turns()
        if unsampled and not retokenize:
            raise TrajectoryFormatError(
                f"trajectory {i}: assistant message {unsampled[0]} has no sampled token ids "
                "(the old trajectory format); record rollouts with an etude.serving backend, "
                "which stores each turn's ids and log-probs, or pass retokenize=True to train "
                "on the re-tokenized text"
            )
        if unsampled:
            warnings.warn(
                f"trajectory {i}: {len(unsampled)} assistant turn(s) without token ids are "
                "re-tokenized; their tokens may differ from what the policy sampled and they "
                "have no sampler log-probs (ratio 1)",
                stacklevel=3,
            )
    kept = []
    for i, traj in enumerate(trajectories):
        try:
            tt = tokenize(traj.messages, tok)
        except TemplateError as err:
            errors.append(f"trajectory {i} dropped: {err}")
            continue
        if settings.max_tokens and len(tt.tokens) > settings.max_tokens:
            errors.append(
                f"trajectory {i} dropped: {len(tt.tokens)} tokens > {settings.max_tokens}"
            )
            continue
        if not tt.trainable.any():
            errors.append(f"trajectory {i} dropped: no policy tokens")
            continue
        kept.append((i, tt))
    return kept


def _chunks(items: list, n: int) -> list[list]:
    """`items` in n contiguous chunks of near-equal size (empty chunks left out)."""
    size, extra = divmod(len(items), n)
    out, start = [], 0
    for k in range(n):
        end = start + size + (k < extra)
        if end > start:
            out.append(items[start:end])
        start = end
    return out


def _micro_step(
    policy: Policy,
    items: list[_Item],
    settings: StepSettings,
    reference: Policy | None,
    n_tokens: int,
    n_trajectories: int,
    scale: float,
    totals: dict,
    lockstep: bool,
    teacher: Policy | None = None,
) -> None:
    """Forward, loss and backward of one micro-batch; adds its sums to `totals`. `lockstep`
    (data parallel with hints in use): run a teacher forward even without hints, so every
    rank runs the same FSDP2 collectives. `teacher`: a policy with its own weights (None: the
    live policy on its own cached prefix)."""
    tokens, mask = pad_batch(
        [it.tokenized.tokens for it in items], [it.tokenized.trainable for it in items]
    )
    sampled, _ = pad_batch(
        [it.tokenized.sampled.long() for it in items], [it.tokenized.trainable for it in items]
    )
    sampler = torch.zeros(tokens.shape)
    for row, it in enumerate(items):
        sampler[row, : len(it.tokenized.tokens)] = it.tokenized.sampler_logprobs
    sampled = sampled.bool() & mask
    advantages = torch.tensor([it.advantage for it in items])
    # the batch is built on the CPU and moves once to where the policy runs
    device = next(policy.module.parameters()).device
    tokens, mask, sampled, sampler, advantages = (
        t.to(device) for t in (tokens, mask, sampled, sampler, advantages)
    )
    logits, cache = policy.forward_with_cache(tokens)
    logprobs = token_logprobs(logits, tokens)
    # tokens without a sampler log-prob (re-tokenized turns) get ratio 1
    old = torch.where(sampled, sampler.to(logprobs.dtype), logprobs.detach())
    fmask = mask.to(logprobs.dtype)

    # the teacher first: "advantage_weight" hints change the RL term's per-token advantages
    rows = [row for row, it in enumerate(items) for _ in it.queries]
    queries = [q for it in items for q in it.queries]
    teacher_out = _teacher_logits(policy, teacher, tokens, cache, rows, queries, lockstep)
    credit = torch.ones_like(fmask)  # per-token factor on the advantage
    terms = []
    for row, q, t_logits in zip(rows, queries, teacher_out):
        sel = q.distill_mask.nonzero().squeeze(-1).to(device)
        if not len(sel):
            continue
        student = logits[row, q.insert_at - 1 + sel]
        targets = q.continuation.to(device)[sel]
        t_sel = t_logits[sel]
        gap = teacher_advantage(student, t_sel, targets).item()
        totals["gaps"].append(gap)
        if settings.gate and gap <= settings.gate_margin:
            continue
        keep = teacher_path_length(t_sel, targets) if settings.truncate else len(sel)
        category, mode = q.hint.category, settings.mode(q.hint.category)
        if mode == "advantage_weight":
            g = sampled_gap(student[:keep], t_sel[:keep], targets[:keep])
            w = advantage_weights(g, items[row].advantage, settings.weight_bound)
            credit[row, q.insert_at + sel[:keep]] *= w.to(credit.dtype)
            totals["credit"].setdefault(category, []).append(w)
        else:
            kw = dict(
                teacher_temperature=settings.teacher_temperature,
                beta=settings.jsd_beta,
                k=settings.topk,
            )
            s, t, x = student[:keep], t_sel[:keep], targets[:keep]
            if mode == "gated":
                per_token = gated_distillation(
                    settings.estimator, s, t, x, gate_temperature=settings.gate_temperature, **kw
                )
            else:
                per_token = estimate(settings.estimator, s, t, x, **kw)
            terms.append(HintKL(category, per_token))
            totals["kl"].setdefault(category, []).append(per_token.detach())
        totals["distilled"] += keep
        totals["hints_used"] += 1

    token_advantages = advantages[:, None].to(credit.dtype) * credit
    if settings.aggregation == "sequence":  # Σ_i mean_t(...) / n_trajectories, written as a
        # per-row factor on the advantage so that the term keeps its normalizer n_tokens
        lengths = torch.tensor([float(it.tokenized.trainable.sum()) for it in items], device=device)
        token_advantages = token_advantages * (n_tokens / (n_trajectories * lengths))[:, None]
    rl = policy_gradient_loss(
        logprobs,
        old,
        token_advantages,
        fmask,
        settings.clip_low,
        settings.clip_high,
        is_cap=settings.is_cap,
        is_mode=settings.is_mode,
        normalizer=n_tokens,
    )
    loss = rl
    totals["rl_loss"] += rl.item()
    totals["ratios"].add(
        ratio_statistics(
            logprobs,
            old,
            advantages,
            sampled,
            settings.clip_low,
            settings.clip_high,
            settings.is_cap,
        ),
        first_pass=totals["first_pass"],
    )
    totals["trainable"] += float(mask.sum())
    if settings.ref_kl and reference is not None:
        with torch.no_grad():
            ref_lp = token_logprobs(reference.logits(tokens), tokens)
        kl_ref = reference_kl(logprobs, ref_lp, fmask, normalizer=n_tokens)
        loss = loss + settings.ref_kl * kl_ref
        totals["ref_kl"] += kl_ref.item()
    if terms:
        d_loss = distillation_loss(terms, settings.weights, n_trajectories)
        loss = loss + d_loss
        totals["distill_loss"] += d_loss.item()
    (loss * scale).backward()


def _teacher_logits(
    policy: Policy,
    teacher: Policy | None,
    tokens: Tensor,
    cache,
    rows: list[int],
    queries: list[TeacherQuery],
    lockstep: bool,
) -> list[Tensor]:
    """Teacher logits [L_q, V] per query, in one forward (no grad). The live teacher reuses
    the student's cache; a separate teacher fills its own from the same tokens first."""
    with torch.no_grad():
        model = policy if teacher is None else teacher
        if not queries:
            if lockstep:  # the other ranks' teacher pass
                model.logits(torch.zeros(1, 1, dtype=torch.long, device=tokens.device))
            return []
        if teacher is not None:
            _, cache = teacher.forward_with_cache(tokens)
        return model.teacher_logits(cache, rows, queries)


def rl_update(
    policy: Policy,
    optimizer: torch.optim.Optimizer,
    tok: ChatTokenizer,
    trajectories: list[Trajectory],
    groups: list[int],
    hints: list[list[Hint]],
    settings: StepSettings,
    reference: Policy | None = None,
    *,
    retokenize: bool = False,
    dp_rank: int = 0,
    dp_size: int = 1,
    teacher: Policy | None = None,
) -> dict:
    """Update `policy` on `trajectories` (rewards set; `groups[i]` the task group of
    trajectory i, `hints[i]` its hints): `minibatches × passes` optimizer steps. `teacher`:
    the hinted teacher's weights when they are not the live policy's
    (`etude.rl.teacher_weights`); it must take the same tokens.

    Data parallel: every rank passes the whole batch; rank `dp_rank` of `dp_size` trains on
    every `dp_size`-th trajectory of each minibatch, with the minibatch's global
    normalizers, and the loss is scaled by `dp_size` because FSDP2 averages gradients over
    ranks. Returns metrics (sums over ranks): rl_loss, ref_kl, distill_loss (of the last
    minibatch step), kl/<category> (mean per token of the "kl" or gated "gated" term),
    credit/<category> (mean advantage weight of "advantage_weight" hints),
    ratio_mean/min/max, clip_frac, is_capped_frac (over every forward),
    logprob_gap_mean/max (|log π_trainer − log π_sampler| on sampled tokens, first pass:
    the number to watch for a sampler/trainer mismatch), frac_distilled, teacher_gap,
    hints_used, tokens, trajectories, errors."""
    errors: list[str] = []
    kept = _prepare(tok, trajectories, settings, retokenize, errors)
    if not kept:
        return {"errors": errors, "skipped": True, "trajectories": 0}
    rewards = torch.tensor([float(trajectories[i].reward or 0.0) for i, _ in kept])
    group_ids = torch.tensor([groups[i] for i, _ in kept])
    if settings.effort_alpha:
        lengths = torch.tensor([int(tt.trainable.sum()) for _, tt in kept])
        rewards = shape_lengths(rewards, lengths, group_ids, rewards > 0, settings.effort_alpha)
    advantages = weigh_negatives(
        group_advantages(rewards, group_ids, settings.normalize_std), settings.negative_weight
    )
    items = []
    for (i, tt), adv in zip(kept, advantages.tolist()):
        queries = hint_queries(trajectories[i], tt, tok, hints[i], settings, errors, i)
        items.append(_Item(i, tt, adv, queries))

    metrics: dict = {}
    ratios = RatioLog()
    lockstep = dp_size > 1 and settings.uses_any()
    for p in range(settings.passes):
        for minibatch in _chunks(items, settings.minibatches):
            totals = {
                "rl_loss": 0.0,
                "ref_kl": 0.0,
                "distill_loss": 0.0,
                "ratios": ratios,
                "first_pass": p == 0,
                "trainable": 0.0,
                "gaps": [],
                "kl": {},
                "credit": {},
                "distilled": 0,
                "hints_used": 0,
            }
            n_tokens = sum(int(it.tokenized.trainable.sum()) for it in minibatch)
            mine = minibatch[dp_rank::dp_size]
            per_rank = -(-len(minibatch) // dp_size)  # the most any rank trains on
            size = settings.micro_batch or per_rank
            optimizer.zero_grad(set_to_none=True)
            for start in range(0, per_rank, size):  # as many micro-steps on every rank
                chunk = mine[start : start + size]
                if not chunk:  # this rank has no trajectory left: FSDP2 still needs it
                    _idle_step(policy, reference if settings.ref_kl else None, lockstep, teacher)
                    continue
                _micro_step(
                    policy,
                    chunk,
                    settings,
                    reference,
                    n_tokens,
                    len(minibatch),
                    float(dp_size),
                    totals,
                    lockstep,
                    teacher,
                )
            optimizer.step()
            metrics = _step_metrics(totals, settings, dp_size)
    metrics.update(ratios.metrics(dp_size))
    metrics.update(
        tokens=sum(len(it.tokenized.tokens) for it in items),
        trajectories=len(items),
        errors=errors,
    )
    return metrics


def _idle_step(
    policy: Policy, reference: Policy | None, lockstep: bool, teacher: Policy | None = None
) -> None:
    """The forwards and backward of a micro-step that contributes nothing, for a
    data-parallel rank without trajectories left in a minibatch: FSDP2's all-gathers and
    gradient reductions run in the same order on every rank."""
    dummy = torch.zeros(1, 1, dtype=torch.long)
    logits, _ = policy.forward_with_cache(dummy)
    with torch.no_grad():
        if reference is not None:
            reference.logits(dummy)
        if lockstep:
            (policy if teacher is None else teacher).logits(dummy)
    (logits.sum() * 0.0).backward()


def _all_reduce(values: list[float], op: str, dp_size: int) -> list[float]:
    """`values` reduced over the data-parallel ranks (as they are for one rank)."""
    if dp_size == 1:
        return values
    t = torch.tensor(values, dtype=torch.float64)
    ops = {"sum": dist.ReduceOp.SUM, "min": dist.ReduceOp.MIN, "max": dist.ReduceOp.MAX}
    dist.all_reduce(t, op=ops[op])
    return t.tolist()


@dataclass
class RatioLog:
    """Ratio statistics of an update's forwards (`loss.ratio_statistics` sums), the
    sampler/trainer gap from the first pass only (later passes see updated weights)."""

    count: float = 0.0
    ratio_sum: float = 0.0
    ratio_min: float = float("inf")
    ratio_max: float = float("-inf")
    clipped: float = 0.0
    capped: float = 0.0
    gap_count: float = 0.0
    gap_sum: float = 0.0
    gap_max: float = 0.0

    def add(self, stats: dict[str, Tensor], first_pass: bool) -> None:
        n = float(stats["count"])
        if not n:
            return
        self.count += n
        self.ratio_sum += float(stats["ratio_sum"])
        self.ratio_min = min(self.ratio_min, float(stats["ratio_min"]))
        self.ratio_max = max(self.ratio_max, float(stats["ratio_max"]))
        self.clipped += float(stats["clipped"])
        self.capped += float(stats["capped"])
        if first_pass:
            self.gap_count += n
            self.gap_sum += float(stats["gap_sum"])
            self.gap_max = max(self.gap_max, float(stats["gap_max"]))

    def metrics(self, dp_size: int) -> dict[str, float]:
        count, ratio_sum, clipped, capped, gap_count, gap_sum = _all_reduce(
            [self.count, self.ratio_sum, self.clipped, self.capped, self.gap_count, self.gap_sum],
            "sum",
            dp_size,
        )
        (r_min,) = _all_reduce([self.ratio_min], "min", dp_size)
        r_max, g_max = _all_reduce([self.ratio_max, self.gap_max], "max", dp_size)
        if not count:  # no token with a sampler log-prob
            return {"sampled_tokens": 0}
        return {
            "sampled_tokens": int(count),
            "ratio_mean": ratio_sum / count,
            "ratio_min": r_min,
            "ratio_max": r_max,
            "clip_frac": clipped / count,
            "is_capped_frac": capped / count,
            "logprob_gap_mean": gap_sum / gap_count,
            "logprob_gap_max": g_max,
        }


def _step_metrics(totals: dict, settings: StepSettings, dp_size: int) -> dict:
    """The losses and hint figures of one minibatch step, summed over ranks."""
    rl, ref, d, used, distilled, trainable = _all_reduce(
        [
            totals["rl_loss"],
            totals["ref_kl"],
            totals["distill_loss"],
            float(totals["hints_used"]),
            float(totals["distilled"]),
            totals["trainable"],
        ],
        "sum",
        dp_size,
    )
    metrics = {"rl_loss": rl, "hints_used": int(used)}
    if settings.ref_kl:
        metrics["ref_kl"] = ref
    if used:
        metrics["distill_loss"] = d
    for category, values in sorted(totals["kl"].items()):
        metrics[f"kl/{category}"] = torch.cat(values).mean().item()
    for category, values in sorted(totals["credit"].items()):
        metrics[f"credit/{category}"] = torch.cat(values).mean().item()
    gaps = totals["gaps"]
    metrics["teacher_gap"] = sum(gaps) / len(gaps) if gaps else 0.0
    metrics["frac_distilled"] = distilled / max(trainable, 1.0)
    return metrics
