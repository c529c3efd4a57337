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

import copy
import random
import statistics
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import torch
from torch import nn

from etude.envs.toolgrid import ARGS, NAMES, Episode, Task, call_message, sample_task
from etude.recipes.toolgrid.train import (
    PLACEBO_TEXT,
    RunConfig,
    chat_tokenizer,
    episode_seeds,
    play,
)
from etude.rl.batch import pad_batch
from etude.rl.feedback import DETECTORS, Hint, detect_all
from etude.rl.feedback.detectors import not_found_text
from etude.rl.trajectory import ByteChat, ChatTokenizer, Message, tokenize

CONTEXTS = ("none", "hint", "placebo")


def turn_scores(
    policy: nn.Module,
    contexts: list[list[Message]],
    name_offset: int | Sequence[int],
    tok: ChatTokenizer | None = None,
) -> list[tuple[float, bool]]:
    """Per message list of `contexts`: (log-probability of the last message's trainable
    tokens, whether the token holding the character `name_offset` characters into that
    message's text is the arg-max) under teacher forcing, in `tok`'s template (default
    ByteChat, where that token is the byte); `name_offset` is one for all lists or one per
    list. One right-padded forward for all lists, with the vocabulary projected at the
    scored positions only."""
    tok = tok or ByteChat()
    offsets = [name_offset] * len(contexts) if isinstance(name_offset, int) else name_offset
    seqs = [tokenize(messages, tok) for messages in contexts]
    # position t predicts token t + 1: keep the positions whose target is the last turn's
    keeps = [t.trainable[1:] & (t.turn[1:] == len(m) - 1) for t, m in zip(seqs, contexts)]
    tokens, keep = pad_batch([t.tokens[:-1] for t in seqs], keeps)
    device = next(policy.parameters()).device
    with torch.no_grad():
        logits = policy(tokens.to(device), logits_to_keep=keep.to(device))
    logp = torch.log_softmax(logits.float(), -1).cpu()  # [N, V], rows in row-major order
    out, at = [], 0
    for t, k, offset in zip(seqs, keeps, offsets):
        ids = t.tokens[1:][k]
        rows = logp[at : at + len(ids)]
        at += len(ids)
        token_logp = rows.gather(-1, ids[:, None])[:, 0]
        i = next(i for i in range(len(ids)) if len(tok.decode(ids[: i + 1].tolist())) > offset)
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


# --- the gap check after the student's own mistake -------------------------------------
#
# The first-call check above scores the hint where the student has made no mistake. In the
# experiment a hint only ever comes with a failed call of the student's own, so this half
# samples unhinted held-out episodes, finds every turn a detector fires on, and scores the
# hint there, from two states of the episode:
#
# - "after": the failed call and the environment's reply are in the context (the hint, if
#   any, follows them): the log-prob of the correct next action, and the success of the
#   episode continued from there, paired by sampling seed;
# - "before": the context stops before the failed turn and the hint comes right before it —
#   exactly what the experiment's teacher reads (`etude.rl.feedback.hints`): the log-prob of
#   the correct call there ("before"), and of the student's own failed turn ("own", the
#   teacher − student gap that advantage weighting and gated distillation act on).

MISTAKE_CONTEXTS = ("after", "before")  # positions whose correct action is scored
OWN_CONTEXTS = ("none", "hint")  # contexts in which the failed turn itself is scored


def mistake_tasks(cfg: RunConfig, episodes: int, seed: int = 0) -> tuple[list[Task], list[int]]:
    """The held-out tasks and sampling seeds of the unhinted episodes the after-mistake check
    plays: a stream, so the first k of any longer draw are the same (a run can grow)."""
    tg = cfg.toolgrid
    _, heldout = tg.registries()
    rng = random.Random(seed + 2)
    tasks = [sample_task(heldout[i % len(heldout)], tg.n_requests, rng) for i in range(episodes)]
    return tasks, episode_seeds(random.Random(seed + 3), episodes)


def replay(task: Task, slack: int, turns: list[Message]) -> Episode:
    """An episode of `task` in the state after the assistant messages `turns` (copies), the
    environment's replies regenerated as it gave them."""
    ep = Episode(task, slack)
    for m in turns:
        ep.step(copy.deepcopy(m))
    return ep


