"""The synthetic corpus's model and its check (the generator is
:mod:`benches.corpora.synthetic`): fit the model on the real English corpus, compare the
synthetic text's piece statistics with real English's, render docs/simulated-scale.md's
table and plot.

SIMULATED, NOT REAL TEXT: docs/simulated-scale.md shows the fit and its limits.

    python -m benches.synthetic fit                      # refit on English 10 MB
    python -m benches.synthetic check --json benches/results/synthetic-fit.json
    python -m benches.synthetic plot                     # docs/images/synthetic-heaps.png
"""


from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import os
import sys
import time
from collections import Counter
from pathlib import Path

import numpy as np

from benches import corpus as corpora
from benches.corpora.synthetic import (HEAD, KINDS, LINE_BREAKS, MAX_LENGTH, MODEL, ROOT,
                                       SETTINGS, VERSION, corpus_path, kind_of)


# --------------------------------------------------------------------------- statistics


def piece_counts(path: Path | str, limit: int | None = None) -> tuple[list[bytes], np.ndarray]:
    """``(pieces, counts)`` of a text file split like the benchmarks (GPT-2, one document
    per line), read in 16 MiB blocks; ``limit``: its first bytes only (at a line end)."""
    from bytepair.split import fastsplit
    table = fastsplit.table()
    done = 0
    with open(path, "rb") as f:
        while data := f.read(1 << 24):
            data += f.readline()
            if limit is not None and done + len(data) > limit:
                table.count(data[: data.rfind(b"\n", 0, limit - done) + 1], "gpt2", per_line=True)
                break
            done += len(data)
            table.count(data, "gpt2", per_line=True)
    data, starts, counts = table.arrays()
    pieces = [data[starts[i]:starts[i + 1]] for i in range(len(counts))]
    return pieces, np.frombuffer(counts, dtype=np.int64).copy()


def statistics(pieces: list[bytes], counts: np.ndarray) -> dict:
    """What drives training memory: distinct pieces and their bytes, the share seen once,
    the Zipf slope, the piece lengths and the kinds (by distinct piece and by token)."""
    counts = np.asarray(counts, dtype=np.int64)
    order = np.sort(counts)[::-1]
    ranks = np.arange(1, len(order) + 1)
    # Zipf slope: least squares of log count on log rank over ranks 10..10,000 (the body).
    body = slice(9, min(10_000, len(order)))
    slope = float(np.polyfit(np.log(ranks[body]), np.log(order[body]), 1)[0]) if len(order) > 20 else 0.0
    lengths = np.array([len(p) for p in pieces])
    kinds = Counter()
    kind_tokens = Counter()
    for p, c in zip(pieces, counts):
        k = kind_of(p.decode("utf-8", "replace"))
        kinds[k] += 1
        kind_tokens[k] += int(c)
    n = len(pieces)
    tokens = int(counts.sum())
    return dict(
        tokens=tokens, distinct=n, distinct_bytes=int(lengths.sum()),
        once=round(float((counts == 1).mean()), 4) if n else 0.0,
        zipf_slope=round(slope, 3),
        mean_length=round(float(lengths.mean()), 2) if n else 0.0,
        length_quantiles={q: int(np.quantile(lengths, q / 100)) for q in (10, 50, 90, 99)} if n else {},
        kinds={k: round(kinds[k] / n, 4) for k in KINDS},
        kinds_by_token={k: round(kind_tokens[k] / tokens, 4) for k in KINDS},
    )


# --------------------------------------------------------------------------- the model


