"""The parity-aware engine: one pair engine and one priority per language, no recount.

Equal, rule for rule, to :func:`bytepair.learn.parity_naive.fit` (which states
the rules; the choice of language is :mod:`bytepair.learn.parity_rules`).

State:

* one pair engine (:mod:`bytepair.learn.incremental`'s compiled ``PairEngine`` or
  its Python twin) per language over that language's distinct pieces and their
  counts: the language's exact pair counts and occurrence index;
* one priority per language over its engine, with the lazy, floored queue of
  :class:`bytepair.learn.incremental.IncrementalEngine`'s word mode (a queued
  pair is queued at or above its true count; stale entries are re-queued when
  they reach the front);
* one pair engine per language over its dev pieces (dev-set mode): a merge's
  weighted replacements there are exactly how much the dev text's token length
  falls, so the lengths stay current without a recount;
* during the first ``global_merges`` rules, one more engine over every piece
  with the languages' counts added, whose counts are the sums of the
  languages' (counts are linear in the weights); it is freed when that phase ends.

The loop over these (choose a language, take its best pair, merge it in every
engine, update the lengths) is ``ParityLoop``: compiled (``bytepair.learn._parity``,
many rules per call, heaps in C++) or its pure-Python twin
(:mod:`bytepair.learn._parity_py`, ``SortedList`` priorities), chosen with the
pair engine's backend. A merge is applied to every engine; each engine touches
only the occurrences of the pair it holds. Per merge the cost is that of the
plain incremental engine for each language that holds the pair, plus
O(languages x window) to choose.
"""

from __future__ import annotations

from array import array
from itertools import accumulate, islice
from operator import mul, sub
from typing import Callable, Hashable, Sequence

from bytepair._util.backend import extensions_wanted
from bytepair.counts.piece_counts import PieceCounts
from bytepair.learn import _parity_py, loop
from bytepair.learn.budget import check_engine_fits
from bytepair.learn.incremental import (
    FIRST_FLOOR_DIVISOR, FLOOR_DIVISOR, default_backend, engine_class, gc_paused,
    release_meanwhile)
from bytepair.learn.loop import Hook
from bytepair.learn.parity_rules import ParityMerge, without_text

_CompiledLoop = None
if extensions_wanted():
    try:
        from bytepair.learn._parity import ParityLoop as _CompiledLoop
    except ImportError:  # pragma: no cover - depends on how the package was installed
        pass

Corpus = tuple[Sequence[Sequence[int]], Sequence[int]]  # (sequences, weights)


def _engine(corpus: Corpus | PieceCounts, backend: str | None):
    """A pair engine over ``(sequences, weights)`` or a piece table, and its weights (for
    :meth:`ParityEngine._check`); sequences of weight 0 are left out."""
    if isinstance(corpus, PieceCounts):
        data, starts, counts = corpus.flat()
        return engine_class(backend)(data, starts, counts), counts
    sequences, weights = corpus
    kept = [(s, w) for s, w in zip(sequences, weights) if w > 0]
    starts = array("q", [0])
    starts.extend(accumulate(len(s) for s, _ in kept))
    tokens = array("I")
    for s, _ in kept:
        tokens.extend(s)
    kept_weights = array("q", (w for _, w in kept))
    return engine_class(backend)(tokens, starts, kept_weights), kept_weights


#: Engines are built on two threads when they hold this many sequences in all.
BUILD_ON_THREADS_SEQUENCES = 1 << 17


def _engines(corpora: list, backend: str):
    """:func:`_engine` of each corpus, in order. The compiled engine lays out and indexes
    its pairs without the GIL, so large ones are built two at a time."""
    sequences = sum(len(c) if isinstance(c, PieceCounts) else len(c[0]) for c in corpora)
    if backend != "compiled" or len(corpora) < 2 or sequences < BUILD_ON_THREADS_SEQUENCES:
        return [_engine(corpus, backend) for corpus in corpora]
    from concurrent.futures import ThreadPoolExecutor  # at first use, not at import

    with ThreadPoolExecutor(2, thread_name_prefix="bytepair-parity") as pool:
        return list(pool.map(lambda corpus: _engine(corpus, backend), corpora))


def _length(corpus: Corpus | PieceCounts) -> int:
    """The corpus's length in tokens, each sequence counted as often as its weight."""
    if isinstance(corpus, PieceCounts):
        # From the flat arrays: the table's dict is never built.
        _, starts, counts = corpus.flat()
        return sum(map(mul, map(sub, islice(starts, 1, None), starts), counts))
    sequences, weights = corpus
    return sum(len(s) * w for s, w in zip(sequences, weights))


