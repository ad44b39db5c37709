"""Export: a directory that ``transformers.AutoTokenizer.from_pretrained`` loads.

The directory holds ``tokenizer.json`` (:func:`bytepair.to_tokenizers_json`),
``tokenizer_config.json`` (the class to load, the special-token roles) and
``special_tokens_map.json``. It is built in a temporary directory next to the
target and renamed into place, so a failed export leaves nothing behind.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from bytepair.formats.export import as_tokenizer, tokenizers_json
from bytepair.model.models import ByteModel
from bytepair.model.spm_model import SentencePieceModel
from bytepair.model.tokenizer import Tokenizer

#: The roles a special token can take, as ``transformers`` names them.
ROLES = ("bos", "eos", "unk", "pad")
#: The special token that takes the eos and pad roles when none is named.
END_OF_TEXT = "<|endoftext|>"


def transformers_roles(tokenizer: Tokenizer | ByteModel, *, eos: str | None = None, bos: str | None = None,
                       pad: str | None = None, unk: str | None = None) -> dict[str, str]:
    """Role (``"eos_token"``, ...) -> special token; :data:`END_OF_TEXT` is eos and pad by default.

    Each name must be one of the tokenizer's special tokens (ValueError naming
    the role otherwise).
    """
    specials = as_tokenizer(tokenizer).special_tokens
    given = {"bos": bos, "eos": eos, "unk": unk, "pad": pad}
    if END_OF_TEXT in specials:
        given["eos"] = END_OF_TEXT if eos is None else eos
        given["pad"] = END_OF_TEXT if pad is None else pad
    roles = {}
    for role in ROLES:
        token = given[role]
        if token is None:
            continue
        if token not in specials:
            known = ", ".join(repr(t) for t in specials) or "none"
            raise ValueError(f"{role}: {token!r} is not a special token of this tokenizer "
                             f"(its special tokens: {known})")
        roles[f"{role}_token"] = token
    return roles


def to_transformers(tokenizer: Tokenizer | ByteModel | SentencePieceModel, directory: str | os.PathLike, *, eos: str | None = None,
                    bos: str | None = None, pad: str | None = None, unk: str | None = None,
                    model_max_length: int | None = None) -> None:
    """Write a directory for ``transformers.AutoTokenizer.from_pretrained(directory)``.

    Args:
        tokenizer: a :class:`bytepair.Tokenizer` (or a ByteModel, with no special tokens).
        directory: the directory to create; it must not exist, or be empty.
        eos: the special token that ends a text for ``transformers``
            (``eos_token``); by default ``<|endoftext|>`` when the tokenizer
            has it.
        bos: the special token that begins a text (``bos_token``).
        pad: the special token that pads a batch (``pad_token``); by default
            ``<|endoftext|>`` when the tokenizer has it.
        unk: the special token for unknown input (``unk_token``; byte-level
            BPE never needs one).
        model_max_length: the longest input the model takes, written for
            ``transformers`` (which otherwise assumes no limit).

    A sentencepiece BPE model (:class:`bytepair.model.spm_model.SentencePieceModel`) is
    written with its tokenizer.json (:mod:`bytepair.formats.spm_export`) and its roles from
    its pieces (:func:`bytepair.formats.spm_export.sentencepiece_roles`): it gives the IDs of
    ``SentencePieceProcessor.encode``.

    The tokenizer loads as ``PreTrainedTokenizerFast`` and gives the IDs of
    ``tokenizer.encode(text, allowed_special="all")``; decoding gives the text
    back exactly (``clean_up_tokenization_spaces`` is off). What the
    ``tokenizer.json`` export refuses is refused here (ValueError), before
    anything is written.

    >>> import bytepair, tempfile, os
    >>> tok = bytepair.train(["low lower lowest"] * 3, merges=4, pretokenize="gpt2",
    ...                      special_tokens=["<|endoftext|>"], progress=False)
    >>> out = os.path.join(tempfile.mkdtemp(), "tok")
    >>> to_transformers(tok, out)
    >>> sorted(os.listdir(out))
    ['special_tokens_map.json', 'tokenizer.json', 'tokenizer_config.json']
    """
    if isinstance(tokenizer, SentencePieceModel):
        document, roles, added = _sentencepiece_parts(tokenizer, eos=eos, bos=bos, pad=pad, unk=unk)
    else:
        tokenizer = as_tokenizer(tokenizer)
        roles = transformers_roles(tokenizer, eos=eos, bos=bos, pad=pad, unk=unk)
        added = [(token, token_id, True) for token, token_id in tokenizer.special_tokens.items()]
        document = None
    if model_max_length is not None and (not isinstance(model_max_length, int)
                                         or isinstance(model_max_length, bool)
                                         or model_max_length < 1):
        raise ValueError(f"model_max_length must be a positive int, got {model_max_length!r}")
    target = _check_directory(directory)
    if document is None:
        document = tokenizers_json(tokenizer)
    config = {
        "tokenizer_class": "PreTrainedTokenizerFast",
        # Decoding must give the text back as it was: no spaces removed before punctuation.
        "clean_up_tokenization_spaces": False,
        **roles,
        "added_tokens_decoder": {
            str(token_id): {"content": token, "lstrip": False, "normalized": False,
                            "rstrip": False, "single_word": False, "special": special}
            for token, token_id, special in added
        },
    }
    if model_max_length is not None:
        config["model_max_length"] = model_max_length
    texts = {
        "tokenizer.json": document,
        "tokenizer_config.json": config,
        "special_tokens_map.json": roles,
    }
    _write_directory(target, {name: json.dumps(value, ensure_ascii=False, indent=2) + "\n"
                              for name, value in texts.items()})


def _sentencepiece_parts(model: SentencePieceModel, **roles) -> tuple[dict, dict, list]:
    """A sentencepiece BPE model's tokenizer.json document, roles and added tokens (its
    control and unknown pieces, special, and user-defined symbols, not special)."""
    from bytepair.formats.spm_export import sentencepiece_roles, tokenizer_json

    roles = sentencepiece_roles(model, **roles)
    document = tokenizer_json(model)
    added = [(token["content"], token["id"], token["special"]) for token in document["added_tokens"]]
    return document, roles, added


def _check_directory(directory: str | os.PathLike) -> Path:
    """``directory`` as a Path, refused when it is a file or a directory with files in it."""
    target = Path(directory)
    if not target.parent.is_dir():
        raise FileNotFoundError(f"directory: {str(target.parent)!r} does not exist")
    if target.exists() or target.is_symlink():
        if not target.is_dir() or target.is_symlink():
            raise FileExistsError(f"directory: {str(target)!r} exists and is not a directory")
        if any(target.iterdir()):
            raise FileExistsError(f"directory: {str(target)!r} exists and is not empty")
    return target


def _write_directory(target: Path, files: dict[str, str]) -> None:
    """Write ``files`` into a new directory beside ``target``, then rename it to ``target``.

    rename(2) replaces an empty directory (POSIX) and fails on a non-empty one,
    so a directory that filled up meanwhile is never overwritten.
    """
    import shutil  # at first use, as tempfile: slow at start-up
    import tempfile

    temporary = tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(temporary, 0o777 & ~umask)
        for name, text in files.items():
            with open(os.path.join(temporary, name), "w", encoding="utf-8") as handle:
                handle.write(text)
                handle.flush()
                os.fsync(handle.fileno())
        try:
            os.rename(temporary, target)
        except OSError as exc:
            if target.is_dir():  # filled up since the check
                raise FileExistsError(f"directory: {str(target)!r} is not empty") from None
            raise exc
    except BaseException:
        shutil.rmtree(temporary, ignore_errors=True)
        raise
