"""``bytepair export``: a model for Hugging Face tokenizers, tiktoken or transformers."""

from __future__ import annotations

import sys

from bytepair._util.atomic import check_target
from bytepair._util.validate import plural
from bytepair.cli.common import (add_model_pattern, add_trust_pattern, as_tokenizer, int_at_least,
                                 load_model)
from bytepair.cli.spm_models import is_sentencepiece

#: The special-token roles of a transformers directory, an option each
#: (:data:`bytepair.formats.transformers_dir.ROLES`; the formats are imported when the command
#: runs, not when the parser is built).
ROLES = ("bos", "eos", "unk", "pad")

#: The library's argument names in to_transformers' messages, as this command's options.
_TRANSFORMERS_NAMES = {"directory:": "-o:", **{f"{role}:": f"--{role}:" for role in ROLES}}



def run_export(args) -> None:
    roles = {role: getattr(args, role) for role in ROLES}
    if args.to != "transformers":
        given = [f"--{role}" for role, token in roles.items() if token is not None]
        if args.model_max_length is not None:
            given.append("--model-max-length")
        if given:
            raise ValueError(f"{given[0]}: only for --to transformers")
    if args.like is not None and args.to != "tokenizers":
        raise ValueError("--like: only for --to tokenizers")
    model = load_model(args.model, args.trust_pattern, pattern=args.pattern, special=args.special)
    if args.to == "transformers":
        run_export_transformers(args, model if is_sentencepiece(model) else
                                as_tokenizer(model, args.model), roles)
        return
    if is_sentencepiece(model):
        export_sentencepiece_model(args, model)
        return
    from bytepair.formats.export import (tiktoken_special_tokens_path, to_tiktoken,
                                         to_tokenizers_json)

    output = check_target(args.output, "-o")
    tokenizer = as_tokenizer(model, args.model)
    existed = output.exists()
    try:
        if args.to == "tokenizers":
            to_tokenizers_json(tokenizer, output, like=args.like)
            what = "a Hugging Face tokenizer.json"
            if args.like is not None:
                what += f" spelled like {args.like!r}"
        else:
            to_tiktoken(tokenizer, output)
            what = "a tiktoken ranks file (it holds no pattern"
            if tokenizer.special_tokens:
                what += (f"; the special tokens are in "
                         f"{tiktoken_special_tokens_path(output)!r}, for --special")
            what += ")"
    except BaseException:
        # Safety net: whatever the exporter did, no new partial file stays.
        if not existed and output.exists():
            output.unlink()
        raise
    if not args.quiet:
        print(f"bytepair: wrote {str(output)!r}: {what}, "
              f"{plural(tokenizer.vocab_size, 'token')} "
              f"({plural(len(tokenizer.special_tokens), 'special token')})", file=sys.stderr)


def export_sentencepiece_model(args, model) -> None:
    """A sentencepiece BPE model as a tokenizer.json (:mod:`bytepair.formats.spm_export`)."""
    from bytepair.formats.spm_export import export_sentencepiece

    if args.to != "tokenizers":
        raise ValueError(f"--to {args.to}: a sentencepiece model's pieces are not byte-level "
                         "ranks; export it --to tokenizers or --to transformers")
    if args.like is not None:
        raise ValueError("--like: a sentencepiece model's tokenizer.json is written as "
                         "sentencepiece's normaliser and byte fallback need it")
    output = check_target(args.output, "-o")
    export_sentencepiece(model, output)
    if not args.quiet:
        print(f"bytepair: wrote {str(output)!r}: a Hugging Face tokenizer.json of a sentencepiece "
              f"BPE model, {plural(len(model), 'piece')}", file=sys.stderr)


def run_export_transformers(args, tokenizer, roles: dict) -> None:
    from bytepair.formats.spm_export import sentencepiece_roles
    from bytepair.formats.transformers_dir import to_transformers, transformers_roles

    """-o is a directory, written whole (the library builds it beside and renames it)."""
    try:
        to_transformers(tokenizer, args.output, model_max_length=args.model_max_length, **roles)
    except (OSError, ValueError) as exc:
        message = str(exc)
        for name, option in _TRANSFORMERS_NAMES.items():
            if message.startswith(name):
                message = option + message[len(name):]
                break
        raise type(exc)(message) from None
    if not args.quiet:
        if is_sentencepiece(tokenizer):
            given = sentencepiece_roles(tokenizer, **roles)
            size = f"a sentencepiece BPE model, {plural(len(tokenizer), 'piece')}"
        else:
            given = transformers_roles(tokenizer, **roles)
            size = (f"{plural(tokenizer.vocab_size, 'token')} "
                    f"({plural(len(tokenizer.special_tokens), 'special token')})")
        config_roles = ", ".join(f"{role.removesuffix('_token')} {token!r}"
                                 for role, token in given.items())
        print(f"bytepair: wrote {str(args.output)!r}: a transformers tokenizer directory, {size}"
              + (f", {config_roles}" if config_roles else ""), file=sys.stderr)


def add_commands(commands) -> None:
    """Register ``export``."""
    export = commands.add_parser(
        "export", help="export a model for Hugging Face tokenizers, tiktoken or transformers",
        description="Write a tokenizer.json (Hugging Face tokenizers), a tiktoken ranks file, or "
        "a directory that transformers.AutoTokenizer.from_pretrained loads (tokenizer.json, "
        "tokenizer_config.json, special_tokens_map.json; written whole or not at all, into a "
        "new or empty directory).",
    )
    export.add_argument("model", metavar="MODEL")
    export.add_argument("--to", required=True, choices=["tokenizers", "tiktoken", "transformers"])
    export.add_argument("-o", "--output", required=True, metavar="PATH",
                        help="the file to write (a directory for --to transformers)")
    for role in ROLES:
        default = " (default: <|endoftext|> when the model has it)" if role in ("eos", "pad") else ""
        export.add_argument(f"--{role}", metavar="TOKEN",
                            help=f"the special token that is {role}_token for transformers{default}")
    export.add_argument("--model-max-length", type=int_at_least(1), metavar="N",
                        help="the longest input, for transformers (default: no limit)")
    export.add_argument("--like", metavar="TOKENIZER_JSON",
                        help="for --to tokenizers: write every key but model and added_tokens as "
                        "this tokenizer.json (your tokenizers pipeline, trained or not) spells "
                        "it; refused if it would not encode as the model does")
    export.add_argument("--quiet", "-q", action="store_true", help="print nothing on success")
    add_trust_pattern(export)
    add_model_pattern(export)
    export.set_defaults(run=run_export)
