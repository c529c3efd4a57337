"""The sharded-Muon part of `etude demo` runs under torchrun and reports an exact match,
and its ranks end without gloo threads left for interpreter exit to tear down."""

import gc
import os
from pathlib import Path

import pytest
import torch.distributed as dist

from etude.demo import muon as demo
from etude.process_groups import release_process_groups
from etude.spawn import run_on_ranks

pytestmark = [pytest.mark.dist, pytest.mark.slow]


def test_demo_section_trains_and_matches_one_process(tmp_path):
    section = demo.run(tmp_path)
    first, last = (float(x) for x in section.figures["loss first -> last"].split(" -> "))
    assert last < first - 1.0
    assert float(section.figures["max |param diff| vs one process"]) < 1e-4
    assert section.figures["NS FLOP redundancy (1.00 = each unit once)"] == "1.00"


def _gloo_threads() -> list[str]:
    tasks = Path("/proc/self/task")
    return sorted(
        name
        for name in ((tasks / t / "comm").read_text().strip() for t in os.listdir(tasks))
        if "gloo" in name
    )


def _demo_steps() -> None:
    """Two of the demo's steps under FSDP2 and sharded Muon, then the full parameters."""
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.fsdp import fully_shard

    mesh = init_device_mesh("cpu", (dist.get_world_size(),))
    model = demo.ByteMLP()
    for module in (model.hidden, model.proj, model.lm_head, model):
        fully_shard(module, mesh=mesh)
    opt = demo._optimizer(model)
    corpus = demo._corpus()
    for step in range(2):
        opt.zero_grad()
        demo._loss(model, demo._batch(corpus, dist.get_rank(), step)).backward()
        opt.step()
    [p.full_tensor() for p in model.parameters()]


def _threads_after_destroy_and_after_release() -> tuple[list[str], list[str]]:
    _demo_steps()
    dist.destroy_process_group()
    gc.collect()
    after_destroy = _gloo_threads()
    release_process_groups()
    return after_destroy, _gloo_threads()


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="reads thread names from /proc")
def test_release_ends_the_gloo_threads_that_destroy_leaves():
    for after_destroy, after_release in run_on_ranks(_threads_after_destroy_and_after_release, 2):
        # destroy_process_group alone leaves the group's threads to interpreter exit (DTensor's
        # caches hold the mesh); if torch stops doing so, this helper may go.
        assert after_destroy, "destroy_process_group now ends gloo's threads by itself"
        assert after_release == []
