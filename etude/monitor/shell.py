"""Split a shell script into simple commands: argv, redirections and here-document bodies.

Built on the stdlib `shlex` (POSIX quoting, with `punctuation_chars` splitting `|`, `&&`,
`;`, `>`) plus a small scanner for what shlex leaves alone: line continuations, newlines as
command separators, here-documents, and command substitutions `$(...)`/backticks, which are
parsed as commands of their own. Shell variables assigned to a constant (`G=git`) are
expanded in later words (`$G log`), and a substitution whose output is known without
running anything (`$(printf 'cu%s' rl)`, `$(echo git)`) is replaced by that output, so a
command assembled at run time is judged by what it runs. Wrappers (`sudo`, `env`,
`timeout 5`, `xargs`, `bash -c`, `find -exec`) are unwrapped so the rules see the command
that actually runs.
"""

from __future__ import annotations

import base64
import binascii
import re
import shlex
from dataclasses import dataclass, field

from etude.monitor.code_effects import PATH_DIR, printed_location

SEPARATORS = frozenset({"|", "||", "&&", ";", "&", "|&", ";;", "(", ")", "{", "}", "!"})
REDIRECTS = frozenset({">", ">>", "<", "<<", "<<<", ">&", "&>", "&>>", ">|", "<>", "<&"})
# multi-call binaries (`busybox wget`) run their first argument like a wrapper does
_WRAPPERS_NO_ARGS = frozenset(
    {"nohup", "command", "exec", "builtin", "time", "then", "busybox", "toybox"}
)
# shell keywords that open a command list: the word after one is in command position
_KEYWORDS = frozenset({"then", "do", "else", "elif", "!"})
_WRAPPERS = frozenset(
    {"sudo", "nohup", "command", "exec", "builtin", "time", "nice", "timeout", "env", "stdbuf"}
    | {"ionice", "chroot", "then", "do", "else", "xargs", "watch", "strace", "ltrace"}
    | {"busybox", "toybox"}
)
_SHELLS = frozenset({"bash", "sh", "zsh", "dash", "ksh"})
_HEREDOC = re.compile(r"<<(-?)\s*(['\"]?)([A-Za-z_][\w.-]*)\2")
_ASSIGNMENT = re.compile(r"^[A-Za-z_]\w*=")
_VARIABLE = re.compile(r"\$\{(\w+)\}|\$(\w+)")
MAX_DEPTH = 4


@dataclass
class SimpleCommand:
    """One command of a pipeline. `argv[0]` is the program (wrappers removed); `stdin` is a
    here-document or here-string body fed to it; `pipe_from` is the previous command of the
    pipeline (its paths stand in for file arguments that `xargs` would supply);
    `stdout_to` is where its standard output goes when redirected (`> /dev/null`, `&> log`;
    `2> x` redirects only errors), else None."""

    argv: list[str]
    redirects: list[tuple[str, str]] = field(default_factory=list)
    stdout_to: str | None = None
    env: dict[str, str] = field(default_factory=dict)
    stdin: str | None = None
    pipe_from: SimpleCommand | None = None

    @property
    def program(self) -> str:
        return self.argv[0].rsplit("/", 1)[-1] if self.argv else ""


