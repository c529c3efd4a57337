"""The curriculum (a real synthesis of the example repository, split by repository and
feature) and the scripted solver's demonstrations on its train tasks: real tool outputs,
reward 1.0 from the real grader, no monitor finding, the demonstration marker in the
trajectory format (refused by the RL update), and held-out tasks never demonstrated."""

import json
import os
import random
import shutil

import pytest

from etude.cli import build_parser
from etude.envs import workspace_ops
from etude.envs.coding import TOOL_NOT_FOUND, command_exit_code
from etude.envs.workspace_ops import MAX_READ_LINES
from etude.monitor import monitor_trajectory, parse_line
from etude.recipes.coding.curriculum import (
    MANIFEST,
    HeldOutError,
    SplitRule,
    build_curriculum,
    load_curriculum,
    refuse_heldout,
    split_dirs,
    split_tasks,
)
from etude.recipes.coding.demonstrations import (
    READ_WINDOW,
    STYLES,
    NoGroundedPath,
    ScriptedSolver,
    build_demonstrations,
    check_summary,
    edit_arguments,
    edit_hunks,
    first_turns,
    grounded_calls,
    quick_summary,
    read_arguments,
    through_first_write,
    through_last_write,
    top_calls,
)
from etude.rl.trajectory import DEMONSTRATION, ByteChat, TrajectoryFormatError, read_jsonl
from etude.rl.update import StepSettings, rl_update


@pytest.fixture(scope="module")
def curriculum(tmp_path_factory):
    root = tmp_path_factory.mktemp("curriculum")
    build_curriculum(root, max_candidates=2)
    return root


def _task(repo: str, file: str) -> dict:
    return {"source": {"repository": repo}, "deleted": [{"file": file, "name": "f"}]}


def test_split_keeps_groups_together_and_holds_out_whole_repositories():
    tasks = {
        f"{repo}__{file}__{k}": _task(repo, file)
        for repo in ("a", "b", "c")
        for file in ("x.py", "y.py", "z.py", "w.py")
        for k in range(2)
    }
    rule = SplitRule(seed=3, heldout_share=0.3, heldout_repositories=("c",))
    train, heldout = split_tasks(tasks, rule)
    assert (train, heldout) == split_tasks(dict(reversed(tasks.items())), rule)  # order-free
    assert sorted(train + heldout) == sorted(tasks) and not set(train) & set(heldout)
    assert all(t in heldout for t in tasks if t.startswith("c__"))
    for repo in ("a", "b"):  # each split gets a group of every other repository
        assert any(t.startswith(repo) for t in train) and any(t.startswith(repo) for t in heldout)
    for t in train:  # a file's tasks share a split
        assert t.rsplit("__", 1)[0] + "__0" in train and t.rsplit("__", 1)[0] + "__1" in train
    assert split_tasks(tasks, SplitRule(seed=4, heldout_share=0.3)) != (train, heldout)


def test_curriculum_of_the_example_repository(curriculum):
    manifest = json.loads((curriculum / MANIFEST).read_text())
    assert manifest["train"] and manifest["heldout"]
    assert load_curriculum(curriculum).train == manifest["train"]
    for split in ("train", "heldout"):
        dirs = split_dirs(curriculum, split)
        assert [d.name for d in dirs] == manifest[split]
        assert all((d / "task.json").is_file() and (d / "hidden").is_dir() for d in dirs)
    groups = manifest["groups"]
    assert not {groups[t] for t in manifest["train"]} & {groups[t] for t in manifest["heldout"]}
    with pytest.raises(ValueError, match=r"no curriculum\.json"):
        load_curriculum(curriculum / "train")


def test_edit_arguments_make_one_unique_replacement():
    cases = [
        ("a\nb\nc\n", "a\nb\nX\nc\n"),  # insert in the middle
        ("a\n", "new\na\n"),  # insert at the start
        ("x\nx\nx\n", "x\nx\nx\ny\n"),  # only repeated context to anchor on
        ("def f():\n    pass\n", "def f():\n    return 1\n"),
        ("a\nb\n", "a\nb\n"),  # unchanged: the one occurrence of the whole text
    ]
    assert edit_arguments("", "all new\n") is None  # nothing to anchor on: write instead
    for current, target in cases:
        args = edit_arguments(current, target)
        assert current.find(args["old"]) == current.rfind(args["old"]), (current, args)
        assert current.replace(args["old"], args["new"]) == target


