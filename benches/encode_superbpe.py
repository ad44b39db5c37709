"""Encoding with a SuperBPE model against a plain model of the same pattern and size.

Both are 32,768-token models trained (once, cached) on the first 10 MB of the English corpus,
one document per line, as ``benches/encode.py`` trains its models: the plain one is that
bench's model of ``--pattern``; the SuperBPE one trains the same way with ``superbpe=
--transition`` (stage 1 to that vocabulary with ``--pattern``, then stage 2 over the pieces of
the ``superbpe`` pattern, whose tokens may span spaces). Each model encodes the held-out text
of ``benches/encode.py`` (the bytes after the training text, 5 MB) on one thread, in a fresh
process, the two models in turn: the whole text with ``encode_ordinary`` (first: a fresh
tokenizer, its piece cache cold; warm: the best of ``--rounds`` more), and its lines with
``encode_batch`` (first and warm alike). Also kept: the pieces each pattern cuts the text into
and how many are distinct (what the piece cache can hold), tokens, bytes per token, and for the
SuperBPE model its stage-1 rules alone over each stage's pieces (where its time goes)::

    python -m benches.encode_superbpe                    # cl100k, transition 24,576, 3 turns
    python -m benches.encode_superbpe --pattern gpt2 --turns 1
    python -m benches.encode_superbpe --before /work/main/src   # and another tree's, in turns

With ``--before SRC`` each turn also runs both models with ``PYTHONPATH=SRC`` (another
checkout's ``src``: the library before a change), as ``plain_before`` and ``superbpe_before``,
the four processes of a turn in alternating order. Results go to
``benches/results/encode-superbpe.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from benches import corpus
from benches.encode import SPECIAL, TRAIN, VOCAB, _commit, _text_path, best, held_out_text, train_model

RESULTS = Path(__file__).parent / "results" / "encode-superbpe.json"


def superbpe_model(pattern: str, transition: int) -> Path:
    """The SuperBPE model of ``pattern``, trained like benches/encode.py's plain one, cached."""
    import bytepair

    path = corpus.cache_dir() / "models" / f"encode-superbpe-{pattern}-{transition}-{VOCAB}-{TRAIN}.json"
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        started = time.perf_counter()
        tok = bytepair.train(_text_path(TRAIN, "english"), vocab_size=VOCAB, pretokenize=pattern,
                             per_line=True, special_tokens=[SPECIAL], superbpe=transition,
                             progress=False)
        tok.save(path)
        print(f"trained {path.name} in {time.perf_counter() - started:.0f} s", file=sys.stderr)
    return path


def child(model_path: str, held_out: int, rounds: int) -> dict:
    """One model's cases, in this fresh process."""
    import bytepair
    from bytepair.split.pretokenize import splitter

    text = held_out_text(held_out)
    lines = text.splitlines(keepends=True)
    mb = len(text.encode("utf-8")) / 1e6
    tok = bytepair.load(model_path)
    pieces = splitter(tok.pattern)(text)
    lengths = [len(piece.encode("utf-8")) for piece in pieces]
    out = {"model": Path(model_path).name, "held_out_bytes": round(mb * 1e6),
           "pieces": len(pieces), "distinct_pieces": len(set(pieces)),
           "longest_piece_bytes": max(lengths)}
    for cut in (64, 256):  # the encoder's heap takes pieces over 64 bytes, its cache up to 256
        out[f"share_of_bytes_in_pieces_over_{cut}"] = sum(n for n in lengths if n > cut) / sum(lengths)
    cold = bytepair.load(model_path)
    started = time.perf_counter()
    ids = cold.encode_ordinary(text)
    out["encode_first"] = mb / (time.perf_counter() - started)
    out["encode_warm"] = mb / best(lambda: cold.encode_ordinary(text), rounds)
    cold = bytepair.load(model_path)
    started = time.perf_counter()
    batch = cold.encode_batch(lines, threads=1)
    out["encode_batch_first"] = mb / (time.perf_counter() - started)
    out["encode_batch_warm"] = mb / best(lambda: cold.encode_batch(lines, threads=1), rounds)
    out["tokens"] = len(ids)
    out["bytes_per_token"] = mb * 1e6 / len(ids)
    out["round_trip"] = tok.decode_bytes(ids) == text.encode("utf-8")
    out["batch_tokens"] = sum(map(len, batch))
    if tok.model.stages is not None:
        out.update(_stage_one(tok, text, mb))
    return out


