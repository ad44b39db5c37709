"""Ingestion benchmarks: every named pattern, every shape of input, against rustbpe.

One command runs the matrix, each case in a fresh process (benches/harness.py's
``run_case``: wall time, peak RSS of the process tree), and writes
benches/results/ingest.json and the ingest section of docs/benchmarks.md::

    python -m benches.report --suite ingest                      # 10 MB, every case (~15 min)
    python -m benches.report --suite ingest --library HEAD --sizes 100MB --patterns cl100k o200k --shapes lines
    python -m benches.report --suite ingest --library HEAD --sizes 100MB 1GB --patterns gpt2 --shapes document lines --threads 2

Cases, on the English recipe of benches/corpus.py (one line per document):

* ``lines``: one document per line, vocabulary 32768, every pattern, 1 and 2
  threads; bytepair (``per_line=True``) against rustbpe given the same
  pattern (``train_from_iterator(lines, 32768, pattern=...)``, lines read in
  Python, timed);
* ``document``: the same file read as one document (bytepair streams it in
  blocks cut at cut points); Hugging Face (its file reader, GPT-2 split) as
  the memory reference;
* ``gzip``: the per-line file gzip-compressed;
* ``short`` / ``long``: the same text re-wrapped at 40 columns / joined 50
  lines to a line;
* ``russian`` / ``german`` / ``japanese`` / ``chinese`` / ``multilingual``:
  the non-English recipe of benches/corpus.py (Debian's translated
  documentation, one line per block of text), its first ``size`` bytes, or
  all of that language's text where it holds less (the table gives the real
  size: about 14 MB of Russian, for one).

Sizes above 100 MB (``--sizes 1GB``) use benches/corpus.py's large corpus:
all of the English recipe, then the multilingual text, then more Debian
documentation, and only then the same text again from its start (the
Debian sources do not hold 1 GB of distinct text). Its manifest counts the
distinct and the repeated bytes, and the table says both beside the figure.
"""

from __future__ import annotations

import functools
import gzip
import json
import multiprocessing
import os
import sys
import time
from pathlib import Path

import bytepair

from . import corpus as corpora
from . import peers
from .harness import (
    ROOT, TRAINERS, Case, Trainer, check_equal, code_info, library_snapshot, machine_info, run_case,
    write_doc,
)
from bytepair.split.pretokenize import PATTERNS

RESULTS = ROOT / "benches" / "results" / "ingest.json"
BEGIN, END = "<!-- ingest:begin -->", "<!-- ingest:end -->"
VOCAB = 32768
ALL_PATTERNS = ("gpt2", "cl100k", "o200k", "nanochat", "whitespace")
#: Shapes that are a text of benches/corpus.py's non-English recipe, not the English one.
LANGUAGE_SHAPES = ("russian", "german", "japanese", "chinese", "multilingual")
ENGLISH_SHAPES = ("lines", "document", "gzip", "short", "long")
ALL_SHAPES = (*ENGLISH_SHAPES, *LANGUAGE_SHAPES)
#: Shapes whose file is one document per line.
PER_LINE = {"lines": True, "document": False, "gzip": True, "short": True, "long": True,
            **{shape: True for shape in LANGUAGE_SHAPES}}


def _bytepair_train(path: Path, merges: int, options: dict):
    return bytepair.train(str(path), merges=merges, pretokenize=options["pattern"],
                          per_line=PER_LINE[options["shape"]], workers=int(options["threads"]),
                          progress=False)


def _text_of(path: Path, options: dict):
    """The documents rustbpe trains on: lines (per-line shapes), or the whole file as one."""
    opener = gzip.open if str(path).endswith(".gz") else open
    if not PER_LINE[options["shape"]]:
        with opener(path, "rb") as f:
            return iter([f.read().decode("utf-8")])
    return (line for line in peers.text_lines(path)) if opener is open else (
        line.rstrip("\r\n") if line.endswith("\n") else line
        for line in gzip.open(path, "rt", encoding="utf-8", newline=""))


