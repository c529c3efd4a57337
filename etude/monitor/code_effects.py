"""What running Python does, read from its AST without running it.

`code_effects(code)` lists the commands the code spawns, the files it reads, writes and
deletes (with the text it writes, when that is a constant), the modules it imports and the
functions it calls, for `python -c`, here-documents fed to Python, a Python tool, a script
the agent wrote and then ran, or a module the tests will import. The command and path rules
then judge those effects like the shell's.

Paths are followed as far as constants tell: literals, concatenations, f-strings (holes as
`*`), `os.path.join`/`Path` joins, names bound to those, loop variables over `glob`,
`os.walk`, `os.listdir` and `Path.iterdir`, and the interpreter's own locations
(`site.getsitepackages()`, `sysconfig.get_paths()["purelib"]`, `pytest.__file__`), which
resolve to a site-packages path so that a write there is judged as one, and where
the launchers are (`shutil.which`, the interpreter's directory, `sys.prefix`'s `bin`,
`sysconfig`'s `scripts`).
"""

from __future__ import annotations

import ast
import re
import textwrap
from dataclasses import dataclass, field
from functools import lru_cache

_SUBPROCESS = frozenset(
    {"subprocess.run", "subprocess.call", "subprocess.check_call", "subprocess.check_output"}
    | {"subprocess.Popen", "subprocess.getoutput", "subprocess.getstatusoutput", "os.system"}
    | {"os.popen", "os.execvp", "os.execv", "os.spawnlp", "pty.spawn", "sh.Command"}
)
READ_CALLS = frozenset(
    {"open", "io.open", "os.listdir", "os.scandir", "os.walk"}
    | {"glob.glob", "glob.iglob", "zipfile.ZipFile", "tarfile.open", "sqlite3.connect"}
    | {"shutil.copy", "shutil.copy2", "shutil.copyfile", "shutil.copytree", "marshal.load"}
    | {"runpy.run_path", "importlib.util.spec_from_file_location", "codecs.open"}
)


@dataclass
class CodeEffects:
    """What running some Python does. `commands` holds argv lists or shell strings."""

    imports: set[str] = field(default_factory=set)
    calls: set[str] = field(default_factory=set)
    commands: list[list[str] | str] = field(default_factory=list)
    reads: list[str] = field(default_factory=list)
    writes: list[str] = field(default_factory=list)
    deletes: list[str] = field(default_factory=list)
    urls: list[str] = field(default_factory=list)
    # path -> the text written there, for writes whose content is a constant
    contents: dict[str, str] = field(default_factory=dict)
    # paths whose written text is only partly known (`p.read_text() + "..."` appends to
    # what was there): `contents` holds the agent's own parts, holes as `*`
    fragments: set[str] = field(default_factory=set)


@lru_cache(maxsize=64)  # the same text is scanned for effects and for findings
def parse_python(code: str) -> ast.Module | None:
    """`code` as an AST, trying it dedented too, then as a fragment (a patch hunk that
    starts inside a function: its top-level blocks that parse); None if nothing parses.
    The tree is shared between callers and must not be modified (beyond the caches `walk`
    and `aliases_of` keep on it)."""
    for candidate in (code, textwrap.dedent(code)):
        tree = _parse(candidate)
        if tree is not None:
            return tree
    parsed, unparsed = [], []
    for block in _top_level_blocks(code):
        tree = _parse(block)
        parsed += tree.body if tree is not None else []
        unparsed += [block] if tree is None else []
    if not parsed:
        return None
    fragment = ast.Module(body=parsed, type_ignores=[])
    fragment._etude_unparsed = "\n".join(unparsed)  # type: ignore[attr-defined]
    return fragment


def unparsed_text(tree: ast.Module) -> str:
    """The blocks of a fragment that did not parse (for the text forms of the rules)."""
    return tree.__dict__.get("_etude_unparsed", "")


# lines at the left margin that continue the block above them, not start a new one
_CONTINUES = re.compile(r"(else|elif|except|finally|case)\b|[)\]}#]")


def _parse(code: str) -> ast.Module | None:
    try:
        return ast.parse(code)
    except (SyntaxError, ValueError):
        return None


