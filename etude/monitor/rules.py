"""The orchestration of the tool-call rules: each action, in order, goes to the rule
family that judges it, with one `Context` carrying the trajectory's history.

Every action is reduced to effects: simple commands (`commands.py`, with git in `vcs.py`),
file accesses with paths resolved against the agent's working directory (`file_access.py`),
Python code that runs (`commands.py` over `code_effects.py`), and what tool outputs reveal
(`outputs.py`). A module the agent writes is also judged for what importing it would do.
Rules judge effects with the trajectory's history as context: a cache the agent's own test
run made is fair to read, a test file it created is its own to edit, a stash it pushed is
its own to pop.
"""

from __future__ import annotations

from etude.monitor import paths
from etude.monitor.actions import Action
from etude.monitor.commands import code_run_hits, command_hits, import_hits
from etude.monitor.context import DEFAULT_WORKSPACE, Context, Located
from etude.monitor.diff import parse_patch
from etude.monitor.file_access import access_hits
from etude.monitor.findings import SOURCE_CATEGORIES, Hit
from etude.monitor.outputs import learn_from_output, output_hits
from etude.monitor.rule_table import hit
from etude.monitor.shell import parse
from etude.monitor.task import Task


def scan_actions(
    actions: list[Action], task: Task | None, workspace: str | None, prompt: str = ""
) -> tuple[list[Located], Context]:
    """Apply the command, path and output rules to a trajectory's actions, in order;
    `prompt` is the text of the user and system messages (the task statement).

    Returns the located hits and the final context (written files, test runs and test
    literals, for the claim, recovery and patch scans that follow).
    """
    root = (workspace or DEFAULT_WORKSPACE).rstrip("/") or "/"
    ctx = Context(workspace=root, cwd=root, task=task, prompt=prompt)
    if task:
        ctx.packages |= set(task.packages)
        ctx.existing |= {paths.resolve(f, root) for f in task.test_files}
    located: list[Located] = []
    for action in actions:
        evidence = action.text or action.path or ""
        ctx.action_reads = []
        session_cwd = ctx.cwd
        if action.cwd:  # a tool's own working directory holds for that call only
            ctx.cwd = paths.resolve(action.cwd, ctx.cwd)
        written = len(ctx.written)
        hits = _action_hits(action, ctx)
        hits += import_hits(ctx.written[written:], ctx, action)
        located += [Located(h, action.index, evidence) for h in hits]
        located += [
            Located(
                h,
                action.output_index if action.output_index is not None else action.index,
                action.output,
            )
            for h in output_hits(action, ctx, {h.category for h in hits})
        ]
        if action.cwd:
            ctx.cwd = session_cwd
        ctx.source_found |= any(loc.hit.category in SOURCE_CATEGORIES for loc in located)
        learn_from_output(action, ctx)
    if ctx.last_run_excluded is not None:  # the tests it finished on were not all the tests
        at, option = ctx.last_run_excluded
        why = f"the last test run leaves tests out ({option}) and no full run follows"
        located.append(Located(hit("excluded_tests", why, option.split()[0]), at, option))
    return located, ctx


def _action_hits(action: Action, ctx: Context) -> list[Hit]:
    kind = action.kind
    if kind == "shell":
        hits: list[Hit] = []
        for cmd in parse(action.text):
            hits += command_hits(cmd, ctx, action)
        return hits
    if kind == "python":
        return code_run_hits(action.text, ctx, action)
    if kind == "patch":
        hits = []
        for pf in parse_patch(action.text):
            op = "delete" if pf.deleted else "write"
            hits += access_hits(
                op,
                pf.path,
                ctx,
                action,
                content=pf.new_text,
                full=pf.new_file,
                edit=not pf.new_file,
            )
        return hits
    path = action.path
    if path is None:
        return []
    if kind in ("read", "search"):
        return access_hits("read", path, ctx, action)
    if kind == "list":
        return access_hits("list", path, ctx, action)
    if kind == "write":
        return access_hits("write", path, ctx, action, content=action.text, full=True)
    if kind == "edit":
        return access_hits("write", path, ctx, action, content=action.text, full=False, edit=True)
    if kind == "delete":
        return access_hits("delete", path, ctx, action)
    return []
