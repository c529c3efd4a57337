"""The multi-process test helper: results by rank, errors and hangs become failures."""

import pytest
import torch
import torch.distributed as dist

from etude.spawn import RanksFailed, run_on_ranks

pytestmark = pytest.mark.dist


def _rank_sum() -> tuple[int, float]:
    t = torch.tensor([float(dist.get_rank() + 1)])
    dist.all_reduce(t)
    return dist.get_rank(), t.item()


def _rank_one_raises() -> None:
    if dist.get_rank() == 1:
        raise ValueError("planted failure on rank 1")
    dist.barrier()


def _rank_one_hangs() -> None:
    if dist.get_rank() == 1:
        import time

        time.sleep(3600)


def _rank_one_segfaults() -> None:
    if dist.get_rank() == 1:
        import faulthandler

        faulthandler._sigsegv()  # a real SIGSEGV, as a crash inside a collective would be
    dist.barrier()


def test_returns_each_rank_result_in_rank_order():
    assert run_on_ranks(_rank_sum, 3, timeout_s=60) == [(0, 6.0), (1, 6.0), (2, 6.0)]


def test_error_on_one_rank_reports_its_traceback():
    with pytest.raises(RanksFailed, match="planted failure on rank 1") as err:
        run_on_ranks(_rank_one_raises, 2, timeout_s=60)
    assert "rank 1 raised" in str(err.value)


def test_hang_becomes_failure_with_the_stuck_stack():
    with pytest.raises(RanksFailed, match="timed out") as err:
        run_on_ranks(_rank_one_hangs, 2, timeout_s=8)
    assert "rank 1 did not finish" in str(err.value)
    assert "_rank_one_hangs" in str(err.value)


def test_a_rank_killed_by_a_signal_is_reported_with_its_stack():
    with pytest.raises(RanksFailed, match="rank 1 raised") as err:
        run_on_ranks(_rank_one_segfaults, 2, timeout_s=30)
    assert "process died (signal SIGSEGV)" in str(err.value)
    assert "_rank_one_segfaults" in str(err.value)