def _rustbpe_train(path: Path, merges: int, options: dict):
    import rustbpe

    tok = rustbpe.Tokenizer()
    tok.train_from_iterator(_text_of(path, options), 256 + merges,
                            pattern=PATTERNS[options["pattern"]])
    return tok


def _hf_train(path: Path, merges: int, options: dict):
    return peers._hf_train(path, merges, dict(mode="gpt2"))


TRAINERS.update({
    "ingest-bytepair": Trainer(
        "ingest-bytepair", "bytepair.train(path, vocab_size=32768, pretokenize=P, per_line=..., "
        "workers=T)", peers._bytepair_prepare, _bytepair_train, peers._bytepair_digest,
        modules=("bytepair",), tokens=peers._bytepair_tokens, stages=peers._bytepair_stages),
    "ingest-rustbpe": Trainer(
        "ingest-rustbpe", "rustbpe Tokenizer().train_from_iterator(lines, 32768, pattern=P)",
        peers._keep_path, _rustbpe_train, peers._rustbpe_digest, modules=("rustbpe",),
        tokens=peers._rustbpe_tokens),
    "ingest-hf": Trainer(
        "ingest-hf", "Hugging Face tokenizers BpeTrainer, ByteLevel (GPT-2 split), Tokenizer.train([path])",
        peers._keep_path, _hf_train, peers._hf_digest, modules=("tokenizers",),
        tokens=peers._hf_tokens),
})


#: Sizes up to this use the English recipe; above it, the large corpus (see the docstring).
LARGEST_RECIPE = 100_000_000


def _english(size: int, corpus: str | None = None) -> Path:
    """The English corpus of ``size`` bytes; above ``LARGEST_RECIPE``, the large corpus
    (distinct text first, then repeats; built on first use). With ``corpus``, that text
    file's first ``size`` bytes instead (cut at a line end)."""
    if corpus is not None:
        return corpora.corpus_path(size, corpus)
    if size <= LARGEST_RECIPE:
        return corpora.corpus_path(size)
    return corpora.corpus_path(size, language="large")


def _shaped_path(shape: str, size: int, corpus: str | None = None) -> Path:
    """The corpus file for ``shape`` (building what it needs when it is not cached)."""
    if shape in LANGUAGE_SHAPES:
        return corpora.corpus_path(size, language=shape, clip=True)
    base = _english(size, corpus)
    if shape in ("lines", "document"):
        return base
    return corpora.cache_dir() / f"{base.stem}-{shape}{'.txt.gz' if shape == 'gzip' else '.txt'}"


@functools.lru_cache(maxsize=None)
def _shaped(shape: str, size: int, corpus: str | None = None) -> Path:
    """The corpus file for ``shape``, built once from the English recipe (or the large corpus,
    or a text of the non-English recipe).

    Built in a forked process: Linux keeps a process's peak RSS across
    ``exec``, so text read here would show in every case's peak. Once built,
    finding the path again reads only the cache's manifests.
    """
    builder = multiprocessing.get_context("fork").Process(target=_build, args=(shape, size, corpus))
    builder.start()
    builder.join()
    if builder.exitcode != 0:
        raise RuntimeError(f"could not build the {shape} corpus of {size:,} bytes")
    return _shaped_path(shape, size, corpus)


def _build(shape: str, size: int, corpus: str | None = None) -> None:
    out = _shaped_path(shape, size, corpus)
    if shape in ("lines", "document", *LANGUAGE_SHAPES) or out.exists():
        return
    data = _english(size, corpus).read_bytes()
    if shape == "gzip":
        shaped = gzip.compress(data, 6)
    elif shape == "short":
        words, lines, line = data.split(b" "), [], []
        width = 0
        for word in words:
            if width + len(word) > 40 and line:
                lines.append(b" ".join(line))
                line, width = [], 0
            line.append(word)
            width += len(word) + 1
        lines.append(b" ".join(line))
        shaped = b"\n".join(l.replace(b"\n", b" ") for l in lines) + b"\n"
    elif shape == "long":
        rows = data.split(b"\n")
        shaped = b"\n".join(b" ".join(rows[i:i + 50]) for i in range(0, len(rows), 50))
    else:
        raise ValueError(f"no shape {shape!r}")
    tmp = out.with_name(f".{out.name}.{os.getpid()}.tmp")
    tmp.write_bytes(shaped)
    os.replace(tmp, out)


