"""``bytepair export``: a model for Hugging Face tokenizers or tiktoken."""

from __future__ import annotations

import sys

from bytepair._util.atomic import check_target
from bytepair._util.validate import plural
from bytepair.cli.common import add_trust_pattern, load_tokenizer
from bytepair.formats.export import to_tiktoken, to_tokenizers_json


def run_export(args) -> None:
    output = check_target(args.output, "-o")
    tokenizer = load_tokenizer(args.model, args.trust_pattern)
    existed = output.exists()
    try:
        if args.to == "tokenizers":
            to_tokenizers_json(tokenizer, output)
            what = "a Hugging Face tokenizer.json"
        else:
            to_tiktoken(tokenizer, output)
            what = "a tiktoken ranks file (without its pattern and special tokens)"
    except BaseException:
        # Safety net: whatever the exporter did, no new partial file stays.
        if not existed and output.exists():
            output.unlink()
        raise
    if not args.quiet:
        print(f"bytepair: wrote {str(output)!r}: {what}, "
              f"{plural(tokenizer.vocab_size, 'token')} "
              f"({plural(len(tokenizer.special_tokens), 'special token')})", file=sys.stderr)


def add_commands(commands) -> None:
    """Register ``export``."""
    export = commands.add_parser(
        "export", help="export a model for Hugging Face tokenizers or tiktoken",
        description="Write a tokenizer.json (Hugging Face tokenizers) or a tiktoken ranks file.",
    )
    export.add_argument("model", metavar="MODEL")
    export.add_argument("--to", required=True, choices=["tokenizers", "tiktoken"])
    export.add_argument("-o", "--output", required=True, metavar="PATH")
    export.add_argument("--quiet", "-q", action="store_true", help="print nothing on success")
    add_trust_pattern(export)
    export.set_defaults(run=run_export)