def _encoded(corpus: Corpus | PieceCounts, start) -> Corpus:
    """``corpus`` as its pieces stand after ``start``'s rules (``start.encode_piece``)."""
    if isinstance(corpus, PieceCounts):
        return ([array("I", start.encode_piece(piece)) for piece in corpus],
                array("q", corpus.values()))
    sequences, weights = corpus
    return [array("I", start.encode_piece(bytes(s))) for s in sequences], weights


def _top_token(corpora: Sequence[Corpus | PieceCounts]) -> int:
    """The largest token ID in the corpora (-1 when they hold none)."""
    top = -1
    for corpus in corpora:
        if isinstance(corpus, PieceCounts):
            top = max(top, 255 if corpus else -1)  # pieces of bytes
        else:
            top = max(top, max((max(s) for s in corpus[0] if len(s)), default=-1))
    return top


class ParityEngine:
    """Learns parity-aware rules, equal to the naive reference, many rules per :meth:`steps`.

    Arguments as :func:`bytepair.learn.parity_naive.fit`; ``backend`` names the
    pair engine (``"compiled"`` or ``"python"``; default as
    :func:`bytepair.learn.incremental.default_backend`); the compiled backend runs
    the compiled loop too. Ties follow ``order`` (a :class:`TokenizersOrder`, which
    then also numbers the tokens), or ``key`` (any function of a token ID; the
    Python loop only), or else the smallest IDs.

    >>> t = ParityEngine([([b"aab"], [1]), ([b"cd"], [1])], lambda l, r, rank: 256 + rank,
    ...                   dev=[([b"ab"], [1]), ([b"cdcd"], [1])], backend="python")
    >>> [(m.left, m.right, m.language) for m in t.steps(5)]
    [(99, 100, 1), (97, 97, 0), (257, 98, 0)]
    """

    def __init__(
        self,
        languages: Sequence[Corpus | PieceCounts],
        join: Callable[[int, int, int], int] | None = None,
        *,
        dev: Sequence[Corpus | PieceCounts] | None = None,
        ratio: Sequence[float] | None = None,
        variant: str = "base",
        global_merges: int = 0,
        window_size: int = 100,
        alpha: float = 2.0,
        key: Callable[[int], Hashable] | None = None,
        order: "TokenizersOrder | None" = None,
        backend: str | None = None,
        start=None,
        history: tuple | None = None,
    ):
        if dev is not None and ratio is not None:
            raise ValueError("give dev or ratio, not both")
        if key is not None and order is not None:
            raise ValueError("give key or order, not both")
        if join is None:
            join = order.join if order is not None else byte_token
        self._join = join
        backend = backend or default_backend()
        first_rank = len(start.merges) if start is not None else 0
        # The lengths before any rule: the ratios' base, whatever rules came first.
        initial = [_length(corpus) for corpus in (dev if dev is not None else languages)]
        if first_rank:
            languages = [_encoded(corpus, start) for corpus in languages]
            dev = [_encoded(corpus, start) for corpus in dev] if dev is not None else None
            if order is not None:
                for rule in start.merges:
                    order.join(rule.left, rule.right, rule.rank)
        letters = None
        if order is not None:
            letters = order.letters()
            top = _top_token(list(languages) + list(dev or ()))
            if top >= len(letters):
                raise ValueError(f"order: token {top} has no string (the order spells "
                                 f"{len(letters)} tokens)")
        built = _engines(list(languages) + list(dev or ()), backend)
        engines, self._weights = map(list, zip(*built[:len(languages)]))
        dev_engines = None
        if dev is not None:
            dev_engines, self._weights = map(list, zip(*built[len(languages):]))
            lengths = [_length(corpus) for corpus in dev]
        else:
            lengths = [_length(corpus) for corpus in languages]
        #: Token positions held by the training engines (what memory grows with).
        self.positions = sum(_length(corpus) for corpus in languages) if dev is not None else sum(lengths)
        global_engine = None
        if global_merges > first_rank:
            if all(isinstance(corpus, PieceCounts) for corpus in languages):
                summed = sum(languages[1:], languages[0])
            else:
                summed = ([s for sequences, _ in languages for s in sequences],
                          [w for _, ws in languages for w in ws])
            global_engine = _engine(summed, backend)[0]
        loop = _CompiledLoop if backend == "compiled" and key is None else None
        arguments = (engines, dev_engines, lengths, list(ratio) if ratio is not None else None,
                     variant, global_engine, global_merges, window_size, alpha, letters,
                     True, FIRST_FLOOR_DIVISOR, FLOOR_DIVISOR)
        if loop is not None:
            self._loop = loop(*arguments)
        else:
            self._loop = _parity_py.ParityLoop(*arguments, key=key)
        if first_rank or history is not None:
            recent, exhausted = history if history is not None else ([], without_text(initial, ratio))
            self._loop.resume(first_rank, initial, recent, exhausted)
        self._engines, self._dev, self._global = engines, dev_engines, global_engine

    @property
    def rank(self) -> int:
        """The rules so far, a start's included: the next rule's rank."""
        return self._loop.rank

    def history(self) -> tuple[list[int], list[int]]:
        """What the choice of language remembers (the window's choices, the exhausted
        languages): with the rules, what a stopped run needs to go on (``history=``)."""
        return self._loop.history()

    def keep_pairs_from(self, count: int) -> None:
        """Nothing: every language keeps each of its pairs (the loop's protocol asks)."""

    @property
    def lengths(self) -> list[int]:
        """Each language's current token length: of its dev text, else of its training text."""
        return self._loop.lengths

    def steps(self, max_merges: int, min_frequency: int = 1) -> list[ParityMerge]:
        """Learn up to ``max_merges`` rules; fewer when every language is exhausted."""
        first = self._loop.rank
        columns = self._loop.steps(max_merges, min_frequency, self._join)
        return list(map(ParityMerge, range(first, first + len(columns[0])), *columns))

    def step(self, min_frequency: int = 1) -> ParityMerge | None:
        """Learn the next rule; None when no language has a pair counted ``min_frequency`` times."""
        rules = self.steps(1, min_frequency)
        return rules[0] if rules else None

    def release(self) -> None:
        """Free every engine's memory."""
        self._loop.release()

    def _check(self) -> None:
        """Verify every engine and queue, and each length against a recount of the
        sequences its engine holds."""
        queues = list(enumerate(self._engines))
        if self._global is not None:  # once freed, it holds nothing and its queue is empty
            queues.append((-1, self._global))
        for k, engine in queues:
            counts, queued = engine.check()
            floor, entries = self._loop.queue(k)
            # An entry is current when its count is the pair's queued count; others
            # are left behind (lazy deletion) and dropped at the front.
            current = {(left, right): count for count, left, right in entries
                       if queued.get((left, right)) == count}
            assert current == queued, "queue and engine disagree on queued counts"
            for pair, count in counts.items():
                if count >= floor:
                    assert queued.get(pair, 0) >= count, f"pair {pair} queued below its count"
        measured = self._dev if self._dev is not None else self._engines
        lengths = self._loop.lengths
        for lang, (engine, weights) in enumerate(zip(measured, self._weights)):
            if self._dev is not None:
                engine.check()
            held = sum(len(s) * w for s, w in zip(engine.sequences(), weights))
            assert lengths[lang] == held, f"language {lang}: length drifted"


