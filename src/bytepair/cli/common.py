"""What every command shares: the parser class, argument types, the library's names for
options, and reading and writing the terminal's bytes.

A command only parses and prints: every rule about the input is the library's. The library's
errors name the argument they are about (:class:`bytepair._util.errors.ArgumentError`), and
:func:`one_line` says them with this command line's options (``vocab_size`` -> ``--vocab-size``).
The stages a command runs are imported in its functions, never here: parsing needs none.
"""

from __future__ import annotations

import argparse
import contextlib
import difflib
import os
import re
import shlex
import sys
from typing import TYPE_CHECKING

from bytepair._util.errors import Advice, InputError, parts_of, python_name
from bytepair._util.validate import parse_memory, parse_size, plural
from bytepair.split.patterns import PATTERNS, TIKTOKEN_NAMES

if TYPE_CHECKING:
    from bytepair.read.corpus import Files

PATTERN_CHOICES = "none|" + "|".join(PATTERNS) + "|REGEX"

#: The library's argument names, as the options that set them.
OPTION_NAMES = {
    "vocab_size": "--vocab-size", "merges": "--merges", "special_tokens": "--special",
    "pretokenize": "--pretokenize", "min_frequency": "--min-frequency", "workers": "--workers",
    "jsonl_field": "--jsonl-field", "init": "--init", "allowed_special": "--allow-special",
    "threads": "--threads", "text_column": "--text-column", "end_of_word": "--end-of-word",
    "superbpe": "--superbpe", "superbpe_pretokenize": "--superbpe-pretokenize",
    "max_words": "--max-words", "max_memory": "--max-memory", "pattern": "--pattern",
    "checkpoint": "--checkpoint", "like": "--like",
    # evaluate's
    "samples": "--sample", "sizes": "--sizes", "reference": "--reference", "plot": "--plot",
    "checks": "--checks",
}
#: The library's advice (:class:`bytepair._util.errors.Advice`, by key), as this command line
#: says it; an argument's advice is its option.
ADVICE = {
    "pretokenize=None": "--pretokenize none",
    "disallowed_special=()": "--ordinary",
    "trust_pattern=True": "--trust-pattern",
    "ties='tokenizers'": "--ties tokenizers",
    "custom regex": "a custom regex is any value with a regex character, such as '\\w+|\\W+'",
    "count table": "train a model from it with 'bytepair train --counts'",
}


def option_name(argument: str, index: int | None) -> str:
    """The option that sets the library's ``argument`` (its item ``index`` counted from 1), or
    the argument's own name when no option sets it.

    >>> option_name("special_tokens", 1), option_name("vocab_size", None), option_name("dev", None)
    ('--special #2', '--vocab-size', 'dev')
    """
    option = OPTION_NAMES.get(argument)
    if option is None:
        return python_name(argument, index)
    return option if index is None else f"{option} #{index + 1}"


def advice_here(advice: Advice) -> str:
    """The library's advice as this command line says it.

    >>> advice_here(Advice("trust_pattern=True")), advice_here(Advice("allowed_special"))
    ('--trust-pattern', '--allow-special')
    """
    return ADVICE.get(advice.key) or OPTION_NAMES.get(advice.key) or str(advice)


class CommandLineError(Exception):
    """A usage error: printed as one line ``bytepair: error: ...``, exit code 2."""


