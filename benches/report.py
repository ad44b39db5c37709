"""Benchmark report: run named cases, each in a fresh process, and render a table.

The command line of the benchmarks and the engines suite's table. The
harness (benches/harness.py) defines trainers and cases and runs each case
in a fresh process (benches/worker.py), so that each case's peak RSS is its
own; trainers of one ``family`` must give identical results, and ratios are
against the ``baseline`` trainer of the same run. Two suites: ``engines``
(naive vs incremental, byte mode; the default, rendered here) and ``peers``
(``bytepair.train`` against Hugging Face tokenizers and other peers, whose
entries live in benches/peers.py; matrix, table and plot in
benches/peers_report.py).

    python -m benches.report                               # the default matrix (~10 min)
    python -m benches.report --sizes 0.1MB 1MB --merges 1000
    python -m benches.report --corpus my-text.txt --sizes 1MB 10MB
    python -m benches.report --trainers incremental --sizes 100MB
    python -m benches.report --library HEAD                # a commit, built under the cache
    python -m benches.report --render benches/results/engines.json   # re-render only

    python -m benches.report --suite peers --library HEAD  # bytepair vs peers (~25 min)
    python -m benches.report --suite ingest                # patterns x input shapes vs rustbpe (benches/ingest.py)
    python -m benches.report --suite merge-loop            # large vocabularies, byte mode (~40 min)
    python -m benches.report --suite ladder                # 10 MB to 1 GB against gigabpe, rustbpe, hf (benches/ladder.py)
    python -m benches.report --fetch-corpora               # build missing corpora with apt-get

A corpus that is not in the cache is built from Debian documentation packages
only with ``--fetch-corpora`` (they are installed or downloaded with
apt-get); without it the run stops and says so. ``--corpus FILE`` uses a
text file of your own in every suite (the ingest suite's English shapes).

Writes the table between the report markers of docs/benchmarks.md and the raw
results to benches/results/engines.json (``--no-write`` to skip both); the
peers suite writes between the peers markers, to benches/results/peers.json
and docs/benchmarks-peers.png.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from . import corpus as corpora
from . import ingest, ladder, merge_loop, peers_report
from .harness import (
    BASELINE, DEFAULT_BUDGET, DEFAULT_MERGES, DEFAULT_SIZES, DOC,
    SUITE_DEFAULTS, SUITES, TRAINERS, Case, _fmt_rate, _fmt_time, default_cases,
    library_snapshot, make_report, run_cases, write_doc,
)


def render(report: dict) -> str:
    results = [r for r in report["results"] if r["status"] == "ok"]
    base = {Case(**{**r["case"], "options": tuple(map(tuple, r["case"]["options"]))}).key: r
            for r in results if r["case"]["trainer"] == BASELINE}
    m = report["machine"]
    out = []
    out.append(f"Measured {report['date']} with `{report['command']}` on {m['cpu']} "
               f"({m['cores']} cores, {m['memory_gib']} GiB), {m['implementation']} "
               f"{m['python']}, " + ", ".join(f"{k} {v}" for k, v in m["versions"].items())
               + ("; library: bytepair with uncommitted changes" if report["code"]["modified"] else "")
               + (" (exported and built with `--library`)" if report["code"].get("snapshot") else "")
               + f"; corpus: {report['corpus_label']}. Raw results: "
               f"`{report.get('json', 'benches/results/engines.json')}`.")
    out.append("")
    out.append("Wall and CPU times are the median of the timed runs (a run under "
               f"{report['settings']['cheap']:g} s gets one warm-up run first, then repeats filling "
               f"{report['settings']['repeat_budget']:g} s, at most "
               f"{report['settings']['max_repeats']}); peak RSS is the worker process's "
               "(corpus and its lines included; 'input' is the RSS before training). "
               f"Speed-up is {BASELINE}'s time over the trainer's, same run, by wall time "
               "and (in brackets) by CPU time, which other processes on the machine disturb "
               "less; 'load' is the 1-minute load average before and after the case.")
    out.append("")
    out.append("| trainer | corpus | merges | learned | wall s | CPU s | runs | MB/s | merges/s "
               "| peak RSS MiB (input) | load | speed-up vs naive: wall (CPU) |")
    out.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    order = {t: i for i, t in enumerate(TRAINERS)}
    for r in sorted(results, key=lambda r: (order.get(r["case"]["trainer"], 99),
                                            r["case"]["size"], r["case"]["merges"])):
        c = r["case"]
        key = Case(**{**c, "options": tuple(map(tuple, c["options"]))}).key
        ratio = ""
        if c["trainer"] != BASELINE and key in base:
            ratio = (f"**{base[key]['wall'] / r['wall']:,.0f}x** "
                     f"({base[key]['cpu'] / r['cpu']:,.0f}x)")
        runs = f"{r['runs']}" + (f"+{r['warmup']}w" if r["warmup"] else "")
        out.append(
            f"| {c['trainer']} | {corpora.format_size(c['size'])} | {c['merges']:,} "
            f"| {r['digest']['learned']:,} | {_fmt_time(r['wall'])} | {_fmt_time(r['cpu'])} "
            f"| {runs} | {_fmt_rate(r['bytes'] / r['wall'] / 1e6)} "
            f"| {_fmt_rate(r['digest']['learned'] / r['wall'])} "
            f"| {r['peak_rss_mib']:,.0f} ({r['input_rss_mib']:,.0f}) "
            f"| {r['loadavg'][0]:.1f}–{r['loadavg'][1]:.1f} | {ratio} |")
    failed = [r for r in report["results"] if r["status"] != "ok"]
    for r in failed:
        out.append(f"| {r['case']['trainer']} | {corpora.format_size(r['case']['size'])} "
                   f"| {r['case']['merges']:,} | | {r['status']} | | | | | | | |")
    out.append("")
    if report["skipped"]:
        out.append("Not run (too slow for the budget of "
                   f"{report['settings']['budget']:g} s per case): " + "; ".join(
                       f"{s['name']} ({s['reason']})" for s in report["skipped"]) + ".")
        out.append("")
    checks = report["checks"]
    if checks:
        bad = [c for c in checks if not c["equal"]]
        verdict = "**all equal**" if not bad else "**DIFFERENT**: " + ", ".join(
            f"{corpora.format_size(c['size'])}/{c['merges']}" for c in bad)
        out.append(f"Equality: on the {len(checks)} inputs where several trainers ran, the "
                   "rules (rank, pair, token, count, replacements) and the transformed "
                   f"documents were compared by digest: {verdict}.")
        out.append("")
    scaling = _scaling(results)
    if scaling:
        out.append("Scaling of `incremental` with corpus size at a fixed merge count: wall "
                   "time / CPU time, and CPU seconds per MB (constant when time grows "
                   "linearly with size):")
        out.append("")
        out.append("| merges | " + " | ".join(corpora.format_size(s) for s in scaling["sizes"])
                   + " | CPU time ratio, largest / 1 MB (size ratio) |")
        out.append("|---:|" + "---:|" * (len(scaling["sizes"]) + 1))
        for m, row in scaling["rows"].items():
            cells = []
            for s in scaling["sizes"]:
                if s in row:
                    t, c = row[s]
                    cells.append(f"{_fmt_time(t)} / {_fmt_time(c)} s; {c / (s / 1e6):.2f} s/MB")
                else:
                    cells.append("")
            ref = 10**6 if 10**6 in row else min(row)
            top = max(row)
            cells.append(f"{row[top][1] / row[ref][1]:.1f}x ({top / ref:g}x)" if top != ref else "")
            out.append(f"| {m:,} | " + " | ".join(cells) + " |")
        out.append("")
    return "\n".join(out)


def _scaling(results) -> dict:
    rows: dict[int, dict[int, float]] = {}
    for r in results:
        if r["case"]["trainer"] == "incremental":
            rows.setdefault(r["case"]["merges"], {})[r["case"]["size"]] = (r["wall"], r["cpu"])
    rows = {m: row for m, row in sorted(rows.items()) if len(row) > 1}
    sizes = sorted({s for row in rows.values() for s in row})
    return dict(rows=rows, sizes=sizes) if rows else {}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benches.report", description=__doc__.split("\n\n")[0])
    parser.add_argument("--suite", choices=[*SUITES, "ingest"], default="engines",
                        help="engines: naive vs incremental, byte mode (default); peers: "
                        "bytepair's tokenizer training against Hugging Face tokenizers and others; "
                        "merge-loop: large vocabularies and byte mode against Hugging Face; "
                        "ingest: every pattern and shape of input against rustbpe; ladder: "
                        "10 MB to 1 GB against gigabpe, rustbpe and hf")
    parser.add_argument("--scale", default="100MB",
                        help="merge-loop: the large corpus (default 100MB; 10MB for a quick look)")
    parser.add_argument("--sizes", nargs="+", default=None,
                        help=f"corpus sizes (engines default: {' '.join(DEFAULT_SIZES)}; "
                        "peers: filters its matrix)")
    parser.add_argument("--merges", nargs="+", type=int, default=None,
                        help=f"merge counts (engines default: "
                        f"{' '.join(map(str, DEFAULT_MERGES))}; peers: filters its matrix; ladder: "
                        f"vocabularies of 256 + each, default {ladder.VOCAB})")
    parser.add_argument("--trainers", nargs="+", default=None, choices=list(TRAINERS),
                        help="default: the suite's trainers")
    parser.add_argument("--patterns", nargs="+", choices=ingest.ALL_PATTERNS, default=None,
                        help="ingest: only these patterns (default all)")
    parser.add_argument("--shapes", nargs="+", choices=ingest.ALL_SHAPES, default=None,
                        help="ingest: only these shapes of input (default all)")
    parser.add_argument("--threads", nargs="+", type=int, default=None,
                        help="peers: only these thread counts (default 1 2)")
    parser.add_argument("--modes", nargs="+", choices=("gpt2", "bytes"), default=None,
                        help="peers: only these modes (default both)")
    parser.add_argument("--language", default=None,
                        help="ladder: a corpus of benches/corpus.py instead of the English recipe "
                        "and the large corpus, e.g. synthetic (simulated text, docs/simulated-scale.md)")
    parser.add_argument("--corpus", help="a text file to use instead of the English recipe "
                        "(sizes take prefixes of it, cut at line boundaries)")
    parser.add_argument("--budget", type=float, default=DEFAULT_BUDGET,
                        help="skip a case whose estimated time exceeds this (seconds; "
                        "default %(default)s; only naive and bpeasy's byte mode have estimates)")
    parser.add_argument("--cheap", type=float, default=None,
                        help="runs faster than this get a warm-up and repeats (s; "
                        "default 10 for engines, 5 for peers)")
    parser.add_argument("--repeat-budget", type=float, default=None,
                        help="seconds of repeats for a cheap case (default 20 / 10)")
    parser.add_argument("--max-repeats", type=int, default=None, help="default 5 / 3")
    parser.add_argument("--timeout", type=float, default=3600.0, help="per case (s)")
    parser.add_argument("--json", type=Path, default=None,
                        help="raw results file (default benches/results/<suite>.json)")
    parser.add_argument("--doc", type=Path, default=None,
                        help="markdown file to update (default docs/benchmarks.md)")
    parser.add_argument("--plot", type=Path, default=None,
                        help="peers: the PNG to write (default docs/benchmarks-peers.png)")
    parser.add_argument("--no-write", action="store_true", help="print only")
    parser.add_argument("--library", metavar="REV",
                        help="measure bytepair as committed at this git revision (exported "
                        "and built under the cache) instead of the working tree")
    parser.add_argument("--render", type=Path, metavar="JSON",
                        help="only re-render the table of a results file (no runs)")
    corpora.add_fetch_option(parser)
    args = parser.parse_args(argv)
    # Options that name an output contradict --no-write: refuse them rather than write nothing.
    named = [f"--{name}" for name in ("json", "doc", "plot") if getattr(args, name) is not None]
    if args.no_write and named:
        parser.error(f"{', '.join(named)} and --no-write contradict each other: "
                     "--no-write writes no file")
    args.doc = args.doc or DOC
    corpora.apply_fetch_option(args)
    try:
        return _main(args, argv)
    except corpora.FetchNotAllowed as exc:
        parser.error(str(exc))


def _main(args, argv) -> int:

    if args.render:
        report = json.loads(args.render.read_text())
        if report.get("suite") == "peers":
            return peers_report.rerender(report, args)
        if report.get("suite") == "ingest":
            table = ingest.render(report)
            print(table)
            if not args.no_write:
                write_doc(table, args.doc, ingest.BEGIN, ingest.END)
            return 0
        if report.get("suite") == "merge-loop":
            return merge_loop.rerender(report, args)
        if report.get("suite") == "ladder":
            return ladder.rerender(report, args)
        table = render(report)
        print(table)
        if not args.no_write:
            write_doc(table, args.doc)
        return 0

    if args.suite == "ingest":
        # One run per case: the 100 MB cases take minutes each.
        args.json = args.json or ingest.RESULTS
        args.cheap, args.repeat_budget, args.max_repeats = 0.0, 0.0, 1
        return ingest.run(args, argv)
    results_file, cheap, repeat_budget, max_repeats = SUITE_DEFAULTS[args.suite]
    args.json = args.json or results_file
    args.cheap = cheap if args.cheap is None else args.cheap
    args.repeat_budget = repeat_budget if args.repeat_budget is None else args.repeat_budget
    args.max_repeats = max_repeats if args.max_repeats is None else args.max_repeats
    args.trainers_named = args.trainers is not None
    args.trainers = args.trainers or list(SUITES[args.suite])
    library = library_snapshot(args.library) if args.library else None
    if args.suite == "peers":
        return peers_report.run(args, argv, library)
    if args.suite == "merge-loop":
        return merge_loop.run(args, argv, library)
    if args.suite == "ladder":
        return ladder.run(args, argv, library)

    sizes = sorted({corpora.parse_size(s) for s in (args.sizes or DEFAULT_SIZES)})
    merges = sorted(set(args.merges or DEFAULT_MERGES))
    cases, skipped = default_cases(sizes, merges, args.trainers, args.corpus, args.budget)
    # Build every corpus first, so that no case pays for it.
    paths = {size: corpora.corpus_path(size, args.corpus) for size in sizes}
    # Fast trainers first: a long naive run then cannot hide a broken fast one.
    cases.sort(key=lambda c: (c.trainer == BASELINE, c.size, c.merges))
    started = time.perf_counter()
    results = run_cases(cases, paths, args, library)
    report = make_report("engines", args, argv, library, args.trainers, paths, results,
                         skipped, started)
    table = render(report)
    print(table)
    if not args.no_write:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(report, indent=1) + "\n")
        write_doc(table, args.doc)
        print(f"wrote {args.json} and {args.doc}", file=sys.stderr)
    ok = all(r["status"] == "ok" for r in results) and all(c["equal"] for c in report["checks"])
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