def fit(languages: Sequence[Corpus], merges: int, join: Callable[[int, int, int], int], *,
        min_frequency: int = 1, **options) -> list[ParityMerge]:
    """Same contract as :func:`bytepair.learn.parity_naive.fit`."""
    engine = ParityEngine(languages, join, **options)
    try:
        return engine.steps(merges, min_frequency)
    finally:
        engine.release()


class TokenizersOrder:
    """``ParityBpeTrainer``'s tie order: of pairs counted alike, the greatest
    ``(left, right)`` as strings of byte-level characters (GPT-2's stand-ins for
    bytes, :data:`bytepair.learn.ties.CHARACTER`), compared by code point, the
    left string first and a string before its extensions.

    (``BpeTrainer``, the plain trainer, takes the *smallest* pair in its IDs
    instead: :mod:`bytepair.learn.ties`.) :meth:`key` maps a token to a tuple
    that sorts in the opposite order of its string, so the engines' rule, the
    smallest ``(-count, key(left), key(right))``, takes the greatest strings.
    :meth:`join` numbers new tokens as bytepair does and remembers their strings.

    >>> order = TokenizersOrder()
    >>> sorted([b"a", b"b", b"ab"], key=lambda t: order.key_of_text(t))
    [b'b', b'ab', b'a']
    """

    def __init__(self):
        from bytepair.learn.ties import CHARACTER

        self._text = [CHARACTER[b] for b in range(256)]
        self._keys = [self._descending(text) for text in self._text]

    @staticmethod
    def _descending(text: str) -> tuple:
        # Code points negated; the end marker 1 sorts after every negated code point,
        # so a string comes after its extensions, as the greater string must.
        return (*(-ord(c) for c in text), 1)

    def letters(self) -> list[list[int]]:
        """Each token's string so far, as code points, by ID (for the compiled loop)."""
        return [[ord(c) for c in text] for text in self._text]

    def key_of_text(self, data: bytes) -> tuple:
        from bytepair.learn.ties import CHARACTER

        return self._descending("".join(CHARACTER[b] for b in data))

    def key(self, symbol: int) -> tuple:
        keys = self._keys
        while len(keys) <= symbol:  # made at first use (the compiled loop uses none)
            keys.append(self._descending(self._text[len(keys)]))
        return keys[symbol]

    def join(self, left: int, right: int, rank: int) -> int:
        new = 256 + rank
        if new != len(self._text):
            raise ValueError(f"tie order: token {new} made out of turn")
        self._text.append(self._text[left] + self._text[right])
        return new