def _top_level_blocks(code: str) -> list[str]:
    """`code` cut before each line at the left margin that starts a statement (decorators
    stay with what they decorate, comments with the block they sit in). A fragment's blocks
    parse on their own where the whole does not. Indented lines before the first such line
    are the end of some function's body: they become the body of a function of their own,
    so nothing in them counts as running at import."""
    blocks: list[list[str]] = [[]]
    for line in code.splitlines():
        starts = line[:1].strip() and not _CONTINUES.match(line)
        if starts and blocks[-1] and not all(b.startswith("@") for b in blocks[-1] if b.strip()):
            blocks.append([])
        blocks[-1].append(line)
    texts = ["\n".join(b) for b in blocks if b]
    if texts and texts[0][:1].isspace():
        texts[0] = "def _hunk_start():\n" + textwrap.indent(textwrap.dedent(texts[0]), "    ")
    return texts


def walk(node: ast.AST) -> list[ast.AST]:
    """`ast.walk(node)` as a list, computed once per node: the same parsed tree (shared
    through `parse_python`'s cache) is scanned by many rules."""
    nodes = node.__dict__.get("_etude_walk")
    if nodes is None:
        nodes = list(ast.walk(node))
        node._etude_walk = nodes  # type: ignore[attr-defined]
    return nodes


def name_bindings(node: ast.AST, kind: type | tuple[type, ...] = ast.AST) -> dict[str, ast.expr]:
    """name -> the value of the last plain `name = value` below `node` whose value is a
    `kind` node (`cmd = ["git", "log"]`, `TABLE = {...}`)."""
    return {
        n.targets[0].id: n.value
        for n in walk(node)
        if isinstance(n, ast.Assign)
        and len(n.targets) == 1
        and isinstance(n.targets[0], ast.Name)
        and isinstance(n.value, kind)
    }


def aliases_of(tree: ast.AST) -> dict[str, str]:
    """Local name -> dotted origin, from the imports in `tree` (computed once per tree)."""
    cached = tree.__dict__.get("_etude_aliases")
    if cached is None:
        cached = _aliases(tree)
        tree._etude_aliases = cached  # type: ignore[attr-defined]
    return cached


def unvendored(name: str) -> str:
    """A vendored copy named as what it is: `pip._vendor.requests.get` is `requests.get`."""
    return name.rsplit("._vendor.", 1)[1] if "._vendor." in name else name


def _aliases(tree: ast.AST) -> dict[str, str]:
    names = _bound_names(tree)
    return {local: unvendored(origin) for local, origin in names.items()}


def _bound_names(tree: ast.AST) -> dict[str, str]:
    names: dict[str, str] = {}
    for node in walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                names[a.asname or a.name.split(".")[0]] = (
                    a.name if a.asname else a.name.split(".")[0]
                )
        elif isinstance(node, ast.ImportFrom) and node.module:
            for a in node.names:
                names[a.asname or a.name] = f"{node.module}.{a.name}"
        elif (  # m = importlib.import_module("urllib.request"), u = __import__("o" + "s").path
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
            and _imported_root(node.value) is not None
            and (module := dotted(node.value, {}))
        ):
            names[node.targets[0].id] = module
        elif (  # libc = ctypes.CDLL(None): a handle on a C library
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
            and isinstance(node.value, ast.Call)
            and ast.unparse(node.value.func).startswith(("ctypes.CDLL", "ctypes.cdll"))
        ):
            names[node.targets[0].id] = "ctypes.CDLL"
        elif (  # m = sys.modules.get("_pytest.python"), or sys.modules["pytest"]
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
            and (module := _loaded_module(node.value))
        ):
            names[node.targets[0].id] = module
    return names