class Parser(argparse.ArgumentParser):
    """argparse, with usage errors as one line (``bytepair: error: ...``) instead of a usage block."""

    def error(self, message: str):
        command = self.prog.removeprefix("bytepair").strip()
        raise CommandLineError(f"{command}: {message}" if command else message)

    def check_options(self, argv: list[str]) -> None:
        """An option this command does not have is a usage error that names it and the
        nearest one it has, before argparse's own checks (which would first report a
        required option as missing: ``--vocab_size 8192`` is not ``--vocab-size``)."""
        known = self._option_string_actions
        for token in argv:
            if token == "--":
                return
            if not token.startswith("-") or token == "-" or " " in token or _NUMBER.fullmatch(token):
                continue  # argparse reads these as values
            name = token.split("=", 1)[0]
            if name in known or (not name.startswith("--") and _short_options(name, known)):
                continue  # -o FILE, -oFILE, or flags together (-qh)
            if name.startswith("--") and any(option.startswith(name) for option in known):
                continue  # an abbreviation (argparse says whether it is ambiguous)
            if not name.startswith("--"):
                self.error(f"unrecognized option {name} (a text or file name that starts with "
                           f"'-' goes after '--': -- {token})")
            self.error(f"unrecognized option {name}{_did_you_mean(name, known)}")


_NUMBER = re.compile(r"-\d+(\.\d*)?")


def _short_options(token: str, known) -> bool:
    """Whether argparse reads ``token`` as short options: flags written together (``-qh``),
    perhaps ending in an option that takes a value with the value attached (``-oFILE``,
    ``-qoFILE``)."""
    for flag in token[1:]:
        action = known.get(f"-{flag}")
        if action is None:
            return False
        if action.nargs != 0:
            return True  # the rest is its value
    return True


def _did_you_mean(name: str, known) -> str:
    """``; did you mean --vocab-size?`` for ``--vocab_size`` (underscores are Python's and Hugging
    Face's spelling), or the nearest option by spelling; empty when none is near."""
    options = sorted(option for option in known if option.startswith("--"))
    dashed = "--" + name.lstrip("-").replace("_", "-").lower()
    if dashed in options:
        return f"; did you mean {dashed}?"
    near = difflib.get_close_matches(dashed, options, n=1, cutoff=0.6)
    return f"; did you mean {near[0]}?" if near else ""


# -- argument types ---------------------------------------------------------

def int_at_least(minimum: int):
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"must be >= {minimum}, got {value}")
        return value

    return parse


def integer(text: str) -> int:
    """An integer; its limits are the library's to check."""
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None


def memory_size(text: str) -> int:
    """A memory size such as 4GiB, 512MiB or 2GB (bytepair._util.validate.parse_memory)."""
    try:
        return parse_memory(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected a memory size such as 4GiB, 512MiB or 2GB, got {text!r}") from None


def size(text: str) -> int:
    """A vocabulary size or a number of merges: ``32768``, ``32k`` (32,000) or ``32Ki`` (32,768)."""
    try:
        return parse_size(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected an integer such as 32768, 32k (32,000) or 32Ki (32,768), got {text!r}"
        ) from None


def vocab_sizes(text: str) -> list[int]:
    """One vocabulary size, or several separated by commas (each may be written ``32k`` or
    ``32Ki``, :func:`bytepair._util.validate.parse_size`); their limits are the library's."""
    sizes = []
    for item in text.split(","):
        try:
            sizes.append(parse_size(item))
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"expected an integer or integers separated by commas (32768, 32k = 32,000, "
                f"32Ki = 32,768), got {text!r}") from None
    return sizes


def pattern_option(text: str) -> str:
    """A ``--pretokenize`` value: tiktoken's encoding names (``cl100k_base``) are read as the
    pattern they use; anything else is the library's to check, except a regex that names an
    existing file (the user meant the file's contents, which a pattern is never read from)."""
    return TIKTOKEN_NAMES.get(text, model_pattern_option(text))


def model_pattern_option(text: str) -> str:
    """A ``--pattern`` value: a name or a regex, never a file's name."""
    if text not in PATTERNS and text != "none" and os.path.lexists(text):
        raise argparse.ArgumentTypeError(
            f"{text!r} names an existing file; give a pattern's name or the regex itself")
    return text


# -- shared helpers ---------------------------------------------------------

