"""Does a ToolGrid policy read hints? The premise of targeted textual feedback, measured
before any training: the pre-flight gap check.

The check has two halves. `hint_reading`, with teacher forcing, scores the correct first
call (below). `hinted_success` plays held-out episodes to the end with and without the hint
in the context before the first turn: the success of the hinted continuation against the
student's. A predictive law for on-policy self-distillation (arXiv 2605.30070) found the
final gain linear in this initial student–teacher gap, with an intercept near 0: a gap of
about 0 predicts no gain. `gap_check` runs both and `predicts_benefit` is the experiment's
gate (overridden by `--ignore-hint-check`).

The teacher is the policy reading a hint; distilling toward it helps only if it acts better
than the student. With teacher forcing, on the first call of held-out tasks, this scores the
correct assistant turn (`mul=pav` then `<call>pav {...}`) in three contexts that differ only
in the message right before the turn: none (the student), the tool-not-found hint listing
the available tools and the one the mistaken turn meant, as the detector writes it after a
call like `mul=wib` (the teacher), and the experiment's placebo sentence. It also records
whether the first byte of the tool name — the byte that needs the lookup in the tool list —
is the arg-max (choosing one of the offered names at random gets it right 1/n_tools of the
time).
"""

from __future__ import annotations

import random
import statistics

import torch
from torch import nn

from etude.envs.toolgrid import ARGS, NAMES, Episode, Task, call_message, sample_task
from etude.recipes.toolgrid.train import PLACEBO_TEXT, RunConfig, chat_tokenizer, play
from etude.rl.batch import pad_batch
from etude.rl.feedback.detectors import not_found_text
from etude.rl.trajectory import ByteChat, ChatTokenizer, Message, tokenize

CONTEXTS = ("none", "hint", "placebo")


def turn_scores(
    policy: nn.Module,
    contexts: list[list[Message]],
    name_offset: int,
    tok: ChatTokenizer | None = None,
) -> list[tuple[float, bool]]:
    """Per message list of `contexts`: (log-probability of the last message's trainable
    tokens, whether the token holding the character `name_offset` characters into that
    message's text is the arg-max) under teacher forcing, in `tok`'s template (default
    ByteChat, where that token is the byte). One right-padded forward for all lists, with
    the vocabulary projected at the scored positions only."""
    tok = tok or ByteChat()
    seqs = [tokenize(messages, tok) for messages in contexts]
    # position t predicts token t + 1: keep the positions whose target is the last turn's
    keeps = [t.trainable[1:] & (t.turn[1:] == len(m) - 1) for t, m in zip(seqs, contexts)]
    tokens, keep = pad_batch([t.tokens[:-1] for t in seqs], keeps)
    device = next(policy.parameters()).device
    with torch.no_grad():
        logits = policy(tokens.to(device), logits_to_keep=keep.to(device))
    logp = torch.log_softmax(logits.float(), -1).cpu()  # [N, V], rows in row-major order
    out, at = [], 0
    for t, k in zip(seqs, keeps):
        ids = t.tokens[1:][k]
        rows = logp[at : at + len(ids)]
        at += len(ids)
        token_logp = rows.gather(-1, ids[:, None])[:, 0]
        i = next(i for i in range(len(ids)) if len(tok.decode(ids[: i + 1].tolist())) > name_offset)
        out.append((float(token_logp.sum()), bool(rows[i].argmax() == ids[i])))
    return out


def turn_score(
    policy: nn.Module, messages: list[Message], name_offset: int, tok: ChatTokenizer | None = None
) -> tuple[float, bool]:
    """`turn_scores` of one message list."""
    return turn_scores(policy, [messages], name_offset, tok)[0]


def first_call_contexts(task: Task, rng: random.Random) -> tuple[dict[str, list[Message]], int]:
    """The three message lists ending in the correct first call of `task`, keyed by
    CONTEXTS, and the offset of the tool name in that call's content."""
    reg, req = task.registry, task.requests[0]
    name = reg.name_of(req.function)
    wrong = rng.choice([n for n in NAMES if reg.function_of(n) is None])
    binding = reg.binding(req.function)
    base: list[Message] = [
        {"role": "system", "content": reg.system_prompt()},
        {"role": "user", "content": req.text()},
    ]
    call = call_message(name, dict(zip(ARGS, req.args)), "c0", binding)
    extra = {
        "none": [],
        "hint": [{"role": "user", "content": not_found_text(wrong, reg.listing(), binding)}],
        "placebo": [{"role": "user", "content": PLACEBO_TEXT}],
    }
    return {k: [*base, *v, call] for k, v in extra.items()}, len(req.function) + 1


def hint_reading(policy: nn.Module, cfg: RunConfig, tasks: int = 300, seed: int = 0) -> dict:
    """Per context: median log-probability of the correct turn and first-name-byte accuracy
    (the name's first token, for a pretrained policy's tokenizer); for hint and placebo, the
    median per-task gain over none. Tasks cycle through the held-out registries of `cfg`."""
    tg = cfg.toolgrid
    _, heldout = tg.registries()
    rng = random.Random(seed)
    tok = chat_tokenizer(cfg.model)
    scores: dict[str, list[tuple[float, bool]]] = {c: [] for c in CONTEXTS}
    for i in range(tasks):
        task = sample_task(heldout[i % len(heldout)], tg.n_requests, rng)
        contexts, offset = first_call_contexts(task, rng)
        scored = turn_scores(policy, [contexts[c] for c in CONTEXTS], offset, tok)
        for c, score in zip(CONTEXTS, scored):
            scores[c].append(score)
    out: dict = {"tasks": tasks, "chance_first_byte_among_offered": 1 / tg.n_tools}
    for c, rows in scores.items():
        out[c] = {
            "median_turn_logp": statistics.median(r[0] for r in rows),
            "first_name_byte_accuracy": sum(r[1] for r in rows) / len(rows),
        }
        if c != "none":
            gains = [a[0] - b[0] for a, b in zip(rows, scores["none"])]
            out[c]["median_logp_gain_vs_none"] = statistics.median(gains)
            out[c]["mean_logp_gain_vs_none"] = statistics.fmean(gains)
            out[c]["logp_gain_se"] = _standard_error(gains)
            out[c]["share_of_tasks_gaining"] = sum(g > 0 for g in gains) / len(gains)
    return out


