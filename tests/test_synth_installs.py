"""A workspace whose build imports the deleted code cannot be a task: the coding
environment and the grader install the workspace, so synthesis checks that it still
builds (`etude.synth.env.install_error`), here on a tiny repository whose setup.py reads
its version from the module a task would delete (as xmltodict 0.14.2's does)."""

import pytest

from etude.synth.env import build_runs_project_code, install_error

pytestmark = pytest.mark.slow

SETUP = """\
from setuptools import setup

import tinymod

setup(name="tiny", version=tinymod.__version__, py_modules=["tinymod"])
"""


def test_a_build_that_imports_the_deleted_module_is_an_install_error(tmp_path):
    repo = tmp_path / "tiny"
    repo.mkdir()
    (repo / "setup.py").write_text(SETUP)
    (repo / "tinymod.py").write_text('__version__ = "1.0"\n')
    before = sorted(p.name for p in repo.iterdir())
    assert install_error(repo, tmp_path / "check") is None  # the untouched repository builds
    (repo / "tinymod.py").unlink()  # the module task's deletion
    error = install_error(repo, tmp_path / "check")
    assert error == "ModuleNotFoundError: No module named 'tinymod'", error
    assert sorted(p.name for p in repo.iterdir()) == [n for n in before if n != "tinymod.py"]
    assert not (tmp_path / "check").exists()  # the build's copy and wheel are removed


STATIC = """\
[build-system]
requires = ["setuptools>=61"]
build-backend = "setuptools.build_meta"

[project]
name = "tiny"
version = "1.0"
"""


@pytest.mark.parametrize(
    ("files", "runs_code"),
    [
        ({"pyproject.toml": STATIC}, False),
        ({"pyproject.toml": STATIC.replace('version = "1.0"', 'dynamic = ["version"]')}, True),
        ({"pyproject.toml": STATIC, "setup.py": SETUP}, True),
        ({"pyproject.toml": STATIC, "setup.cfg": "[metadata]\nversion = attr: tinymod.v\n"}, True),
        (
            {
                "pyproject.toml": STATIC.replace(
                    "build-backend", 'backend-path = ["."]\nbuild-backend'
                )
            },
            True,
        ),
        ({"pyproject.toml": "[tool.poetry]\nname = 'tiny'\n"}, True),
        ({"pyproject.toml": "not toml ["}, True),
        ({}, True),
    ],
)
def test_only_a_build_that_may_run_project_code_is_checked(tmp_path, files, runs_code):
    """The check costs a build (seconds); a build of static metadata alone runs no project
    code, so a deletion cannot break it and the check is skipped."""
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    assert build_runs_project_code(tmp_path) is runs_code
    if not runs_code:
        assert install_error(tmp_path, tmp_path / "check") is None
        assert not (tmp_path / "check").exists()  # nothing was built
