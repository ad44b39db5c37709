"""bytepair and its peers as trainers of the benchmark report (the peers suite).

Each entry is a ``report.Trainer``: ``prepare(path, options)`` is untimed,
``train(prepared, merges, options)`` is the timed job, ``tokens(result)``
gives the learned vocabulary as byte strings (to check that peers learn
what bytepair learns). ``options`` holds ``mode`` and ``threads``:

* ``mode="gpt2"``: the GPT-2 split, one document per line (the line end is
  not part of the text; in Hugging Face's file reader it is, as a piece of its
  own that holds no pair, so the pair counts are the same).
* ``mode="bytes"``: the course's byte mode: no pre-tokenizer, each line one
  document (one "word"), without its line end.
* ``mode="whitespace"``: gigabpe's ``pretokenizer="whitespace"``, which cuts at
  white space only (Hugging Face's ``WhitespaceSplit``: ``ab,`` is one piece),
  one document per line; only bytepair (the named pattern ``whitespace-split``,
  ``\\S+``, which keeps the white space between pieces as pieces of their own)
  and gigabpe run it. gigabpe learns characters there,
  not bytes: the same pieces, another alphabet.
* ``threads``: bytepair's ``workers=``; ``RAYON_NUM_THREADS`` for the Rust
  peers (the runner sets it in the worker's environment); ``threads=`` for
  gigabpe; ``n_threads`` / ``num_threads`` for YouTokenToMe and sentencepiece.

Every peer is counted as bytepair counts: ``merges`` rules learned on top of
the initial alphabet (256 bytes for the byte-level trainers, so vocab_size is
256 + merges; the corpus's characters for the two character-level ones), no
special tokens. This module imports nothing from ``report`` (which imports it).
"""

from __future__ import annotations

import io
import tempfile
import time
from functools import lru_cache
from pathlib import Path

import bytepair
from bytepair.learn import incremental

from . import corpus

#: GPT-2's split, as in bytepair.split.pretokenize.PATTERNS["gpt2"] and Hugging
#: Face's ByteLevel(use_regex=True).
GPT2 = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""
#: For peers that always split with a regex: the whole document is one piece.
WHOLE = r"[\s\S]+"


def _mode(options: dict) -> str:
    return options.get("mode", "gpt2")


def _threads(options: dict) -> int:
    return int(options.get("threads", 1))


def text_lines(path: Path):
    """The file's lines as ``str`` without their line ends (bytepair's per_line)."""
    with open(path, encoding="utf-8", newline="") as f:
        for line in f:
            yield line.rstrip("\r\n") if line.endswith("\n") else line


def _keep_path(path: Path, options: dict) -> Path:
    """Prepare nothing: the trainer reads the file itself (timed)."""
    return Path(path)


# --------------------------------------------------------------------------- bytepair

#: Seconds per stage of the current run, filled by the wrappers below.
_STAGES: dict[str, float] = {}


def _timed(name: str, function):
    def wrapper(*args, **kwargs):
        started = time.perf_counter()
        try:
            return function(*args, **kwargs)
        finally:
            _STAGES[name] = _STAGES.get(name, 0.0) + time.perf_counter() - started

    wrapper.__wrapped__ = function
    return wrapper


def _bytepair_prepare(path: Path, options: dict) -> Path:
    """Wrap the stages that ``bytepair.train`` calls, to time them in the timed run.

    The counting door (:mod:`bytepair.counts.sources`) looks ``count_pieces`` /
    ``count_files`` (one worker / several) up in its module's globals at each
    call, the trainer looks up ``learn_counts`` (``_learn`` of ``bytepair.training``
    before the trainer was a class) in its own, and ``learn_counts`` calls ``PieceCounts.flat``, ``IncrementalEngine.taking_arrays`` or
    ``from_arrays`` (the engine build) and ``IncrementalEngine.steps`` (the
    merges) through their class, so wrapping them there times the real calls
    at the cost of one Python call each.
    """
    for module, name, stage in _stage_functions():
        function = getattr(module, name)
        if not hasattr(function, "__wrapped__"):
            setattr(module, name, _timed(stage, function))
    # An older bytepair (measured with --library) named the engine IncrementalTrainer.
    trainer = getattr(incremental, "IncrementalEngine", None) or incremental.IncrementalTrainer
    if not hasattr(trainer.steps, "__wrapped__"):
        trainer.steps = _timed("steps", trainer.steps)
        # The bound classmethods (the engine built from arrays, or from a list of them
        # it empties), wrapped and put back as plain functions of the class.
        for build in ("from_arrays", "taking_arrays"):
            if hasattr(trainer, build):  # an older bytepair has no taking_arrays
                setattr(trainer, build, staticmethod(_timed("build", getattr(trainer, build))))
        bytepair.PieceCounts.flat = _timed("flat", bytepair.PieceCounts.flat)
    return Path(path)


