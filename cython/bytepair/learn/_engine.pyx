# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False
# distutils: language = c++
"""Compiled pair engine: the hot loop of bytepair's incremental trainer.

The same class, with the same behaviour, as ``bytepair.learn._engine_py.PairEngine``;
that module documents the algorithm in plain Python. Here the state lives in
C++ vectors and one open-addressing pair table (count, queued count and
occurrences of a pair in one slot), and a merge runs without the GIL.
Positions are laid out sequence by sequence, heaviest sequences first, so a
position's weight is found from a short table of weight runs instead of being
stored with it.

One difference in how, not in what: the Python twin updates the counts of
the four neighbouring pairs at every replacement. Here a merge first sums,
per neighbouring token, the weight that moves from ``(t, a)`` to ``(t, m)``
and from ``(b, t)`` to ``(m, t)``, then applies each pair's net change once,
so a pair is looked up once per merge instead of once per occurrence.
"""

from array import array

from cython.operator cimport dereference as deref, preincrement as inc
cimport cpython.array as carray
from cpython.bytearray cimport PyByteArray_AS_STRING, PyByteArray_Resize
from libc.string cimport memcpy
from sortedcontainers import SortedList
from libc.stdint cimport int32_t, int64_t, uint8_t, uint16_t, uint32_t, uint64_t
from libcpp.algorithm cimport is_sorted, sort, unique, upper_bound
from libcpp.utility cimport pair
from libcpp.vector cimport vector

cdef extern from *:
    void __builtin_prefetch(const void* address) nogil

cdef int32_t REMOVED = -2
# Positions: PairEngine.pos holds one uint32 per slot. Sequences lie heaviest
# first, each followed by a BARRIER slot, and slot 0 is a BARRIER too, so every
# sequence sits between two barriers. A slot holds
#  - below GONE: the live token there;
#  - GONE | L: a position consumed by a merge. Consumed positions form runs
#    between two live positions (a merge consumes the position right after a
#    live one); the first and the last slot of each run hold the run's length
#    L, so next(i) = i + 1 + L and prev(k) = k - 1 - L read one slot each.
#    The other slots of a run hold some older GONE | L: only the ends count;
#  - BARRIER: a sequence end.
# Token IDs are therefore below GONE (2**31), which both twins check.
cdef uint32_t GONE = 0x80000000u
cdef uint32_t LENGTH = 0x7FFFFFFFu
cdef uint32_t BARRIER = 0xFFFFFFFFu
# A merge's scratch slots key a neighbouring token with this bit for a right
# neighbour (the token in the low 32 bits).
cdef uint64_t SIDE_RIGHT = <uint64_t>1 << 32
# A merge's scratch list of new windows (one per neighbouring token) longer than
# this many is freed after the merge: kept, the first merges' lists held their
# size for the rest of the loop.
cdef size_t SCRATCH_KEPT = 1 << 14
# A merge's occurrences lie anywhere in the corpus; reading each record is a
# cache miss. Asking for the record this many occurrences ahead overlaps them.
cdef size_t PREFETCH_AHEAD = 16
# Weights up to this far above the lightest are laid out by a counting sort.
cdef Py_ssize_t DIRECT_WEIGHTS = 1 << 16
# Slots are int32 (positions + 1 in 31 bits in an occurrence list): positions
# and sequence ends together stay below 2**31 - 1.
cdef int64_t MAX_POSITIONS = 2147483646
# Token IDs below this find their merge slot in a direct table (4 bytes per ID
# and side); larger, sparse IDs go through a hash map.
cdef uint32_t DENSE_SLOTS = 1 << 22
# Trim the heap once merges have freed this many bytes of occurrence lists: a
# trim walks the free memory (about a millisecond at 100 MB of text), so it
# runs a few dozen times in a whole fit, and the memory held free stays below
# about this much.
cdef size_t TRIM_BYTES = 2 << 20


cdef uint32_t _token_id(object new) except? 0:
    # A merge's new token, as the twin's token_id: an ID below GONE, or one clear line.
    if not 0 <= new < GONE:
        raise ValueError(f"new token ID {new} is out of range: the pair engine holds IDs "
                         f"from 0 to {GONE - 1}")
    return new


cdef const int64_t[:] _int64_view(object values):
    # values as an int64 buffer: read in place when it is one, else copied once.
    cdef const int64_t[:] view
    try:
        view = values
    except (TypeError, ValueError, BufferError):
        view = array("q", values)
    return view


cdef inline uint64_t pair_key(uint32_t left, uint32_t right) noexcept nogil:
    return (<uint64_t>left << 32) | right


# SuperBPE shapes, as bytepair.learn.superbpe.joined_shape: a word that runs
# across the seam (left ends in one, right starts in one) counts once.
cdef uint32_t MAX_SHAPE_WORDS = (1 << 29) - 1


cdef inline uint32_t joined_shape(uint32_t left, uint32_t right) noexcept nogil:
    cdef uint64_t words = (left >> 2) + (right >> 2) - (left & (right >> 1) & 1)
    if words > MAX_SHAPE_WORDS:
        words = MAX_SHAPE_WORDS
    return <uint32_t>(words << 2) | (left & 2) | (right & 1)


# Packed priorities, as bytepair.learn.rules.packed_priority: (2**63 - 1 - count)
# above the 64-bit pair key, so one int compares like (-count, left, right).
cdef int64_t TOP_COUNT = 0x7FFFFFFFFFFFFFFF
cdef object LOW_64 = 0xFFFFFFFFFFFFFFFF


cdef inline object packed(int64_t count, uint64_t key):
    cdef object high = TOP_COUNT - count
    cdef object low = key
    return (high << 64) | low


cdef inline uint64_t unpack(object entry, int64_t* count):
    cdef int64_t high = entry >> 64
    count[0] = TOP_COUNT - high
    return entry & LOW_64


