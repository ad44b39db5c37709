"""benches/ imports run one way: no module of it reaches itself through its imports, deferred
imports (inside functions) counted."""

from __future__ import annotations

import ast
from pathlib import Path

BENCHES = Path(__file__).resolve().parent.parent / "benches"


def module_name(path: Path, root: Path = BENCHES) -> str:
    parts = path.relative_to(root.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports(path: Path, known: set[str], root: Path) -> set[str]:
    """The modules of benches/ that ``path`` imports, anywhere in it."""
    here = module_name(path, root).split(".")
    package = here if path.name == "__init__.py" else here[:-1]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = ".".join(package[:len(package) - node.level + 1]) if node.level else ""
            module = ".".join(filter(None, [base, node.module or ""]))
            names = [module] + [f"{module}.{alias.name}" for alias in node.names]
        else:
            continue
        found.update(name for name in names if name in known)
    return found - {module_name(path, root)}


def graph(root: Path = BENCHES) -> dict[str, set[str]]:
    paths = sorted(root.rglob("*.py"))
    known = {module_name(path, root) for path in paths}
    return {module_name(path, root): imports(path, known, root) for path in paths}


def circle(edges: dict[str, set[str]]) -> list[str] | None:
    """One import circle of ``edges``, or None."""
    state: dict[str, int] = {}

    def visit(node: str, trail: list[str]):
        state[node] = 1
        for nxt in sorted(edges.get(node, ())):
            if state.get(nxt) == 1:
                return trail[trail.index(nxt):] + [nxt]
            if nxt not in state and (found := visit(nxt, trail + [nxt])):
                return found
        state[node] = 2
        return None

    for start in sorted(edges):
        if start not in state and (found := visit(start, [start])):
            return found
    return None


def test_benches_have_no_import_circle():
    edges = graph()
    assert "benches.corpus" in edges and "benches.corpora.synthetic" in edges
    assert circle(edges) is None


def test_a_deferred_import_back_is_caught(tmp_path):
    for name, text in {"__init__.py": "", "low.py": "def f():\n    from . import high\n",
                       "high.py": "from benches import low\n"}.items():
        (tmp_path / "benches").mkdir(exist_ok=True)
        (tmp_path / "benches" / name).write_text(text)
    assert circle(graph(tmp_path / "benches")) == ["benches.high", "benches.low", "benches.high"]
