# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False, cdivision=True
# distutils: language = c++
"""Compiled word-mode engine: the merge loop over string symbols.

Word mode trains on distinct words with counts. A word starts as its
characters (plus the end-of-word symbol); a merged symbol is its halves'
strings joined, and equal strings are one symbol. Here a symbol is an ID
with its UTF-8 bytes, interned by those bytes, so the engine needs no Python
object per symbol.

The order is ``(-count, left string, right string)``, as
:func:`bytepair.learn.rules.priority` defines it for Python strings. Python
orders strings by code point, and UTF-8 preserves code-point order byte for
byte, so ``memcmp`` on the bytes, shorter first on a common prefix, compares
two symbols exactly as Python compares their strings (``symbol_less``).

State: each word's symbols in one flat array (rewritten in place: a word
only shrinks); one open-addressing table from a pair to its index; per pair
its exact weighted count, its queued count and the words it was seen in
(a word may stay listed after the pair left it; it is rescanned and skipped).
The priority is a binary heap with lazy deletion and a floor, as the byte
engine's queue: a pair counted at least the floor is pushed when its count
rises above its queued count, and an entry is dropped when it reaches the
top superseded (its count is not the pair's queued count) or re-pushed at
the true count when stale (the count fell). So every pair counted at least
the floor has an entry at or above its count, and a top entry that is
current, exact and at least the floor is the best pair. When the top falls
below the floor, the floor is divided by four and the pairs that now reach
it are queued; most pairs a merge creates are seen a few times and stay out
of the heap until training gets down to them.

A merge visits only the words listed for the pair, rewrites each in one
left-to-right pass, and updates the counts of the windows it changes,
weighted by the word's count. Cost per merge: O(sum of the visited words'
lengths + u log H) for u pushes into a heap of H entries.
"""

from array import array

cimport cython
from cython.operator cimport dereference as deref

from cpython.bytes cimport PyBytes_FromStringAndSize
from libc.stdint cimport int64_t, uint8_t, uint32_t, uint64_t
from libc.string cimport memcmp
from libcpp.string cimport string
from libcpp.unordered_map cimport unordered_map
from libcpp.utility cimport move
from libcpp.vector cimport vector

from bytepair.split._split cimport mix, utf8_error, utf8_width


cdef extern from *:
    """
    static inline int bytepair_add_overflows(int64_t a, int64_t b, int64_t* out) {
        return __builtin_add_overflow(a, b, out);
    }
    static inline int bytepair_mul_overflows(int64_t a, int64_t b, int64_t* out) {
        return __builtin_mul_overflow(a, b, out);
    }
    """
    bint add_overflows "bytepair_add_overflows"(int64_t a, int64_t b, int64_t* out) noexcept nogil
    bint mul_overflows "bytepair_mul_overflows"(int64_t a, int64_t b, int64_t* out) noexcept nogil
    void prefetch "__builtin_prefetch"(const void* address) noexcept nogil

# An empty slot of the pair table: no symbol has ID 0xFFFFFFFF.
cdef uint64_t EMPTY = 0xFFFFFFFFFFFFFFFFULL
cdef uint32_t MAX_SYMBOLS = 0xFFFFFFFE
# The first floor is the greatest count divided by this, and each time the
# queue runs below it, it is divided by the second (as in byte mode).
cdef int64_t FIRST_FLOOR_DIVISOR = 64
cdef int64_t FLOOR_DIVISOR = 4
# How many listed words ahead of the one being rewritten are prefetched.
cdef size_t PREFETCH_AHEAD = 8


cdef struct Entry:
    int64_t count
    uint32_t left
    uint32_t right
    uint32_t pair


cdef inline uint64_t pair_key(uint32_t left, uint32_t right) noexcept nogil:
    return (<uint64_t>left << 32) | right


