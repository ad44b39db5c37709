"""The demo: fit byte-mode rules on a public-domain text shipped with the package."""

from __future__ import annotations

import time
from importlib import resources

from bytepair.training import train_bytes

#: King James Version, Genesis 1-11, one verse per line (public domain).
DEMO_TEXT = "kjv-genesis-1-11.txt"


def demo_documents() -> list[bytes]:
    """The demo corpus, one document per line."""
    return resources.files("bytepair").joinpath("data", DEMO_TEXT).read_bytes().splitlines()


def run_demo(merges: int = 300, show: int = 20, engine: str | None = None, out=print) -> None:
    docs = demo_documents()
    start = time.perf_counter()
    model = train_bytes(docs, merges, engine=engine)
    seconds = time.perf_counter() - start
    before = sum(len(d) for d in docs)
    after = sum(len(s) for s in model.sequences)
    out(f"corpus: {DEMO_TEXT} ({len(docs)} documents, {before} bytes)")
    out("mode: byte mode, no pre-tokenizer: each line is one document of bytes, and a merge "
        "may cross spaces and words ('e ', 'd ')")
    out(f"learned {len(model.merges)} of {merges} requested merges in {seconds:.3f} s")
    out(f"token positions: {before} -> {after} ({before / max(after, 1):.2f} bytes per token)")
    out("rank  token  left  right  count  replacements  bytes")
    for m in model.merges[:show]:
        out(f"{m.rank:4}  {m.token_id:5}  {m.left:4}  {m.right:5}  {m.count:5}  "
            f"{m.replacements:12}  {model.token_bytes(m.token_id)!r}")
