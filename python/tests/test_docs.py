"""docs/python.md's ```python blocks, executed in order in one namespace from the repository
root, against the installed package: the documented notebook keeps working."""

import os
import re

from conftest import REPO, count


def python_blocks(path):
    return re.findall(r"^```python\n(.*?)^```", path.read_text(), flags=re.S | re.M)


def test_the_readme_example_runs():
    blocks = python_blocks(REPO / "README.md")
    assert blocks, "README.md lost its Python example"
    here = os.getcwd()
    os.chdir(REPO)
    try:
        for block in blocks:
            exec(compile(block, "README.md", "exec"), {})
    finally:
        os.chdir(here)
    count("documented blocks run", len(blocks))


def test_the_documented_notebook_runs(capsys):
    blocks = python_blocks(REPO / "docs" / "python.md")
    assert len(blocks) >= 5, "docs/python.md lost its example"
    namespace = {}
    here = os.getcwd()
    os.chdir(REPO)
    try:
        for i, block in enumerate(blocks):
            exec(compile(block, f"docs/python.md block {i + 1}", "exec"), namespace)
    finally:
        os.chdir(here)
    printed = capsys.readouterr().out
    assert "Nsight Systems export" in printed
    assert "No such" not in printed and "file not found" in printed
    count("documented blocks run", len(blocks))
