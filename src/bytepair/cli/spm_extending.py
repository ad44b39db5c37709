"""``bytepair extend BASE.model CORPUS...``: a sentencepiece BPE base extended, keeping every ID
(:func:`bytepair.training.spm_extend.extend_sentencepiece`).

The corpus is read one sentence a line, as spm_train reads it; the result is a ``.model``
file (or, with ``--to``, a ``tokenizer.json`` or a transformers directory). Options of
``extend`` that mean nothing for such a base are refused in one line naming them.
"""

from __future__ import annotations

import os
import sys
import time

from bytepair._util.atomic import check_target
from bytepair._util.validate import plural
from bytepair.cli.common import files_of, skip_hint
from bytepair.cli.spm_models import refuse

#: ``extend``'s options a sentencepiece base cannot take, and why.
REFUSED = {
    "--counts": "a sentencepiece base learns from text files (its normaliser runs on the lines)",
    "--jsonl-field": "a sentencepiece base reads text files, one sentence a line, as spm_train does",
    "--text-column": "a sentencepiece base reads text files, one sentence a line, as spm_train does",
    "--pattern": "only for a tiktoken ranks file (a sentencepiece model holds its normaliser)",
    "--special": "only for a tiktoken ranks file (a sentencepiece model holds its pieces)",
    "--checkpoint": "the count for a sentencepiece base is not checkpointed",
    "--resume": "the count for a sentencepiece base is not checkpointed",
    "--max-memory": "not applied when extending a sentencepiece base",
    "--trust-pattern": "a sentencepiece model holds no regex pattern",
}
#: What ``--to`` writes for a sentencepiece base.
FORMATS = ("sentencepiece", "tokenizers", "transformers")


def run_extend_sentencepiece(args) -> None:
    from bytepair.formats.spm_file import load_sentencepiece
    from bytepair.training.spm_extend import extend_sentencepiece

    refuse(args, REFUSED)
    if args.min_frequency != 1:
        raise ValueError("--min-frequency: a sentencepiece base goes on as spm_train's loop does, "
                         "which merges pairs down to frequency 0")
    if len(args.vocab_size) != 1:
        raise ValueError("--vocab-size: give one size (the whole vocabulary after extending)")
    to = args.to or "sentencepiece"
    if to not in FORMATS:
        raise ValueError(f"--to {to}: a sentencepiece model's pieces are not byte-level ranks; "
                         f"write it as {', '.join(FORMATS)}")
    if to == "transformers":
        if os.path.exists(args.output) and (not os.path.isdir(args.output) or os.listdir(args.output)):
            raise ValueError(f"-o: {args.output!r} exists and is not an empty directory (a "
                             f"transformers tokenizer is written as a directory)")
    else:
        check_target(args.output, "-o")
    if not args.files:
        raise ValueError("CORPUS: give text files to learn from, one sentence a line")
    samples = [_sample(spec) for spec in args.eval or []]  # read first: a bad one writes nothing
    say = (lambda line: None) if args.quiet else (lambda line: print(f"bytepair: {line}", file=sys.stderr))
    start = time.perf_counter()
    base = load_sentencepiece(args.base)
    with skip_hint(args):
        paths = files_of(args, name="CORPUS").paths
    model = extend_sentencepiece(base, paths, vocab_size=args.vocab_size[0],
                                 character_coverage=args.character_coverage,
                                 workers=args.workers or 1, report=say)
    _write(model, args.output, to)
    added = len(model) - len(base)
    say(f"wrote {args.output!r} ({to}): {len(base):,} + {plural(added, 'new piece')} = "
        f"{len(model):,}; the embedding matrix needs {len(model):,} rows "
        f"({time.perf_counter() - start:.1f} s)")
    for label, lines in samples:
        size = sum(len(line.encode()) for line in lines)
        before = sum(len(base.encode(line)) for line in lines)
        after = sum(len(model.encode(line)) for line in lines)
        print(f"{label}: {size / max(before, 1):.3f} -> {size / max(after, 1):.3f} bytes per token "
              f"({before:,} -> {after:,} tokens)")


def _write(model, output: str, to: str) -> None:
    if to == "sentencepiece":
        from bytepair.formats.spm_file import save_sentencepiece

        save_sentencepiece(model, output)
    elif to == "tokenizers":
        from bytepair.formats.spm_export import export_sentencepiece

        export_sentencepiece(model, output)
    else:
        from bytepair.formats.transformers_dir import to_transformers

        to_transformers(model, output)


def _sample(spec: str) -> tuple[str, list[str]]:
    """``--eval FILE[=LABEL]``: the label and the lines of the sample (UTF-8 text)."""
    path, label = spec, spec
    if "=" in spec and not os.path.exists(spec):
        path, label = spec.rsplit("=", 1)
    try:
        with open(path, encoding="utf-8") as handle:
            lines = handle.read().splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise ValueError(f"--eval: cannot read {path!r} as UTF-8 text: {exc}") from None
    if not any(lines):
        raise ValueError(f"--eval: {path!r} holds no text")
    return label, lines