def fit(path: Path | str, out: Path = MODEL) -> dict:
    """Fit the model's tables on a real text file and write them to ``out``."""
    pieces, counts = piece_counts(path)
    order = np.argsort(-counts, kind="stable")
    tokens = int(counts.sum())
    head = [[pieces[i].decode("utf-8"), int(counts[i])] for i in order[:HEAD]]
    tail = [pieces[i].decode("utf-8") for i in order[HEAD:]]
    tail_kinds = [kind_of(p) for p in tail]
    kinds = {}
    for kind in KINDS:
        members = [p for p, k in zip(tail, tail_kinds) if k == kind]
        spaced = sum(p.startswith(" ") and kind != "space" for p in members)
        bodies = [p[1:] if p.startswith(" ") and kind != "space" else p for p in members]
        bodies = [b for b in bodies if b and not (LINE_BREAKS & set(b))]
        lengths = Counter(min(len(b), MAX_LENGTH) for b in bodies)
        order_k = 2 if kind == "latin" else 1
        chars = Counter(c for b in bodies for c in b if c == "\t" or ord(c) >= 0x20)
        alphabet = "".join(c for c, _ in chars.most_common(512))
        keep = set(alphabet)
        transitions = Counter()
        for b in bodies:
            state = ("",) * order_k
            for c in b:
                if c in keep:
                    transitions["".join(state) + "\0" + c] += 1
                    state = state[1:] + (c,)
        kinds[kind] = dict(share=len(members) / max(1, len(tail)),
                           space=spaced / max(1, len(members)),
                           lengths=sorted(lengths.items()), order=order_k, alphabet=alphabet,
                           transitions=sorted(transitions.items()))
    lines = Counter()
    with open(path, "rb") as f:
        for line in f:
            lines[len(_split_line(line))] += 1
    model = dict(version=VERSION, source=str(Path(path).name),
                 source_sha256=hashlib.sha256(Path(path).read_bytes()).hexdigest(),
                 tokens=tokens, distinct=len(pieces), head=head, kinds=kinds,
                 line_tokens=sorted(lines.items()))
    with gzip.open(out, "wt", encoding="utf-8") as f:
        json.dump(model, f, ensure_ascii=False, separators=(",", ":"))
    return model


def _split_line(line: bytes) -> list[str]:
    from bytepair.split import fastsplit
    return fastsplit.split(line.rstrip(b"\n").decode("utf-8", "replace"), "gpt2")


RESULTS = ROOT / "benches" / "results" / "synthetic-fit.json"
PLOT = ROOT / "docs" / "images" / "synthetic-heaps.png"
#: Sizes compared with real English (the English recipe's prefixes).
CHECK_SIZES = (10_000_000, 30_000_000, 100_000_000)
#: The goals: distinct pieces within this fraction of the real count, the share seen once
#: within this many points.
DISTINCT_TOLERANCE = 0.15
ONCE_TOLERANCE = 0.05


def heaps(sizes, distinct) -> tuple[float, float]:
    """``(K, beta)`` of ``distinct ~ K * size ** beta``, least squares in log space.

    >>> k, beta = heaps([1e6, 1e8], [1e3, 1e5]); round(beta, 3)
    1.0
    """
    beta, log_k = np.polyfit(np.log(np.asarray(sizes, float)), np.log(np.asarray(distinct, float)), 1)
    return float(np.exp(log_k)), float(beta)


#: The steeper setting's curve is drawn up to this size.
WEB_CURVE_UP_TO = 300_000_000


def _growth(pieces: list[bytes], counts: np.ndarray) -> dict:
    return dict(tokens=int(counts.sum()), distinct=len(pieces),
                distinct_bytes=sum(map(len, pieces)), once=round(float((counts == 1).mean()), 4))