def _composition(corpus: str) -> str:
    """What a table row says beside a corpus that is not all distinct text."""
    stem = Path(corpus).name.split(".")[0]
    if "-x" in stem:  # results from before the large corpus: the 100 MB corpus repeated
        return " (the 100 MB corpus repeated)"
    if not stem.startswith("large-"):
        return ""
    base = corpora.cache_dir() / ("-".join(stem.split("-")[:3]) + ".json")
    if not base.exists():
        return " (distinct text, then repeats)"
    m = json.loads(base.read_text())
    return (f" ({m['distinct_bytes'] / 1e6:.0f} MB distinct, "
            f"{m['repeated_bytes'] / 1e6:.0f} MB repeated)")


def matrix(sizes, patterns, shapes, threads, corpus: str | None = None) -> list[Case]:
    """The cases; with ``corpus`` the English shapes read that text file instead."""
    if corpus is not None and set(shapes) & set(LANGUAGE_SHAPES):
        raise ValueError(f"--corpus stands for the English text; the shapes "
                         f"{', '.join(s for s in shapes if s in LANGUAGE_SHAPES)} read Debian's "
                         f"translations: give --shapes from {', '.join(ENGLISH_SHAPES)}")
    cases = []
    for size in sizes:
        for shape in shapes:
            # Every pattern for English lines and the other languages (o200k was made
            # for them); the other English shapes with cl100k and gpt2.
            for pattern in (patterns if shape == "lines" or shape in LANGUAGE_SHAPES else
                            [p for p in patterns if p in ("cl100k", "gpt2")] or patterns[:1]):
                for t in threads:
                    trainers = ["ingest-bytepair", "ingest-rustbpe"]
                    if shape == "document" and pattern == "gpt2" and t == threads[0]:
                        trainers.append("ingest-hf")
                    for trainer in trainers:
                        options = (("pattern", pattern), ("shape", shape), ("threads", t))
                        cases.append(Case(trainer, size, VOCAB - 256,
                                          str(_shaped(shape, size, corpus)), options))
    return cases


