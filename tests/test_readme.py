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
    assert "bgnet train --config quick" in text and "bgnet hint" in text


def test_readme_commands_need_no_checkout() -> None:
    """The README's commands use the names that work from a wheel, not paths into the repository."""
    text = README.read_text()
    for name in ("--model default", "bgnet eval  default pubeval", "--config quick"):
        assert name in text, name
    for path_only in ("eval  checkpoints/", "--config configs/"):
        assert path_only not in text, path_only
    assert "every command takes `--json`" not in text
