"""The cached teacher pass (every hint of a trajectory in one batch) equals a full teacher
forward per hint; it leaves the student's forward alone; the distillation gradient reaches
only the hinted turns' tokens."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
import torch

from etude.models import KVCache, MoETransformer, preset
from etude.recipes.toolgrid.policy import BytePolicy, allowed_bytes
from etude.recipes.toolgrid.train import ModelSettings
from etude.rl.distill import reverse_kl
from etude.rl.feedback import DETECTORS, Hint, detect_all
from etude.rl.teacher import build_query, cached_teacher_logits_moe, full_teacher_logits
from etude.rl.trajectory import ByteChat, Trajectory, tokenize

DATA = Path(__file__).parent / "data" / "rl"
TOK = ByteChat()


def _load(name):
    return Trajectory.from_dict(json.loads((DATA / f"{name}.json").read_text()))


def _policy(seed=0):
    torch.manual_seed(seed)
    return BytePolicy(
        ModelSettings(dim=32, n_layers=2, dense_ffn_dim=64, max_seq_len=1024).config()
    )


def _queries(traj, scope="turn"):
    tt = tokenize(traj.messages, TOK)
    hints = detect_all(traj, [d() for d in DETECTORS.values()])
    return tt, [build_query(traj.messages, tt, TOK, h, scope=scope) for h in hints]


def _moe(seed=0):
    torch.manual_seed(seed)
    return MoETransformer(dataclasses.replace(preset("tiny"), max_seq_len=1024))


@pytest.mark.parametrize("scope", ["turn", "trajectory"])
@pytest.mark.parametrize("kind", ["dense", "moe"])
def test_batched_teacher_pass_equals_full_forward_per_hint(scope, kind):
    traj = _load("planted_many")
    tt, queries = _queries(traj, scope)
    assert len(queries) == 4
    if scope == "turn":  # rows with different prefixes, hint lengths and turn lengths
        assert len({q.insert_at for q in queries}) == 4
        assert len({len(q.hint_tokens) for q in queries}) >= 3
        assert len({len(q.continuation) for q in queries}) == 4
    model = _policy() if kind == "dense" else _moe()
    # BytePolicy pins disallowed bytes to -1e4, where one fp32 ulp is 1e-3: compare the rest
    columns = allowed_bytes() if kind == "dense" else torch.ones(256, dtype=torch.bool)
    batches = []
    model.register_forward_pre_hook(lambda _, args: batches.append(tuple(args[0].shape)))
    # the student's forward (batch of 2: the trajectory is row 1) fills the cache
    tokens = torch.stack([torch.zeros_like(tt.tokens), tt.tokens])
    cache = KVCache.empty(model.config, 2, len(tt.tokens))
    with torch.no_grad():
        model(tokens, cache=cache, start_pos=0)
        got = cached_teacher_logits_moe(model, cache, 1, queries)
        longest = max(len(q.hint_tokens) + len(q.continuation) for q in queries)
        assert batches[1:] == [(4, longest)]  # every hint in one teacher forward
        for q, g in zip(queries, got):
            want = full_teacher_logits(model, tt.tokens, q)
            assert g.shape == want.shape == (len(q.continuation), 256)
            torch.testing.assert_close(g[:, columns], want[:, columns], atol=1e-4, rtol=0)


def test_next_turn_scope_puts_the_hint_after_the_failed_call_and_covers_the_next_turn():
    traj = _load("planted_many")
    tt = tokenize(traj.messages, TOK)
    assistant = [i for i, m in enumerate(traj.messages) if m["role"] == "assistant"]
    hints = detect_all(traj, [d() for d in DETECTORS.values()])
    hint = next(h for h in hints if h.turn != assistant[-1])
    after = next(i for i in assistant if i > hint.turn)
    q = build_query(traj.messages, tt, TOK, hint, scope="next_turn")
    start, end = tt.spans[after]
    assert q.insert_at == start  # after the failed call's replies, before the next turn
    assert torch.equal(q.continuation, tt.tokens[start:end])
    assert torch.equal(q.distill_mask, tt.trainable[start:end])  # that turn's own tokens
    assert q.distill_mask.any()
    # its teacher pass equals a full forward, as the other scopes'
    model = _policy()
    cache = KVCache.empty(model.config, 1, len(tt.tokens))
    with torch.no_grad():
        model(tt.tokens[None], cache=cache, start_pos=0)
        (got,) = cached_teacher_logits_moe(model, cache, 0, [q])
        want = full_teacher_logits(model, tt.tokens, q)
    columns = allowed_bytes()
    torch.testing.assert_close(got[:, columns], want[:, columns], atol=1e-4, rtol=0)
    last = Hint(assistant[-1], "a hint at the last turn", hint.category, "test")
    with pytest.raises(ValueError, match="no assistant turn after the hinted turn"):
        build_query(traj.messages, tt, TOK, last, scope="next_turn")


def test_teacher_pass_leaves_the_student_forward_intact():
    traj = _load("planted_many")
    tt, queries = _queries(traj)
    model = _policy()
    model(tt.tokens[None]).logsumexp(-1).sum().backward()
    plain = [p.grad.clone() for p in model.parameters()]
    model.zero_grad()
    cache = KVCache.empty(model.config, 1, len(tt.tokens))
    logits = model(tt.tokens[None], cache=cache, start_pos=0)
    filled = [t.detach().clone() for t in cache.keys + cache.values]
    with torch.no_grad():
        teacher = cached_teacher_logits_moe(model, cache, 0, queries)
    assert not any(t.requires_grad for t in teacher)
    assert all(torch.equal(a, b) for a, b in zip(filled, cache.keys + cache.values))
    logits.logsumexp(-1).sum().backward()  # the student's graph survived the teacher pass
    for want, p in zip(plain, model.parameters()):
        torch.testing.assert_close(p.grad, want, atol=1e-5, rtol=1e-4)


def test_teacher_prefix_is_detached_from_the_student_graph():
    """Even with autograd on, the teacher's gradient does not flow back through the
    student's prefix keys/values: it equals the gradient with a prefix computed without a
    graph."""
    traj = _load("planted_many")
    tt, queries = _queries(traj)
    model = _policy()

    def teacher_grads(student_grad: bool):
        model.zero_grad()
        cache = KVCache.empty(model.config, 1, len(tt.tokens))
        with torch.set_grad_enabled(student_grad):
            model(tt.tokens[None], cache=cache, start_pos=0)
        assert cache.keys[0].requires_grad == student_grad
        teacher = cached_teacher_logits_moe(model, cache, 0, queries)
        sum(t.logsumexp(-1).sum() for t in teacher).backward()
        return [p.grad.clone() for p in model.parameters()]

    for got, want in zip(teacher_grads(True), teacher_grads(False)):
        torch.testing.assert_close(got, want, atol=0, rtol=0)


def test_per_row_start_positions_need_a_cache_and_one_start_per_row():
    model = _moe()
    tokens = torch.zeros(2, 3, dtype=torch.long)
    with pytest.raises(ValueError, match="need a KV cache"):
        model(tokens, start_pos=torch.tensor([0, 1]))
    cache = KVCache.empty(model.config, 2, 8)
    with pytest.raises(ValueError, match="one start per row"):
        model(tokens, cache=cache, start_pos=torch.tensor([0, 1, 2]))
    with pytest.raises(ValueError, match="do not fit a KV cache of 8"):
        model(tokens, cache=cache, start_pos=torch.tensor([0, 6]))


def test_query_covers_exactly_the_hinted_turn():
    traj = _load("planted_many")
    tt, queries = _queries(traj)
    for q in queries:
        want = tt.turn_mask(q.hint.turn)[q.insert_at : q.insert_at + len(q.continuation)]
        assert torch.equal(q.distill_mask, want)
        assert q.distill_mask.any()
        assert TOK.decode(q.hint_tokens.tolist()) == f"\x02user\n{q.hint.text}\x03"


@pytest.mark.parametrize("hinted", [[1], [0, 1, 2, 3]], ids=["one_hint", "four_hints"])
def test_kl_gradient_flows_only_into_the_hinted_turns(hinted):
    traj = _load("planted_many")
    tt, queries = _queries(traj)
    model = _policy()
    cache = KVCache.empty(model.config, 1, len(tt.tokens))
    logits = model(tt.tokens[None], cache=cache, start_pos=0)
    logits.retain_grad()
    with torch.no_grad():
        teacher = cached_teacher_logits_moe(model, cache, 0, queries)
    loss = 0.0
    for i in hinted:
        q, sel = queries[i], queries[i].distill_mask.nonzero().squeeze(-1)
        loss = loss + reverse_kl(logits[0, q.insert_at - 1 + sel], teacher[i][sel]).mean()
    loss.backward()
    touched = logits.grad[0].abs().sum(-1) > 0
    # the logits at position p predict token p+1: the touched positions are exactly those
    # predicting the hinted turns' trainable tokens
    predicts = torch.zeros_like(touched)
    for i in hinted:
        predicts[:-1] |= tt.turn_mask(queries[i].hint.turn)[1:]
    assert torch.equal(touched, predicts)
    assert all(p.grad is not None for p in model.parameters() if p.requires_grad)


def test_hint_text_changes_the_teacher():
    traj = _load("tool_not_found")
    tt = tokenize(traj.messages, TOK)
    model = _policy()
    a = build_query(traj.messages, tt, TOK, Hint(2, "Note: add=zop", "tool_not_found", "t"))
    b = build_query(traj.messages, tt, TOK, Hint(2, "Note: sky", "placebo", "t"))
    with torch.no_grad():
        la, lb = full_teacher_logits(model, tt.tokens, a), full_teacher_logits(model, tt.tokens, b)
    assert not torch.allclose(la, lb)
