"""Blocks of lines encoded straight from their bytes: what ``bytepair encode --per-line`` writes."""

from __future__ import annotations

from bytepair.model import codec


def encodes_lines(model) -> bool:
    """Whether :func:`encode_lines` can encode ``model``'s lines (a named pattern, compiled)."""
    code = getattr(model, "_pattern_code", None)
    return code is not None and code != codec.PATTERN_NONE and codec.compiled()


def encode_lines(model, data: bytes | memoryview, itemsize: int, append: int | None = None, *,
                 skip: tuple[str, ...] = (), keep_ends: bool = True) -> tuple[bytes, int, int] | None:
    r"""The IDs of every line of ``data`` (UTF-8 bytes cut after each ``\n``), ``append`` after each.

    Each line is a document of its own, encoded as :meth:`ByteModel.encode`
    encodes its text; without ``keep_ends`` a line's ``\n`` or ``\r\n`` is
    left out (a lone ``\r`` is text). Returns ``(raw IDs, lines, characters)``:
    the IDs as native unsigned ints of ``itemsize`` (2 or 4) bytes. Returns
    None when the compiled encoder cannot do it alone: a model with a custom
    pattern or none, no compiled encoder, a line that holds one of ``skip``
    or one that is not UTF-8; the caller then reads the lines as text.

    No Python object is made per line and the GIL is held only to take the
    buffer, so threads encoding blocks run in parallel. O(len(data)) beside
    the merges; each call uses one piece cache of the model's pool.

    >>> import bytepair
    >>> model = bytepair.train_bytes(["ab ab ab"], 1, pretokenize="gpt2")
    >>> done = encode_lines(model, b"ab\nab", 4, append=0)  # None without the compiled encoder
    >>> done is None or (memoryview(done[0]).cast("I").tolist(), done[1], done[2]) == (
    ...     [256, 10, 0, 256, 0], 2, 5)
    True
    """
    if not encodes_lines(model):
        return None
    code, cache = model._pattern_code, model._caches.take()
    try:
        return model._codec.encode_lines_array(data, code, cache, -1 if append is None else append,
                                               itemsize, skip, keep_ends)
    finally:
        model._caches.give(cache)