# Final: its cdef methods are called directly (and inlined), not through a
# table of function pointers.
@cython.final
cdef class WordEngine:
    """Word-mode rules from distinct words laid end to end as UTF-8.

    ``data`` holds every word's bytes one after another, ``starts``
    (``array("q")``) each word's offset and then ``len(data)``, ``weights``
    (``array("q")``) each word's count (positive). ``end_of_word`` (UTF-8
    bytes, or None) is appended to every word as one symbol. Raises
    ValueError when the data is not UTF-8, an offset cuts a character, or
    the weighted windows could exceed 2**63 - 1.

    >>> engine = WordEngine(b"lowlowerlowest", array("q", [0, 3, 8, 14]), array("q", [1, 1, 1]), b"</w>")
    >>> lefts, rights, counts, replacements = engine.fit(2, 1)
    >>> [(engine.symbol(l), engine.symbol(r)) for l, r in zip(lefts, rights)]
    [('l', 'o'), ('lo', 'w')]
    >>> list(counts), engine.sequences()
    ([3, 3], [('low', '</w>'), ('low', 'e', 'r', '</w>'), ('low', 'e', 's', 't', '</w>')])
    """

    cdef vector[uint32_t] tokens      # every word's current symbols, word after word
    cdef vector[int64_t] word_start   # each word's first token in `tokens`
    cdef vector[uint32_t] word_length  # each word's current number of symbols
    cdef vector[int64_t] weight
    cdef vector[uint32_t] visited      # the merge (rank + 1) that last rewrote each word

    cdef string arena                  # every symbol's bytes, one after another
    cdef vector[int64_t] symbol_at
    cdef vector[uint32_t] symbol_length
    cdef unordered_map[string, uint32_t] symbol_of
    cdef uint32_t ascii[128]           # the ID of each ASCII character, once interned

    cdef vector[uint64_t] slot_key     # the pair table: key, or EMPTY
    cdef vector[uint32_t] slot_pair    # ... and the pair's index
    cdef uint64_t mask
    cdef vector[uint64_t] pair_keys    # per pair index
    cdef vector[int64_t] counts
    cdef vector[int64_t] queued        # 0: not queued
    cdef vector[vector[uint32_t]] pair_words

    cdef vector[Entry] heap
    cdef vector[uint32_t] raised       # pairs whose count rose during a merge
    cdef uint32_t rank
    cdef int64_t floor                 # pairs counted less are not queued (yet)

    def __init__(self, data, starts, weights, end_of_word=None):
        cdef const uint8_t[::1] text = data
        cdef const int64_t[::1] at = starts
        cdef const int64_t[::1] given = weights
        cdef Py_ssize_t words = given.shape[0], w, p, end, width, bad
        cdef int64_t windows = 0, total = 0, length
        cdef uint32_t eow = 0
        cdef bint has_eow = end_of_word is not None
        cdef const uint8_t* base = &text[0] if text.shape[0] else <const uint8_t*>b""
        bad = utf8_error(base, text.shape[0])
        if bad >= 0:
            raise ValueError(f"data: invalid UTF-8 at byte offset {bad}")
        if at.shape[0] != words + 1:
            raise ValueError(f"starts must hold one offset per word and the end ({words + 1}), "
                             f"got {at.shape[0]}")
        if has_eow:
            eow_bytes = bytes(end_of_word)
            if not eow_bytes:
                raise ValueError("end_of_word must be non-empty")
            if utf8_error(eow_bytes, len(eow_bytes)) >= 0:
                raise ValueError("end_of_word must be UTF-8")
            eow = self.intern(eow_bytes, len(eow_bytes))
        for w in range(128):
            self.ascii[w] = MAX_SYMBOLS
        self.word_start.reserve(words)
        self.word_length.reserve(words)
        self.weight.reserve(words)
        self.tokens.reserve(text.shape[0] + (words if has_eow else 0))
        for w in range(words):
            if given[w] < 1:
                raise ValueError(f"weights[{w}] must be positive, got {given[w]}")
            p, end = at[w], at[w + 1]
            if not 0 <= p <= end <= text.shape[0]:
                raise ValueError(f"starts: word {w} ({p}, {end}) is outside 0..{text.shape[0]}")
            if (p < text.shape[0] and (base[p] & 0xC0) == 0x80) or (
                    end < text.shape[0] and (base[end] & 0xC0) == 0x80):
                raise ValueError(f"starts: word {w} ({p}, {end}) cuts a UTF-8 character")
            self.word_start.push_back(self.tokens.size())
            while p < end:
                if base[p] < 0x80:
                    if self.ascii[base[p]] == MAX_SYMBOLS:
                        self.ascii[base[p]] = self.intern(<const char*>base + p, 1)
                    self.tokens.push_back(self.ascii[base[p]])
                    p += 1
                    continue
                width = utf8_width(base[p])
                self.tokens.push_back(self.intern(<const char*>base + p, width))
                p += width
            if has_eow:
                self.tokens.push_back(eow)
            length = <int64_t>self.tokens.size() - self.word_start.back()
            self.word_length.push_back(<uint32_t>length)
            self.weight.push_back(given[w])
            # Every count is at most the weighted windows of all words.
            if length > 1 and (mul_overflows(length - 1, given[w], &windows)
                               or add_overflows(total, windows, &total)):
                raise ValueError("the words hold more than 2**63 - 1 weighted pairs")
        self.visited.assign(words, 0)
        self.slot_key.assign(1024, EMPTY)
        self.slot_pair.assign(1024, 0)
        self.mask = 1023
        self.rank = 0
        self.floor = 1
        with nogil:
            self.count_all()

    # ------------------------------------------------------------------
    # symbols

    cdef uint32_t intern(self, const char* s, Py_ssize_t n) except? 0xFFFFFFFF:
        cdef string key = string(s, n)
        cdef unordered_map[string, uint32_t].iterator found = self.symbol_of.find(key)
        if found != self.symbol_of.end():
            return deref(found).second
        if self.symbol_at.size() >= MAX_SYMBOLS:
            raise OverflowError("more than 2**32 - 2 distinct symbols")
        cdef uint32_t symbol = self.symbol_at.size()
        self.symbol_at.push_back(self.arena.size())
        self.symbol_length.push_back(n)
        self.arena.append(s, n)
        self.symbol_of[key] = symbol
        return symbol

    cdef uint32_t join(self, uint32_t left, uint32_t right) except? 0xFFFFFFFF:
        cdef string joined = self.arena.substr(self.symbol_at[left], self.symbol_length[left])
        joined.append(self.arena.data() + self.symbol_at[right], self.symbol_length[right])
        return self.intern(joined.data(), joined.size())

    cdef inline int compare(self, uint32_t a, uint32_t b) noexcept nogil:
        # Python's str order: code points, which is UTF-8's byte order.
        if a == b:
            return 0
        cdef uint32_t na = self.symbol_length[a], nb = self.symbol_length[b]
        cdef int c = memcmp(self.arena.data() + self.symbol_at[a],
                            self.arena.data() + self.symbol_at[b], na if na < nb else nb)
        if c:
            return c
        return (na > nb) - (na < nb)

    cdef inline bint before(self, const Entry* a, const Entry* b) noexcept nogil:
        # (-count, left string, right string): smaller is better.
        if a.count != b.count:
            return a.count > b.count
        cdef int c = self.compare(a.left, b.left)
        if c:
            return c < 0
        return self.compare(a.right, b.right) < 0

    def symbol(self, uint32_t symbol):
        """The string of symbol ID ``symbol``."""
        if symbol >= self.symbol_at.size():
            raise IndexError(f"no symbol {symbol}")
        return PyBytes_FromStringAndSize(self.arena.data() + self.symbol_at[symbol],
                                         self.symbol_length[symbol]).decode("utf-8")

    def symbols(self):
        """Every symbol's string, by ID."""
        return [self.symbol(i) for i in range(self.symbol_at.size())]

    # ------------------------------------------------------------------
    # the pair table

    cdef void grow(self) noexcept nogil:
        cdef uint64_t capacity = (self.mask + 1) * 2, i, j
        cdef vector[uint64_t] keys
        cdef vector[uint32_t] pairs
        keys.assign(capacity, EMPTY)
        pairs.assign(capacity, 0)
        for i in range(self.pair_keys.size()):
            j = mix(self.pair_keys[i]) & (capacity - 1)
            while keys[j] != EMPTY:
                j = (j + 1) & (capacity - 1)
            keys[j] = self.pair_keys[i]
            pairs[j] = <uint32_t>i
        self.slot_key.swap(keys)
        self.slot_pair.swap(pairs)
        self.mask = capacity - 1

    cdef uint32_t pair_of(self, uint32_t left, uint32_t right) noexcept nogil:
        """The index of pair (left, right), made (count 0) when new."""
        cdef uint64_t key = pair_key(left, right)
        cdef uint64_t i = mix(key) & self.mask
        while self.slot_key[i] != EMPTY:
            if self.slot_key[i] == key:
                return self.slot_pair[i]
            i = (i + 1) & self.mask
        cdef uint32_t index = self.pair_keys.size()
        self.slot_key[i] = key
        self.slot_pair[i] = index
        self.pair_keys.push_back(key)
        self.counts.push_back(0)
        self.queued.push_back(0)
        self.pair_words.push_back(vector[uint32_t]())
        if 2 * self.pair_keys.size() > self.mask:
            self.grow()
        return index

    cdef int64_t find(self, uint32_t left, uint32_t right) noexcept nogil:
        """The index of pair (left, right), or -1."""
        cdef uint64_t key = pair_key(left, right)
        cdef uint64_t i = mix(key) & self.mask
        while self.slot_key[i] != EMPTY:
            if self.slot_key[i] == key:
                return self.slot_pair[i]
            i = (i + 1) & self.mask
        return -1

    cdef inline void add(self, uint32_t left, uint32_t right, int64_t amount, uint32_t word) noexcept nogil:
        """Count ``amount`` more windows of (left, right), seen in ``word``."""
        cdef uint32_t p = self.pair_of(left, right)
        cdef vector[uint32_t]* listed = &self.pair_words[p]
        self.counts[p] += amount
        if listed.empty() or listed.back() != word:
            listed.push_back(word)
        if self.counts[p] > self.queued[p]:
            self.raised.push_back(p)

    cdef inline void remove(self, uint32_t left, uint32_t right, int64_t amount) noexcept nogil:
        # The pair exists: the window being removed was counted.
        self.counts[self.pair_of(left, right)] -= amount

    cdef void count_all(self) noexcept nogil:
        cdef size_t w
        cdef uint32_t k
        cdef const uint32_t* s
        cdef int64_t most = 0
        for w in range(self.word_start.size()):
            s = self.tokens.data() + self.word_start[w]
            for k in range(1, self.word_length[w]):
                self.add(s[k - 1], s[k], self.weight[w], <uint32_t>w)
        self.raised.clear()
        for w in range(self.counts.size()):
            if self.counts[w] > most:
                most = self.counts[w]
        self.floor = max(1, most // FIRST_FLOOR_DIVISOR)
        self.queue_from_floor()

    # ------------------------------------------------------------------
    # the heap

    cdef void push(self, uint32_t p) noexcept nogil:
        cdef Entry entry
        entry.count = self.counts[p]
        entry.left = <uint32_t>(self.pair_keys[p] >> 32)
        entry.right = <uint32_t>self.pair_keys[p]
        entry.pair = p
        self.queued[p] = entry.count
        self.heap.push_back(entry)
        self.sift_up(self.heap.size() - 1, entry)

    cdef void sift_up(self, size_t i, Entry entry) noexcept nogil:
        # Put `entry` at hole i, or above it while it comes before its parent.
        cdef size_t parent
        while i > 0:
            parent = (i - 1) // 2
            if not self.before(&entry, &self.heap[parent]):
                break
            self.heap[i] = self.heap[parent]
            i = parent
        self.heap[i] = entry

    cdef void pop(self) noexcept nogil:
        # Floyd's way: the hole left at the top sinks to a leaf along the
        # better children (one comparison a level), then the last entry rises
        # from there; it belongs near the bottom, so it rarely rises far.
        cdef Entry last = self.heap.back()
        cdef size_t n = self.heap.size() - 1, i = 0, child
        self.heap.pop_back()
        if n == 0:
            return
        while True:
            child = 2 * i + 1
            if child >= n:
                break
            if child + 1 < n and self.before(&self.heap[child + 1], &self.heap[child]):
                child += 1
            self.heap[i] = self.heap[child]
            i = child
        self.sift_up(i, last)

    cdef void queue_raised(self) noexcept nogil:
        cdef uint32_t p
        for p in self.raised:
            if self.counts[p] > self.queued[p] and self.counts[p] >= self.floor:
                self.push(p)
        self.raised.clear()

    cdef void lower_floor(self) noexcept nogil:
        """Divide the floor by FLOOR_DIVISOR (to at least 1) and queue the pairs that reach it."""
        self.floor = max(1, self.floor // FLOOR_DIVISOR)
        self.queue_from_floor()

    cdef void queue_from_floor(self) noexcept nogil:
        """Queue every pair counted at least the floor that is queued below its count. O(pairs)."""
        cdef size_t p
        for p in range(self.counts.size()):
            if self.counts[p] >= self.floor and self.counts[p] > self.queued[p]:
                self.push(<uint32_t>p)

    cdef int64_t best(self) noexcept nogil:
        """The best pair's index (its heap entry on top, current), or -1 when none is left.

        A current top entry at or above the floor is the best pair: every
        queued pair's true key is at most its entry's, and every pair not
        queued counts less than the floor. Below it, the floor is lowered.
        """
        cdef Entry top
        while True:
            if self.heap.empty() or self.heap[0].count < self.floor:
                if self.floor == 1:
                    return -1  # every pair with a window is queued, and none is left
                self.lower_floor()
                continue
            top = self.heap[0]
            if top.count != self.queued[top.pair]:
                self.pop()  # superseded by a later push
            elif self.counts[top.pair] != top.count:
                # Stale: the count fell since the push. Queue the true count.
                self.pop()
                self.queued[top.pair] = 0
                if self.counts[top.pair] >= self.floor:
                    self.push(top.pair)
            else:
                return top.pair

    # ------------------------------------------------------------------
    # merging

    cdef int64_t merge(self, uint32_t p, uint32_t new) noexcept nogil:
        """Replace pair ``p`` by symbol ``new`` in every word; the weighted replacements."""
        cdef uint32_t left = <uint32_t>(self.pair_keys[p] >> 32)
        cdef uint32_t right = <uint32_t>self.pair_keys[p]
        cdef vector[uint32_t] words
        cdef uint32_t w, n, i, j, stamp = self.rank + 1
        cdef size_t k, ahead
        cdef int64_t weight, replaced = 0, matches
        cdef uint32_t* s
        cdef bint after_match
        words.swap(self.pair_words[p])  # none is left after this merge: free the list
        for k in range(words.size()):
            # The listed words lie anywhere: ask for their records ahead of time.
            ahead = k + PREFETCH_AHEAD
            if ahead < words.size():
                prefetch(self.tokens.data() + self.word_start[words[ahead]])
                prefetch(&self.visited[words[ahead]])
            if ahead + PREFETCH_AHEAD < words.size():
                prefetch(&self.word_start[words[ahead + PREFETCH_AHEAD]])
            w = words[k]
            if self.visited[w] == stamp:
                continue
            self.visited[w] = stamp
            s = self.tokens.data() + self.word_start[w]
            n = self.word_length[w]
            weight = self.weight[w]
            i = j = 0
            matches = 0
            after_match = False  # s[i - 1] was the right half of a match
            while i < n:
                if i + 1 < n and s[i] == left and s[i + 1] == right:
                    # Windows the match removes: itself, the one before it
                    # (unless a match just ended there and removed it as its
                    # window after) and the one after it.
                    self.remove(left, right, weight)
                    if i > 0 and not after_match:
                        self.remove(s[i - 1], left, weight)
                    if i + 2 < n:
                        self.remove(right, s[i + 2], weight)
                    # Windows it adds: after the output so far, and before
                    # the next token unless that starts a match (which adds it).
                    if j > 0:
                        self.add(s[j - 1], new, weight, w)
                    if i + 2 < n and not (i + 3 < n and s[i + 2] == left and s[i + 3] == right):
                        self.add(new, s[i + 2], weight, w)
                    s[j] = new
                    i += 2
                    matches += 1
                    after_match = True
                else:
                    s[j] = s[i]
                    i += 1
                    after_match = False
                j += 1
            self.word_length[w] = j
            replaced += matches * weight
        self.queue_raised()
        return replaced

    def fit(self, Py_ssize_t max_merges, int64_t min_frequency=1):
        """Learn up to ``max_merges`` rules; fewer when no pair has ``min_frequency`` windows.

        Returns ``(lefts, rights, counts, replacements)``: symbol IDs
        (``array("I")``, ``new`` of rule k is ``join`` of its halves, see
        :meth:`symbol`) and weighted counts (``array("q")``).
        """
        cdef vector[uint32_t] lefts, rights
        cdef vector[int64_t] won, replaced
        cdef int64_t p
        cdef uint32_t new
        if min_frequency < 1:
            min_frequency = 1
        while <Py_ssize_t>lefts.size() < max_merges:
            with nogil:
                p = self.best()
            if p < 0 or self.counts[p] < min_frequency:
                break
            lefts.push_back(<uint32_t>(self.pair_keys[p] >> 32))
            rights.push_back(<uint32_t>self.pair_keys[p])
            won.push_back(self.counts[p])
            new = self.join(lefts.back(), rights.back())
            self.pop()
            self.queued[p] = 0
            with nogil:
                replaced.push_back(self.merge(<uint32_t>p, new))
            self.rank += 1
        return (array("I", lefts), array("I", rights), array("q", won), array("q", replaced))

    def sequences(self):
        """Each word's current symbols, as a tuple of str."""
        names = self.symbols()
        cdef size_t w
        cdef uint32_t k
        out = []
        for w in range(self.word_start.size()):
            out.append(tuple([names[self.tokens[self.word_start[w] + k]]
                              for k in range(self.word_length[w])]))
        return out

    def check(self):
        """Verify every invariant; AssertionError names the first that fails.

        Counts equal a recount from the words; every word holding a pair is
        listed for it; every pair with a positive count is queued at or
        above it, with a heap entry at its queued count; the heap is ordered.
        """
        recount = {}
        holders = {}
        cdef size_t w, i
        cdef uint32_t k
        for w in range(self.word_start.size()):
            for k in range(1, self.word_length[w]):
                pair = (self.tokens[self.word_start[w] + k - 1], self.tokens[self.word_start[w] + k])
                recount[pair] = recount.get(pair, 0) + self.weight[w]
                holders.setdefault(pair, set()).add(w)
        entries = set()
        for i in range(self.heap.size()):
            entries.add((self.heap[i].pair, self.heap[i].count))
            if i:
                assert not self.before(&self.heap[i], &self.heap[(i - 1) // 2]), f"heap out of order at {i}"
        for i in range(self.pair_keys.size()):
            pair = (self.pair_keys[i] >> 32, self.pair_keys[i] & 0xFFFFFFFF)
            assert self.find(pair[0], pair[1]) == <int64_t>i, f"pair {pair} not found in the table"
            assert self.counts[i] == recount.pop(pair, 0), f"pair {pair} miscounted"
            if self.counts[i] >= self.floor:
                assert self.queued[i] >= self.counts[i], f"pair {pair} queued below its count"
            if self.queued[i] > 0:
                assert (i, self.queued[i]) in entries, f"pair {pair} has no entry at its queued count"
            if self.counts[i] > 0:
                assert holders[pair] <= set(self.pair_words[i]), f"pair {pair} misses a word"
        assert not recount, f"pairs {sorted(recount)} are not in the table"

    def _tamper(self, str what):
        """Break one invariant on purpose, so that tests can show :meth:`check` notices.

        ``what``: ``"count"`` (the first pair counts one more), ``"queue"``
        (its queued count drops below its count), ``"words"`` (its word list
        is emptied) or ``"heap"`` (the heap's last entry moves to the top).
        """
        if what == "count":
            self.counts[0] += 1
        elif what == "queue":
            self.queued[0] = self.counts[0] - 1
        elif what == "words":
            self.pair_words[0].clear()
        elif what == "heap":
            self.heap[0], self.heap[self.heap.size() - 1] = self.heap[self.heap.size() - 1], self.heap[0]
        else:
            raise ValueError(f"nothing to tamper with called {what!r}")
