"""Bad input to `etude synth` and `etude grade`: a clear message, a non-zero exit, and no
task directory left looking valid."""

import io
import tarfile
from pathlib import Path

import pytest

from etude.cli import main
from etude.synth.candidate import Settings
from etude.synth.errors import SynthError
from etude.synth.pipeline import synthesize

PACKAGE = 'def double(x):\n    """Twice x."""\n    return 2 * x\n'
PYPROJECT = (
    '[build-system]\nrequires = ["setuptools>=61"]\nbuild-backend = "setuptools.build_meta"\n'
    '[project]\nname = "tiny"\nversion = "0.1"\n'
)


def _repo(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


def _synth_cli(capsys, source, out) -> tuple[int, str]:
    code = main(["synth", str(source), "--out", str(out), "--workers", "1"])
    return code, capsys.readouterr().err


def _no_valid_task(out: Path) -> bool:
    return not list((out / "tasks").glob("*/task.json")) if (out / "tasks").exists() else True


def test_missing_path(tmp_path, capsys):
    code, err = _synth_cli(capsys, tmp_path / "nowhere", tmp_path / "out")
    assert code != 0 and "does not exist" in err
    assert _no_valid_task(tmp_path / "out")


def test_not_a_repository(tmp_path, capsys):
    plain = tmp_path / "notes.txt"
    plain.write_text("hello")
    code, err = _synth_cli(capsys, plain, tmp_path / "out")
    assert code != 0 and "neither a directory nor an sdist" in err


def test_non_python_repository(tmp_path, capsys):
    repo = _repo(tmp_path / "c", {"main.c": "int main(void) { return 0; }\n", "README": "C"})
    code, err = _synth_cli(capsys, repo, tmp_path / "out")
    assert code != 0 and "not a Python repository" in err


def test_repository_without_tests(tmp_path, capsys):
    repo = _repo(tmp_path / "r", {"tiny/__init__.py": PACKAGE, "pyproject.toml": PYPROJECT})
    code, err = _synth_cli(capsys, repo, tmp_path / "out")
    assert code != 0 and "no test files" in err


def test_syntax_error(tmp_path, capsys):
    repo = _repo(
        tmp_path / "r",
        {"tiny/__init__.py": "def broken(:\n", "tests/test_tiny.py": "def test_x():\n    pass\n"},
    )
    code, err = _synth_cli(capsys, repo, tmp_path / "out")
    assert code != 0 and "do not parse" in err and "tiny/__init__.py:1" in err


def test_corrupt_sdist(tmp_path, capsys):
    sdist = tmp_path / "tiny-0.1.tar.gz"
    sdist.write_bytes(b"\x1f\x8b\x08\x00 this is not a gzip stream" * 10)
    code, err = _synth_cli(capsys, sdist, tmp_path / "out")
    assert code != 0 and "not a readable sdist" in err
    assert not list((tmp_path / "out" / "work").glob("*/pristine"))


def test_sdist_is_unpacked(tmp_path):
    from etude.synth.discover import prepare

    sdist = tmp_path / "tiny-0.1.tar.gz"
    with tarfile.open(sdist, "w:gz") as archive:
        for rel, text in {
            "tiny/__init__.py": PACKAGE,
            "tests/test_t.py": "def test_a(): pass\n",
            "pyproject.toml": PYPROJECT,
        }.items():
            data = text.encode()
            info = tarfile.TarInfo(f"tiny-0.1/{rel}")
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    repo = prepare(sdist, tmp_path / "work")
    assert repo.name == "tiny-0.1" and repo.packages == ["tiny"]
    assert repo.revision.startswith("sdist:sha256:")
    assert repo.test_files == ["tests/test_t.py"]


@pytest.mark.slow
def test_tests_failing_before_deletion(tmp_path):
    repo = _repo(
        tmp_path / "r",
        {
            "tiny/__init__.py": PACKAGE,
            "pyproject.toml": PYPROJECT,
            "tests/test_tiny.py": (
                "from tiny import double\n\ndef test_d():\n    assert double(2) == 5\n"
            ),
        },
    )
    with pytest.raises(SynthError, match="no test passes reliably before any deletion"):
        synthesize([repo], tmp_path / "out", workers=1)
    assert _no_valid_task(tmp_path / "out")


@pytest.mark.slow
def test_tests_hanging_before_deletion(tmp_path):
    repo = _repo(
        tmp_path / "r",
        {
            "tiny/__init__.py": PACKAGE,
            "pyproject.toml": PYPROJECT,
            "tests/test_tiny.py": "import time\n\ndef test_d():\n    time.sleep(600)\n",
        },
    )
    settings = Settings(test_timeout_s=2)
    with pytest.raises(SynthError, match="no test passes reliably"):
        synthesize([repo], tmp_path / "out", workers=1, settings=settings)
    # A hang outside any test (at collection) hits the suite's wall-clock limit instead.
    (repo / "tests" / "conftest.py").write_text("import time\ntime.sleep(600)\n")
    settings = Settings(test_timeout_s=2, suite_timeout_s=4)
    with pytest.raises(SynthError, match="did not finish in 4 s"):
        synthesize([repo], tmp_path / "out2", workers=1, settings=settings)
    assert _no_valid_task(tmp_path / "out") and _no_valid_task(tmp_path / "out2")


def test_grade_bad_input(tmp_path, capsys):
    code = main(["grade", str(tmp_path), str(tmp_path)])
    assert code != 0 and "not a task directory" in capsys.readouterr().err
    (tmp_path / "task.json").write_text("{not json")
    code = main(["grade", str(tmp_path), str(tmp_path)])
    assert code != 0 and "not valid JSON" in capsys.readouterr().err
    (tmp_path / "task.json").write_text('{"format": 1, "id": "t", "deleted": []}')
    code = main(["grade", str(tmp_path), str(tmp_path)])
    assert code != 0 and "task field 'tests.fail_to_pass' is missing" in capsys.readouterr().err


def test_bad_workers(tmp_path, capsys):
    code = main(["synth", str(tmp_path), "--out", str(tmp_path / "o"), "--workers", "0"])
    assert code != 0 and "--workers" in capsys.readouterr().err