def resume_hint(args, argv: list[str]) -> str:
    """For a run stopped with ``--checkpoint DIR``: where its progress is and the exact command
    that continues it (the same arguments, with ``--resume``); empty for other runs."""
    checkpoint = getattr(args, "checkpoint", None)
    if checkpoint is None:
        return ""
    again = list(argv) if "--resume" in argv else [*argv, "--resume"]
    return (f"; the progress so far is kept in {checkpoint!r}, continue with: "
            f"bytepair {shlex.join(again)}")


def one_line(exc: BaseException) -> str:
    """``exc`` in one line: the library's errors with this command line's options and advice.

    >>> from bytepair._util.errors import ArgumentError
    >>> one_line(ArgumentError("special_tokens", "must be a non-empty str", index=0))
    '--special #1 must be a non-empty str'
    """
    if isinstance(exc, InputError):
        text = exc.spelled(option_name, advice_here)
    elif isinstance(exc, OSError) and exc.strerror and exc.filename is not None:
        text = f"{exc.strerror}: {os.fspath(exc.filename)!r}"
        if exc.filename2 is not None:
            text += f" -> {os.fspath(exc.filename2)!r}"
    else:
        text = str(exc) or type(exc).__name__
    return text.replace("\r", "\\r").replace("\n", "\\n")


@contextlib.contextmanager
def naming(name: str):
    """A file that cannot be opened is an error naming the argument ``name``
    (``MODEL: No such file or directory: 'x.json'``)."""
    try:
        yield
    except OSError as exc:
        if exc.strerror is None:
            raise
        raise type(exc)(exc.errno, f"{name}: {exc.strerror}", exc.filename) from None


def load_model(path: str, trust_pattern: bool, name: str = "MODEL", pattern: str | None = None,
               special: list[str] | None = None):
    """The model in ``path`` (a bytepair model file, a ``tokenizer.json`` or its directory, or a
    tiktoken ranks file split by ``pattern``, from ``--pattern``, with the special tokens
    ``special``, from ``--special``); a file that cannot be opened is an error naming the
    argument ``name``."""
    from bytepair.formats.load import load

    special_tokens = special_tokens_option(special)
    with naming(name):
        return load(path, trust_pattern=trust_pattern, pattern=pattern,
                    special_tokens=special_tokens)


def special_tokens_option(special: list[str] | None):
    """``--special`` of a command that loads a model: tokens (IDs after the ranks, in order),
    or one JSON file of token -> ID (``tok.tiktoken.special_tokens.json``, as ``export --to
    tiktoken`` writes it)."""
    if not special:
        return None
    files = [value for value in special if value.endswith(".json")]
    if not files:
        for token in special:
            if os.path.lexists(token):
                raise ValueError(f"--special: {token!r} names an existing file, not a token; a "
                                 "file of special tokens is JSON, named *.json")
        return special
    if len(special) > 1:
        raise ValueError(f"--special: give either tokens or one JSON file of special tokens, "
                         f"not both ({files[0]!r} and {len(special) - 1} more)")
    from bytepair.formats.imports import read_special_tokens

    with naming("--special"):
        return read_special_tokens(files[0])


def load_tokenizer(path: str, trust_pattern: bool, name: str = "MODEL", *, need: str = "",
                   pattern: str | None = None, special: list[str] | None = None):
    """A :class:`Tokenizer` from a model file; a byte model gets no special tokens.

    A word-mode model is refused with what to do instead; ``need`` says why
    this command needs token IDs.
    """
    return as_tokenizer(load_model(path, trust_pattern, name, pattern, special), path, need)


def as_tokenizer(model, path: str, need: str = ""):
    """:func:`load_tokenizer` of a model already loaded from ``path``."""
    from bytepair.model.models import ByteModel
    from bytepair.model.tokenizer import Tokenizer

    if isinstance(model, ByteModel):
        return Tokenizer(model)
    if type(model).__name__ == "SentencePieceModel":
        raise ValueError(f"{path!r} is a sentencepiece model: this command reads bytepair models; "
                         "inspect, vocab, encode, decode, export and evaluate read it")
    if not isinstance(model, Tokenizer):
        raise ValueError(f"{path!r} is a word-mode model, which has no token IDs{need}: "
                         "'bytepair encode' prints its symbols, 'inspect' and 'vocab' list its rules")
    return model


