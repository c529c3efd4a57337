"""Finding what a repository is made of: its packages, its tests, its test configuration.

`prepare` takes a local directory (git or not) or an sdist tarball, puts a pristine copy
under the work directory and classifies its Python files. Bad input (not a repository, no
Python, syntax errors, no tests, a corrupt archive) raises SynthError naming the problem.
"""

from __future__ import annotations

import ast
import hashlib
import re
import shutil
import subprocess
import tarfile
import zipfile
from dataclasses import asdict, dataclass
from pathlib import Path

from etude.synth.errors import SynthError

TEST_DIR_NAMES = frozenset({"test", "tests", "testing"})
NON_PACKAGE_DIRS = frozenset(
    {"docs", "doc", "benchmark", "benchmarks", "examples", "example", "scripts", "tools"}
)
SKIPPED_DIRS = frozenset({".git", ".hg", ".tox", ".nox", ".venv", "venv", "build", "dist"})
# Every file name pytest reads configuration from (pytest 9 adds the .toml ones), and the
# packaging files; at any depth, they come from the hidden store when grading.
PYTEST_CONFIG_FILES = (
    "pytest.toml",
    ".pytest.toml",
    "pytest.ini",
    ".pytest.ini",
    "pyproject.toml",
    "tox.ini",
    "setup.cfg",
)
CONFIG_FILES = (*PYTEST_CONFIG_FILES, "setup.py")
_TEST_FILE = re.compile(r"^(test_.*|.*_test)\.py$")


@dataclass
class Repo:
    """A pristine copy of a repository and the roles of its files (paths relative to root).

    `package_root` is the directory holding the top-level packages ('' or 'src');
    `test_files` are files pytest collects; `test_support` are other files the tests need
    (conftest.py, helpers in test directories); `config_files` configure pytest/packaging
    (at any depth).
    """

    name: str
    source: str
    revision: str
    root: Path
    package_root: str
    packages: list[str]
    source_files: list[str]
    test_files: list[str]
    test_support: list[str]
    config_files: list[str]

    def to_json(self) -> dict:
        return {**asdict(self), "root": str(self.root)}

    @classmethod
    def from_json(cls, data: dict) -> Repo:
        return cls(**{**data, "root": Path(data["root"])})


def is_test_path(rel: str) -> bool:
    """Whether a relative path belongs to the tests (test files, conftest, test dirs)."""
    parts = Path(rel).parts
    name = parts[-1]
    return (
        bool(_TEST_FILE.match(name))
        or name == "conftest.py"
        or any(p in TEST_DIR_NAMES for p in parts[:-1])
    )


def _files(root: Path, pattern: str) -> list[str]:
    found = []
    for path in sorted(root.rglob(pattern)):
        rel = path.relative_to(root)
        if path.is_file() and not any(
            p in SKIPPED_DIRS or p.endswith(".egg-info") for p in rel.parts[:-1]
        ):
            found.append(rel.as_posix())
    return found


def test_tree_files(root: Path) -> list[str]:
    """Every file of the tests, any suffix (test data included; see is_test_path)."""
    return [rel for rel in _files(root, "*") if is_test_path(rel) and "__pycache__" not in rel]


def config_files_of(root: Path) -> list[str]:
    """Every pytest or packaging configuration file under `root`, at any depth."""
    return sorted(rel for name in CONFIG_FILES for rel in _files(root, name))


