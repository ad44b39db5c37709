"""The benchmark harness: trainers, cases, one fresh worker process per case, results.

A *case* is a named entry ``(trainer, corpus, size, merges, options)``; a
*trainer* (:class:`Trainer`) knows how to prepare the corpus (untimed) and
how to train (timed). :func:`run_case` starts one worker process per case
(``python -m benches.worker SPEC``, see benches/worker.py) so that each case's peak RSS is
its own, runs warm-up and repeats where a run is cheap, and collects wall
time, CPU time, peak RSS and a digest of the result; :func:`check_equal`
checks that trainers of one ``family`` agree. A worker's thread count goes
to ``RAYON_NUM_THREADS``; its CPU time includes reaped child processes, and
the runner samples the memory of the worker's process tree (forked counting
workers). The two suites (benches/report.py: engines; benches/peers_report.py:
peers) render what this module measures; neither imports the other's table.
"""

from __future__ import annotations

import datetime
import gc
import hashlib
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from array import array
from dataclasses import asdict, dataclass
from importlib import metadata
from pathlib import Path
from typing import Any, Callable

import bytepair
from bytepair.learn import incremental

from . import corpus as corpora
from . import peers
from .library import code_info, library_snapshot  # re-exported: the suites take them from here

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "benchmarks.md"
RESULTS = ROOT / "benches" / "results" / "engines.json"
BEGIN, END = "<!-- report:begin -->", "<!-- report:end -->"

DEFAULT_SIZES = ("0.1MB", "1MB", "10MB", "100MB")
DEFAULT_MERGES = (256, 1000, 4096)

#: The naive trainer recounts the whole corpus every round: 0.21-0.24 s per
#: merge per MB of text measured here (2-core AMD EPYC). The estimate is an
#: upper bound, since merging shortens the corpus.
NAIVE_SECONDS_PER_MERGE_MB = 0.26
#: Run a trainer only where its estimate is within this many seconds.
DEFAULT_BUDGET = 300.0


# --------------------------------------------------------------------------- trainers


@dataclass(frozen=True)
class Trainer:
    """How to run one trainer; ``prepare`` is untimed, ``train`` is timed."""

    name: str
    description: str
    #: ``prepare(corpus_path, options)``: untimed (read lines into memory, or nothing
    #: for trainers that read the file themselves, so the corpus is not in their RSS).
    prepare: Callable[[Path, dict], Any]
    train: Callable[[Any, int, dict], Any]
    #: A digest of the result, for the equality check within a family; its
    #: ``learned`` is the number of rules learned.
    digest: Callable[[Any], dict]
    #: Trainers of one family must give identical digests on the same input.
    family: str | None = None
    #: Seconds one run should take (upper bound), or None when unknown:
    #: ``estimate(size, merges)``, or ``estimate(size, merges, options)`` for peers.
    estimate: Callable[..., float] | None = None
    #: Modules whose versions the report records.
    modules: tuple[str, ...] = ()
    #: Called after each timed run: seconds spent in named stages of that run.
    stages: Callable[[], dict] | None = None
    #: The learned vocabulary as byte strings (for overlap checks between peers).
    tokens: Callable[[Any], list[bytes]] | None = None
    #: Case modes it can run: "bytes" (no pre-tokenizer, one document per
    #: line) and/or "gpt2" (GPT-2 split, one document per line).
    modes: tuple[str, ...] = ("bytes",)
    #: How it is configured, for the report.
    setup: str = ""


def _lines(path: Path, options: dict) -> list[bytes]:
    return corpora.documents(Path(path).read_bytes())


def _train_bytes(engine: str):
    def train(documents, merges, options):
        return bytepair.train_bytes(documents, merges, engine=engine)

    return train


def _digest_byte_model(model) -> dict:
    rules = hashlib.sha256(repr([tuple(m) for m in model.merges]).encode()).hexdigest()
    seqs = hashlib.sha256()
    for seq in model.sequences:
        seqs.update(array("I", seq).tobytes())
        seqs.update(b"\xff\xff\xff\xff")  # not a token ID: marks the document end
    return dict(learned=len(model.merges), rules=rules, sequences=seqs.hexdigest(),
                first=[tuple(m) for m in model.merges[:3]])


def _naive_estimate(size: int, merges: int) -> float:
    return NAIVE_SECONDS_PER_MERGE_MB * merges * size / 10**6


