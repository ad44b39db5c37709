# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False
# distutils: language = c++
"""Compiled parity-aware loop: the whole step of parity-aware BPE, many steps per call.

The same class, with the same behaviour, as ``bytepair.learn._parity_py.ParityLoop``;
that module states the loop in plain Python (and :mod:`bytepair.learn.parity_naive`
the rules). Here the languages' priorities are binary heaps in C++ with lazy
deletion, the choice of the language, the merge applied to every engine (each
language's, each dev set's, the global one) and the dev lengths are updated
without a Python frame; the only Python call per rule is ``join``.

Exactness of a lazy heap (as the engine's own queue): an entry is current when its
count is the pair's queued count in that language's engine; any other entry was left
behind by a later re-queue, or by a merge that took its pair, and is dropped when it
reaches the front. The current entries are exactly the twin's queue entries, so the
front current entry is the twin's first entry.
"""

from array import array

from libc.math cimport INFINITY, NAN, copysign, isnan
from libc.stdint cimport int32_t, int64_t, uint32_t, uint64_t
from libcpp.deque cimport deque
from libcpp.vector cimport vector

from bytepair.learn._engine cimport PairEngine, PairSlot

cdef extern from *:
    """
    #include <algorithm>
    #include <cstdint>
    #include <utility>
    #include <vector>

    // A tie order over token IDs: by ID, or by each token's string of letters
    // (a learned token's string is its left's then its right's), compared letter
    // by letter, a string before its extensions; `descending` reverses it (the
    // greatest string first, ParityBpeTrainer's order).
    struct TokenOrder {
        bool by_letters = false;
        bool descending = false;
        std::vector<uint32_t> letters;                  // every token's, end to end
        std::vector<std::pair<uint64_t, uint64_t>> at;  // token ID -> (offset, length)

        // Negative when a's key sorts before b's, 0 when the keys are equal.
        int compare(uint32_t a, uint32_t b) const {
            if (!by_letters) return a < b ? -1 : (a > b ? 1 : 0);
            const uint32_t* x = letters.data() + at[a].first;
            const uint32_t* y = letters.data() + at[b].first;
            uint64_t n = at[a].second, m = at[b].second;
            int c = 0;
            for (uint64_t k = 0; k < n && k < m; ++k) {
                if (x[k] != y[k]) { c = x[k] < y[k] ? -1 : 1; break; }
            }
            if (c == 0 && n != m) c = n < m ? -1 : 1;
            return descending ? -c : c;
        }
        void add(uint32_t token, const uint32_t* first, uint64_t n) {
            if (at.size() <= token) at.resize((size_t)token + 1, {0, 0});
            at[token] = {letters.size(), n};
            letters.insert(letters.end(), first, first + n);
        }
        // The string of a new token: its left's, then its right's.
        void join(uint32_t left, uint32_t right, uint32_t made) {
            if (!by_letters) return;
            uint64_t n = at[left].second, m = at[right].second;
            if (at.size() <= made) at.resize((size_t)made + 1, {0, 0});
            // Room first (push_back reads letters): doubling, as push_back would grow it.
            if (letters.capacity() < letters.size() + n + m)
                letters.reserve(std::max(letters.size() + n + m, 2 * letters.capacity()));
            uint64_t from_left = at[left].first, from_right = at[right].first;
            at[made] = {letters.size(), n + m};
            for (uint64_t k = 0; k < n; ++k) letters.push_back(letters[from_left + k]);
            for (uint64_t k = 0; k < m; ++k) letters.push_back(letters[from_right + k]);
        }
        bool knows(uint32_t token) const { return !by_letters || token < at.size(); }
    };

    // A queue entry: a pair (left << 32 | right) under a count.
    struct Entry {
        int64_t count;
        uint64_t key;
    };

    // x is taken after y: a smaller count, else a later key (left, then right), else
    // greater IDs. std's heap keeps the entry nothing is taken before at the front.
    struct TakenAfter {
        const TokenOrder* order = nullptr;
        bool operator()(const Entry& x, const Entry& y) const {
            if (x.count != y.count) return x.count < y.count;
            int c = order->compare((uint32_t)(x.key >> 32), (uint32_t)(y.key >> 32));
            if (c == 0) c = order->compare((uint32_t)x.key, (uint32_t)y.key);
            if (c) return c > 0;
            return x.key > y.key;
        }
    };

    // One language's priority: a binary heap of entries. O(log n) a push or a pop.
    class PairHeap {
        std::vector<Entry> entries_;
        TakenAfter after_;
    public:
        void set_order(const TokenOrder* order) { after_.order = order; }
        bool empty() const { return entries_.empty(); }
        size_t size() const { return entries_.size(); }
        const Entry& front() const { return entries_.front(); }
        const Entry& at(size_t i) const { return entries_[i]; }
        void push(int64_t count, uint64_t key) {
            entries_.push_back(Entry{count, key});
            std::push_heap(entries_.begin(), entries_.end(), after_);
        }
        void pop() {
            std::pop_heap(entries_.begin(), entries_.end(), after_);
            entries_.pop_back();
        }
        void clear() { std::vector<Entry>().swap(entries_); }
    };
    """
    cdef cppclass TokenOrder:
        bint by_letters
        bint descending
        void add(uint32_t token, const uint32_t* first, uint64_t n) except +
        void join(uint32_t left, uint32_t right, uint32_t made) except +
        bint knows(uint32_t token)

    cdef cppclass Entry:
        int64_t count
        uint64_t key

    cdef cppclass PairHeap:
        void set_order(const TokenOrder* order)
        bint empty()
        size_t size()
        const Entry& front()
        const Entry& at(size_t i)
        void push(int64_t count, uint64_t key) except +
        void pop()
        void clear()


