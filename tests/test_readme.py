"""The README's examples run and print what they say."""

import doctest
from pathlib import Path

README = Path(__file__).resolve().parent.parent / "README.md"


def test_readme_examples():
    result = doctest.testfile(str(README), module_relative=False, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0 and result.failed == 0


def test_readme_setup_commands_are_the_ci_ones():
    text = README.read_text()
    ci = (README.parent / ".ci" / "run").read_text()
    test_cmd = next(line for line in ci.splitlines() if "pytest" in line and "pip install" in line)
    assert test_cmd in text
    assert "python -m train --config configs/quick.toml" in text and "bgnet hint" in text