def parse(script: str, depth: int = 0) -> list[SimpleCommand]:
    """All simple commands of `script`, including those in substitutions and `bash -c`."""
    if depth > MAX_DEPTH or not script.strip():
        return []
    script, heredocs = _cut_heredocs(script)
    script, substitutions = _cut_substitutions(script)
    commands: list[SimpleCommand] = []
    for inner, quoted in substitutions:
        commands.extend(parse(inner, depth + 1))
        known = static_output(inner)
        if known is not None:  # the placeholders are in order: replace the first left
            # inside double quotes the output stays one word; outside it is quoted as one
            word = known.replace("\\", "\\\\").replace('"', '\\"') if quoted else shlex.quote(known)
            script = script.replace("__SUBST__", word, 1)
        else:
            script = script.replace("__SUBST__", "__SUBST_KEEP__", 1)
    script = script.replace("__SUBST_KEEP__", "__SUBST__")
    variables: dict[str, str] = {}
    try:
        lexer = shlex.shlex(script, posix=True, punctuation_chars=True)
        lexer.whitespace_split = True
        lexer.commenters = ""
        tokens = list(lexer)
    except ValueError:  # an unclosed quote: fall back to whitespace words
        tokens = script.replace(";", " ; ").replace("|", " | ").split()
    current = SimpleCommand([])
    previous: SimpleCommand | None = None
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        if tok in SEPARATORS:
            previous = current if tok in ("|", "|&") and current.argv else None
            if not current.argv:  # `G=git;` sets a shell variable for later commands
                variables |= current.env
            elif current.argv[0] == "for" and len(current.argv) > 3 and current.argv[2] == "in":
                variables[current.argv[1]] = current.argv[3]  # `for u in A B; do`: judged on A
            commands.extend(_finish(current, depth))
            current = SimpleCommand([], pipe_from=previous)
        elif tok in REDIRECTS or (
            tok.isdigit() and i + 1 < len(tokens) and tokens[i + 1][:1] in "<>"
        ):
            fd = "1"
            if tok.isdigit():
                fd = tok
                i += 1
                tok = tokens[i]
            target = tokens[i + 1] if i + 1 < len(tokens) else ""
            i += 1
            if tok in (">", ">>", ">|", "&>", "&>>") and fd == "1":
                current.stdout_to = target
            if tok in ("<<", "<<-") and target in heredocs:
                current.stdin = heredocs[target]
            elif tok == "<<<":
                current.stdin = target
            else:
                current.redirects.append((tok, target))
        elif not current.argv and _ASSIGNMENT.match(tok):
            name, _, value = tok.partition("=")
            current.env[name] = _expand(value, variables)
        else:
            word = _expand(tok, variables)
            leading = all(w in _KEYWORDS for w in current.argv)  # nothing before it but `do`
            if leading and word != tok and len(word.split()) > 1:
                current.argv += word.split()  # `DL="wget -qO-"; $DL url`: a program and options
            else:
                current.argv.append(word)
        i += 1
    commands.extend(_finish(current, depth))
    return commands


def _expand(word: str, variables: dict[str, str]) -> str:
    """`word` with `$NAME`/`${NAME}` replaced by the constant values assigned earlier."""
    if "$" not in word or not variables:
        return word
    return _VARIABLE.sub(lambda m: variables.get(m.group(1) or m.group(2), m.group(0)), word)


def static_output(script: str) -> str | None:
    """What `script` prints when that is known without running it: `echo` and `printf`
    of constant words (`printf 'cu%s' rl` is `curl`), `dirname`/`basename` of one, where
    `command -v`/`which` finds a program (`PATH_DIR`), and a `python -c` that prints one of
    the interpreter's locations (site-packages); None otherwise."""
    if "$(" in script or "`" in script:  # `dirname "$(command -v python)"`: inside first
        script, substitutions = _cut_substitutions(script)
        for inner, quoted in substitutions:
            known = static_output(inner)
            if known is None:
                return None
            script = script.replace("__SUBST__", known if quoted else shlex.quote(known), 1)
    try:
        words = shlex.split(script)
    except ValueError:
        return None
    if len(words) == 3 and re.fullmatch(r"python[\d.]*", words[0].rsplit("/", 1)[-1]):
        return printed_location(words[2]) if words[1] == "-c" else None
    if not words or any(c in script for c in "|;&<>$`"):
        return None
    if words[:2] in (["command", "-v"], ["type", "-P"], ["type", "-p"]) and len(words) == 3:
        return f"{PATH_DIR}/{words[2].rsplit('/', 1)[-1]}"
    if words[0] == "which" and len(words) == 2:
        return f"{PATH_DIR}/{words[1].rsplit('/', 1)[-1]}"
    if words[0] in ("dirname", "basename") and len(words) == 2:
        head, _, tail = words[1].rstrip("/").rpartition("/")
        return (head or "/") if words[0] == "dirname" else tail
    if words[0] == "echo":
        return " ".join(w for w in words[1:] if w not in ("-n", "-e"))
    if words[0] == "printf" and len(words) > 1:
        fmt, args = words[1], words[2:]
        holes = fmt.count("%s")
        if holes != len(args) or "%" in fmt.replace("%s", ""):
            return None
        return (fmt.replace("%s", "{}").format(*args) if holes else fmt).replace("\\n", "\n")
    return None


