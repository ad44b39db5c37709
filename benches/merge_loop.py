"""The merge-loop suite of the report: large vocabularies and byte mode.

    python -m benches.report --suite merge-loop                  # the goal cases (~40 min)
    python -m benches.report --suite merge-loop --scale 10MB --no-write   # a quick look
    python -m benches.report --render benches/results/merge-loop.json

Cases, one thread, each in a fresh worker process, bytepair next to Hugging
Face ``tokenizers`` (``hf``) on the same input in the same run:

* GPT-2 split, one document per line, 100 MB: bytepair and hf at vocabulary
  257, 32768 and 131072. The *learning phase* at vocabulary N is the whole
  job at N minus the whole job at 257 (counting is the same in both), for
  both trainers; the *marginal cost per merge* is (T(131072) - T(32768)) /
  98304.
* The same corpus up to vocabulary 1,048,576 (or until no pair is left),
  bytepair alone: it must run; its time and peak memory are reported.
* Byte mode (no pre-tokenizer, each line one document), 10,000 merges:
  ``bytepair.train`` and ``bytepair.train_bytes`` against hf at 10 MB on the
  benches corpus and on a corpus of short lines (the same English text split
  after sentence and clause punctuation: lines of about 30 bytes), and at
  100 MB on the benches corpus with peak RSS per input byte.

``--scale 10MB`` replaces 100 MB by 10 MB everywhere (to guide work while the
machine is shared). Writes the block between the merge-loop markers of
docs/benchmarks.md and benches/results/merge-loop.json.
"""

from __future__ import annotations

import os
import re
import sys
import time
from pathlib import Path

from . import corpus as corpora
from . import harness
from .harness import ROOT, Case, _fmt_time

RESULTS = ROOT / "benches" / "results" / "merge-loop.json"
BEGIN, END = "<!-- merge-loop:begin -->", "<!-- merge-loop:end -->"
MB = 10**6
TRAINERS = ("bytepair", "train_bytes", "hf")
#: Vocabulary sizes of the GPT-2 cases; 257 is one merge, the baseline of the learning phase.
VOCABS = (257, 32768, 131072)
HUGE_VOCAB = 1 << 20
BYTE_MERGES = 10_000
#: Where the short-lines corpus splits a line: after sentence and clause punctuation.
CLAUSE_END = re.compile(rb"(?<=[.!?;:,])\s+")

# The suite's goals: ratios against Hugging Face.
GOAL_LEARN = 0.3        # learning phase at vocab 131072, bytepair / hf
GOAL_MARGINAL = 1.0     # cost per merge from 32768 to 131072, bytepair / hf
GOAL_BYTES_10MB = 0.2   # byte mode, 10 MB, 10k merges, wall, bytepair / hf
GOAL_BYTES_100MB = 0.1
GOAL_BYTES_PER_BYTE = 20.0  # peak RSS per input byte, byte mode at 100 MB


def short_lines_path(size: int, corpus: str | None = None) -> Path:
    """A corpus of ``size`` bytes (cut at a line end) of short lines, built once.

    The English recipe's lines (or those of the text file ``corpus``) split
    after ``. ! ? ; : ,`` and the spaces that follow: real text whose lines
    average about 30 bytes.
    """
    # Ten times the text is more than enough: splitting only drops spaces.
    source = corpora.corpus_path(max(size * 10, 10 * MB), corpus)
    stem = f"english-v{corpora.RECIPE}" if corpus is None else source.stem
    path = corpora.cache_dir() / f"{stem}-short-{size}.txt"
    if path.exists():
        return path
    out, total = [], 0
    with open(source, "rb") as f:
        for line in f:
            for part in CLAUSE_END.split(line.rstrip(b"\n")):
                if not part:
                    continue
                if total + len(part) + 1 > size:
                    break
                out.append(part + b"\n")
                total += len(part) + 1
            else:
                continue
            break
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_bytes(b"".join(out))
    os.replace(tmp, path)
    return path


def _case(trainer: str, size: int, merges: int, mode: str, corpus: str | None = None) -> Case:
    return Case(trainer, size, merges, corpus, (("mode", mode), ("threads", 1)))