def _stage_one(tok, text: str, mb: float) -> dict:
    """Where a SuperBPE model's time goes: its stage-1 rules alone (first encode, fresh models)
    over the stage-2 pieces, and over the stage-1 pattern's pieces."""
    from bytepair.model.models import ByteModel
    from bytepair.model.tokenizer import Tokenizer

    stages = tok.model.stages
    rules = tok.model.merges[:stages.transition - 256]
    out = {}
    for name, pattern in (("stage1_rules_on_stage2_pieces_first", tok.pattern),
                          ("stage1_rules_on_stage1_pieces_first", stages.pretokenize)):
        model = Tokenizer(ByteModel(rules, pattern=pattern))
        started = time.perf_counter()
        model.encode_ordinary(text)
        out[name] = mb / (time.perf_counter() - started)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benches.encode_superbpe",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--pattern", default="cl100k", help="stage-1 and plain pattern (cl100k)")
    parser.add_argument("--transition", type=int, default=24576,
                        help="SuperBPE's stage-1 vocabulary (24,576 = 3/4 of 32,768)")
    parser.add_argument("--held-out", default="5MB", help="held-out text size (5MB)")
    parser.add_argument("--rounds", type=int, default=3, help="warm rounds; the best counts")
    parser.add_argument("--turns", type=int, default=3, help="fresh processes of each model")
    parser.add_argument("--output", type=Path, default=RESULTS)
    parser.add_argument("--before", metavar="SRC",
                        help="also run each model with PYTHONPATH=SRC (the library before)")
    parser.add_argument("--child", metavar="MODEL", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    held_out = corpus.parse_size(args.held_out)
    if args.child:
        print(json.dumps(child(args.child, held_out, args.rounds)))
        return 0
    models = {"plain": train_model(args.pattern), "superbpe": superbpe_model(args.pattern,
                                                                               args.transition)}
    libraries = {"": os.environ.get("PYTHONPATH")}
    if args.before:
        libraries["_before"] = str(Path(args.before).resolve())
    cases = [(name + suffix, path, library) for suffix, library in libraries.items()
             for name, path in models.items()]
    runs: dict[str, list] = {name: [] for name, _, _ in cases}
    for turn in range(args.turns):
        for name, path, library in (cases if turn % 2 == 0 else cases[::-1]):
            load = os.getloadavg()[0]
            env = dict(os.environ)
            if library is not None:
                env["PYTHONPATH"] = library
            done = subprocess.run([sys.executable, "-m", "benches.encode_superbpe", "--child",
                                   str(path), "--held-out", args.held_out,
                                   "--rounds", str(args.rounds)],
                                  capture_output=True, text=True, check=False, env=env)
            if done.returncode:
                sys.stderr.write(done.stderr)
                return 1
            run = {**json.loads(done.stdout), "pythonpath": library, "load_before": load,
                   "load_after": os.getloadavg()[0]}
            runs[name].append(run)
            print(name, json.dumps(run), file=sys.stderr, flush=True)
    speeds = ("encode_first", "encode_warm", "encode_batch_first", "encode_batch_warm")
    medians = {name: {key: statistics.median(run[key] for run in rows) for key in speeds}
               for name, rows in runs.items()}
    report = {"command": "python -m benches.encode_superbpe " + " ".join(
                  argv if argv is not None else sys.argv[1:]),
              "commit": _commit(), "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
              "pattern": args.pattern, "transition": args.transition, "vocab_size": VOCAB,
              "train": TRAIN, "units": "MB/s of UTF-8 input, one thread", "runs": runs,
              "medians": medians,
              "superbpe_over_plain": {suffix or "now": {
                  key: medians["superbpe" + suffix][key] / medians["plain" + suffix][key]
                  for key in speeds} for suffix in libraries}}
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(report, indent=1) + "\n")
    print(json.dumps({key: report[key] for key in ("medians", "superbpe_over_plain")}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
