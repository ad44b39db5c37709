"""The peer suite of the report: bytepair's tokenizer training against its peers.

    python -m benches.report --suite peers --library HEAD          # the full matrix (~25 min)
    python -m benches.report --suite peers --sizes 10MB --threads 1 --no-write
    python -m benches.report --render benches/results/peers.json   # re-render table and plot

The matrix (``matrix``), every case in a fresh worker process, one at a time:

* GPT-2 split, one document per line: 10 MB and 100 MB at vocab 8192 and
  32768, 1 and 2 threads, every trainer; plus 1 MB at vocab 8192 and 10 MB at
  vocab 2048 (one thread) for the plot; plus bytepair and Hugging Face at
  vocab 257 (one merge) at 10 and 100 MB, both thread counts, so that the
  merge loop can be estimated as T(vocab) - T(257) for both.
* Byte mode (no pre-tokenizer, each line one document): 10 MB at 1,000 and
  10,000 merges, 1 and 2 threads, for the trainers that can do it; 1 MB and
  100 MB at 10,000 merges, one thread; ``train_bytes`` at 10 MB; bytepair
  and Hugging Face at one merge (10 MB, one thread).

Ratios are against Hugging Face ``tokenizers`` (``hf``) in the same run, at
the same corpus, merges, mode and thread count. Writes the block between the
peers markers of docs/benchmarks.md, benches/results/peers.json and
docs/benchmarks-peers.png.
"""

from __future__ import annotations

import datetime
import json
import sys
import time
from importlib import util
from pathlib import Path

from . import corpus as corpora
from . import harness
from .harness import ROOT, TRAINERS, Case, _fmt_time

RESULTS = ROOT / "benches" / "results" / "peers.json"
PLOT = ROOT / "docs" / "benchmarks-peers.png"
BEGIN, END = "<!-- peers:begin -->", "<!-- peers:end -->"
MB = 10**6
#: Display order; the reference for ratios.
ORDER = ("bytepair", "train_bytes", "gigabpe", "hf", "rustbpe", "yttm", "sentencepiece", "bpeasy")
REFERENCE = "hf"
#: Merges of the baseline runs used to estimate merge-loop time (vocab 257).
BASE_MERGES = 1

# The suite's goals: ratios against Hugging Face from one run of the report.
GOAL_GPT2_WALL = 0.35
GOAL_BYTES_WALL = 0.2
#: "Linear": 10x the text costs at most this many times the time.
GOAL_LINEAR = 12.5


def _case(trainer, size, merges, mode, threads) -> Case:
    return Case(trainer, size, merges, None, (("mode", mode), ("threads", threads)))


def matrix(trainers, sizes=None, threads=None, modes=None, merges=None, corpus=None,
           budget=harness.DEFAULT_BUDGET):
    """The peer cases, filtered: ``(run, skipped)`` with a reason for each skipped one."""
    cases: list[Case] = []

    def add(trainer, size, m, mode, th):
        cases.append(_case(trainer, size, m, mode, th))

    gpt2 = [t for t in ORDER if "gpt2" in TRAINERS[t].modes]
    for t in gpt2:
        for size in (10 * MB, 100 * MB):
            for vocab in (8192, 32768):
                for th in (1, 2):
                    add(t, size, vocab - 256, "gpt2", th)
        add(t, 1 * MB, 8192 - 256, "gpt2", 1)      # time vs corpus size
        add(t, 10 * MB, 2048 - 256, "gpt2", 1)     # time vs merges
    for t in ("bytepair", "hf"):                    # merge loop = T(vocab) - T(257)
        for size in (10 * MB, 100 * MB):
            for th in (1, 2):
                add(t, size, BASE_MERGES, "gpt2", th)
    byte = [t for t in ORDER if "bytes" in TRAINERS[t].modes and t != "train_bytes"]
    for t in byte:
        for m in (1000, 10000):
            for th in (1, 2):
                add(t, 10 * MB, m, "bytes", th)
        for size in (1 * MB, 100 * MB):             # linear growth
            add(t, size, 10000, "bytes", 1)
    for m in (1000, 10000):
        add("train_bytes", 10 * MB, m, "bytes", 1)
    for t in ("bytepair", "hf"):
        add(t, 10 * MB, BASE_MERGES, "bytes", 1)

    keep = []
    for c in cases:
        o = dict(c.options)
        if c.trainer not in trainers:
            continue
        if sizes and c.size not in sizes or threads and o["threads"] not in threads:
            continue
        if modes and o["mode"] not in modes or merges and c.merges not in merges:
            continue
        keep.append(Case(c.trainer, c.size, c.merges, corpus, c.options))
    run, skipped = [], []
    missing = {t: TRAINERS[t].modules[0] for t in trainers
               if util.find_spec(TRAINERS[t].modules[0]) is None}
    for c in keep:
        estimate = TRAINERS[c.trainer].estimate
        seconds = estimate(c.size, c.merges, dict(c.options)) if estimate else None
        if c.trainer in missing:
            skipped.append((c, f"`{missing[c.trainer]}` is not installed"))
        elif seconds is not None and seconds > budget:
            skipped.append((c, f"estimated {seconds:.0f} s > budget {budget:.0f} s"))
        else:
            run.append(c)
    # Cases of one input side by side, so that each ratio compares runs made minutes apart.
    order = {t: i for i, t in enumerate(ORDER)}
    run.sort(key=lambda c: (dict(c.options)["mode"] != "gpt2", c.size, c.merges,
                            dict(c.options)["threads"], order[c.trainer]))
    return run, skipped