def matrix(scale: int, trainers=TRAINERS, corpus: str | None = None) -> list[tuple[Case, Path]]:
    """The suite's cases with the file each one reads (prefixes of ``corpus`` when given)."""
    big = corpora.corpus_path(scale, corpus)
    ten = corpora.corpus_path(10 * MB, corpus)
    short = short_lines_path(10 * MB, corpus)
    cases = []
    for vocab in VOCABS:
        for trainer in ("bytepair", "hf"):
            cases.append((_case(trainer, scale, vocab - 256, "gpt2"), big))
    cases.append((_case("bytepair", scale, HUGE_VOCAB - 256, "gpt2"), big))
    for path, label in ((ten, None), (short, str(short))):
        for trainer in TRAINERS:
            cases.append((_case(trainer, 10 * MB, BYTE_MERGES, "bytes", label), path))
    if scale != 10 * MB:
        for trainer in TRAINERS:
            cases.append((_case(trainer, scale, BYTE_MERGES, "bytes"), big))
    return [(c, p) for c, p in cases if c.trainer in trainers]


# --------------------------------------------------------------------------- analysis


def _get(results, trainer, mode, size, merges, short=False):
    for r in results:
        c = r["case"]
        o = dict(map(tuple, c["options"]))
        if (r["status"] == "ok" and c["trainer"] == trainer and o["mode"] == mode
                and c["size"] == size and c["merges"] == merges
                and (c["corpus"] is not None) == short):
            return r
    return None


def _ratio(a: float, b: float) -> str:
    return f"{a / b:.2f}x" if b > 0 else "n/a"


def goals(results, scale: int) -> list[dict]:
    """Each goal with the numbers it is judged on."""
    out = []
    top, mid = VOCABS[2] - 256, VOCABS[1] - 256
    t = {(tr, m): _get(results, tr, "gpt2", scale, m) for tr in ("bytepair", "hf")
         for m in (1, mid, top)}
    if all(t.values()):
        learn = {tr: t[(tr, top)]["wall"] - t[(tr, 1)]["wall"] for tr in ("bytepair", "hf")}
        out.append(dict(goal=f"learning phase at vocab {VOCABS[2]}, {corpora.format_size(scale)}, "
                        f"GPT-2: bytepair <= {GOAL_LEARN}x hf",
                        ratio=learn["bytepair"] / learn["hf"],
                        met=learn["bytepair"] <= GOAL_LEARN * learn["hf"],
                        detail=f"T({VOCABS[2]}) - T(257): bytepair {learn['bytepair']:.2f} s, "
                               f"hf {learn['hf']:.2f} s; by CPU time "
                               + _ratio(t[('bytepair', top)]['cpu'] - t[('bytepair', 1)]['cpu'],
                                        t[('hf', top)]['cpu'] - t[('hf', 1)]['cpu'])))
        # Per merge actually learned: a corpus can run out of pairs before the top size.
        def per_merge(trainer, clock):
            learned = t[(trainer, top)]["digest"]["learned"] - t[(trainer, mid)]["digest"]["learned"]
            return (t[(trainer, top)][clock] - t[(trainer, mid)][clock]) * 1e6 / max(1, learned)

        per = {tr: per_merge(tr, "wall") for tr in ("bytepair", "hf")}
        cpu = {tr: per_merge(tr, "cpu") for tr in ("bytepair", "hf")}
        # A difference of two runs: other processes on the machine can make it meaningless.
        valid = per["bytepair"] > 0 and per["hf"] > 0
        out.append(dict(goal=f"marginal cost per merge {VOCABS[1]} -> {VOCABS[2]}: "
                        f"bytepair <= {GOAL_MARGINAL}x hf",
                        ratio=per["bytepair"] / per["hf"] if valid else None,
                        met=valid and per["bytepair"] <= GOAL_MARGINAL * per["hf"],
                        detail=f"bytepair {per['bytepair']:.1f} us, hf {per['hf']:.1f} us per merge "
                               f"by wall time; {cpu['bytepair']:.1f} us and {cpu['hf']:.1f} us by "
                               "CPU time" + ("" if valid else " (wall times disturbed: a "
                                             "difference below zero)")))
    for short in (False, True):
        hf = _get(results, "hf", "bytes", 10 * MB, BYTE_MERGES, short)
        for trainer in ("bytepair", "train_bytes"):
            r = _get(results, trainer, "bytes", 10 * MB, BYTE_MERGES, short)
            if r and hf:
                out.append(dict(goal=f"byte mode, 10 MB {'short lines' if short else 'benches corpus'}"
                                f", {BYTE_MERGES} merges: {trainer} <= {GOAL_BYTES_10MB}x hf",
                                ratio=r["wall"] / hf["wall"],
                                met=r["wall"] <= GOAL_BYTES_10MB * hf["wall"],
                                detail=f"{trainer} {r['wall']:.2f} s, hf {hf['wall']:.2f} s; "
                                       f"by CPU time {_ratio(r['cpu'], hf['cpu'])}"))
    if scale != 10 * MB:
        hf = _get(results, "hf", "bytes", scale, BYTE_MERGES)
        for trainer in ("bytepair", "train_bytes"):
            r = _get(results, trainer, "bytes", scale, BYTE_MERGES)
            if r and hf:
                per_byte = r["peak_mib"] * 2**20 / r["bytes"]
                out.append(dict(goal=f"byte mode, {corpora.format_size(scale)}: {trainer} <= "
                                f"{GOAL_BYTES_100MB}x hf, peak <= {GOAL_BYTES_PER_BYTE:g} B per "
                                "input byte",
                                ratio=r["wall"] / hf["wall"],
                                met=(r["wall"] <= GOAL_BYTES_100MB * hf["wall"]
                                     and per_byte <= GOAL_BYTES_PER_BYTE),
                                detail=f"{trainer} {r['wall']:.1f} s, hf {hf['wall']:.1f} s "
                                       f"(by CPU time {_ratio(r['cpu'], hf['cpu'])}); "
                                       f"peak {per_byte:.1f} B per input byte"))
    return out