def next_action(ep: Episode) -> tuple[Message, int]:
    """The environment's correct next assistant message in `ep`'s state and the offset of its
    key token in the content (the tool name's, for a call): the call the current request
    needs, or its answer once that call has returned the result since the request came."""
    task = ep.task
    req = task.requests[len(ep.answers)]
    name, args = task.registry.name_of(req.function), dict(zip(ARGS, req.args))
    asked = max(
        i for i, m in enumerate(ep.messages) if m["role"] == "user" and m["content"] == req.text()
    )
    replies = {m["tool_call_id"]: m["content"] for m in ep.messages if m["role"] == "tool"}
    for m in ep.messages[asked:]:
        for c in m.get("tool_calls") or []:
            if c["function"]["name"] == name and replies.get(c["id"]) == str(req.answer()):
                return {"role": "assistant", "content": str(req.answer())}, 0
    return call_message(name, args, "c0", task.registry.binding(req.function)), len(
        req.function
    ) + 1


@dataclass(frozen=True)
class MistakeState:
    """A detector's hint at a failed call of sampled episode `episode`: the episode just
    before that turn (`before`) and just after it and its replies (`after`); `turn` is the
    failed assistant message."""

    episode: int
    hint: Hint
    turn: Message
    before: Episode
    after: Episode


def mistake_states(episodes: list[Episode], detectors) -> list[MistakeState]:
    """Every (turn, category) hint `detect_all` finds at a tool-calling turn of `episodes`
    (hints at other turns, such as answers, are no failed call and are skipped)."""
    out = []
    for k, ep in enumerate(episodes):
        turns = [m for m in ep.messages if m["role"] == "assistant"]
        at = [i for i, m in enumerate(ep.messages) if m["role"] == "assistant"]
        for hint in detect_all(ep.trajectory(), detectors):
            j = at.index(hint.turn)
            if not turns[j].get("tool_calls"):
                continue
            before = replay(ep.task, ep.slack, turns[:j])
            after = replay(ep.task, ep.slack, turns[: j + 1])
            out.append(MistakeState(k, hint, turns[j], before, after))
    return out


def _extra(state: MistakeState, context: str) -> list[Message]:
    """The message a context adds before the scored turn: none, the detector's hint, or the
    placebo sentence."""
    text = {"none": None, "hint": state.hint.text, "placebo": PLACEBO_TEXT}[context]
    return [] if text is None else [{"role": "user", "content": text}]


def mistake_contexts(state: MistakeState) -> dict[str, tuple[list[Message], int]]:
    """The teacher-forced message lists of a mistake state, keyed `position/context`
    (positions MISTAKE_CONTEXTS × CONTEXTS, then "own/none" and "own/hint"), each with the
    offset of its scored turn's key token: the correct next action after / before the
    failed turn, and the failed turn itself."""
    out = {}
    for position in MISTAKE_CONTEXTS:
        ep = getattr(state, position)
        action, offset = next_action(ep)
        for c in CONTEXTS:
            out[f"{position}/{c}"] = ([*ep.messages, *_extra(state, c), action], offset)
    for c in OWN_CONTEXTS:
        out[f"own/{c}"] = ([*state.before.messages, *_extra(state, c), state.turn], 0)
    return out


def mistake_logprobs(
    policy: nn.Module, cfg: RunConfig, states: list[MistakeState]
) -> list[dict[str, tuple[float, bool]]]:
    """Per state, `turn_scores` of every `mistake_contexts` list (one forward per state)."""
    tok = chat_tokenizer(cfg.model)
    out = []
    for state in states:
        contexts = mistake_contexts(state)
        scored = turn_scores(
            policy, [m for m, _ in contexts.values()], [o for _, o in contexts.values()], tok
        )
        out.append(dict(zip(contexts, scored)))
    return out


def mistake_continuations(
    policy: nn.Module, cfg: RunConfig, states: list[MistakeState], seed: int = 0
) -> list[dict[str, float] | None]:
    """Per state, the reward of the episode continued from `after` with each context's
    message appended (the same sampling seed for all three), or None when the failed call
    used the episode's last turn."""
    eps, seeds, owner = [], [], []
    for k, state in enumerate(states):
        if state.after.done:
            continue
        for c in CONTEXTS:
            ep = copy.deepcopy(state.after)
            ep.messages += _extra(state, c)
            eps.append(ep)
            seeds.append(seed * 100_003 + 70_000 + state.episode * 97 + state.hint.turn)
            owner.append((k, c))
    play(policy, chat_tokenizer(cfg.model), eps, seeds, cfg)
    out: list[dict[str, float] | None] = [None] * len(states)
    for (k, c), ep in zip(owner, eps):
        out[k] = {**(out[k] or {}), c: ep.reward}
    return out


