"""Run a function on N gloo ranks in separate processes, turning hangs into failures.

Used by every multi-process test and by the CPU benchmarks. Production jobs launch with
`torchrun`; this exists so that a test can say "run this on 8 ranks and give me what each
rank returned" and get either the results or an error holding every rank's traceback.

Ranks rendezvous through a TCPStore that the parent process owns on a free port, so there
is no port race between concurrent tests. Each rank registers `faulthandler` on SIGUSR1:
when the deadline passes, the parent signals the ranks still running, collects the stack
dumps of where each one is stuck, kills them and raises `RanksFailed`. `faulthandler` also
writes the stacks of a rank that a fatal signal kills (a segfault in a collective, say), so
the report says where it died, not only its exit code.
"""

from __future__ import annotations

import faulthandler
import multiprocessing as mp
import os
import pickle
import queue
import signal
import tempfile
import time
import traceback
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

import torch
import torch.distributed as dist


class RanksFailed(RuntimeError):
    """One or more ranks raised or did not finish in time; the message holds each report."""


def run_on_ranks(
    fn: Callable[..., Any],
    world_size: int,
    *args: Any,
    timeout_s: float = 120.0,
    threads_per_rank: int = 1,
) -> list[Any]:
    """Call `fn(*args)` on `world_size` gloo ranks and return each rank's result, by rank.

    `fn` must be picklable (a module-level function) and finds its rank through
    `torch.distributed.get_rank()`. Results are pickled back to the caller. Raises
    `RanksFailed` with each rank's traceback if any rank raises, or with the stack of every
    unfinished rank if the whole run takes longer than `timeout_s`.
    """
    if world_size < 1:
        raise ValueError(f"world_size must be >= 1, got {world_size}")
    ctx = mp.get_context("forkserver")
    ctx.set_forkserver_preload(["torch", "torch.distributed"])
    store = dist.TCPStore("127.0.0.1", 0, None, True, wait_for_workers=False)
    results: mp.Queue = ctx.Queue()
    with tempfile.TemporaryDirectory(prefix="etude-ranks-") as dump_dir:
        procs = [
            ctx.Process(
                target=_rank_main,
                args=(
                    fn,
                    args,
                    rank,
                    world_size,
                    store.port,
                    timeout_s,
                    threads_per_rank,
                    dump_dir,
                    results,
                ),
                daemon=True,
            )
            for rank in range(world_size)
        ]
        for p in procs:
            p.start()
        try:
            return _collect(procs, results, world_size, timeout_s, Path(dump_dir))
        finally:
            for p in procs:
                if p.is_alive():
                    p.kill()
                p.join(timeout=5)
            results.close()


def _rank_main(
    fn: Callable[..., Any],
    args: tuple,
    rank: int,
    world_size: int,
    port: int,
    timeout_s: float,
    threads: int,
    dump_dir: str,
    results: mp.Queue,
) -> None:
    dump = open(os.path.join(dump_dir, f"rank{rank}.txt"), "w")  # noqa: SIM115 (kept open for faulthandler)
    faulthandler.register(signal.SIGUSR1, file=dump, all_threads=True)
    faulthandler.enable(file=dump, all_threads=True)
    torch.set_num_threads(threads)
    try:
        store = dist.TCPStore("127.0.0.1", port, None, False, timeout=timedelta(seconds=timeout_s))
        # A collective that waits forever raises inside the rank shortly before the
        # parent's deadline, so the report shows a Python traceback rather than a kill.
        dist.init_process_group(
            "gloo",
            store=store,
            rank=rank,
            world_size=world_size,
            timeout=timedelta(seconds=max(1.0, 0.9 * timeout_s)),
        )
        out = fn(*args)
        results.put((rank, "ok", pickle.dumps(out)))
    except BaseException:
        results.put((rank, "error", traceback.format_exc()))
    finally:
        if dist.is_initialized():
            dist.destroy_process_group()


def _collect(
    procs: list, results: mp.Queue, world_size: int, timeout_s: float, dump_dir: Path
) -> list[Any]:
    deadline = time.monotonic() + timeout_s
    outcomes: dict[int, tuple[str, Any]] = {}
    while len(outcomes) < world_size and time.monotonic() < deadline:
        try:
            rank, kind, payload = results.get(timeout=0.5)
            outcomes[rank] = (kind, payload)
        except queue.Empty:
            for rank, p in enumerate(procs):
                if rank not in outcomes and not p.is_alive():
                    outcomes[rank] = ("error", _death_report(p.exitcode, dump_dir, rank))
        if any(kind == "error" for kind, _ in outcomes.values()):
            # The other ranks may be blocked on the failed one: give them a short grace
            # period to report their own error, then dump the stacks of the rest.
            deadline = min(deadline, time.monotonic() + 5.0)
    if len(outcomes) == world_size and all(kind == "ok" for kind, _ in outcomes.values()):
        return [pickle.loads(outcomes[r][1]) for r in range(world_size)]

    unfinished = [r for r in range(world_size) if r not in outcomes]
    for r in unfinished:
        if procs[r].is_alive():
            os.kill(procs[r].pid, signal.SIGUSR1)
    time.sleep(1.0)
    reports = []
    for r in range(world_size):
        if r in unfinished:
            stack = (dump_dir / f"rank{r}.txt").read_text() or "(no stack dump)"
            reports.append(f"--- rank {r} did not finish; where it was:\n{stack}")
        elif outcomes[r][0] == "error":
            reports.append(f"--- rank {r} raised:\n{outcomes[r][1]}")
    failed = any(kind == "error" for kind, _ in outcomes.values())
    why = "a rank failed" if failed else f"timed out after {timeout_s:.0f} s"
    raise RanksFailed(f"{world_size}-rank run: {why}\n" + "\n".join(reports))


def _death_report(exitcode: int | None, dump_dir: Path, rank: int) -> str:
    """What is known of a rank whose process ended without reporting: its exit code (a
    negative one is the signal that killed it) and faulthandler's stacks, if it wrote any."""
    how = f"exit code {exitcode}"
    if exitcode is not None and -exitcode in signal.valid_signals():
        how = f"signal {signal.Signals(-exitcode).name}"
    dump = dump_dir / f"rank{rank}.txt"  # absent when the rank died before opening it
    stack = dump.read_text().strip() if dump.exists() else ""
    return f"process died ({how})" + (f"; its stacks:\n{stack}" if stack else "")