def check(sizes=CHECK_SIZES, extra=(), seed: int = 0) -> dict:
    """Real English against the synthetic text at ``sizes`` (prefixes of one synthetic file),
    and the synthetic text alone at the ``extra`` sizes (both settings)."""
    rows = []
    largest = max(sizes)
    real_file = corpora.corpus_path(largest)
    synth = {setting: corpus_path(max(largest, *extra) if setting == "english" and extra
                                  else max(largest, *(e for e in extra if e <= WEB_CURVE_UP_TO)),
                                  setting=setting, seed=seed) for setting in SETTINGS}
    for size in sizes:
        real = statistics(*piece_counts(real_file, size))
        made = statistics(*piece_counts(synth["english"], size))
        rows.append(dict(size=size, real=real, synthetic=made,
                         distinct_ratio=round(made["distinct"] / real["distinct"], 3),
                         once_points=round(100 * (made["once"] - real["once"]), 1)))
    curves = {}
    for setting, path in synth.items():
        points = sorted({*sizes, *extra})
        if setting != "english":
            points = [n for n in points if n <= WEB_CURVE_UP_TO]
        curves[setting] = [dict(size=n, **_growth(*piece_counts(path, n))) for n in points]
    k, beta = heaps([r["size"] for r in rows], [r["real"]["distinct"] for r in rows])
    goals = dict(distinct_within=DISTINCT_TOLERANCE, once_within_points=100 * ONCE_TOLERANCE,
                 met=all(abs(r["distinct_ratio"] - 1) <= DISTINCT_TOLERANCE
                         and abs(r["once_points"]) <= 100 * ONCE_TOLERANCE for r in rows))
    return dict(suite="synthetic-fit", date=time.strftime("%Y-%m-%d %H:%M"),
                load=os.getloadavg(), settings=SETTINGS, seed=seed, real_heaps=dict(K=k, beta=beta),
                synthetic_heaps={s: dict(zip(("K", "beta"), heaps([c["size"] for c in cs],
                                                                 [c["distinct"] for c in cs])))
                                 for s, cs in curves.items()},
                rows=rows, curves=curves, goals=goals)


BEGIN, END = "<!-- synthetic-fit:begin -->", "<!-- synthetic-fit:end -->"
DOC = ROOT / "docs" / "simulated-scale.md"


def render(report: dict) -> str:
    """The Markdown of a :func:`check` report (docs/simulated-scale.md)."""
    load = ", ".join(f"{x:.1f}" for x in report["load"])
    lines = [f"`{report['command']}` ({report['date']} UTC, load {load}; raw results "
             "`benches/results/synthetic-fit.json`). GPT-2 split, one document per line; "
             "*distinct* pieces and their bytes, the share of them *seen once*, the Zipf slope "
             "(least squares of log count on log rank, ranks 10 to 10,000), the mean piece "
             "length in bytes, and the kinds' shares of the distinct pieces.", "",
             "| size | text | tokens | distinct | vs real | seen once | vs real (points) "
             "| Zipf slope | mean length | Latin / other scripts / numbers / punctuation / "
             "white space |", "|---|---|---:|---:|---:|---:|---:|---:|---:|---|"]
    for r in report["rows"]:
        for name, st in (("real English", r["real"]), ("synthetic", r["synthetic"])):
            k = st["kinds"]
            lines.append(
                f"| {r['size'] / 1e6:g} MB | {name} | {st['tokens']:,} | {st['distinct']:,} | "
                + (f"{r['distinct_ratio']:.2f}x | " if name == "synthetic" else " | ")
                + f"{st['once']:.3f} | "
                + (f"{r['once_points']:+.1f} | " if name == "synthetic" else " | ")
                + f"{st['zipf_slope']:.2f} | {st['mean_length']:.1f} | "
                + " / ".join(f"{100 * k[x]:.1f}%" for x in KINDS) + " |")
    real = report["real_heaps"]
    lines += ["", f"Heaps' law fitted on real English at these sizes: distinct = "
              f"{real['K']:.3g} x bytes^{real['beta']:.3f}. Synthetic, over every size "
              "measured: " + "; ".join(f"{s} setting, exponent {h['beta']:.3f}"
                                       for s, h in report["synthetic_heaps"].items()) + ".", "",
              "| size | synthetic distinct | their bytes | seen once | web setting distinct |",
              "|---|---:|---:|---:|---:|"]
    web = {c["size"]: c for c in report["curves"].get("web", [])}
    for c in report["curves"]["english"]:
        w = web.get(c["size"])
        lines.append(f"| {c['size'] / 1e6:g} MB | {c['distinct']:,} | {c['distinct_bytes']:,} "
                     f"| {c['once']:.3f} | {format(w['distinct'], ',') if w else ''} |")
    goals = report["goals"]
    lines += ["", f"Goals (distinct pieces within {100 * goals['distinct_within']:.0f}%, share "
              f"seen once within {goals['once_within_points']:.0f} points, at every size "
              f"compared): {'met' if goals['met'] else '**not met**'}."]
    return "\n".join(lines)