def _loaded_module(node: ast.AST) -> str | None:
    """The module `sys.modules.get("m")` or `sys.modules["m"]` names (also spelled
    `"_py" + "test"`), else None."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.args:
        source, key = node.func.value, node.args[0]
        if node.func.attr != "get":
            return None
    elif isinstance(node, ast.Subscript):
        source, key = node.value, node.slice
    else:
        return None
    if ast.unparse(source) != "sys.modules":
        return None
    return const_str(key)


def _imported_root(node: ast.AST) -> str | None:
    """The module an import call in expression position returns, however its name is spelled:
    `importlib.import_module("urllib.request")` is `urllib.request`, `__import__("urllib.request")`
    the top package `urllib` (as Python returns it), under any chain of attributes."""
    while isinstance(node, ast.Attribute):
        node = node.value
    if not (isinstance(node, ast.Call) and node.args):
        return None
    f = node.func
    called = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
    if called not in ("import_module", "__import__"):  # checked first: unparse is costly
        return None
    func = ast.unparse(f)
    if func not in ("importlib.import_module", "__import__", "builtins.__import__"):
        return None
    module = const_str(node.args[0])
    if not module or not all(p.isidentifier() for p in module.split(".")):
        return None
    return module if func == "importlib.import_module" else module.split(".")[0]


def dotted(node: ast.AST, aliases: dict[str, str]) -> str:
    """`a.b.c` for a Name/Attribute chain (root resolved through imports), else "".
    `sys.modules["pytest"].x` reads as `pytest.x`, `getattr(os, "_" + "exit")` as `os._exit`,
    `__import__("o" + "s")._exit` as `os._exit`."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if (root := _imported_root(node)) is not None:
        return ".".join([root, *reversed(parts)])
    if (  # getattr(os, "_" + "exit") is os._exit, however the name is spelled
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "getattr"
        and len(node.args) >= 2
        and (attr := const_str(node.args[1])) is not None
        and attr.isidentifier()
    ):
        root = dotted(node.args[0], aliases)
        return ".".join([root, attr, *reversed(parts)]) if root else ""
    if isinstance(node, ast.Call):  # Path("x").read_text() -> Path.read_text
        return dotted(node.func, aliases) + ("." + ".".join(reversed(parts)) if parts else "")
    if (
        isinstance(node, ast.Subscript)
        and dotted(node.value, aliases) == "sys.modules"
        and (key := const_str(node.slice)) is not None
    ):
        return ".".join([key, *reversed(parts)])
    if not isinstance(node, ast.Name):
        return ""
    root = aliases.get(node.id, node.id)
    return unvendored(".".join([root, *reversed(parts)]))


# where `shutil.which(NAME)`, `command -v NAME` or `which NAME` finds a program: a directory
# on PATH (the interpreter's own in the usual images), so a path built from it is judged as one
PATH_DIR = "/usr/local/bin"
# Stands for the interpreter's own site-packages, wherever a call would find it.
SITE_PACKAGES = "/usr/lib/python3/site-packages"
_SITE_CALLS = frozenset(
    {"site.getsitepackages", "site.getusersitepackages", "sysconfig.get_paths"}
    | {"sysconfig.get_path", "distutils.sysconfig.get_python_lib", "site.getuserbase"}
)
_SITE_NAMES = frozenset({"site.USER_SITE", "site.PREFIXES"})
# An installed distribution's files lie under site-packages (`locate_file` joins onto it).
_DISTRIBUTION_CALLS = frozenset(
    {"importlib.metadata.distribution", "importlib.metadata.Distribution.from_name"}
    | {"importlib_metadata.distribution", "pkg_resources.get_distribution"}
)
# Installed modules whose `__file__` is the test runner's own code.
_RUNNER_MODULES = frozenset({"pytest", "_pytest", "pluggy", "coverage"})
_JOINS = frozenset({"os.path.join", "posixpath.join", "Path", "pathlib.Path", "PurePath"})
_SAME_PATH = frozenset(
    {"str", "os.fspath", "os.path.abspath", "os.path.realpath", "os.path.expanduser"}
    | {"os.path.normpath", "pathlib.Path.resolve"}
)
_PATH_METHODS = frozenset(
    {"read_text", "read_bytes", "open", "write_text", "write_bytes", "unlink", "rmdir"}
    | {"rename", "replace", "touch", "mkdir", "iterdir", "glob", "rglob"}
)


_PREFIXES = frozenset({"sys.prefix", "sys.exec_prefix", "sys.base_prefix", "sys.base_exec_prefix"})


def _is_interpreter(node: ast.AST, aliases: dict[str, str]) -> bool:
    """Whether `node` is the interpreter's path (`sys.executable`, `Path(sys.executable)`)."""
    if isinstance(node, ast.Call) and dotted(node.func, aliases) in _JOINS | _SAME_PATH:
        return len(node.args) == 1 and _is_interpreter(node.args[0], aliases)
    return dotted(node, aliases) == "sys.executable"