def _copy_source(source: Path, dest: Path) -> tuple[str, str]:
    """Copy a directory or unpack an sdist into `dest`; returns (name, revision)."""
    if source.is_dir():
        shutil.copytree(source, dest, symlinks=True)
        if (source / ".git").exists():
            head = subprocess.run(
                ["git", "-C", str(source), "rev-parse", "HEAD"], capture_output=True, text=True
            )
            if head.returncode == 0:
                return source.name, "git:" + head.stdout.strip()
        return source.name, "tree:" + _tree_hash(dest)
    if source.is_file() and source.name.endswith((".tar.gz", ".tgz", ".tar.bz2", ".tar", ".zip")):
        digest = hashlib.sha256(source.read_bytes()).hexdigest()
        staging = dest.with_name(dest.name + ".unpack")
        shutil.rmtree(staging, ignore_errors=True)
        try:
            if source.name.endswith(".zip"):
                with zipfile.ZipFile(source) as archive:
                    archive.extractall(staging)
            else:
                with tarfile.open(source) as archive:
                    archive.extractall(staging, filter="data")
        except (tarfile.TarError, zipfile.BadZipFile, EOFError, OSError) as err:
            shutil.rmtree(staging, ignore_errors=True)
            raise SynthError(f"{source} is not a readable sdist archive: {err}") from err
        entries = list(staging.iterdir())
        top = entries[0] if len(entries) == 1 and entries[0].is_dir() else staging
        shutil.move(str(top), dest)
        shutil.rmtree(staging, ignore_errors=True)
        name = top.name if top is not staging else source.name.split(".")[0]
        return name, "sdist:sha256:" + digest
    raise SynthError(f"{source} is neither a directory nor an sdist archive (.tar.gz, .zip)")


def _tree_hash(root: Path) -> str:
    digest = hashlib.sha256()
    for path in sorted(p for p in root.rglob("*") if p.is_file() and ".git" not in p.parts):
        digest.update(path.relative_to(root).as_posix().encode() + b"\0")
        digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()[:16]


def _packages(root: Path, source_files: list[str]) -> tuple[str, list[str]]:
    """The package root ('' or 'src') and the top-level import names below it."""
    for package_root in ("src", ""):
        base = root / package_root if package_root else root
        names = set()
        for rel in source_files:
            path = Path(rel)
            inside = path.parts[1:] if package_root else path.parts
            if package_root and path.parts[0] != package_root:
                continue
            if len(inside) > 1 and (base / inside[0] / "__init__.py").exists():
                names.add(inside[0])
            elif len(inside) == 1 and inside[0] not in ("setup.py", "conftest.py"):
                names.add(inside[0][:-3])
        if names:
            return package_root, sorted(names)
    return "", []


def prepare(source: Path, work_dir: Path) -> Repo:
    """Copy or unpack `source` to `work_dir/pristine` and classify its files."""
    source = Path(source).resolve()
    if not source.exists():
        raise SynthError(f"{source} does not exist")
    pristine = Path(work_dir) / "pristine"
    shutil.rmtree(pristine, ignore_errors=True)
    pristine.parent.mkdir(parents=True, exist_ok=True)
    name, revision = _copy_source(source, pristine)
    files = _files(pristine, "*.py")
    if not files:
        raise SynthError(f"{source} has no Python files: not a Python repository")
    broken = []
    for rel in files:
        try:
            ast.parse((pristine / rel).read_bytes(), filename=rel)
        except (SyntaxError, ValueError) as err:
            broken.append(f"{rel}:{getattr(err, 'lineno', '?')}: {err.__class__.__name__}")
    if broken:
        raise SynthError(f"{source} has files that do not parse: {'; '.join(broken[:5])}")
    tests = [f for f in files if is_test_path(f)]
    test_files = [f for f in tests if _TEST_FILE.match(Path(f).name)]
    if not test_files:
        raise SynthError(f"{source} has no test files (test_*.py or *_test.py)")
    candidates = [
        f for f in files if f not in tests and not NON_PACKAGE_DIRS.intersection(Path(f).parts[:-1])
    ]
    package_root, packages = _packages(pristine, candidates)
    if not packages:
        raise SynthError(f"{source} has tests but no importable package or module to slice")
    prefix = f"{package_root}/" if package_root else ""
    source_files = [
        f
        for f in candidates
        if f.startswith(prefix)
        and Path(f[len(prefix) :]).parts[0] in {*packages, *(p + ".py" for p in packages)}
    ]
    return Repo(
        name=re.sub(r"[^A-Za-z0-9_.-]", "_", name),
        source=str(source),
        revision=revision,
        root=pristine,
        package_root=package_root,
        packages=packages,
        source_files=source_files,
        test_files=test_files,
        test_support=[f for f in tests if f not in test_files],
        config_files=config_files_of(pristine),
    )


def module_name(repo: Repo, rel: str) -> str:
    """The dotted import name of a source file: 'src/textkit/slug.py' -> 'textkit.slug'."""
    path = Path(rel)
    if repo.package_root:
        path = path.relative_to(repo.package_root)
    parts = list(path.with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)
