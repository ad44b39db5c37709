"""An extended tokenizer (:func:`bytepair.extend`), and writing it in its base's format.

:class:`Extension` is a base (:class:`bytepair.formats.bases.Base`) with new merges appended:
every base token keeps its ID and bytes, every base merge its rank. It writes

- a ``tokenizer.json`` base as that file with only ``model.vocab`` and ``model.merges``
  changed (the added tokens are folded into the vocabulary at their IDs, as Hugging Face's
  ``BpeTrainer`` writes its special tokens, so that tokens added later find them);
- a ``transformers`` directory as a directory: every file carried over (``tokenizer_config.json``,
  the special tokens map, the chat template), ``tokenizer.json`` extended;
- a tiktoken base as a ranks file (ranks are the IDs) and its special-tokens file;
- a bytepair base as a bytepair model file;

or any of these with ``to=``, when the extension can be written there exactly.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterable
from itertools import repeat
from pathlib import Path

from bytepair._util.atomic import write_atomically
from bytepair.formats.bases import Base
from bytepair.formats.export import token_string
from bytepair.learn.incremental import gc_paused
from bytepair.learn.rules import Merge
from bytepair.model.models import BYTE_TOKENS, ByteModel
from bytepair.model.tokenizer import Tokenizer

#: The formats an extension is written in.
FORMATS = ("tokenizers", "transformers", "tiktoken", "bytepair")


class Extension:
    """A base tokenizer (``base``) with ``rules`` appended (each a :class:`Merge` in the
    base's IDs; ``token_id`` may be a token the base has already, when the two sides spell it).
    ``spellings`` maps each rule's ``token_id`` to the bytes it spells; those of tokens the
    base lacks are the new tokens.

    ``added``: how many tokens are new; ``embedding_rows``: the rows an embedding matrix
    needs (the largest ID + 1).
    """

    def __init__(self, base: Base, rules: list[Merge], spellings: dict[int, bytes]):
        self.base = base
        self.rules = rules
        known = base.ids
        self.new_tokens = {m.token_id: spellings[m.token_id] for m in rules
                           if m.token_id not in known}

    def __repr__(self) -> str:
        return (f"Extension({self.base.kind}, {self.base.size} + {self.added} tokens, "
                f"{len(self.rules)} new merges)")

    @property
    def added(self) -> int:
        return len(self.new_tokens)

    @property
    def vocab_size(self) -> int:
        return self.base.size + self.added

    @property
    def embedding_rows(self) -> int:
        return max(self.base.ids | set(self.new_tokens)) + 1

    def intermediate(self) -> list[int]:
        """New tokens that encoding the training text with the extension never gives: each
        was made only to be joined again. From the rules' replacement counts. O(rules).

        The pieces held a token ``t`` as often as its rules replaced pairs by it, less the
        pairs of later rules that consumed it (twice for a pair of ``t`` with itself)."""
        held: dict[int, int] = {}
        for m in self.rules:
            if m.token_id in self.new_tokens:
                held[m.token_id] = held.get(m.token_id, 0) + m.replacements
            for side in (m.left, m.right):
                if side in held:
                    held[side] -= m.replacements
        return sorted(token_id for token_id, count in held.items() if count == 0)

    def as_base(self) -> Base:
        """The extension as a base of its own (to encode with, or to extend again)."""
        tokens = dict(self.base.tokens)
        tokens.update(self.new_tokens)
        merges = self.base.merges + [(m.left, m.right, m.token_id) for m in self.rules]
        return Base(self.base.kind, tokens, merges, list(self.base.added), self.base.pattern,
                    self.base.normalizer, self.base.ignore_merges, self.base.source,
                    self.base.directory, self.base.then)

    def encode(self, text: str) -> list[int]:
        """``text`` encoded with the extension, in the base's IDs, as the saved file encodes it
        (added tokens matched, no post-processor). The first call builds the encoder."""
        if getattr(self, "_extended", None) is None:
            self._extended = self.as_base()
        return self._extended.encode(text)

    def decode(self, ids: Iterable[int], errors: str = "replace") -> str:
        """The text of ``ids`` (base, added and new tokens); bytes that are not UTF-8 follow
        ``errors``, as ``bytes.decode``. O(IDs + bytes)."""
        spelled = self.base.spellings()
        try:
            data = b"".join(self.new_tokens[i] if i in self.new_tokens else spelled[i]
                            for i in ids)
        except KeyError as exc:
            raise ValueError(f"ID {exc.args[0]} is not in the vocabulary "
                             f"(0 to {self.embedding_rows - 1})") from None
        return data.decode("utf-8", errors=errors)

    def tokenizer(self) -> Tokenizer:
        """The extension as a bytepair :class:`Tokenizer` (same IDs). Refused (ValueError)
        when bytepair's model cannot hold it: a new merge that makes a token the base has,
        a token no merge makes, IDs with gaps, or a normalizer."""
        base = self.base
        if base.normalizer is not None:
            raise ValueError(f"a bytepair Tokenizer has no normalizer, and this base has "
                             f"{base.normalizer}")
        if base.then:
            raise ValueError("a bytepair Tokenizer splits with one pattern, and this base's "
                             "pre-tokenizer runs several in turn")
        inner = base._inner
        if inner is None:
            raise ValueError("the base's merges are not ordinary BPE (a merge joins a token no "
                             "earlier merge made, or makes one again)")
        lefts, rights, outer = list(inner[0]), list(inner[1]), list(inner[2])
        inner_of = {token_id: i for i, token_id in enumerate(outer)}
        for m in self.rules:
            if m.token_id in inner_of:
                raise ValueError(f"new merge {m.rank} makes token {m.token_id}, which the base "
                                 f"has already; a bytepair model gives each merge a token of "
                                 f"its own")
            inner_of[m.token_id] = len(outer)
            lefts.append(inner_of[m.left])
            rights.append(inner_of[m.right])
            outer.append(m.token_id)
        stray = set(base.tokens) - set(outer)
        if stray:
            token_id = min(stray)
            raise ValueError(f"the base's token {base.tokens[token_id]!r} (ID {token_id}) is "
                             f"made by no merge; a bytepair model holds only tokens its merges "
                             f"make")
        ids = outer + [token_id for _, token_id in base.added]
        with gc_paused():  # a Merge per rule: collections would walk them again and again
            rules = list(map(Merge, range(len(lefts)), lefts, rights,
                             range(BYTE_TOKENS, BYTE_TOKENS + len(lefts)), repeat(0), repeat(0)))
            return Tokenizer(ByteModel(rules, pattern=base.pattern),
                             [content for content, _ in base.added], ids=ids)

    # -- writing ---------------------------------------------------------------

    def tokenizers_document(self) -> dict:
        """The ``tokenizer.json`` document: the base's with the vocabulary and merges extended."""
        base = self.base
        if base.kind not in ("tokenizers", "transformers"):
            from bytepair.formats.export import tokenizers_json

            return tokenizers_json(self.tokenizer())
        # Only the model's vocabulary and merges change: the rest is shared with the base.
        document = dict(base.source)
        model = document["model"] = dict(base.source["model"])
        vocab = dict(model["vocab"])
        taken = set(vocab.values())
        for content, token_id in base.added:
            if token_id not in taken:
                vocab.setdefault(content, token_id)
        for token_id, data in self.new_tokens.items():
            vocab[token_string(data)] = token_id
        model["vocab"] = dict(sorted(vocab.items(), key=lambda item: item[1]))
        spelled = {token_id: string for string, token_id in vocab.items()}
        merges = list(model.get("merges") or [])
        as_strings = bool(merges) and isinstance(merges[0], str)
        for m in self.rules:
            pair = [spelled[m.left], spelled[m.right]]
            merges.append(" ".join(pair) if as_strings else pair)
        model["merges"] = merges
        return document

    def save(self, path: str | os.PathLike, to: str | None = None) -> str:
        """Write the extension to ``path`` in ``to`` (default: the base's own format); returns
        the format written. A directory for ``transformers``; for ``tiktoken`` the ranks file
        and ``<path>.special_tokens.json`` beside it when there are special tokens."""
        to = to or ("tokenizers" if self.base.kind == "tokenizers" else self.base.kind)
        if to not in FORMATS:
            raise ValueError(f"to must be one of {', '.join(FORMATS)}, got {to!r}")
        if to == "tokenizers":
            # Without indent: json's compiled encoder (an indented file took seconds to write).
            text = json.dumps(self.tokenizers_document(), ensure_ascii=False)
            write_atomically(path, text)
        elif to == "transformers":
            self._save_directory(Path(path))
        elif to == "tiktoken":
            from bytepair.formats.export import to_tiktoken

            to_tiktoken(self.tokenizer(), path)  # refused unless tiktoken encodes it exactly
        else:
            self.tokenizer().save(path)
        return to

    def _save_directory(self, target: Path) -> None:
        """A transformers directory: the base's files carried over, tokenizer.json extended."""
        document = self.tokenizers_document()
        if target.exists() and any(target.iterdir()):
            raise ValueError(f"output directory {os.fspath(target)!r} is not empty")
        source = self.base.directory
        staging = target.with_name(target.name + ".partial")
        shutil.rmtree(staging, ignore_errors=True)
        try:
            if source is not None:
                shutil.copytree(source, staging)
            else:
                from bytepair.formats.transformers_dir import to_transformers

                to_transformers(self.tokenizer(), staging)
            (staging / "tokenizer.json").write_text(json.dumps(document, ensure_ascii=False),
                                                    encoding="utf-8")
            if target.exists():
                target.rmdir()
            staging.rename(target)
        except BaseException:  # Ctrl-C and SIGTERM too: no half-written directory is left
            shutil.rmtree(staging, ignore_errors=True)
            raise
