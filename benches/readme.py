"""The README's headline table, rendered from the committed results that docs/benchmarks.md reads.

Each row names its JSON file under ``benches/results/`` and the cases it takes from it; the
figures are never typed by hand. ``python -m benches.readme`` rewrites the table between the
``<!-- headline:begin -->`` and ``<!-- headline:end -->`` comments of README.md;
``--check`` exits 1 when README.md differs from the rendering (tests/test_readme_figures.py runs
that check).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path
from typing import Callable, NamedTuple

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benches" / "results"
README = ROOT / "README.md"
BEGIN, END = "<!-- headline:begin -->", "<!-- headline:end -->"


def seconds(value: float, decimals: int | None = None) -> str:
    """A time as docs/benchmarks.md writes it: ``decimals`` places (the ingest suite's tables
    have two), else two from 0.1 to 10 s and three significant figures outside.

    >>> seconds(0.9538), seconds(10.33), seconds(10.33, 2), seconds(313.8), seconds(0.0265)
    ('0.95 s', '10.3 s', '10.33 s', '314 s', '0.0265 s')
    """
    if decimals is not None:
        return f"{value:.{decimals}f} s"
    if 0.1 <= value < 10:
        return f"{value:.2f} s"
    return f"{float(f'{value:.3g}'):,g} s"


def mib(value: float) -> str:
    """Peak memory in whole MiB: ``1,190 MiB``."""
    return f"{round(value):,} MiB"


def _load(name: str) -> dict:
    with open(RESULTS / name, encoding="utf-8") as file:
        return json.load(file)


def _case(results: dict, trainer: str, size: int, merges: int | None = None, **options) -> dict:
    """The one result of ``trainer`` on ``size`` bytes with these options (and merges)."""
    found = [r for r in results["results"]
             if r["case"]["trainer"] == trainer and r["case"]["size"] == size
             and (merges is None or r["case"]["merges"] == merges)
             and all(dict(r["case"]["options"]).get(k) == v for k, v in options.items())]
    if len(found) != 1:
        raise LookupError(f"{len(found)} results of {trainer} at {size} with {options}")
    return found[0]


class Row(NamedTuple):
    task: str
    bytepair: str
    peer: str
    command: str


def _ladder(size: int, label: str) -> Row:
    data = _load("ladder-final-3.json")
    ours, theirs = (_case(data, trainer, size, 32512, mode="gpt2", threads=2)
                    for trainer in ("bytepair", "gigabpe"))
    return Row(f"{label}, GPT-2 split, 32,768 tokens, 2 threads",
               f"{seconds(ours['wall'])}, {mib(ours['peak_mib'])}",
               f"gigabpe {seconds(theirs['wall'])}, {mib(theirs['peak_mib'])}", "L")


def _ingest() -> Row:
    data = _load("ingest-100MB-lines.json")
    ours, theirs = (_case(data, f"ingest-{trainer}", 100_000_000, pattern="cl100k",
                          shape="lines", threads=2) for trainer in ("bytepair", "rustbpe"))
    return Row("100 MB, cl100k split, 32,768 tokens, 2 threads",
               f"{seconds(ours['wall'], 2)}, {mib(ours['peak_rss_mib'])}",
               f"rustbpe {seconds(theirs['wall'], 2)}, {mib(theirs['peak_rss_mib'])}", "I")


def _superbpe() -> Row:
    data = _load("superbpe-100MB.json")
    plain, superbpe = (statistics.median(run["wall_s"] for run in data["runs"][kind])
                       for kind in ("plain", "superbpe"))
    return Row(f"100 MB SuperBPE, {data['vocab_size']:,} tokens (transition "
               f"{data['transition']:,}), {data['threads']} threads",
               seconds(superbpe), f"plain BPE {seconds(plain)}", "S")


def _byte_mode() -> Row:
    data = _load("merge-loop-bytes-100MB.json")
    ours, theirs = (_case(data, trainer, 100_000_000, 10_000, mode="bytes")
                    for trainer in ("bytepair", "hf"))
    return Row("100 MB byte mode (no split), 10,000 merges", seconds(ours["wall"]),
               f"`tokenizers` {seconds(theirs['wall'])}", "M")


def _encode() -> Row:
    case = _load("encode.json")["patterns"]["cl100k"]["cases"]["1"]
    return Row("encode 5 MB, cl100k, 32,768 tokens, one thread",
               f"{case['bytepair_encode_first']:.1f} MB/s",
               f"tiktoken {case['tiktoken_encode_ordinary']:.1f} MB/s", "E")


#: The rows, in the README's order.
ROWS: tuple[Callable[[], Row], ...] = (
    lambda: _ladder(100_000_000, "100 MB"), _ingest, lambda: _ladder(1_000_000_000, "1 GB"),
    _superbpe, _byte_mode, _encode)

#: The command behind each row's letter: it writes the JSON file the row reads.
COMMANDS = {
    "L": "python -m benches.report --suite ladder --sizes 100MB 1GB --trainers read bytepair "
         "gigabpe --threads 1 2 --merges 32512 130816 --json benches/results/ladder-final-3.json",
    "I": "python -m benches.report --suite ingest --sizes 100MB --patterns gpt2 cl100k o200k "
         "nanochat whitespace --shapes lines --threads 1 2 --json "
         "benches/results/ingest-100MB-lines.json",
    "S": "python -m benches.superbpe --size 100MB --stages --repeats 3",
    "M": "python -m benches.report --suite merge-loop --json "
         "benches/results/merge-loop-bytes-100MB.json",
    "E": "python -m benches.encode",
}


def render() -> str:
    """The table and its commands, as they stand between the README's markers."""
    rows = [row() for row in ROWS]
    lines = ["| task | bytepair | peer | command |", "|---|---|---|---|"]
    lines += [f"| {r.task} | {r.bytepair} | {r.peer} | {r.command} |" for r in rows]
    lines.append("")
    lines += [f"- {letter}: `{COMMANDS[letter]}`" for letter in dict.fromkeys(r.command for r in rows)]
    return "\n".join(lines)


def replaced(text: str, table: str) -> str:
    """``text`` with what stands between the markers replaced by ``table``."""
    start, end = text.index(BEGIN) + len(BEGIN), text.index(END)
    return text[:start] + "\n" + table + "\n" + text[end:]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benches.readme", description=__doc__)
    parser.add_argument("--check", action="store_true",
                        help="exit 1 when README.md's table differs from the results")
    args = parser.parse_args(argv)
    text = README.read_text(encoding="utf-8")
    updated = replaced(text, render())
    if args.check:
        if updated != text:
            print("README.md's headline table differs from benches/results: run "
                  "python -m benches.readme", file=sys.stderr)
            return 1
        return 0
    README.write_text(updated, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