def _xargs(argv: list[str], placeholder: str | None, source: SimpleCommand | None) -> list[str]:
    """The command xargs runs when its input is known (`echo 3f2a91c | xargs -I% git show
    %:f`): the input replaces the placeholder, or is appended; else `argv` unchanged."""
    known = None
    if source is not None and source.program in ("echo", "printf"):
        known = static_output(shlex.join(source.argv))
    if known is None or not known.split():
        return argv
    if placeholder:
        return [a.replace(placeholder, known.split()[0]) for a in argv]
    return [*argv, *known.split()]


def _decoded_input(source: SimpleCommand | None) -> str | None:
    """What `base64 -d` prints when it decodes a constant (`echo X | base64 -d`)."""
    if source is None or source.program != "base64" or not {"-d", "--decode"} & set(source.argv):
        return None
    feed = source.pipe_from
    text = static_output(shlex.join(feed.argv)) if feed is not None and feed.argv else None
    if text is None:
        return None
    try:
        return base64.b64decode(text.strip(), validate=True).decode()
    except (binascii.Error, UnicodeDecodeError):
        return None


def _finish(cmd: SimpleCommand, depth: int) -> list[SimpleCommand]:
    """Unwrap wrappers and nested shells; returns the command(s) that actually run."""
    argv = cmd.argv
    while argv and argv[0].rsplit("/", 1)[-1] in _WRAPPERS:
        wrapper = argv[0].rsplit("/", 1)[-1]
        if wrapper == "command" and argv[1:2] in (["-v"], ["-V"]):
            break  # `command -v x` looks a program up, it runs nothing
        argv = argv[1:]
        if wrapper in _WRAPPERS_NO_ARGS:
            continue
        placeholder = None
        while argv and (argv[0].startswith("-") or _ASSIGNMENT.match(argv[0])):
            # options of the wrapper; `timeout -s KILL 5`, `xargs -I{} -n 1`
            takes_value = argv[0] in ("-s", "-k", "-n", "-I", "-P", "-d", "-L", "-u", "-o")
            if wrapper == "xargs" and argv[0].startswith("-I"):
                placeholder = argv[0][2:] or (argv[1] if len(argv) > 1 else None)
            argv = argv[2:] if takes_value and len(argv) > 1 else argv[1:]
        if wrapper == "xargs":
            argv = _xargs(argv, placeholder, cmd.pipe_from)
        if (
            wrapper in ("timeout", "nice", "watch")
            and argv
            and re.match(r"^[\d.]+[smhd]?$", argv[0])
        ):
            argv = argv[1:]
    if not argv:
        return [] if cmd.stdin is None and not cmd.redirects else [cmd]
    cmd.argv = argv
    program = cmd.program
    nested: list[SimpleCommand] = []
    if program in _SHELLS:
        # `-c`, also combined with other short options (`bash -lc`, `sh -ec`)
        flag = next(
            (k for k, a in enumerate(argv[1:-1], 1) if re.fullmatch(r"-[a-z]*c[a-z]*", a)), 0
        )
        if flag:
            nested = parse(argv[flag + 1], depth + 1)
        elif cmd.stdin is not None and len(argv) == 1:
            nested = parse(cmd.stdin, depth + 1)
        elif len(argv) == 1 and (decoded := _decoded_input(cmd.pipe_from)) is not None:
            nested = parse(decoded, depth + 1)  # `echo Z2l0... | base64 -d | sh`
    elif program == "eval":
        nested = parse(" ".join(argv[1:]), depth + 1)
    elif program == "find":
        for flag in ("-exec", "-execdir", "-ok", "-okdir"):
            if flag in argv:
                start = argv.index(flag) + 1
                rest = argv[start:]
                end = next(
                    (k for k, a in enumerate(rest) if a in ("__SEMI__", ";", "+")), len(rest)
                )
                inner = [a for a in rest[:end] if a != "{}"]
                if inner:
                    nested.append(SimpleCommand(inner, pipe_from=SimpleCommand(argv[:start])))
    return [cmd, *nested]


