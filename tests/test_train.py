"""`etude train`: the job runs as one process and under torchrun, logs, checkpoints
atomically, resumes with the same losses after a kill, and rejects bad input clearly."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from etude.cli import main
from etude.parallel.train import TrainConfig, iter_log, train

pytestmark = pytest.mark.slow

TOML = """
[model]
preset = "tiny"
[layout]
{layout}
[train]
steps = {steps}
batch_size = 8
seq_len = 32
log_every = 1
checkpoint_every = 2
out = "{out}"
"""


def _config(tmp: Path, steps: int = 8, layout: str = "", out: str = "run") -> Path:
    path = tmp / f"{out}.toml"
    path.write_text(TOML.format(layout=layout, steps=steps, out=tmp / out))
    return path


def _etude(*args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "etude", *args], capture_output=True, text=True, timeout=timeout
    )


def _losses(out: Path) -> dict[int, float]:
    return {r["step"]: r["loss"] for r in iter_log(out / "log.jsonl")}


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory) -> dict[int, float]:
    tmp = tmp_path_factory.mktemp("full")
    records = train(TrainConfig(steps=8, batch_size=8, seq_len=32, out=str(tmp / "run")))
    return {r["step"]: r["loss"] for r in records}


def test_one_process_run_lowers_the_loss_and_logs_each_step(uninterrupted, tmp_path):
    assert list(uninterrupted) == list(range(1, 9))
    assert uninterrupted[8] < uninterrupted[1] - 1.0


def test_stopped_run_resumes_from_its_last_checkpoint_with_the_same_losses(uninterrupted, tmp_path):
    cfg = TrainConfig(steps=8, batch_size=8, seq_len=32, checkpoint_every=2, out=str(tmp_path))
    train(cfg, stop_after=5)  # checkpoints at 2 and 4; step 5 is lost
    assert sorted(p.name for p in (tmp_path / "checkpoints").iterdir()) == ["step_2", "step_4"]
    train(cfg, resume=True)
    losses = _losses(tmp_path)
    assert list(losses) == list(range(1, 9))  # step 5's first record was replaced
    assert losses == pytest.approx(uninterrupted, abs=1e-6)


def test_killed_process_resumes_with_the_same_losses(uninterrupted, tmp_path):
    config = _config(tmp_path, steps=400)
    proc = subprocess.Popen(
        [sys.executable, "-m", "etude", "train", "--config", str(config)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 90
    while not (tmp_path / "run/checkpoints/step_4").exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert (tmp_path / "run/checkpoints/step_4/meta.json").exists()
    result = _etude("train", "--config", str(config), "--resume", "--steps", "8")
    assert result.returncode == 0, result.stderr
    assert _losses(tmp_path / "run") == pytest.approx(uninterrupted, abs=1e-5)


@pytest.mark.dist
def test_eight_gloo_ranks_with_torchrun_make_progress(tmp_path):
    config = _config(
        tmp_path, steps=8, layout="dense_replicate = 2\ndense_shard = 2\ncp = 2\nep = 8"
    )
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "torch.distributed.run",
            "--standalone",
            "--nproc-per-node",
            "8",
            "-m",
            "etude",
            "train",
            "--config",
            str(config),
        ],
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    records = list(iter_log(tmp_path / "run/log.jsonl"))
    assert records[-1]["loss"] < records[0]["loss"] - 1.0
    ranks = records[-1]["ranks"]
    assert len(ranks) == 8
    assert {"dense", "expert", "stats"} <= set(ranks[0]["collective_bytes"])
    assert all(r["state_bytes"]["expert"]["params"] > 0 for r in ranks)
    # Muon's telemetry is logged per rank: the NS work is spread, each unit done once.
    assert sum(r["optimizer"]["ns_units"] for r in ranks) > 0
    assert all(r["optimizer"]["collectives"] >= 1 for r in ranks)
    assert (tmp_path / "run/checkpoints/step_8/meta.json").exists()


def test_bad_input_is_a_clear_error_and_keeps_what_was_written(tmp_path, capsys):
    def etude(*args: str) -> tuple[int, str]:
        code = main(list(args))
        return code, capsys.readouterr().err

    code, err = etude("train", "--config", str(tmp_path / "nope.toml"))
    assert code == 2 and "nope.toml does not exist" in err

    config = _config(tmp_path, steps=2)
    code, err = etude("train", "--config", str(config), "--layout", "cp=2,ep=2")
    assert code == 2 and "needs 2 ranks" in err and not (tmp_path / "run").exists()

    odd_seq = tmp_path / "odd.toml"
    odd_seq.write_text(config.read_text().replace("seq_len = 32", "seq_len = 33"))
    code, err = etude("train", "--config", str(odd_seq))
    assert code == 2 and "not divisible by 2*CP=2" in err

    assert etude("train", "--config", str(config))[0] == 0
    log = (tmp_path / "run/log.jsonl").read_text()
    code, err = etude("train", "--config", str(config))
    assert code == 2 and "already holds a run" in err
    assert (tmp_path / "run/log.jsonl").read_text() == log

    other = tmp_path / "other.toml"
    other.write_text(config.read_text().replace('preset = "tiny"', 'preset = "tiny"\ndim = 32'))
    code, err = etude("train", "--config", str(other), "--resume", "--steps", "4")
    assert code == 2 and "is from another model (dim: checkpoint 64 vs model 32" in err
    assert (tmp_path / "run/log.jsonl").read_text() == log
