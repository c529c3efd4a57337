"""One runner for every execution of repository code: tests, installs, agent commands.

Isolation, strongest available first:
- `bwrap` (bubblewrap): read-only view of the system, a private /tmp and /dev, no network
  unless asked, a private PID namespace; only the workspace and the paths named in
  `writable` can be written.
- `unshare`: a private network and PID namespace, nothing else (the filesystem is shared).
- `none`: a warning is issued once; only the resource limits below apply.

The strongest mode that works is used unless one is forced, by `run(..., mode=...)` or the
environment variable ETUDE_SANDBOX=bwrap|unshare|none (for testing the fallbacks, or where
a mode misbehaves); forcing a mode that does not work here is an error.

In every mode the command runs in its own session (process group) under rlimits (CPU time,
address space, file size, no core dumps); the wall-clock timeout and the output-size limit
kill the whole group. Process count is capped by a pids cgroup where one can be created
(root), else by RLIMIT_NPROC (which the kernel ignores for root, hence the cgroup); CPU
time is read from a cpuacct cgroup where one can be created, else from rusage.
"""

from __future__ import annotations

import contextlib
import functools
import os
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import uuid
import warnings
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

_cpu_total = 0.0  # CPU seconds of every command this process ran (see cpu_seconds_used)


@dataclass(frozen=True)
class Limits:
    """Resource limits for one sandboxed command (`cpu_s=None` means the wall-clock limit)."""

    wall_s: float = 300.0
    cpu_s: int | None = None
    memory_bytes: int = 4 << 30
    processes: int = 256
    output_bytes: int = 8 << 20
    file_bytes: int = 1 << 30


@dataclass
class Completed:
    """What a sandboxed command did. `stdout`/`stderr` hold at most `Limits.output_bytes`."""

    argv: list[str]
    returncode: int
    stdout: str
    stderr: str
    seconds: float
    isolation: str
    timed_out: bool = False
    output_exceeded: bool = False
    cpu_s: float = 0.0
    notes: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.returncode == 0 and not self.timed_out and not self.output_exceeded

    def describe(self) -> str:
        """One line saying how the command ended, for error messages and logs."""
        if self.timed_out:
            return f"timed out after {self.seconds:.0f} s"
        if self.output_exceeded:
            return "killed: output-size limit exceeded"
        tail = (self.stderr.strip() or self.stdout.strip())[-600:]
        return f"exit code {self.returncode}: {tail}"


MODES = ("bwrap", "unshare", "none")  # strongest first
MODE_ENV = "ETUDE_SANDBOX"


