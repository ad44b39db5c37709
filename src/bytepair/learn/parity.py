"""The parity-aware trainer: one pair engine and one priority per language, no recount.

Equal, rule for rule, to :func:`bytepair.learn.parity_naive.fit` (which states
the rules; the choice of language is :mod:`bytepair.learn.parity_rules`).

State:

* one pair engine (:mod:`bytepair.learn.incremental`'s compiled ``PairEngine`` or
  its Python twin) per language over that language's distinct pieces and their
  counts: the language's exact pair counts and occurrence index;
* one ``sortedcontainers.SortedList`` per language of ``(-count, key(left),
  key(right), left, right)`` with the lazy, floored queue of
  :class:`bytepair.learn.incremental.IncrementalTrainer`'s word mode (a queued
  pair is queued at or above its true count; stale entries are re-queued when
  they reach the front);
* one pair engine per language over its dev pieces (dev-set mode): a merge's
  weighted replacements there are exactly how much the dev text's token length
  falls, so the lengths stay current without a recount;
* during the first ``global_merges`` rules, one more engine over every piece
  with the languages' counts added, whose counts are the sums of the
  languages' (counts are linear in the weights); it is freed when that phase ends.

A merge is applied to every engine; each engine touches only the occurrences of
the pair it holds. Per merge the cost is that of the plain incremental trainer
for each language that holds the pair, plus O(languages x window) to choose.
"""

from __future__ import annotations

from array import array
from itertools import accumulate
from typing import Callable, Hashable, Sequence

from sortedcontainers import SortedList

from bytepair.counts.piece_counts import PieceCounts
from bytepair.learn.incremental import FIRST_FLOOR_DIVISOR, FLOOR_DIVISOR, engine_class
from bytepair.learn.parity_rules import GLOBAL, ParityMerge, Selector, ratio_scores, without_text

Corpus = tuple[Sequence[Sequence[int]], Sequence[int]]  # (sequences, weights)
#: A floor no count reaches: engines that only measure lengths never queue a pair.
_NEVER = 2**62


def _engine(corpus: Corpus | PieceCounts, backend: str | None):
    """A pair engine over ``(sequences, weights)`` or a piece table, and its weights (for
    :meth:`ParityTrainer._check`); sequences of weight 0 are left out."""
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


def _length(corpus: Corpus | PieceCounts) -> int:
    if isinstance(corpus, PieceCounts):
        return sum(len(piece) * count for piece, count in corpus.items())
    sequences, weights = corpus
    return sum(len(s) * w for s, w in zip(sequences, weights))