def _stage_functions() -> list[tuple]:
    """``(module, name, stage)`` of the functions to time, in this bytepair or an older one."""
    import importlib

    try:
        sources = importlib.import_module("bytepair.counts.sources")
        trainer = importlib.import_module("bytepair.training.trainer")
    except ImportError:  # before the trainer: every stage was looked up in bytepair.training
        old = importlib.import_module("bytepair.training")
        return [(old, "count_pieces", "count_pieces"), (old, "count_files", "count_files"),
                (old, "_learn", "learn")]
    return [(sources, "count_pieces", "count_pieces"), (sources, "count_files", "count_files"),
            (trainer, "learn_counts", "learn")]


def _bytepair_stages() -> dict:
    """The last run's stages (and reset), in seconds: ``count`` (read, split and count
    the pieces), ``learn`` (all of what follows), split into ``flat`` (the table laid
    out as flat arrays), ``build`` (the engine built from them: token lists, pair
    counts, occurrence lists, the first queue) and ``merges`` (the merge loop)."""
    out = dict(count=_STAGES.get("count_pieces", 0.0) + _STAGES.get("count_files", 0.0),
               learn=_STAGES.get("learn", 0.0), flat=_STAGES.get("flat", 0.0),
               build=_STAGES.get("build", 0.0), merges=_STAGES.get("steps", 0.0))
    _STAGES.clear()
    return out


#: bytepair's ``pretokenize=`` for each mode.
_BYTEPAIR_PATTERN = {"gpt2": "gpt2", "bytes": None, "whitespace": "whitespace-split"}


def _bytepair_train(path: Path, merges: int, options: dict):
    return bytepair.train(str(path), merges=merges, pretokenize=_BYTEPAIR_PATTERN[_mode(options)],
                          per_line=True, workers=_threads(options), progress=False)


def _bytepair_digest(tok) -> dict:
    return dict(learned=len(tok.merges), vocab=tok.vocab_size)


def _bytepair_tokens(tok) -> list[bytes]:
    return [tok.token_bytes(i) for i in range(256, 256 + len(tok.merges))]


def _train_bytes_prepare(path: Path, options: dict) -> list[bytes]:
    return corpus.documents(Path(path).read_bytes())


def _train_bytes_train(documents, merges: int, options: dict):
    return bytepair.train_bytes(documents, merges)


def _train_bytes_digest(model) -> dict:
    return dict(learned=len(model.merges))


def _train_bytes_tokens(model) -> list[bytes]:
    return [model.token_bytes(256 + i) for i in range(len(model.merges))]


# --------------------------------------------------------------------------- Hugging Face


@lru_cache(maxsize=1)
def _byte_level_decoder() -> dict[str, int]:
    """GPT-2's printable stand-ins for the 256 bytes (ByteLevel's alphabet), inverted."""
    printable = (list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1))
                 + list(range(ord("®"), ord("ÿ") + 1)))
    chars, extra = {}, 0
    for b in range(256):
        if b in printable:
            chars[b] = chr(b)
        else:
            chars[b] = chr(256 + extra)
            extra += 1
    return {c: b for b, c in chars.items()}