@functools.cache
def available_modes() -> tuple[str, ...]:
    """The isolation modes that work on this machine, strongest first ('none' always)."""
    probe = {"timeout": 20, "capture_output": True, "check": False}
    found = []
    if shutil.which("bwrap"):
        argv = ["bwrap", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
        if (
            subprocess.run([*argv, "--unshare-net", "--unshare-pid", "true"], **probe).returncode
            == 0
        ):
            found.append("bwrap")
    if (
        shutil.which("unshare")
        and subprocess.run([*_unshare_prefix(), "true"], **probe).returncode == 0
    ):
        found.append("unshare")
    return (*found, "none")


def isolation(mode: str | None = None) -> str:
    """The isolation `run` uses: `mode` if given, else $ETUDE_SANDBOX if set, else the
    strongest that works ('bwrap', 'unshare' or 'none'). Raises ValueError for an unknown
    or unavailable forced mode; warns (RuntimeWarning) when the result is 'none'."""
    forced = mode or os.environ.get(MODE_ENV) or None
    if forced is not None and forced not in MODES:
        raise ValueError(f"unknown sandbox mode {forced!r}; choose one of {', '.join(MODES)}")
    if forced is not None and forced not in available_modes():
        raise ValueError(
            f"sandbox mode {forced!r} does not work on this machine; "
            f"available: {', '.join(available_modes())}"
        )
    chosen = forced or available_modes()[0]
    if chosen == "none":
        # The default warnings filter shows this once per process.
        warnings.warn(
            "etude.sandbox: running repository code without isolation; only resource limits "
            "apply (network and filesystem are NOT isolated). Install bubblewrap "
            "(apt-get install -y bubblewrap) or allow unshare.",
            RuntimeWarning,
            stacklevel=3,
        )
    return chosen


def cpu_seconds_used() -> float:
    """CPU seconds used so far by all commands this process ran in the sandbox."""
    return _cpu_total


def _unshare_prefix() -> list[str]:
    root = ["--map-root-user"] if os.geteuid() != 0 else []
    return ["unshare", *root, "--net", "--pid", "--fork", "--kill-child"]


def _host_paths_under_tmp() -> list[Path]:
    """This interpreter's environment and etude's source tree, when they sit under /tmp.

    bwrap gives the sandbox a private /tmp, which would hide a virtualenv or a checkout
    living there (CI clones often do); they are bound back read-only."""
    roots = {Path(sys.prefix), Path(sys.base_prefix), Path(__file__).parents[2]}
    return sorted(p.resolve() for p in roots if p.resolve().is_relative_to("/tmp"))


def _bwrap_prefix(
    workspace: Path,
    writable: Sequence[Path],
    readonly: Sequence[Path],
    hidden: Sequence[Path],
    network: bool,
    cwd: Path,
) -> list[str]:
    argv = ["bwrap", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
    argv += ["--tmpfs", "/tmp", "--tmpfs", "/dev/shm"]
    for path in [*_host_paths_under_tmp(), *readonly]:  # /tmp is private inside
        argv += ["--ro-bind", str(path), str(path)]
    for path in [workspace, *writable]:
        argv += ["--bind", str(path), str(path)]
    for path in hidden:
        argv += ["--tmpfs", str(path)]
    if not network:
        argv.append("--unshare-net")
    argv += ["--unshare-pid", "--unshare-ipc", "--unshare-uts", "--die-with-parent"]
    argv += ["--new-session", "--chdir", str(cwd)]
    return argv


@contextlib.contextmanager
def _cgroups(max_pids: int) -> Iterator[list[Path]]:
    """Fresh cgroups for one command: a pids limit of `max_pids` and CPU accounting.

    cgroup v1 (one directory per controller) or v2 (one directory); empty where none can
    be created (not root, or cgroups not writable). Every process left in them is killed
    on exit."""
    name = f"etude-sandbox-{uuid.uuid4().hex[:12]}"
    groups: list[Path] = []
    if os.geteuid() == 0:
        v2 = Path("/sys/fs/cgroup")
        roots = [v2] if (v2 / "cgroup.controllers").exists() else [v2 / "pids", v2 / "cpuacct"]
        for root in roots:
            group = root / name
            try:
                group.mkdir()
                groups.append(group)
                if (group / "pids.max").exists():
                    (group / "pids.max").write_text(str(max_pids))
            except OSError:
                continue
    try:
        yield groups
    finally:
        for group in groups:
            _kill_cgroup(group)


def _cgroup_cpu_seconds(groups: list[Path]) -> float | None:
    for group in groups:
        if (group / "cpuacct.usage").exists():
            return int((group / "cpuacct.usage").read_text()) / 1e9
        if (group / "cpu.stat").exists():
            stats = dict(line.split() for line in (group / "cpu.stat").read_text().splitlines())
            return int(stats["usage_usec"]) / 1e6
    return None


def _has_pids_limit(groups: list[Path]) -> bool:
    return any((group / "pids.max").exists() for group in groups)


def _kill_cgroup(group: Path) -> None:
    _kill_members(group)
    with contextlib.suppress(OSError):
        group.rmdir()


def _kill_members(group: Path) -> None:
    """SIGKILL every process in `group` until it is empty (at most ~2 s)."""
    for _ in range(100):
        pids = [int(p) for p in (group / "cgroup.procs").read_text().split()]
        if not pids:
            break
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        time.sleep(0.02)


def _user_process_count() -> int:
    uid = os.getuid()
    count = 0
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError):
                if entry.stat().st_uid == uid:
                    count += 1
    return count


def _limit_child(limits: Limits, cgroups: list[Path], nproc: int | None) -> None:
    """Runs in the child between fork and exec: join the cgroups, set rlimits."""
    for group in cgroups:
        (group / "cgroup.procs").write_text(str(os.getpid()))
    cpu = int(limits.cpu_s if limits.cpu_s is not None else max(1, limits.wall_s))
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu))
    resource.setrlimit(resource.RLIMIT_AS, (limits.memory_bytes, limits.memory_bytes))
    resource.setrlimit(resource.RLIMIT_FSIZE, (limits.file_bytes, limits.file_bytes))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    if nproc is not None:
        resource.setrlimit(resource.RLIMIT_NPROC, (nproc, nproc))


