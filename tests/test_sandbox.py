"""The sandbox runner: no network, no writes outside the workspace, hangs and fork bombs
are killed, output is capped. These run real processes under the strongest isolation the
machine offers (bubblewrap here), and again under each weaker mode forced: `unshare`
(network and PID namespaces with rlimits) and `none` (limits only, with a warning)."""

import subprocess
import sys
import time
import warnings
from pathlib import Path

import pytest

from etude.sandbox import MODE_ENV, Limits, available_modes, isolation, run

PY = sys.executable


@pytest.fixture(params=["bwrap", "unshare"])
def mode(request):
    """Each namespace-isolating mode; skipped, with the reason, where it does not work."""
    if request.param not in available_modes():
        pytest.skip(f"{request.param} does not work here (available: {available_modes()})")
    return request.param


def test_runs_in_workspace_and_captures_output(tmp_path):
    done = run([PY, "-c", "import os; print(os.getcwd()); open('f', 'w').write('x')"], tmp_path)
    assert done.ok, done.describe()
    assert done.stdout.strip() == str(tmp_path)
    assert (tmp_path / "f").read_text() == "x"


def test_environment_is_not_inherited(tmp_path, monkeypatch):
    monkeypatch.setenv("ETUDE_SECRET_TOKEN", "do-not-pass")
    done = run([PY, "-c", "import os; print(os.environ.get('ETUDE_SECRET_TOKEN'))"], tmp_path)
    assert done.stdout.strip() == "None"


def test_no_network(tmp_path, mode):
    code = (
        "import socket\n"
        "try:\n"
        "    socket.create_connection(('1.1.1.1', 53), timeout=3)\n"
        "    print('connected')\n"
        "except OSError as err:\n"
        "    print('blocked', err.errno)\n"
    )
    done = run([PY, "-c", code], tmp_path, mode=mode)
    assert done.isolation == mode
    assert done.stdout.startswith("blocked"), done.stdout + done.stderr
    ifaces = run(["cat", "/proc/net/dev"], tmp_path, mode=mode).stdout
    assert "eth" not in ifaces and "lo" in ifaces


@pytest.mark.skipif(isolation() != "bwrap", reason="filesystem isolation needs bubblewrap")
def test_no_write_outside_workspace(tmp_path):
    workspace, outside = tmp_path / "ws", tmp_path / "outside"
    workspace.mkdir()
    outside.mkdir()
    home_file = Path.home() / f".etude-sandbox-probe-{time.time_ns()}"
    code = (
        "import sys\n"
        "for target in sys.argv[1:]:\n"
        "    try:\n"
        "        open(target, 'w').write('x')\n"
        "        print('wrote', target)\n"
        "    except OSError as err:\n"
        "        print('denied', target, err.errno)\n"
    )
    targets = [str(outside / "f"), str(home_file), "/etc/etude-probe", str(workspace / "ok")]
    done = run([PY, "-c", code, *targets], workspace)
    assert done.ok, done.describe()
    assert not (outside / "f").exists() and not home_file.exists()
    assert not Path("/etc/etude-probe").exists()
    assert (workspace / "ok").exists()
    assert done.stdout.count("denied") == 3


@pytest.mark.skipif(isolation() != "bwrap", reason="hiding paths needs bubblewrap")
def test_hidden_paths_are_empty(tmp_path):
    secret = tmp_path / "secret"
    secret.mkdir()
    (secret / "answer.py").write_text("42")
    workspace = tmp_path / "ws"
    workspace.mkdir()
    done = run(["ls", "-A", str(secret)], workspace, readonly=[secret], hidden=[secret])
    assert done.stdout.strip() == ""