def _hf_train(path: Path, merges: int, options: dict):
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers

    gpt2 = _mode(options) == "gpt2"
    tok = Tokenizer(models.BPE())
    # use_regex=True is GPT-2's split; False keeps each document one word.
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=gpt2)
    trainer = trainers.BpeTrainer(vocab_size=256 + merges, show_progress=False, special_tokens=[],
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    if gpt2:
        tok.train([str(path)], trainer)  # its own file reader, one sequence per line
    else:
        # Its file reader keeps each line's "\n", which would join the line's
        # word and add (last byte, "\n") pairs: feed the lines without it.
        tok.train_from_iterator(text_lines(path), trainer)
    return tok


def _hf_digest(tok) -> dict:
    return dict(learned=tok.get_vocab_size() - 256, vocab=tok.get_vocab_size())


def _hf_tokens(tok) -> list[bytes]:
    decode = _byte_level_decoder()
    return [bytes(decode[c] for c in token) for token in tok.get_vocab() if len(token) > 1]


# --------------------------------------------------------------------------- gigabpe


def _gigabpe_prepare(path: Path, options: dict) -> dict:
    """The file and the size of its alphabet (untimed).

    gigabpe, like Hugging Face without ``initial_alphabet``, starts from the
    symbols the corpus holds, not from all 256 bytes, and counts them in
    ``vocab_size``: byte-level, the distinct bytes of the file (its line
    ends included: its file reader keeps them, as pieces of their own);
    whitespace, the distinct characters that are not white space.
    """
    if _mode(options) == "whitespace":
        chars: set[str] = set()
        with open(path, encoding="utf-8", newline="") as f:
            while block := f.read(1 << 22):
                chars.update(block)
        symbols = sum(not c.isspace() for c in chars)
    else:
        seen = bytearray(256)
        with open(path, "rb") as f:
            while block := f.read(1 << 22):
                for b in set(block):
                    seen[b] = 1
        symbols = sum(seen)
    return dict(path=Path(path), symbols=symbols)


def _gigabpe_train(prepared: dict, merges: int, options: dict):
    import gigabpe

    return gigabpe.train_bpe(
        [str(prepared["path"])], prepared["symbols"] + merges,
        pretokenizer="whitespace" if _mode(options) == "whitespace" else "bytelevel",
        threads=_threads(options), special_tokens=[])


def _gigabpe_digest(result) -> dict:
    vocab, merges = result
    return dict(learned=len(merges), vocab=len(vocab))


def _gigabpe_tokens(result) -> list[bytes]:
    vocab, merges = result
    decode = _byte_level_decoder()
    out = []
    for left, right in merges:
        token = left + right
        try:
            out.append(bytes(decode[c] for c in token))
        except KeyError:  # whitespace mode: characters, not byte-level stand-ins
            out.append(token.encode("utf-8"))
    return out


# --------------------------------------------------------------------------- rustbpe, bpeasy


def _rustbpe_train(path: Path, merges: int, options: dict):
    import rustbpe

    tok = rustbpe.Tokenizer()
    tok.train_from_iterator(text_lines(path), 256 + merges,
                            pattern=GPT2 if _mode(options) == "gpt2" else WHOLE)
    return tok


def _rustbpe_digest(tok) -> dict:
    return dict(learned=tok.vocab_size - 256, vocab=tok.vocab_size)


def _rustbpe_tokens(tok) -> list[bytes]:
    return [token for token, rank in tok.get_mergeable_ranks() if rank >= 256]


#: bpeasy drops candidate tokens longer than this; far above any line here.
BPEASY_MAX_TOKEN_LENGTH = 1 << 20


def _bpeasy_train(path: Path, merges: int, options: dict):
    import bpeasy

    return bpeasy.train_bpe(text_lines(path), GPT2 if _mode(options) == "gpt2" else WHOLE,
                            BPEASY_MAX_TOKEN_LENGTH, 256 + merges)


def _bpeasy_digest(vocab: dict) -> dict:
    return dict(learned=len(vocab) - 256, vocab=len(vocab))


def _bpeasy_tokens(vocab: dict) -> list[bytes]:
    return [token for token, rank in vocab.items() if rank >= 256]


def _bpeasy_estimate(size: int, merges: int, options: dict | None = None) -> float | None:
    # Byte mode, one thread: 78-80 s at 10 MB for 1k and 10k merges alike
    # (25-28 s with two threads), so about 8 s per MB whatever the merges.
    if options and _mode(options) == "bytes":
        return 8.0 * size / 1e6 / (3 if _threads(options) > 1 else 1)
    return None


# --------------------------------------------------------------------------- character-level peers

WORD_START = "\u2581"  # "▁", sentencepiece's and YouTokenToMe's mark for a space / word start
#: YouTokenToMe's four special tokens (pad, unk, bos, eos) sit in its vocabulary.
YTTM_SPECIALS = 4


def alphabet(path: Path, *, whitespace_splits: bool) -> int:
    """Distinct characters of the corpus (line ends excluded), read in blocks.

    With ``whitespace_splits`` (YouTokenToMe), ASCII whitespace separates
    words and is not a character of the alphabet, but "▁" is; else
    (sentencepiece) the space is "▁" and other characters stay.
    """
    chars: set[str] = set()
    with open(path, encoding="utf-8", newline="") as f:
        while block := f.read(1 << 22):
            chars.update(block)
    chars -= {"\n", "\r"}
    if whitespace_splits:
        chars -= set(" \t\v\f")
        chars.add(WORD_START)
    elif " " in chars:
        chars.discard(" ")
        chars.add(WORD_START)
    return len(chars)


def _yttm_prepare(path: Path, options: dict) -> dict:
    return dict(path=Path(path), chars=alphabet(path, whitespace_splits=True),
                model=Path(tempfile.mkdtemp(prefix="bench-yttm-")) / "model.yttm")


def _yttm_train(prepared: dict, merges: int, options: dict):
    import youtokentome

    youtokentome.BPE.train(data=str(prepared["path"]), model=str(prepared["model"]),
                           vocab_size=YTTM_SPECIALS + prepared["chars"] + merges,
                           coverage=1.0, n_threads=_threads(options))
    return prepared["model"]


def _yttm_digest(model: Path) -> dict:
    chars, learned = map(int, model.read_text().split("\n", 1)[0].split())
    return dict(learned=learned, alphabet=chars)


def _yttm_tokens(model: Path) -> list[bytes]:
    import youtokentome

    vocab = youtokentome.BPE(str(model)).vocab()[YTTM_SPECIALS:]
    return [t.replace(WORD_START, " ").encode("utf-8") for t in vocab]


def _spm_prepare(path: Path, options: dict) -> dict:
    return dict(path=Path(path), chars=alphabet(path, whitespace_splits=False))


def _spm_train(prepared: dict, merges: int, options: dict) -> bytes:
    import sentencepiece

    model = io.BytesIO()
    sentencepiece.SentencePieceTrainer.train(
        input=str(prepared["path"]), model_writer=model, model_type="bpe",
        vocab_size=1 + prepared["chars"] + merges,  # <unk>, characters, merges
        character_coverage=1.0, byte_fallback=False,
        normalization_rule_name="identity", remove_extra_whitespaces=False,
        input_sentence_size=0, max_sentence_length=1 << 16, shuffle_input_sentence=False,
        bos_id=-1, eos_id=-1, num_threads=_threads(options), minloglevel=2)
    return model.getvalue()


def _spm_pieces(model: bytes) -> list[str]:
    import sentencepiece

    sp = sentencepiece.SentencePieceProcessor(model_proto=model)
    return [sp.id_to_piece(i) for i in range(sp.get_piece_size())
            if not (sp.is_unknown(i) or sp.is_control(i) or sp.is_byte(i))]


def _spm_digest(model: bytes) -> dict:
    pieces = _spm_pieces(model)
    return dict(learned=sum(len(p) > 1 for p in pieces), alphabet=sum(len(p) == 1 for p in pieces))


def _spm_tokens(model: bytes) -> list[bytes]:
    return [p.replace(WORD_START, " ").encode("utf-8") for p in _spm_pieces(model)]


# --------------------------------------------------------------------------- the registry entries

TRAINERS = [
    dict(name="bytepair", description="bytepair.train(path, merges=..., pretokenize='gpt2' "
         "or None, per_line=True, workers=threads): reads, splits and counts (in `workers` "
         "processes), then the compiled engine learns",
         prepare=_bytepair_prepare, train=_bytepair_train, digest=_bytepair_digest,
         tokens=_bytepair_tokens, stages=_bytepair_stages, modes=("gpt2", "bytes", "whitespace"),
         modules=("bytepair",),
         setup="`bytepair.train(path, merges=M, pretokenize=\"gpt2\" | None, per_line=True, "
               "workers=T, progress=False)`; counting vs learning timed inside the same run "
               "by wrapping `count_pieces`/`count_files` and `learn`"),
    dict(name="train_bytes", description="bytepair.train_bytes(lines, merges): the course API; "
         "lines read untimed, also returns every line as tokens",
         prepare=_train_bytes_prepare, train=_train_bytes_train, digest=_train_bytes_digest,
         tokens=_train_bytes_tokens, modes=("bytes",), modules=("bytepair",),
         setup="`bytepair.train_bytes(lines, M)` on the lines read beforehand (untimed, so "
               "the corpus is in its RSS); it also returns every line's token sequence"),
    dict(name="hf", description="Hugging Face tokenizers BpeTrainer",
         prepare=_keep_path, train=_hf_train, digest=_hf_digest, tokens=_hf_tokens,
         modes=("gpt2", "bytes"), modules=("tokenizers",),
         setup="`BpeTrainer(vocab_size=256+M, initial_alphabet=ByteLevel.alphabet(), "
               "special_tokens=[])`; GPT-2: `ByteLevel(add_prefix_space=False)` (its GPT-2 "
               "regex) and `Tokenizer.train([path])`; bytes: `ByteLevel(add_prefix_space=False, "
               "use_regex=False)` and `train_from_iterator` over the lines without their "
               "`\\n`; threads: `RAYON_NUM_THREADS`"),
    dict(name="gigabpe", description="gigabpe.train_bpe (Rust; the same rules as Hugging Face's "
         "BpeTrainer)",
         prepare=_gigabpe_prepare, train=_gigabpe_train, digest=_gigabpe_digest,
         tokens=_gigabpe_tokens, modes=("gpt2", "whitespace"), modules=("gigabpe",),
         setup="`gigabpe.train_bpe([path], A+M, pretokenizer=\"bytelevel\" | \"whitespace\", "
               "threads=T, special_tokens=[])`: its own file reader, one sequence per line (the "
               "line end kept, a piece of its own as in Hugging Face); A = the symbols the corpus "
               "holds (distinct bytes; whitespace: distinct non-space characters), counted "
               "untimed, since it starts from those and not from all 256 bytes"),
    dict(name="rustbpe", description="rustbpe (nanochat) Tokenizer.train_from_iterator",
         prepare=_keep_path, train=_rustbpe_train, digest=_rustbpe_digest, tokens=_rustbpe_tokens,
         modes=("gpt2", "bytes"), modules=("rustbpe",),
         setup="`Tokenizer().train_from_iterator(lines, 256+M, pattern=GPT2)` over the lines "
               "read in Python (timed); bytes: `pattern=r\"[\\s\\S]+\"` (each line one piece); "
               "threads: `RAYON_NUM_THREADS`"),
    dict(name="bpeasy", description="bpeasy.train_bpe",
         prepare=_keep_path, train=_bpeasy_train, digest=_bpeasy_digest, tokens=_bpeasy_tokens,
         modes=("gpt2", "bytes"), modules=("bpeasy",), estimate=_bpeasy_estimate,
         setup=f"`train_bpe(lines, GPT2, {BPEASY_MAX_TOKEN_LENGTH}, 256+M)` (max token length "
               "far above any line); bytes: pattern `[\\s\\S]+`; threads: `RAYON_NUM_THREADS`"),
    dict(name="yttm", description="YouTokenToMe BPE.train",
         prepare=_yttm_prepare, train=_yttm_train, digest=_yttm_digest, tokens=_yttm_tokens,
         modes=("gpt2",), modules=("youtokentome",),
         setup="`BPE.train(path, vocab_size=4+A+M, coverage=1.0, n_threads=T)`: characters, "
               "not bytes (A = the corpus's distinct non-space characters + ▁), splits on "
               "whitespace only (not GPT-2's regex), 4 special tokens; GPT-2 cases only"),
    dict(name="sentencepiece", description="sentencepiece BPE trainer",
         prepare=_spm_prepare, train=_spm_train, digest=_spm_digest, tokens=_spm_tokens,
         modes=("gpt2",), modules=("sentencepiece",),
         setup="`SentencePieceTrainer.train(model_type=\"bpe\", vocab_size=1+A+M, "
               "character_coverage=1.0, byte_fallback=False, normalization_rule_name=\"identity\", "
               "remove_extra_whitespaces=False, input_sentence_size=0, num_threads=T)`: "
               "characters, not bytes (A = distinct characters, space as ▁), its own "
               "whitespace/script/digit split, pieces of at most 16 characters (default); "
               "GPT-2 cases only"),
]