# --------------------------------------------------------------------------- analysis


def _key(r: dict) -> tuple:
    c = r["case"]
    o = dict(map(tuple, c["options"]))
    return (o["mode"], c["size"], c["merges"], o["threads"])


def _index(results) -> dict:
    return {(r["case"]["trainer"],) + _key(r): r for r in results if r["status"] == "ok"}


def _overlaps(results, tokens_dir: Path | None) -> None:
    """Each result's ``shared``: the share of bytepair's learned tokens in its vocabulary.

    bytepair's result does not depend on its worker count, so any of its runs
    of the same mode, corpus and merges is the reference.
    """
    if tokens_dir is None:
        return
    ref: dict[tuple, set] = {}
    for r in results:
        if r["status"] == "ok" and r["case"]["trainer"] == "bytepair" and r.get("tokens_path"):
            ref.setdefault(_key(r)[:3], set(Path(r["tokens_path"]).read_text().split()))
    for r in results:
        if r["status"] != "ok" or not r.get("tokens_path"):
            continue
        mine = set(Path(r["tokens_path"]).read_text().split())
        base = ref.get(_key(r)[:3])
        if base:
            r["shared"] = dict(count=len(base & mine), of=len(base))


def _merge_loop(index, trainer, mode, size, merges, threads) -> float | None:
    """T(merges) - T(1 merge): time that grows with the merges (same trainer, same threads)."""
    full = index.get((trainer, mode, size, merges, threads))
    base = index.get((trainer, mode, size, BASE_MERGES, threads))
    if full and base and merges != BASE_MERGES:
        return full["wall"] - base["wall"]
    return None


def _ratio(a: float, b: float) -> str:
    return f"{a / b:.2f}x"


