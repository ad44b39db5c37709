"""sentencepiece's BPE merge loop, with a priority queue and local updates.

The rules are the naive reference's (``tests/sentencepiece/spm_naive.py``) and
spm_train's (0.2.3, ``bpe_model_trainer.cc``):

* a pair's frequency is the sum over words of count x adjacent occurrences, overlapping
  ones included (``aaa`` holds ``a a`` twice);
* the candidates are the valid pairs (:class:`~bytepair.learn.spm_pieces.PieceRules`)
  that were ever adjacent, even if their frequency has fallen to 0; the best has the
  greatest frequency, then the fewest characters, then the smallest UTF-8 string, then
  (two splits of one string) the shorter left side (:func:`order`);
* a pair whose string was already made from another split is dropped, unmerged (and so
  is one whose string is ``taken``: the pieces of a base being extended);
* the best pair is replaced left to right in each word it occurs in.

Each word's symbols sit in one flat list with links to the previous and next live
symbol; each pair keeps the positions it was seen at (stale ones are skipped when it
is merged) and its exact frequency, which every merge updates around the positions it
rewrites. The priority queue holds (key, pair) entries and drops those whose count is
no longer the pair's. O(total characters + sum over merges of their occurrences x log).

>>> learn_pieces({"\u2581aaa": 2, "\u2581ab": 1}, 3)
['aa', 'aaa', '\u2581aaa']
"""

from __future__ import annotations

import heapq
from array import array
from typing import Iterable, Mapping

from bytepair._util.backend import extensions_wanted
from bytepair.learn.spm_pieces import BOUNDARY, SPACE, UNKNOWN_CHAR, PieceRules, is_decimal_digit, script

try:
    if not extensions_wanted():
        raise ImportError("BYTEPAIR_NO_EXTENSIONS is set")
    from bytepair.learn._spm_loop import SpmLoop
except ImportError:  # a pure-Python install: the loop below
    SpmLoop = None


def order(freq: int, chars: int, piece: bytes, left: int = 0) -> tuple:
    """The sort key of a candidate: greatest frequency, then fewest characters, then UTF-8
    order, then the shorter left side (``left``: its UTF-8 length)."""
    return (-freq, chars, piece, left)


