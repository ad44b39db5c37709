"""What every command shares: the parser class, argument types, the library's names for
options, and reading and writing the terminal's bytes.

A command only parses and prints: every rule about the input is the library's, and its
messages are reworded here with the option names (``vocab_size`` -> ``--vocab-size``).
"""

from __future__ import annotations

import argparse
import contextlib
import difflib
import logging
import os
import re
import shlex
import sys

from bytepair._util.validate import parse_memory, plural
from bytepair.counts.cluster import connect
from bytepair.formats.imports import TIKTOKEN_NAMES, read_special_tokens
from bytepair.formats.load import load
from bytepair.model.models import ByteModel
from bytepair.model.tokenizer import Tokenizer
from bytepair.read.corpus import Files, files_named
from bytepair.split.pretokenize import PATTERNS

PATTERN_CHOICES = "none|" + "|".join(PATTERNS) + "|REGEX"

#: The library's argument names, as the options that set them.
OPTION_NAMES = {
    "vocab_size": "--vocab-size", "merges": "--merges", "special_tokens": "--special",
    "pretokenize": "--pretokenize", "min_frequency": "--min-frequency", "workers": "--workers",
    "jsonl_field": "--jsonl-field", "init": "--init", "allowed_special": "--allow-special",
    "threads": "--threads", "text_column": "--text-column", "end_of_word": "--end-of-word",
    "superbpe": "--superbpe", "superbpe_pretokenize": "--superbpe-pretokenize",
    "max_words": "--max-words", "max_memory": "--max-memory",
    # evaluate's
    "samples": "--sample", "sizes": "--sizes", "reference": "--reference", "plot": "--plot",
}
_PYTHON_NAME = re.compile(r"(?<![\w-])(" + "|".join(OPTION_NAMES)
                          + r")(?:\[(\d+)\])?(?=:| must| =| names| was )")
#: Python in library messages, as this command line says it.
_PYTHON_PHRASES = (
    ("pretokenize=None", "--pretokenize none"),
    ("pass allowed_special", "pass --allow-special"),
    ("disallowed_special=()", "--ordinary"),
    ("pass trust_pattern=True", "pass --trust-pattern"),
    ("a custom regex is a regex.compile(...) pattern or a str with regex characters",
     "a custom regex is any value with a regex character, such as '\\w+|\\W+'"),
    ("read it with bytepair.PieceCounts.load, or train a model from it (bytepair.train(table, ...))",
     "train a model from it with 'bytepair train --counts'"),
)


def in_option_names(message: str) -> str:
    """A library message with its argument names written as this command line's options.

    >>> in_option_names("special_tokens[1] must be a non-empty str, got ''")
    "--special #2 must be a non-empty str, got ''"
    """
    def option(match) -> str:
        name = OPTION_NAMES[match.group(1)]
        return name if match.group(2) is None else f"{name} #{int(match.group(2)) + 1}"

    message = _PYTHON_NAME.sub(option, message)
    for python, here in _PYTHON_PHRASES:
        message = message.replace(python, here)
    return message


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


#: Suffixes of a size: ``k`` and ``M`` are decimal (32k = 32,000, as "a 32k vocabulary" is
#: usually meant), ``Ki`` and ``Mi`` binary (32Ki = 32,768).
SIZE_UNITS = {"k": 1000, "K": 1000, "M": 1000**2, "Ki": 1024, "ki": 1024, "Mi": 1024**2}
_SIZE = re.compile(r"\s*([0-9][0-9_]*)\s*(" + "|".join(SIZE_UNITS) + r")?\s*")


def size_number(text: str) -> int:
    """An integer, or a number of thousands or of 1,024s (:data:`SIZE_UNITS`).

    >>> size_number("32k"), size_number("32Ki"), size_number("8192")
    (32000, 32768, 8192)
    """
    match = _SIZE.fullmatch(text)
    if match is None:
        return int(text)  # ValueError; also takes a sign, whose limits are the library's
    return int(match.group(1)) * SIZE_UNITS.get(match.group(2) or "", 1)


