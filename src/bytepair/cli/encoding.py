"""``bytepair encode`` and ``bytepair decode``: text to IDs and back, on the terminal or as
binary training arrays."""

from __future__ import annotations

import os
import re
import sys
import time
from array import array
from typing import TYPE_CHECKING, Sequence

from bytepair._util.errors import ArgumentError
from bytepair._util.progress import progress_bar
from bytepair._util.atomic import check_target
from bytepair._util.validate import plural
from bytepair.cli.common import (add_model_pattern, add_trust_pattern, as_tokenizer, integer,
                                 load_model, read_input, read_stdin, text_argument,
                                 write_bytes)
from bytepair.cli.spm_models import (DECODE_REFUSED, ENCODE_REFUSED, append_id, array_encoder,
                                     decoded, is_sentencepiece, refuse, text_of)

if TYPE_CHECKING:
    from bytepair.model.models import WordModel


def run_encode(args) -> None:
    from bytepair.model.models import WordModel

    if args.dtype is not None:
        run_encode_files(args)
        return
    for option in ("output", "append", "jsonl_field", "text_column", "threads"):
        if getattr(args, option, None) is not None:
            raise ValueError(f"--{option.replace('_', '-')}: needs --dtype (the binary output)")
    for option in ("per_line", "strip_newlines"):
        if getattr(args, option):
            raise ValueError(f"--{option.replace('_', '-')}: needs --dtype (the binary output)")
    if len(args.inputs) + len(args.file) > 1:
        raise ValueError("TEXT: give one text or one --file (or FILEs with --dtype and -o)")
    model = load_model(args.model, args.trust_pattern, pattern=args.pattern, special=args.special)
    data, where = _input(args)
    if isinstance(model, WordModel):
        _encode_words(model, data, where)
        return
    if is_sentencepiece(model):
        refuse(args, ENCODE_REFUSED)
        print(" ".join(map(str, model.encode(text_of(data, where)))))
        return
    tokenizer = as_tokenizer(model, args.model)
    specials = tokenizer.special_tokens
    if tokenizer.pattern is None and (
        args.ordinary or not any(t.encode("utf-8") in data for t in specials)
    ):
        ids = tokenizer.encode_bytes(data)  # byte mode: any bytes, as they are
    else:
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ValueError(
                f"{where}: invalid UTF-8 at byte offset {exc.start} (this model encodes text)"
            ) from None
        if args.ordinary:
            ids = tokenizer.encode_ordinary(text)
        elif args.allow_special:
            ids = tokenizer.encode(text, allowed_special="all")
        else:
            try:
                ids = tokenizer.encode(text)
            except ArgumentError as exc:  # the text is this command's TEXT or FILE
                raise ArgumentError(where, *exc.parts) from None
    print(" ".join(map(str, ids)))


def _input(args) -> tuple[bytes, str]:
    """The bytes to encode and where they come from: ``--file PATH``, stdin (no TEXT, ``-``, or
    ``--file -``) or TEXT, which must not name an existing file (the name would be encoded)."""
    if args.file:
        path = args.file[0]
        return read_input(path, "--file"), "stdin" if path == "-" else f"--file {path!r}"
    if not args.inputs or args.inputs == ["-"]:
        return read_stdin(), "stdin"
    return text_argument(args.inputs[0], "TEXT"), "TEXT"