def first_failure(ep: Episode) -> str | None:
    """The first turn at which `ep` leaves the environment's correct plan: "tool_not_found"
    (a name not offered), "wrong_tool" (an offered tool bound to another function),
    "invalid_arguments", "wrong_arguments" (valid, but not the request's values),
    "repeated_call" (the right call again after its result), "wrong_answer" (after the
    right call's result), "answer_without_call" (a wrong answer with no right call); for
    an episode that never left it but did not answer every request, "unfinished" (out of
    turns or of context); None for a clean success."""
    reg, answered, have_result = ep.task.registry, 0, False
    replies = {m["tool_call_id"]: m["content"] for m in ep.messages if m["role"] == "tool"}
    for m in ep.messages:
        if m["role"] != "assistant":
            continue
        req = ep.task.requests[answered]
        for c in m.get("tool_calls") or []:
            fn, reply = reg.function_of(c["function"]["name"]), replies.get(c["id"], "")
            if fn is None:
                return "tool_not_found"
            if fn != req.function:
                return "wrong_tool"
            if reply.startswith("Invalid arguments"):
                return "invalid_arguments"
            if reply != str(req.answer()):
                return "wrong_arguments"
            if have_result:
                return "repeated_call"
            have_result = True
        if not m.get("tool_calls"):
            if (m.get("content") or "").strip() != str(req.answer()):
                return "wrong_answer" if have_result else "answer_without_call"
            answered, have_result = answered + 1, False
    return None if ep.reward else "unfinished"


def _spread(xs: list[float]) -> dict:
    """Median, mean and standard error of `xs` (None when empty)."""
    if not xs:
        return {"median": None, "mean": None, "se": None}
    return {
        "median": statistics.median(xs),
        "mean": statistics.fmean(xs),
        "se": _standard_error(xs),
    }


def mistake_summary(
    states: list[MistakeState],
    scores: list[dict[str, tuple[float, bool]]],
    rewards: list[dict[str, float] | None],
) -> dict:
    """Per detector category and over "all" states: the number of states; per position, the
    log-prob gain of the correct action with the hint and with the placebo over none
    (median / mean / s.e.), the share of states the hint raises it in, and how often its key
    token is the arg-max per context; the teacher − student gap on the failed turn itself
    ("own": negative when the hint makes the mistake less likely); and the continuation's
    success per context with the paired gaps hint − none and placebo − none."""
    groups: dict[str, list[int]] = {"all": list(range(len(states)))}
    for k, s in enumerate(states):
        groups.setdefault(s.hint.category, []).append(k)
    out = {}
    for name, ks in groups.items():
        row: dict = {"states": len(ks)}
        for position in MISTAKE_CONTEXTS:
            lp = {c: [scores[k][f"{position}/{c}"] for k in ks] for c in CONTEXTS}
            hint_gain = [h[0] - n[0] for h, n in zip(lp["hint"], lp["none"])]
            row[position] = {
                "median_logp_none": _spread([x[0] for x in lp["none"]])["median"],
                "hint_gain": _spread(hint_gain),
                "placebo_gain": _spread([p[0] - n[0] for p, n in zip(lp["placebo"], lp["none"])]),
                "share_hint_gaining": sum(g > 0 for g in hint_gain) / len(ks) if ks else None,
                "key_token_right": {
                    c: sum(x[1] for x in v) / len(ks) if ks else None for c, v in lp.items()
                },
            }
        row["own_turn_gap"] = _spread(
            [scores[k]["own/hint"][0] - scores[k]["own/none"][0] for k in ks]
        )
        played = [rewards[k] for k in ks if rewards[k] is not None]
        success = {"states_played": len(played), "no_turn_left": len(ks) - len(played)}
        for c in CONTEXTS:
            success[c] = _spread([r[c] for r in played])
        for c in ("hint", "placebo"):
            success[f"{c}_gap"] = _spread([r[c] - r["none"] for r in played])
        row["continuation_success"] = success
        out[name] = row
    return out


def after_mistake(
    policy: nn.Module, cfg: RunConfig, episodes: int = 100, seed: int = 0, detectors=None
) -> dict:
    """The gap check after the student's own mistakes: `episodes` unhinted held-out
    episodes (`mistake_tasks`), the hints `detectors` (default: the config's) give at
    their failed calls scored there (`mistake_summary`, under "by_category"), and every
    failed episode's `first_failure` counted."""
    detectors = detectors or [DETECTORS[d]() for d in cfg.feedback.detectors]
    tasks, seeds = mistake_tasks(cfg, episodes, seed)
    played = play(
        policy,
        chat_tokenizer(cfg.model),
        [Episode(t, cfg.toolgrid.slack) for t in tasks],
        seeds,
        cfg,
    )
    states = mistake_states(played, detectors)
    scores = mistake_logprobs(policy, cfg, states)
    rewards = mistake_continuations(policy, cfg, states, seed)
    return mistake_report(played, states, scores, rewards)


