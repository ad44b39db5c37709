"""Encoding with a sentencepiece BPE ``.model``: bytepair's compiled encoder against its Python
reference and sentencepiece's own, characters per second; and ``extend`` of that model.

    python -m benches.spm_encode --corpus ~/.cache/bytepair-bench/english-v1-5000000.txt \\
        --corpus ~/.cache/bytepair-bench/chinese-v2-5000000.txt

For each corpus, a base of ``--vocab-size`` pieces is trained by spm_train (Llama-2-like:
identity, byte fallback, split digits; one thread) on its first ``--train-bytes`` and kept
beside the corpus. Then, one line at a time over the first ``--encode-bytes``:

* ``python``: ``SentencePieceModel.encode(line, compiled=False)`` (the reference);
* ``compiled``: ``SentencePieceModel.encode(line)`` (``bytepair.model._spm_encode``);
* ``sentencepiece``: ``SentencePieceProcessor.encode(line)``.

Each encoder's IDs must equal sentencepiece's on every line. The best of ``--runs`` runs is
kept. Last, ``extend_sentencepiece(base, corpus, vocab_size=base + --extend-pieces)``
runs on the whole corpus with the Python encoder and loop (``compiled=False``), with the
compiled ones, and with the compiled loop and the Python encoder (the time before this
encoder was compiled), timing the whole call and the per-word segmentation inside it
(``as_base_pieces``). The load average is recorded before and after.
Results: ``benches/results/spm-encode.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "results" / "spm-encode.json"
LLAMA = dict(normalization_rule_name="identity", byte_fallback=True, split_digits=True,
             allow_whitespace_only_pieces=True, remove_extra_whitespaces=False,
             character_coverage=0.99995)


def _base(corpus: Path, vocab_size: int, train_bytes: int) -> Path:
    """spm_train's Llama-2-like model of the first ``train_bytes`` of ``corpus`` (made once)."""
    import sentencepiece as spm

    prefix = corpus.with_name(f"{corpus.stem}-spm-{vocab_size}-{train_bytes}")
    if not prefix.with_suffix(".model").exists():
        head = prefix.with_suffix(".head.txt")
        with open(corpus, "rb") as source:
            head.write_bytes(source.read(train_bytes).rsplit(b"\n", 1)[0] + b"\n")
        with open(os.devnull, "w") as quiet:
            spm.SentencePieceTrainer.train(input=str(head), model_prefix=str(prefix), model_type="bpe",
                                           vocab_size=vocab_size, num_threads=1, logstream=quiet, **LLAMA)
        head.unlink()
    return prefix.with_suffix(".model")


def _best(encode, lines: list[str], runs: int) -> tuple[float, list[list[int]]]:
    best, ids = float("inf"), []
    for _ in range(runs):
        started = time.perf_counter()
        ids = [encode(line) for line in lines]
        best = min(best, time.perf_counter() - started)
    return best, ids


def _extend(base: Path, corpus: Path, pieces: int, compiled: bool, encoder: bool) -> dict:
    """``extend_sentencepiece`` with the compiled loop or not, and the compiled encoder or not."""
    from bytepair.formats.spm_file import load_sentencepiece
    from bytepair.training import spm_extend

    model = load_sentencepiece(base)
    segment, spent = spm_extend.as_base_pieces, []

    def timed(words, model, usable, _compiled):
        started = time.perf_counter()
        out = segment(words, model, usable, encoder)
        spent.append(time.perf_counter() - started)
        return out

    spm_extend.as_base_pieces = timed
    try:
        started = time.perf_counter()
        extended = spm_extend.extend_sentencepiece(model, corpus, vocab_size=len(model) + pieces,
                                                   compiled=compiled)
        seconds = time.perf_counter() - started
    finally:
        spm_extend.as_base_pieces = segment
    return {"seconds": round(seconds, 3), "segment_seconds": round(sum(spent), 3),
            "pieces": [piece for piece, _, _ in extended.pieces]}


def run_corpus(corpus: Path, args) -> dict:
    import sentencepiece as spm

    from bytepair.formats.spm_file import load_sentencepiece

    base = _base(corpus, args.vocab_size, args.train_bytes)
    model = load_sentencepiece(base)
    processor = spm.SentencePieceProcessor(model_file=str(base))
    with open(corpus, "rb") as source:
        lines = source.read(args.encode_bytes).decode("utf-8", "ignore").splitlines()
    chars = sum(map(len, lines))
    out = {"corpus": corpus.name, "base": base.name, "lines": len(lines), "characters": chars,
           "encoders": {}}
    reference = None
    for name, encode in (("sentencepiece", processor.encode), ("compiled", model.encode),
                         ("python", lambda line: model.encode(line, compiled=False))):
        seconds, ids = _best(encode, lines, args.runs)
        reference = reference if reference is not None else ids
        out["encoders"][name] = {"seconds": round(seconds, 4), "chars_per_second": round(chars / seconds),
                                 "ids_equal_sentencepiece": ids == reference}
        print(f"{corpus.name} {name}: {chars / seconds / 1e6:.2f} M chars/s", flush=True)
    runs = {label: _extend(base, corpus, args.extend_pieces, compiled, encoder)
            for label, compiled, encoder in (("python", False, False), ("compiled", True, True),
                                             ("compiled_loop_python_encoder", True, False))}
    out["extend"] = {label: {k: v for k, v in run.items() if k != "pieces"} for label, run in runs.items()}
    out["extend"]["pieces_equal"] = all(run["pieces"] == runs["python"]["pieces"] for run in runs.values())
    print(f"{corpus.name} extend: {json.dumps(out['extend'])}", flush=True)
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, action="append", required=True)
    parser.add_argument("--vocab-size", type=int, default=8000)
    parser.add_argument("--train-bytes", type=int, default=2_000_000)
    parser.add_argument("--encode-bytes", type=int, default=2_000_000)
    parser.add_argument("--extend-pieces", type=int, default=2000)
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument("--no-save", action="store_true")
    args = parser.parse_args(argv)
    result = {"load_before": os.getloadavg(), "command": "python -m benches.spm_encode " + " ".join(
        f"--corpus {c}" for c in args.corpus), "corpora": []}
    for corpus in args.corpus:
        result["corpora"].append(run_corpus(corpus.expanduser(), args))
    result["load_after"] = os.getloadavg()
    if not args.no_save:
        RESULTS.write_text(json.dumps(result, indent=1) + "\n")


if __name__ == "__main__":
    main()
