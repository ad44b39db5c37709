"""``bytepair evaluate``: held-out metrics, vocabulary-size curves, checks of the rules, plots."""

from __future__ import annotations

import argparse
import os
import sys
from typing import TYPE_CHECKING

from bytepair._util.atomic import check_target
from bytepair._util.validate import parse_size
from bytepair.cli.common import (add_model_pattern, add_trust_pattern, as_tokenizer, files_of,
                                 int_at_least, load_model, reading_options, skip_hint,
                                 vocab_sizes)
from bytepair.cli.spm_models import is_sentencepiece

if TYPE_CHECKING:
    from bytepair.evaluation.samples import Sample

#: ``--sizes all:STEP``: every multiple of STEP below the full size.
ALL_SIZES = "all:"


def sizes_option(text: str) -> tuple[list[int], int | None]:
    """``--sizes``: vocabulary sizes separated by commas, or ``all:STEP``.

    >>> sizes_option("4096,8192"), sizes_option("all:1024")
    (([4096, 8192], None), ([], 1024))
    """
    if text.startswith(ALL_SIZES):
        try:
            step = parse_size(text[len(ALL_SIZES):])
        except ValueError:
            step = 0
        if step < 1:
            raise argparse.ArgumentTypeError(f"all:STEP needs a positive integer STEP, got {text!r}")
        return [], step
    try:
        return vocab_sizes(text), None
    except argparse.ArgumentTypeError:
        raise argparse.ArgumentTypeError(
            f"expected sizes separated by commas, or all:STEP, got {text!r}") from None


def samples_from_options(specs: list[str], args) -> list[Sample]:
    """``--sample FILE[=LABEL]`` arguments as samples; files of one label make one sample.

    A FILE that exists is taken whole even when it contains ``=``; otherwise
    the text after the last ``=`` is the label. Each is read with the command's reading
    options (``--per-line``, ``--jsonl-field``, ``--text-column``, ``--skip-unreadable``).
    """
    from bytepair.evaluation.samples import Sample

    per_line = args.per_line
    out: list[Sample] = []
    by_label: dict[str, Sample] = {}
    for spec in specs:
        path, label = spec, None
        if "=" in spec and not os.path.exists(spec):
            path, label = spec.rsplit("=", 1)
            if not path or not label:
                raise ValueError(f"--sample: expected FILE or FILE=LABEL, got {spec!r}")
        files = files_of(args, [path], "--sample")
        if label is None:
            out.append(Sample(path, [files], False, per_line))
        elif label in by_label:
            by_label[label].sources.append(files)
        else:
            by_label[label] = Sample(label, [files], True, per_line)
            out.append(by_label[label])
    return out


def run_evaluate(args) -> None:
    from bytepair.evaluation.plot import check_plot_path
    from bytepair.evaluation.report import evaluate

    if not args.samples and not args.checks and args.sizes is None:
        raise ValueError("evaluate: give --sample FILE[=LABEL], --checks or --sizes")
    if args.plot is not None:
        # Before any work: a missing matplotlib or a bad path fails at once.
        if not args.samples:
            raise ValueError("--plot: needs --sample FILE (it draws bytes per token on samples)")
        check_plot_path(args.plot)
        check_target(args.plot, "--plot")
    for path in set(args.models):
        if args.models.count(path) > 1:
            raise ValueError(f"MODEL: {path!r} is given twice")
    models = {path: _model(path, args) for path in args.models}
    sizes, step = args.sizes if args.sizes is not None else (None, None)
    with skip_hint(args):
        table = evaluate(models, samples_from_options(args.samples, args), sizes=sizes,
                         step=step, checks=args.checks, full_vocabulary=args.full_vocabulary,
                         reference=args.reference, threads=args.threads)
    if args.plot is not None:
        table.plot(args.plot)
    if args.json:
        sys.stdout.write(table.to_json() + "\n")
    else:
        sys.stdout.write(str(table))
    if args.plot is not None and not args.json:
        print(f"bytepair: wrote {args.plot!r}", file=sys.stderr)


def _model(path: str, args):
    """A MODEL to evaluate: a tokenizer, or a sentencepiece BPE model as it is."""
    model = load_model(path, args.trust_pattern, pattern=args.pattern, special=args.special)
    return model if is_sentencepiece(model) else as_tokenizer(model, path)


def add_commands(commands) -> None:
    """Register ``evaluate``."""
    command = commands.add_parser(
        "evaluate", help="how well models compress held-out text; broken tokens",
        description="Per model and sample: bytes and characters per token, tokens per word, the "
        "share of the vocabulary used, Rényi efficiency (order 2.5) and the tokens never "
        "produced. Samples given a label (FILE=LABEL; several files may share one) are "
        "compared: each label's tokens relative to the reference label, and the Gini "
        "coefficients of tokens per byte and of tokens (on parallel text, the spread of "
        "what the same content costs). --sizes evaluates smaller vocabularies of the same "
        "model from the same encoding, and the tokens the rules save on the training text. "
        "--checks lists tokens that encoding can never produce (unreachable) and tokens it "
        "never leaves in the training text (intermediate-only), from the rules alone.",
    )
    command.add_argument("models", nargs="+", metavar="MODEL")
    command.add_argument("--sample", dest="samples", action="append", default=[],
                         metavar="FILE[=LABEL]",
                         help="held-out text (as train reads FILEs); repeat for more samples")
    command.add_argument("--sizes", type=sizes_option, metavar="N,N,...|all:STEP",
                         help="also evaluate these vocabulary sizes (special tokens included), "
                         "or every multiple of STEP")
    command.add_argument("--checks", action="store_true",
                         help="list unreachable and intermediate-only tokens")
    command.add_argument("--plot", metavar="IMAGE",
                         help="draw bytes per token against vocabulary size (.png, .pdf, .svg; "
                         "needs matplotlib: pip install 'bytepair[plot]')")
    command.add_argument("--json", action="store_true", help="print JSON instead of tables")
    command.add_argument("--reference", metavar="LABEL",
                         help="the label parity is relative to (default: the first)")
    command.add_argument("--full-vocabulary", action="store_true",
                         help="Rényi efficiency over the log of the vocabulary size, not of "
                         "the number of token types seen")
    command.add_argument("--per-line", action="store_true",
                         help="each line of a plain text file is a document")
    command.add_argument("--threads", type=int_at_least(1), metavar="N",
                         help="encoder threads (default: one per core)")
    reading_options(command)
    add_trust_pattern(command)
    add_model_pattern(command)
    command.set_defaults(run=run_evaluate)
