"""`rl_update` with hints on 4 gloo ranks under FSDP2 equals one process: the losses, the
gradients of the last optimizer step and the parameters after the update (fp32 ≤ 1e-5).
Awkward shapes: 6 trajectories of different lengths in 2 minibatches of 3 (one rank gets no
trajectory in each), micro-batches of one, stale sampler log-probs, clipping and the IS cap
active, teacher passes for the hints."""

from __future__ import annotations

import pytest
import torch
import torch.distributed as dist
from test_token_exactness import ToolChat
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.fsdp import fully_shard

from etude.recipes.toolgrid.policy import BytePolicy
from etude.recipes.toolgrid.train import ModelSettings
from etude.rl.feedback import Hint
from etude.rl.policy import NativePolicy
from etude.rl.trajectory import ByteChat, Sample, Trajectory, sample_of, with_sample
from etude.rl.update import StepSettings, rl_update
from etude.serving.native import rollout
from etude.spawn import run_on_ranks

pytestmark = pytest.mark.dist

SETTINGS = StepSettings(
    weights={"test": 1.0},
    modes={"test": "kl"},
    is_cap=1.5,
    minibatches=2,
    micro_batch=1,
)


def _policy() -> BytePolicy:
    torch.manual_seed(0)
    policy = BytePolicy(
        ModelSettings(dim=32, n_layers=2, dense_ffn_dim=64, max_seq_len=512).config()
    )
    policy.bias[ord(ByteChat.END)] = 3.0
    return policy


def _batch() -> tuple[list[Trajectory], list[int], list[list[Hint]]]:
    policy, gen = _policy(), torch.Generator().manual_seed(7)
    trajectories, hints = [], []
    for seed in range(6):
        env = ToolChat(seed, turns=2)
        rollout(policy, ByteChat(), env, gen, max_turn_tokens=4 + 2 * seed)
        messages = []
        for m in env.messages:
            s = sample_of(m)
            if s is not None:  # stale: ratios leave the clip range
                stale = [lp + (0.5 if k % 2 else -0.5) for k, lp in enumerate(s.logprobs)]
                m = with_sample(m, Sample(s.ids, tuple(stale), s.finish))
            messages.append(m)
        trajectories.append(Trajectory(messages, reward=float(seed % 3 == 0)))
        hints.append([Hint(2, "Note: answer with the number only.", "test", "test")])
    return trajectories, [0, 0, 0, 1, 1, 1], hints


def _update(policy, dp_rank: int, dp_size: int) -> dict:
    trajectories, groups, hints = _batch()
    opt = torch.optim.AdamW(policy.parameters(), lr=1e-2)
    metrics = rl_update(
        NativePolicy(policy),
        opt,
        ByteChat(),
        trajectories,
        groups,
        hints,
        SETTINGS,
        dp_rank=dp_rank,
        dp_size=dp_size,
    )

    def full(t):
        return t.full_tensor() if hasattr(t, "full_tensor") else t

    return {
        "metrics": {k: metrics[k] for k in ("rl_loss", "distill_loss", "hints_used", "clip_frac")},
        "grads": {n: full(p.grad).detach().clone() for n, p in policy.named_parameters()},
        "params": {n: full(p).detach().clone() for n, p in policy.named_parameters()},
    }


def _rank() -> dict:
    policy = _policy()
    mesh = init_device_mesh("cpu", (dist.get_world_size(),))
    for layer in policy.model.layers:
        fully_shard(layer, mesh=mesh)
    fully_shard(policy, mesh=mesh)
    return _update(policy, dist.get_rank(), dist.get_world_size())


def test_rl_update_on_4_fsdp2_ranks_equals_one_process():
    want = _update(_policy(), 0, 1)
    assert want["metrics"]["hints_used"] > 0 and want["metrics"]["clip_frac"] > 0
    for got in run_on_ranks(_rank, 4, timeout_s=240):
        for key in ("rl_loss", "distill_loss", "hints_used"):
            assert got["metrics"][key] == pytest.approx(want["metrics"][key], abs=1e-5), key
        for kind in ("grads", "params"):
            for name, value in want[kind].items():
                torch.testing.assert_close(
                    got[kind][name], value, rtol=0, atol=1e-5, msg=f"{kind} {name}"
                )