class _CappedReader(threading.Thread):
    """Drains a pipe, keeping at most `cap` bytes; calls `on_exceed` once when over."""

    def __init__(self, stream, cap: int, on_exceed) -> None:
        super().__init__(daemon=True)
        self.stream, self.cap, self.on_exceed = stream, cap, on_exceed
        self.chunks: list[bytes] = []
        self.size = 0

    def run(self) -> None:
        while chunk := self.stream.read(65536):
            if self.size < self.cap:
                self.chunks.append(chunk[: self.cap - self.size])
            self.size += len(chunk)
            if self.size > self.cap:
                self.on_exceed()

    def text(self) -> str:
        return b"".join(self.chunks).decode("utf-8", "replace")


def run(
    argv: Sequence[str],
    workspace: Path,
    *,
    writable: Sequence[Path] = (),
    readonly: Sequence[Path] = (),
    hidden: Sequence[Path] = (),
    network: bool = False,
    env: Mapping[str, str] | None = None,
    cwd: Path | None = None,
    limits: Limits = Limits(),
    stdin: str | None = None,
    mode: str | None = None,
) -> Completed:
    """Run `argv` inside the sandbox with `workspace` writable and its working directory.

    `writable` are further paths the command may write and `readonly` paths it may only
    read (the whole system is readable except /tmp, which is private); `hidden` are
    directories replaced by empty ones inside the sandbox (bwrap only). The environment
    is not inherited: the command gets PATH, a private HOME and TMPDIR, a UTF-8 locale,
    and `env`. `mode` forces an isolation mode (see `isolation`).
    """
    workspace = Path(workspace).resolve()
    if not workspace.is_dir():
        raise FileNotFoundError(f"sandbox workspace {workspace} is not a directory")
    cwd = Path(cwd).resolve() if cwd is not None else workspace
    mode = isolation(mode)
    private = Path(tempfile.mkdtemp(prefix="etude-sandbox-"))
    child_env = {
        "PATH": os.environ.get("PATH", "/usr/local/bin:/usr/bin:/bin"),
        "HOME": str(private),
        "TMPDIR": str(private),
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        **(env or {}),
    }
    writable = [Path(p).resolve() for p in writable]
    if mode == "bwrap":
        readonly = [Path(p).resolve() for p in readonly]
        prefix = _bwrap_prefix(workspace, [*writable, private], readonly, hidden, network, cwd)
    elif mode == "unshare" and not network:
        prefix = _unshare_prefix()
    else:
        prefix = []
    notes = []
    start = time.perf_counter()
    try:
        children_before = resource.getrusage(resource.RUSAGE_CHILDREN)
        with _cgroups(limits.processes) as cgroups:
            nproc = None
            if not _has_pids_limit(cgroups):
                if os.geteuid() == 0:
                    notes.append("process count not limited (root without a pids cgroup)")
                else:
                    nproc = _user_process_count() + limits.processes
            proc = subprocess.Popen(
                [*prefix, *argv],
                cwd=cwd,
                env=child_env,
                stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                start_new_session=True,
                preexec_fn=functools.partial(_limit_child, limits, cgroups, nproc),
            )
            exceeded = threading.Event()

            def kill() -> None:
                exceeded.set()
                _kill_group(proc)

            readers = [
                _CappedReader(s, limits.output_bytes, kill) for s in (proc.stdout, proc.stderr)
            ]
            for reader in readers:
                reader.start()
            if stdin is not None:
                with contextlib.suppress(BrokenPipeError):
                    proc.stdin.write(stdin.encode())
                    proc.stdin.close()
            timed_out = False
            try:
                proc.wait(timeout=limits.wall_s)
            except subprocess.TimeoutExpired:
                timed_out = True
                _kill_group(proc)
                proc.wait()
            # Leftovers that left the session (setsid) would hold the output pipes open;
            # in mode 'none' only the cgroup still finds them.
            for group in cgroups:
                _kill_members(group)
            for reader in readers:
                reader.join(timeout=10)
            cpu = _cgroup_cpu_seconds(cgroups)
        if cpu is None:  # rusage misses processes reaped by bwrap's init, hence cgroups first
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpu = (after.ru_utime + after.ru_stime) - (
                children_before.ru_utime + children_before.ru_stime
            )
        global _cpu_total
        _cpu_total += cpu
    finally:
        shutil.rmtree(private, ignore_errors=True)
    return Completed(
        argv=list(argv),
        returncode=proc.returncode,
        stdout=readers[0].text(),
        stderr=readers[1].text(),
        seconds=time.perf_counter() - start,
        isolation=mode,
        timed_out=timed_out,
        output_exceeded=exceeded.is_set(),
        cpu_s=cpu,
        notes=notes,
    )


def _kill_group(proc: subprocess.Popen) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
