# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False
# distutils: language = c++
"""Compiled pair engine: the hot loop of bytepair's incremental trainer.

The same class, with the same behaviour, as ``bytepair._engine_py.PairEngine``;
that module documents the algorithm in plain Python. Here the state lives in
C++ vectors and hash maps and a merge runs without the GIL.
"""

from cython.operator cimport dereference as deref, preincrement as inc
from libc.stdint cimport int32_t, int64_t, uint32_t, uint64_t
from libcpp.vector cimport vector
from libcpp.algorithm cimport sort, unique

cdef int32_t REMOVED = -2
cdef int64_t MAX_POSITIONS = 2147483646


cdef inline uint64_t pair_key(uint32_t left, uint32_t right) noexcept nogil:
    return (<uint64_t>left << 32) | right


cdef class PairEngine:
    """Linked token lists with exact pair counts and an occurrence index."""

    def __init__(self, tokens, starts, weights):
        cdef Py_ssize_t n = len(tokens), s, i, lo, hi
        if n > MAX_POSITIONS:
            raise ValueError(
                f"the corpus has {n} token positions; one engine holds at most {MAX_POSITIONS}"
            )
        if len(starts) != len(weights) + 1 or starts[len(starts) - 1] != n:
            raise ValueError("starts must hold one offset per sequence plus the total length")
        cdef const uint32_t[:] wide
        cdef const unsigned char[:] narrow
        if isinstance(tokens, bytes):
            narrow = tokens
            if n:
                self.tok.assign(&narrow[0], &narrow[0] + n)
        else:
            try:
                wide = tokens
            except (TypeError, ValueError, BufferError):
                self.tok.reserve(n)
                for t in tokens:
                    self.tok.push_back(t)
            else:
                if n:
                    self.tok.assign(&wide[0], &wide[0] + n)
        self.prev.resize(n)
        self.nxt.resize(n)
        self.seq_of.resize(n)
        for s in range(len(weights)):
            self.weights.push_back(weights[s])
        for s in range(len(starts)):
            self.starts.push_back(starts[s])
        with nogil:
            for s in range(<Py_ssize_t>self.weights.size()):
                lo = self.starts[s]
                hi = self.starts[s + 1]
                for i in range(lo, hi):
                    self.prev[i] = <int32_t>(i - 1) if i > lo else -1
                    self.nxt[i] = <int32_t>(i + 1) if i + 1 < hi else -1
                    self.seq_of[i] = <int32_t>s
            for i in range(n):
                if self.nxt[i] >= 0:
                    self._add(pair_key(self.tok[i], self.tok[self.nxt[i]]),
                              self.weights[self.seq_of[i]])
                    self.where[pair_key(self.tok[i], self.tok[self.nxt[i]])].push_back(<int32_t>i)

    def pair_counts(self):
        """Every pair with a nonzero count, as ``(left, right, count)``; marks each as queued."""
        out = []
        cdef unordered_map[uint64_t, PairStat].iterator it = self.stats.begin()
        while it != self.stats.end():
            if deref(it).second.count:
                deref(it).second.queued = deref(it).second.count
                out.append((deref(it).first >> 32, deref(it).first & 0xFFFFFFFF,
                            deref(it).second.count))
            inc(it)
        return out

    def count(self, uint32_t left, uint32_t right):
        """Current weighted count of ``(left, right)``. O(1)."""
        it = self.stats.find(pair_key(left, right))
        return deref(it).second.count if it != self.stats.end() else 0

    def requeue(self, uint32_t left, uint32_t right):
        """Record that the pair is queued again under its current count, and return it."""
        it = self.stats.find(pair_key(left, right))
        if it == self.stats.end():
            return 0
        cdef int64_t c = deref(it).second.count
        if c:
            deref(it).second.queued = c
        else:
            self.stats.erase(it)
        return c

    cdef void _add(self, uint64_t key, int64_t delta) noexcept nogil:
        cdef PairStat* stat = &self.stats[key]
        stat.count += delta
        if stat.count == 0:
            # No live occurrence is left: free its index entry.
            self.where.erase(key)
            if stat.queued == 0:
                self.stats.erase(key)

    cdef int64_t _merge(self, uint32_t left, uint32_t right, uint32_t new,
                        vector[uint64_t]& touched) noexcept nogil:
        cdef uint64_t key = pair_key(left, right), key2
        cdef vector[int32_t] positions
        it = self.where.find(key)
        if it != self.where.end():
            positions.swap(deref(it).second)
            self.where.erase(it)
        # Ascending positions are left to right within every sequence, which
        # is what makes overlapping matches (`aaa`) resolve like the naive pass.
        sort(positions.begin(), positions.end())
        positions.erase(unique(positions.begin(), positions.end()), positions.end())
        cdef int64_t replaced = 0, w
        cdef int32_t i, j, before, after
        cdef uint32_t t
        cdef size_t k
        for k in range(positions.size()):
            i = positions[k]
            j = self.nxt[i]
            # Skip stale entries: consumed positions and changed tokens.
            if j < 0 or self.tok[i] != left or self.tok[j] != right:
                continue
            w = self.weights[self.seq_of[i]]
            before = self.prev[i]
            after = self.nxt[j]
            if before >= 0:
                t = self.tok[before]
                self._add(pair_key(t, left), -w)
                key2 = pair_key(t, new)
                self._add(key2, w)
                self.where[key2].push_back(before)
                touched.push_back(key2)
            if after >= 0:
                t = self.tok[after]
                self._add(pair_key(right, t), -w)
                key2 = pair_key(new, t)
                self._add(key2, w)
                self.where[key2].push_back(i)
                touched.push_back(key2)
            self._add(key, -w)
            self.tok[i] = new
            self.nxt[i] = after
            if after >= 0:
                self.prev[after] = i
            self.nxt[j] = REMOVED
            self.prev[j] = REMOVED
            replaced += w
        return replaced

    def merge(self, uint32_t left, uint32_t right, uint32_t new):
        """Replace ``(left, right)`` by ``new`` everywhere, left to right.

        Returns ``(replacements, raised)``: ``raised`` lists
        ``(l, r, old_queued, count)`` for every pair whose count now exceeds
        its queued count (which becomes ``count``). The merged pair itself is
        taken to be off the queue.
        """
        cdef vector[uint64_t] touched
        cdef uint64_t key = pair_key(left, right)
        cdef int64_t replaced
        it = self.stats.find(key)
        if it != self.stats.end():
            deref(it).second.queued = 0
        with nogil:
            replaced = self._merge(left, right, new, touched)
        raised = []
        cdef PairStat* stat
        for key in touched:
            found = self.stats.find(key)
            if found == self.stats.end():
                continue
            stat = &deref(found).second
            if stat.count > stat.queued:
                raised.append((key >> 32, key & 0xFFFFFFFF, stat.queued, stat.count))
                stat.queued = stat.count
        return replaced, raised

    def sequences(self):
        """The current token sequences, by walking the links."""
        out = []
        cdef Py_ssize_t s
        cdef int32_t i
        for s in range(<Py_ssize_t>self.weights.size()):
            seq = []
            i = <int32_t>self.starts[s] if self.starts[s] < self.starts[s + 1] else -1
            while i >= 0:
                seq.append(self.tok[i])
                i = self.nxt[i]
            out.append(seq)
        return out

    def check(self):
        """Verify links, counts and the occurrence index against a recount.

        Raises AssertionError on any inconsistency; returns the counts and the
        queued counts for the caller to compare with its queue.
        """
        recount = {}
        cdef Py_ssize_t s
        cdef int32_t i, j
        for s in range(<Py_ssize_t>self.weights.size()):
            i = <int32_t>self.starts[s] if self.starts[s] < self.starts[s + 1] else -1
            assert i < 0 or self.prev[i] == -1, "sequence start has a predecessor"
            while i >= 0:
                j = self.nxt[i]
                if j >= 0:
                    assert self.prev[j] == i, f"links disagree at {i}->{j}"
                    pair = (self.tok[i], self.tok[j])
                    recount[pair] = recount.get(pair, 0) + self.weights[self.seq_of[i]]
                    found = self.where.find(pair_key(self.tok[i], self.tok[j]))
                    assert found != self.where.end() and i in list(deref(found).second), \
                        f"occurrence {pair} at {i} not indexed"
                i = j
        counts = {}
        queued = {}
        cdef unordered_map[uint64_t, PairStat].iterator it = self.stats.begin()
        while it != self.stats.end():
            pair = (deref(it).first >> 32, deref(it).first & 0xFFFFFFFF)
            if deref(it).second.count:
                counts[pair] = deref(it).second.count
            if deref(it).second.queued:
                queued[pair] = deref(it).second.queued
            inc(it)
        assert recount == counts, "incremental counts differ from a recount"
        return counts, queued