def render(report: dict) -> str:
    m = report["machine"]
    lines = [
        f"Measured {report['date']} with `{report['command']}` on {m['cpu']} ({m['cores']} "
        f"cores), {m['implementation']} {m['python']}, "
        + ", ".join(f"{k} {v}" for k, v in m["versions"].items())
        + ("; bytepair with uncommitted changes" if report["code"]["modified"] else "")
        + f". One thread everywhere. Raw results: `{report['json']}`.",
        "",
        "| trainer | mode | corpus | merges | learned | wall s | CPU s | peak RSS MiB "
        "| peak B per input byte | load |",
        "|---|---|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in report["results"]:
        c = r["case"]
        o = dict(map(tuple, c["options"]))
        where = corpora.format_size(c["size"]) + (" short lines" if c["corpus"] else "")
        if r["status"] != "ok":
            lines.append(f"| {c['trainer']} | {o['mode']} | {where} | {c['merges']:,} | "
                         f"{r['status']} | | | | | |")
            continue
        lines.append(
            f"| {c['trainer']} | {o['mode']} | {where} | {c['merges']:,} | "
            f"{r['digest']['learned']:,} | {_fmt_time(r['wall'])} | {_fmt_time(r['cpu'])} | "
            f"{r['peak_mib']:,.0f} | {r['peak_mib'] * 2**20 / r['bytes']:.1f} | "
            f"{r['loadavg'][0]:.1f}-{r['loadavg'][1]:.1f} |")
    lines += ["", "| goal | ratio | met | numbers |", "|---|---:|---|---|"]
    for g in report["goals"]:
        ratio = "n/a" if g["ratio"] is None else f"{g['ratio']:.2f}x"
        lines.append(f"| {g['goal']} | {ratio} | {'yes' if g['met'] else '**no**'} "
                     f"| {g['detail']} |")
    return "\n".join(lines)


def run(args, argv, library: Path | None) -> int:
    scale = corpora.parse_size(args.scale)
    cases = matrix(scale, args.trainers, args.corpus)
    print(f"{len(cases)} cases", file=sys.stderr)
    started = time.perf_counter()
    results = []
    for i, (case, path) in enumerate(cases, 1):
        print(f"[{i}/{len(cases)}] {case.name} ...", file=sys.stderr, end=" ", flush=True)
        r = harness.run_case(case, path, args, library)
        results.append(r)
        print(f"{r['wall']:.2f} s, peak {r['peak_mib']:.0f} MiB" if r["status"] == "ok"
              else f"{r['status']} {r.get('stderr', '')}", file=sys.stderr, flush=True)
    paths = {corpora.parse_size(args.scale): corpora.corpus_path(scale, args.corpus)}
    report = harness.make_report("merge-loop", args, argv, library, list(TRAINERS), paths,
                                 results, [], started, scale=scale,
                                 short_lines=str(short_lines_path(10 * MB, args.corpus)))
    report["goals"] = goals(results, scale)
    harness.publish(report, args, render, BEGIN, END)
    return 0 if all(r["status"] == "ok" for r in results) else 1


def rerender(report: dict, args) -> int:
    harness.publish(report, args, render, BEGIN, END, save=False)
    return 0