class _Loop:
    """The state of one training: symbols in words, pairs, the queue."""

    def __init__(self, words: Mapping[str, int], rules: PieceRules):
        self.rules = rules
        self.pieces: list[str] = []       # symbol ID -> piece
        self.ids: dict[str, int] = {}     # piece -> symbol ID
        self.sym: list[int] = []          # position -> symbol ID, -1 once merged away
        self.nxt: list[int] = []          # position -> next live position, -1 at a word's end
        self.prv: list[int] = []
        self.weight: list[int] = []       # position -> its word's count
        self.pair_ids: dict[tuple[int, int], int] = {}  # (left, right) -> pair ID, -1 when invalid
        self.pair_sides: list[tuple[int, int]] = []
        self.freq: list[int] = []
        self.positions: list[list[int] | None] = []
        self.keys: list[tuple] = []       # pair ID -> (chars, UTF-8 piece, UTF-8 left side)
        self.active: list[bool] = []
        self.heap: list[tuple] = []
        self.changed: set[int] = set()
        self.unknown = self.symbol(UNKNOWN_CHAR)
        self._lay_out(words)

    def symbol(self, piece: str) -> int:
        found = self.ids.get(piece)
        if found is None:
            found = self.ids[piece] = len(self.pieces)
            self.pieces.append(piece)
        return found

    def _lay_out(self, words: Mapping[str, int]) -> None:
        sym, nxt, prv, weight = self.sym, self.nxt, self.prv, self.weight
        for word, count in words.items():
            start = len(sym)
            for i, char in enumerate(word):
                sym.append(self.symbol(char))
                prv.append(start + i - 1 if i else -1)
                nxt.append(start + i + 1)
                weight.append(count)
            if word:
                nxt[-1] = -1
            for p in range(start, len(sym) - 1):
                self.add(p, sym[p], sym[p + 1])
        for pair in self.changed:
            self.push(pair)
        self.changed.clear()

    def pair(self, left: int, right: int) -> int:
        """The pair ID of (left, right), made at first sight; -1 when it may not merge."""
        key = (left, right)
        found = self.pair_ids.get(key)
        if found is None:
            piece = self.pieces[left] + self.pieces[right]
            if left == self.unknown or right == self.unknown or not self.rules.valid(piece):
                found = -1
            else:
                found = len(self.freq)
                self.pair_sides.append(key)
                self.freq.append(0)
                self.positions.append([])
                self.keys.append((len(piece), piece.encode(), len(self.pieces[left].encode())))
                self.active.append(True)
            self.pair_ids[key] = found
        return found

    def add(self, position: int, left: int, right: int) -> None:
        pair = self.pair(left, right)
        if pair >= 0 and self.active[pair]:
            self.freq[pair] += self.weight[position]
            self.positions[pair].append(position)
            self.changed.add(pair)

    def remove(self, position: int, left: int, right: int, best: int) -> None:
        pair = self.pair_ids.get((left, right), -1)
        if pair >= 0 and pair != best and self.active[pair]:
            self.freq[pair] -= self.weight[position]
            self.changed.add(pair)

    def push(self, pair: int) -> None:
        chars, piece, left = self.keys[pair]
        heapq.heappush(self.heap, (-self.freq[pair], chars, piece, left, pair))

    def best(self) -> int:
        """The best active pair (popped), or -1 when none is left."""
        heap, freq, active = self.heap, self.freq, self.active
        while heap:
            negative, _, _, _, pair = heapq.heappop(heap)
            if active[pair] and -negative == freq[pair]:
                return pair
        return -1

    def merge(self, best: int) -> None:
        """Replace every live occurrence of pair ``best``, left to right, updating its neighbours."""
        left, right = self.pair_sides[best]
        new = self.symbol(self.pieces[left] + self.pieces[right])
        sym, nxt, prv = self.sym, self.nxt, self.prv
        for p in self.positions[best]:
            r = nxt[p]
            if sym[p] != left or r < 0 or sym[r] != right:
                continue  # stale: merged away since it was seen
            before, after = prv[p], nxt[r]
            if before >= 0:
                self.remove(before, sym[before], left, best)
            if after >= 0:
                self.remove(r, right, sym[after], best)
            sym[p], sym[r] = new, -1
            nxt[p] = after
            if after >= 0:
                prv[after] = p
            if before >= 0:
                self.add(before, sym[before], new)
            if after >= 0:
                self.add(p, new, sym[after])
        self.retire(best)
        for pair in self.changed:
            if self.active[pair]:
                self.push(pair)
        self.changed.clear()

    def retire(self, pair: int) -> None:
        self.active[pair] = False
        self.positions[pair] = None


def learn_pieces(words: Mapping[str, int], merges: int, rules: PieceRules | None = None, *,
                 compiled: bool | None = None) -> list[str]:
    """The first ``merges`` pieces spm_train's BPE makes from ``{word: count}`` (fewer if none is left).

    ``words`` are normalised words whose characters outside the coverage are U+2585
    (:func:`bytepair.learn.spm_chars.masked_words`). ``compiled`` picks the C++ loop
    (default: when it is built) or this module's.
    """
    rules = rules or PieceRules()
    if compiled is None:
        compiled = SpmLoop is not None
    if compiled:
        return _learn_compiled(words, merges, rules)
    return _learn_python(words, merges, rules, set())