@pytest.mark.parametrize("forced", ["bwrap", "unshare", "none"])
def test_hanging_process_group_is_killed(tmp_path, forced):
    if forced not in available_modes():
        pytest.skip(f"{forced} does not work here")
    # The child starts a grandchild in its own process group that would outlive it.
    code = (
        "import subprocess, sys, time\n"
        "subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(300)'],"
        " start_new_session=True)\n"
        "time.sleep(300)\n"
    )
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # mode 'none' warns; tested below
        done = run([PY, "-c", code], tmp_path, limits=Limits(wall_s=2), mode=forced)
    assert done.timed_out and not done.ok and done.isolation == forced
    assert time.perf_counter() - start < 15
    time.sleep(0.5)
    leftover = subprocess.run(["pgrep", "-f", "time.sleep\\(300\\)"], capture_output=True)
    assert leftover.stdout.strip() == b""


def test_fork_bomb_is_contained(tmp_path, mode):
    code = (
        "import os, time\n"
        "children = 0\n"
        "try:\n"
        "    for _ in range(10_000):\n"
        "        if os.fork() == 0:\n"
        "            time.sleep(30)\n"
        "            os._exit(0)\n"
        "        children += 1\n"
        "except OSError:\n"
        "    pass\n"
        "print(children)\n"
    )
    done = run([PY, "-c", code], tmp_path, limits=Limits(wall_s=20, processes=64), mode=mode)
    if done.notes:
        pytest.skip(done.notes[0])
    assert not done.timed_out
    assert 0 < int(done.stdout.strip()) < 64


def test_output_limit_kills_the_command(tmp_path):
    done = run(["yes"], tmp_path, limits=Limits(wall_s=20, output_bytes=10_000))
    assert done.output_exceeded and not done.ok
    assert len(done.stdout) <= 10_000


def test_memory_limit(tmp_path, mode):
    code = "x = bytearray(2 << 30)\nprint('allocated')"
    limits = Limits(wall_s=20, memory_bytes=1 << 30)
    done = run([PY, "-c", code], tmp_path, limits=limits, mode=mode)
    assert done.returncode != 0 and "MemoryError" in done.stderr


def test_cpu_limit(tmp_path, mode):
    limits = Limits(wall_s=20, cpu_s=1)
    done = run([PY, "-c", "while True: pass"], tmp_path, limits=limits, mode=mode)
    assert not done.timed_out and done.returncode != 0 and done.seconds < 10


def test_missing_workspace_is_an_error(tmp_path):
    with pytest.raises(FileNotFoundError, match="not a directory"):
        run(["true"], tmp_path / "missing")


def test_unshare_mode_shares_the_filesystem_but_not_the_network(tmp_path):
    if "unshare" not in available_modes():
        pytest.skip(f"unshare does not work here (available: {available_modes()})")
    outside = tmp_path / "outside"
    workspace = tmp_path / "ws"
    workspace.mkdir()
    # What the weaker mode gives up: a write outside the workspace succeeds.
    done = run([PY, "-c", f"open({str(outside)!r}, 'w').write('x')"], workspace, mode="unshare")
    assert done.ok and outside.exists()
    pid = run([PY, "-c", "import os; print(os.getpid())"], workspace, mode="unshare")
    assert pid.stdout.strip() == "1"  # a private PID namespace


def test_no_isolation_mode_warns_and_still_limits(tmp_path):
    with pytest.warns(RuntimeWarning, match="without isolation"):
        done = run([PY, "-c", "while True: pass"], tmp_path, limits=Limits(cpu_s=1), mode="none")
    assert done.isolation == "none"
    assert not done.timed_out and done.returncode != 0 and done.seconds < 10


def test_mode_from_the_environment(tmp_path, monkeypatch):
    monkeypatch.setenv(MODE_ENV, "unshare")
    if "unshare" in available_modes():
        assert run(["true"], tmp_path).isolation == "unshare"
    monkeypatch.setenv(MODE_ENV, "chroot")
    with pytest.raises(ValueError, match="unknown sandbox mode 'chroot'"):
        run(["true"], tmp_path)
    monkeypatch.delenv(MODE_ENV)
    assert isolation() == available_modes()[0]
