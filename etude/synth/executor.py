"""Running independent jobs on a local process pool or a Ray cluster, results as they finish.

`ray` connects to the cluster named by $RAY_ADDRESS, or starts a local instance with
`workers` CPUs. Each job is a picklable argument to a module-level function.
"""

from __future__ import annotations

import multiprocessing as mp
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from typing import Any

EXECUTORS = ("local", "ray")


def map_unordered(
    fn: Callable[[Any], Any], jobs: Sequence[Any], *, executor: str, workers: int
) -> Iterator[tuple[Any, Any]]:
    """Yield (job, fn(job)) pairs in completion order; exceptions propagate."""
    if executor not in EXECUTORS:
        raise ValueError(f"unknown executor {executor!r}; choose one of {', '.join(EXECUTORS)}")
    if not jobs:
        return
    if executor == "ray":
        yield from _ray_map(fn, jobs, workers)
        return
    if workers <= 1:
        for job in jobs:
            yield job, fn(job)
        return
    context = mp.get_context("spawn")  # the caller may hold threads (progress display)
    with ProcessPoolExecutor(max_workers=workers, mp_context=context) as pool:
        futures = {pool.submit(fn, job): job for job in jobs}
        for future in as_completed(futures):
            yield futures[future], future.result()


def _ray_map(fn, jobs, workers) -> Iterator[tuple[Any, Any]]:
    import os

    import ray

    if not ray.is_initialized():
        if os.environ.get("RAY_ADDRESS"):
            ray.init(address=os.environ["RAY_ADDRESS"], log_to_driver=False)
        else:
            ray.init(num_cpus=workers, include_dashboard=False, log_to_driver=False)
    remote = ray.remote(num_cpus=1)(fn)
    pending = {remote.remote(job): job for job in jobs}
    while pending:
        done, _ = ray.wait(list(pending), num_returns=1)
        for ref in done:
            yield pending.pop(ref), ray.get(ref)