TRAINERS: dict[str, Trainer] = {
    "naive": Trainer(
        "naive", "bytepair.train_bytes(engine='naive'): full recount every round (the reference)",
        _lines, _train_bytes("naive"), _digest_byte_model, family="bytepair-bytes",
        estimate=_naive_estimate, modules=("bytepair",)),
    "incremental": Trainer(
        "incremental", "bytepair.train_bytes(engine='incremental'): compiled engine, "
        "local count updates, SortedList priority",
        _lines, _train_bytes("incremental"), _digest_byte_model, family="bytepair-bytes",
        modules=("bytepair", "sortedcontainers")),
}
# bytepair's tokenizer training and the peers: `python -m benches.report --suite peers`.
TRAINERS.update((spec["name"], Trainer(**spec)) for spec in peers.TRAINERS)


def _read_blocks(path: Path, merges: int, options: dict) -> int:
    total = 0
    with open(path, "rb") as f:
        while block := f.read(1 << 22):
            total += len(block)
    return total


# The floor of every trainer that reads the file: reading it and nothing else.
TRAINERS["read"] = Trainer(
    "read", "the file read in 4 MiB blocks, nothing else (the floor of reading)",
    lambda path, options: Path(path), _read_blocks, lambda n: dict(learned=0, bytes=n),
    modes=("gpt2", "bytes", "whitespace"))
#: The trainers of each suite.
SUITES = {"engines": ("naive", "incremental"), "peers": tuple(s["name"] for s in peers.TRAINERS),
          "merge-loop": ("bytepair", "train_bytes", "hf"),
          "ladder": ("read", "bytepair", "gigabpe", "rustbpe", "hf")}
#: Ratios are reported against this trainer, in the same run.
BASELINE = "naive"


# --------------------------------------------------------------------------- cases


@dataclass(frozen=True)
class Case:
    """One measurement: a trainer on a corpus of a size, for a number of merges."""

    trainer: str
    size: int
    merges: int
    #: None: the English recipe of benches/corpus.py; else a text file.
    corpus: str | None = None
    options: tuple[tuple[str, Any], ...] = ()

    @property
    def name(self) -> str:
        extra = "".join(f",{k}={v}" for k, v in self.options)
        return f"{self.trainer}[{corpora.format_size(self.size)},{self.merges}{extra}]"

    @property
    def key(self) -> tuple:
        """Cases with the same key train on the same input and must agree within a family."""
        return (self.corpus, self.size, self.merges, self.options)


def default_cases(sizes, merges, trainers, corpus=None, budget=DEFAULT_BUDGET):
    """The matrix, with the cases skipped for cost listed apart: ``(run, skipped)``."""
    run, skipped = [], []
    for trainer in trainers:
        for size in sizes:
            for m in merges:
                case = Case(trainer, size, m, corpus)
                estimate = TRAINERS[trainer].estimate
                if estimate and estimate(size, m) > budget:
                    skipped.append((case, f"estimated {estimate(size, m):.0f} s > budget {budget:.0f} s"))
                else:
                    run.append(case)
    return run, skipped


# --------------------------------------------------------------------------- worker


def _peak_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


def _current_rss_mib() -> float:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def _cpu_seconds() -> float:
    """CPU time of this process and of its reaped children (counting workers)."""
    t = os.times()  # children's times are in clock ticks; process_time is finer
    return time.process_time() + t.children_user + t.children_system


