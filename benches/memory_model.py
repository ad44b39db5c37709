"""The memory model of training: bytes per distinct piece and per distinct piece byte, for
counting and for the engine, fitted on measured rungs and checked on one held back.

Reads the per-phase peaks that ``benches/phase_memory.py`` wrote (each run records the
distinct pieces ``pieces`` and their bytes ``positions``), fits by least squares

    count peak  - start = C0 + Cp * positions + Cd * pieces      (counting, 2 threads)
    engine peak - start = E0 + Ep * positions + Ed * pieces      (flat arrays, build, merges)

(the per-piece costs from the layout, :data:`PER_PIECE`) on every rung but the held-back one, predicts the held-back rung's peak, and projects the
peak to larger corpora with the synthetic corpus's growth (docs/simulated-scale.md).

    python -m benches.memory_model --fit 1GB 3GB --check 10GB
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benches" / "results"
MiB = 2**20


def rung(size: str, language: str = "synthetic") -> dict:
    """One phase-memory run: start, the counting and the engine peaks (bytes), its table."""
    run = json.loads((RESULTS / f"phase-memory-{language}-{size}.json").read_text())["runs"][0]
    phases = run["phases"]
    engine = max(phases[p]["peak_mib"] for p in ("flat", "build", "merges") if p in phases)
    return dict(size=size, positions=run["positions"], pieces=run["pieces"],
                start=run["start_mib"] * MiB, count=phases["count"]["peak_mib"] * MiB,
                engine=engine * MiB, peak=run["peak_mib"] * MiB, wall=run["wall"],
                loadavg=run.get("loadavg"))


#: Bytes per distinct piece, from the layout rather than fitted (on one kind of text the
#: pieces' number and bytes grow together, and a fit cannot tell them apart): at the engine's
#: peak, the slot that ends each piece (its occurrence lists and other slots are per
#: position; the counts' flat arrays are freed by then), and the counts' flat arrays (a
#: start and a count, 8 bytes each).
PER_PIECE = {"engine": 4.0, "count": 16.0}


def fit(rows: list[dict], key: str) -> tuple[float, float, float]:
    """``(constant, per position, per piece)`` of ``row[key] - row["start"]``: the per-piece
    cost is :data:`PER_PIECE`, the constant and the per-position cost a least-squares fit."""
    per_piece = PER_PIECE[key]
    a = np.array([[1.0, r["positions"]] for r in rows])
    b = np.array([r[key] - r["start"] - per_piece * r["pieces"] for r in rows])
    constant, per_position = np.linalg.lstsq(a, b, rcond=None)[0]
    return float(constant), float(per_position), per_piece


def predict(coef, positions: float, pieces: float, start: float) -> float:
    return start + coef[0] + coef[1] * positions + coef[2] * pieces


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benches.memory_model",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--fit", nargs="+", default=["1GB", "3GB"])
    parser.add_argument("--check", nargs="*", default=["10GB"])
    parser.add_argument("--project", nargs="*", default=["100GB", "1TB"],
                        help="sizes to project to, continuing the growth between the last two rungs")
    parser.add_argument("--language", default="synthetic")
    parser.add_argument("--json", type=Path, default=RESULTS / "memory-model.json")
    args = parser.parse_args(argv)
    fitted = [rung(s, args.language) for s in args.fit]
    model = {key: fit(fitted, key) for key in ("count", "engine")}
    out = dict(command="python -m benches.memory_model " + " ".join(argv or sys.argv[1:]),
               fit=args.fit, model={k: dict(constant=c[0], per_position=c[1], per_piece=c[2])
                                    for k, c in model.items()}, rungs=[])
    for r in fitted + [rung(s, args.language) for s in args.check]:
        row = dict(size=r["size"], held_back=r["size"] in args.check, positions=r["positions"],
                   pieces=r["pieces"], peak_mib=round(r["peak"] / MiB, 1),
                   count_mib=round(r["count"] / MiB, 1), engine_mib=round(r["engine"] / MiB, 1))
        pc = predict(model["count"], r["positions"], r["pieces"], r["start"])
        pe = predict(model["engine"], r["positions"], r["pieces"], r["start"])
        row.update(predicted_count_mib=round(pc / MiB, 1), predicted_engine_mib=round(pe / MiB, 1),
                   predicted_peak_mib=round(max(pc, pe) / MiB, 1),
                   peak_ratio=round(max(pc, pe) / r["peak"], 3),
                   peak_per_piece=round(r["peak"] / r["pieces"], 1),
                   count_share=round((r["count"] - r["start"]) / (r["peak"] - r["start"]), 3),
                   engine_share=round((r["engine"] - r["start"]) / (r["peak"] - r["start"]), 3))
        out["rungs"].append(row)
        print(f"{r['size']:>6}{' (held back)' if row['held_back'] else '':12} positions "
              f"{r['positions']:>12,} pieces {r['pieces']:>11,}: peak {row['peak_mib']:8.1f} MiB "
              f"(count {row['count_mib']:.0f}, engine {row['engine_mib']:.0f}), predicted "
              f"{row['predicted_peak_mib']:8.1f} ({row['peak_ratio']:.3f}x)")
    for k, c in model.items():
        print(f"{k:>6}: {c[0] / MiB:7.1f} MiB + {c[1]:6.2f} B/position + {c[2]:6.2f} B/piece")
    # The projection: pieces and positions continued with the exponents of the last two rungs.
    from .corpus import parse_size
    rungs = sorted(fitted + [rung(s, args.language) for s in args.check],
                   key=lambda r: parse_size(r["size"]))
    a, b = rungs[-2], rungs[-1]
    span = np.log(parse_size(b["size"]) / parse_size(a["size"]))
    growth = {k: float(np.log(b[k] / a[k]) / span) for k in ("positions", "pieces")}
    out["projection"] = dict(from_rungs=[a["size"], b["size"]], exponents=growth, rows=[])
    for size in args.project:
        factor = parse_size(size) / parse_size(b["size"])
        positions = b["positions"] * factor ** growth["positions"]
        pieces = b["pieces"] * factor ** growth["pieces"]
        pc = predict(model["count"], positions, pieces, b["start"])
        pe = predict(model["engine"], positions, pieces, b["start"])
        out["projection"]["rows"].append(dict(size=size, positions=positions, pieces=pieces,
                                              count_gib=pc / 2**30, engine_gib=pe / 2**30))
        print(f"{size:>6} (projected): positions {positions / 1e9:.2f} G, pieces {pieces / 1e6:.0f} M: "
              f"counting {pc / 2**30:.1f} GiB, engine {pe / 2**30:.1f} GiB")
    args.json.write_text(json.dumps(out, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
