"""Extending a tokenizer: ``bytepair.extend`` against ``bpe-continue``.

    python -m benches.extend --size 100MB --base-size 32768 --vocab-size 49152
    python -m benches.extend --size 10MB --base-size 4096 --vocab-size 8192 --no-save
    python -m benches.extend --size 100MB --tiktoken --base-size 200000 --base-bytes 100000000 \
        --vocab-size 230000 --runs 3 --threads 2 --name extend-tiktoken-100MB

The base is a byte-level BPE tokenizer of ``--base-size`` tokens with BpeTrainer's tie
order and IDs (``bytepair.train(..., ties="tokenizers")`` exported to ``tokenizer.json``,
which equals BpeTrainer's file), trained on the first ``--base-bytes`` of the
English benchmark corpus (``python -m benches.corpus``); it is made once and kept under
the corpus's directory. Each extender then extends it to ``--vocab-size`` on the whole
corpus, one document per line, in a fresh process; the runs go back to back, in turn,
``--runs`` rounds. Each process reports the seconds of its call (reading, counting,
learning and writing the ``tokenizer.json``) and, from the kernel, its peak RSS
(``ru_maxrss`` of the reaped child).

* ``bytepair``: ``bytepair.extend(base, path, vocab_size=V, per_line=True, workers=T)``,
  then ``save``.
* ``bpe-continue``: ``continue_training(base, files=[path], vocab_size=V)``, then its
  ``to_str`` (tokenizers' reader: a line with its line end; the corpus has no line that
  ends in white space, so that is bytepair's per-line reading), ``RAYON_NUM_THREADS=T``.

With ``--tiktoken``, the base is a tiktoken ranks file of ``--base-size`` tokens with
o200k's pattern (bytepair-trained on the first ``--base-bytes``), extended by bytepair
(``bytepair.extend(ranks, path, vocab_size=V, pattern="o200k", per_line=True)``, written
as a ranks file), against bytepair's plain training to the same ``V`` on the same corpus
(``bytepair.train(path, vocab_size=V, pretokenize="o200k", per_line=True)``, then
``to_tiktoken``), and a third process that only reads the base (``bytepair-read``: the
import and the :class:`~bytepair.formats.bases.Base`, as ``extend`` reads it). Its checks:
every new token reachable, and tiktoken's IDs with the extended ranks equal to bytepair's
on the corpus's first 2,000 lines.

The checks: the two files are equal (vocabulary, merges, added tokens; up to key order),
and every new token's bytes encode to that token alone (reachable), over the whole new
vocabulary. Results: ``benches/results/extend-<size>.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from importlib import metadata
from pathlib import Path

from . import corpus as corpora
from .harness import ROOT, machine_info, save_result

EXTENDERS = ("bytepair", "bpe-continue")


def _extend(name: str, base: str, path: str, vocab_size: int, threads: int, out: str) -> None:
    """In the worker process: extend, write the tokenizer.json and the seconds to ``out``."""
    started = time.perf_counter()
    if name == "bytepair":
        import bytepair

        extension = bytepair.extend(base, path, vocab_size=vocab_size, per_line=True,
                                    workers=threads, progress=False)
        extension.save(out)
    elif name == "bytepair-tiktoken":
        import bytepair

        extension = bytepair.extend(base, path, vocab_size=vocab_size, per_line=True,
                                    workers=threads, progress=False, pattern="o200k")
        extension.save(out)
    elif name == "bytepair-read":
        from bytepair.training.extend import as_base

        as_base(base, pattern="o200k")
        Path(out).write_text("")
    elif name == "bytepair-train":
        import bytepair

        tok = bytepair.train(path, vocab_size=vocab_size, pretokenize="o200k", per_line=True,
                             workers=threads, progress=False)
        bytepair.to_tiktoken(tok, out)
    elif name == "bpe-continue":
        from bpe_continue import continue_training

        extended = continue_training(base, files=[path], vocab_size=vocab_size,
                                     show_progress=False)
        Path(out).write_text(extended.to_str(), encoding="utf-8")
    else:
        raise SystemExit(f"unknown extender {name!r}")
    Path(out + ".seconds").write_text(str(time.perf_counter() - started))


def run(name: str, base: Path, path: Path, vocab_size: int, threads: int, workdir: Path):
    """One fresh process: its seconds, wall seconds and peak RSS (MiB); and its file."""
    out = workdir / f"{name}.json"
    env = dict(os.environ, RAYON_NUM_THREADS=str(threads))
    started = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "benches.extend", "--worker", name, str(base),
                             str(path), str(vocab_size), str(threads), str(out)], cwd=ROOT, env=env)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - started
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise SystemExit(f"{name} failed (exit code {proc.returncode})")
    seconds = float(Path(str(out) + ".seconds").read_text())
    data = json.loads(out.read_text(encoding="utf-8")) if name in EXTENDERS else str(out)
    return dict(extender=name, seconds=round(seconds, 3), wall=round(wall, 3),
                peak_rss_mib=round(usage.ru_maxrss / 1024, 1), load=os.getloadavg()[0]), data


def make_base(path: Path, base_size: int, base_bytes: int, threads: int) -> Path:
    """The base tokenizer.json (made once, kept beside the corpus)."""
    target = path.with_name(f"{path.stem}-extend-base-{base_size}-{base_bytes}.json")
    if target.exists():
        return target
    import bytepair
    from bytepair.formats.export import to_tokenizers_json

    with open(path, "rb") as handle:
        head = handle.read(base_bytes)
    head = head[:head.rfind(b"\n") + 1].decode("utf-8")
    tok = bytepair.train(head.splitlines(), vocab_size=base_size, pretokenize="gpt2",
                         ties="tokenizers", workers=threads, progress=False)
    to_tokenizers_json(tok, target)
    return target


def make_tiktoken_base(path: Path, base_size: int, base_bytes: int, threads: int) -> Path:
    """A tiktoken ranks file of ``base_size`` tokens, o200k's pattern, no special tokens (made
    once, kept beside the corpus)."""
    target = path.with_name(f"{path.stem}-extend-base-o200k-{base_size}-{base_bytes}.tiktoken")
    if target.exists():
        return target
    import bytepair

    with open(path, "rb") as handle:
        head = handle.read(base_bytes)
    head = head[:head.rfind(b"\n") + 1].decode("utf-8")
    tok = bytepair.train(head.splitlines(), vocab_size=base_size, pretokenize="o200k",
                         workers=threads, progress=False)
    bytepair.to_tiktoken(tok, target)
    return target


def tiktoken_checks(base: Path, files: dict, path: Path) -> dict:
    """Every new token reachable, and tiktoken's IDs on the corpus's first lines equal to
    bytepair's for the extended ranks file."""
    import tiktoken
    import tiktoken.load

    import bytepair
    from bytepair.formats.bases import read_base

    os.environ["TIKTOKEN_CACHE_DIR"] = ""
    out = {}
    extended = read_base(files["bytepair-tiktoken"], pattern="o200k")
    before = read_base(base, pattern="o200k")
    new = set(extended.tokens) - set(before.tokens)
    out["new_tokens"] = len(new)
    out["unreachable_new_tokens"] = len(set(extended.unreachable()) & new)
    enc = tiktoken.Encoding("extended", pat_str=bytepair.tiktoken_pattern("o200k"),
                            mergeable_ranks=tiktoken.load.load_tiktoken_bpe(
                                files["bytepair-tiktoken"]), special_tokens={})
    with open(path, encoding="utf-8") as handle:
        lines = [handle.readline().rstrip("\n") for _ in range(2000)]
    out["tiktoken_ids_equal_on_2000_lines"] = all(enc.encode(line) == extended.encode(line)
                                                   for line in lines)
    return out


