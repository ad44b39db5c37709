"""The package's front door: ``import bytepair`` loads no stage, and every public name resolves."""

import ast
import subprocess
import sys
from pathlib import Path

import pytest

import bytepair

INIT = Path(bytepair.__file__)


def test_import_loads_no_stage():
    code = "import sys, bytepair; print(sorted(m for m in sys.modules if m.startswith('bytepair.')))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def _typed_homes() -> dict[str, str]:
    # The TYPE_CHECKING block: what IDEs and type checkers read.
    tree = ast.parse(INIT.read_text())
    block = next(node for node in tree.body if isinstance(node, ast.If)
                 and getattr(node.test, "id", None) == "TYPE_CHECKING")
    return {alias.name: stmt.module for stmt in block.body for alias in stmt.names}


def test_every_public_name_is_the_object_type_checkers_are_shown():
    import importlib

    homes = _typed_homes()
    assert sorted(homes) == sorted(bytepair.__all__)
    for name in bytepair.__all__:
        assert getattr(bytepair, name) is getattr(importlib.import_module(homes[name]), name)
    assert set(bytepair.__all__) <= set(dir(bytepair))


def test_an_unknown_name_is_an_attribute_error():
    try:
        bytepair.no_such_name
    except AttributeError as error:
        assert "no_such_name" in str(error)
    else:
        raise AssertionError("no AttributeError")


def test_a_bad_argument_is_caught_as_the_public_error():
    with pytest.raises(bytepair.ArgumentError, match="merges must be") as caught:
        bytepair.train_bytes([b"abc"], -1)
    assert isinstance(caught.value, bytepair.InputError)
    assert isinstance(caught.value, ValueError)