def argument_bytes(text: str) -> bytes:
    # POSIX hands arguments over as bytes; Python decodes them with surrogateescape.
    return text.encode("utf-8", "surrogateescape")


def text_argument(value: str, name: str, what: str = "text") -> bytes:
    """A text given as an argument, as bytes; refused when it names an existing file or
    directory, which the user most likely meant to read: the line says how to read it
    (``--file``) and how to give the name itself (on stdin).

    >>> text_argument("hello", "TEXT")
    b'hello'
    >>> text_argument(".", "TEXT")
    Traceback (most recent call last):
    ValueError: TEXT: '.' names an existing directory; to read a file give --file PATH ('-' reads stdin), to use the name itself as text pipe it on stdin
    """
    if os.path.lexists(value):
        kind, path = ("directory", "PATH") if os.path.isdir(value) else ("file", shlex.quote(value))
        raise ValueError(f"{name}: {value!r} names an existing {kind}; to read a file give "
                         f"--file {path} ('-' reads stdin), to use the name itself as {what} "
                         "pipe it on stdin")
    return argument_bytes(value)


def read_input(path: str, name: str) -> bytes:
    """The bytes of the file ``path`` named by the argument ``name``, or of stdin for ``-``."""
    if path == "-":
        return read_stdin()
    with naming(name):
        with open(path, "rb") as file:
            return file.read()


def read_stdin() -> bytes:
    stream = sys.stdin
    buffer = getattr(stream, "buffer", None)
    return buffer.read() if buffer is not None else stream.read().encode("utf-8", "surrogateescape")


def write_bytes(data: bytes) -> None:
    sys.stdout.flush()
    buffer = getattr(sys.stdout, "buffer", None)
    if buffer is None:
        sys.stdout.write(data.decode("utf-8", "replace"))
    else:
        buffer.write(data)
        buffer.flush()


def show_bytes(data: bytes) -> str:
    """A token's bytes for a reader: the text when it is UTF-8, else the bytes."""
    try:
        return repr(data.decode("utf-8"))
    except UnicodeDecodeError:
        return repr(data)


def pattern_name(source: str | None) -> str:
    if source is None:
        return "none (each document is one piece)"
    for name, known in PATTERNS.items():
        if source == known:
            return name
    return f"regex {source!r}"


def files_of(args, patterns=None, name: str = "FILE") -> Files:
    """The FILEs of ``train``, ``count`` or ``learn-words`` (or ``patterns``, named ``name``, such
    as an ``evaluate`` sample) as a corpus read with the command's reading options (the library
    checks them).

    With ``--skip-unreadable``, files that are not UTF-8 text are left out and
    listed on stderr (unless ``--quiet``).
    """
    from bytepair.read.corpus import files_named

    patterns = args.files if patterns is None else patterns
    files = files_named(name, *patterns, per_line=getattr(args, "per_line", False),
                        jsonl_field=args.jsonl_field, text_column=args.text_column,
                        skip_unreadable=args.skip_unreadable)
    for path in files.paths:
        if is_count_table(path):
            use = (f"train from it with --counts {shlex.quote(str(path))}"
                   if hasattr(args, "counts") else "'bytepair train --counts' reads it")
            raise ValueError(f"{name}: {str(path)!r} is a count table ('bytepair count' wrote "
                             f"it), not text; {use}")
    if files.skipped and not getattr(args, "quiet", False):
        shown = ", ".join(f"{str(path)!r} ({why})" for path, why in files.skipped[:SKIPPED_SHOWN])
        more = len(files.skipped) - SKIPPED_SHOWN
        print(f"bytepair: skipped {plural(len(files.skipped), 'file')} that "
              f"{'is' if len(files.skipped) == 1 else 'are'} not UTF-8 text: {shown}"
              + (f" and {more:,} more" if more > 0 else ""), file=sys.stderr)
    return files