def printed_location(code: str) -> str | None:
    """The path a one-line program prints when it is one of the interpreter's own locations
    (`import site; print(site.getsitepackages()[0])` prints site-packages); else None."""
    tree = parse_python(code)
    if tree is None or not tree.body:
        return None
    last = tree.body[-1]
    if not (
        isinstance(last, ast.Expr)
        and isinstance(last.value, ast.Call)
        and isinstance(last.value.func, ast.Name)
        and last.value.func.id == "print"
        and len(last.value.args) == 1
    ):
        return None
    printed = const_str(last.value.args[0], aliases=aliases_of(tree))
    return printed if printed and printed.startswith("/") and "*" not in printed else None


def _join(parts: list[str]) -> str:
    """`os.path.join` semantics: an absolute part restarts the path."""
    out = ""
    for part in parts:
        out = part if part.startswith("/") or not out else out.rstrip("/") + "/" + part
    return out


def const_str(
    node: ast.AST | None,
    env: dict[str, str] | None = None,
    aliases: dict[str, str] | None = None,
    loose: bool = False,
) -> str | None:
    """The string value of a literal, a concatenation, an f-string (holes as `*`), a path
    join, `str.join` of constants, a name bound earlier to one of those (`env`), or one of
    the interpreter's own locations; None if not constant. `loose` lets an unknown part of
    a concatenation or join stand as `*` when another part is known."""
    env = env or {}
    aliases = aliases or {}

    def value(n: ast.AST | None) -> str | None:
        return const_str(n, env, aliases, loose)

    def part(n: ast.AST) -> str | None:
        v = value(n)
        return "*" if v is None and loose else v

    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.Name):
        return env.get(node.id)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div | ast.Add):
        left, right = value(node.left), value(node.right)
        if left is None and right is None:
            return None
        left, right = (
            (left if left is not None else part(node.left)),
            (right if right is not None else part(node.right)),
        )
        if left is None or right is None:
            return None
        return _join([left, right]) if isinstance(node.op, ast.Div) else left + right
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):  # `"*/" * 2`
        for text, count in ((node.left, node.right), (node.right, node.left)):
            word = value(text)
            times = count.value if isinstance(count, ast.Constant) else None
            if word is not None and isinstance(times, int) and 0 <= times <= 64:
                return word * times
        return None
    if isinstance(node, ast.JoinedStr):
        return "".join(v.value if isinstance(v, ast.Constant) else "*" for v in node.values)
    if isinstance(node, ast.Subscript):
        inner = node.value
        if dotted(inner, aliases) == "os.environ":  # `$NAME`: the reader resolves it if known
            key = value(node.slice)
            return f"${key}" if key and key.isidentifier() else None
        if isinstance(inner, ast.Call) and dotted(inner.func, aliases) in _SITE_CALLS:
            return PATH_DIR if value(node.slice) == "scripts" else SITE_PACKAGES
        if isinstance(inner, ast.Call) and dotted(inner.func, aliases) in ("glob.glob", "sorted"):
            return value(inner.args[0]) if inner.args else None  # glob.glob(p)[0]: p
        return None
    if isinstance(node, ast.Attribute):
        name = dotted(node, aliases)
        if name in env:  # an attribute bound earlier (`self.spec = root / "tests"`)
            return env[name]
        if name in _SITE_NAMES:
            return SITE_PACKAGES
        if name == "sys.executable":  # `[sys.executable, "-m", "pip", ...]` runs Python
            return "python3"
        if name in _PREFIXES:  # `sys.prefix + '/bin/pytest'` is the runner's launcher
            return PATH_DIR.rsplit("/", 1)[0]
        if node.attr == "__file__":
            module = dotted(node.value, aliases)
            if module.split(".")[0] in _RUNNER_MODULES:
                return f"{SITE_PACKAGES}/{module.replace('.', '/')}.py"
        if node.attr == "path" and isinstance(node.value, ast.Name) and node.value.id in env:
            return env[node.value.id]  # a directory entry from os.scandir
        if node.attr == "parent":
            if _is_interpreter(node.value, aliases):
                return PATH_DIR
            base = value(node.value)
            return base.rsplit("/", 1)[0] if base and "/" in base else None
        return None
    if not isinstance(node, ast.Call):
        return None
    name = dotted(node.func, aliases)
    if name in _SITE_CALLS and node.args and value(node.args[0]) == "scripts":
        return PATH_DIR  # `sysconfig.get_path("scripts")`: where the launchers are
    if name in _SITE_CALLS or name in _DISTRIBUTION_CALLS:
        return SITE_PACKAGES
    if name == "shutil.which" and node.args and (program := value(node.args[0])):
        return f"{PATH_DIR}/{program.rsplit('/', 1)[-1]}"
    if name in ("os.environ.get", "os.getenv") and node.args:
        key = value(node.args[0])
        return f"${key}" if key and key.isidentifier() else None
    if name in _SAME_PATH and node.args:
        return value(node.args[0])
    if name == "os.path.dirname" and node.args:
        if _is_interpreter(node.args[0], aliases):
            return PATH_DIR  # the interpreter's directory holds the runner's launcher
        base = value(node.args[0])
        return base.rsplit("/", 1)[0] if base and "/" in base else None
    func = node.func
    joined = node.args if name in _JOINS else []
    if isinstance(func, ast.Attribute) and func.attr == "joinpath":  # `p.joinpath("a", "b")`
        joined = [func.value, *node.args]
    if joined:
        known = [value(a) for a in joined]
        if loose and known[0] is None and any(k is not None for k in known[1:]):
            known[0] = "*"  # `os.path.join(here, "tests", "x.py")`: an unknown base
        parts = [
            known[0],
            *(k if k is not None else part(a) for k, a in zip(known[1:], joined[1:])),
        ]
        if all(p is not None for p in parts):
            return _join(parts)  # type: ignore[arg-type]
        return None
    if (
        isinstance(func, ast.Attribute)
        and func.attr == "join"
        and isinstance(func.value, ast.Constant)
        and isinstance(func.value.value, str)
        and len(node.args) == 1
        and isinstance(node.args[0], ast.List | ast.Tuple)
    ):
        items = [value(e) for e in node.args[0].elts]
        if all(i is not None for i in items):
            return func.value.value.join(items)  # type: ignore[arg-type]
    if isinstance(func, ast.Attribute) and func.attr in ("resolve", "absolute", "expanduser"):
        return value(func.value)
    if isinstance(func, ast.Attribute) and func.attr == "locate_file" and len(node.args) == 1:
        base, rest = value(func.value), value(node.args[0])
        return _join([base, rest]) if base is not None and rest is not None else None
    return None