def checks(base: Path, files: dict) -> dict:
    """Equality with bpe-continue, and reachability of every new token."""
    out = {}
    if set(EXTENDERS) <= set(files):
        ours, theirs = files["bytepair"], files["bpe-continue"]
        out["files_equal"] = ours == theirs
        out["merges_equal"] = ours["model"]["merges"] == theirs["model"]["merges"]
        out["vocab_equal"] = ours["model"]["vocab"] == theirs["model"]["vocab"]
        out["added_tokens_equal"] = ours["added_tokens"] == theirs["added_tokens"]
    if "bytepair" in files:
        from bytepair.formats.bases import from_tokenizers_document

        document = files["bytepair"]
        extended = from_tokenizers_document(document)
        before = json.loads(base.read_text(encoding="utf-8"))["model"]["vocab"]
        new = {i: extended.tokens[i] for i in set(extended.tokens) - set(before.values())}
        unreachable = [i for i, data in new.items() if extended.encode_piece(data) != [i]]
        out["new_tokens"] = len(new)
        out["unreachable_new_tokens"] = len(unreachable)
        out["new_merges"] = len(document["model"]["merges"]) - len(
            json.loads(base.read_text(encoding="utf-8"))["model"]["merges"])
    return out


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(prog="python -m benches.extend",
                                     description=__doc__.split("\n")[0])
    parser.add_argument("--size", default="100MB", help="English corpus size (benches.corpus)")
    parser.add_argument("--corpus", default=None, help="a text file instead of the English recipe")
    parser.add_argument("--base-size", type=int, default=32768)
    parser.add_argument("--base-bytes", type=int, default=20_000_000,
                        help="the base is trained on this much of the corpus's start")
    parser.add_argument("--vocab-size", type=int, default=49152)
    parser.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--runs", type=int, default=1, help="rounds of all extenders, in turn")
    parser.add_argument("--extenders", default=",".join(EXTENDERS))
    parser.add_argument("--tiktoken", action="store_true",
                        help="a tiktoken base (o200k's pattern) extended by bytepair, against "
                        "bytepair's plain training to the same size on the same corpus")
    parser.add_argument("--no-save", action="store_true", help="print only")
    parser.add_argument("--name", default=None, help="results file name (default extend-SIZE)")
    corpora.add_fetch_option(parser)
    args = parser.parse_args(argv)
    corpora.apply_fetch_option(args)
    path = corpora.corpus_path(args.size, args.corpus)
    if args.tiktoken:
        base = make_tiktoken_base(path, args.base_size, args.base_bytes, args.threads)
        names = ["bytepair-tiktoken", "bytepair-train", "bytepair-read"]
    else:
        base = make_base(path, args.base_size, args.base_bytes, args.threads)
        names = args.extenders.split(",")
    runs, files = [], {}
    with tempfile.TemporaryDirectory(prefix="bytepair-extend-") as tmp:
        for round_ in range(args.runs):
            for name in names:
                result, data = run(name, base, path, args.vocab_size, args.threads, Path(tmp))
                result["round"] = round_
                runs.append(result)
                files[name] = data
                print(f"{name}: {result['seconds']:.2f} s, {result['peak_rss_mib']:.0f} MiB "
                      f"(load {result['load']:.2f})", file=sys.stderr, flush=True)
        checked = tiktoken_checks(base, files, path) if args.tiktoken else checks(base, files)
    best = {name: min(r["seconds"] for r in runs if r["extender"] == name) for name in names}
    peak = {name: max(r["peak_rss_mib"] for r in runs if r["extender"] == name) for name in names}
    ratios = {}
    if args.tiktoken:
        ratios = {"time extend/train": round(best["bytepair-tiktoken"] / best["bytepair-train"], 3),
                  "peak extend/train": round(peak["bytepair-tiktoken"] / peak["bytepair-train"], 3),
                  "time read/extend": round(best["bytepair-read"] / best["bytepair-tiktoken"], 3),
                  # Each round's two runs went back to back: steadier than best against best
                  # when the load moves.
                  "time extend/train, median of rounds": round(statistics.median(
                      extend["seconds"] / train["seconds"]
                      for extend, train in zip(*([r for r in runs if r["extender"] == name]
                                                 for name in names[:2]))), 3)}
    if set(EXTENDERS) <= set(names):
        ratios = {"time bytepair/bpe-continue": round(best["bytepair"] / best["bpe-continue"], 3),
                  "peak bytepair/bpe-continue": round(peak["bytepair"] / peak["bpe-continue"], 3)}
    result = dict(
        command="python -m benches.extend " + " ".join(argv if argv is not None else sys.argv[1:]),
        corpus=str(path), corpus_bytes=path.stat().st_size, base=str(base),
        base_size=args.base_size, vocab_size=args.vocab_size, threads=args.threads, runs=runs,
        best_seconds=best, peak_rss_mib=peak, ratios=ratios,
        checks=checked,
        machine=machine_info([]),
        versions={n: metadata.version(n) for n in ("bytepair", "tokenizers", "bpe-continue")},
        date=time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()))
    default = f"extend-{'tiktoken-' if args.tiktoken else ''}{args.size}"
    save_result(result, args.name or default, write=not args.no_save)


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--worker":
        _extend(sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5]), int(sys.argv[6]),
                sys.argv[7])
    else:
        main()