def goals(results) -> list[dict]:
    """The suite's goals, evaluated on this run (missing cases are reported as such)."""
    index = _index(results)
    out = []

    def get(trainer, mode, size, merges, threads):
        return index.get((trainer, mode, size, merges, threads))

    for th in (1, 2):
        bp, hf = get("bytepair", "gpt2", 100 * MB, 32768 - 256, th), get("hf", "gpt2", 100 * MB, 32768 - 256, th)
        label = f"100 MB, GPT-2, vocab 32768, {th} thread{'s' if th > 1 else ''}"
        if not (bp and hf):
            out.append(dict(goal=f"{label}: whole job ≤ {GOAL_GPT2_WALL}x HF wall", met=None,
                            detail="not measured in this run"))
            continue
        ratio = bp["wall"] / hf["wall"]
        out.append(dict(goal=f"{label}: whole job ≤ {GOAL_GPT2_WALL}x HF wall",
                        met=ratio <= GOAL_GPT2_WALL,
                        detail=f"bytepair {_fmt_time(bp['wall'])} s / HF {_fmt_time(hf['wall'])} s "
                               f"= **{ratio:.3f}x**"))
        bpl = _merge_loop(index, "bytepair", "gpt2", 100 * MB, 32768 - 256, th)
        hfl = _merge_loop(index, "hf", "gpt2", 100 * MB, 32768 - 256, th)
        learn = bp.get("stage_medians", {}).get("learn")
        if bpl is not None and hfl is not None:
            out.append(dict(goal=f"{label}: merge loop no slower than HF's", met=bpl <= hfl,
                            detail=f"T(vocab 32768) − T(vocab 257): bytepair {bpl:.2f} s, HF "
                                   f"{hfl:.2f} s = **{bpl / hfl:.3f}x**"
                                   + (f"; bytepair's `learn()` (engine build + merges) "
                                      f"{learn:.2f} s" if learn is not None else "")))
        else:
            out.append(dict(goal=f"{label}: merge loop no slower than HF's", met=None,
                            detail="the vocab-257 runs were not measured in this run"))
        out.append(dict(goal=f"{label}: peak RSS ≤ HF's", met=bp["peak_mib"] <= hf["peak_mib"],
                        detail=f"bytepair {bp['peak_mib']:,.0f} MiB / HF {hf['peak_mib']:,.0f} MiB "
                               f"= **{bp['peak_mib'] / hf['peak_mib']:.3f}x**"))
    for th in (1, 2):
        bp, hf = get("bytepair", "bytes", 10 * MB, 10000, th), get("hf", "bytes", 10 * MB, 10000, th)
        label = f"byte mode, 10 MB, 10k merges, {th} thread{'s' if th > 1 else ''}"
        if not (bp and hf):
            out.append(dict(goal=f"{label}: ≤ {GOAL_BYTES_WALL}x HF wall", met=None,
                            detail="not measured in this run"))
            continue
        ratio = bp["wall"] / hf["wall"]
        out.append(dict(goal=f"{label}: ≤ {GOAL_BYTES_WALL}x HF wall", met=ratio <= GOAL_BYTES_WALL,
                        detail=f"bytepair {bp['wall']:.3f} s / HF {hf['wall']:.2f} s "
                               f"= **{ratio:.3f}x**"))
        out.append(dict(goal=f"{label}: peak RSS ≤ HF's", met=bp["peak_mib"] <= hf["peak_mib"],
                        detail=f"bytepair {bp['peak_mib']:,.0f} MiB / HF {hf['peak_mib']:,.0f} MiB "
                               f"= **{bp['peak_mib'] / hf['peak_mib']:.3f}x**"))
    runs = [get("bytepair", "bytes", s * MB, 10000, 1) for s in (1, 10, 100)]
    if all(runs):
        t = [r["wall"] for r in runs]
        steps = [t[1] / t[0], t[2] / t[1]]
        out.append(dict(goal="byte mode, 10k merges, 1 thread: time linear in corpus size "
                             f"(1, 10, 100 MB; each 10x step ≤ {GOAL_LINEAR:g}x the time)",
                        met=max(steps) <= GOAL_LINEAR,
                        detail=f"{_fmt_time(t[0])}, {_fmt_time(t[1])}, {_fmt_time(t[2])} s "
                               f"({t[0]:.2f}, {t[1] / 10:.2f}, {t[2] / 100:.2f} s/MB): "
                               f"**{steps[0]:.1f}x** then **{steps[1]:.1f}x** per 10x"))
    else:
        out.append(dict(goal="byte mode: time linear in corpus size", met=None,
                        detail="not all of 1, 10, 100 MB were measured in this run"))
    return out