def _loop_paths(node: ast.For, env: dict[str, str], aliases: dict[str, str]) -> dict[str, str]:
    """What a `for` loop's variables stand for when it walks a directory or a glob:
    `for p in glob.glob("/g/*.py")` -> p = "/g/*.py"; `for root, _, files in os.walk(d)`
    -> root = d; `for p in base.iterdir()` -> p = base/*."""
    it = node.iter
    if not isinstance(it, ast.Call):
        return {}
    name = dotted(it.func, aliases)
    arg = const_str(it.args[0], env, aliases) if it.args else None
    found: str | None = None
    if name in ("glob.glob", "glob.iglob") and arg:
        found = arg
    elif name in ("os.listdir", "os.scandir") and arg:
        found = _join([arg, "*"])
    elif isinstance(it.func, ast.Attribute) and it.func.attr in ("iterdir", "glob", "rglob"):
        base = const_str(it.func.value, env, aliases)
        if base is not None:
            found = _join([base, arg or "*"])
    elif name == "os.walk" and arg and isinstance(node.target, ast.Tuple):
        first = node.target.elts[0]
        return {first.id: arg} if isinstance(first, ast.Name) else {}
    if found is not None and isinstance(node.target, ast.Name):
        return {node.target.id: found}
    return {}


def _constant_names(tree: ast.AST, aliases: dict[str, str] | None = None) -> dict[str, str]:
    """Names bound, in source order, to constant strings or paths: enough to follow a path
    that is built in steps (`d = "." + "mypy_cache"; p = os.path.join(d, "x")`, `s += "..."`),
    a loop over a directory, or a file opened in a `with` block."""
    aliases = aliases or {}
    env: dict[str, str] = {}
    kinds = ast.Assign | ast.AugAssign | ast.For | ast.With
    nodes = [n for n in walk(tree) if isinstance(n, kinds)]
    for node in sorted(nodes, key=lambda n: (n.lineno, n.col_offset)):
        if isinstance(node, ast.AugAssign):
            # `src += "..."` appends the agent's text to whatever `src` held (unknown: `*`)
            added = const_str(node.value, env, aliases, loose=True)
            if isinstance(node.target, ast.Name) and isinstance(node.op, ast.Add) and added:
                env[node.target.id] = env.get(node.target.id, "*") + added
        elif isinstance(node, ast.Assign) and len(node.targets) == 1:
            target = node.targets[0]
            value = const_str(node.value, env, aliases, loose=True)
            if isinstance(target, ast.Name) and value is not None:
                env[target.id] = value
        elif isinstance(node, ast.For):
            env |= _loop_paths(node, env, aliases)
        elif isinstance(node, ast.With):
            for item in node.items:
                call, var = item.context_expr, item.optional_vars
                if isinstance(call, ast.Call) and isinstance(var, ast.Name) and call.args:
                    opened = const_str(call.args[0], env, aliases, loose=True)
                    if opened is not None and dotted(call.func, aliases) in ("open", "io.open"):
                        env[f"{var.id}.__file__"] = opened
    return env