def size(text: str) -> int:
    """A vocabulary size or a number of merges: ``32768``, ``32k`` (32,000) or ``32Ki`` (32,768)."""
    try:
        return size_number(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected an integer such as 32768, 32k (32,000) or 32Ki (32,768), got {text!r}"
        ) from None


def vocab_sizes(text: str) -> list[int]:
    """One vocabulary size, or several separated by commas (each may be written ``32k`` or
    ``32Ki``, :func:`size_number`); their limits are the library's."""
    sizes = []
    for item in text.split(","):
        try:
            sizes.append(size_number(item))
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"expected an integer or integers separated by commas (32768, 32k = 32,000, "
                f"32Ki = 32,768), got {text!r}") from None
    return sizes


def pattern_option(text: str) -> str:
    """A ``--pretokenize`` value: tiktoken's encoding names (``cl100k_base``) are read as the
    pattern they use; anything else is the library's to check."""
    return TIKTOKEN_NAMES.get(text, text)


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
    if isinstance(exc, OSError) and exc.strerror and exc.filename is not None:
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
    special_tokens = special_tokens_option(special)
    with naming(name):
        try:
            return load(path, trust_pattern=trust_pattern, pattern=pattern,
                        special_tokens=special_tokens)
        except ValueError as exc:
            if str(exc).startswith("pattern:"):  # the library's argument is this option
                raise ValueError(f"--{exc}") from None
            raise


def special_tokens_option(special: list[str] | None):
    """``--special`` of a command that loads a model: tokens (IDs after the ranks, in order),
    or one JSON file of token -> ID (``tok.tiktoken.special_tokens.json``, as ``export --to
    tiktoken`` writes it)."""
    if not special:
        return None
    files = [value for value in special if value.endswith(".json")]
    if not files:
        return special
    if len(special) > 1:
        raise ValueError(f"--special: give either tokens or one JSON file of special tokens, "
                         f"not both ({files[0]!r} and {len(special) - 1} more)")
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
    if isinstance(model, ByteModel):
        return Tokenizer(model)
    if type(model).__name__ == "SentencePieceModel":
        raise ValueError(f"{path!r} is a sentencepiece model: this command reads bytepair models; "
                         "'bytepair inspect' shows it, bytepair.load(path).encode(text) encodes with it")
    if not isinstance(model, Tokenizer):
        raise ValueError(f"{path!r} is a word-mode model, which has no token IDs{need}: "
                         "'bytepair encode' prints its symbols, 'inspect' and 'vocab' list its rules")
    return model


def argument_bytes(text: str) -> bytes:
    # POSIX hands arguments over as bytes; Python decodes them with surrogateescape.
    return text.encode("utf-8", "surrogateescape")


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
    patterns = args.files if patterns is None else patterns
    files = files_named(name, *patterns, per_line=getattr(args, "per_line", False),
                        jsonl_field=args.jsonl_field, text_column=args.text_column,
                        skip_unreadable=args.skip_unreadable)
    if files.skipped and not getattr(args, "quiet", False):
        shown = ", ".join(f"{str(path)!r} ({why})" for path, why in files.skipped[:SKIPPED_SHOWN])
        more = len(files.skipped) - SKIPPED_SHOWN
        print(f"bytepair: skipped {plural(len(files.skipped), 'file')} that "
              f"{'is' if len(files.skipped) == 1 else 'are'} not UTF-8 text: {shown}"
              + (f" and {more:,} more" if more > 0 else ""), file=sys.stderr)
    return files


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
            raise ValueError(f"{message}; --skip-unreadable leaves out such files") from None
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
    command.add_argument("--pattern", metavar="NAME|REGEX",
                         help="MODEL is a tiktoken ranks file, which holds no pattern: split text "
                         f"with this one ({PATTERN_CHOICES.replace('|REGEX', '')}, tiktoken's "
                         "cl100k_base, o200k_base, r50k_base, p50k_base, or a regex)")
    command.add_argument("--special", action="append", metavar="TOKEN|FILE.json",
                         help="MODEL is a tiktoken ranks file, which holds no special tokens: "
                         "this one (repeatable; IDs after the ranks, in order), or the JSON file "
                         "of token -> ID that 'export --to tiktoken' writes beside the ranks "
                         "(MODEL.special_tokens.json)")
