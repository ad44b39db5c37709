"""The package's layout is its pipeline: a stage imports only from itself and the stages before it.

The order is :data:`STAGES`, one list: a new stage goes in where the data
reaches it. Python modules are read with ``ast`` (imports inside functions
count too); the Cython sources under ``cython/bytepair`` are read line by
line for their ``import`` and ``cimport`` statements. No modules import one another
in a circle, deferred imports counted (:func:`import_circles`).

Rooms stay small: no module above :data:`MAX_MODULE_LINES` lines, no function
above :data:`MAX_FUNCTION_LINES` (its docstring left out). And a stage's private
names (``_helper``) are its own: no other stage, no test outside the stage's
folder under ``tests/`` (which mirrors the package) and no benchmark uses them.
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
TESTS = ROOT / "tests"
BENCHES = ROOT / "benches"
#: The longest Python module of the package, in lines.
MAX_MODULE_LINES = 500
#: The longest function, in lines, its docstring left out.
MAX_FUNCTION_LINES = 80
#: The methods of a NamedTuple are public although their names start with ``_``.
NAMEDTUPLE_API = {"_asdict", "_field_defaults", "_fields", "_make", "_replace"}

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
    assert ("bytepair.split._split", ("piece_ends", "utf8_error")) in \
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


# -- no import circles -----------------------------------------------------------------------


def module_graph(package: Path) -> dict[str, dict[str, int]]:
    """``{module: {module it imports: line}}`` for the Python modules under ``package``,
    each named by its path there (``learn/loop.py``).

    Every import counts wherever it stands: at the top, inside a function (a deferred
    import ties two modules as much as any other; it only hides the circle from the
    import machinery) and under ``if TYPE_CHECKING:`` (a type named from another module
    is a dependency for whoever reads the annotation, and the stage order above counts
    it too). ``from bytepair import __version__`` is data (:data:`ROOT_DATA`), not an
    arrow. ``from p import x`` reaches ``p.x`` when that is a module, else ``p`` (its
    ``__init__``). Compiled modules have no source here, so they start no circle.
    """
    files = {}  # dotted module name -> path under the package
    for path in package.rglob("*.py"):
        parts = path.relative_to(package.parent).with_suffix("").parts
        files[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    graph = {}
    for name, path in files.items():
        here = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
        edges = graph[str(path.relative_to(package))] = {}
        for line, module, names, level in python_imports(path.read_text("utf-8")):
            if level:  # flagged above; resolved here so that the circle shows too
                module = ".".join(here[:len(here) - level + 1] + ([module] if module else []))
            if module == package.name and names and set(names) <= ROOT_DATA:
                continue
            for target in [f"{module}.{n}" if f"{module}.{n}" in files else module for n in names] \
                    or [module]:
                if target in files and files[target] != path:
                    shown = str(files[target].relative_to(package))
                    edges[shown] = min(line, edges.get(shown, line))
    return graph


def import_circles(package: Path) -> list[str]:
    """Every import circle under ``package``: each group of modules that import one another
    (directly or around a longer loop) once, with the imports that tie it."""
    graph = module_graph(package)

    def reach(start: str) -> set[str]:
        seen, todo = set(), [start]
        while todo:
            for target in graph[todo.pop()]:
                if target not in seen:
                    seen.add(target)
                    todo.append(target)
        return seen

    reached = {name: reach(name) for name in graph}
    groups = sorted({tuple(sorted(other for other in reached[name] if name in reached[other]))
                     for name in graph if name in reached[name]})
    return [f"circle of {len(group)} modules: " + "; ".join(
                f"{name}:{line} imports {target}"
                for name in group for target, line in sorted(graph[name].items()) if target in group)
            for group in groups]


def test_the_circle_walk_sees_the_imports():
    graph = module_graph(SRC)
    assert len(graph) == len(list(SRC.rglob("*.py")))
    assert {"model/models.py", "learn/rules.py"} <= graph["model/tokenizer.py"].keys()


def test_no_import_circle():
    assert import_circles(SRC) == []


@pytest.mark.parametrize("closing", [
    "from bytepair.learn.loop import run\n",
    "def key():\n    from bytepair.learn import loop\n",  # deferred
    "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import bytepair.learn.loop\n",
    "from . import loop\n",
])
def test_tamper_an_import_circle_is_flagged(tmp_path, closing):
    package = tmp_path / "bytepair"
    (package / "learn").mkdir(parents=True)
    (package / "__init__.py").write_text("TYPE_CHECKING = False\n__version__ = '0'\n"
                                         "if TYPE_CHECKING:\n    from bytepair.learn.loop import run\n")
    (package / "learn" / "__init__.py").write_text("from bytepair.learn.loop import run\n")
    (package / "learn" / "loop.py").write_text("from bytepair import __version__\n"
                                               "from bytepair.learn import rules\n\n\ndef run():\n    pass\n")
    (package / "learn" / "rules.py").write_text("import os\n")
    # Re-exports in __init__ files, and the root's version under its re-exports, close no circle.
    assert import_circles(package) == []
    (package / "learn" / "rules.py").write_text("import os\n" + closing)
    line = len(closing.splitlines()) + 1
    assert import_circles(package) == ["circle of 2 modules: learn/loop.py:2 imports learn/rules.py; "
                                       f"learn/rules.py:{line} imports learn/loop.py"]


def test_tamper_a_longer_circle_is_flagged_once(tmp_path):
    package = tmp_path / "bytepair"
    package.mkdir()
    for name, target in [("a", "b"), ("b", "c"), ("c", "a"), ("d", "a")]:
        (package / f"{name}.py").write_text(f"import os\nimport bytepair.{target}\n")
    assert import_circles(package) == [
        "circle of 3 modules: a.py:2 imports b.py; b.py:2 imports c.py; c.py:2 imports a.py"]


# -- small rooms ----------------------------------------------------------------------------


def oversized(package: Path) -> list[str]:
    """Every module above :data:`MAX_MODULE_LINES` lines and every function above
    :data:`MAX_FUNCTION_LINES` (docstring left out) under ``package``."""
    out = []
    for path in sorted(package.rglob("*.py")):
        text = path.read_text("utf-8")
        relative = path.relative_to(package)
        lines = len(text.splitlines())
        if lines > MAX_MODULE_LINES:
            out.append(f"{relative}: {lines} lines (at most {MAX_MODULE_LINES})")
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                length = node.end_lineno - node.lineno + 1
                doc = node.body[0]
                if isinstance(doc, ast.Expr) and isinstance(doc.value, ast.Constant) \
                        and isinstance(doc.value.value, str):
                    length -= doc.end_lineno - doc.lineno + 1
                if length > MAX_FUNCTION_LINES:
                    out.append(f"{relative}:{node.lineno}: {node.name} has {length} lines "
                               f"(at most {MAX_FUNCTION_LINES})")
    return out


def test_no_module_or_function_is_too_long():
    assert oversized(SRC) == []


def test_tamper_a_long_module_and_a_long_function_are_flagged(tmp_path):
    package = tmp_path / "bytepair"
    (package / "learn").mkdir(parents=True)
    body = "\n".join(f"    x{i} = {i}" for i in range(MAX_FUNCTION_LINES - 1))  # and the def line
    (package / "learn" / "loop.py").write_text(f'def run():\n    """Docstrings do not count."""\n{body}\n')
    assert oversized(package) == []
    (package / "learn" / "loop.py").write_text(f"def run():\n{body}\n    return x0\n")
    (package / "learn" / "big.py").write_text("x = 1\n" * (MAX_MODULE_LINES + 1))
    assert oversized(package) == [f"learn/big.py: {MAX_MODULE_LINES + 1} lines (at most 500)",
                                  f"learn/loop.py:1: run has {MAX_FUNCTION_LINES + 1} lines (at most 80)"]


# -- private names stay in their stage -------------------------------------------------------


def _is_module(parts: list[str], package: Path, cython: Path | None) -> bool:
    """Whether ``bytepair.<parts>`` is a module or package (compiled ones included)."""
    where = package.joinpath(*parts)
    if where.is_dir() or where.with_suffix(".py").exists() or any(where.parent.glob(where.name + ".*.so")):
        return True
    return cython is not None and cython.joinpath(*parts).with_suffix(".pyx").exists()


def private_uses(text: str, stage: str | None, package: Path = SRC,
                 cython: Path | None = CYTHON) -> list[str]:
    """The private names of other stages that a source of ``stage`` (None: a test or bench
    outside every stage's folder) imports, reads, or patches with ``setattr(module, "_x", ...)``.

    A name is private when it starts with one underscore; private modules (the compiled
    ``_engine``, the twin ``_engine_py``, the ``_util`` stage) are modules, not names.
    """
    tree = ast.parse(text)
    bound: dict[str, tuple[str, list[str]]] = {}  # local name -> (stage, path under bytepair)
    found = []

    def private(name: str) -> bool:
        return name.startswith("_") and not name.startswith("__") and name not in NAMEDTUPLE_API

    def stage_at(parts: list[str]) -> str:
        return parts[0] if parts else "__init__"

    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                parts = alias.name.split(".")
                if parts[0] == "bytepair":
                    name = alias.asname or "bytepair"
                    bound[name] = (stage_at(parts[1:] if alias.asname else []),
                                   parts[1:] if alias.asname else [])
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            parts = node.module.split(".")
            if parts[0] != "bytepair":
                continue
            for alias in node.names:
                path = parts[1:] + [alias.name]
                if private(alias.name) and not _is_module(path, package, cython) \
                        and stage_at(path) != stage:
                    found.append(f"{node.lineno}: {node.module}.{alias.name}")
                bound[alias.asname or alias.name] = (stage_at(path), path)

    def resolved(node) -> tuple[str, list[str], str] | None:
        # (stage, path, how it is written) of a chain such as bytepair.counts.counting
        names = []
        while isinstance(node, ast.Attribute):
            names.append(node.attr)
            node = node.value
        if not isinstance(node, ast.Name) or node.id not in bound:
            return None
        _, path = bound[node.id]
        path = path + names[::-1]
        return stage_at(path), path, ".".join([node.id, *names[::-1]])

    for node in ast.walk(tree):
        target = None
        if isinstance(node, ast.Attribute):
            target = resolved(node.value), node.attr
        elif isinstance(node, ast.Call) and getattr(node.func, "attr", None) == "setattr" \
                and len(node.args) >= 2 and isinstance(node.args[1], ast.Constant) \
                and isinstance(node.args[1].value, str):
            target = resolved(node.args[0]), node.args[1].value
        if target is None or target[0] is None or not private(target[1]):
            continue
        (owner, path, written), name = target
        if owner != stage and not _is_module(path + [name], package, cython):
            found.append(f"{node.lineno}: {written}.{name}")
    return sorted(set(found), key=lambda line: int(line.split(":")[0]))


def stage_of_test(path: Path) -> str | None:
    """The stage a test file belongs to: its folder under ``tests/`` (None at the top, and
    for benchmarks)."""
    relative = path.relative_to(ROOT).parts
    return relative[1] if relative[0] == "tests" and len(relative) > 2 else None


def test_no_private_name_crosses_a_stage():
    found = []
    for path in sorted(SRC.rglob("*.py")):
        stage = stage_of_path(path.relative_to(SRC))
        found += [f"{path.relative_to(ROOT)}:{line}" for line in private_uses(path.read_text("utf-8"), stage)]
    for path in sorted([*TESTS.rglob("*.py"), *BENCHES.rglob("*.py")]):
        found += [f"{path.relative_to(ROOT)}:{line}"
                  for line in private_uses(path.read_text("utf-8"), stage_of_test(path))]
    assert found == []


def test_tests_mirror_the_package():
    folders = {p.name for p in TESTS.iterdir() if p.is_dir() and p.name not in ("data", "__pycache__")}
    assert folders and folders <= set(STAGES), sorted(folders - set(STAGES))
    for folder in folders:
        assert (SRC / folder).is_dir(), folder


@pytest.mark.parametrize(("stage", "source", "expected"), [
    (None, "from bytepair.counts.counting import _part_into\n",
     ["1: bytepair.counts.counting._part_into"]),
    (None, "from bytepair.counts import counting\ncounting._merged([])\n", ["2: counting._merged"]),
    ("training", "import bytepair\nbytepair.counts.counting._merged([])\n",
     ["2: bytepair.counts.counting._merged"]),
    ("training", "from bytepair.counts.piece_counts import PieceCounts\nPieceCounts._from_dict({}, None)\n",
     ["2: PieceCounts._from_dict"]),
    ("learn", "from bytepair.counts import counting\ndef t(monkeypatch):\n"
              "    monkeypatch.setattr(counting, '_part_into', None)\n",
     ["3: counting._part_into"]),
    # Allowed: a stage's own private names, private modules, and a NamedTuple's methods.
    ("counts", "from bytepair.counts import counting\ncounting._merged([])\n", []),
    (None, "from bytepair.learn import _engine\nfrom bytepair import _util\n", []),
    (None, "from bytepair.model.models import Stages\nStages._fields\n", []),
])
def test_tamper_a_private_name_of_another_stage_is_flagged(stage, source, expected):
    assert private_uses(source, stage) == expected
