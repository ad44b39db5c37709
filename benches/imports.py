"""Importing a Hugging Face tokenizer.json: identical IDs, and encoding speed against tokenizers.

One command trains (once, cached) a byte-level BPE tokenizer with Hugging
Face's ``BpeTrainer`` on the first 10 MB of the English corpus (vocabulary
32,768, GPT-2's ``ByteLevel`` pre-tokenizer, ``<|endoftext|>``), loads its
``tokenizer.json`` with ``bytepair.load`` and encodes held-out multilingual
text (one document per line) with both libraries. Each (library, threads)
case runs in a fresh process, back to back::

    python -m benches.imports                       # held-out: 5 MB of the multilingual recipe
    python -m benches.imports --languages greek,russian,chinese,arabic,german
                                                    # 5 MB of these languages, line by line in turn
    python -m benches.imports --held-out-file FILE  # any UTF-8 text instead

Results go to ``benches/results/imports.json``: MB/s per case, whether the
IDs are identical (a digest of every document's IDs), and the goal

* bytepair's ``encode_batch`` of the imported tokenizer >= 3x ``tokenizers``'
  ``encode_batch``, on the same number of threads (1 and 2).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

from benches import corpus

RESULTS = Path(__file__).parent / "results"
VOCAB = 32768
TRAIN = "10MB"
SPECIAL = "<|endoftext|>"
GOAL = 3.0


def trained_json() -> Path:
    """The tokenizer.json that BpeTrainer makes from the first 10 MB of English, cached."""
    path = corpus.cache_dir() / "models" / f"imports-bpetrainer-{VOCAB}-{TRAIN}.tokenizer.json"
    if path.exists():
        return path
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    path.parent.mkdir(parents=True, exist_ok=True)
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=VOCAB, special_tokens=[SPECIAL], show_progress=False,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    started = time.perf_counter()
    tok.train([str(corpus.corpus_path(TRAIN))], trainer)
    temporary = path.with_suffix(".tmp")
    tok.save(str(temporary))
    temporary.replace(path)
    print(f"trained {path.name} in {time.perf_counter() - started:.0f} s", file=sys.stderr)
    return path


def held_out_lines(args) -> list[str]:
    if args.held_out_file:
        text = Path(args.held_out_file).read_text(encoding="utf-8")
    elif args.languages:
        return _round_robin(args.languages.split(","), corpus.parse_size(args.held_out))
    else:
        path = corpus.corpus_path(args.held_out, language="multilingual", clip=True)
        text = path.read_text(encoding="utf-8")
    return text.splitlines()


def _round_robin(languages: list[str], size: int) -> list[str]:
    """Lines of benches.corpus's per-language texts, one language after the other in turn,
    until ``size`` bytes of UTF-8."""
    texts = [corpus.corpus_path(None, language=language, clip=True).read_text(encoding="utf-8")
             .splitlines() for language in languages]
    lines, total, row = [], 0, 0
    while total < size and any(row < len(text) for text in texts):
        for text in texts:
            if row < len(text) and total < size:
                lines.append(text[row])
                total += len(text[row].encode("utf-8"))
        row += 1
    return lines


def digest(batch: list[list[int]]) -> str:
    sha = hashlib.sha256()
    for ids in batch:
        sha.update(json.dumps(ids).encode())
        sha.update(b"\n")
    return sha.hexdigest()[:16]


def child(library: str, threads: int, model: str, args) -> dict:
    """One library on one thread count (this process's only job)."""
    os.environ["RAYON_NUM_THREADS"] = str(threads)
    lines = held_out_lines(args)
    mb = sum(len(line.encode("utf-8")) for line in lines) / 1e6
    started = time.perf_counter()
    if library == "bytepair":
        import bytepair

        tok = bytepair.load(model)

        def encode():
            return tok.encode_batch(lines, threads=threads, allowed_special="all")
    else:
        import tokenizers

        tok = tokenizers.Tokenizer.from_file(model)

        def encode():
            return [e.ids for e in tok.encode_batch(lines, add_special_tokens=False)]
    load_seconds = time.perf_counter() - started
    times, batch = [], None
    for _ in range(args.rounds):
        batch = None
        started = time.perf_counter()
        batch = encode()
        times.append(time.perf_counter() - started)
    return {"library": library, "threads": threads, "load_s": round(load_seconds, 3),
            "encode_batch_mb_s": round(mb / min(times), 3), "held_out_mb": round(mb, 3),
            "documents": len(lines), "tokens": sum(map(len, batch)), "ids_digest": digest(batch)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benches.imports",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--held-out", default="5MB",
                        help="size of the multilingual held-out text (5MB)")
    parser.add_argument("--languages", default=None, metavar="L1,L2,...",
                        help="held-out text from these languages of benches.corpus (their lines in "
                        "turn) instead of the multilingual recipe")
    parser.add_argument("--held-out-file", default=None,
                        help="a UTF-8 text file to encode instead of the multilingual recipe")
    parser.add_argument("--threads", nargs="+", type=int, default=[1, 2])
    parser.add_argument("--rounds", type=int, default=3, help="timed rounds per case; the best counts")
    parser.add_argument("--output", default=str(RESULTS / "imports.json"))
    parser.add_argument("--child", nargs=3, metavar=("LIBRARY", "THREADS", "MODEL"),
                        help=argparse.SUPPRESS)
    corpus.add_fetch_option(parser)
    args = parser.parse_args(argv)
    if args.languages and args.held_out_file:
        parser.error("--languages and --held-out-file: give one held-out text")
    corpus.apply_fetch_option(args)
    if args.child:
        library, threads, model = args.child
        print(json.dumps(child(library, int(threads), model, args)))
        return 0
    model = trained_json()
    held_out_lines(args)  # build the held-out text before any timing
    report = {"date": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()),
              "commit": subprocess.run(["git", "rev-parse", "--short", "HEAD"], text=True,
                                       capture_output=True, cwd=Path(__file__).parent).stdout.strip(),
              "command": "python -m benches.imports " + " ".join(argv or sys.argv[1:]),
              "machine": {"cpus": os.cpu_count(), "python": platform.python_version(),
                          "platform": platform.platform(),
                          "load_average_at_start": os.getloadavg()},
              "model": {"trainer": "tokenizers BpeTrainer", "vocab_size": VOCAB,
                        "train": f"first {TRAIN} of benches.corpus English", "file": model.name},
              "held_out": args.held_out_file or (
                  f"{args.held_out} of benches.corpus {args.languages or 'multilingual'}"
                  + (" (their lines in turn)" if args.languages else "")),
              "cases": [], "goals": {}}
    for threads in args.threads:
        pair = {}
        for library in ("bytepair", "tokenizers"):
            command = [sys.executable, "-m", "benches.imports", "--child", library, str(threads),
                       str(model), "--held-out", args.held_out, "--rounds", str(args.rounds)]
            if args.held_out_file:
                command += ["--held-out-file", args.held_out_file]
            if args.languages:
                command += ["--languages", args.languages]
            done = subprocess.run(command, capture_output=True, text=True, check=False)
            if done.returncode:
                sys.stderr.write(done.stderr)
                return 1
            pair[library] = json.loads(done.stdout)
            report["cases"].append(pair[library])
            print(json.dumps(pair[library]), file=sys.stderr)
        ratio = pair["bytepair"]["encode_batch_mb_s"] / pair["tokenizers"]["encode_batch_mb_s"]
        same = pair["bytepair"]["ids_digest"] == pair["tokenizers"]["ids_digest"]
        report["goals"][f"encode_batch_{threads}_threads_vs_tokenizers"] = {
            "ratio": round(ratio, 3), "goal": f">= {GOAL}", "met": ratio >= GOAL and same,
            "identical_ids": same}
    report["machine"]["load_average_after"] = os.getloadavg()
    Path(args.output).parent.mkdir(parents=True, exist_ok=True)
    Path(args.output).write_text(json.dumps(report, indent=1) + "\n")
    print(json.dumps(report["goals"], indent=1), file=sys.stderr)
    print(args.output)
    return 0


if __name__ == "__main__":
    sys.exit(main())
