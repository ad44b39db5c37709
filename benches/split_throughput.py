"""Split+count throughput per pattern and per core, against `regex` and rustbpe's ingestion.

For each text and each named pattern, three ways to turn one-document-per-line
text into piece counts:

* ``regex``: ``regex.findall`` per line into a ``collections.Counter`` (what
  bytepair does for patterns it has no compiled scanner for);
* ``bytepair``: ``bytepair.split._split.PieceTable.count(data, name, per_line=True)``,
  the compiled scanner and count table over the whole buffer (and, to show
  what counting costs, ``number_of_pieces``: the scanner alone);
* ``rustbpe``: ``rustbpe.Tokenizer().train_from_iterator(lines, 256, pattern=...)``,
  i.e. its ingestion (split, count, build words) and no merges, in a child
  process with ``RAYON_NUM_THREADS=1``.

Throughput is MB (10^6 bytes) of input per CPU second (the process's CPU
time, so other load on the machine does not count), best of ``--repeat``;
wall-clock MB/s is recorded beside it. The counts of ``regex`` and
``bytepair`` are checked to be equal on every text.

Texts: English from ``benches.corpus`` (Debian documentation, one line per
document) and the same module's non-English recipe (Debian's translated
documentation: LibreOffice and GIMP help, man pages, the Debian manuals, GNOME
help and more; ``python -m benches.corpus --list`` shows every language):
``german``, ``russian``, ``japanese``, ``chinese``, ``multilingual`` or any
other language it names. Each text is the first ``--size`` bytes of its
corpus, or all of it where the language has less (the JSON records the real
size).

Command line (one run, all results in one JSON file)::

    python -m benches.split_throughput
    python -m benches.split_throughput --size 10MB --repeat 3 --texts english,russian
    python -m benches.split_throughput --texts chinese,multilingual --patterns cl100k,o200k
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import regex

from bytepair.split import _split
from bytepair.split.pretokenize import PATTERNS, splitter

from . import corpus

NAMES = ("gpt2", "cl100k", "o200k", "nanochat", "superbpe", "whitespace")
#: Patterns whose matches do not cover the text: the text between matches is a piece too.
ISOLATED = ("whitespace", "whitespace-split", "superbpe")
RESULTS = Path(__file__).parent / "results"


def non_english(language: str, size: int | str | None = None) -> Path:
    """The first ``size`` bytes (all, when None or when the language holds fewer) of
    ``language``'s text from benches.corpus's non-English recipe (built once, cached)."""
    return corpus.corpus_path(size, language=language, clip=True)


def _best(repeat: int, run) -> tuple[float, float, object]:
    """(CPU seconds, wall seconds, result) of the fastest of ``repeat`` runs."""
    best = None
    for _ in range(repeat):
        cpu, wall = time.process_time(), time.perf_counter()
        result = run()
        cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
        if best is None or cpu < best[0]:
            best = (cpu, wall, result)
    return best


def regex_counts(lines: list[str], name: str) -> Counter:
    """Piece counts of the lines with the regex module, as bytepair's training splits them."""
    # For the isolated patterns the text between matches is a piece too.
    split = splitter(PATTERNS[name]) if name in ISOLATED else regex.compile(PATTERNS[name]).findall
    counts: Counter = Counter()
    for line in lines:
        counts.update(split(line))
    return counts


def bytepair_counts(data: bytes, name: str) -> _split.PieceTable:
    table = _split.PieceTable()
    table.count(data, name, per_line=True)
    return table


_RUSTBPE = """
import sys, time, rustbpe
path, pattern, repeat = sys.argv[1], sys.argv[2], int(sys.argv[3])
with open(path, encoding="utf-8", newline="") as f:
    lines = [line.rstrip("\\r\\n") for line in f]
best = None
for _ in range(repeat):
    cpu, wall = time.process_time(), time.perf_counter()
    rustbpe.Tokenizer().train_from_iterator(iter(lines), 256, pattern=pattern)
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    best = (cpu, wall) if best is None or cpu < best[0] else best
print(best[0], best[1])
"""


