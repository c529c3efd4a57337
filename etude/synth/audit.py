"""The leak audit: search a scrubbed workspace and its environment for the deleted code.

What is searched for: the canary strings planted in the feature before anything ran, and
the oracle-only tokens of the deleted code (identifiers, string literals, docstring and
comment phrases that occur nowhere in what remains after deletion nor in what the
untouched repository ships: every file of it but the package source and git history,
docs, changelogs, scripts and licenses included, and every file of its untouched
environment, package metadata included; see `shipped_text`). Where: every file under the
given roots, dot-directories included, read as raw bytes and also decoded: bytecode
(marshal), zlib/gzip streams, zip and tar members (recursively), SQLite tables, and every
object of every git directory (packed, loose, dangling) via `git cat-file
--batch-all-objects`. A finding names the file, the decoded view and the kind of place
(`Finding.place`).
"""

from __future__ import annotations

import ast
import builtins
import contextlib
import gzip
import io
import keyword
import marshal
import os
import re
import sqlite3
import tarfile
import tokenize
import types
import zipfile
import zlib
from collections.abc import Callable, Iterable, Iterator
from dataclasses import asdict, dataclass
from pathlib import Path

import ahocorasick

from etude.sandbox import Limits, run

MIN_IDENTIFIER = 6
MIN_LITERAL = 8
PHRASE_WORDS = 5
MAX_FILE_BYTES = 64 << 20
MAX_DEPTH = 3
_GIT_LIMITS = Limits(wall_s=300, output_bytes=512 << 20)
_SQLITE = b"SQLite format 3\x00"


@dataclass(frozen=True)
class Finding:
    """A token found: `where` says in which decoded view of `path` (e.g. 'zip:a/b.py>raw',
    'git object 1a2b3c4d5e6f (blob docs/api.rst)')."""

    path: str
    where: str
    kind: str
    token: str

    @property
    def place(self) -> str:
        """The kind of place: git object, bytecode, archive member, compressed stream,
        sqlite rows, package metadata (a .dist-info or .egg-info file) or raw file."""
        if self.where.startswith("git object"):
            return "git object"
        if "bytecode" in self.where:
            return "bytecode"
        if self.where.startswith(("zip:", "tar:")):
            return "archive member"
        if self.where.startswith(("gzip>", "zlib>")):
            return "compressed stream"
        if self.where == "sqlite rows":
            return "sqlite rows"
        if ".dist-info/" in self.path or ".egg-info/" in self.path:
            return "package metadata"
        return "raw file"

    def describe(self) -> str:
        """One line: what was found, in which file, in which kind of place."""
        if self.place == "git object":  # `where` names the object and its path
            return f"{self.kind} {self.token!r} in {self.path} ({self.where})"
        view = "" if self.where == "raw" else f", {self.where}"
        return f"{self.kind} {self.token!r} in {self.path} ({self.place}{view})"

    def to_json(self) -> dict:
        return {**asdict(self), "place": self.place}


def code_tokens(source: str) -> dict[str, str]:
    """Candidate tokens of a piece of code: token -> kind ('identifier', 'literal',
    'phrase'). Phrases are runs of PHRASE_WORDS words within one line of a docstring or
    comment."""
    found: dict[str, str] = {}
    lines: list[str] = []
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type == tokenize.NAME and len(tok.string) >= MIN_IDENTIFIER:
            if not keyword.iskeyword(tok.string) and not hasattr(builtins, tok.string):
                found.setdefault(tok.string, "identifier")
        elif tok.type == tokenize.STRING:
            with contextlib.suppress(ValueError, SyntaxError):
                value = ast.literal_eval(tok.string)
                if isinstance(value, str):
                    lines.extend(value.splitlines())
                    if len(value.strip()) >= MIN_LITERAL and "\n" not in value.strip():
                        found.setdefault(value.strip(), "literal")
        elif tok.type == tokenize.COMMENT:
            lines.append(tok.string.lstrip("#"))
    for line in lines:
        words = line.split()
        for i in range(len(words) - PHRASE_WORDS + 1):
            found.setdefault(" ".join(words[i : i + PHRASE_WORDS]), "phrase")
    return found


def oracle_tokens(deleted: str, remaining: str, shipped: bytes, canaries: list[str]) -> dict:
    """Tokens of the `deleted` code found neither in the `remaining` workspace text nor in
    the `shipped` text of the untouched repository and environment, plus the canaries."""
    tokens = code_tokens(deleted)
    search = TokenSearch(tokens)
    found = search.found_in(_encode(remaining)) | search.found_in(shipped)
    tokens = {t: k for t, k in tokens.items() if t not in found}
    tokens.update({c: "canary" for c in canaries})
    return tokens


