"""The size ladder: bytepair against gigabpe, rustbpe and Hugging Face from 10 MB to 1 GB.

    python -m benches.report --suite ladder                       # 10MB 100MB 1GB (~30 min)
    python -m benches.report --suite ladder --sizes 10MB 100MB --no-write
    python -m benches.report --render benches/results/ladder.json

Cases, each in a fresh worker process (benches/harness.py's ``run_case``:
wall time, CPU time, peak RSS of the process tree from the OS), one at a
time, the trainers of one input back to back:

* GPT-2 byte-level split, one document per line, vocabulary 32768, 1 and 2
  threads: bytepair, gigabpe, rustbpe and Hugging Face (``hf``) at 10 MB and
  100 MB; at 1 GB bytepair, gigabpe and rustbpe (Hugging Face needs about
  ten times rustbpe's time there, so it is left out unless ``--trainers``
  names it);
* the same at vocabulary 257 (one merge) for bytepair and gigabpe from 100 MB
  to 1 GB: everything but the merge loop, so that the *learning* phase is
  T(32768) - T(257) for both;
* ``read``: the file read in 4 MiB blocks and nothing else, the floor of
  every trainer that reads it;
* gigabpe's other split, ``pretokenizer="whitespace"`` (cut at white space
  only, as Hugging Face's ``WhitespaceSplit``), against bytepair with the
  pattern ``whitespace-split`` (``\\S+``, compiled), at 10 MB and 100 MB,
  1 and 2 threads. gigabpe learns characters there and bytepair bytes (the
  same pieces, another alphabet).

``--language synthetic`` runs the ladder on benches/corpora/synthetic.py's simulated
text instead, whose distinct pieces keep growing with its size (docs/simulated-scale.md).

Sizes above 100 MB use benches/corpus.py's large corpus: all of the English
recipe, then the multilingual text, then more Debian documentation, then the
same text again from its start. Its manifest counts the distinct and the
repeated bytes, and the table says both beside the figure.

The *phases* table splits bytepair's time where it is measured inside the
same run (``count``: read, split and count in one compiled pass; ``flat``,
``build``: the engine built from the table; ``merges``: the merge loop) and
gigabpe's by the two vocabulary sizes, at every size with both. Ratios are
bytepair over gigabpe in the same run. The 1-minute load average at the
start and end of each case stands beside it: the machine may be shared.
Writes benches/results/ladder.json and the block between the ladder markers
of docs/benchmarks.md.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from . import corpus as corpora
from . import harness
from .harness import ROOT, Case, _fmt_time

RESULTS = ROOT / "benches" / "results" / "ladder.json"
BEGIN, END = "<!-- ladder:begin -->", "<!-- ladder:end -->"
MB = 10**6
GB = 10**9
SIZES = (10 * MB, 100 * MB, 1 * GB)
TRAINERS = ("read", "bytepair", "gigabpe", "rustbpe", "hf")
THREADS = (1, 2)
VOCAB = 32768
BASE_MERGES = 1
#: The runs at vocabulary 257 (everything but the merge loop) only up to this size: above it
#: they would double the time of the largest rungs, and the split of the time is shown below.
BASE_UP_TO = 1 * GB
#: Left out above this size unless named with --trainers: Hugging Face takes minutes a case.
SLOW_ABOVE = {"hf": 100 * MB}

# The goals, bytepair / gigabpe in the same run: (size, vocabulary) -> (time, peak RSS).
GOALS = {(100 * MB, VOCAB): (0.6, 0.8), (1 * GB, VOCAB): (0.35, 0.6), (1 * GB, 131072): (0.4, 0.5),
         (10 * GB, VOCAB): (0.35, 0.5)}


def corpus_for(size: int, corpus: str | None = None, language: str | None = None) -> Path:
    """The English recipe up to 100 MB, the large corpus above (see the module doc); with
    ``language`` (``synthetic``: simulated text, benches/corpora/synthetic.py) that corpus."""
    if language is not None and corpus is None:
        return corpora.corpus_path(size, language=language)
    if corpus is not None or size <= 100 * MB:
        return corpora.corpus_path(size, corpus)
    return corpora.corpus_path(size, language="large")


def _case(trainer: str, size: int, merges: int, mode: str, threads: int) -> Case:
    return Case(trainer, size, merges, None, (("mode", mode), ("threads", threads)))


def matrix(sizes, trainers, threads, named: bool = False, vocabs=(VOCAB,)) -> list[Case]:
    """The ladder's cases in running order: each input's trainers back to back."""
    cases = []
    for size in sizes:
        for th in threads:
            if "read" in trainers and th == threads[0]:
                cases.append(_case("read", size, 0, "gpt2", 1))
            for vocab in vocabs:
                for t in trainers:
                    if t == "read" or (not named and size > SLOW_ABOVE.get(t, size)):
                        continue
                    cases.append(_case(t, size, vocab - 256, "gpt2", th))
            if 100 * MB <= size <= BASE_UP_TO:
                for t in ("bytepair", "gigabpe"):
                    if t in trainers:
                        cases.append(_case(t, size, BASE_MERGES, "gpt2", th))
            if size <= 100 * MB:
                for t in ("bytepair", "gigabpe"):
                    if t in trainers:
                        cases.append(_case(t, size, VOCAB - 256, "whitespace", th))
    return cases


# --------------------------------------------------------------------------- analysis


def _get(results, trainer, size, merges, mode, threads):
    for r in results:
        c = r["case"]
        o = dict(map(tuple, c["options"]))
        if (r["status"] == "ok" and c["trainer"] == trainer and c["size"] == size
                and c["merges"] == merges and o["mode"] == mode and o["threads"] == threads):
            return r
    return None


def phases(results) -> list[dict]:
    """Where the time goes, per size and thread count with both trainers at both vocabularies."""
    out = []
    sizes = sorted({r["case"]["size"] for r in results})
    for size in sizes:
        for th in THREADS:
            b_full = _get(results, "bytepair", size, VOCAB - 256, "gpt2", th)
            b_base = _get(results, "bytepair", size, BASE_MERGES, "gpt2", th)
            g_full = _get(results, "gigabpe", size, VOCAB - 256, "gpt2", th)
            g_base = _get(results, "gigabpe", size, BASE_MERGES, "gpt2", th)
            read = _get(results, "read", size, 0, "gpt2", 1)
            if not (b_full and b_base and g_full and g_base):
                continue
            stages = b_full.get("stage_medians", {})
            out.append(dict(
                size=size, threads=th, read=read["wall"] if read else None,
                bytepair=dict(total=b_full["wall"], upto_first_merge=b_base["wall"],
                              learning=b_full["wall"] - b_base["wall"],
                              count=stages.get("count"), flat=stages.get("flat"),
                              build=stages.get("build"), merges=stages.get("merges"),
                              rest=b_full["wall"] - stages.get("count", 0) - stages.get("learn", 0),
                              peak_mib=b_full["peak_mib"], base_peak_mib=b_base["peak_mib"]),
                gigabpe=dict(total=g_full["wall"], upto_first_merge=g_base["wall"],
                             learning=g_full["wall"] - g_base["wall"],
                             peak_mib=g_full["peak_mib"], base_peak_mib=g_base["peak_mib"]),
            ))
    return out


def goals(results) -> list[dict]:
    out = []
    for (size, vocab), (wall_goal, rss_goal) in GOALS.items():
        for th in THREADS:
            b = _get(results, "bytepair", size, vocab - 256, "gpt2", th)
            g = _get(results, "gigabpe", size, vocab - 256, "gpt2", th)
            if not (b and g):
                continue
            wall, rss = b["wall"] / g["wall"], b["peak_mib"] / g["peak_mib"]
            out.append(dict(goal=f"{corpora.format_size(size)}, vocab {vocab}, {th} thread(s): "
                            f"<= {wall_goal}x gigabpe's time, <= {rss_goal}x its peak RSS",
                            wall_ratio=wall, rss_ratio=rss,
                            met=wall <= wall_goal and rss <= rss_goal))
    return out


# --------------------------------------------------------------------------- rendering


def _corpus_note(report: dict, size: int) -> str:
    man = report["corpora"].get(corpora.format_size(size), {})
    if man.get("simulated"):
        return f" (SIMULATED: {man.get('language')}, seed {man.get('seed')})"
    if "distinct_bytes" in man:
        return (f" ({man['distinct_bytes'] / MB:,.0f} MB distinct, "
                f"{man.get('repeated_bytes', 0) / MB:,.0f} MB repeated)")
    return ""


def render(report: dict) -> str:
    m = report["machine"]
    lines = [
        f"Measured {report['date']} with `{report['command']}` on {m['cpu']} ({m['cores']} "
        f"cores, {m['memory_gib']} GiB), {m['implementation']} {m['python']}, "
        + ", ".join(f"{k} {v}" for k, v in m["versions"].items())
        + ("; bytepair with uncommitted changes" if report["code"]["modified"] else "")
        + f". Raw results: `{report['json']}`. Peak RSS: the process tree's, from the OS. "
        "Load: the 1-minute load average at the start and end of the case (2 cores; above 2 "
        "other work was running).",
        "",
        "| corpus | mode | threads | trainer | vocab | learned | wall s | CPU s | peak RSS MiB "
        "| vs gigabpe (time, RSS) | load |",
        "|---|---|---:|---|---:|---:|---:|---:|---:|---|---|",
    ]
    for r in report["results"]:
        c = r["case"]
        o = dict(map(tuple, c["options"]))
        where = corpora.format_size(c["size"]) + _corpus_note(report, c["size"])
        vocab = "" if c["trainer"] == "read" else f"{256 + c['merges']:,}"
        head = f"| {where} | {o['mode']} | {o['threads']} | {c['trainer']} | {vocab}"
        if r["status"] != "ok":
            lines.append(f"{head} | {r['status']} | | | | | |")
            continue
        g = _get(report["results"], "gigabpe", c["size"], c["merges"], o["mode"], o["threads"])
        vs = (f"{r['wall'] / g['wall']:.2f}x, {r['peak_mib'] / g['peak_mib']:.2f}x"
              if g and c["trainer"] not in ("gigabpe", "read") else "")
        learned = "" if c["trainer"] == "read" else f"{r['digest']['learned']:,}"
        lines.append(f"{head} | {learned} | {_fmt_time(r['wall'])} | {_fmt_time(r['cpu'])} "
                     f"| {r['peak_mib']:,.0f} | {vs} "
                     f"| {r['loadavg'][0]:.1f}-{r['loadavg'][1]:.1f} |")
    if report.get("phases"):
        lines += ["", f"Where the time goes (GPT-2, vocab {VOCAB}; seconds). bytepair's stages "
                  "are timed inside the run (count = read, split and count in one compiled pass); "
                  f"for both trainers, *learning* = T({VOCAB}) - T(257) and *up to the first "
                  "merge* = T(257), separate runs.", "",
                  "| corpus | threads | read only | bytepair: count | flat | build | merges "
                  "| bytepair T(257) | bytepair learning | gigabpe T(257) | gigabpe learning "
                  "| bytepair / gigabpe: T(257), learning |",
                  "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"]

        def f(x):
            return "" if x is None else _fmt_time(x)

        for p in report["phases"]:
            b, g = p["bytepair"], p["gigabpe"]
            lines.append(
                f"| {corpora.format_size(p['size'])} | {p['threads']} | {f(p['read'])} "
                f"| {f(b['count'])} | {f(b['flat'])} | {f(b['build'])} | {f(b['merges'])} "
                f"| {f(b['upto_first_merge'])} | {f(b['learning'])} | {f(g['upto_first_merge'])} "
                f"| {f(g['learning'])} | {b['upto_first_merge'] / g['upto_first_merge']:.2f}x, "
                + (f"{b['learning'] / g['learning']:.2f}x |" if g["learning"] > 0 else "n/a |"))
    if report.get("goals"):
        lines += ["", "| goal | time ratio | RSS ratio | met |", "|---|---:|---:|---|"]
        for g in report["goals"]:
            lines.append(f"| {g['goal']} | {g['wall_ratio']:.2f}x | {g['rss_ratio']:.2f}x "
                         f"| {'yes' if g['met'] else '**no**'} |")
    return "\n".join(lines)


# --------------------------------------------------------------------------- running


def run(args, argv, library: Path | None) -> int:
    sizes = sorted({corpora.parse_size(s) for s in args.sizes}) if args.sizes else list(SIZES)
    named = args.trainers_named
    trainers = [t for t in TRAINERS if t in args.trainers]
    threads = tuple(sorted(set(args.threads))) if args.threads else THREADS
    # Build every corpus first, so that no case pays for it.
    paths = {size: corpus_for(size, args.corpus, getattr(args, "language", None)) for size in sizes}
    vocabs = tuple(256 + m for m in args.merges) if args.merges else (VOCAB,)
    cases = matrix(sizes, trainers, threads, named, vocabs)
    print(f"{len(cases)} cases", file=sys.stderr)
    started = time.perf_counter()
    results = []
    for i, case in enumerate(cases, 1):
        print(f"[{i}/{len(cases)}] {case.name} ...", file=sys.stderr, end=" ", flush=True)
        r = harness.run_case(case, paths[case.size], args, library)
        results.append(r)
        print(f"{r['wall']:.2f} s, peak {r['peak_mib']:.0f} MiB, load {r['loadavg']}"
              if r["status"] == "ok" else f"{r['status']} {r.get('stderr', '')}",
              file=sys.stderr, flush=True)
        if not args.no_write and i < len(cases):
            # The cases so far, saved as they come: a long ladder stopped early keeps them.
            partial = harness.make_report("ladder", args, argv, library, trainers, paths,
                                          results, [], started, vocab=VOCAB, partial=True)
            args.json.parent.mkdir(parents=True, exist_ok=True)
            args.json.write_text(json.dumps(partial, indent=1) + "\n")
    report = harness.make_report("ladder", args, argv, library, trainers, paths, results, [],
                                 started, vocab=VOCAB)
    report["phases"] = phases(results)
    report["goals"] = goals(results)
    harness.publish(report, args, render, BEGIN, END)
    return 0 if all(r["status"] == "ok" for r in results) else 1


def rerender(report: dict, args) -> int:
    harness.publish(report, args, render, BEGIN, END, save=False)
    return 0
