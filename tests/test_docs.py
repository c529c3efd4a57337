"""Code shown in the README runs as shown."""

import re
from pathlib import Path

README = Path(__file__).parents[1] / "README.md"


def test_readme_python_examples_run():
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)
    assert blocks, "README.md lost its Python example"
    for block in blocks:
        exec(compile(block, str(README), "exec"), {})
