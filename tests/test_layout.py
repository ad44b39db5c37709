"""The package's layout is its pipeline: a stage imports only from itself and the stages before it.

The order is :data:`STAGES`, one list: a new stage goes in where the data
reaches it. Python modules are read with ``ast`` (imports inside functions
count too); the Cython sources under ``cython/bytepair`` are read line by
line for their ``import`` and ``cimport`` statements.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

import bytepair

ROOT = Path(__file__).resolve().parent.parent
SRC = ROOT / "src" / "bytepair"
CYTHON = ROOT / "cython" / "bytepair"

#: The stages in the order the data flows through them: documents, pieces, counts,
#: rules, models, files, measuring models, then the entry points and what is built on them. A
#: module may import from its own stage and the ones before it. ``_util`` is
#: shared ground; the package's ``__init__`` and ``__main__`` come last.
STAGES = [
    "_util",
    "read",
    "split",
    "counts",
    "learn",
    "model",
    "formats",
    "evaluation",
    "training",
    "teach",
    "cli",
    "__init__",
    "__main__",
]
#: Names any module may import from the package root: data, not code.
ROOT_DATA = {"__version__"}

_CYTHON_IMPORT = re.compile(r"^\s*(?:from\s+([\w.]+)\s+c?import\b|c?import\s+([\w.]+))")


def stage_of_path(relative: Path) -> str:
    """The stage of a file, from its path under the package (``read/corpus.py`` -> ``read``)."""
    parts = relative.parts
    return parts[0] if len(parts) > 1 else Path(parts[0]).stem


def stage_of_module(module: str, names: tuple[str, ...] = (), package: Path = SRC) -> str | None:
    """The stage a ``bytepair...`` import reaches; None for other packages.

    ``from bytepair import x`` reaches the stage ``x`` when it is a subpackage
    or module of the package, else the package root (``__init__``).
    """
    parts = module.split(".")
    if parts[0] != "bytepair":
        return None
    if len(parts) > 1:
        return parts[1]
    stages = {name for name in names
              if (package / name).is_dir() or (package / f"{name}.py").exists()}
    if stages and len(stages) == len(names):
        return max(stages, key=_rank)
    return "__init__"


def _rank(stage: str) -> int:
    return STAGES.index(stage) if stage in STAGES else len(STAGES)


def python_imports(text: str) -> list[tuple[int, str, tuple[str, ...], int]]:
    """``(line, module, names, level)`` of every import in a Python source, nested ones too."""
    found = []
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name, (), 0) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            names = tuple(alias.name for alias in node.names)
            found.append((node.lineno, node.module or "", names, node.level))
    return found


def cython_imports(text: str) -> list[tuple[int, str, tuple[str, ...], int]]:
    """``(line, module, names, 0)`` of the ``import``/``cimport`` lines of a Cython source."""
    found = []
    for number, line in enumerate(text.splitlines(), 1):
        match = _CYTHON_IMPORT.match(line)
        if match:
            module = match.group(1) or match.group(2)
            rest = line[match.end():].split("#")[0]
            names = tuple(n.split(" as ")[0].strip() for n in rest.split(",") if n.strip()) \
                if match.group(1) else ()
            found.append((number, module, names, 0))
    return found


def violations(stage: str, where: str, imports, package: Path = SRC) -> list[str]:
    """What breaks the stage order in one file of stage ``stage`` (``where`` names it)."""
    out = []
    if stage not in STAGES:
        return [f"{where}: stage {stage!r} is not in STAGES (add it where the data reaches it)"]
    for line, module, names, level in imports:
        if level:
            out.append(f"{where}:{line}: relative import (imports are absolute)")
            continue
        if module == "bytepair" and names and set(names) <= ROOT_DATA:
            continue
        target = stage_of_module(module, names, package)
        if target is not None and _rank(target) > _rank(stage):
            shown = f"from {module} import {', '.join(names)}" if names else f"import {module}"
            out.append(f"{where}:{line}: {stage} imports {target}, a later stage ({shown})")
    return out


def check_tree(package: Path, cython: Path | None = None) -> list[str]:
    """Every violation of the stage order under ``package`` (and the Cython sources under ``cython``)."""
    out = []
    for path in sorted(package.rglob("*.py")):
        relative = path.relative_to(package)
        out += violations(stage_of_path(relative), str(relative),
                          python_imports(path.read_text("utf-8")), package)
    if cython is not None:
        for path in sorted([*cython.rglob("*.pyx"), *cython.rglob("*.pxd")]):
            relative = path.relative_to(cython)
            out += violations(stage_of_path(relative), f"cython/{relative}",
                              cython_imports(path.read_text("utf-8")), package)
    return out


def test_every_import_follows_the_stage_order():
    assert check_tree(SRC, CYTHON) == []


def test_the_walk_sees_the_imports_it_judges():
    # The check passes only if it looked: the package and its Cython sources hold
    # imports of earlier stages, found where they are.
    seen = {(stage_of_path(p.relative_to(SRC)), stage_of_module(m, n))
            for p in SRC.rglob("*.py") for _, m, n, _ in python_imports(p.read_text("utf-8"))}
    assert ("training", "counts") in seen and ("counts", "read") in seen
    assert ("model", "split") in seen and ("split", "split") in seen
    encode = (CYTHON / "model" / "_encode.pyx").read_text("utf-8")
    assert ("bytepair.split._split", ("piece_end", "utf8_error")) in \
        [(m, n) for _, m, n, _ in cython_imports(encode)]


@pytest.mark.parametrize(("stage", "source", "expected"), [
    ("read", "from bytepair.model.models import ByteModel\n", "read imports model"),
    ("counts", "def f():\n    from bytepair.learn import naive\n", "counts imports learn"),
    ("split", "import bytepair.training\n", "split imports training"),
    ("formats", "from bytepair import Tokenizer\n", "formats imports __init__"),
    ("learn", "from . import rules\n", "relative import"),
    ("normalize", "import os\n", "stage 'normalize' is not in STAGES"),
])
def test_tamper_a_bad_python_import_is_flagged(stage, source, expected):
    found = violations(stage, "synthetic.py", python_imports(source))
    assert len(found) == 1 and expected in found[0]


def test_tamper_a_bad_cython_cimport_is_flagged():
    source = ("from libc.stdint cimport uint32_t\n"
              "from bytepair.learn._engine cimport PairEngine  # a later stage\n"
              "import bytepair.model.codec\n"
              "from bytepair.split import charclasses\n")
    found = violations("split", "cython/split/_split.pyx", cython_imports(source))
    assert len(found) == 2
    assert "split imports learn" in found[0] and ":2:" in found[0]
    assert "split imports model" in found[1] and ":3:" in found[1]


def test_tamper_a_file_in_a_tree_is_flagged(tmp_path):
    package = tmp_path / "bytepair"
    for stage in ("read", "model"):
        (package / stage).mkdir(parents=True)
        (package / stage / "__init__.py").write_text("")
    (package / "model" / "models.py").write_text("from bytepair.read import corpus\n")
    assert check_tree(package) == []
    (package / "read" / "corpus.py").write_text("from bytepair.model import models\n")
    assert check_tree(package) == [
        "read/corpus.py:1: read imports model, a later stage (from bytepair.model import models)"]


def test_allowed_imports_pass():
    source = ("import os\nfrom bytepair import __version__\nfrom bytepair._util.validate import check_int\n"
              "from bytepair.read import blocks\nfrom bytepair.counts.counting import count_files\n")
    assert violations("counts", "ok.py", python_imports(source)) == []


def test_no_subpackage_hides_a_public_function():
    # bytepair.count, bytepair.train, ... are functions: a subpackage of the same
    # name would replace the function once imported.
    for name in bytepair.__all__:
        assert not (SRC / name).is_dir() and not (SRC / f"{name}.py").exists(), name
