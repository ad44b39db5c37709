# Declarations of the compiled pair engine; the work is in _engine.pyx.
from libc.stdint cimport int32_t, int64_t, uint32_t, uint64_t
from libcpp.unordered_map cimport unordered_map
from libcpp.vector cimport vector


cdef struct PairStat:
    int64_t count   # weighted number of adjacent windows, exact
    int64_t queued  # the count the caller's queue holds for this pair (0: not queued)


cdef class PairEngine:
    cdef vector[uint32_t] tok       # token at each position
    cdef vector[int32_t] prev       # previous live position, -1 at a barrier
    cdef vector[int32_t] nxt        # next live position, -1 at a barrier, REMOVED when consumed
    cdef vector[int32_t] seq_of     # sequence index of each position
    cdef vector[int64_t] weights    # weight of each sequence
    cdef vector[int64_t] starts     # first position of each sequence, then the total
    cdef unordered_map[uint64_t, PairStat] stats
    cdef unordered_map[uint64_t, vector[int32_t]] where  # occurrence index (may hold stale entries)

    cdef void _add(self, uint64_t key, int64_t delta) noexcept nogil
    cdef int64_t _merge(self, uint32_t left, uint32_t right, uint32_t new,
                        vector[uint64_t]& touched) noexcept nogil