def ratio_lines(results) -> list[str]:
    """One line per case with a Hugging Face run beside it: bytepair ÷ HF."""
    index = _index(results)
    lines = []
    for (trainer, mode, size, merges, th), r in sorted(index.items(), key=lambda kv: kv[0][1:]):
        if trainer != "bytepair" or merges == BASE_MERGES:
            continue
        hf = index.get((REFERENCE, mode, size, merges, th))
        if not hf:
            continue
        what = f"vocab {256 + merges}" if mode == "gpt2" else f"{merges:,} merges"
        lines.append(
            f"{'GPT-2' if mode == 'gpt2' else 'bytes'} {corpora.format_size(size)} {what}, "
            f"{th} thread{'s' if th > 1 else ''}: bytepair/HF wall "
            f"{_fmt_time(r['wall'])}/{_fmt_time(hf['wall'])} s = {r['wall'] / hf['wall']:.3f}x, "
            f"CPU {r['cpu'] / hf['cpu']:.2f}x, peak RSS {r['peak_mib']:,.0f}/{hf['peak_mib']:,.0f} "
            f"MiB = {r['peak_mib'] / hf['peak_mib']:.2f}x")
    return lines


# --------------------------------------------------------------------------- rendering


def _table(results, mode: str) -> list[str]:
    index = _index(results)
    order = {t: i for i, t in enumerate(ORDER)}
    rows = sorted((r for r in results if r["status"] == "ok" and _key(r)[0] == mode),
                  key=lambda r: (_key(r)[1:], order[r["case"]["trainer"]]))
    if not rows:
        return []
    size_col = "vocab" if mode == "gpt2" else "merges"
    out = [f"| corpus | {size_col} | threads | trainer | learned | wall s | CPU s | MB/s "
           "| peak RSS MiB | bytepair count + learn s | merge loop s | wall ÷ HF | RSS ÷ HF "
           "| shares bytepair's tokens |",
           "|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    previous = None
    for r in rows:
        trainer = r["case"]["trainer"]
        mode_, size, merges, th = _key(r)
        hf = index.get((REFERENCE, mode_, size, merges, th))
        stages = r.get("stage_medians")
        loop = _merge_loop(index, trainer, mode_, size, merges, th)
        shared = r.get("shared")
        group = (size, merges, th)
        first = group != previous
        previous = group
        runs = f"{r['runs']}" + (f"+{r['warmup']}w" if r["warmup"] else "")
        rss = f"{r['peak_mib']:,.0f}"
        if r["peak_mib"] > r["peak_rss_mib"] + 1:
            rss += "†"
        out.append(
            "| " + " | ".join([
                corpora.format_size(size) if first else "",
                (f"{256 + merges:,}" if mode == "gpt2" else f"{merges:,}") if first else "",
                str(th) if first else "",
                f"**{trainer}**" if trainer == "bytepair" else trainer,
                f"{r['digest']['learned']:,}",
                f"{_fmt_time(r['wall'])} ({runs})",
                _fmt_time(r["cpu"]),
                f"{r['bytes'] / r['wall'] / 1e6:.1f}",
                rss,
                f"{_fmt_time(stages['count'])} + {_fmt_time(stages['learn'])}" if stages else "",
                f"{loop:.2f}" if loop is not None else "",
                "" if trainer == REFERENCE or not hf else
                (f"**{r['wall'] / hf['wall']:.2f}x**" if trainer == "bytepair"
                 else f"{r['wall'] / hf['wall']:.2f}x"),
                "" if trainer == REFERENCE or not hf else f"{r['peak_mib'] / hf['peak_mib']:.2f}x",
                "" if trainer == "bytepair" or not shared or not shared["of"] else
                f"{100 * shared['count'] / shared['of']:.1f}%",
            ]) + " |")
    return out


def render(rep: dict, plot_name: str | None = None) -> str:
    results = rep["results"]
    m = rep["machine"]
    code = rep["code"]
    out = [f"Measured {rep['date']} with `{rep['command']}` on {m['cpu']} ({m['cores']} cores, "
           f"{m['memory_gib']} GiB), {m['os']}, {m['implementation']} {m['python']}; "
           + ", ".join(f"{k} {v}" for k, v in m["versions"].items())
           + ("; library: bytepair with uncommitted changes" if code["modified"] else "")
           + (" (exported and built with `--library`)" if code.get("snapshot") else "")
           + f"; corpus: {rep['corpus_label']}. Raw results: `{rep['json']}`; the whole run took "
           f"{rep['total_seconds'] / 60:.0f} min.", ""]
    s = rep["settings"]
    out += [
        "Each case runs in a fresh worker process, one at a time. Times are wall-clock seconds "
        "of the whole job (reading the file, splitting, counting, merging; a peer that takes "
        "text from Python reads the lines in the timed part), the median of the timed runs "
        f"(a first run under {s['cheap']:g} s is a warm-up, then repeats fill "
        f"{s['repeat_budget']:g} s, at most {s['max_repeats']}; the count is in brackets, "
        "'w' the warm-up). CPU s includes counting worker processes. Peak RSS is the worker's "
        "`ru_maxrss` (threads included), or, marked †, where it forked counting processes, "
        "the peak of the proportional set size summed over it and them (pages shared after "
        "the fork counted once), sampled every 100 ms while they live. 'bytepair count + learn': the same timed runs, "
        "split into `count_pieces`/`count_files` and `learn` (engine build and merges). "
        "'merge loop': T(this vocab) − T(vocab 257, one merge), same trainer and threads, "
        "single runs each: the time that grows with the merges (it leaves out the "
        "initial pair count both pay once). 'wall ÷ HF', 'RSS ÷ HF': against Hugging Face in "
        "the same run, same corpus, merges and threads. 'shares bytepair's tokens': the share "
        "of bytepair's learned tokens (as bytes) that are also in the trainer's vocabulary "
        "(character-level peers: ▁ read as a space; their split differs, so a low share is "
        "expected there).", ""]
    for mode, title in (("gpt2", "GPT-2 split, one document per line"),
                        ("bytes", "Byte mode: no pre-tokenizer, each line one document")):
        table = _table(results, mode)
        if table:
            out += [f"**{title}**", ""] + table + [""]
    lines = ratio_lines(results)
    if lines:
        out += ["Ratios against Hugging Face tokenizers, same run (wall, CPU, peak RSS):", ""]
        out += [f"- {line}" for line in lines] + [""]
    gs = goals(results)  # from the raw results, so that a re-render applies today's rules
    if gs:
        out += ["Goals against Hugging Face, on this run:", ""]
        for g in gs:
            verdict = {True: "**met**", False: "**missed**", None: "not evaluated"}[g["met"]]
            out.append(f"- {g['goal']}: {verdict}: {g['detail']}")
        out.append("")
    if plot_name:
        out += [f"![time vs corpus size and vs merges, one line per trainer]({plot_name})", ""]
    notes = []
    for sk in rep["skipped"]:
        notes.append(f"{sk['name']}: {sk['reason']}")
    for r in results:
        if r["status"] != "ok":
            err = (r.get("stderr") or "").strip().splitlines()
            notes.append(f"{r['name']}: {r['status']}" + (f" (`{err[-1][:200]}`)" if err else ""))
    if notes:
        out += ["Not run or failed: " + "; ".join(notes) + ".", ""]
    used = [t for t in ORDER if any(r["case"]["trainer"] == t for r in results)]
    out += ["How each trainer was run (M merges, T threads):", ""]
    out += [f"- `{t}`: {TRAINERS[t].setup}" for t in used]
    out.append("")
    return "\n".join(out)


# --------------------------------------------------------------------------- plot


def plot(rep: dict, path: Path) -> bool:
    """Time vs corpus size and vs merges, one line per trainer, one thread; False without matplotlib."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter
    except ImportError:
        print("matplotlib is not installed: no plot", file=sys.stderr)
        return False
    index = _index(rep["results"])
    styles = {"bytepair": ("C3", "o", 2.4), "train_bytes": ("C1", "v", 1.2),
              "hf": ("C0", "s", 1.6), "rustbpe": ("C2", "^", 1.2), "yttm": ("C4", "D", 1.2),
              "sentencepiece": ("C5", "P", 1.2), "bpeasy": ("C7", "X", 1.2)}
    fig, axes = plt.subplots(2, 2, figsize=(11, 8.5))
    panels = [
        (axes[0][0], "gpt2", "size", 8192 - 256, "GPT-2 split, vocab 8192: time vs corpus size"),
        (axes[0][1], "gpt2", "merges", 10 * MB, "GPT-2 split, 10 MB: time vs merges"),
        (axes[1][0], "bytes", "size", 10000, "byte mode, 10k merges: time vs corpus size"),
        (axes[1][1], "bytes", "merges", 10 * MB, "byte mode, 10 MB: time vs merges"),
    ]
    for ax, mode, x_of, fixed, title in panels:
        for trainer in ORDER:
            points = []
            for (t, md, size, merges, th), r in index.items():
                if t != trainer or md != mode or th != 1 or merges == BASE_MERGES:
                    continue
                if x_of == "size" and merges == fixed:
                    points.append((size / MB, r["wall"]))
                elif x_of == "merges" and size == fixed:
                    points.append((merges, r["wall"]))
            if not points:
                continue
            points.sort()
            color, marker, width = styles[trainer]
            ax.plot(*zip(*points), color=color, marker=marker, linewidth=width, label=trainer)
        ax.set_xscale("log")
        ax.set_yscale("log")
        xs = sorted({x for line in ax.lines for x in line.get_xdata()})
        ax.set_xticks(xs)
        ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:,.0f}" if v >= 1 else f"{v:g}"))
        ax.xaxis.set_minor_formatter(NullFormatter())
        ax.yaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
        ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
        ax.yaxis.set_minor_formatter(NullFormatter())
        ax.set_title(title, fontsize=10)
        ax.set_xlabel("corpus MB" if x_of == "size" else "merges (vocab − 256)")
        ax.set_ylabel("wall s (whole job, 1 thread)")
        ax.grid(True, which="both", alpha=0.3)
        if ax.lines:
            ax.legend(fontsize=8)
    m = rep["machine"]
    fig.suptitle(f"bytepair {rep['code']['commit'][:7]} vs peers, {m['cpu']} ({m['cores']} cores), "
                 f"{rep['date']}", fontsize=10)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


# --------------------------------------------------------------------------- entry points


def _write(rep: dict, args) -> None:
    plot_path = (args.plot or PLOT).resolve()
    made = plot(rep, plot_path)
    doc = args.doc.resolve()
    name = None
    if made:
        try:
            name = str(plot_path.relative_to(doc.parent))
        except ValueError:
            name = str(plot_path)
    text = render(rep, name)
    print(text)
    if not args.no_write:
        harness.write_doc(text, args.doc, BEGIN, END)
        print(f"wrote {args.doc}" + (f" and {plot_path}" if made else ""), file=sys.stderr)


def rerender(rep: dict, args) -> int:
    if args.no_write:
        print(render(rep))
        return 0
    _write(rep, args)
    return 0


def run(args, argv, library: Path | None) -> int:
    sizes = {corpora.parse_size(s) for s in args.sizes} if args.sizes else None
    cases, skipped = matrix(args.trainers, sizes=sizes, threads=args.threads, modes=args.modes,
                            merges=args.merges, corpus=args.corpus, budget=args.budget)
    paths = {size: corpora.corpus_path(size, args.corpus) for size in sorted({c.size for c in cases})}
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    tokens_dir = corpora.cache_dir() / "peer-tokens" / stamp
    tokens_dir.mkdir(parents=True, exist_ok=True)
    print(f"{len(cases)} cases; learned tokens go to {tokens_dir}", file=sys.stderr)
    started = time.perf_counter()
    results = harness.run_cases(cases, paths, args, library, tokens_dir)
    _overlaps(results, tokens_dir)
    rep = harness.make_report("peers", args, argv, library, args.trainers, paths, results,
                             skipped, started)
    rep["goals"] = goals(results)
    rep["ratios"] = ratio_lines(results)
    if not args.no_write:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(rep, indent=1) + "\n")
        print(f"wrote {args.json}", file=sys.stderr)
        _write(rep, args)
    else:
        print(render(rep))
    print("\n".join(["", "Ratios against HF (same run):"] + rep["ratios"]), file=sys.stderr)
    ok = all(r["status"] == "ok" for r in results)
    return 0 if ok else 1