def mistake_report(
    played: list[Episode],
    states: list[MistakeState],
    scores: list[dict[str, tuple[float, bool]]],
    rewards: list[dict[str, float] | None],
) -> dict:
    """`after_mistake`'s result from its pieces (a resumable caller computes them itself)."""
    return {
        **sampling_report(played, states),
        "by_category": mistake_summary(states, scores, rewards),
    }


def sampling_report(played: list[Episode], states: list[MistakeState]) -> dict:
    """What the unhinted episodes alone show: their success, how many hold a state (per
    category), and the first failure of every failed one (`first_failure`)."""
    failures = [first_failure(ep) for ep in played]
    failed = Counter(f for f, ep in zip(failures, played) if not ep.reward)
    return {
        "episodes": len(played),
        "success": sum(ep.reward for ep in played) / max(len(played), 1),
        "episodes_with_a_state": len({s.episode for s in states}),
        "states": dict(Counter(s.hint.category for s in states).most_common()),
        "first_failure_of_failed_episodes": dict(failed.most_common()),
        "successes_after_a_departure": sum(1 for f, ep in zip(failures, played) if ep.reward and f),
    }


def gap_check(
    policy: nn.Module,
    cfg: RunConfig,
    tasks: int = 300,
    episodes: int = 100,
    seed: int = 0,
    mistakes: int = 0,
) -> dict:
    """Both halves of the pre-flight check: `hint_reading`'s result with the hinted
    continuation's success under "success", with `mistakes` > 0 the check after the
    student's own mistakes on that many unhinted episodes (`after_mistake`) under
    "after_mistake", and the predicted benefit in words."""
    out = hint_reading(policy, cfg, tasks, seed)
    out["success"] = hinted_success(policy, cfg, episodes, seed)
    if mistakes:
        out["after_mistake"] = after_mistake(policy, cfg, mistakes, seed)
    out["prediction"] = predicted_benefit(out)
    return out


def predicted_benefit(check: dict) -> str:
    """What the initial gap predicts, in one sentence (the after-mistake figures when the
    check has them, as `predicts_benefit` decides on them). The law's slope is not
    calibrated on ToolGrid, so the prediction is a direction and a scale, not a number of
    points."""
    where = ""
    if "after_mistake" in check:
        gap, gain, states = _targeted(check)
        where = f"after the student's own mistakes ({states} states): "
    else:
        gap, gain = check["success"]["gap"], check["hint"]["median_logp_gain_vs_none"]
    gap_text = "no continuation played" if gap is None else f"success gap {gap:+.3f}"
    gain_text = "no log-prob gain" if gain is None else f"log-prob gain {gain:+.2f} nats"
    if not predicts_benefit(check):
        return (
            f"{where}{gap_text}, {gain_text}: about zero, so the linear law (final gain ∝ "
            "initial gap, intercept ≈ 0) predicts no gain from the hinted teacher"
        )
    scale = f"{gap:+.3f}" if gap is not None else "the log-prob gain"
    return (
        f"{where}{gap_text}, {gain_text}: the linear law predicts a final gain proportional "
        f"to {scale} (its slope is not calibrated on ToolGrid)"
    )


def _targeted(check: dict) -> tuple[float | None, float | None, int]:
    """The after-mistake check's pooled figures: the continuation's mean success gap hint −
    none, the larger median log-prob gain of the correct action over the two positions, and
    the number of states (None where there is nothing to measure)."""
    row = check["after_mistake"]["by_category"]["all"]
    gains = [row[p]["hint_gain"]["median"] for p in MISTAKE_CONTEXTS]
    gains = [g for g in gains if g is not None]
    gap = row["continuation_success"]["hint_gap"]["mean"]
    return gap, max(gains) if gains else None, row["states"]


def predicts_benefit(check: dict, min_success_gap: float = 0.05, min_gain: float = 0.5) -> bool:
    """The gap is not about zero: the hinted continuation succeeds at least
    `min_success_gap` more often, or the hint raises the correct call by `min_gain` nats
    more than the placebo does (`reads_hints`). When the check holds "after_mistake", that
    decides instead — the experiment's teacher reads hints only at the student's failed
    calls — in the same two ways: the continuation after the failed call, or the correct
    action's log-prob at either position; with no failed call at all, no hint would ever
    reach the teacher, so there is no benefit."""
    if "after_mistake" not in check:
        return check["success"]["gap"] >= min_success_gap or reads_hints(check, min_gain)
    row = check["after_mistake"]["by_category"]["all"]
    if not row["states"]:
        return False
    gap = row["continuation_success"]["hint_gap"]["mean"]
    reads = any(
        row[p]["hint_gain"]["median"] >= min_gain
        and row[p]["hint_gain"]["median"] >= row[p]["placebo_gain"]["median"] + min_gain
        for p in MISTAKE_CONTEXTS
    )
    return (gap is not None and gap >= min_success_gap) or reads