def render(report: dict) -> str:
    rows = [r for r in report["results"] if r["status"] == "ok"]
    rust = {}
    hf = {}
    for r in rows:
        o = dict(map(tuple, r["case"]["options"]))
        key = (r["case"]["size"], o["shape"], o["pattern"], o["threads"])
        if r["case"]["trainer"] == "ingest-rustbpe":
            rust[key] = r
        if r["case"]["trainer"] == "ingest-hf":
            hf[(r["case"]["size"], o["shape"])] = r
    m = report["machine"]
    out = [f"Measured {report['date']} with `{report['command']}` on {m['cpu']} ({m['cores']} "
           f"cores), bytepair at {report['code']['commit']}"
           + (" with uncommitted changes" if report["code"]["modified"] else "")
           + f"; load average before/after each case in the JSON (`{report['json']}`). "
           f"Vocabulary {VOCAB}; times are whole jobs (read, split, count, learn), one run each; "
           f"\"count\" is bytepair's reading, splitting and counting inside the same run "
           f"(`count_files`), the rest of its time is learning the merges.",
           "", "| size | shape | pattern | threads | bytepair s | rustbpe s | ratio | bytepair count s | count MB/s "
           "| bytepair peak MiB | rustbpe peak MiB | load |",
           "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        if r["case"]["trainer"] != "ingest-bytepair":
            continue
        o = dict(map(tuple, r["case"]["options"]))
        # A language's text may be smaller than the size asked for: all that Debian ships.
        text_bytes = r["bytes"] if o["shape"] in LANGUAGE_SHAPES else r["case"]["size"]
        label = (corpora.format_size(text_bytes) if text_bytes == r["case"]["size"]
                 else f"{text_bytes / 1e6:.1f} MB")
        label += _composition(r["case"]["corpus"])
        count = r.get("stage_medians", {}).get("count")
        counted = f"{count:.2f} | {text_bytes / 1e6 / count:.0f}" if count else "- | -"
        key = (r["case"]["size"], o["shape"], o["pattern"], o["threads"])
        peer = rust.get(key)
        ratio = f"{r['wall'] / peer['wall']:.2f}x" if peer else "-"
        out.append(
            f"| {label} | {o['shape']} | {o['pattern']} | {o['threads']} "
            f"| {r['wall']:.2f} | {peer['wall']:.2f} | {ratio} | {counted} | {r['peak_mib']:.0f} "
            f"| {peer['peak_mib']:.0f} | {r['loadavg'][0]:.1f} |" if peer else
            f"| {label} | {o['shape']} | {o['pattern']} | {o['threads']} "
            f"| {r['wall']:.2f} | - | - | {counted} | {r['peak_mib']:.0f} | - | {r['loadavg'][0]:.1f} |")
    for (size, shape), h in hf.items():
        ours = [r for r in rows if r["case"]["trainer"] == "ingest-bytepair"
                and dict(map(tuple, r["case"]["options"]))["shape"] == shape
                and dict(map(tuple, r["case"]["options"]))["pattern"] == "gpt2"
                and r["case"]["size"] == size]
        if ours:
            o = ours[0]
            out.append("")
            out.append(f"Hugging Face, {corpora.format_size(size)} {shape} (GPT-2 split, its file "
                       f"reader): {h['wall']:.2f} s, peak {h['peak_mib']:.0f} MiB; bytepair "
                       f"whole-file streaming: {o['wall']:.2f} s ({o['wall'] / h['wall']:.2f}x), "
                       f"peak {o['peak_mib']:.0f} MiB ({o['peak_mib'] / h['peak_mib']:.2f}x).")
    return "\n".join(out)


def run(args, argv) -> int:
    sizes = [corpora.parse_size(s) for s in (args.sizes or ["10MB"])]
    patterns = args.patterns or list(ALL_PATTERNS)
    # Another text stands for the English recipe only: by default, its shapes.
    shapes = args.shapes or list(ALL_SHAPES if args.corpus is None else ENGLISH_SHAPES)
    threads = args.threads or [1, 2]
    cases = matrix(sizes, patterns, shapes, threads, args.corpus)
    if args.trainers:
        cases = [c for c in cases if c.trainer in args.trainers]
    library = library_snapshot(args.library) if args.library else None
    started = time.perf_counter()
    results = []
    for i, case in enumerate(cases, 1):
        print(f"[{i}/{len(cases)}] {case.name} {dict(case.options)} ...", file=sys.stderr,
              end=" ", flush=True)
        r = run_case(case, Path(case.corpus), args, library)
        results.append(r)
        print(f"{r.get('wall', 0):.2f} s, peak {r.get('peak_mib', 0):.0f} MiB"
              if r["status"] == "ok" else r["status"] + r.get("stderr", ""), file=sys.stderr,
              flush=True)
    report = dict(
        suite="ingest", date=time.strftime("%Y-%m-%d %H:%M"),
        command="python -m benches.report " + " ".join(argv if argv is not None else sys.argv[1:]),
        machine=machine_info(["ingest-bytepair", "ingest-rustbpe", "ingest-hf"]),
        code=code_info(library), results=results, checks=check_equal(results),
        total_seconds=round(time.perf_counter() - started, 1),
        json=str(args.json.resolve().relative_to(ROOT) if args.json.resolve().is_relative_to(ROOT)
                 else args.json))
    table = render(report)
    print(table)
    if not args.no_write:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(report, indent=1))
        write_doc(table, args.doc, BEGIN, END)
    return 0