#: The language of a rule learned from the summed counts (as parity_rules.GLOBAL).
cdef int GLOBAL = -1
cdef int64_t TOKEN_LIMIT = 0x80000000


cdef class ParityLoop:
    """The state of parity-aware training over compiled pair engines; :meth:`steps` learns.

    ``engines``: one ``PairEngine`` per language over its training pieces; ``dev``:
    one per language over its dev pieces, or None; ``lengths``: each language's
    token length (of its dev text, else of its training text); ``ratio``: targets,
    or None; ``global_engine``: an engine over every language's pieces for the
    first ``global_merges`` rules, or None. ``letters``: None (ties to the smallest
    IDs) or each initial token's string as a list of code points, compared as
    strings (the greatest first when ``descending``). ``first_divisor`` and
    ``divisor``: the floors of the queues, as ``IncrementalEngine``'s.
    """

    cdef int n
    cdef list engines
    cdef list dev
    cdef object global_engine
    cdef int64_t global_merges
    cdef TokenOrder order
    cdef vector[PairHeap] heaps         # one per language, then the global one
    cdef vector[int64_t] floors         # likewise
    cdef vector[int64_t] current        # each language's length now
    cdef vector[int64_t] initial
    cdef vector[double] ratio
    cdef bint by_ratio
    cdef bint window
    cdef int64_t window_size
    cdef double threshold
    cdef deque[int32_t] recent          # the window's choices, oldest first
    cdef vector[int64_t] wins           # each language's choices in the window
    cdef vector[char] exhausted
    cdef int n_exhausted
    cdef readonly int64_t rank
    cdef int64_t divisor
    cdef vector[uint64_t] candidates    # scratch: pairs one merge raised
    cdef vector[double] values          # scratch of the choice
    cdef vector[char] open_

    def __init__(self, list engines, dev, lengths, ratio, str variant, global_engine,
                 int64_t global_merges, int64_t window_size, double alpha, letters,
                 bint descending, int64_t first_divisor, int64_t divisor):
        cdef int k
        cdef PairEngine engine
        cdef vector[uint32_t] spelled
        self.n = len(engines)
        self.engines = list(engines)
        self.dev = list(dev) if dev is not None else None
        self.global_engine = global_engine
        self.global_merges = global_merges
        self.rank = 0
        self.divisor = divisor
        if letters is not None:
            self.order.by_letters = True
            self.order.descending = descending
            for k, text in enumerate(letters):
                spelled = text
                self.order.add(k, spelled.data(), spelled.size())
        for k in range(self.n):
            self.current.push_back(lengths[k])
            self.initial.push_back(lengths[k])
        self.by_ratio = ratio is not None
        if self.by_ratio:
            for k in range(self.n):
                self.ratio.push_back(ratio[k])
        self.window = variant == "window"
        self.window_size = window_size
        self.threshold = alpha / self.n
        self.wins.resize(self.n, 0)
        self.exhausted.resize(self.n, 0)
        self.values.resize(self.n)
        self.open_.resize(self.n)
        self.n_exhausted = 0
        if self.by_ratio:  # with ratios, a language without text is exhausted at once
            for k in range(self.n):
                if self.initial[k] == 0:
                    self.exhausted[k] = 1
                    self.n_exhausted += 1
        self.heaps.resize(self.n + 1)
        self.floors.resize(self.n + 1, 0)
        for k in range(self.n + 1):
            self.heaps[k].set_order(&self.order)
        for k in range(self.n):
            self._open(k, engines[k], first_divisor)
        if global_engine is not None:
            self._open(self.n, global_engine, first_divisor)

    cdef void _open(self, int k, PairEngine engine, int64_t first_divisor):
        # The first floor, and every pair that reaches it queued.
        cdef int64_t best = 0
        cdef size_t slot
        cdef PairSlot* info
        for slot in range(engine.pairs.capacity()):
            info = engine.pairs.at(slot)
            if info.queued >= 0 and info.count > best:
                best = info.count
        self.floors[k] = max(<int64_t>1, best // first_divisor)
        self._raise_above(k, engine)

    cdef void _raise_above(self, int k, PairEngine engine):
        # Queue every pair counted at least the floor above its queued count.
        cdef size_t slot
        cdef PairSlot* info
        cdef int64_t floor = self.floors[k]
        for slot in range(engine.pairs.capacity()):
            info = engine.pairs.at(slot)
            if info.queued >= 0 and info.count >= floor and info.count > info.queued:
                info.queued = info.count
                self.heaps[k].push(info.count, info.key)

    cdef bint _valid_front(self, int k, PairEngine engine, int64_t* count, uint64_t* key):
        # The front entry once it is current and exact (stale ones are dropped or
        # re-queued at their true count); False when the heap empties.
        cdef PairHeap* heap = &self.heaps[k]
        cdef Entry front
        cdef PairSlot* info
        cdef int64_t q, c
        while not heap.empty():
            front = heap.front()
            info = engine.pairs.find(front.key)
            q = info.queued if info != NULL else 0
            if q != front.count:
                heap.pop()  # left behind by a later re-queue, or its pair was merged
                continue
            c = info.count
            if c == q:
                count[0] = c
                key[0] = front.key
                return True
            heap.pop()
            if c:
                info.queued = c
                heap.push(c, front.key)
            else:
                engine.pairs.erase(info)
        return False

    cdef bint _best(self, int k, PairEngine engine, int64_t min_frequency, int64_t* count,
                    uint64_t* key):
        # The language's best pair if it is counted min_frequency times, lowering the floor
        # (and queueing the pairs that reach it) while the front is below it.
        cdef bint found
        while True:
            found = self._valid_front(k, engine, count, key)
            if found and count[0] >= self.floors[k]:
                return count[0] >= min_frequency
            if self.floors[k] <= max(min_frequency, <int64_t>1):
                return False
            self.floors[k] = max(min_frequency, max(<int64_t>1, self.floors[k] // self.divisor))
            self._raise_above(k, engine)

    cdef double _score(self, int k):
        # Larger needs a merge more: the length, or minus the compression over the
        # target, in floating point as parity_rules.ratio_scores (IEEE 754 at 0).
        cdef double a, b, q
        if not self.by_ratio:
            return <double>self.current[k]  # exact: lengths stay below 2**53
        a = <double>self.initial[k]
        b = <double>self.current[k]
        if b != 0:
            q = a / b
        elif a == 0:
            q = NAN
        else:
            q = copysign(INFINITY, a)
        return -(q / self.ratio[k])

    cdef int _choose(self):
        # parity_rules.Selector.choose: the first language with the greatest score
        # (base skips exhausted ones); window passes over one past its share.
        cdef int i, best = 0
        cdef double best_score = -INFINITY, s
        cdef bint any_open
        if not self.window:
            for i in range(self.n):
                s = self._score(i)
                if not self.exhausted[i] and s > best_score:
                    best, best_score = i, s
            return best
        for i in range(self.n):
            self.values[i] = -INFINITY if self.exhausted[i] else self._score(i)
            self.open_[i] = 1
        while True:
            best, best_score = 0, -INFINITY
            for i in range(self.n):
                if self.open_[i] and self.values[i] > best_score:
                    best, best_score = i, self.values[i]
            if <double>self.wins[best] / <double>self.window_size <= self.threshold:
                break
            if best_score == -INFINITY:
                break
            self.open_[best] = 0
            any_open = False
            for i in range(self.n):
                if self.open_[i]:
                    any_open = True
            if not any_open:
                break
        self.recent.push_back(best)
        self.wins[best] += 1
        if <int64_t>self.recent.size() > self.window_size:
            self.wins[self.recent.front()] -= 1
            self.recent.pop_front()
        return best

    cdef int64_t _apply(self, PairEngine engine, int k, uint32_t left, uint32_t right,
                        uint32_t made):
        # Merge in one engine; with a queue (k >= 0), queue the pairs that rose.
        cdef int64_t replaced
        cdef PairSlot* info
        cdef uint64_t key
        cdef size_t i
        self.candidates.clear()
        with nogil:
            replaced = engine._merge_pair(left, right, made, self.candidates)
        if k >= 0:
            for i in range(self.candidates.size()):
                key = self.candidates[i]
                info = engine.pairs.find(key)
                if info != NULL and info.count > info.queued and info.count >= self.floors[k]:
                    info.queued = info.count
                    self.heaps[k].push(info.count, key)
        return replaced

    def steps(self, int64_t max_merges, int64_t min_frequency, join):
        """Learn up to ``max_merges`` rules; fewer when every language is exhausted.

        Returns arrays ``(lefts, rights, new_ids, counts, replacements, languages)``.
        Per rule: a merge in every engine, O(log P) per queue entry added or
        dropped, O(languages) (base) or O(languages**2) (window) to choose.
        """
        lefts, rights, new_ids = array("I"), array("I"), array("I")
        counts, replaced_out, languages = array("q"), array("q"), array("i")
        cdef int language, lang
        cdef int64_t count = 0, replaced, shrunk
        cdef uint64_t key = 0
        cdef uint32_t left, right, made
        cdef PairEngine engine
        cdef bint found
        while len(lefts) < max_merges:
            found = False
            while self.n_exhausted < self.n:
                if self.rank < self.global_merges:
                    language = GLOBAL
                    engine = self.global_engine
                    found = self._best(self.n, engine, min_frequency, &count, &key)
                    if not found:
                        break
                else:
                    if self.global_engine is not None:
                        self.global_engine.release()
                        self.global_engine = None
                        self.heaps[self.n].clear()
                    language = self._choose()
                    engine = self.engines[language]
                    found = self._best(language, engine, min_frequency, &count, &key)
                    if not found:
                        if not self.exhausted[language]:
                            self.exhausted[language] = 1
                            self.n_exhausted += 1
                        continue
                break
            if not found:
                break
            self.heaps[self.n if language == GLOBAL else language].pop()
            left = <uint32_t>(key >> 32)
            right = <uint32_t>key
            new = join(left, right, self.rank)
            if not 0 <= new < TOKEN_LIMIT:
                raise ValueError(f"new token ID {new} is out of range: the pair engine holds "
                                 f"IDs from 0 to {TOKEN_LIMIT - 1}")
            made = new
            self.order.join(left, right, made)
            # The pair's slot in every engine's table: ask for all of them at once, so that
            # the cache misses overlap instead of coming one merge after another.
            for lang in range(self.n):
                (<PairEngine>self.engines[lang]).pairs.prefetch(key)
                if self.dev is not None:
                    (<PairEngine>self.dev[lang]).pairs.prefetch(key)
            replaced = 0
            for lang in range(self.n):
                shrunk = self._apply(self.engines[lang], lang, left, right, made)
                if language == GLOBAL or language == lang:  # the text that chose the rule
                    replaced += shrunk
                if self.dev is None:
                    self.current[lang] -= shrunk
            if self.dev is not None:
                for lang in range(self.n):
                    self.current[lang] -= self._apply(self.dev[lang], -1, left, right, made)
            if self.global_engine is not None:
                self._apply(self.global_engine, self.n, left, right, made)
            self.rank += 1
            lefts.append(left)
            rights.append(right)
            new_ids.append(made)
            counts.append(count)
            replaced_out.append(replaced)
            languages.append(language)
        return lefts, rights, new_ids, counts, replaced_out, languages

    @property
    def lengths(self):
        """Each language's current token length: of its dev text, else of its training text."""
        return [self.current[k] for k in range(self.n)]

    def resume(self, int64_t rank, initial, recent, exhausted):
        """Go on from a run that learned ``rank`` rules (the engines hold its text as they
        left it): ``initial`` is each language's length before any rule (the ratios' base),
        ``recent`` and ``exhausted`` the choice's state (:meth:`history`). Before any step."""
        cdef int k
        self.rank = rank
        for k in range(self.n):
            self.initial[k] = initial[k]
            self.wins[k] = 0
            self.exhausted[k] = 0
        self.recent.clear()
        for k in recent:
            self.recent.push_back(k)
            self.wins[k] += 1
        self.n_exhausted = 0
        for k in exhausted:
            self.exhausted[k] = 1
            self.n_exhausted += 1

    def history(self):
        """The choice's state, as :meth:`resume` takes it: the window's choices (oldest
        first) and the exhausted languages."""
        cdef size_t i
        return ([self.recent[i] for i in range(self.recent.size())],
                [k for k in range(self.n) if self.exhausted[k]])

    def queue(self, int k):
        """Language ``k``'s queue (``-1``: the global one) as ``(floor, entries)``, each
        entry ``(count, left, right)`` (current or left behind), for checks."""
        if k < 0:
            k = self.n
        cdef PairHeap* heap = &self.heaps[k]
        cdef size_t i
        return self.floors[k], [(heap.at(i).count, heap.at(i).key >> 32,
                                 heap.at(i).key & 0xFFFFFFFF) for i in range(heap.size())]

    def release(self):
        """Free every engine and queue."""
        for engine in self.engines:
            engine.release()
        for engine in self.dev or ():
            engine.release()
        if self.global_engine is not None:
            self.global_engine.release()
            self.global_engine = None
        for k in range(self.n + 1):
            self.heaps[k].clear()