def _cut_heredocs(script: str) -> tuple[str, dict[str, str]]:
    """Remove here-document bodies; each `<<EOF` becomes `<< __HEREDOCn__` with its body."""
    if "<<" not in script:
        return script, {}
    lines = script.split("\n")
    out: list[str] = []
    bodies: dict[str, str] = {}
    i = 0
    while i < len(lines):
        line = lines[i]
        pending: list[tuple[str, str, bool]] = []

        def mark(m: re.Match, line: str = line, pending: list = pending) -> str:
            if m.start() > 0 and line[m.start() - 1] == "<":  # `<<<` here-string
                return m.group(0)
            key = f"__HEREDOC{len(bodies)}__"
            bodies[key] = ""
            pending.append((key, m.group(3), bool(m.group(1))))
            return f"<< {key}"

        out.append(_HEREDOC.sub(mark, line))
        i += 1
        for key, word, strip_tabs in pending:
            body: list[str] = []
            while i < len(lines):
                candidate = lines[i].lstrip("\t") if strip_tabs else lines[i]
                i += 1
                if candidate.strip() == word:
                    break
                body.append(lines[i - 1])
            bodies[key] = "\n".join(body)
    return "\n".join(out), bodies


def _cut_substitutions(script: str) -> tuple[str, list[tuple[str, bool]]]:
    """Replace `$(...)` and backtick substitutions (outside single quotes) with a word, and
    turn line continuations and unquoted newlines into spaces and `;`. Returns the script
    and each substitution's text with whether it sat inside double quotes."""
    out: list[str] = []
    inner: list[tuple[str, bool]] = []
    quote = ""
    i = 0
    n = len(script)
    while i < n:
        c = script[i]
        if c == "\\" and i + 1 < n:
            if script[i + 1] == "\n":
                i += 2
                continue
            if script[i + 1] == ";" and not quote:  # `find -exec ... \;` terminator
                out.append(" __SEMI__ ")
                i += 2
                continue
            out.append(script[i : i + 2])
            i += 2
            continue
        if quote == "'":
            if c == "'":
                quote = ""
            out.append(c)
        elif c == "$" and script.startswith("$(", i) and not script.startswith("$((", i):
            depth, j = 1, i + 2
            while j < n and depth:
                depth += {"(": 1, ")": -1}.get(script[j], 0)
                j += 1
            inner.append((script[i + 2 : j - 1], quote == '"'))
            out.append("__SUBST__")
            i = j
            continue
        elif c == "`":
            j = script.find("`", i + 1)
            j = n if j < 0 else j
            inner.append((script[i + 1 : j], quote == '"'))
            out.append("__SUBST__")
            i = j + 1
            continue
        elif c in "'\"" and (not quote or quote == c):
            quote = "" if quote else c
            out.append(c)
        elif c == "\n" and not quote:
            out.append(" ; ")
        elif c == "#" and not quote and (i == 0 or script[i - 1] in " \t;\n"):
            while i < n and script[i] != "\n":  # a comment runs to the end of the line
                i += 1
            continue
        else:
            out.append(c)
        i += 1
    return "".join(out), inner