def run_worker(spec: dict) -> dict:
    """Run one case in this (fresh) process and return its measurements.

    The runner has already set the case's thread count in the environment
    (``RAYON_NUM_THREADS``), so Rust peers see it when their pool starts.
    """
    case = Case(**{k: v for k, v in spec["case"].items() if k != "options"},
                options=tuple(tuple(o) for o in spec["case"]["options"]))
    trainer = TRAINERS[case.trainer]
    options = dict(case.options)
    prepared = trainer.prepare(Path(spec["path"]), options)
    rss_before = _current_rss_mib()
    load_before = os.getloadavg()[0]

    def once():
        gc.collect()
        if trainer.stages:
            trainer.stages()  # reset
        wall, cpu = time.perf_counter(), _cpu_seconds()
        result = trainer.train(prepared, case.merges, options)
        wall, cpu = time.perf_counter() - wall, _cpu_seconds() - cpu
        return wall, cpu, (trainer.stages() if trainer.stages else None), result

    # Warm-up and repeats where cheap: a first run under `cheap` seconds is
    # discarded as warm-up, then repeats fill `repeat_budget` seconds.
    wall, cpu, stage, result = once()
    walls, cpus, stages, warmup = [wall], [cpu], [stage], 0
    if wall < spec["cheap"]:
        del result
        warmup = 1
        repeats = max(1, min(spec["max_repeats"], int(spec["repeat_budget"] / max(wall, 1e-6))))
        walls, cpus, stages = [], [], []
        for _ in range(repeats):
            wall, cpu, stage, result = once()
            walls.append(wall)
            cpus.append(cpu)
            stages.append(stage)
    peak = _peak_rss_mib()
    out = dict(
        case=asdict(case), name=case.name, status="ok", warmup=warmup, runs=len(walls),
        wall=statistics.median(walls), wall_min=min(walls), walls=walls,
        cpu=statistics.median(cpus), cpus=cpus,
        peak_rss_mib=round(peak, 1), input_rss_mib=round(rss_before, 1),
        # The largest reaped child's peak (counting workers), not their sum.
        children_peak_rss_mib=round(
            resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024, 1),
        digest=trainer.digest(result),
        # Other processes on the machine: wall time above CPU time shows them.
        loadavg=[round(load_before, 2), round(os.getloadavg()[0], 2)],
    )
    if trainer.stages:
        out["stages"] = stages
        out["stage_medians"] = {k: statistics.median(s[k] for s in stages) for k in stages[0]}
    if trainer.tokens and spec.get("tokens_path"):
        tokens = sorted(set(trainer.tokens(result)))
        Path(spec["tokens_path"]).write_text("".join(t.hex() + "\n" for t in tokens))
        out["tokens_path"] = spec["tokens_path"]
    if "bytepair" in trainer.modules:
        out["backend"] = incremental.default_backend()
        out["library"] = str(Path(bytepair.__file__).parent)
    return out


# --------------------------------------------------------------------------- runner


def _process_tree(pid: int) -> list[int]:
    """``pid`` and its descendants (a scan of /proc)."""
    children: dict[int, list[int]] = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat", "rb") as f:
                stat = f.read()
        except OSError:
            continue
        ppid = int(stat[stat.rindex(b")") + 2:].split()[1])
        children.setdefault(ppid, []).append(int(entry.name))
    tree, todo = [], [pid]
    while todo:
        p = todo.pop()
        tree.append(p)
        todo.extend(children.get(p, ()))
    return tree


_PAGE_MIB = os.sysconf("SC_PAGE_SIZE") / 2**20


def _rss_mib(pid: int) -> float:
    try:
        with open(f"/proc/{pid}/statm", "rb") as f:
            return int(f.read().split()[1]) * _PAGE_MIB
    except (OSError, IndexError, ValueError):
        return 0.0


def _pss_mib(pid: int) -> float:
    """Proportional set size: each page shared after a fork counts once over the tree."""
    try:
        with open(f"/proc/{pid}/smaps_rollup", "rb") as f:
            for line in f:
                if line.startswith(b"Pss:"):
                    return int(line.split()[1]) / 1024
    except (OSError, IndexError, ValueError):
        pass
    return 0.0


def _wait_sampling(proc: subprocess.Popen, timeout: float) -> float:
    """Wait for ``proc``; return the peak memory of its process tree (MiB).

    The worker's own ``ru_maxrss`` misses the counting workers a trainer
    forks. While the worker is alone, its RSS is sampled every 20 ms (cheap);
    while it has descendants, the sum of their proportional set sizes (PSS,
    so that pages shared after the fork count once) every 100 ms, which
    costs a few ms per sample. Descendants are looked for every 200 ms.
    Raises ``subprocess.TimeoutExpired``.
    """
    deadline = time.monotonic() + timeout
    peak, pids, scanned = 0.0, [proc.pid], 0.0
    while proc.poll() is None:
        now = time.monotonic()
        if now > deadline:
            raise subprocess.TimeoutExpired(proc.args, timeout)
        if now - scanned >= 0.2:
            pids, scanned = _process_tree(proc.pid), now
        if len(pids) > 1:
            peak = max(peak, sum(_pss_mib(p) for p in pids))
            time.sleep(0.1)
        else:
            peak = max(peak, _rss_mib(proc.pid))
            time.sleep(0.02)
    return peak


def _corpus_stats(path: Path, cache: dict = {}) -> tuple[int, int]:
    """(bytes, lines) of a corpus file, read in blocks (once per path)."""
    if path not in cache:
        lines = 0
        with open(path, "rb") as f:
            while block := f.read(1 << 24):
                lines += block.count(b"\n")
        cache[path] = (path.stat().st_size, lines)
    return cache[path]


