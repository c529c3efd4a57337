"""The cached teacher pass equals a full teacher forward; the distillation gradient reaches
only the hinted turn's tokens."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
import torch

from etude.models import KVCache, MoETransformer, preset
from etude.rl.distill import reverse_kl
from etude.rl.feedback import DETECTORS, Hint, detect_all
from etude.rl.policy import BytePolicy
from etude.rl.teacher import build_query, cached_teacher_logits_moe, full_teacher_logits
from etude.rl.toolgrid_run import ModelSettings
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


@pytest.mark.parametrize("scope", ["turn", "trajectory"])
@pytest.mark.parametrize("kind", ["dense", "moe"])
def test_cached_teacher_pass_equals_full_forward(scope, kind):
    traj = _load("planted_many")
    tt, queries = _queries(traj, scope)
    assert len(queries) == 4  # several hints of one trajectory, different prefixes
    if kind == "dense":
        model = _policy()
    else:
        torch.manual_seed(0)
        model = MoETransformer(dataclasses.replace(preset("tiny"), max_seq_len=1024))
    # the student's forward (batch of 2: the trajectory is row 1) fills the cache
    tokens = torch.stack([torch.zeros_like(tt.tokens), tt.tokens])
    cache = KVCache.empty(model.config, 2, len(tt.tokens))
    model(tokens, cache=cache, start_pos=0).sum().backward()  # a graph that must stay intact
    with torch.no_grad():
        got = cached_teacher_logits_moe(model, cache, 1, queries)
        for q, g in zip(queries, got):
            want = full_teacher_logits(model, tt.tokens, q)
            assert g.shape == (len(q.continuation), 256)
            torch.testing.assert_close(g, want, atol=1e-4, rtol=0)


def test_query_covers_exactly_the_hinted_turn():
    traj = _load("planted_many")
    tt, queries = _queries(traj)
    for q in queries:
        want = tt.turn_mask(q.hint.turn)[q.insert_at : q.insert_at + len(q.continuation)]
        assert torch.equal(q.distill_mask, want)
        assert q.distill_mask.any()
        assert TOK.decode(q.hint_tokens.tolist()) == f"\x02user\n{q.hint.text}\x03"


def test_kl_gradient_flows_only_into_the_hinted_turn():
    traj = _load("planted_many")
    tt, queries = _queries(traj)
    q = queries[1]  # the repeated-call hint at turn 6
    model = _policy()
    cache = KVCache.empty(model.config, 1, len(tt.tokens))
    logits = model(tt.tokens[None], cache=cache, start_pos=0)
    logits.retain_grad()
    with torch.no_grad():
        (teacher,) = cached_teacher_logits_moe(model, cache, 0, [q])
    sel = q.distill_mask.nonzero().squeeze(-1)
    reverse_kl(logits[0, q.insert_at - 1 + sel], teacher[sel]).mean().backward()
    touched = logits.grad[0].abs().sum(-1) > 0
    # the logits at position p predict token p+1: the touched positions are exactly those
    # predicting the hinted turn's trainable tokens
    predicts = torch.zeros_like(touched)
    predicts[:-1] = tt.turn_mask(q.hint.turn)[1:]
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