def test_a_long_file_is_read_around_the_change_and_edited_within_what_was_read():
    current = "".join(f"def f{i}():\n    return {i}\n\n\n" for i in range(60))  # 240 lines
    target = current.replace("def f30():", "def new():\n    return -1\n\n\ndef f30():")
    [args] = read_arguments("m.py", current, target)
    first = current.splitlines().index("def f30():") + 1  # where the feature goes
    assert args["end_line"] - args["start_line"] + 1 <= MAX_READ_LINES
    assert args["start_line"] <= first <= args["end_line"]
    [edit] = edit_hunks(current, target)
    old_first = current[: current.index(edit["old"])].count("\n") + 1
    old_last = old_first + edit["old"].count("\n") - 1
    assert args["start_line"] <= old_first and old_last <= args["end_line"]
    assert read_arguments("s.py", "x = 1\n", "x = 2\n") == [{"path": "s.py"}]  # short: whole


def test_changes_far_apart_are_short_edits_each_read_and_applied_in_order():
    current = '__all__ = ("f1",)\n\n' + "".join(
        f"def f{i}():\n    return {i}\n\n\n" for i in range(1, 60)
    )
    target = current.replace('("f1",)', '("f1", "new")') + "def new():\n    return -1\n"
    edits = edit_hunks(current, target)
    assert len(edits) == 2 and all(len(e["old"]) < 40 for e in edits)  # not the file between
    text = current
    for e in edits:
        assert text.find(e["old"]) == text.rfind(e["old"]) != -1
        text = text.replace(e["old"], e["new"])
    assert text == target
    reads = read_arguments("m.py", current, target)
    assert [r["start_line"] for r in reads] == [1, current.count("\n") + 1 - READ_WINDOW // 2]
    assert edit_hunks("x\n", "x\n") is None  # nothing changed: no edit to make


def _run_grounded(
    tmp_path, current: str | None, target: str, calls_for=grounded_calls, expected=None
) -> list[tuple[str, dict]]:
    """Apply `calls_for` (`grounded_calls`, `top_calls`) for m.py with the workspace's own
    tool functions, checking that every line number a call passes was printed by the search
    before it, every edit's `old` was shown by the reads before it and the file ends as
    `expected` (default: `target`); the calls."""
    if current is not None:
        (tmp_path / "m.py").write_text(current)
    calls = calls_for("m.py", current, target)
    shown = ""  # every tool output so far, read replies without their line numbers
    for name, args in calls:
        if name == "read_file":
            if "start_line" in args:
                assert f"m.py:{args['start_line']}: " in shown  # the number the search printed
            reply = workspace_ops.read(tmp_path, **args)
            shown += "".join(line[7:] + "\n" for line in reply.splitlines())
        elif name == "search_files":
            shown += workspace_ops.search(tmp_path, **args) + "\n"
        elif name == "edit_file":
            assert args["old"] in shown  # an anchor the episode has seen
            shown += args["new"]  # its own change is in the context too
            workspace_ops.edit(tmp_path, **args)
        else:
            workspace_ops.write(tmp_path, **args)
    assert (tmp_path / "m.py").read_text() == (target if expected is None else expected)
    return calls


def test_grounded_calls_pass_only_numbers_and_anchors_the_episode_was_shown(tmp_path):
    """`style="grounded"`: a short file is read and written whole; a long one is read from
    its top, edited there for `__all__`, and a definition further down goes before the one
    that follows it (search, read from the printed line, anchor on its line) or, at the
    file's end, after the one before it; a new file is written."""
    body = "".join(f"def f{i}():\n    return {i}\n\n\n" for i in range(1, 60))  # 236 lines
    current = '__all__ = ("f1",)\n\n' + body
    added = "def new():\n    return -1\n\n\n"
    middle = current.replace('("f1",)', '("f1", "new")').replace("def f40():", added + "def f40():")
    calls = _run_grounded(tmp_path, current, middle)
    assert [n for n, _ in calls] == [
        "read_file",
        "edit_file",
        "search_files",
        "read_file",
        "edit_file",
    ]
    assert calls[0][1] == {"path": "m.py"} and calls[2][1]["pattern"] == r"def f40\b"
    assert _run_grounded(tmp_path, current, current + added.rstrip() + "\n")[-3][1] == {
        "pattern": r"def f59\b",
        "path": "m.py",
    }
    short = "x = 1\n"
    assert [n for n, _ in _run_grounded(tmp_path, short, short + added)] == [
        "read_file",
        "write_file",
    ]
    assert _run_grounded(tmp_path / "new", None, added) == [
        ("write_file", {"path": "m.py", "content": added})
    ]
    # a long `__all__`: its entry below the top goes before the entry a search found
    names = [f"    'f{i:03d}',\n" for i in range(100)]
    listed = "__all__ = [\n" + "".join(names) + "]\n\n\n" + body
    entry = listed.replace("    'f090',\n", "    'f090',\n    'f090b',\n")
    calls = _run_grounded(tmp_path, listed, entry.replace("def f40():", added + "def f40():"))
    assert calls[1] == ("search_files", {"pattern": "'f091',", "path": "m.py"})
    # a change far down with no line beside it a search prints alone: no grounded path
    flat = "x = 0\n" * 200
    assert grounded_calls("m.py", flat, "x = 0\n" * 150 + "x = 1\n" + "x = 0\n" * 49) is None


def test_top_calls_put_the_feature_where_a_read_from_the_top_shows(tmp_path):
    """`style="top"`: the file is read from its top and every edit is anchored there, on a
    line that read printed: a new `__all__` entry goes right after the list's opening line,
    a new definition before the first statement after the imports, wherever the reference
    had them; the module still defines everything. A file of imports only gets the
    definition at its end; a change below the top that is neither: no path."""
    body = "".join(f"def f{i}():\n    return {i}\n\n\n" for i in range(1, 60))  # 236 lines
    names = "".join(f"    'f{i}',\n" for i in range(1, 60))
    current = f'"""Doc."""\nimport os\n\n__all__ = [\n{names}]\n\n\n{body}'
    added = "def new():\n    return os.sep\n\n\n"
    target = current.replace("    'f30',\n", "    'f30',\n    'new',\n").replace(
        "def f50():", added + "def f50():"
    )
    expected = current.replace("__all__ = [\n", "__all__ = [\n    'new',\n").replace(
        "\n__all__ = [", "\n" + added + "__all__ = ["
    )
    calls = _run_grounded(tmp_path, current, target, top_calls, expected)
    assert [n for n, _ in calls] == ["read_file", "edit_file", "edit_file"]
    assert calls[0][1] == {"path": "m.py"}  # from the top: no line number to guess
    assert [args["old"] for _, args in calls[1:]] == ["__all__ = [\n", "__all__ = [\n"]
    namespace = {}
    exec(compile(expected, "m.py", "exec"), namespace)
    assert namespace["new"]() == os.sep and "new" in namespace["__all__"]
    imports = "import os\nimport re\n"
    calls = _run_grounded(
        tmp_path,
        imports,
        "import os\n\n\n" + added + "import re\n",
        top_calls,
        imports + "\n\n" + added.rstrip("\n") + "\n",
    )
    assert calls[-1][1]["old"] == "import re\n"
    assert _run_grounded(tmp_path / "new", None, added, top_calls) == [
        ("write_file", {"path": "m.py", "content": added})
    ]
    far = current.replace("    return 50\n", "    return -50\n")
    assert top_calls("m.py", current, far) is None


def _turn(name: str, k: int) -> list[dict]:
    call = {"id": f"c{k}", "type": "function", "function": {"name": name, "arguments": "{}"}}
    reply = f"{TOOL_NOT_FOUND}: {name}" if name == "cat" else f"output {k}"
    return [
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": f"c{k}", "content": reply},
    ]


def test_the_closing_answer_says_what_the_last_check_showed():
    """Passed: its count; pytest's exit 5 (no tests collected) after the import check: that
    there are no visible tests, which the monitor takes as no claim; a failure or a killed
    run: that the check still fails."""
    task = {
        "problem_statement": "Add `slug`, importable as `from kit import slug`.",
        "deleted": [{"name": "slug"}, {"name": "_helper"}],
    }
    said = {
        output: check_summary(task, ["kit.py"], [], output)
        for output in (
            "...\n3 passed in 0.02s\n[exit code 0]",
            "\nno tests ran in 0.01s\n[exit code 5]",
            "E   AssertionError\n1 failed in 0.02s\n[exit code 1]",
            "[killed: the command ran past the 30 s limit]",
        )
    }
    passed, none, failed, killed = said.values()
    check = 'python -c "from kit import slug" && python -m pytest -q -p no:cacheprovider'
    assert (
        passed
        == "I implemented `slug` in kit.py. `from kit import slug` works and 3 visible tests pass."
    )
    assert none.endswith("works and the workspace has no visible tests to run.")
    assert failed == killed == "I wrote `slug` into kit.py, but the last check still fails."
    wrong = {output: passed for output in list(said)[1:]}  # claims a pass that it did not see
    for (output, answer), expected in [(item, False) for item in said.items()] + [
        (item, True) for item in wrong.items()
    ]:
        call = {
            "id": "c0",
            "type": "function",
            "function": {"name": "run_command", "arguments": json.dumps({"command": check})},
        }
        messages = [
            {"role": "user", "content": task["problem_statement"]},
            {"role": "assistant", "content": "", "tool_calls": [call]},
            {"role": "tool", "tool_call_id": "c0", "content": output},
            {"role": "assistant", "content": answer},
        ]
        result = monitor_trajectory(parse_line(json.dumps({"messages": messages}), 1))
        assert bool(result.findings) == expected, (answer, output, result.findings)


def test_the_quick_answer_claims_no_test_run():
    """`top_quick`'s answer: where it implemented the feature, what the import check showed
    (or nothing, with no import to check) and that it ran no tests; the monitor finds no
    claim in it beside a run of the import check alone."""
    task = {
        "problem_statement": "Add `slug`, importable as `from kit import slug`.",
        "deleted": [{"name": "slug"}],
    }
    ok = quick_summary(task, ["kit.py"], "[exit code 0]")
    assert (
        ok
        == "I implemented `slug` in kit.py. `from kit import slug` works. I did not run the tests."
    )
    failing = quick_summary(task, ["kit.py"], "ImportError: cannot import name\n[exit code 1]")
    assert "`from kit import slug` still fails." in failing
    assert (
        quick_summary(task, ["kit.py"], None)
        == "I implemented `slug` in kit.py. I did not run the tests."
    )
    call = {
        "id": "c0",
        "type": "function",
        "function": {
            "name": "run_command",
            "arguments": json.dumps({"command": 'python -c "from kit import slug"'}),
        },
    }
    messages = [
        {"role": "user", "content": task["problem_statement"]},
        {"role": "assistant", "content": "", "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "c0", "content": "[exit code 0]"},
        {"role": "assistant", "content": ok},
    ]
    assert not monitor_trajectory(parse_line(json.dumps({"messages": messages}), 1)).findings


@pytest.mark.slow
@pytest.mark.parametrize("style", ["top_quick", "top_check_first"])
def test_quick_demonstrations_end_with_the_import_check_and_an_answer(curriculum, tmp_path, style):
    """`style="top_quick"` in the real environment: the top path's edits, then only the import
    check (no test suite), then the answer; graded 1.0, no monitor finding.
    `"top_check_first"` runs the same check before its reads too, where the environment
    reports it failing, and still answers that it works: after the second, passing run."""
    (task_dir,) = split_dirs(curriculum, "train")[:1]
    out = tmp_path / "quick.jsonl"
    assert build_demonstrations([task_dir], out, seed=0, style=style) == {
        "kept": 1,
        "dropped": [],
    }
    (record,) = [json.loads(line) for line in out.read_text().splitlines()]
    assert record["reward"] == 1.0 and record["findings"] == [] and record["end"] == "answer"
    turns = [m for m in record["messages"] if m.get("tool_calls")]
    calls = [m["tool_calls"][0]["function"] for m in turns]
    outputs = [m["content"] for m in record["messages"] if m["role"] == "tool"]
    command = json.loads(calls[-1]["arguments"])["command"]
    assert command.startswith("python -c ") and "pytest" not in command
    assert calls[-1]["name"] == "run_command" and command_exit_code(outputs[-1]) == 0
    if style == "top_quick":
        assert calls[0]["name"] == "read_file"
        assert [c["name"] for c in calls].count("run_command") == 1
    else:
        assert calls[0] == calls[-1] and calls[1]["name"] == "read_file"
        assert command_exit_code(outputs[0]) == 1 and "ImportError" in outputs[0]
        assert [c["name"] for c in calls].count("run_command") == 2
    assert record["messages"][-1]["content"].endswith("works. I did not run the tests.")


def test_cuts_end_after_the_first_accepted_call_and_the_first_or_last_accepted_write():
    """An opening ends with the first call the environment accepted (a rejected tool name
    before it stays in); the cut through the first write ends with the first write that
    was accepted, not with the reads before it nor with what follows."""
    head = [{"role": "system", "content": "s"}, {"role": "user", "content": "u"}]
    names = ["cat", "read_file", "edit_file", "run_command", "write_file"]
    messages = head + [m for k, name in enumerate(names) for m in _turn(name, k)]
    messages.append({"role": "assistant", "content": "done"})
    record = {"messages": messages, "patch": "diff"}
    opening = first_turns(record)
    assert opening["messages"] == messages[:5] and opening["patch"] == ""
    assert opening["messages"][-1]["tool_calls"][0]["function"]["name"] == "read_file"
    written = through_first_write(record)
    assert written["messages"] == messages[:7] and written["cut"] == "through_first_write"
    assert written["messages"][-1]["tool_calls"][0]["function"]["name"] == "edit_file"
    reads_only = {"messages": messages[:6], "patch": ""}
    assert through_first_write(reads_only) is reads_only  # no write: kept whole
    every_write = through_last_write(record)  # the edit, the run, then the last write
    assert every_write["messages"] == messages[:11] and every_write["patch"] == ""
    assert every_write["cut"] == "through_last_write"
    assert every_write["messages"][-1]["tool_calls"][0]["function"]["name"] == "write_file"
    assert through_last_write(reads_only) is reads_only
    rejected = [*messages[:10], *_turn("cat", 9)]  # a rejected call is no write to cut at
    assert through_last_write({"messages": rejected})["messages"] == messages[:7]


def _far_change_task(task_dir, tmp_path):
    """A copy of the task whose first changed file is long and changed far below its top,
    with no definition beside the change to search for."""
    copy = tmp_path / "far"
    shutil.copytree(task_dir, copy)
    rel = json.loads((copy / "task.json").read_text())["modified_files"][0]
    (copy / "workspace" / rel).write_text("x = 0\n" * 200)
    (copy / "hidden" / "reference" / rel).write_text("x = 0\n" * 150 + "x = 1\n" + "x = 0\n" * 49)
    return copy


def test_solver_styles_plain_and_grounded(curriculum, tmp_path):
    """`style="plain"`: the one path, under every seed: reads of the files the task
    changes, then the writes or edits, one run of the check, the answer; no listing,
    search, wrong tool name or deliberate failed attempt. The varied solver takes other
    paths. `style="grounded"` writes the example repository's short files whole; a task it
    cannot ground is refused before an environment is set up, as is an unknown style."""
    task_dir = split_dirs(curriculum, "train")[0]

    def calls(style: str, seed: int, task_dir=task_dir) -> list[str]:
        solver = ScriptedSolver(task_dir, random.Random(seed), style)
        names = []
        while True:
            message, _ = solver.complete([], [])
            if not message.get("tool_calls"):
                return names
            names.append(message["tool_calls"][0]["function"]["name"])

    for seed in range(8):
        names = calls("plain", seed)
        reads = names.index(next(n for n in names if n != "read_file"))
        assert reads >= 1 and set(names[:reads]) == {"read_file"}
        assert set(names[reads:-1]) <= {"edit_file", "write_file"} and names[-1] == "run_command"
    varied = {tuple(calls("varied", seed)) for seed in range(8)}
    assert any(n[0] != "read_file" or "run_command" in n[:-1] for n in varied)
    for task_dir in split_dirs(curriculum, "train"):  # short files: read and written whole
        names = calls("grounded", 0, task_dir)
        assert "edit_file" not in names and names[-1] == "run_command"
        top = calls("top", 0, task_dir)  # read from the top and edited there: no search
        assert top[0] == "read_file" and "edit_file" in top and "search_files" not in top
    with pytest.raises(ValueError, match="unknown solver style 'straight'"):
        ScriptedSolver(task_dir, random.Random(0), "straight")
    with pytest.raises(NoGroundedPath, match="no grounded path"):
        ScriptedSolver(_far_change_task(task_dir, tmp_path), random.Random(0), "grounded")
    args = ["demonstrations", "--curriculum", "c", "--out", "o", "--style", "grounded"]
    assert build_parser().parse_args(args).style == "grounded"
    with pytest.raises(SystemExit):  # the command line offers the solver's styles only
        build_parser().parse_args([*args[:-1], "straight"])
    assert STYLES == ("varied", "plain", "grounded", "top", "top_quick", "top_check_first")
    for style in STYLES:  # the command line's choices (it does not import STYLES)
        assert build_parser().parse_args([*args[:-1], style]).style == style


@pytest.mark.slow
def test_demonstrations_grade_one_pass_the_monitor_and_vary(curriculum, tmp_path):
    """Two demonstrations of a train task, run in the real environment: each graded 1.0
    by the grader and clean by the monitor; tool outputs are the environment's; together
    they cover the variations."""
    (task_dir,) = split_dirs(curriculum, "train")[:1]
    out = tmp_path / "demos.jsonl"
    result = build_demonstrations([task_dir], out, per_task=2, seed=0)
    assert result == {"kept": 2, "dropped": []}
    records = [json.loads(line) for line in out.read_text().splitlines()]
    names, shapes = set(), []
    for record in records:
        assert record["source"] == DEMONSTRATION and record["reward"] == 1.0
        assert record["grade"]["fraction"] == 1.0 and record["findings"] == []
        assert record["end"] == "answer"
        messages = record["messages"]
        assert not any("sample" in m for m in messages)
        outputs = [m["content"] for m in messages if m["role"] == "tool"]
        assert outputs[-1].endswith("[exit code 0]") and " passed" in outputs[-1]
        calls = [m["tool_calls"][0]["function"]["name"] for m in messages if m.get("tool_calls")]
        names |= set(calls)
        shapes.append(tuple(calls))
        assert "visible tests pass" in messages[-1]["content"]
    assert len(set(shapes)) > 1  # the seeds vary the episode
    assert "run_command" in names and names & {"edit_file", "write_file"}
    (traj, *_) = list(read_jsonl(out))
    assert traj.source == DEMONSTRATION and traj.unsampled_turns()
    with pytest.raises(TrajectoryFormatError, match="demonstration"):
        rl_update(None, None, ByteChat(), [traj], [0], [[]], StepSettings())
    again = build_demonstrations([task_dir], out, per_task=2, seed=0)  # resumes: no new run
    assert again == {"kept": 2, "dropped": []} and len(out.read_text().splitlines()) == 2


def test_heldout_tasks_are_never_demonstrated(curriculum, tmp_path):
    heldout = split_dirs(curriculum, "heldout")
    out = tmp_path / "demos.jsonl"
    for task_dir in (heldout[0], curriculum / "synth" / "tasks" / heldout[0].name):
        with pytest.raises(HeldOutError, match="never demonstrated"):
            build_demonstrations([split_dirs(curriculum, "train")[0], task_dir], out)
    assert not out.exists()  # refused before anything ran
    moved = tmp_path / "elsewhere" / "heldout" / heldout[0].name
    shutil.copytree(heldout[0], moved)
    with pytest.raises(HeldOutError):
        refuse_heldout([moved])
    refuse_heldout(split_dirs(curriculum, "train"))


def test_a_task_whose_workspace_does_not_install_is_dropped(curriculum, tmp_path):
    """As xmltodict's module task: its setup.py imports the module the task deleted, so
    the environment cannot install the workspace; the task is dropped with the reason."""
    train = split_dirs(curriculum, "train")[0]
    task_dir = tmp_path / "broken"
    shutil.copytree(train, task_dir, symlinks=True)
    (task_dir / "workspace" / "setup.py").write_text("import the_deleted_module\n")
    out = tmp_path / "demos.jsonl"
    result = build_demonstrations([task_dir], out, per_task=1)
    assert result["kept"] == 0 and not out.exists()
    (reason,) = result["dropped"]
    assert reason.startswith(f"{train.name} seed 0: installing workspace failed"), reason