def _encode(text: str) -> bytes:
    # A string literal may hold a lone surrogate; it must still be searchable.
    return text.encode("utf-8", "surrogatepass")


class TokenSearch:
    """Every token of a fixed set that occurs in a piece of data, in one pass over it:
    `found_in(data)` equals `{t for t in tokens if t.encode() in data}` (overlapping and
    nested tokens included), with an Aho-Corasick automaton (pyahocorasick) instead of
    one substring scan per token (on a whole deleted module, thousands of tokens over a
    12 MB environment: 25 s against a fraction of a second). The automaton is built over
    the tokens' UTF-8 bytes, each byte read as one Latin-1 character, and so is the data."""

    def __init__(self, tokens: Iterable[str]) -> None:
        self._automaton = ahocorasick.Automaton()
        for token in tokens:
            self._automaton.add_word(_encode(token).decode("latin-1"), token)
        self._empty = len(self._automaton) == 0
        if not self._empty:
            self._automaton.make_automaton()

    def found_in(self, data: bytes) -> set[str]:
        """The tokens that occur in `data`."""
        if self._empty:
            return set()
        return {token for _, token in self._automaton.iter(data.decode("latin-1"))}


def shipped_text(roots: dict[str, Path], skip: Callable[[str], bool]) -> bytes:
    """Every view (raw and decoded, as the audit reads them) of every file under `roots`
    whose path relative to its root `skip` does not refuse, concatenated; directories are
    skipped whole when `skip('dir/')` is true. Git directories are never read."""
    parts = []
    for _, _, here, name in _walk(roots, skip):
        data = _read(here / name)
        if data is not None:
            parts += [view for _, view in _views(name, data)]
            if data[:16] == _SQLITE:
                with contextlib.suppress(sqlite3.Error):
                    parts.append(_sqlite_text(here / name))
    return b"\n".join(parts)


def changed_since(root: Path, moment_ns: int) -> bool:
    """Whether any file or directory under `root` (itself included) had its status changed
    at or after `moment_ns` (st_ctime: every write, rename, chmod, and every entry added to
    or removed from a directory sets it, and no user call can set it back; a change within
    the same clock tick as the moment counts). A tree unchanged since its shipped text was
    read holds no token that text does not hold."""
    for dirpath, dirnames, filenames in os.walk(root):
        for name in [".", *dirnames, *filenames]:
            if os.lstat(os.path.join(dirpath, name)).st_ctime_ns >= moment_ns:
                return True
    return False


def _code_strings(code: types.CodeType) -> Iterator[str]:
    yield code.co_name
    yield from code.co_names
    yield from code.co_varnames
    for const in code.co_consts:
        if isinstance(const, str):
            yield const
        elif isinstance(const, types.CodeType):
            yield from _code_strings(const)


def _views(name: str, data: bytes, depth: int = 0) -> Iterator[tuple[str, bytes]]:
    """(label, bytes) views of a file's content: raw, and every decoding that applies."""
    yield "raw", data
    if depth >= MAX_DEPTH:
        return
    if name.endswith((".pyc", ".pyo")) and len(data) > 16:
        with contextlib.suppress(Exception):
            code = marshal.loads(data[16:])
            yield "bytecode", "\n".join(_code_strings(code)).encode()
    if data[:2] == b"\x1f\x8b":
        with contextlib.suppress(Exception):
            inner = gzip.decompress(data)
            for label, view in _views(name[:-3], inner, depth + 1):
                yield f"gzip>{label}", view
    elif data[:1] == b"x":
        with contextlib.suppress(zlib.error):
            inner = zlib.decompress(data)
            yield from ((f"zlib>{lb}", v) for lb, v in _views(name, inner, depth + 1))
    if data[:4] == b"PK\x03\x04":
        with contextlib.suppress(Exception), zipfile.ZipFile(io.BytesIO(data)) as archive:
            for info in archive.infolist():
                if info.file_size <= MAX_FILE_BYTES:
                    member = archive.read(info)
                    for label, view in _views(info.filename, member, depth + 1):
                        yield f"zip:{info.filename}>{label}", view
    elif len(data) > 512 and data[257:262] == b"ustar":
        with contextlib.suppress(Exception), tarfile.open(fileobj=io.BytesIO(data)) as archive:
            for info in archive.getmembers():
                if info.isfile() and info.size <= MAX_FILE_BYTES:
                    member = archive.extractfile(info).read()
                    for label, view in _views(info.name, member, depth + 1):
                        yield f"tar:{info.name}>{label}", view