_DELETE_CALLS = frozenset(
    {"os.remove", "os.unlink", "shutil.rmtree", "os.rmdir", "os.removedirs"}
    | {"os.rename", "os.replace", "shutil.move", "os.renames"}
)
# Calls that load or read what they are given, whatever library they come from.
_LOADING = re.compile(r"load|open|read|import|Loader|exec|run_path|spec_from|decompile", re.I)


def _module_level(tree: ast.Module) -> list[ast.AST]:
    """Nodes that run when the module is imported: not inside function bodies."""
    out: list[ast.AST] = []
    todo: list[ast.AST] = [tree]
    while todo:
        node = todo.pop()
        out.append(node)
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
                todo.extend(getattr(child, "decorator_list", []))
            else:
                todo.append(child)
    return out


def _mode(node: ast.Call, env: dict[str, str], first: int) -> str:
    args = [const_str(a, env) for a in node.args[first:]]
    mode = args[0] if args else None
    keyword = next((k.value for k in node.keywords if k.arg == "mode"), None)
    return mode or (const_str(keyword, env) if keyword is not None else None) or "r"


def code_effects(code: str, imported: bool = False) -> CodeEffects:
    """What running `code` would do, as far as constants tell. `imported`: only what runs
    when the code is imported as a module (function bodies run only if called)."""
    tree = parse_python(code)
    effects = CodeEffects()
    if tree is None:
        effects.urls = re.findall(r"https?://[^\s'\"]+", code)
        return effects
    aliases = aliases_of(tree)
    env = _constant_names(tree, aliases)
    effects.imports = {v for v in aliases.values()}

    # argv lists bound to a name before the call (`cmd = ["git", "log"]; run(cmd)`)
    argv_lists = name_bindings(tree, (ast.List, ast.Tuple))

    def path_of(n: ast.AST | None) -> str | None:
        return const_str(n, env, aliases, loose=True)

    for node in _module_level(tree) if imported else walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            effects.urls.extend(re.findall(r"https?://[^\s'\"]+", node.value))
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        # a method on a computed receiver (`(Path("..") / "x").read_text()`) has no dotted
        # name; its path methods are still followed
        name = dotted(func, aliases) or (
            f"?.{func.attr}" if isinstance(func, ast.Attribute) else ""
        )
        if isinstance(func, ast.Attribute) and func.attr == "write" and node.args:
            # open(p, "w").write(text), or f.write(text) inside `with open(p, "w") as f`
            target = func.value
            opened = None
            if isinstance(target, ast.Call) and dotted(target.func, aliases) in ("open", "io.open"):
                opened = path_of(target.args[0]) if target.args else None
            elif isinstance(target, ast.Name):
                opened = env.get(f"{target.id}.__file__")
            if opened is not None:
                _record_content(effects, opened, node.args[0], env, aliases)
        if not name:
            continue
        effects.calls.add(name)
        first = node.args[0] if node.args else None
        if name in _SUBPROCESS and first is not None:
            if isinstance(first, ast.Name) and first.id in argv_lists:
                first = argv_lists[first.id]
            if isinstance(first, ast.List | ast.Tuple):
                argv = [const_str(e, env, aliases, loose=True) or "*" for e in first.elts]
                effects.commands.append(argv)
            elif (text := const_str(first, env, aliases)) is not None:
                effects.commands.append(text)
            continue
        args = [path_of(a) for a in node.args]
        method = func.attr if isinstance(func, ast.Attribute) else ""
        on_path = path_of(func.value) if method in _PATH_METHODS else None  # type: ignore[union-attr]
        if name in _DELETE_CALLS or (
            on_path and method in ("unlink", "rmdir", "rename", "replace")
        ):
            source = on_path if on_path else (args[0] if args else None)
            rest = args if on_path else args[1:]
            if source is not None:
                effects.deletes.append(source)
            moved_to = rest[0] if rest else None
            if moved_to is not None and any(w in name for w in ("rename", "move", "replace")):
                effects.writes.append(moved_to)
            continue
        if on_path and method in ("write_text", "write_bytes", "touch", "mkdir"):
            effects.writes.append(on_path)
            if method == "write_text" and node.args:
                _record_content(effects, on_path, node.args[0], env, aliases)
            continue
        if on_path and method in ("read_text", "read_bytes", "iterdir", "glob", "rglob"):
            effects.reads.append(on_path)
            continue
        if on_path and method == "open":
            mode = _mode(node, env, 0)
            (effects.writes if any(c in mode for c in "wax") else effects.reads).append(on_path)
            continue
        if name in READ_CALLS:
            # spec_from_file_location(name, location) reads its second argument
            at = 1 if name.endswith("spec_from_file_location") else 0
            path = args[at] if len(args) > at else None
            if path is None:
                continue
            mode = _mode(node, env, 1) if name in ("open", "io.open", "codecs.open") else "r"
            (effects.writes if any(c in mode for c in "wax") else effects.reads).append(path)
            if name.startswith("shutil.copy") and len(args) > 1 and args[1] is not None:
                effects.writes.append(args[1])
        elif _LOADING.search(name.rsplit(".", 1)[-1]):
            effects.reads.extend(a for a in args if a is not None and "/" in a)
    for path in effects.contents:
        if path not in effects.writes:
            effects.writes.append(path)
    for inner in _executed_code(tree, env, aliases, imported):
        _merge(effects, code_effects(inner, imported))
    return effects


