"""What every trainer shares and ``import bytepair`` needs at once: ``train``'s default pattern
and the wordings of two refusals (the spec's dataclasses load only when a run starts)."""

from __future__ import annotations

from bytepair._util.errors import ArgumentError


class _DefaultPattern(str):
    """A str equal to ``"gpt2"`` that a spec tells apart from an explicit ``"gpt2"`` by
    identity: when ``pretokenize`` is not given, the count tables and ``init`` supply theirs."""

    __slots__ = ()


#: ``pretokenize`` when not given: gpt2, unless the count tables or ``init`` name another.
DEFAULT_PATTERN = _DefaultPattern("gpt2")

#: What every trainer says when there is nothing to learn from.
EMPTY_CORPUS = "corpus: no text to train on (empty corpus)"


def too_many_merges(name: str, have: int, wanted: int) -> ArgumentError:
    """The one error for a start that already has more rules than the run asks for."""
    return ArgumentError(name, f": the model already has {have:,} merges, more than the "
                               f"{wanted:,} requested")
