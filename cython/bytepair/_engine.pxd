# Declarations of the compiled pair engine; the work is in _engine.pyx.
from libc.stdint cimport int32_t, int64_t, uint32_t, uint64_t
from libcpp.unordered_map cimport unordered_map
from libcpp.vector cimport vector


cdef extern from *:
    """
    #include <cstdint>
    #include <vector>
    // Everything known about one pair, behind a single hash lookup.
    struct PairInfo {
        int64_t count = 0;            // weighted number of adjacent windows, exact
        int64_t queued = 0;           // the count the caller's queue holds (0: not queued)
        std::vector<int32_t> where;   // positions where it was seen (entries may be stale)
    };
    """
    cdef cppclass PairInfo:
        int64_t count
        int64_t queued
        vector[int32_t] where


# One token position of the linked token lists: 16 bytes, one cache line
# fetch for everything a merge reads or writes there.
cdef struct Position:
    uint32_t tok    # the token here
    int32_t prev    # previous live position, -1 at a barrier
    int32_t nxt     # next live position, -1 at a barrier, REMOVED when consumed
    int32_t seq     # the sequence this position belongs to


cdef class PairEngine:
    cdef vector[Position] pos
    cdef vector[int64_t] weights    # weight of each sequence
    cdef vector[int64_t] starts     # first position of each sequence, then the total
    cdef unordered_map[uint64_t, PairInfo] pairs

    # Scratch space of one merge. Each token seen next to a replacement gets
    # a slot (left and right neighbours apart): the token, the weight moving
    # to its new pair, and the positions of that new pair.
    cdef vector[int32_t] left_slot      # slot of a left neighbour token, -1: none yet
    cdef vector[int32_t] right_slot     # (direct tables for token IDs below DENSE_SLOTS)
    cdef unordered_map[uint64_t, uint32_t] slot_of   # the same for larger IDs
    cdef vector[uint64_t] slot_pair
    cdef vector[int64_t] slot_delta
    cdef vector[vector[int32_t]] slot_new

    # The priority queue once the engine owns it (open_queue): a SortedList
    # of packed priorities, and the floor below which pairs wait outside it.
    cdef readonly object queue
    cdef readonly int64_t floor

    cdef void _add(self, uint64_t key, int64_t delta) noexcept nogil
    cdef uint32_t _slot(self, uint64_t side_token) noexcept nogil
    cdef list _queue_above(self, int64_t floor)
    cdef bint _valid_front(self, int64_t* count, uint32_t* left, uint32_t* right) except -1
    cdef int64_t _merge(self, uint32_t left, uint32_t right, uint32_t new,
                        vector[uint64_t]& candidates) noexcept nogil
