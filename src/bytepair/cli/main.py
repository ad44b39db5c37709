"""Command line: ``bytepair COMMAND ...`` (also ``python -m bytepair``).

Commands: ``train``, ``count``, ``export``, ``encode``, ``decode``, ``inspect``,
``vocab``, ``trace`` and ``demo``; ``bytepair COMMAND --help`` describes each.
This module only parses the command line and prints: every rule about the
input is the library's, and its messages are reworded here with the option
names (``vocab_size`` -> ``--vocab-size``).

Bad input (a missing or unreadable file, an empty corpus, invalid UTF-8 in
text mode, a bad JSON line, an unknown pattern, a corrupt model, ...) ends
with one line ``bytepair: error: ...`` on stderr and exit code 2, as do
usage errors. No partial output is left behind: output directories are
checked (with a probe write) before any work starts, models are written
through a temporary file and a rename, and a failed export's new file is
removed. SIGTERM is handled as Ctrl-C is (the clean-up runs, workers end),
with exit code 143 instead of 130.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import signal
import sys
import threading
import time
from typing import Sequence

from tqdm import tqdm

from bytepair import __version__
from bytepair._util.validate import check_special_tokens, merges_for_vocab_size, plural
from bytepair._util.atomic import check_target
from bytepair.counts.cluster import connect
from bytepair.read.corpus import Files
from bytepair.teach.demo import run_demo as demo
from bytepair.formats.export import to_tiktoken, to_tokenizers_json
from bytepair.formats.load import load
from bytepair.model.models import BYTE_TOKENS, ByteModel
from bytepair.split.pretokenize import PATTERNS
from bytepair.formats.tokenfile import (check_dtype, encode_bytes_to_array, read_token_file, resolve_append,
                        write_token_file)
from bytepair.model.tokenizer import Tokenizer
from bytepair.teach.trace import trace_lines
from bytepair.counts.piece_counts import PieceCounts
from bytepair.training import count as count_corpus
from bytepair.training import train

PATTERN_CHOICES = "none|" + "|".join(PATTERNS) + "|REGEX"

EXAMPLES = """examples:
  bytepair train corpus/*.txt.gz --per-line --vocab-size 32000 --special '<|endoftext|>' -o tok.json
  bytepair train data.jsonl --merges 1000 --pretokenize none -o bytes.json
  bytepair train corpus.txt --vocab-size 8192,16384,32768 -o 'tok-{vocab_size}.json'
  bytepair count shards/*.parquet --text-column text -o shards.counts
  bytepair train --counts a.counts b.counts --vocab-size 32000 -o tok.json
  bytepair encode tok.json 'Hello world'
  bytepair decode tok.json 15496 995
  bytepair inspect tok.json --sample held-out.txt
  bytepair vocab tok.json > vocab.tsv
  bytepair export tok.json --to tokenizers -o tokenizer.json
  bytepair trace aaab abab --merges 3
"""

#: The library's argument names, as the options that set them.
OPTION_NAMES = {
    "vocab_size": "--vocab-size", "merges": "--merges", "special_tokens": "--special",
    "pretokenize": "--pretokenize", "min_frequency": "--min-frequency", "workers": "--workers",
    "jsonl_field": "--jsonl-field", "init": "--init", "allowed_special": "--allow-special",
    "threads": "--threads",
    "text_column": "--text-column",
}
_PYTHON_NAME = re.compile(r"(?<![\w-])(" + "|".join(OPTION_NAMES) + r")(?:\[(\d+)\])?(?=:| must| =)")


def in_option_names(message: str) -> str:
    """A library message with its argument names written as this command line's options.

    >>> in_option_names("special_tokens[1] must be a non-empty str, got ''")
    "--special #2 must be a non-empty str, got ''"
    """
    def option(match) -> str:
        name = OPTION_NAMES[match.group(1)]
        return name if match.group(2) is None else f"{name} #{int(match.group(2)) + 1}"

    message = _PYTHON_NAME.sub(option, message)
    return (message.replace("pretokenize=None", "--pretokenize none")
            .replace("pass allowed_special", "pass --allow-special")
            .replace("disallowed_special=()", "--ordinary"))


class Terminated(BaseException):
    """SIGTERM, raised in the main thread as SIGINT raises KeyboardInterrupt, so that the same
    clean-up runs: the temporary output file is removed and worker processes are ended."""


def _terminate(signum, frame) -> None:
    if os.getpid() != _terminate.owner:
        # A worker forked before it installed its own handler: just end.
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGTERM)
        return
    signal.signal(signal.SIGTERM, signal.SIG_IGN)  # a second SIGTERM must not cut the clean-up
    raise Terminated


_terminate.owner = os.getpid()


class CommandLineError(Exception):
    """A usage error: printed as one line ``bytepair: error: ...``, exit code 2."""


class Parser(argparse.ArgumentParser):
    """argparse, with usage errors as one line (``bytepair: error: ...``) instead of a usage block."""

    def error(self, message: str):
        command = self.prog.removeprefix("bytepair").strip()
        raise CommandLineError(f"{command}: {message}" if command else message)


# -- argument types ---------------------------------------------------------

def _int_at_least(minimum: int):
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"must be >= {minimum}, got {value}")
        return value

    return parse


def _integer(text: str) -> int:
    """An integer; its limits are the library's to check."""
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None


def _vocab_sizes(text: str) -> list[int]:
    """One vocabulary size, or several separated by commas; their limits are the library's."""
    sizes = []
    for item in text.split(","):
        try:
            sizes.append(int(item))
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"expected an integer or integers separated by commas, got {text!r}") from None
    return sizes


# -- shared helpers ---------------------------------------------------------

def _one_line(exc: BaseException) -> str:
    if isinstance(exc, OSError) and exc.strerror and exc.filename is not None:
        text = f"{exc.strerror}: {os.fspath(exc.filename)!r}"
        if exc.filename2 is not None:
            text += f" -> {os.fspath(exc.filename2)!r}"
    else:
        text = str(exc) or type(exc).__name__
    return text.replace("\r", "\\r").replace("\n", "\\n")


def _load_tokenizer(path: str, trust_pattern: bool):
    """A :class:`Tokenizer` from a model file; a byte model gets no special tokens."""
    model = load(path, trust_pattern=trust_pattern)
    if isinstance(model, ByteModel):
        return Tokenizer(model)
    if not isinstance(model, Tokenizer):
        raise ValueError(f"{path!r} is a word-mode model; this command needs a byte model or tokenizer")
    return model


def _argument_bytes(text: str) -> bytes:
    # POSIX hands arguments over as bytes; Python decodes them with surrogateescape.
    return text.encode("utf-8", "surrogateescape")


def _read_stdin() -> bytes:
    stream = sys.stdin
    buffer = getattr(stream, "buffer", None)
    return buffer.read() if buffer is not None else stream.read().encode("utf-8", "surrogateescape")


def _write_bytes(data: bytes) -> None:
    sys.stdout.flush()
    buffer = getattr(sys.stdout, "buffer", None)
    if buffer is None:
        sys.stdout.write(data.decode("utf-8", "replace"))
    else:
        buffer.write(data)
        buffer.flush()


def _show_bytes(data: bytes) -> str:
    """A token's bytes for a reader: the text when it is UTF-8, else the bytes."""
    try:
        return repr(data.decode("utf-8"))
    except UnicodeDecodeError:
        return repr(data)


def _pattern_name(source: str | None) -> str:
    if source is None:
        return "none (each document is one piece)"
    for name, known in PATTERNS.items():
        if source == known:
            return name
    return f"regex {source!r}"


# -- train ------------------------------------------------------------------

#: The placeholder of -o that a list of vocabulary sizes fills in.
SIZE_FIELD = "{vocab_size}"


def _outputs(output: str, sizes: list[int] | None) -> dict[int | None, str]:
    """The file to write for each vocabulary size (one file, keyed None, without a size list)."""
    if sizes is None:
        return {None: output}
    if len(set(sizes)) > 1 and SIZE_FIELD not in output:
        raise ValueError(
            f"-o must contain {SIZE_FIELD} when --vocab-size lists several sizes "
            f"(one file per size), got {output!r}")
    return {size: output.replace(SIZE_FIELD, str(size)) for size in sorted(set(sizes))}


def run_train(args) -> None:
    outputs = _outputs(args.output, args.vocab_size)
    for path in outputs.values():
        check_target(path, "-o")
    tables = _load_counts(args) if args.counts else None
    init = _load_tokenizer(args.init, args.trust_pattern) if args.init is not None else None
    # A warm start continues the init model: its pattern and special tokens
    # are the defaults, so that the result equals a fit from scratch.
    if args.pretokenize is not None:
        pretokenize = args.pretokenize
    elif tables is not None:
        pretokenize = tables[0].pattern
    else:
        pretokenize = init.pattern if init is not None else "gpt2"
    if args.special is not None:
        special = args.special
    else:
        special = list(init.special_tokens) if init is not None else []
    special = check_special_tokens(special)
    if args.vocab_size is not None:
        # Every size is checked before training; one run to the largest serves all.
        requested = {size: merges_for_vocab_size(size, len(special)) for size in outputs}
        if init is not None and min(requested.values()) < len(init.merges):
            raise ValueError(f"init already has {len(init.merges)} merges, more than the "
                             f"{min(requested.values())} requested")
        largest = max(outputs)
    else:
        requested = {None: args.merges}
        largest = None
    corpus = tables if tables is not None else _corpus(args)
    start = time.perf_counter()
    with _cluster(args.scheduler) as client:
        trained = train(
            corpus,
            vocab_size=largest,
            merges=args.merges,
            pretokenize=pretokenize,
            special_tokens=special,
            min_frequency=args.min_frequency,
            workers=args.workers,
            progress=not args.quiet and sys.stderr.isatty(),
            init=init,
            client=client,
        )
    seconds = time.perf_counter() - start
    for size, output in outputs.items():
        # A smaller size is the first rules of the largest; where training
        # stopped early, a separate run would have stopped at the same rule.
        tokenizer = trained if size is None else trained.truncate(min(size, trained.vocab_size))
        tokenizer.save(output)
        if args.quiet:
            continue
        learned = len(tokenizer.merges)
        print(
            f"bytepair: wrote {output!r}: vocabulary {tokenizer.vocab_size} = 256 bytes + "
            f"{plural(learned, 'merge')} + {plural(len(tokenizer.special_tokens), 'special token')} "
            f"({seconds:.1f} s)",
            file=sys.stderr,
        )
        if learned < requested[size]:
            print(
                f"bytepair: stopped after {learned} of {plural(requested[size], 'merge')}: no pair "
                f"left that is seen at least {plural(args.min_frequency, 'time')}",
                file=sys.stderr,
            )


def _check_train_usage(args, parser: argparse.ArgumentParser) -> None:
    # FILEs and --counts exclude each other; argparse's groups cannot hold a
    # positional when options and positionals are intermixed.
    if not args.files and not args.counts:
        parser.error("the following arguments are required: FILE (or --counts COUNTS)")
    if args.files and args.counts:
        parser.error("argument --counts: not allowed with FILE")


def _corpus(args) -> Files:
    """The FILEs of ``train`` or ``count`` as a corpus (the library checks the options)."""
    return Files(*args.files, per_line=args.per_line, jsonl_field=args.jsonl_field,
                 text_column=args.text_column)


def _load_counts(args) -> list[PieceCounts]:
    """The ``--counts`` tables; they replace FILEs and the options that read them."""
    for option in ("per_line", "jsonl_field", "text_column", "scheduler"):
        if getattr(args, option):
            raise ValueError(f"--{option.replace('_', '-')}: has no effect with --counts "
                             "(the counts are already made)")
    tables = [PieceCounts.load(path) for path in args.counts]
    sum(tables)  # mixed patterns fail here, naming both, before any work
    return tables


@contextlib.contextmanager
def _cluster(address: str | None):
    """A Dask client for ``--scheduler`` (None without), closed afterwards."""
    if address is None:
        yield None
        return
    client = connect(address)
    try:
        yield client
    finally:
        client.close()


# -- count ------------------------------------------------------------------

def run_count(args) -> None:
    output = check_target(args.output, "-o")
    corpus = _corpus(args)
    start = time.perf_counter()
    with _cluster(args.scheduler) as client:
        table = count_corpus(corpus, pretokenize=args.pretokenize, workers=args.workers,
                             client=client, progress=not args.quiet and sys.stderr.isatty())
    table.save(output)
    if not args.quiet:
        print(
            f"bytepair: wrote {str(output)!r}: {plural(len(table), 'distinct piece')}, "
            f"{table.total():,} in all, pattern {_pattern_name(table.pattern)} "
            f"({time.perf_counter() - start:.1f} s)",
            file=sys.stderr,
        )


# -- export -----------------------------------------------------------------

def run_export(args) -> None:
    output = check_target(args.output, "-o")
    tokenizer = _load_tokenizer(args.model, args.trust_pattern)
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


# -- encode / decode --------------------------------------------------------

def run_encode(args) -> None:
    if args.dtype is not None:
        run_encode_files(args)
        return
    for option in ("output", "append", "jsonl_field", "text_column", "threads"):
        if getattr(args, option, None) is not None:
            raise ValueError(f"--{option.replace('_', '-')}: needs --dtype (the binary output)")
    if args.per_line:
        raise ValueError("--per-line: needs --dtype (the binary output)")
    if len(args.inputs) > 1:
        raise ValueError("TEXT: give one text (or FILEs with --dtype and -o)")
    tokenizer = _load_tokenizer(args.model, args.trust_pattern)
    text_argument = args.inputs[0] if args.inputs else None
    data = _read_stdin() if text_argument is None else _argument_bytes(text_argument)
    where = "stdin" if text_argument is None else "TEXT"
    specials = tokenizer.special_tokens
    if tokenizer.pattern is None and (
        args.ordinary or not any(t.encode("utf-8") in data for t in specials)
    ):
        ids = tokenizer.model.encode(data)  # byte mode: any bytes, as they are
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
            except ValueError as exc:
                raise ValueError(str(exc).replace("text contains", f"{where} contains", 1)) from None
    print(" ".join(map(str, ids)))


def run_encode_files(args) -> None:
    """FILEs (or stdin) -> one raw little-endian array of IDs in -o."""
    if args.output is None:
        raise ValueError("--dtype: needs -o/--output, the array file to write")
    output = check_target(args.output, "-o")
    tokenizer = _load_tokenizer(args.model, args.trust_pattern)
    check_dtype(args.dtype, tokenizer.vocab_size, "--dtype")
    append = resolve_append(tokenizer, args.append, "--append")
    if args.inputs:
        corpus = Files(*args.inputs, per_line=args.per_line, jsonl_field=args.jsonl_field,
                       text_column=args.text_column)
    elif args.jsonl_field is not None or args.text_column is not None:
        raise ValueError("--jsonl-field/--text-column: need FILEs (stdin is read as text)")
    text = tokenizer.pattern is not None or args.allow_special or (
        not args.ordinary and bool(tokenizer.special_tokens))
    if args.inputs:
        documents = corpus.documents(text)
    else:
        data = _read_stdin()
        lines = data.splitlines() if args.per_line else [data]
        documents = (_stdin_text(line) for line in lines) if text else iter(lines)
    options = {"allowed_special": "all"} if args.allow_special else (
        {"disallowed_special": ()} if args.ordinary else {})
    if text:
        def encode_array(batch):
            return tokenizer.encode_to_array(batch, dtype=args.dtype, append=append,
                                             threads=args.threads, **options)
    else:
        def encode_array(batch):
            return encode_bytes_to_array(tokenizer.model, batch, args.dtype, append)
    bar = None
    if not args.quiet and sys.stderr.isatty():
        bar = tqdm(file=sys.stderr, desc="encoding", unit="char" if text else "B",
                   unit_scale=True, dynamic_ncols=True)
    started = time.perf_counter()
    try:
        count, tokens, size = write_token_file(output, documents, encode_array, progress=bar)
    finally:
        if bar is not None:
            bar.close()
    if not args.quiet:
        unit = "characters" if text else "bytes"
        ratio = f"{size / tokens:.3f} {unit} per token" if tokens else "no tokens"
        print(f"bytepair: wrote {str(output)!r}: {tokens} tokens ({args.dtype}) from {count} "
              f"documents, {size} {unit}, {ratio} ({time.perf_counter() - started:.1f} s)",
              file=sys.stderr)


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
    tokenizer = _load_tokenizer(args.model, args.trust_pattern)
    if args.dtype is not None:
        if len(args.ids) != 1:
            raise ValueError("--dtype: give exactly one FILE of IDs to decode")
        ids = read_token_file(args.ids[0], args.dtype)
        try:
            data = tokenizer.decode_bytes(ids)
        except ValueError as exc:
            raise ValueError(f"{args.ids[0]!r}: {exc}") from None
    else:
        if args.ids:
            words = args.ids
        else:
            words = [_read_stdin().decode("ascii", "replace")]
        data = tokenizer.decode_bytes(_parse_ids(words, tokenizer.vocab_size))
    if args.bytes:
        _write_bytes(data)
        return
    text = data.decode("utf-8", "replace")
    if sys.stdout.isatty() and not text.endswith("\n"):
        text += "\n"  # keep the prompt off the text; piped output stays exact
    _write_bytes(text.encode("utf-8"))


# -- inspect ----------------------------------------------------------------

def _sample_stats(tokenizer, sample: str) -> tuple[int, int]:
    """Bytes and tokens of a sample file (special-token text counts as text)."""
    text = tokenizer.pattern is not None
    total_bytes = total_tokens = 0
    for document in Files(sample).documents(text):
        total_bytes += len(document.encode("utf-8")) if text else len(document)
        total_tokens += len(tokenizer.model.encode(document))
    if total_tokens == 0:
        raise ValueError(f"--sample: {sample!r} holds no text")
    return total_bytes, total_tokens


def run_inspect(args) -> None:
    tokenizer = _load_tokenizer(args.model, args.trust_pattern)
    # The sample first: bad input fails before anything is printed.
    sample = _sample_stats(tokenizer, args.sample) if args.sample is not None else None
    merges = tokenizer.merges
    specials = tokenizer.special_tokens
    print(f"model: {args.model}")
    print(f"vocabulary size: {tokenizer.vocab_size} = 256 bytes + {plural(len(merges), 'merge')} + "
          f"{plural(len(specials), 'special token')}")
    print(f"merges: {len(merges)}")
    listed = ", ".join(f"{token!r}={token_id}" for token, token_id in specials.items())
    print(f"special tokens: {listed or 'none'}")
    print(f"pattern: {_pattern_name(tokenizer.pattern)}")

    top = args.top
    learned = range(BYTE_TOKENS, BYTE_TOKENS + len(merges))
    # Lengths are O(1) each: token bytes of a chain of rules would be quadratic.
    longest = sorted(learned, key=lambda t: (-tokenizer.model.token_length(t), t))[:top]
    print(f"longest tokens ({len(longest)}):")
    print(f"{'id':>8}  {'length':>6}  text")
    for token_id in longest:
        data = tokenizer.token_bytes(token_id)
        print(f"{token_id:>8}  {len(data):>6}  {_show_bytes(data)}")

    # Rank order is count order for a fit from scratch; a warm start from a
    # model of another corpus need not be, so sort (ties: the earlier rank).
    shown = sorted(merges, key=lambda m: (-m.count, m.rank))[:top]
    print(f"top merges ({len(shown)} by count):")
    print(f"{'rank':>8}  {'token':>8}  {'left':>8}  {'right':>8}  {'count':>10}  "
          f"{'replacements':>12}  text")
    for m in shown:
        print(f"{m.rank:>8}  {m.token_id:>8}  {m.left:>8}  {m.right:>8}  {m.count:>10}  "
              f"{m.replacements:>12}  {_show_bytes(tokenizer.token_bytes(m.token_id))}")

    if sample is not None:
        total_bytes, total_tokens = sample
        print(f"sample: {args.sample}: {total_bytes} bytes -> {total_tokens} tokens, "
              f"{total_bytes / total_tokens:.3f} bytes per token")


# -- vocab ------------------------------------------------------------------

def escape_bytes(data: bytes) -> str:
    r"""Bytes as printable ASCII: each byte outside ``!``..``~`` and space, and ``\``, as ``\xNN``.

    >>> print(escape_bytes(b"a b\\\t\xc3\xa9"))
    a b\x5c\x09\xc3\xa9
    """
    return "".join(chr(b) if 32 <= b < 127 and b != 92 else f"\\x{b:02x}" for b in data)


_ESCAPES = {"\\": "\\\\", "\t": "\\t", "\n": "\\n", "\r": "\\r"}


def _text_cell(data: bytes) -> str:
    """The token as text when it is whole UTF-8; characters that are not printable are escaped
    (as in Python: ``\\n``, ``\\x1b``, ``\\u2028``), so that every row is one line."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return ""
    return "".join(
        char if char.isprintable() and char != "\\" else
        _ESCAPES.get(char) or char.encode("unicode_escape").decode("ascii")
        for char in text
    )


def run_vocab(args) -> None:
    tokenizer = _load_tokenizer(args.model, args.trust_pattern)
    out = ["id\tbytes\ttext\n"]
    for token_id in range(tokenizer.vocab_size):
        data = tokenizer.id_to_token(token_id)
        out.append(f"{token_id}\t{escape_bytes(data)}\t{_text_cell(data)}\n")
    sys.stdout.write("".join(out))


# -- trace ------------------------------------------------------------------

def run_trace(args) -> None:
    learned = 0
    for line in trace_lines([_argument_bytes(doc) for doc in args.docs], args.merges):
        learned += line.startswith("MERGE ")
        print(line)
    if learned < args.merges:
        print(f"bytepair: stopped after {learned} of {args.merges} merges: no adjacent pair left",
              file=sys.stderr)


# -- demo -------------------------------------------------------------------

def run_demo(args) -> None:
    demo(args.merges, args.show, args.engine)


# -- parser and entry point -------------------------------------------------

def _corpus_options(command: argparse.ArgumentParser) -> None:
    """Options that ``train`` and ``count`` share for Parquet input and clusters."""
    command.add_argument("--text-column", metavar="NAME",
                         help="string column of Parquet files holding the documents (default: text)")
    command.add_argument("--scheduler", metavar="ADDRESS",
                         help="count on the Dask cluster whose scheduler is at ADDRESS "
                         "(tcp://host:8786); workers must be able to read the FILEs")


def build_parser() -> argparse.ArgumentParser:
    """The ``bytepair`` argument parser."""
    return _build()[0]


def _add_trust_pattern(command: argparse.ArgumentParser) -> None:
    command.add_argument("--trust-pattern", action="store_true",
                         help="accept a custom regex pattern in a model file (it could run for "
                         "exponential time on some text; named patterns need no trust)")


def _build() -> tuple[argparse.ArgumentParser, dict[str, argparse.ArgumentParser]]:
    parser = Parser(
        prog="bytepair", description="Exact, deterministic byte-pair-encoding training.",
        epilog=EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"bytepair {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    count = _int_at_least(0)

    train = commands.add_parser(
        "train", help="train a tokenizer from files",
        description="Train a byte-level BPE tokenizer from text files, directories (read "
        "recursively), globs, JSON Lines (.jsonl/.ndjson) and their .gz versions; save it to -o. "
        "IDs: 0-255 bytes, then one per merge, then the special tokens in the order given.",
    )
    train.add_argument("files", nargs="*", metavar="FILE",
                       help="corpus files, directories, globs or fsspec URLs (or use --counts)")
    train.add_argument("--counts", nargs="+", metavar="COUNTS",
                       help="train from piece-count tables written by 'bytepair count' (added up) "
                       "instead of FILEs")
    size = train.add_mutually_exclusive_group(required=True)
    size.add_argument("--vocab-size", type=_vocab_sizes, metavar="N[,N...]",
                      help="256 bytes + merges + special tokens (at least 256 + the special "
                      "tokens); several sizes, comma-separated, write one model each from one "
                      "run, to -o with {vocab_size} filled in")
    size.add_argument("--merges", type=_integer, metavar="N",
                      help="number of merges (total, with --init)")
    train.add_argument("--pretokenize", metavar=PATTERN_CHOICES, default=None,
                       help="split pattern; pieces are barriers (default: gpt2, or the --init "
                       "model's); none: byte mode, each document is one piece and any bytes are "
                       "read as they are; other patterns need UTF-8")
    train.add_argument("--special", action="append", metavar="TOKEN",
                       help="a special token (repeatable; default: none, or the --init model's)")
    train.add_argument("--min-frequency", type=_integer, default=1, metavar="N",
                       help="stop when the best pair is seen fewer than N times (1)")
    train.add_argument("--workers", type=_integer, default=None, metavar="N",
                       help="processes counting pieces (default: all cores); the model is the same")
    train.add_argument("--init", metavar="MODEL",
                       help="continue from this model (equals training from scratch to the larger size)")
    train.add_argument("--jsonl-field", metavar="NAME",
                       help="text field of JSON Lines records (default: text)")
    train.add_argument("--per-line", action="store_true",
                       help="each line of a text file is a document (default: each file)")
    _corpus_options(train)
    train.add_argument("--quiet", "-q", action="store_true", help="no progress bars or summary")
    train.add_argument("-o", "--output", required=True, metavar="MODEL",
                       help="model file to write ({vocab_size} in it is replaced by the size)")
    _add_trust_pattern(train)
    train.set_defaults(run=run_train, check_usage=_check_train_usage)

    counter = commands.add_parser(
        "count", help="count the pieces of files into a table to train from later",
        description="Count the pre-tokenized pieces of text files, directories, globs, JSON Lines, "
        "Parquet files (.parquet: one document per row of --text-column) or fsspec URLs, and save "
        "the table to -o. Tables of shards add up: 'bytepair train --counts A B ...' trains on "
        "all of them and gives the model of training on all the shards at once.",
    )
    counter.add_argument("files", nargs="+", metavar="FILE",
                         help="corpus files, directories, globs or fsspec URLs")
    counter.add_argument("--pretokenize", metavar=PATTERN_CHOICES, default="gpt2",
                         help="split pattern (default: gpt2); none: each document is one piece")
    counter.add_argument("--per-line", action="store_true",
                         help="each line of a text file is a document (default: each file)")
    counter.add_argument("--jsonl-field", metavar="NAME",
                         help="text field of JSON Lines records (default: text)")
    counter.add_argument("--workers", type=_integer, default=None, metavar="N",
                         help="processes counting pieces (default: all cores); the table is the same")
    _corpus_options(counter)
    counter.add_argument("--quiet", "-q", action="store_true", help="no progress bar or summary")
    counter.add_argument("-o", "--output", required=True, metavar="COUNTS", help="table file to write")
    counter.set_defaults(run=run_count)

    export = commands.add_parser(
        "export", help="export a model for Hugging Face tokenizers or tiktoken",
        description="Write a tokenizer.json (Hugging Face tokenizers) or a tiktoken ranks file.",
    )
    export.add_argument("model", metavar="MODEL")
    export.add_argument("--to", required=True, choices=["tokenizers", "tiktoken"])
    export.add_argument("-o", "--output", required=True, metavar="PATH")
    export.add_argument("--quiet", "-q", action="store_true", help="print nothing on success")
    _add_trust_pattern(export)
    export.set_defaults(run=run_export)

    encode = commands.add_parser(
        "encode", help="print the token IDs of a text, or write files' IDs as a binary array",
        description="Print the token IDs of TEXT (or of all of stdin, as one text), "
        "space-separated. With --dtype, encode FILEs (or stdin) instead and write the IDs to -o "
        "as one raw little-endian array (documents one after the other, as training scripts "
        "memory-map them).",
    )
    encode.add_argument("model", metavar="MODEL")
    encode.add_argument("inputs", nargs="*", metavar="TEXT|FILE",
                        help="text to encode (default: stdin); with --dtype: files, directories or globs")
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
                        help="each line is a document (default: each file)")
    source.add_argument("--jsonl-field", metavar="NAME",
                        help="text field of JSON Lines records (default: text)")
    source.add_argument("--text-column", metavar="NAME",
                        help="string column of Parquet files (default: text)")
    encode.add_argument("--threads", type=_integer, default=None, metavar="N",
                        help="encoding threads (default: one per core); the IDs are the same")
    encode.add_argument("--quiet", "-q", action="store_true", help="no progress bar or summary")
    _add_trust_pattern(encode)
    encode.set_defaults(run=run_encode)

    decode = commands.add_parser(
        "decode", help="print the text of token IDs",
        description="Print the text of IDS (or of the IDs on stdin), exactly; bytes that are not "
        "UTF-8 become U+FFFD unless --bytes is given. A newline is added only on a terminal. "
        "With --dtype, read the IDs from FILE, a raw little-endian array (as encode writes it).",
    )
    decode.add_argument("model", metavar="MODEL")
    decode.add_argument("ids", nargs="*", metavar="IDS|FILE",
                        help="token IDs (default: read from stdin); with --dtype: one array file")
    decode.add_argument("--dtype", choices=["uint16", "uint32"], help="FILE is an array of this type")
    decode.add_argument("--bytes", action="store_true", help="write the raw bytes")
    _add_trust_pattern(decode)
    decode.set_defaults(run=run_decode)

    inspect = commands.add_parser(
        "inspect", help="describe a model",
        description="Vocabulary size, merges, special tokens, pattern, longest tokens, top merges "
        "with counts and replacements, and bytes per token on an optional sample.",
    )
    inspect.add_argument("model", metavar="MODEL")
    inspect.add_argument("--sample", metavar="FILE", help="report bytes per token on this file")
    inspect.add_argument("--top", type=count, default=10, metavar="N", help="rows per table (10)")
    _add_trust_pattern(inspect)
    inspect.set_defaults(run=run_inspect)

    vocab = commands.add_parser(
        "vocab", help="list every token",
        description="Print the vocabulary as tab-separated rows with a header: the ID, the "
        "token's bytes (printable ASCII as is, other bytes as \\xNN), and the token as text "
        "when it is whole UTF-8 (\\t, \\n, \\r and \\\\ escaped). Special tokens come last.",
    )
    vocab.add_argument("model", metavar="MODEL")
    _add_trust_pattern(vocab)
    vocab.set_defaults(run=run_vocab)

    trace = commands.add_parser(
        "trace", help="print every round of a tiny byte-mode fit",
        description="Fit on a tiny corpus, each DOC one document (byte mode, no pre-tokenizer), "
        "and print the bpe-merges-v1 trace: stages, every candidate pair, each merge.",
    )
    trace.add_argument("docs", nargs="+", metavar="DOC")
    trace.add_argument("--merges", type=count, default=2, metavar="N", help="merges to learn (2)")
    trace.set_defaults(run=run_trace)

    demo = commands.add_parser("demo", help="fit rules on the shipped public-domain text")
    demo.add_argument("--merges", type=count, default=300, help="merges to learn (300)")
    demo.add_argument("--show", type=count, default=20, help="rules to print (20)")
    demo.add_argument("--engine", choices=["incremental", "naive"], default=None)
    demo.set_defaults(run=run_demo)
    return parser, commands.choices


def _exit_code(code) -> int:
    if code is None:
        return 0
    return code if isinstance(code, int) else 2


def main(argv: list[str] | None = None) -> int:
    """Run one command; returns the exit code (usage errors and bad input: 2)."""
    argv = sys.argv[1:] if argv is None else list(argv)
    parser, commands = _build()
    try:
        if argv and argv[0] in commands:
            # Intermixed: options may sit between FILEs, DOCs and IDS.
            args = commands[argv[0]].parse_intermixed_args(argv[1:])
            args.command = argv[0]
            if getattr(args, "check_usage", None) is not None:
                args.check_usage(args, commands[argv[0]])
        else:
            args = parser.parse_args(argv)
    except CommandLineError as exc:
        print(f"bytepair: error: {_one_line(exc)}", file=sys.stderr)
        return 2
    except SystemExit as exc:  # --help and --version
        return _exit_code(exc.code)
    in_main_thread = threading.current_thread() is threading.main_thread()
    if in_main_thread:
        _terminate.owner = os.getpid()
        previous = signal.signal(signal.SIGTERM, _terminate)
    try:
        args.run(args)
        sys.stdout.flush()
    except KeyboardInterrupt:
        print("bytepair: interrupted", file=sys.stderr)
        return 130
    except Terminated:
        print("bytepair: terminated", file=sys.stderr)
        return 128 + signal.SIGTERM
    except BrokenPipeError:
        # The reader went away (``| head``): stop quietly, and keep Python's
        # final flush from failing on the closed pipe.
        try:
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        except (OSError, ValueError):
            pass
        return 1
    except (OSError, ValueError, TypeError, ImportError) as exc:
        print(f"bytepair: error: {in_option_names(_one_line(exc))}", file=sys.stderr)
        return 2
    finally:
        if in_main_thread:
            signal.signal(signal.SIGTERM, previous)
    return 0