def run_case(case: Case, path: Path, args, library: Path | None = None,
             tokens_dir: Path | None = None) -> dict:
    spec = dict(case=asdict(case), path=str(path), cheap=args.cheap,
                repeat_budget=args.repeat_budget, max_repeats=args.max_repeats)
    if tokens_dir is not None:
        spec["tokens_path"] = str(tokens_dir / f"{case.name}.hex")
    first = ([str(library)] if library else []) + [str(ROOT)]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        first + ([os.environ["PYTHONPATH"]] if os.environ.get("PYTHONPATH") else [])))
    threads = dict(case.options).get("threads")
    if threads is not None:
        # Rust peers (tokenizers, rustbpe, bpeasy) size their rayon pool from it.
        env["RAYON_NUM_THREADS"] = str(threads)
    started = time.perf_counter()
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        proc = subprocess.Popen(
            [sys.executable, "-m", "benches.worker", json.dumps(spec)],
            cwd=ROOT, env=env, stdout=out, stderr=err, stdin=subprocess.DEVNULL,
            start_new_session=True)
        try:
            tree_peak = _wait_sampling(proc, args.timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, 9)
            proc.wait()
            return dict(case=asdict(case), name=case.name, status=f"timeout after {args.timeout} s")
        except BaseException:
            os.killpg(proc.pid, 9)
            proc.wait()
            raise
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read(), err.read()
    if proc.returncode != 0:
        return dict(case=asdict(case), name=case.name,
                    status=f"failed (exit {proc.returncode})", stderr=stderr[-3000:])
    result = json.loads(stdout.strip().splitlines()[-1])
    result["bytes"], result["lines"] = _corpus_stats(path)
    result["tree_peak_rss_mib"] = round(tree_peak, 1)
    # The peak of the case: the worker's own ru_maxrss; when it forked counting
    # workers, the sampled PSS sum over its process tree if that is higher (the
    # sampling also covers the untimed digest after training, which the
    # worker's own peak, read before it, leaves out).
    forked = result.get("children_peak_rss_mib", 0) > 0
    result["peak_mib"] = round(max(result["peak_rss_mib"], tree_peak if forked else 0), 1)
    result["process_seconds"] = round(time.perf_counter() - started, 2)
    return result


def check_equal(results: list[dict]) -> list[dict]:
    """Within each family, every trainer's digest on the same input must agree."""
    groups: dict[tuple, list[dict]] = {}
    for r in results:
        if r["status"] != "ok":
            continue
        case = Case(**{**r["case"], "options": tuple(tuple(o) for o in r["case"]["options"])})
        family = TRAINERS[case.trainer].family
        if family:
            groups.setdefault((family, case.key), []).append(r)
    checks = []
    for (family, key), rs in sorted(groups.items(), key=lambda kv: str(kv[0])):
        if len(rs) < 2:
            continue
        same = all(r["digest"] == rs[0]["digest"] for r in rs[1:])
        checks.append(dict(family=family, size=key[1], merges=key[2],
                           trainers=[r["case"]["trainer"] for r in rs], equal=same))
    return checks


