"""Which bytepair a benchmark measures: this tree's, or a commit's, exported and built once."""

from __future__ import annotations

import hashlib
import io
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

from benches.corpora.cache import cache_dir

ROOT = Path(__file__).resolve().parent.parent


def _git(*args, cwd=ROOT) -> str:
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True).stdout


def library_snapshot(rev: str) -> Path:
    """The library as committed at ``rev``, exported and built once under the cache.

    Lets the benchmarks measure a fixed commit while the working tree changes:
    ``git archive`` into ``<cache>/library-<commit>/``, then ``setup.py
    build_ext --inplace`` (the compiled engine lands in its ``src/bytepair``).
    Returns the ``src`` directory to put first on ``PYTHONPATH``.
    """
    commit = _git("rev-parse", "--verify", f"{rev}^{{commit}}").strip()
    if not commit:
        raise SystemExit(f"--library: {rev!r} is not a commit of {ROOT}")
    tree = cache_dir() / f"library-{commit[:12]}"
    stamp = tree / ".built"
    if not stamp.exists():
        shutil.rmtree(tree, ignore_errors=True)
        tree.mkdir(parents=True)
        archive = subprocess.run(["git", "archive", commit], cwd=ROOT, capture_output=True,
                                 check=True).stdout
        with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
            tar.extractall(tree)
        print(f"building the library at {commit[:12]} in {tree} ...", file=sys.stderr, flush=True)
        build = subprocess.run([sys.executable, "setup.py", "build_ext", "--inplace"],
                               cwd=tree, capture_output=True, text=True)
        if build.returncode != 0:
            raise SystemExit(f"building {tree} failed:\n{build.stdout[-3000:]}{build.stderr[-3000:]}")
        stamp.write_text(commit + "\n")
    return tree / "src"


def code_info(library: Path | None) -> dict:
    """Which library was measured: its path, commit, and whether it differs from it."""
    if library is not None:  # a --library snapshot
        commit = (library.parent / ".built").read_text().strip()
        return dict(path=str(library), commit=commit[:12], modified=False, snapshot=True)
    commit = _git("rev-parse", "--short=12", "HEAD").strip() or "unknown"
    diff = _git("diff", "HEAD", "--", "src", "cython", "setup.py", "pyproject.toml")
    return dict(path=str(ROOT / "src"), commit=commit, modified=bool(diff), snapshot=False,
                diff_sha256=hashlib.sha256(diff.encode()).hexdigest()[:12] if diff else None)