def _standard_error(xs: list[float]) -> float:
    """Standard error of the mean of `xs` (0.0 for fewer than two values)."""
    return statistics.stdev(xs) / len(xs) ** 0.5 if len(xs) > 1 else 0.0


def _first_turn_calls(ep: Episode) -> tuple[bool, bool]:
    """(the episode's first assistant turn calls a tool, it calls the tool the first
    request needs)."""
    turn = next((m for m in ep.messages if m["role"] == "assistant"), None)
    calls = (turn or {}).get("tool_calls") or []
    right = ep.task.registry.name_of(ep.task.requests[0].function)
    return bool(calls), any(c["function"]["name"] == right for c in calls)


def reads_hints(result: dict, min_gain: float = 0.5) -> bool:
    """The premise holds: the hint makes the correct turn more likely by at least `min_gain`
    nats (median) — and by that much more than the placebo sentence does. (A student that
    is already right leaves no room for a gain, and then a teacher has nothing to teach.)"""
    hint = result["hint"]["median_logp_gain_vs_none"]
    return hint >= min_gain and hint >= result["placebo"]["median_logp_gain_vs_none"] + min_gain


def hinted_success(policy: nn.Module, cfg: RunConfig, episodes: int = 100, seed: int = 0) -> dict:
    """Success rate of sampled held-out episodes played from the start ("none") and with
    the tool-not-found hint of `first_call_contexts` inserted before the first assistant
    turn ("hint"), the same tasks and sampling seeds for both; "gap" is hint − none, with
    standard errors (the gap's paired by episode) and, per context, the share of episodes
    whose first turn calls a tool and calls the right one (has the format been learned)."""
    tg = cfg.toolgrid
    _, heldout = tg.registries()
    rng = random.Random(seed + 1)
    played: dict[str, list[Episode]] = {"none": [], "hint": []}
    for i in range(episodes):
        task = sample_task(heldout[i % len(heldout)], tg.n_requests, rng)
        contexts, _ = first_call_contexts(task, rng)
        for c, eps in played.items():
            eps.append(Episode(task, tg.slack))
            if c == "hint":
                eps[-1].messages.append(contexts["hint"][2])
    seeds = [seed * 100_003 + i for i in range(episodes)]
    out: dict = {"episodes": episodes}
    for c, eps in played.items():
        play(policy, chat_tokenizer(cfg.model), eps, seeds, cfg)
        out[c] = sum(ep.reward for ep in eps) / episodes
        out[f"{c}_se"] = _standard_error([ep.reward for ep in eps])
        first = [_first_turn_calls(ep) for ep in eps]
        out[f"{c}_first_turn_call_rate"] = sum(a for a, _ in first) / episodes
        out[f"{c}_first_turn_right_tool_rate"] = sum(b for _, b in first) / episodes
    out["gap"] = out["hint"] - out["none"]
    diffs = [h.reward - n.reward for h, n in zip(played["hint"], played["none"])]
    out["gap_se"] = _standard_error(diffs)
    return out


def gap_check(
    policy: nn.Module, cfg: RunConfig, tasks: int = 300, episodes: int = 100, seed: int = 0
) -> dict:
    """Both halves of the pre-flight check: `hint_reading`'s result with the hinted
    continuation's success under "success", and the predicted benefit in words."""
    out = hint_reading(policy, cfg, tasks, seed)
    out["success"] = hinted_success(policy, cfg, episodes, seed)
    out["prediction"] = predicted_benefit(out)
    return out


def predicted_benefit(check: dict) -> str:
    """What the initial gap predicts, in one sentence. The law's slope is not calibrated on
    ToolGrid, so the prediction is a direction and a scale, not a number of points."""
    gap = check["success"]["gap"]
    gain = check["hint"]["median_logp_gain_vs_none"]
    if not predicts_benefit(check):
        return (
            f"success gap {gap:+.3f}, log-prob gain {gain:+.2f} nats: about zero, so the "
            "linear law (final gain ∝ initial gap, intercept ≈ 0) predicts no gain from "
            "the hinted teacher"
        )
    return (
        f"success gap {gap:+.3f}, log-prob gain {gain:+.2f} nats: the linear law predicts a "
        f"final gain proportional to {gap:+.3f} (its slope is not calibrated on ToolGrid)"
    )


def predicts_benefit(check: dict, min_success_gap: float = 0.05, min_gain: float = 0.5) -> bool:
    """The gap is not about zero: the hinted continuation succeeds at least
    `min_success_gap` more often, or the hint raises the correct call by `min_gain` nats
    more than the placebo does (`reads_hints`)."""
    return check["success"]["gap"] >= min_success_gap or reads_hints(check, min_gain)