def learn_from_pieces(words: Mapping[tuple[str, ...], int], merges: int, rules: PieceRules | None = None,
                      *, taken: Iterable[str] = (), compiled: bool | None = None) -> list[str]:
    """The loop of :func:`learn_pieces` on words that start as pieces rather than characters.

    ``words``: ``{(piece, piece, ...): count}``, a U+2585 piece standing for a position that
    never merges. ``taken``: strings no merge may make (the pieces of a base being extended):
    a pair that spells one, or one of the pieces the words start with, is dropped unmerged,
    as a piece made already from another split.

    >>> learn_from_pieces({("\u2581", "ab", "c"): 2, ("\u2581", "a", "bc"): 2}, 2, taken=["abc"])
    ['\u2581a', '\u2581ab']
    """
    rules = rules or PieceRules()
    if compiled is None:
        compiled = SpmLoop is not None
    if not compiled:
        made = set(taken).union(*({piece for piece in word if len(piece) > 1} for word in words))
        return _learn_python(words, merges, rules, made)
    chars = sorted({char for word in words for piece in word for char in piece})
    ids = {char: at for at, char in enumerate(chars)}
    ids[UNKNOWN_CHAR] = len(chars)
    pieces = sorted({piece for word in words for piece in word if len(piece) > 1})
    ids.update((piece, len(chars) + 1 + at) for at, piece in enumerate(pieces))
    symbols, starts, counts = array("i"), array("q", [0]), array("q")
    for word, count in words.items():
        symbols.extend([ids[piece] for piece in word])
        starts.append(len(symbols))
        counts.append(count)
    loop = SpmLoop(rules)
    loop.lay_out_pieces(chars, *_classes(chars), pieces, symbols, starts, counts, list(taken))
    return [piece.decode("utf-8", "surrogatepass") for piece in loop.learn(merges)]


def _learn_python(words: Mapping, merges: int, rules: PieceRules, made: set[str]) -> list[str]:
    """The loop in Python; ``made``: strings no merge may make (grows with the pieces made)."""
    loop = _Loop(words, rules)
    out: list[str] = []
    while len(out) < merges:
        best = loop.best()
        if best < 0:
            break
        left, right = loop.pair_sides[best]
        piece = loop.pieces[left] + loop.pieces[right]
        if piece in made:
            loop.retire(best)
            continue
        made.add(piece)
        out.append(piece)
        loop.merge(best)
    return out


class CompiledWords:
    """Words held by the compiled loop: their characters counted once, then laid out over the kept ones."""

    def __init__(self, words: Mapping[str, int], rules: PieceRules, *, release: bool = False):
        """``release``: empty ``words`` (a dict) while it is read, its memory freed as the loop takes it."""
        self._loop = SpmLoop(rules)
        #: ``{character: count}`` over the words, NUL left out.
        self.char_counts = self._loop.read_words(words, release)

    def learn(self, kept: list[str], merges: int) -> list[str]:
        """The pieces made from the kept characters ``kept`` (any other is unknown). Once only."""
        self.lay_out(kept)
        return [piece.decode("utf-8", "surrogatepass") for piece in self._loop.learn(merges)]

    def lay_out(self, kept: list[str]) -> None:
        """Hand the kept characters and their classes to the compiled loop, which lays the words out."""
        self._loop.lay_out(kept, *_classes(kept))


def _classes(chars: list[str]) -> tuple[list, list, list, list]:
    """What the compiled loop's validity check reads of each character: its script (a
    number, -2 for Inherited), whether it is ``▁``, a digit, or never allowed in a piece."""
    names: dict[str, int] = {}
    scripts = []
    for char in chars:
        name = script(char)
        scripts.append(-2 if name == "Inherited" else names.setdefault(name, len(names)))
    return (scripts, [char == SPACE for char in chars], [is_decimal_digit(char) for char in chars],
            [char in (UNKNOWN_CHAR, "\0", BOUNDARY, " ") or "\ud800" <= char <= "\udfff" for char in chars])


def _learn_compiled(words: Mapping[str, int], merges: int, rules: PieceRules) -> list[str]:
    """:func:`learn_pieces` by the compiled loop (every character of ``words`` kept)."""
    held = CompiledWords(words, rules)
    return held.learn(sorted(held.char_counts), merges)  # NUL and U+2585 stay unknown
