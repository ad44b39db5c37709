"""Run the docstring examples of the installed package as tests."""

import doctest
import importlib
import pkgutil

import pytest

import bytepair

MODULES = sorted(
    name for _, name, _ in pkgutil.walk_packages(bytepair.__path__, "bytepair.")
    if name not in ("bytepair.__main__",)
)


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0