def rustbpe_seconds(path: Path, name: str, repeat: int) -> tuple[float, float] | None:
    """(CPU, wall) seconds of rustbpe's ingestion on one thread, or None without rustbpe."""
    env = dict(os.environ, RAYON_NUM_THREADS="1")
    result = subprocess.run([sys.executable, "-c", _RUSTBPE, str(path), PATTERNS[name], str(repeat)],
                            capture_output=True, text=True, env=env)
    if result.returncode != 0:
        print(f"rustbpe failed on {name}: {result.stderr[-500:]}", file=sys.stderr)
        return None
    cpu, wall = result.stdout.split()
    return float(cpu), float(wall)


def measure(text: str, path: Path, repeat: int, names=NAMES) -> list[dict]:
    data = path.read_bytes()
    lines = data.decode("utf-8").split("\n")
    mb = len(data) / 1e6
    rows = []
    for name in names:
        cpu_r, wall_r, expected = _best(1, lambda: regex_counts(lines, name))
        cpu_b, wall_b, table = _best(repeat, lambda: bytepair_counts(data, name))
        cpu_s, _, _ = _best(repeat, lambda: _split.number_of_pieces(data, name))
        same = table.items() == {piece.encode("utf-8"): n for piece, n in expected.items()}
        row = {"text": text, "pattern": name, "megabytes": round(mb, 3), "pieces": len(table),
               "same_counts": same,
               "regex_mb_per_cpu_s": round(mb / cpu_r, 2), "regex_mb_per_s": round(mb / wall_r, 2),
               "bytepair_mb_per_cpu_s": round(mb / cpu_b, 1), "bytepair_mb_per_s": round(mb / wall_b, 1),
               "bytepair_split_only_mb_per_cpu_s": round(mb / cpu_s, 1)}
        rust = None if name in ISOLATED else rustbpe_seconds(path, name, repeat)  # it keeps matches only
        if rust is not None:
            row["rustbpe_mb_per_cpu_s"] = round(mb / rust[0], 2)
            row["rustbpe_mb_per_s"] = round(mb / rust[1], 2)
        rows.append(row)
        print(json.dumps(row), flush=True)
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--size", default="10MB",
                        help="text size (benches.corpus); a language with less text is used whole")
    parser.add_argument("--repeat", type=int, default=3, help="runs of bytepair and rustbpe; the best counts")
    parser.add_argument("--texts", default="english,german,russian,japanese")
    parser.add_argument("--patterns", default=",".join(NAMES))
    parser.add_argument("--out", default=str(RESULTS / "split-throughput.json"))
    corpus.add_fetch_option(parser)
    args = parser.parse_args(argv)
    corpus.apply_fetch_option(args)
    names = [n for n in args.patterns.split(",") if n]
    load_before = os.getloadavg()[0]
    rows = []
    for text in args.texts.split(","):
        path = (corpus.corpus_path(args.size) if text == "english"
                else non_english(text, args.size))
        rows.extend(measure(text, path, args.repeat, names))
    report = {
        "date": time.strftime("%Y-%m-%d %H:%M"),
        "command": "python -m benches.split_throughput " + " ".join(argv if argv is not None else sys.argv[1:]),
        "machine": {"cpu": platform.processor() or platform.machine(), "cores": os.cpu_count(),
                    "python": platform.python_version(), "regex": regex.__version__},
        "unit": "MB (10^6 bytes) of input per CPU second, one thread; *_mb_per_s: wall clock",
        "load_average_1min": {"start": round(load_before, 2), "end": round(os.getloadavg()[0], 2)},
        "rows": rows,
    }
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=1) + "\n")
    print(f"wrote {out}", file=sys.stderr)
    return 0 if all(row["same_counts"] for row in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