def plot(report: dict, out: Path = PLOT) -> Path:
    """Distinct pieces against size: real English, the synthetic text, the Heaps fit."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(7, 4.5))
    real = [(r["size"], r["real"]["distinct"]) for r in report["rows"]]
    k, beta = report["real_heaps"]["K"], report["real_heaps"]["beta"]
    top = max(c["size"] for cs in report["curves"].values() for c in cs)
    xs = np.geomspace(min(x for x, _ in real), max(top, 10**10), 50)
    ax.plot(xs, k * xs ** beta, ":", color="grey",
            label=f"Heaps fit on real English, beta {beta:.2f}, continued")
    for setting, style in (("english", "o-"), ("web", "s--")):
        cs = report["curves"].get(setting, [])
        b = report["synthetic_heaps"][setting]["beta"]
        ax.plot([c["size"] for c in cs], [c["distinct"] for c in cs], style,
                label=f"synthetic ({setting} setting, beta {b:.2f}) - simulated")
    ax.plot(*zip(*real), "kx", markersize=10, mew=2, label="real English (the recipe's prefixes)")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("corpus bytes")
    ax.set_ylabel("distinct pieces (GPT-2 split, per line)")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    ax.set_title("Distinct pieces: real English and the synthetic corpus")
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benches.synthetic", description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("fit", help="fit the model on the English corpus")
    p.add_argument("--size", default="10MB")
    p = sub.add_parser("stats", help="statistics of text files")
    p.add_argument("paths", nargs="+")
    p = sub.add_parser("render", help="the table and plot of a check's JSON again")
    p.add_argument("--json", type=Path, default=RESULTS)
    p = sub.add_parser("check", help="synthetic against real English, the JSON and the plot")
    p.add_argument("--extra", nargs="*", default=[], help="synthetic-only sizes, e.g. 300MB 1GB")
    p.add_argument("--json", type=Path, default=RESULTS)
    p.add_argument("--plot", type=Path, default=PLOT)
    args = parser.parse_args(argv)
    if args.command == "fit":
        path = corpora.corpus_path(corpora.parse_size(args.size))
        model = fit(path)
        print(f"wrote {MODEL} from {path} ({model['distinct']:,} distinct pieces)")
    elif args.command == "stats":
        for path in args.paths:
            print(path, json.dumps(statistics(*piece_counts(path))))
    elif args.command == "render":
        from .harness import write_doc
        report = json.loads(args.json.read_text())
        plot(report)
        write_doc(render(report), DOC, BEGIN, END)
        print(render(report))
    elif args.command == "check":
        report = check(extra=[corpora.parse_size(x) for x in args.extra])
        report["command"] = "python -m benches.synthetic check" + (
            " --extra " + " ".join(args.extra) if args.extra else "")
        args.json.write_text(json.dumps(report, indent=1) + "\n")
        plot(report, args.plot)
        from .harness import write_doc
        write_doc(render(report), DOC, BEGIN, END)
        for r in report["rows"]:
            print(f"{r['size'] / 1e6:6.0f} MB  distinct real {r['real']['distinct']:>9,} "
                  f"synthetic {r['synthetic']['distinct']:>9,} ({r['distinct_ratio']:.3f}x)  "
                  f"once {r['real']['once']:.3f} / {r['synthetic']['once']:.3f}")
        print("goals met" if report["goals"]["met"] else "goals NOT met")
    return 0


if __name__ == "__main__":
    sys.exit(main())