class _Queue:
    """One language's priority over one engine: ``IncrementalTrainer``'s word-mode queue.

    Every pair counted at least ``floor`` is queued at or above its true count;
    :meth:`best` drops or re-queues stale entries at the front and lowers the
    floor when the front falls below it.
    """

    def __init__(self, engine, key: Callable[[int], Hashable]):
        self.engine = engine
        self.key = key
        self.floor = max(1, engine.max_count() // FIRST_FLOOR_DIVISOR)
        self.entries = SortedList()
        self.add_raised(engine.raise_above(self.floor))

    def entry(self, count: int, left: int, right: int) -> tuple:
        return (-count, self.key(left), self.key(right), left, right)

    def add_raised(self, raised) -> None:
        entries = self.entries
        for left, right, old, count in raised:
            if old:
                entries.discard(self.entry(old, left, right))
            entries.add(self.entry(count, left, right))

    def best(self, min_count: int) -> tuple[int, int, int] | None:
        """``(count, left, right)`` of the best pair, or None when none reaches ``min_count``."""
        while True:
            top = self._valid_top()
            if top is not None and top[0] >= self.floor:
                return top if top[0] >= min_count else None
            if self.floor <= max(min_count, 1):
                return None
            self.floor = max(min_count, 1, self.floor // FLOOR_DIVISOR)
            self.add_raised(self.engine.raise_above(self.floor))

    def _valid_top(self) -> tuple[int, int, int] | None:
        entries, engine = self.entries, self.engine
        while entries:
            neg_count, _, _, left, right = entries[0]
            true_count = engine.count(left, right)
            if true_count == -neg_count:
                return true_count, left, right
            entries.pop(0)  # stale: its count fell since it was queued
            if engine.requeue(left, right):
                entries.add(self.entry(true_count, left, right))
        return None

    def merge(self, left: int, right: int, new: int) -> int:
        """Apply the rule to this engine; returns its weighted replacements."""
        replaced, raised = self.engine.merge(left, right, new, self.floor)
        self.add_raised(raised)
        return replaced

    def check(self) -> None:
        """Every pair counted at least the floor is queued at or above its count."""
        counts, queued = self.engine.check()
        current = {}
        for neg_count, _, _, left, right in self.entries:
            if queued.get((left, right)) == -neg_count:
                current[(left, right)] = -neg_count
        assert current == queued, "queue and engine disagree on queued counts"
        for pair, count in counts.items():
            if count >= self.floor:
                assert queued.get(pair, 0) >= count, f"pair {pair} queued below its count"


class ParityTrainer:
    """Learns parity-aware rules one :meth:`step` at a time, equal to the naive reference.

    Arguments as :func:`bytepair.learn.parity_naive.fit`; ``backend`` names the
    pair engine (``"compiled"`` or ``"python"``; default as
    :func:`bytepair.learn.incremental.default_backend`).

    >>> t = ParityTrainer([([b"aab"], [1]), ([b"cd"], [1])], lambda l, r, rank: 256 + rank,
    ...                   dev=[([b"ab"], [1]), ([b"cdcd"], [1])], backend="python")
    >>> [(m.left, m.right, m.language) for m in t.steps(5)]
    [(99, 100, 1), (97, 97, 0), (257, 98, 0)]
    """

    def __init__(
        self,
        languages: Sequence[Corpus],
        join: Callable[[int, int, int], int],
        *,
        dev: Sequence[Corpus] | None = None,
        ratio: Sequence[float] | None = None,
        variant: str = "base",
        global_merges: int = 0,
        window_size: int = 100,
        alpha: float = 2.0,
        key: Callable[[int], Hashable] | None = None,
        backend: str | None = None,
    ):
        if dev is not None and ratio is not None:
            raise ValueError("give dev or ratio, not both")
        key = key or (lambda symbol: symbol)
        self._join = join
        self._ratio = list(ratio) if ratio is not None else None
        self._global_merges = global_merges
        self._weights = []  # each length-measuring engine's weights, for _check
        self._queues = []
        for corpus in languages:
            engine, weights = _engine(corpus, backend)
            self._queues.append(_Queue(engine, key))
            self._weights.append(weights)
        self._dev = None
        if dev is not None:
            self._dev, self._weights = map(list, zip(*(_engine(c, backend) for c in dev)))
            self._lengths = [_length(corpus) for corpus in dev]
        else:
            self._lengths = [_length(corpus) for corpus in languages]
        self._initial = list(self._lengths)
        self._global = None
        if global_merges > 0:
            if all(isinstance(corpus, PieceCounts) for corpus in languages):
                summed = sum(languages[1:], languages[0])
            else:
                summed = ([s for sequences, _ in languages for s in sequences],
                          [w for _, ws in languages for w in ws])
            self._global = _Queue(_engine(summed, backend)[0], key)
        self._selector = Selector(variant, len(languages), window_size=window_size, alpha=alpha)
        self._exhausted = without_text(self._initial, self._ratio)
        self._rank = 0

    @property
    def lengths(self) -> list[int]:
        """Each language's current token length: of its dev text, else of its training text."""
        return list(self._lengths)

    def steps(self, max_merges: int, min_count: int = 1) -> list[ParityMerge]:
        """Learn up to ``max_merges`` rules; fewer when every language is exhausted."""
        rules = []
        while len(rules) < max_merges and (rule := self.step(min_count)) is not None:
            rules.append(rule)
        return rules

    def step(self, min_count: int = 1) -> ParityMerge | None:
        """Learn the next rule; None when no language has a pair counted ``min_count`` times."""
        languages = len(self._queues)
        while len(self._exhausted) < languages:
            if self._rank < self._global_merges:
                language, queue = GLOBAL, self._global
            else:
                if self._global is not None:
                    self._global.engine.release()
                    self._global = None
                scores = (self._lengths if self._ratio is None
                          else ratio_scores(self._initial, self._lengths, self._ratio))
                language = self._selector.choose(scores, self._exhausted)
                queue = self._queues[language]
            best = queue.best(min_count)
            if best is None:
                if language == GLOBAL:
                    return None
                self._exhausted.add(language)
                continue
            count, left, right = best
            queue.entries.pop(0)
            return self._apply(count, left, right, language)
        return None

    def _apply(self, count: int, left: int, right: int, language: int) -> ParityMerge:
        rank = self._rank
        new = self._join(left, right, rank)
        replaced = 0
        for lang, queue in enumerate(self._queues):
            shrunk = queue.merge(left, right, new)
            replaced += shrunk
            if self._dev is None:
                self._lengths[lang] -= shrunk
        if self._dev is not None:
            for lang, engine in enumerate(self._dev):
                self._lengths[lang] -= engine.merge(left, right, new, _NEVER)[0]
        if self._global is not None:
            self._global.merge(left, right, new)
        self._rank += 1
        return ParityMerge(rank, left, right, new, count, replaced, language)

    def release(self) -> None:
        """Free every engine's memory."""
        for queue in self._queues:
            queue.engine.release()
        for engine in self._dev or ():
            engine.release()
        if self._global is not None:
            self._global.engine.release()

    def _check(self) -> None:
        """Verify every engine and queue, and each length against a recount of the
        sequences its engine holds."""
        for queue in self._queues:
            queue.check()
        if self._global is not None:
            self._global.check()
        engines = self._dev if self._dev is not None else [q.engine for q in self._queues]
        for lang, (engine, weights) in enumerate(zip(engines, self._weights)):
            if self._dev is not None:
                engine.check()
            held = sum(len(s) * w for s, w in zip(engine.sequences(), weights))
            assert self._lengths[lang] == held, f"language {lang}: length drifted"


def fit(languages: Sequence[Corpus], merges: int, join: Callable[[int, int, int], int], *,
        min_count: int = 1, **options) -> list[ParityMerge]:
    """Same contract as :func:`bytepair.learn.parity_naive.fit`."""
    trainer = ParityTrainer(languages, join, **options)
    try:
        return trainer.steps(merges, min_count)
    finally:
        trainer.release()


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

    def key_of_text(self, data: bytes) -> tuple:
        from bytepair.learn.ties import CHARACTER

        return self._descending("".join(CHARACTER[b] for b in data))

    def key(self, symbol: int) -> tuple:
        return self._keys[symbol]

    def join(self, left: int, right: int, rank: int) -> int:
        new = 256 + rank
        if new != len(self._text):
            raise ValueError(f"tie order: token {new} made out of turn")
        self._text.append(self._text[left] + self._text[right])
        self._keys.append(self._descending(self._text[-1]))
        return new


def byte_token(left: int, right: int, rank: int) -> int:
    """bytepair's numbering of learned tokens: ``256 + rank``."""
    return 256 + rank


def learn(languages: Sequence[PieceCounts], merges: int, *, dev: Sequence[PieceCounts] | None = None,
          ratio: Sequence[float] | None = None, variant: str = "base", global_merges: int = 0,
          window_size: int = 100, alpha: float = 2.0, min_frequency: int = 1,
          ties: str = "bytepair", backend: str | None = None,
          progress_bar=None) -> list[ParityMerge]:
    """Parity-aware rules from one piece table per language (and their dev tables).

    ``ties``: ``"bytepair"`` (smallest IDs) or ``"tokenizers"`` (:class:`TokenizersOrder`,
    as ``ParityBpeTrainer``). Options as :func:`bytepair.learn.parity_naive.fit`.
    """
    if ties == "tokenizers":
        order = TokenizersOrder()
        join, key = order.join, order.key
    else:
        join, key = byte_token, None
    trainer = ParityTrainer(languages, join, dev=dev, ratio=ratio, variant=variant,
                            global_merges=global_merges, window_size=window_size, alpha=alpha,
                            key=key, backend=backend)
    rules: list[ParityMerge] = []
    try:
        while len(rules) < merges:
            learned = trainer.steps(min(merges - len(rules), 1000), min_frequency)
            rules += learned
            if progress_bar is not None:
                progress_bar.update(len(learned))
            if len(learned) < min(merges - len(rules) + len(learned), 1000):
                break
    finally:
        trainer.release()
    return rules