_EXEC_CALLS = frozenset({"exec", "eval", "compile", "builtins.exec", "builtins.eval"})


def _executed_code(
    tree: ast.Module, env: dict[str, str], aliases: dict[str, str], imported: bool
) -> list[str]:
    """Constant code run through exec/eval/compile: it runs as if written out."""
    nodes = _module_level(tree) if imported else walk(tree)
    return [
        code
        for n in nodes
        if isinstance(n, ast.Call) and dotted(n.func, aliases) in _EXEC_CALLS and n.args
        for code in [const_str(n.args[0], env, aliases)]
        if code
    ]


def _merge(into: CodeEffects, more: CodeEffects) -> None:
    into.imports |= more.imports
    into.calls |= more.calls
    into.commands += more.commands
    into.reads += more.reads
    into.writes += more.writes
    into.deletes += more.deletes
    into.urls += more.urls
    into.contents |= more.contents
    into.fragments |= more.fragments


def _record_content(
    effects: CodeEffects, path: str, text: ast.AST, env: dict[str, str], aliases: dict[str, str]
) -> None:
    """Note what a write puts into `path`: the whole text when it is constant, else the
    constant parts the agent wrote itself (an append, `old + "..."`) as a fragment."""
    whole = const_str(text, env, aliases)
    if whole is not None:
        effects.contents[path] = whole
    elif (parts := const_str(text, env, aliases, loose=True)) is not None:
        effects.contents[path] = parts
        effects.fragments.add(path)
