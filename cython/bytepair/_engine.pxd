# Declarations of the compiled pair engine; the work is in _engine.pyx.
from libc.stdint cimport int32_t, int64_t, uint16_t, uint32_t, uint64_t
from libcpp.unordered_map cimport unordered_map
from libcpp.utility cimport pair
from libcpp.vector cimport vector


cdef extern from *:
    """
    #include <cstdint>
    #include <utility>
    #include <vector>

    // Everything known about one pair, in one slot of the pair table.
    struct PairSlot {
        uint64_t key = 0;             // (left << 32) | right
        int64_t count = 0;            // weighted number of adjacent windows, exact
        int64_t queued = -1;          // the count the queue holds (0: not queued; -1: empty slot)
        std::vector<int32_t> where;   // positions where it was seen (entries may be stale)
    };

    // Open addressing with linear probing: a lookup reads one slot (key,
    // counts and the occurrence list's header share it) instead of a
    // bucket and then a node. Erasing shifts the following run back, so
    // there are no tombstones. Slot pointers stay valid until the next get().
    class PairTable {
        std::vector<PairSlot> slots_;
        size_t used_ = 0;
        int shift_ = 60;  // 64 - log2(capacity)

        size_t home(uint64_t key) const {
            return (size_t)((key * 0x9E3779B97F4A7C15ull) >> shift_);
        }
        void grow() {
            std::vector<PairSlot> old(slots_.size() * 2);
            old.swap(slots_);
            --shift_;
            size_t mask = slots_.size() - 1;
            for (PairSlot& s : old) {
                if (s.queued < 0) continue;
                size_t i = home(s.key);
                while (slots_[i].queued >= 0) i = (i + 1) & mask;
                slots_[i].key = s.key;
                slots_[i].count = s.count;
                slots_[i].queued = s.queued;
                slots_[i].where.swap(s.where);
            }
        }

    public:
        PairTable() : slots_(16) {}
        // Forget every pair and give the memory back.
        void clear() {
            std::vector<PairSlot>(16).swap(slots_);
            used_ = 0;
            shift_ = 60;
        }
        size_t size() const { return used_; }
        size_t capacity() const { return slots_.size(); }
        PairSlot* at(size_t i) { return &slots_[i]; }
        void reserve(size_t pairs) {
            while (4 * pairs > 3 * slots_.size()) grow();
        }
        // Ask for the slot key probes first, ahead of a lookup.
        void prefetch(uint64_t key) const {
            __builtin_prefetch(&slots_[home(key)]);
        }
        PairSlot* find(uint64_t key) {
            size_t mask = slots_.size() - 1;
            for (size_t i = home(key);; i = (i + 1) & mask) {
                PairSlot* s = &slots_[i];
                if (s->queued < 0) return nullptr;
                if (s->key == key) return s;
            }
        }
        // The slot of key, made empty-counted (count 0, not queued) when new.
        PairSlot* get(uint64_t key) {
            if (4 * (used_ + 1) > 3 * slots_.size()) grow();
            size_t mask = slots_.size() - 1;
            for (size_t i = home(key);; i = (i + 1) & mask) {
                PairSlot* s = &slots_[i];
                if (s->queued < 0) {
                    s->key = key;
                    s->count = 0;
                    s->queued = 0;
                    ++used_;
                    return s;
                }
                if (s->key == key) return s;
            }
        }
        void erase(PairSlot* gone) {
            size_t mask = slots_.size() - 1;
            size_t hole = gone - slots_.data();
            std::vector<int32_t>().swap(slots_[hole].where);
            for (size_t j = (hole + 1) & mask; slots_[j].queued >= 0; j = (j + 1) & mask) {
                // Move slot j into the hole unless its home lies in (hole, j].
                size_t h = home(slots_[j].key);
                if (((j - h) & mask) >= ((j - hole) & mask)) {
                    slots_[hole].key = slots_[j].key;
                    slots_[hole].count = slots_[j].count;
                    slots_[hole].queued = slots_[j].queued;
                    slots_[hole].where.swap(slots_[j].where);
                    hole = j;
                }
            }
            slots_[hole].queued = -1;
            --used_;
        }
    };
    """
    cdef cppclass PairSlot:
        uint64_t key
        int64_t count
        int64_t queued
        vector[int32_t] where

    cdef cppclass PairTable:
        size_t size() nogil
        void clear() nogil
        size_t capacity() nogil
        PairSlot* at(size_t i) nogil
        void reserve(size_t pairs) nogil
        PairSlot* find(uint64_t key) nogil
        void prefetch(uint64_t key) nogil
        PairSlot* get(uint64_t key) nogil
        void erase(PairSlot* slot) nogil


# One token position of the linked token lists: 8 bytes. Links are
# distances: 0 at a barrier, LINK_REMOVED once consumed, LINK_FAR when the
# distance does not fit (then the position is in far_prev / far_next). The
# weight of a position is found from where it lies (sequences are laid out
# by weight).
cdef struct Position:
    uint32_t tok    # the token here
    uint16_t prev   # distance back to the previous live position
    uint16_t nxt    # distance on to the next live position


cdef class PairEngine:
    cdef vector[Position] pos
    cdef vector[int64_t] starts     # first position of each laid-out sequence, then the total
    cdef vector[int64_t] order      # the caller's index of each laid-out sequence
    cdef vector[int64_t] run_end    # sequences sorted by weight, heaviest first: the end
    cdef vector[int64_t] run_weight # of each run of equal weights, and that weight
    cdef PairTable pairs
    cdef unordered_map[int32_t, int32_t] far_prev   # links of tokens longer than a
    cdef unordered_map[int32_t, int32_t] far_next   # 16-bit distance

    # Scratch space of one merge. Each token seen next to a replacement gets
    # a slot (left and right neighbours apart): the token, the weight moving
    # to its new pair, and the positions of that new pair.
    cdef vector[int32_t] left_slot      # slot of a left neighbour token, -1: none yet
    cdef vector[int32_t] right_slot     # (direct tables for token IDs below DENSE_SLOTS)
    cdef unordered_map[uint64_t, uint32_t] slot_of   # the same for larger IDs
    cdef vector[uint64_t] slot_pair
    cdef vector[int64_t] slot_delta
    cdef vector[vector[int32_t]] slot_new
    cdef vector[pair[uint64_t, int64_t]] deltas   # (pair, net change) of one merge

    # The priority queue once the engine owns it (open_queue): a SortedList
    # of packed priorities, and the floor below which pairs wait outside it.
    cdef readonly object queue
    cdef readonly int64_t floor

    cdef int64_t _weight(self, int32_t i) noexcept nogil
    cdef int32_t _next(self, int32_t i) noexcept nogil
    cdef int32_t _prev(self, int32_t i) noexcept nogil
    cdef void _set_next(self, int32_t i, int32_t j) noexcept nogil
    cdef void _set_prev(self, int32_t i, int32_t j) noexcept nogil
    cdef void _add(self, uint64_t key, int64_t delta) noexcept nogil
    cdef uint32_t _slot(self, uint64_t side_token) noexcept nogil
    cdef void _compact(self, PairSlot* info) noexcept nogil
    cdef list _queue_above(self, int64_t floor)
    cdef bint _take_front(self, int64_t* count, uint32_t* left, uint32_t* right) except -1
    cdef int64_t _merge(self, uint32_t left, uint32_t right, uint32_t new,
                        vector[uint64_t]& candidates) noexcept nogil