def byte_token(left: int, right: int, rank: int) -> int:
    """bytepair's numbering of learned tokens: ``256 + rank``."""
    return 256 + rank


def learn(languages: Sequence[PieceCounts], merges: int, *, dev: Sequence[PieceCounts] | None = None,
          min_frequency: int = 1, hooks: Sequence[Hook] = (), **options) -> list[ParityMerge]:
    """Parity-aware rules from one piece table per language (and their dev tables): up to
    ``merges`` in all, a ``start``'s included, learned by :func:`bytepair.learn.loop.run`
    with ``hooks``. Options as :func:`engine`.
    """
    rules = list(options["start"].merges) if options.get("start") is not None else []
    return run(engine(languages, merges, dev=dev, **options), rules, merges, min_frequency, hooks)


def engine(languages: Sequence[PieceCounts], merges: int, *, dev: Sequence[PieceCounts] | None = None,
           ratio: Sequence[float] | None = None, variant: str = "base", global_merges: int = 0,
           window_size: int = 100, alpha: float = 2.0, ties: str = "bytepair",
           backend: str | None = None, start=None, history: tuple | None = None,
           limit: int | None = None) -> ParityEngine:
    """The parity engine of one piece table per language (and their dev tables).

    ``ties``: ``"bytepair"`` (smallest IDs) or ``"tokenizers"`` (:class:`TokenizersOrder`,
    as ``ParityBpeTrainer``). ``start``: a byte model (its ``merges`` and ``encode_piece``)
    whose rules come first: every text is encoded by them, and the choice starts afresh
    (no window yet; the ratios' base is still the text's bytes), or goes on as ``history``
    (:meth:`ParityEngine.history` of a stopped run) says. ``limit`` (bytes, or None) refuses
    engines whose estimate does not fit before they are built: one estimate over every
    engine's text (the languages', their dev texts', and the summed one for
    ``global_merges``). Other options as :func:`bytepair.learn.parity_naive.fit`.
    """
    first = len(start.merges) if start is not None else 0
    if limit is not None:
        tables = list(languages) + list(dev or ()) + (list(languages) if global_merges > first else [])
        check_engine_fits(limit, sum(len(t.flat()[0]) for t in tables), sum(map(len, tables)),
                          merges - first)
    order = TokenizersOrder() if ties == "tokenizers" else None
    return ParityEngine(languages, dev=dev, ratio=ratio, variant=variant,
                        global_merges=global_merges, window_size=window_size, alpha=alpha,
                        order=order, backend=backend, start=start, history=history)


def run(engine: ParityEngine, rules: list, merges: int, min_frequency: int,
        hooks: Sequence[Hook] = ()) -> list[ParityMerge]:
    """:func:`bytepair.learn.loop.run` of a parity engine, which it frees at the end (a
    large one on a thread of its own, while the model is made)."""
    try:
        # The rules are new objects without cycles: no collection needs to walk them.
        with gc_paused():
            return loop.run(engine, rules, merges, min_frequency, hooks)
    finally:
        release_meanwhile(engine)