def _encode_words(model: WordModel, data: bytes, where: str) -> None:
    """Word mode's own encoding: each word (split at white space) as its symbols, a line each."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(f"{where}: invalid UTF-8 at byte offset {exc.start} (this model encodes text)") from None
    print("".join(" ".join(model.encode(word)) + "\n" for word in text.split()), end="")


def run_encode_files(args) -> None:
    """FILEs (or stdin) -> one raw little-endian array of IDs in -o."""
    from bytepair.formats.tokenfile import check_dtype, resolve_append, write_token_file
    from bytepair.model.lines import encodes_lines
    from bytepair.read.corpus import files_named
    from bytepair.read.paths import reads_in_blocks

    if args.output is None:
        raise ValueError("--dtype: needs -o/--output, the array file to write")
    if args.strip_newlines and not args.per_line:
        raise ValueError("--strip-newlines: needs --per-line (only lines have newlines to strip)")
    output = check_target(args.output, "-o")
    model = load_model(args.model, args.trust_pattern, pattern=args.pattern, special=args.special)
    if is_sentencepiece(model):
        refuse(args, ENCODE_REFUSED)
        tokenizer = None
        check_dtype(args.dtype, len(model), "--dtype")
        append = append_id(model, args.append)
    else:
        tokenizer = as_tokenizer(model, args.model, " to write arrays of")
        check_dtype(args.dtype, tokenizer.vocab_size, "--dtype")
        append = resolve_append(tokenizer, args.append, "--append")
    inputs = [*args.inputs, *args.file]
    if inputs == ["-"]:
        inputs = []
    elif "-" in inputs:
        raise ValueError("FILE: '-' (stdin) is read alone, not with other FILEs")
    if inputs:
        corpus = files_named("FILE", *inputs, per_line=args.per_line,
                             jsonl_field=args.jsonl_field, text_column=args.text_column)
    elif args.jsonl_field is not None or args.text_column is not None:
        raise ValueError("--jsonl-field/--text-column: need FILEs (stdin is read as text)")
    text = tokenizer is None or tokenizer.pattern is not None or args.allow_special or (
        not args.ordinary and bool(tokenizer.special_tokens))
    # A line keeps its newline unless asked: the array then decodes to the text itself,
    # with the --append tokens between the lines.
    keep = not args.strip_newlines
    options = {"allowed_special": "all"} if args.allow_special else (
        {"disallowed_special": ()} if args.ordinary else {})
    if (inputs and args.per_line and text and tokenizer is not None and tokenizer.ids is None
            and encodes_lines(tokenizer.model)
            and all(reads_in_blocks(path) for path in corpus.paths)):
        _write_lines(args, output, corpus, tokenizer, append, keep, options)
        return
    if inputs:
        documents = corpus.documents(text, keep_line_ends=keep)
    else:
        data = read_stdin()
        lines = _lines(data, keep) if args.per_line else [data]
        documents = (_stdin_text(line) for line in lines) if text else iter(lines)
    if tokenizer is None:
        encode_array = array_encoder(model, args.dtype, append)
    else:
        encode_array = _array_encoder(args, tokenizer, text, append, options)
    _report(args, output, "characters" if text else "bytes",
            lambda bar: write_token_file(output, documents, encode_array, progress=bar))


def _array_encoder(args, tokenizer, text: bool, append: int | None, options: dict):
    """``encode_array`` for :func:`write_token_file`: a batch of documents to one array."""
    from bytepair.formats.tokenfile import DTYPES, encode_bytes_to_array

    if text:
        def encode_array(batch):
            return tokenizer.encode_to_array(batch, dtype=args.dtype, append=append,
                                             threads=args.threads, **options)
    elif tokenizer.ids is None:
        def encode_array(batch):
            return encode_bytes_to_array(tokenizer.model, batch, args.dtype, append)
    else:  # an imported tokenizer's own IDs: through its ID map
        def encode_array(batch):
            ids = array(DTYPES[args.dtype][0])
            for document in batch:
                ids.extend(tokenizer.encode_bytes(document))
                if append is not None:
                    ids.append(append)
            return ids
    return encode_array


def _write_lines(args, output, corpus, tokenizer, append: int | None, keep: bool,
                 options: dict) -> None:
    """Per-line plain or gzip files of a named pattern: blocks of lines read here and encoded
    from their bytes on ``--threads`` threads meanwhile (no Python object per line). A block
    holding special-token text or bad UTF-8 is read as text lines, for the errors and
    special tokens of :meth:`Tokenizer.encode_to_array`."""
    from bytepair.formats.tokenfile import DTYPES, LINE_BLOCK_BYTES, write_token_parts
    from bytepair.model.lines import encode_lines
    from bytepair.read.text import decode_lines

    typecode, itemsize = DTYPES[args.dtype]
    skip = () if args.ordinary else tuple(tokenizer.special_tokens)
    threads = args.threads or os.cpu_count() or 1

    def encode_part(block):
        path, offset, data, _ = block
        done = encode_lines(tokenizer.model, data, itemsize, append, skip=skip, keep_ends=keep)
        ids = array(typecode)
        if done is not None:
            ids.frombytes(done[0])
            return ids, done[1], done[2]
        lines = decode_lines(data, path, offset, keep)
        ids = tokenizer.encode_to_array(lines, dtype=args.dtype, append=append, threads=1,
                                        **options)
        return ids, len(lines), sum(map(len, lines))

    blocks = corpus.blocks(LINE_BLOCK_BYTES, cut_documents=False)
    _report(args, output, "characters", lambda bar: write_token_parts(
        output, blocks, encode_part, threads=threads, progress=bar))


def _report(args, output, unit: str, write) -> None:
    """Run ``write(progress bar or None)``, then say what it wrote (unless ``--quiet``)."""
    bar = progress_bar(not args.quiet and sys.stderr.isatty(), desc="encoding",
                       unit="char" if unit == "characters" else "B", unit_scale=True)
    started = time.perf_counter()
    try:
        count, tokens, size = write(bar)
    finally:
        if bar is not None:
            bar.close()
    if not args.quiet:
        ratio = f"{size / tokens:.3f} {unit} per token" if tokens else "no tokens"
        print(f"bytepair: wrote {str(output)!r}: {tokens:,} tokens ({args.dtype}) from "
              f"{plural(count, 'document')}, {size:,} {unit}, {ratio} "
              f"({time.perf_counter() - started:.1f} s)", file=sys.stderr)


def _lines(data: bytes, keep_ends: bool) -> list[bytes]:
    r"""The lines of stdin as files give them: cut after each ``\n`` (a lone ``\r`` is text),
    with their ``\n`` or ``\r\n`` unless ``keep_ends`` is false.

    >>> _lines(b"a\r\n\nb\rc", True), _lines(b"a\r\n\nb\rc", False)
    ([b'a\r\n', b'\n', b'b\rc'], [b'a', b'', b'b\rc'])
    """
    lines = data.split(b"\n")
    last = lines.pop()
    if keep_ends:
        return [line + b"\n" for line in lines] + ([last] if last else [])
    return [line.removesuffix(b"\r") for line in lines] + ([last] if last else [])


def _stdin_text(data: bytes) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(f"stdin: invalid UTF-8 at byte offset {exc.start} (this model encodes text)") from None


def _parse_ids(words: Sequence[str], vocab_size: int) -> list[int]:
    ids = []
    for word in words:
        for item in re.split(r"[\s,]+", word.strip()):
            if not item:
                continue
            try:
                token = int(item)
            except ValueError:
                raise ValueError(f"IDS: {item!r} is not a token ID (an integer)") from None
            if not 0 <= token < vocab_size:
                raise ValueError(f"IDS: {token} is outside the vocabulary (0..{vocab_size - 1})")
            ids.append(token)
    return ids


def run_decode(args) -> None:
    from bytepair.formats.tokenfile import read_token_file

    model = load_model(args.model, args.trust_pattern, pattern=args.pattern, special=args.special)
    if is_sentencepiece(model):
        refuse(args, DECODE_REFUSED)
        tokenizer = None
        vocab_size = len(model)
    else:
        tokenizer = as_tokenizer(model, args.model, " to decode")
        vocab_size = tokenizer.vocab_size
    if args.dtype is not None:
        paths = [*args.ids, *args.file]
        if len(paths) != 1:
            raise ValueError("--dtype: give exactly one FILE of IDs to decode")
        ids = read_token_file(paths[0], args.dtype)
        if tokenizer is None:
            data = decoded(model, ids, repr(paths[0]))
        else:
            try:
                data = tokenizer.decode_bytes(ids)
            except ValueError as exc:
                raise ValueError(f"{paths[0]!r}: {exc}") from None
    else:
        if args.file and args.ids:
            raise ValueError("--file: give IDS or --file, not both")
        if args.file:
            words = [read_input(path, "--file").decode("ascii", "replace") for path in args.file]
        elif not args.ids or args.ids == ["-"]:
            words = [read_stdin().decode("ascii", "replace")]
        else:
            words = [text_argument(word, "IDS", "IDs").decode("ascii", "replace")
                     for word in args.ids]
        ids = _parse_ids(words, vocab_size)
        data = tokenizer.decode_bytes(ids) if tokenizer is not None else decoded(model, ids, "IDS")
    if args.bytes:
        write_bytes(data)
        return
    text = data.decode("utf-8", "replace")
    if sys.stdout.isatty() and not text.endswith("\n"):
        text += "\n"  # keep the prompt off the text; piped output stays exact
    write_bytes(text.encode("utf-8"))


def add_commands(commands) -> None:
    """Register ``encode`` and ``decode``."""
    encode = commands.add_parser(
        "encode", help="print the token IDs of a text, or write files' IDs as a binary array",
        description="Print the token IDs of TEXT, space-separated; of the file given with "
        "--file; or of all of stdin (no TEXT, or '-'), as one text. A TEXT that names an existing "
        "file or directory is refused, never encoded as text. With --dtype, encode FILEs (or stdin) instead and write the IDs to -o "
        "as one raw little-endian array (documents one after the other, as training scripts "
        "memory-map them). With --per-line each line keeps its newline (\\n or \\r\\n), so "
        "that 'bytepair decode --dtype' gives the text back byte for byte, with the --append "
        "tokens after the lines; --strip-newlines drops them. A word-mode model prints each "
        "word's symbols, a line per word.",
    )
    encode.add_argument("model", metavar="MODEL")
    encode.add_argument("inputs", nargs="*", metavar="TEXT|FILE",
                        help="text to encode (default: stdin); with --dtype: files, directories or globs")
    encode.add_argument("--file", action="append", default=[], metavar="PATH",
                        help="encode the contents of this file ('-' is stdin); with --dtype: "
                        "repeatable, like FILE")
    special = encode.add_mutually_exclusive_group()
    special.add_argument("--allow-special", action="store_true",
                         help="special-token text becomes its ID (default: refuse it)")
    special.add_argument("--ordinary", action="store_true",
                         help="special-token text is encoded as ordinary text")
    encode.add_argument("--dtype", choices=["uint16", "uint32"],
                        help="write a binary array of this integer type (uint16 is refused when "
                        "the vocabulary does not fit)")
    encode.add_argument("-o", "--output", metavar="FILE.bin", help="the array file (with --dtype)")
    encode.add_argument("--append", metavar="TOKEN",
                        help="a special token, or an ID, to put after each document")
    source = encode.add_mutually_exclusive_group()
    source.add_argument("--per-line", action="store_true",
                        help="each line, with its newline, is a document (default: each file)")
    source.add_argument("--jsonl-field", metavar="NAME",
                        help="text field of JSON Lines records (default: text)")
    source.add_argument("--text-column", metavar="NAME",
                        help="string column of Parquet files (default: text)")
    encode.add_argument("--strip-newlines", action="store_true",
                        help="with --per-line: leave each line's newline out of the array (the "
                        "text no longer decodes back byte for byte)")
    encode.add_argument("--threads", type=integer, default=None, metavar="N",
                        help="encoding threads (default: one per core); the IDs are the same")
    encode.add_argument("--quiet", "-q", action="store_true", help="no progress bar or summary")
    add_trust_pattern(encode)
    add_model_pattern(encode)
    encode.set_defaults(run=run_encode)

    decode = commands.add_parser(
        "decode", help="print the text of token IDs",
        description="Print the text of IDS (or of the IDs in the files given with --file, or "
        "on stdin: no IDS, or '-'), exactly; bytes that are not "
        "UTF-8 become U+FFFD unless --bytes is given. A newline is added only on a terminal. "
        "With --dtype, read the IDs from FILE, a raw little-endian array (as encode writes it).",
    )
    decode.add_argument("model", metavar="MODEL")
    decode.add_argument("ids", nargs="*", metavar="IDS|FILE",
                        help="token IDs (default: read from stdin); with --dtype: one array file")
    decode.add_argument("--file", action="append", default=[], metavar="PATH",
                        help="read the IDs from this file ('-' is stdin; repeatable); with "
                        "--dtype: the array file")
    decode.add_argument("--dtype", choices=["uint16", "uint32"], help="FILE is an array of this type")
    decode.add_argument("--bytes", action="store_true", help="write the raw bytes")
    add_trust_pattern(decode)
    add_model_pattern(decode)
    decode.set_defaults(run=run_decode)