def is_count_table(path) -> bool:
    """Whether ``path`` is a local file that starts as a piece-count table does."""
    from bytepair.counts.piece_counts import FORMAT as COUNTS_FORMAT

    start = b'{"format": "' + COUNTS_FORMAT.encode("ascii") + b'"'
    if not isinstance(path, os.PathLike) or not os.path.isfile(path):
        return False
    with open(path, "rb") as file:
        return file.read(len(start)) == start


#: Skipped files named on stderr; the rest are counted.
SKIPPED_SHOWN = 20


@contextlib.contextmanager
def cluster(address: str | None):
    """A Dask client for ``--scheduler`` (None without), closed afterwards."""
    if address is None:
        yield None
        return
    # A lost scheduler or a dying worker is reported as one line by the command; Dask's
    # own log records of it (tracebacks included, from several loggers) would bury it.
    import logging

    from bytepair.counts.cluster import connect

    previous = logging.root.manager.disable
    logging.disable(logging.CRITICAL)
    try:
        client = connect(address)
        try:
            yield client
        finally:
            client.close()
    finally:
        logging.disable(previous)


@contextlib.contextmanager
def skip_hint(args):
    """A file that is not text stops the run; its message says how to leave such files out."""
    try:
        yield
    except ValueError as exc:
        message = str(exc)
        if hasattr(args, "skip_unreadable") and not args.skip_unreadable and (
                "invalid UTF-8" in message or "not a readable gzip file" in message):
            raise InputError(*parts_of(exc), "; --skip-unreadable leaves out such files") from None
        raise


def reading_options(command: argparse.ArgumentParser) -> None:
    """``--jsonl-field`` and the reading options of :func:`corpus_options` without a cluster:
    for commands that read text files themselves (``learn-words``, ``evaluate``'s samples)."""
    command.add_argument("--jsonl-field", metavar="NAME",
                         help="text field of JSON Lines records (default: text)")
    corpus_options(command, cluster=False)


def corpus_options(command: argparse.ArgumentParser, cluster: bool = True) -> None:
    """Options that ``train`` and ``count`` share for Parquet input, unreadable files and clusters."""
    command.add_argument("--skip-unreadable", action="store_true",
                         help="leave out files that are not UTF-8 text (or not readable gzip) "
                         "and say which, instead of stopping at the first (reads them once more "
                         "first)")
    command.add_argument("--text-column", metavar="NAME",
                         help="string column of Parquet files holding the documents (default: text)")
    if not cluster:
        return
    command.add_argument("--scheduler", metavar="ADDRESS",
                         help="count on the Dask cluster whose scheduler is at ADDRESS "
                         "(tcp://host:8786); workers must be able to read the FILEs")


def add_trust_pattern(command: argparse.ArgumentParser) -> None:
    command.add_argument("--trust-pattern", action="store_true",
                         help="accept a custom regex pattern in a model or count file (it could "
                         "run for exponential time on some text; named patterns need no trust)")


def add_model_pattern(command: argparse.ArgumentParser) -> None:
    """``--pattern`` and ``--special``: what a tiktoken ranks file given as MODEL does not hold."""
    command.add_argument("--pattern", type=model_pattern_option, metavar="NAME|REGEX",
                         help="MODEL is a tiktoken ranks file, which holds no pattern: split text "
                         f"with this one ({PATTERN_CHOICES.replace('|REGEX', '')}, tiktoken's "
                         "cl100k_base, o200k_base, r50k_base, p50k_base, or a regex)")
    command.add_argument("--special", action="append", metavar="TOKEN|FILE.json",
                         help="MODEL is a tiktoken ranks file, which holds no special tokens: "
                         "this one (repeatable; IDs after the ranks, in order), or the JSON file "
                         "of token -> ID that 'export --to tiktoken' writes beside the ranks "
                         "(MODEL.special_tokens.json)")