def _cpu_model() -> str:
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
        for line in out.splitlines():
            if line.startswith("Model name:"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def _versions(trainers) -> dict:
    names = {"bytepair", "Cython"}
    for t in trainers:
        names.update(TRAINERS[t].modules)
    out = {}
    for name in sorted(names):
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = "not installed"
    return out


def machine_info(trainers) -> dict:
    mem = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    return dict(cpu=_cpu_model(), cores=os.cpu_count(), memory_gib=round(mem, 1),
                os=platform.platform(), python=platform.python_version(),
                implementation=platform.python_implementation(), versions=_versions(trainers))


# --------------------------------------------------------------------------- rendering


def save_result(result: dict, name: str, write: bool = True) -> None:
    """Print ``result`` as JSON and, when ``write``, save it as benches/results/``name``.json
    (the small benchmark scripts that are not report suites do this)."""
    print(json.dumps(result, indent=1))
    if write:
        out = ROOT / "benches" / "results" / f"{name}.json"
        out.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
        print(out)


def _fmt_time(seconds: float) -> str:
    if seconds >= 100:
        return f"{seconds:.0f}"
    if seconds >= 10:
        return f"{seconds:.1f}"
    if seconds >= 0.1:
        return f"{seconds:.2f}"
    return f"{seconds:.3f}"


def _fmt_rate(x: float) -> str:
    return f"{x:,.0f}" if x >= 100 else (f"{x:.1f}" if x >= 1 else f"{x:.3f}")


def publish(report: dict, args, render, begin: str, end: str, *, save: bool = True) -> str:
    """Print ``render(report)``; unless ``--no-write``, save the report as ``args.json``
    (``save=False``: a re-render, the JSON is already there) and put the table between
    ``begin`` and ``end`` in ``args.doc``. Returns the table."""
    table = render(report)
    print(table)
    if not args.no_write:
        if save:
            args.json.parent.mkdir(parents=True, exist_ok=True)
            args.json.write_text(json.dumps(report, indent=1) + "\n")
        write_doc(table, args.doc, begin, end)
        print(f"wrote {args.json} and {args.doc}" if save else f"wrote {args.doc}", file=sys.stderr)
    return table


def write_doc(table: str, path: Path = DOC, begin: str = BEGIN, end: str = END) -> None:
    """Replace the text between the report markers (create the file if needed)."""
    block = f"{begin}\n{table}\n{end}"
    text = path.read_text() if path.exists() else f"# Benchmarks\n\n{begin}\n{end}\n"
    if begin not in text or end not in text:
        text = text.rstrip("\n") + f"\n\n{begin}\n{end}\n"
    before, rest = text.split(begin, 1)
    after = rest.split(end, 1)[1]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(before + block + after)


# --------------------------------------------------------------------------- main


def run_cases(cases: list[Case], paths: dict, args, library: Path | None,
              tokens_dir: Path | None = None) -> list[dict]:
    """Run the cases one after the other (never two at once), with progress on stderr."""
    results = []
    for i, case in enumerate(cases, 1):
        print(f"[{i}/{len(cases)}] {case.name} ...", file=sys.stderr, end=" ", flush=True)
        r = run_case(case, paths[case.size], args, library, tokens_dir)
        if (library and r["status"] == "ok" and "bytepair" in TRAINERS[case.trainer].modules
                and not r.get("library", "").startswith(str(library))):
            r["status"] = f"measured the wrong library: {r.get('library')}"
        results.append(r)
        if r["status"] == "ok":
            print(f"{r['wall']:.3f} s ({r['runs']} runs, peak {r['peak_mib']:.0f} MiB)",
                  file=sys.stderr, flush=True)
        else:
            print(r["status"], r.get("stderr", ""), file=sys.stderr, flush=True)
    return results


def make_report(suite: str, args, argv, library, trainers, paths, results, skipped,
                started: float, **extra) -> dict:
    manifests = {corpora.format_size(s): corpora.manifest(p) for s, p in paths.items()}
    report = dict(
        suite=suite,
        date=datetime.datetime.now().strftime("%Y-%m-%d %H:%M"),
        command=("python -m benches.report "
                 + " ".join(argv if argv is not None else sys.argv[1:])).strip(),
        machine=machine_info(trainers),
        code=code_info(library),
        settings=dict(budget=args.budget, cheap=args.cheap, repeat_budget=args.repeat_budget,
                      max_repeats=args.max_repeats,
                      naive_seconds_per_merge_mb=NAIVE_SECONDS_PER_MERGE_MB),
        corpus_label=(f"`{args.corpus}`" if args.corpus else
                      f"{args.language} corpus of benches/corpus.py (SIMULATED text)"
                      if getattr(args, "language", None) else
                      f"English recipe v{corpora.RECIPE} of benches/corpus.py"),
        corpora={k: {kk: v for kk, v in man.items() if kk != "sources"} | dict(
            sources={s["name"]: s.get("bytes") for s in man.get("sources", [])})
            for k, man in manifests.items()},
        results=results,
        skipped=[dict(name=c.name, case=asdict(c), reason=why) for c, why in skipped],
        checks=check_equal(results),
        total_seconds=round(time.perf_counter() - started, 1),
        **extra,
    )
    json_path = args.json.resolve()
    report["json"] = str(json_path.relative_to(ROOT) if json_path.is_relative_to(ROOT) else json_path)
    return report


#: Per suite: (results file, cheap, repeat budget, max repeats).
SUITE_DEFAULTS = {
    "engines": (RESULTS, 10.0, 20.0, 5),
    "peers": (ROOT / "benches" / "results" / "peers.json", 5.0, 10.0, 3),
    "merge-loop": (ROOT / "benches" / "results" / "merge-loop.json", 5.0, 10.0, 3),
    "ladder": (ROOT / "benches" / "results" / "ladder.json", 5.0, 10.0, 3),
}