cdef class PairEngine:
    """Linked token lists with exact pair counts and an occurrence index."""

    def __init__(self, tokens, starts, weights, list owned=None, bint sequences=True):
        """The sequences ``tokens[starts[s]:starts[s + 1]]`` with ``weights[s]``.

        With ``owned`` (the list ``[tokens, starts, weights]``, the three
        arguments then None), the list is emptied once the tokens are laid
        out, before the pair index is built: when nothing else holds them, the
        arrays are freed before the engine's largest allocations. With
        ``sequences=False`` the engine forgets where each of the caller's
        sequences lies (4 bytes a sequence), and :meth:`sequences` refuses.
        """
        self.first_fit = True
        self.keep_floor = 0
        self.recounts = 0
        self.forgotten = 0
        self.run_seen = 0
        if owned is not None:
            tokens, starts, weights = owned
        cdef Py_ssize_t n = len(tokens), count = len(weights), s
        if n + count > MAX_POSITIONS:
            raise ValueError(
                f"the corpus has {n} token positions in {count} sequences; one engine holds "
                f"at most {MAX_POSITIONS} positions and sequence ends together"
            )
        if len(starts) != count + 1 or starts[len(starts) - 1] != n:
            raise ValueError("starts must hold one offset per sequence plus the total length")
        cdef const unsigned char[:] narrow = None
        cdef const uint32_t[:] wide = None
        if isinstance(tokens, (bytes, bytearray)):
            narrow = tokens
        else:
            try:
                wide = tokens
            except (TypeError, ValueError, BufferError):
                wide = array("I", tokens)
        # Read in place as int64 buffers (array("q"), what counting makes): a copy
        # of each, and a sort key per sequence, held beside the counts' own arrays
        # and the new slots, set the peak of training at 10 GB of text. Anything
        # else is converted once.
        cdef const int64_t[:] starts_view = _int64_view(starts)
        cdef const int64_t[:] weights_view = _int64_view(weights)
        cdef uint32_t top
        with nogil:
            top = self._lay_out(narrow, wide, starts_view, weights_view)
        narrow = wide = None
        starts_view = weights_view = None
        tokens = starts = weights = None
        self.sequence_count = self.order.size()
        self.keeps_order = sequences
        if not sequences:
            self.order.clear()
            self.order.shrink_to_fit()
        if owned is not None:
            owned.clear()
        if top >= GONE:
            self.pos.clear()
            self.pos.shrink_to_fit()
            raise ValueError(f"tokens: token ID {top} is too large; the pair engine holds "
                             f"IDs below {GONE}")
        with nogil:
            self._index_pairs()

    cdef uint32_t _lay_out(self, const unsigned char[:] narrow, const uint32_t[:] wide,
                           const int64_t[:] given_starts,
                           const int64_t[:] given_weights) noexcept nogil:
        # Fill pos: sequences heaviest first (ties in the caller's order), each
        # after a BARRIER slot, and one BARRIER at the end. Returns the largest token.
        cdef Py_ssize_t count = given_weights.shape[0], n = given_starts[count]
        cdef Py_ssize_t s, k, i, lo, hi, at
        cdef uint32_t t, top = 0
        cdef vector[pair[int64_t, int64_t]] heavy
        cdef vector[int64_t] bucket_at
        cdef int64_t lightest = 0, weight
        cdef uint64_t above
        if count:
            lightest = given_weights[0]
        for s in range(count):
            lightest = min(lightest, given_weights[s])
        # self.order: sequences by weight, heaviest first, ties in the caller's
        # order. A counting sort over the weights up to DIRECT_WEIGHTS above the
        # lightest (nearly all: most pieces are seen a few times), after the
        # heavier ones, which alone are sorted; their (-weight, index) pairs are
        # all distinct, so sort gives the stable order. Sorting them all took
        # 0.2 s at 1 GB.
        bucket_at.resize(DIRECT_WEIGHTS, 0)
        for s in range(count):
            above = <uint64_t>given_weights[s] - <uint64_t>lightest  # exact: w >= lightest
            if above < <uint64_t>DIRECT_WEIGHTS:
                bucket_at[above] += 1
            else:
                heavy.push_back(pair[int64_t, int64_t](-given_weights[s], s))
        sort(heavy.begin(), heavy.end())
        self.order.resize(count)
        for k in range(<Py_ssize_t>heavy.size()):
            self.order[k] = <int32_t>heavy[k].second
        at = heavy.size()
        vector[pair[int64_t, int64_t]]().swap(heavy)
        for k in range(DIRECT_WEIGHTS - 1, -1, -1):
            bucket_at[k], at = at, at + bucket_at[k]
        for s in range(count):
            above = <uint64_t>given_weights[s] - <uint64_t>lightest
            if above < <uint64_t>DIRECT_WEIGHTS:
                self.order[bucket_at[above]] = <int32_t>s
                bucket_at[above] += 1
        vector[int64_t]().swap(bucket_at)
        self.pos.reserve(n + count + 1)  # a fresh block: huge pages before any write
        want_huge_pages(self.pos.data(), (n + count + 1) * sizeof(uint32_t))
        self.pos.resize(n + count + 1)
        self.pos[0] = BARRIER
        at = 1
        for k in range(count):
            s = self.order[k]
            weight = given_weights[s]
            if k and weight != given_weights[self.order[k - 1]]:
                self.run_end.push_back(at)
                self.run_weight.push_back(given_weights[self.order[k - 1]])
            lo = given_starts[s]
            hi = given_starts[s + 1]
            for i in range(lo, hi):
                t = narrow[i] if narrow is not None else wide[i]
                top = max(top, t)
                self.pos[at + i - lo] = t
            at += hi - lo
            self.pos[at] = BARRIER
            at += 1
        if count:
            self.run_end.push_back(at)
            self.run_weight.push_back(given_weights[self.order[count - 1]])
        return top

    cdef void _index_pairs(self) noexcept nogil:
        # Count every window and record where it lies. Two passes: count the
        # windows of each pair first, so that each occurrence list is allocated
        # once at its exact size. The table outgrows the CPU caches: each
        # window's slot is asked for PREFETCH_AHEAD windows early, so the
        # lookups overlap. A window is two live slots side by side (no
        # position is consumed yet).
        cdef Py_ssize_t i, n = self.pos.size()
        cdef PairSlot* info
        for i in range(n - 1):
            if i + PREFETCH_AHEAD + 1 < n:
                self.pairs.prefetch(pair_key(self.pos[i + PREFETCH_AHEAD],
                                             self.pos[i + PREFETCH_AHEAD + 1]))
            if self.pos[i] < GONE and self.pos[i + 1] < GONE:
                self.pairs.get(pair_key(self.pos[i], self.pos[i + 1])).queued += 1
        self._size_lists()
        # Here each occurrence list is a heap block of its own, read at
        # every push: its slot is asked for twice as early, then the block.
        for i in range(n - 1):
            if i + 2 * PREFETCH_AHEAD + 1 < n:
                self.pairs.prefetch(pair_key(self.pos[i + 2 * PREFETCH_AHEAD],
                                             self.pos[i + 2 * PREFETCH_AHEAD + 1]))
            if (i + PREFETCH_AHEAD + 1 < n and self.pos[i + PREFETCH_AHEAD] < GONE
                    and self.pos[i + PREFETCH_AHEAD + 1] < GONE):
                info = self.pairs.find(pair_key(self.pos[i + PREFETCH_AHEAD],
                                                self.pos[i + PREFETCH_AHEAD + 1]))
                __builtin_prefetch(info.where.begin())
            if self.pos[i] < GONE and self.pos[i + 1] < GONE:
                info = self.pairs.find(pair_key(self.pos[i], self.pos[i + 1]))
                info.count += self._weight(<int32_t>i)
                info.where.push_back(<int32_t>i)

    cdef void _size_lists(self) noexcept nogil:
        # Each pair's windows were counted into its queued field: allocate its
        # occurrence list at that size, once, and leave the pair unqueued.
        cdef PairSlot* info
        cdef size_t k
        for k in range(self.pairs.capacity()):
            info = self.pairs.at(k)
            if info.queued > 0:
                info.where.reserve(info.queued)
                info.queued = 0

    cdef void _drop_below(self, int64_t floor) noexcept nogil:
        # Forget the pairs counted fewer than floor times: no rule at or above the
        # floor can be one of them. Their queue entries are left to lazy deletion.
        cdef vector[uint64_t] rare
        cdef PairSlot* info
        cdef size_t k
        for k in range(self.pairs.capacity()):
            info = self.pairs.at(k)
            if info.queued >= 0 and info.count < floor:
                rare.push_back(info.key)
        for k in range(rare.size()):
            self.pairs.erase(self.pairs.find(rare[k]))
        self.forgotten += rare.size()

    cdef void _recount(self) noexcept nogil:
        # Count and index every live window again, as _index_pairs does on a
        # fresh layout, but stepping over consumed runs. Every pair is unqueued.
        cdef Py_ssize_t i, n = self.pos.size()
        cdef int32_t j
        cdef PairSlot* info
        self.pairs.clear()
        for i in range(n - 1):
            if self.pos[i] < GONE:
                j = self._after(<int32_t>i)
                if self.pos[j] != BARRIER:
                    self.pairs.get(pair_key(self.pos[i], self.pos[j])).queued += 1
        self._size_lists()
        for i in range(n - 1):
            if self.pos[i] < GONE:
                j = self._after(<int32_t>i)
                if self.pos[j] != BARRIER:
                    info = self.pairs.find(pair_key(self.pos[i], self.pos[j]))
                    info.count += self._weight(<int32_t>i)
                    info.where.push_back(<int32_t>i)

    def keep_pairs_from(self, int64_t count):
        """Keep no new pair counted fewer than ``count`` times, and drop the kept ones
        below it when the pair table would grow.

        Exact for every rule counted ``count`` times or more (a pair's count never
        grows after the merge that made it); when the rules come down below it,
        :meth:`fit` counts every pair again and keeps all from then on. The floor
        only rises, and this does nothing once such a recount happened. For the
        engine's own queue (:meth:`open_queue`) only.
        """
        if self.queue is None:
            raise RuntimeError("call open_queue before keep_pairs_from")
        if self.recounts == 0 and count > self.keep_floor:
            self.keep_floor = count

    cdef int64_t _weight(self, int32_t i) noexcept nogil:
        # The run holding position i: most positions are in the last, lightest one;
        # the others come in increasing order within a merge or a scan, so the run
        # found last, or the next, usually holds i; else a binary search.
        cdef size_t last = self.run_end.size() - 1, r = self.run_seen
        if last == 0 or i >= self.run_end[last - 1]:
            return self.run_weight[last]
        if r < last and i < self.run_end[r] and (r == 0 or i >= self.run_end[r - 1]):
            return self.run_weight[r]
        if r + 1 < last and i < self.run_end[r + 1] and i >= self.run_end[r]:
            self.run_seen = r + 1
            return self.run_weight[r + 1]
        r = upper_bound(self.run_end.begin(), self.run_end.end(), <int64_t>i) - self.run_end.begin()
        self.run_seen = r
        return self.run_weight[r]

    cdef int32_t _after(self, int32_t i) noexcept nogil:
        # The first slot after i that is not consumed: the next live position or a barrier.
        cdef uint32_t x = self.pos[i + 1]
        if x < GONE or x == BARRIER:
            return i + 1
        return i + 1 + <int32_t>(x & LENGTH)

    cdef int32_t _next(self, int32_t i) noexcept nogil:
        # The next live position, -1 at a barrier, REMOVED when i was consumed.
        if self.pos[i] >= GONE:
            return REMOVED
        cdef int32_t k = self._after(i)
        return -1 if self.pos[k] == BARRIER else k

    cdef int32_t _prev(self, int32_t i) noexcept nogil:
        # The previous live position of a live i, -1 at a barrier.
        cdef uint32_t x = self.pos[i - 1]
        cdef int32_t k = i - 1
        if x >= GONE and x != BARRIER:
            k -= <int32_t>(x & LENGTH)
        return -1 if self.pos[k] == BARRIER else k

    cdef void _consume(self, int32_t i, int32_t j, int32_t end) noexcept nogil:
        # A merge at i took j = next(i); end = _after(j). The runs before and
        # after j and j itself become one run, i + 1 .. end - 1: its two end
        # slots get its length, and j is marked too (it may now lie inside). O(1).
        cdef uint32_t run = GONE | <uint32_t>(end - 1 - i)
        self.pos[i + 1] = run
        self.pos[j] = run
        self.pos[end - 1] = run

    def pair_counts(self):
        """Every pair with a nonzero count, as ``(left, right, count)``; marks each as queued."""
        return [(left, right, c) for left, right, _, c in self.raise_above(1)]

    def raise_above(self, int64_t floor):
        """Queue every pair with ``count >= floor`` above its queued count. O(pairs).

        Returns ``(left, right, old_queued, count)`` for each; its queued count
        becomes ``count``.
        """
        out = []
        cdef PairSlot* info
        cdef size_t k
        for k in range(self.pairs.capacity()):
            info = self.pairs.at(k)
            if info.queued >= 0 and info.count >= floor and info.count > info.queued:
                out.append((info.key >> 32, info.key & 0xFFFFFFFF, info.queued, info.count))
                info.queued = info.count
        return out

    def max_count(self):
        """The greatest pair count (0 when no pair is left). O(pairs)."""
        cdef int64_t best = 0
        cdef size_t k
        for k in range(self.pairs.capacity()):
            if self.pairs.at(k).queued >= 0 and self.pairs.at(k).count > best:
                best = self.pairs.at(k).count
        return best

    def count(self, uint32_t left, uint32_t right):
        """Current weighted count of ``(left, right)``. O(1)."""
        info = self.pairs.find(pair_key(left, right))
        return info.count if info != NULL else 0

    def requeue(self, uint32_t left, uint32_t right):
        """Record that the pair is queued again under its current count, and return it."""
        info = self.pairs.find(pair_key(left, right))
        if info == NULL:
            return 0
        cdef int64_t c = info.count
        if c:
            info.queued = c
        else:
            self.pairs.erase(info)
        return c

    cdef void _add(self, uint64_t key, int64_t delta) noexcept nogil:
        cdef PairSlot* info = self.pairs.get(key)
        info.count += delta
        if info.count == 0:
            if info.queued == 0:
                self.pairs.erase(info)
            else:
                # No live occurrence is left: free its index entries.
                info.where.release()

    cdef uint32_t _slot(self, uint64_t side_token) noexcept nogil:
        # side_token: bit 32 set for a right neighbour, the token below it.
        cdef uint32_t slot = <uint32_t>self.slot_pair.size()
        cdef uint32_t t = <uint32_t>side_token
        cdef bint right = (side_token >> 32) != 0
        if t < DENSE_SLOTS:
            if t >= self.left_slot.size():
                self.left_slot.resize(max(<size_t>t + 1, 2 * self.left_slot.size()), -1)
                self.right_slot.resize(self.left_slot.size(), -1)
            if right:
                if self.right_slot[t] >= 0:
                    return <uint32_t>self.right_slot[t]
                self.right_slot[t] = <int32_t>slot
            else:
                if self.left_slot[t] >= 0:
                    return <uint32_t>self.left_slot[t]
                self.left_slot[t] = <int32_t>slot
        else:
            found = self.slot_of.find(side_token)
            if found != self.slot_of.end():
                return deref(found).second
            self.slot_of[side_token] = slot
        self.slot_pair.push_back(side_token)
        self.slot_delta.push_back(0)
        if self.slot_new.size() <= slot:
            self.slot_new.resize(slot + 1)
        return slot

    cdef int64_t _merge(self, uint32_t a, uint32_t b, uint32_t m,
                        vector[uint64_t]& candidates) noexcept nogil:
        cdef uint64_t key = pair_key(a, b)
        cdef Positions positions
        cdef PairSlot* info = self.pairs.find(key)
        if self.max_words:
            if self.shape.size() <= m:
                self.shape.resize(m + 1)
            self.shape[m] = joined_shape(self.shape[a], self.shape[b])
        if info != NULL:
            positions.swap(info.where)
        positions.to_heap()  # a list of one or two held in its slot: sort in place below
        # Ascending positions are left to right within every sequence, which
        # is what makes overlapping matches (`aaa`) resolve like the naive pass.
        if not is_sorted(positions.begin(), positions.end()):
            sort(positions.begin(), positions.end())
        positions.truncate(unique(positions.begin(), positions.end()) - positions.begin())
        # Replace, gathering the new windows per neighbouring token; update the
        # counts; then record the windows of the new pairs that are kept.
        cdef int64_t replaced = self._replace(a, b, m, positions)
        positions.release()
        self._apply_deltas(a, b, m, replaced)
        self._record_windows(m, candidates)
        cdef size_t slot
        cdef uint32_t t
        for slot in range(self.slot_pair.size()):
            t = <uint32_t>self.slot_pair[slot]  # the low 32 bits
            if t < DENSE_SLOTS:
                if self.slot_pair[slot] & SIDE_RIGHT:
                    self.right_slot[t] = -1
                else:
                    self.left_slot[t] = -1
        self.slot_of.clear()
        self.slot_pair.clear()
        self.slot_delta.clear()
        sort(candidates.begin(), candidates.end())
        candidates.erase(unique(candidates.begin(), candidates.end()), candidates.end())
        return replaced

    cdef int64_t _replace(self, uint32_t a, uint32_t b, uint32_t m,
                          Positions& positions) noexcept nogil:
        # Replace every valid occurrence of (a, b), left to right, summing per
        # neighbouring token the weight moving to its new pair and gathering
        # the windows that move (slot_new).
        cdef int64_t replaced = 0, w
        cdef int32_t i, j, before, end
        cdef uint32_t slot
        cdef size_t k, count = positions.size()
        for k in range(count):
            if k + PREFETCH_AHEAD < count:
                __builtin_prefetch(&self.pos[positions[k + PREFETCH_AHEAD]])
            i = positions[k]
            # Skip stale entries: consumed positions and changed tokens (a
            # marker is never a token, and b is not a barrier).
            if self.pos[i] != a:
                continue
            j = self._after(i)
            if self.pos[j] != b:
                continue
            w = self._weight(i)
            before = self._prev(i)
            end = self._after(j)  # the position after the pair, or a barrier
            if before >= 0:
                slot = self._slot(self.pos[before])
                self.slot_delta[slot] += w
                self.slot_new[slot].push_back(before)
            if self.pos[end] != BARRIER:
                slot = self._slot(SIDE_RIGHT | self.pos[end])
                self.slot_delta[slot] += w
                self.slot_new[slot].push_back(i)
            self.pos[i] = m
            self._consume(i, j, end)
            replaced += w
        return replaced

    cdef void _apply_deltas(self, uint32_t a, uint32_t b, uint32_t m,
                            int64_t replaced) noexcept nogil:
        # Net change per pair, one lookup each: (t, a) and (b, t) lose what
        # (t, m) and (m, t) gain; the merged pair loses every replacement.
        cdef vector[pair[uint64_t, int64_t]]* deltas = &self.deltas
        cdef size_t slot, k, count
        cdef uint32_t t
        cdef int64_t d
        cdef uint64_t key
        deltas.clear()
        for slot in range(self.slot_pair.size()):
            t = <uint32_t>self.slot_pair[slot]  # the low 32 bits
            d = self.slot_delta[slot]
            if self.slot_pair[slot] & SIDE_RIGHT:
                deltas.push_back(pair[uint64_t, int64_t](pair_key(b, t), -d))
                deltas.push_back(pair[uint64_t, int64_t](pair_key(m, t), d))
            else:
                deltas.push_back(pair[uint64_t, int64_t](pair_key(t, a), -d))
                deltas.push_back(pair[uint64_t, int64_t](pair_key(t, m), d))
        deltas.push_back(pair[uint64_t, int64_t](pair_key(a, b), -replaced))
        sort(deltas.begin(), deltas.end())
        # The pairs' slots lie anywhere in the table: request each slot a few
        # pairs ahead of its update, so that the cache misses overlap.
        count = deltas.size()
        for k in range(min(PREFETCH_AHEAD, count)):
            self.pairs.prefetch(deref(deltas)[k].first)
        k = 0
        while k < count:
            key = deref(deltas)[k].first
            d = 0
            while k < count and deref(deltas)[k].first == key:
                if k + PREFETCH_AHEAD < count:
                    self.pairs.prefetch(deref(deltas)[k + PREFETCH_AHEAD].first)
                d += deref(deltas)[k].second
                k += 1
            if d > 0 and self.keep_floor > 1:
                # A new pair (it holds m): too rare to be kept, or kept, making
                # room first by dropping the kept pairs below the floor.
                if d < self.keep_floor:
                    continue
                if 4 * (self.pairs.size() + 1) > 3 * self.pairs.capacity():
                    self._drop_below(self.keep_floor)
            elif d < 0 and self.keep_floor > 1 and self.pairs.find(key) == NULL:
                continue  # a pair that was not kept
            if d:
                self._add(key, d)

    cdef PairSlot* _new_pair(self, uint32_t m, size_t slot) noexcept nogil:
        # The pair of m and slot's token, when it is still seen (else NULL).
        cdef uint32_t t = <uint32_t>self.slot_pair[slot]
        cdef PairSlot* info = self.pairs.find(
            pair_key(m, t) if self.slot_pair[slot] & SIDE_RIGHT else pair_key(t, m))
        return info if info != NULL and info.count > 0 else NULL

    cdef void _record_windows(self, uint32_t m, vector[uint64_t]& candidates) noexcept nogil:
        # Append each slot's gathered windows to its new pair's list, and free
        # the large scratch lists (SCRATCH_KEPT).
        cdef PairSlot* info
        cdef size_t slot
        for slot in range(self.slot_pair.size()):
            info = self._new_pair(m, slot)
            if info != NULL:
                if info.where.size() + self.slot_new[slot].size() > info.where.capacity():
                    self._compact(info)
                info.where.append(self.slot_new[slot].data(), self.slot_new[slot].size())
                candidates.push_back(info.key)
            if self.slot_new[slot].capacity() > SCRATCH_KEPT:
                vector[int32_t]().swap(self.slot_new[slot])
            else:
                self.slot_new[slot].clear()

    cdef bint _eligible(self, uint64_t key) noexcept nogil:
        if not self.max_words:
            return True
        return (joined_shape(self.shape[key >> 32], self.shape[<uint32_t>key]) >> 2
                <= <uint64_t>self.max_words)

    def limit_words(self, shapes, int64_t max_words):
        """Never queue a pair whose joined bytes hold more than ``max_words`` words.

        As the twin's ``limit_words``: ``shapes`` holds the shape of every
        token so far, by ID; each merge adds its new token's. O(tokens).
        """
        if max_words < 1:
            raise ValueError(f"max_words must be at least 1, got {max_words}")
        cdef uint32_t top = 0
        cdef size_t i
        for i in range(self.pos.size()):
            if self.pos[i] < GONE and self.pos[i] > top:
                top = self.pos[i]
        if self.pos.size() and len(shapes) <= top:
            raise ValueError(f"shapes: {len(shapes)} given, but the sequences hold token {top}")
        self.shape.clear()
        for value in shapes:
            self.shape.push_back(value)
        self.max_words = max_words

    def eligible(self, uint32_t left, uint32_t right):
        """Whether the pair may be learned: always, unless a word cap excludes it. O(1)."""
        return self._eligible(pair_key(left, right))

    cdef void _compact(self, PairSlot* info) noexcept nogil:
        # Drop the stale entries of an occurrence list before it would grow:
        # merges elsewhere leave entries behind, and without this the index
        # grows by about one entry per replacement. Amortized O(1) per entry.
        cdef uint32_t a = <uint32_t>(info.key >> 32), b = <uint32_t>info.key
        cdef size_t k, kept = 0
        cdef int32_t i, j
        for k in range(info.where.size()):
            i = info.where.get(k)
            j = self._next(i)
            if j >= 0 and self.pos[i] == a and self.pos[j] == b:
                info.where.set(kept, i)
                kept += 1
        info.where.truncate(kept)

    def merge(self, uint32_t left, uint32_t right, new, int64_t floor=1):
        """Replace ``(left, right)`` by ``new`` everywhere, left to right.

        Returns ``(replacements, raised)``: ``raised`` lists, in pair order,
        ``(l, r, old_queued, count)`` for every pair whose count now exceeds
        its queued count and is at least ``floor`` (its queued count becomes
        ``count``). The merged pair itself is taken to be off the queue.
        """
        cdef uint32_t m = _token_id(new)
        cdef vector[uint64_t] candidates
        cdef uint64_t key
        cdef int64_t replaced
        with nogil:
            replaced = self._merge_pair(left, right, m, candidates)
        raised = []
        for key in candidates:
            info = self.pairs.find(key)
            if info == NULL:
                continue
            if info.count > info.queued and info.count >= floor and self._eligible(key):
                raised.append((key >> 32, key & 0xFFFFFFFF, info.queued, info.count))
                info.queued = info.count
        return replaced, raised

    cdef int64_t _merge_pair(self, uint32_t left, uint32_t right, uint32_t new,
                             vector[uint64_t]& candidates) noexcept nogil:
        # merge() without its Python parts (for the compiled parity loop): the merged
        # pair leaves the queue, the pairs it raised are left in candidates (sorted,
        # each once), and the heap is trimmed when merges have freed enough.
        cdef PairSlot* info = self.pairs.find(pair_key(left, right))
        if info != NULL:
            info.queued = 0
            if info.count == 0:
                self.pairs.erase(info)  # kept only for its queue entry, now gone
        elif self.keep_floor <= 1 and not self.max_words:
            return 0  # every pair is kept and no shape is due: the pair is nowhere here
        cdef int64_t replaced = self._merge(left, right, new, candidates)
        if positions_freed_load() >= TRIM_BYTES:
            trim_heap()
        return replaced

    def open_queue(self, int64_t floor):
        """Own the priority queue from now on, holding every pair counted ``>= floor``. O(P log P).

        The queue is a ``SortedList`` of packed priorities
        (``bytepair.learn.rules.packed_priority``). An entry is current when its
        count equals the pair's queued count; any other entry was left behind
        by a later re-queue (lazy deletion) and is dropped at the front.
        """
        self.floor = floor
        self.queue = SortedList(self._queue_above(floor))

    cdef list _queue_above(self, int64_t floor):
        # raise_above, as packed entries for the engine's own queue.
        out = []
        cdef PairSlot* info
        cdef size_t k
        for k in range(self.pairs.capacity()):
            info = self.pairs.at(k)
            if (info.queued >= 0 and info.count >= floor and info.count > info.queued
                    and self._eligible(info.key)):
                out.append(packed(info.count, info.key))
                info.queued = info.count
        return out

    cdef bint _take_front(self, int64_t* count, uint32_t* left, uint32_t* right) except -1:
        # The first current, exact entry, as the twin's _valid_front, taken out of the queue
        # (one pop, not a look and then a pop: each is a Python call); False when none is left.
        queue = self.queue
        cdef int64_t queued_count, q, c
        cdef uint64_t key
        cdef PairSlot* info
        while True:
            try:
                front = queue.pop(0)
            except IndexError:
                return False
            key = unpack(front, &queued_count)
            info = self.pairs.find(key)
            q = info.queued if info != NULL else 0
            if q != queued_count:
                continue  # left behind by a later re-queue of the pair
            c = info.count
            if c == q:
                count[0] = c
                left[0] = <uint32_t>(key >> 32)
                right[0] = <uint32_t>key
                return True
            # The count changed since it was queued: re-queue at the true count.
            if c:
                info.queued = c
                queue.add(packed(c, key))
            else:
                self.pairs.erase(info)

    def fit(self, int64_t max_merges, int64_t min_frequency, join, int64_t first_rank,
            int64_t floor_divisor):
        """Learn up to ``max_merges`` rules with the queue of :meth:`open_queue`.

        The twin's ``fit`` documents the contract; returns arrays
        ``(lefts, rights, new_ids, counts, replacements)``. The whole step
        loop runs here: per rule one merge, one front lookup and O(log P)
        per queue entry added or dropped, with no Python frame of our own.
        """
        cdef vector[uint32_t] lefts, rights, new_ids
        cdef vector[int64_t] counts, replacements
        cdef vector[uint64_t] candidates
        cdef int64_t count = 0, replaced
        cdef uint32_t left = 0, right = 0, new
        cdef uint64_t key
        cdef bint found
        cdef PairSlot* info
        queue = self.queue
        if queue is None:
            raise RuntimeError("call open_queue before fit")
        add = queue.add
        if min_frequency < 1:
            min_frequency = 1
        if self.first_fit:
            # What the caller freed after building the engine (the count table, the
            # flat arrays) is free heap memory from now on: give it back once.
            self.first_fit = False
            trim_heap()
        while <int64_t>lefts.size() < max_merges:
            found = self._take_front(&count, &left, &right)
            while not found or count < self.floor:
                if found:  # back into the queue, which pairs below the floor may now beat
                    add(packed(count, pair_key(left, right)))
                    found = False
                # Pairs below the floor may beat the queue's best: lower it.
                if self.floor <= min_frequency:
                    break
                self.floor = max(min_frequency, self.floor // floor_divisor)
                queue.update(self._queue_above(self.floor))
                found = self._take_front(&count, &left, &right)
            if self.keep_floor > 1 and self.keep_floor > min_frequency and (
                    not found or count < self.keep_floor):
                # A pair that was not kept may count this much: count them all again
                # (the queue is made anew).
                with nogil:
                    self._recount()
                self.keep_floor = 0
                self.recounts += 1
                self.queue = SortedList(self._queue_above(self.floor))
                queue = self.queue
                add = queue.add
                continue
            if not found or count < min_frequency:
                if found:  # not learned: it stays queued
                    add(packed(count, pair_key(left, right)))
                break
            new = _token_id(join(left, right, first_rank + <int64_t>lefts.size()))
            self.pairs.find(pair_key(left, right)).queued = 0
            with nogil:
                replaced = self._merge(left, right, new, candidates)
                if positions_freed_load() >= TRIM_BYTES:
                    trim_heap()
            for key in candidates:
                info = self.pairs.find(key)
                if (info != NULL and info.count > info.queued and info.count >= self.floor
                        and self._eligible(key)):
                    info.queued = info.count
                    add(packed(info.count, key))
            candidates.clear()
            lefts.push_back(left)
            rights.push_back(right)
            new_ids.push_back(new)
            counts.push_back(count)
            replacements.push_back(replaced)
        return (array("I", lefts), array("I", rights), array("I", new_ids),
                array("q", counts), array("q", replacements))

    def release(self):
        """Free the pair table, the occurrence lists and the positions, without the GIL.

        The engine is empty afterwards (no sequences, no pairs) and cannot
        merge. Freeing takes a while for a large engine, whose occurrence
        lists are blocks of their own, so a caller that is done with it may
        run this on another thread and go on.
        """
        self.queue = None
        self.sequence_count = 0
        with nogil:
            self.pairs.clear()
            self.pos.clear()
            self.pos.shrink_to_fit()
            self.order.clear()
            self.order.shrink_to_fit()
            self.slot_new.clear()
            self.slot_new.shrink_to_fit()
            trim_heap()

    def sequences(self, bint release=False):
        """The current token sequences, by walking the links, in the caller's order.

        ``release=True`` first frees the pair table and the queue, which the
        sequences do not need (the engine cannot merge afterwards).
        """
        if not self.keeps_order:
            raise ValueError("this engine was built with sequences=False: it does not keep "
                             "the order of its sequences")
        if release:
            self.pairs.clear()
            self.queue = None
            self.slot_new.clear()
            self.slot_new.shrink_to_fit()
        cdef Py_ssize_t k
        cdef int32_t i
        cdef uint32_t top = 0
        for i in range(<int32_t>self.pos.size()):
            if self.pos[i] < GONE and self.pos[i] > top:
                top = self.pos[i]
        # One int object per token ID, shared by every list (not one per position).
        cdef list ints = list(range(top + 1)) if top < DENSE_SLOTS else None
        cdef list out = [None] * <Py_ssize_t>self.order.size()
        cdef int32_t at = 1  # where laid-out sequence k starts
        for k in range(<Py_ssize_t>self.order.size()):
            seq = []
            i = at if self.pos[at] != BARRIER else -1
            while i >= 0:
                seq.append(ints[self.pos[i]] if ints is not None else self.pos[i])
                i = self._next(i)
            out[self.order[k]] = seq
            at = self._sequence_end(at) + 1
        return out

    cdef int32_t _sequence_end(self, int32_t at) noexcept nogil:
        # The BARRIER slot that ends the sequence starting at slot `at`: the
        # sequences' starts are not stored (4 bytes a piece), since only
        # sequences() and check() walk them, in layout order.
        while self.pos[at] != BARRIER:
            at = self._after(at)
        return at

    def check(self):
        """Verify links, counts and the occurrence index against a recount.

        Raises AssertionError on any inconsistency; returns the counts and the
        queued counts for the caller to compare with its queue.
        """
        recount = {}
        cdef Py_ssize_t k
        cdef int32_t i, j
        cdef PairSlot* info
        cdef int32_t at = 1  # where laid-out sequence k starts
        for k in range(self.sequence_count):
            i = at if self.pos[at] != BARRIER else -1
            at = self._sequence_end(at) + 1
            assert i < 0 or self._prev(i) == -1, "sequence start has a predecessor"
            while i >= 0:
                j = self._next(i)
                for gone in range(i + 1, self._after(i)):
                    assert GONE <= self.pos[gone] < BARRIER, f"slot {gone} is not consumed"
                if j >= 0:
                    assert self._prev(j) == i, f"links disagree at {i}->{j}"
                    pair_ids = (self.pos[i], self.pos[j])
                    recount[pair_ids] = recount.get(pair_ids, 0) + self._weight(i)
                    info = self.pairs.find(pair_key(self.pos[i], self.pos[j]))
                    assert (info != NULL and info.where.contains(i)) or (
                        info == NULL and self.keep_floor > 1), \
                        f"occurrence {pair_ids} at {i} not indexed"
                i = j
        counts = {}
        queued = {}
        cdef size_t slot, used = 0
        for slot in range(self.pairs.capacity()):
            info = self.pairs.at(slot)
            if info.queued < 0:
                continue
            used += 1
            pair_ids = (info.key >> 32, info.key & 0xFFFFFFFF)
            assert self.pairs.find(info.key) == info, f"{pair_ids} not found where it is stored"
            assert info.count or info.queued, f"{pair_ids} kept for nothing"
            if info.count:
                counts[pair_ids] = info.count
            if info.queued:
                queued[pair_ids] = info.queued
        assert used == self.pairs.size(), "the pair table miscounts its pairs"
        if self.keep_floor > 1:
            # Pairs not kept count fewer than keep_floor times; the kept ones exactly.
            assert all(c < self.keep_floor for p, c in recount.items() if p not in counts), \
                "a pair not kept counts keep_floor times or more"
            recount = {p: c for p, c in recount.items() if p in counts}
        assert recount == counts, "incremental counts differ from a recount"
        return counts, queued



# The cold cut (bytepair.learn.segments documents it and holds its plain twin):
# count every window's pair, then keep only the stretches of each sequence
# joined by pairs seen at least `floor` times.
cdef extern from *:
    """
    #include <algorithm>
    #include <cstdint>
    #include <cstring>
    #include <functional>
    #include <thread>
    #include <vector>

    // Pair counts without occurrences: 16 bytes a slot, open addressing with
    // linear probing, doubled by rehashing at 3/4 full. Keys are below 2**63
    // (token IDs below 2**31), so an all-ones key marks an empty slot.
    class CountTable {
        struct Slot { uint64_t key; int64_t count; };
        static constexpr uint64_t EMPTY = ~0ull;
        std::vector<Slot> slots_;
        size_t used_ = 0;
        int shift_ = 64;

        size_t home(uint64_t key) const {
            return (size_t)((key * 0x9E3779B97F4A7C15ull) >> shift_);
        }
        void rehash(size_t n) {
            std::vector<Slot> old(n, Slot{EMPTY, 0});
            old.swap(slots_);
            shift_ = 64 - __builtin_ctzll(n);
            size_t mask = n - 1;
            for (const Slot& s : old) {
                if (s.key == EMPTY) continue;
                size_t i = home(s.key);
                while (slots_[i].key != EMPTY) i = (i + 1) & mask;
                slots_[i] = s;
            }
        }

    public:
        CountTable() { rehash(1 << 16); }
        // Room for `pairs` pairs without a rehash.
        void reserve(size_t pairs) {
            size_t n = slots_.size();
            while (3 * n < 4 * pairs) n *= 2;
            if (n > slots_.size()) rehash(n);
        }
        void prefetch(uint64_t key) const { __builtin_prefetch(&slots_[home(key)]); }
        void add(uint64_t key, int64_t count) {
            if (4 * (used_ + 1) > 3 * slots_.size()) rehash(2 * slots_.size());
            size_t mask = slots_.size() - 1;
            for (size_t i = home(key);; i = (i + 1) & mask) {
                Slot& s = slots_[i];
                if (s.key == key) { s.count += count; return; }
                if (s.key == EMPTY) { s.key = key; s.count = count; ++used_; return; }
            }
        }
        size_t size() const { return used_; }
        size_t at_least(int64_t floor) const {
            size_t n = 0;
            for (const Slot& s : slots_) n += s.key != EMPTY && s.count >= floor;
            return n;
        }
        template <class Mark> void mark_at_least(int64_t floor, Mark& mark) const {
            for (const Slot& s : slots_)
                if (s.key != EMPTY && s.count >= floor) mark.set(s.key);
        }
        template <class Keep> void counts(std::vector<int64_t>& out, const Keep& keep) const {
            for (const Slot& s : slots_)
                if (s.key != EMPTY && keep(s.key)) out.push_back(s.count);
        }
        void clear() { std::vector<Slot>().swap(slots_); used_ = 0; }
    };

    // A set of pairs that may answer yes for a pair not in it, never no for
    // one in it (a blocked Bloom filter): 32 bits a pair, each pair sets 3
    // bits of one 64-bit word, so a test reads one word of a table that stays
    // in the CPU's caches. Wrong for well under 1% of the pairs not in it.
    class PairBits {
        std::vector<uint64_t> words_;
        int shift_ = 58;
        size_t word(uint64_t key) const { return (size_t)((key * 0x9E3779B97F4A7C15ull) >> shift_); }
        static uint64_t bits(uint64_t key) {
            uint64_t h = key * 0xD6E8FEB86659FD93ull;
            return 1ull << (h >> 58) | 1ull << ((h >> 52) & 63) | 1ull << ((h >> 46) & 63);
        }
    public:
        void size_for(size_t pairs) {
            size_t n = 1 << 10;
            while (64 * n < 32 * pairs) n *= 2;
            words_.assign(n, 0);
            shift_ = 64 - __builtin_ctzll(n);
        }
        void set(uint64_t key) { words_[word(key)] |= bits(key); }
        bool may_hold(uint64_t key) const {
            uint64_t b = bits(key);
            return (words_[word(key)] & b) == b;
        }
    };

    // Whether a pair passes a word cap, from its tokens' shapes (as the engine's).
    struct WordCap {
        const uint32_t* shape = nullptr;
        uint64_t max_words = 0;   // 0: no cap
        bool operator()(uint64_t key) const {
            if (!max_words) return true;
            uint32_t left = shape[key >> 32], right = shape[(uint32_t)key];
            uint64_t words = (left >> 2) + (right >> 2) - (left & (right >> 1) & 1);
            return words <= max_words;
        }
    };

    // Flat sequences (tokens of type T laid end to end, `count` + 1 offsets,
    // `count` weights), and the result of a cut in the same form.
    template <class T> struct Flat {
        const T* tokens;
        const int64_t* starts;
        const int64_t* weights;
        size_t count;
    };
    template <class T> struct Stretches {
        T* tokens;
        int64_t* starts;     // starts[0] = 0, then one end per stretch
        int64_t* weights;
        size_t n = 0, pieces = 0;
    };

    // Run job(0) and job(1) on two threads, or job(0) alone.
    static void on_threads(int threads, const std::function<void(int)>& job) {
        if (threads < 2) { job(0); return; }
        std::thread other(job, 1);
        job(0);
        other.join();
    }

    static inline uint64_t window(uint64_t left, uint64_t right) { return left << 32 | right; }

    // Count every window's pair, weighted; then the floor (chosen when 0: the
    // merges-th greatest count of a pair the cap allows, over divisor, and at
    // least min_frequency) and the hot pairs' bits. Returns the floor; 1 means
    // that nothing is to be cut. One thread: the lookups wait on memory, and
    // a second thread counting half of the pairs made it slower, not faster.
    template <class T>
    static int64_t count_and_choose(const Flat<T>& in, size_t merges, int64_t divisor,
                                    int64_t floor, int64_t min_frequency, const WordCap& cap,
                                    PairBits& hot) {
        size_t total = (size_t)in.starts[in.count];
        CountTable table;
        // Room for a pair every 8 windows: no rehash on SuperBPE's pieces
        // (1 distinct pair in 6 windows at 100 MB of English).
        table.reserve(total / 8);
        // The lookups miss the caches: each window's slot is asked for AHEAD
        // windows early, across sequence ends (a window that spans one only
        // wastes a prefetch).
        const size_t AHEAD = 16;
        for (size_t s = 0; s < in.count; ++s) {
            size_t lo = (size_t)in.starts[s], hi = (size_t)in.starts[s + 1];
            for (size_t i = lo; i + 1 < hi; ++i) {
                if (i + AHEAD + 1 < total)
                    table.prefetch(window(in.tokens[i + AHEAD], in.tokens[i + AHEAD + 1]));
                table.add(window(in.tokens[i], in.tokens[i + 1]), in.weights[s]);
            }
        }
        if (floor <= 0) {
            std::vector<int64_t> counted;
            counted.reserve(table.size());
            table.counts(counted, cap);
            floor = 0;
            if (merges >= 1 && counted.size() >= merges) {
                std::nth_element(counted.begin(), counted.begin() + (merges - 1), counted.end(),
                                 std::greater<int64_t>());
                floor = counted[merges - 1] / divisor;
            }
        }
        floor = std::max<int64_t>({floor, min_frequency, 1});
        if (floor > 1) {
            hot.size_for(table.at_least(floor));
            table.mark_at_least(floor, hot);
        }
        return floor;
    }

    // Keep each stretch of two or more tokens joined by hot pairs, as a
    // sequence of the weight of the one it lies in. With two threads each
    // cuts one half of the sequences; the second writes at its own input
    // offsets (a cut never outgrows its input) and is then moved down.
    template <class T>
    static void cut_stretches(const Flat<T>& in, const PairBits& hot, int threads,
                              Stretches<T>& out) {
        size_t total = (size_t)in.starts[in.count];
        size_t middle = (size_t)(std::upper_bound(in.starts, in.starts + in.count,
                                                  (int64_t)(total / 2)) - in.starts);
        if (threads < 2 || middle == 0 || middle >= in.count) middle = in.count;
        size_t first_token[2] = {0, (size_t)in.starts[middle]};
        size_t first_piece[2] = {0, (size_t)in.starts[middle] / 2};
        size_t made[2] = {0, 0}, pieces[2] = {0, 0};
        on_threads(middle < in.count ? 2 : 1, [&](int part) {
            size_t from = part ? middle : 0, to = part ? in.count : middle;
            T* tokens = out.tokens + first_token[part];
            int64_t* ends = out.starts + 1 + first_piece[part];
            int64_t* weights = out.weights + first_piece[part];
            size_t n = 0, k = 0;
            for (size_t s = from; s < to; ++s) {
                size_t lo = (size_t)in.starts[s], hi = (size_t)in.starts[s + 1], first = lo;
                for (size_t i = lo; i < hi; ++i) {
                    if (i + 1 < hi && hot.may_hold(window(in.tokens[i], in.tokens[i + 1])))
                        continue;
                    if (i > first) {  // i ends a stretch that began at first
                        std::memcpy(tokens + n, in.tokens + first, (i + 1 - first) * sizeof(T));
                        n += i + 1 - first;
                        weights[k] = in.weights[s];
                        ends[k++] = (int64_t)n;
                    }
                    first = i + 1;
                }
            }
            made[part] = n;
            pieces[part] = k;
        });
        out.starts[0] = 0;
        out.n = made[0];
        out.pieces = pieces[0];
        if (middle < in.count) {
            std::memmove(out.tokens + made[0], out.tokens + first_token[1], made[1] * sizeof(T));
            for (size_t k = 0; k < pieces[1]; ++k) {
                out.starts[1 + pieces[0] + k] = out.starts[1 + first_piece[1] + k] + (int64_t)made[0];
                out.weights[pieces[0] + k] = out.weights[first_piece[1] + k];
            }
            out.n += made[1];
            out.pieces += pieces[1];
        }
    }
    """
    cdef cppclass PairBits:
        pass

    cdef cppclass WordCap:
        const uint32_t* shape
        uint64_t max_words

    cdef cppclass Flat[T]:
        const T* tokens
        const int64_t* starts
        const int64_t* weights
        size_t count

    cdef cppclass Stretches[T]:
        T* tokens
        int64_t* starts
        int64_t* weights
        size_t n
        size_t pieces

    int64_t count_and_choose[T](const Flat[T]& flat, size_t merges, int64_t divisor,
                                int64_t floor, int64_t min_frequency, const WordCap& cap,
                                PairBits& hot) except + nogil
    void cut_stretches[T](const Flat[T]& flat, const PairBits& hot, int threads,
                          Stretches[T]& out) except + nogil


def cut_cold(tokens, starts, weights, int64_t merges, int64_t divisor, int64_t floor=0,
             int64_t min_frequency=1, shapes=None, int64_t max_words=0, int threads=1):
    """The compiled :func:`bytepair.learn.segments.cut_cold` (the same arguments and result);
    the stretches are cut on ``threads`` threads (two at most)."""
    cdef const unsigned char[:] narrow = None
    cdef const uint32_t[:] wide = None
    if isinstance(tokens, (bytes, bytearray)):
        narrow = tokens
    else:
        wide = tokens
    cdef const int64_t[:] at = starts
    cdef const int64_t[:] weight = weights
    cdef size_t count = len(weight)
    if len(at) != count + 1 or at[count] != (len(narrow) if narrow is not None else len(wide)):
        raise ValueError("starts must hold one offset per sequence plus the total length")
    cdef size_t total = at[count]
    cdef WordCap cap
    cdef const uint32_t[:] shape_view
    cdef uint32_t top = 0
    cdef size_t i
    if max_words and total:
        shape_view = shapes
        for i in range(total):
            top = max(top, narrow[i] if narrow is not None else wide[i])
        if top >= <uint32_t>len(shape_view):
            raise ValueError(f"shapes: {len(shape_view)} given, but the sequences hold token {top}")
        cap.shape = &shape_view[0]
        cap.max_words = max_words
    if narrow is not None:
        return _cut(&narrow[0] if total else NULL, &at[0], &weight[0] if count else NULL, count,
                    merges, divisor, floor, min_frequency, cap, threads)
    return _cut(&wide[0] if total else NULL, &at[0], &weight[0] if count else NULL, count,
                merges, divisor, floor, min_frequency, cap, threads)


ctypedef fused token_t:
    uint8_t
    uint32_t


cdef tuple _cut(const token_t* tokens, const int64_t* starts, const int64_t* weights,
                size_t count, int64_t merges, int64_t divisor, int64_t floor, int64_t min_frequency,
                WordCap cap, int threads):
    # cut_cold for one token width: bytes in, a bytearray out; uint32, an array("I").
    cdef size_t total = starts[count]
    cdef Flat[token_t] flat
    cdef Stretches[token_t] out
    cdef PairBits hot
    flat.tokens = tokens
    flat.starts = starts
    flat.weights = weights
    flat.count = count
    with nogil:
        floor = count_and_choose(flat, merges, divisor, floor, min_frequency, cap, hot)
    if floor <= 1:
        return 1, None
    # The result arrays are sized for the most there can be, then cut to size
    # (pages never written are never touched).
    out_starts = carray.clone(array("q"), total // 2 + 2, False)
    out_weights = carray.clone(array("q"), total // 2 + 1, False)
    if token_t is uint8_t:
        out_tokens = bytearray(total)
        out.tokens = <token_t*>PyByteArray_AS_STRING(out_tokens)
    else:
        out_tokens = carray.clone(array("I"), total, False)
        out.tokens = <token_t*>(<carray.array>out_tokens).data.as_voidptr
    out.starts = <int64_t*>(<carray.array>out_starts).data.as_voidptr
    out.weights = <int64_t*>(<carray.array>out_weights).data.as_voidptr
    with nogil:
        cut_stretches(flat, hot, threads, out)
    if token_t is uint8_t:
        PyByteArray_Resize(out_tokens, out.n)
    else:
        carray.resize(out_tokens, out.n)
    carray.resize(out_starts, out.pieces + 1)
    carray.resize(out_weights, out.pieces)
    return floor, (out_tokens, out_starts, out_weights)
