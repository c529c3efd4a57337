"""The end of a distributed worker: process groups released while Python is still whole.

`torch.distributed.destroy_process_group()` unregisters the groups, but a gloo group stays
alive (its two `pt_gloo_runloop` threads and its `gloo_tcp_loop` thread with it) for as long
as anything refers to it, and after any DTensor work something does: DTensor's sharding
propagation cache, its redistribute-planner cache and the `lru_cache` of
`_gen_transform_infos` hold `DeviceMesh`es, and a mesh holds its process groups. They are
freed only during interpreter finalization, which is when a gloo worker that still holds
Python-owned work can abort the process ("terminate called without an active exception",
pytorch/pytorch#190489). Workers started by `torchrun` exit that way; ranks of
`etude.spawn.run_on_ranks` leave through `os._exit` and never finalize.

    release_process_groups()   # last line of a torchrun worker, once its models are gone
"""

from __future__ import annotations

import gc

import torch.distributed as dist
from torch.distributed.tensor import _redistribute
from torch.distributed.tensor.debug import _clear_sharding_prop_cache


def release_process_groups() -> None:
    """Destroy every process group (if any is initialized) and drop the DTensor caches that
    keep their meshes alive, so that the gloo threads end now, not at interpreter exit.

    Call it after the last collective, once the worker's own DTensors, meshes and optimizers
    are out of scope (their references keep the groups alive as well)."""
    if dist.is_initialized():
        dist.destroy_process_group()
    # torch's internal caches, cleared the way their docstrings say; no public API does it.
    _clear_sharding_prop_cache()
    _redistribute.clear_redistribute_planner_cache()
    _redistribute._gen_transform_infos.cache_clear()
    gc.collect()