def _sqlite_text(path: Path) -> bytes:
    rows = []
    with contextlib.closing(sqlite3.connect(f"file:{path}?mode=ro&immutable=1", uri=True)) as db:
        tables = [r[0] for r in db.execute("select name from sqlite_master where type='table'")]
        for table in tables:
            for row in db.execute(f'select * from "{table}"'):
                rows.append(repr(row))
    return "\n".join(rows).encode()


_OBJECT_HEADER = re.compile(rb"^([0-9a-f]{40}) (blob|tree|commit|tag) \d+$", re.MULTILINE)


def _git_objects(git_dir: Path) -> Iterator[tuple[str, bytes]]:
    """(label, content) of every object of a git directory, loose or packed, reachable or
    not (in the sandbox: the directory's config is the repository's); the label names the
    object and, for a reachable one, its path ('' for the root tree and commits)."""
    base = ["git", f"--git-dir={git_dir}"]
    names = {}
    listed = run([*base, "rev-list", "--objects", "--all"], git_dir, limits=_GIT_LIMITS)
    for line in listed.stdout.splitlines():
        sha, _, path = line.partition(" ")
        names[sha] = path
    argv = [*base, "cat-file", "--batch-all-objects", "--batch"]
    data = run(argv, git_dir, limits=_GIT_LIMITS).stdout.encode()
    headers = list(_OBJECT_HEADER.finditer(data))
    for header, following in zip(headers, [*headers[1:], None], strict=True):
        sha, kind = header.group(1).decode(), header.group(2).decode()
        end = following.start() if following is not None else len(data)
        name = names.get(sha, "unreachable")
        yield f"git object {sha[:12]} ({kind} {name})".replace(" )", ")"), data[header.end() : end]


def _walk(roots: dict[str, Path], skip: Callable[[str], bool] | None = None) -> Iterator:
    """(label, root, directory, file name) of every regular file under the roots; with
    `skip`, git directories are left out and `skip` is applied to relative paths ('dir/'
    for directories)."""
    for label, root in roots.items():
        root = Path(root)
        for dirpath, dirnames, filenames in os.walk(root):
            here = Path(dirpath)
            if skip is None:
                for name in filenames:
                    if not (here / name).is_symlink() and (here / name).is_file():
                        yield label, root, here, name
                continue
            if _is_git_dir(here):
                dirnames.clear()
                continue
            rel = here.relative_to(root).as_posix()
            prefix = "" if rel == "." else f"{rel}/"
            dirnames[:] = [d for d in dirnames if not skip(f"{prefix}{d}/")]
            for name in filenames:
                path = here / name
                if not path.is_symlink() and path.is_file() and not skip(f"{prefix}{name}"):
                    yield label, root, here, name


def _is_git_dir(path: Path) -> bool:
    return (path / "HEAD").is_file() and (path / "objects").is_dir()


def _read(path: Path) -> bytes | None:
    with contextlib.suppress(OSError):
        if path.stat().st_size <= MAX_FILE_BYTES:
            return path.read_bytes()
    return None


def audit(roots: dict[str, Path], tokens: dict[str, str]) -> list[Finding]:
    """Every occurrence of a token under the labelled roots (label -> directory)."""
    if not tokens:
        return []
    finder = TokenSearch(tokens)
    findings: dict[tuple, Finding] = {}

    def search(path: str, where: str, data: bytes) -> None:
        for text in finder.found_in(data):
            findings.setdefault((path, where, text), Finding(path, where, tokens[text], text))

    for label, root in roots.items():
        for dirpath, _, _ in os.walk(root):
            here = Path(dirpath)
            if _is_git_dir(here):
                for where, content in _git_objects(here):
                    search(f"{label}/{here.relative_to(root)}", where, content)
    for label, root, here, name in _walk(roots):
        path = here / name
        data = _read(path)
        if data is None:
            continue
        rel = f"{label}/{path.relative_to(root)}"
        for where, view in _views(name, data):
            search(rel, where, view)
        if data[:16] == _SQLITE:
            with contextlib.suppress(sqlite3.Error):
                search(rel, "sqlite rows", _sqlite_text(path))
    return sorted(findings.values(), key=lambda f: (f.path, f.where, f.token))
