"""Hostile inputs: the time and memory a reader spends refusing (or reading) a file built to hurt.

Three measurements, each in fresh processes, back to back:

* model files: the time ``bytepair.load`` takes to refuse an unterminated string of
  ``\\"`` pairs at 8 KB and 80 KB, against ``json.loads`` refusing the same text (the peer);
* count files: the peak memory of ``PieceCounts.load`` refusing a zlib bomb (a 13-byte
  table whose body inflates 1,000 times the file's size), against loading the honest file;
* Parquet: the peak memory of ``bytepair.count`` on the same text in 1 and in 30 row groups.

Peak memory is ``VmHWM`` of the measuring process (Linux), which includes the interpreter
and its imports; the honest file shows that floor.

    python -m benches.hostile                 # about 30 s

Writes benches/results/hostile.json (``--no-write`` to skip) and prints the figures.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import random
import subprocess
import sys
import tempfile
import zlib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benches" / "results" / "hostile.json"

#: Prints the best of ``repeats`` times (seconds) of refusing argv[1] with ``bytepair.load``
#: and with ``json.loads`` on its text.
_REFUSAL = """
import json, sys, time
import bytepair
path, repeats = sys.argv[1], int(sys.argv[2])
text = open(path, encoding="utf-8").read()
def best(refuse):
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        try:
            refuse()
        except ValueError:
            pass
        else:
            sys.exit("not refused")
        times.append(time.perf_counter() - start)
    return min(times)
print(json.dumps({"load": best(lambda: bytepair.load(path)), "json.loads": best(lambda: json.loads(text))}))
"""

_PEAK = """
with open("/proc/self/status") as status:
    print(next(line.split()[1] for line in status if line.startswith("VmHWM:")))
"""

_LOAD_COUNTS = """
import sys
from bytepair import CountsFormatError, PieceCounts
try:
    PieceCounts.load(sys.argv[1])
except CountsFormatError:
    pass
"""

_COUNT = "import sys, bytepair\nbytepair.count(sys.argv[1], workers=1, progress=False)\n"


def _run(script: str, *args: str) -> str:
    done = subprocess.run([sys.executable, "-c", script, *args], capture_output=True, text=True,
                          timeout=600, check=True)
    return done.stdout


def _peak_mib(script: str, *args: str) -> float:
    return round(int(_run(script + _PEAK, *args).split()[-1]) / 1024, 1)


def model_refusals(tmp: Path, repeats: int) -> list[dict]:
    head = b'{"format": "bytepair-model", "version": 1, "kind": "bytes", "pattern": "'
    rows = []
    for size in (8_000, 80_000):
        path = tmp / f"hostile-{size}.json"
        path.write_bytes(head + b'\\"' * (size // 2))
        times = json.loads(_run(_REFUSAL, str(path), str(repeats)))
        rows.append({"case": "unterminated string of \\\" pairs", "bytes": path.stat().st_size,
                     "load_s": times["load"], "json_loads_s": times["json.loads"]})
    return rows


def count_bomb(tmp: Path) -> dict:
    from bytepair import PieceCounts

    honest = tmp / "honest.counts"
    PieceCounts({b"a": 1}, pattern=None).save(honest)
    line = honest.read_bytes().split(b"\n")[0] + b"\n"
    compressor = zlib.compressobj(9)
    body = compressor.compress(line) + b"".join(compressor.compress(bytes(1 << 20)) for _ in range(200))
    bomb = tmp / "bomb.counts"
    bomb.write_bytes(line + body + compressor.flush())
    return {"file_bytes": bomb.stat().st_size, "inflated_bytes": len(line) + (200 << 20),
            "bomb_peak_mib": _peak_mib(_LOAD_COUNTS, str(bomb)),
            "honest_peak_mib": _peak_mib(_LOAD_COUNTS, str(honest))}


def parquet_groups(tmp: Path) -> dict:
    import pyarrow as pa
    import pyarrow.parquet as pq

    pick = random.Random(0)
    words = [f"w{i}x" for i in range(3000)]
    rows = [" ".join(pick.choices(words, k=200)) for _ in range(25000)]
    out = {"text_bytes": sum(map(len, rows))}
    for groups in (1, 30):
        path = tmp / f"g{groups}.parquet"
        pq.write_table(pa.table({"text": rows}), path, row_group_size=-(-len(rows) // groups))
        out[f"peak_mib_{groups}_groups"] = _peak_mib(_COUNT, str(path))
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=5, help="timed refusals per size (best kept)")
    parser.add_argument("--no-write", action="store_true", help="print only")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        result = {
            "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "commit": subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT,
                                     capture_output=True, text=True).stdout.strip(),
            "python": platform.python_version(),
            "load_average": os.getloadavg(),
            "command": "python -m benches.hostile" + (f" --repeat {args.repeat}" if args.repeat != 5 else ""),
            "model_refusals": model_refusals(tmp, args.repeat),
            "count_bomb": count_bomb(tmp),
            "parquet_row_groups": parquet_groups(tmp),
        }
    print(json.dumps(result, indent=1))
    if not args.no_write:
        RESULTS.write_text(json.dumps(result, indent=1) + "\n")


if __name__ == "__main__":
    main()
