"""``corpus_path``: a corpus by language and size, built by the module of its source."""

from __future__ import annotations

import os
from pathlib import Path

from benches.corpora.build import _custom_prefix, _prefix_of, _remove
from benches.corpora.cache import cache_dir, parse_size
from benches.corpora.english import english_path
from benches.corpora.large import LARGE_RECIPE, _large
from benches.corpora.world import LANGUAGES, WORLD_RECIPE, _language_all, _multilingual_all


def corpus_path(size: int | str | None, corpus: str | os.PathLike | None = None,
                *, rebuild: bool = False, language: str = "english", clip: bool = False) -> Path:
    """Path of the corpus of ``size`` bytes, built and cached on first use.

    With ``corpus``, that file stands in for the English recipe: returned as
    is when ``size`` is None or covers it, else its first ``size`` bytes cut
    at a line boundary, cached.

    ``language``: ``"english"`` (the English recipe), a key of ``LANGUAGES``
    or ``"multilingual"`` (the non-English recipe: ``size`` None means all of
    it; a size beyond it is an error unless ``clip``, which returns all of
    it), or ``"large"`` (the English recipe, then the multilingual text, then
    ``EXTRA_SOURCES``, then the same again: any size).
    """
    size = None if size is None else parse_size(size)
    if corpus is not None:
        return _custom_prefix(Path(corpus), size)
    if language != "english":
        return _other_path(language, size, rebuild=rebuild, clip=clip)
    if size is None:
        raise ValueError("a size is needed for the English corpus")
    return english_path(size, rebuild=rebuild)


def _other_path(language: str, size: int | None, *, rebuild: bool, clip: bool) -> Path:
    cache = cache_dir()
    if language in ("synthetic", "synthetic-web"):  # simulated text: benches/corpora/synthetic.py
        if size is None:
            raise ValueError(f"a size is needed for the {language} corpus")
        from benches.corpora import synthetic
        return synthetic.corpus_path(size, setting=language.partition("-")[2] or "english",
                                     rebuild=rebuild)
    if language == "large":
        if size is None:
            raise ValueError("a size is needed for the large corpus")
        if rebuild:
            _remove(cache / f"large-v{LARGE_RECIPE}-{size}.txt")
        return _large(size)
    if language != "multilingual" and language not in LANGUAGES:
        raise ValueError(f"no language {language!r}: english, multilingual, large or one of "
                         f"{', '.join(LANGUAGES)}")
    if rebuild:
        for old in cache.glob(f"{language}-v{WORLD_RECIPE}-*.txt"):
            _remove(old)
    full = _multilingual_all() if language == "multilingual" else _language_all(language)
    available = full.stat().st_size
    if size is None or size >= available:
        if size is not None and size > available and not clip:
            raise ValueError(f"the {language} sources hold only {available:,} bytes; "
                             f"{size:,} were requested (ask for all of it with size None, "
                             "--size all on the command line)")
        return full
    return _prefix_of(full, size, f"{language}-v{WORLD_RECIPE}-{size}.txt")


def available(language: str) -> int:
    """Bytes of all of ``language``'s text (a key of ``LANGUAGES``, or ``"multilingual"``),
    built on first use."""
    return corpus_path(None, language=language).stat().st_size


def load(size: int | str | None, corpus: str | os.PathLike | None = None) -> bytes:
    """The corpus's bytes (see :func:`corpus_path`)."""
    return corpus_path(size, corpus).read_bytes()


def documents(data: bytes) -> list[bytes]:
    """One document per line, without the line ends (byte mode's barriers).

    >>> documents(b"In the beginning\\nGod created\\n")
    [b'In the beginning', b'God created']
    """
    docs = data.split(b"\n")
    if docs and not docs[-1]:
        docs.pop()
    return docs
