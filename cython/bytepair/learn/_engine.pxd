# Declarations of the compiled pair engine; the work is in _engine.pyx.
cimport cython
from libc.stdint cimport int32_t, int64_t, uint32_t, uint64_t
from libcpp.unordered_map cimport unordered_map
from libcpp.utility cimport pair
from libcpp.vector cimport vector


cdef extern from *:
    """
    #include <algorithm>
    #include <atomic>
    #include <cstdint>
    #include <cstdlib>
    #include <cstring>
    #include <new>
    #include <stdexcept>
    #include <utility>
    #include <vector>
    #if defined(__GLIBC__)
    #include <malloc.h>
    #endif
    #if defined(__linux__)
    #include <sys/mman.h>
    #endif

    // Ask for 2 MiB pages under a large block not yet written to (Linux; a
    // hint, elsewhere a no-op). The merge loop reads positions and pair slots
    // all over these blocks, and with 4 KiB pages most of those reads also
    // missed the TLB: at 100 MB of text, huge pages took the merges from
    // 0.45-0.48 to 0.42-0.45 s and the build from 0.15 to 0.13 s. Only whole
    // 2 MiB pages inside the block are marked.
    static void want_huge_pages(void* block, size_t bytes) {
    #if defined(__linux__) && defined(MADV_HUGEPAGE)
        const uintptr_t huge = (uintptr_t)1 << 21;
        uintptr_t start = ((uintptr_t)block + huge - 1) & ~(huge - 1);
        uintptr_t end = ((uintptr_t)block + bytes) & ~(huge - 1);
        if (end > start) madvise((void*)start, end - start, MADV_HUGEPAGE);
    #else
        (void)block; (void)bytes;
    #endif
    }

    // Bytes of occurrence lists freed since the last trim (all engines; a hint, so relaxed).
    static std::atomic<size_t> positions_freed{0};

    // Give the free pages inside the heap back to the system. The lists a merge
    // frees lie between live ones, so glibc keeps them: at 100 MB of text, half
    // of the heap was free at the end of training. Elsewhere a no-op.
    static void trim_heap() {
    #if defined(__GLIBC__)
        malloc_trim(0);
    #endif
        positions_freed.store(0, std::memory_order_relaxed);
    }

    // A pair's occurrence list in one 8-byte word (a std::vector header is three
    // words): most pairs are rare, so the pair table's slot size is what this
    // saves (32 bytes a slot instead of 48). The word is either
    //  - 0: no position;
    //  - a heap block [size, capacity, positions...] (malloc aligns it, so bit 0 is 0);
    //  - with bit 0 set, up to INLINE = 2 positions held in the word itself:
    //    bits 1-31 and 32-62 each hold position + 1 (0: none). Most pairs a
    //    merge creates are seen once or twice, and a heap block for them cost
    //    a 32-byte allocation each on top of the slot.
    // Positions are below 2**31 - 1 (the engine's limit), so position + 1 fits
    // in 31 bits. begin()/end()/operator[] read a heap block only: call
    // to_heap() first; get()/set() read either form.
    class Positions {
        uint64_t word_ = 0;
        static constexpr size_t INLINE = 2;
        static constexpr uint64_t FIELD = 0x7FFFFFFFull;

        bool is_inline() const { return word_ & 1; }
        int32_t* block() const { return (word_ & 1) ? nullptr : (int32_t*)(uintptr_t)word_; }
        static int shift(size_t k) { return k ? 32 : 1; }

        // Make the list a heap block of at least `capacity` positions.
        void reallocate(size_t capacity) {
            capacity = std::min<size_t>(capacity, INT32_MAX);
            size_t n = size();
            int32_t held[INLINE] = {0, 0};
            int32_t* old = block();
            if (is_inline()) for (size_t k = 0; k < n; ++k) held[k] = get(k);
            int32_t* grown = (int32_t*)std::realloc(old, (capacity + 2) * sizeof(int32_t));
            if (grown == nullptr) throw std::bad_alloc();
            if (old == nullptr) for (size_t k = 0; k < n; ++k) grown[2 + k] = held[k];
            grown[0] = (int32_t)n;
            grown[1] = (int32_t)capacity;
            word_ = (uint64_t)(uintptr_t)grown;
        }

    public:
        Positions() = default;
        Positions(const Positions&) = delete;
        Positions& operator=(const Positions&) = delete;
        Positions(Positions&& other) noexcept : word_(other.word_) { other.word_ = 0; }
        Positions& operator=(Positions&& other) noexcept { swap(other); return *this; }
        ~Positions() { release(); }
        void swap(Positions& other) noexcept { std::swap(word_, other.word_); }

        size_t size() const {
            if (is_inline()) return ((word_ >> 1) & FIELD ? 1 : 0) + ((word_ >> 32) & FIELD ? 1 : 0);
            return word_ ? (size_t)block()[0] : 0;
        }
        // What the list holds without allocating (an empty list holds INLINE).
        size_t capacity() const { return word_ && !is_inline() ? (size_t)block()[1] : INLINE; }
        bool on_heap() const { return word_ && !is_inline(); }
        int32_t get(size_t k) const {
            if (is_inline()) return (int32_t)(((word_ >> shift(k)) & FIELD) - 1);
            return block()[2 + k];
        }
        void set(size_t k, int32_t position) {
            if (is_inline()) {
                word_ = (word_ & ~(FIELD << shift(k))) | ((uint64_t)(position + 1) << shift(k));
            } else {
                block()[2 + k] = position;
            }
        }
        // The positions as a heap block, so that begin()/end() can sort them in place.
        void to_heap() { if (is_inline()) reallocate(size()); }
        int32_t* begin() { return block() ? block() + 2 : nullptr; }
        int32_t* end() { return block() ? block() + 2 + block()[0] : nullptr; }
        int32_t& operator[](size_t i) { return block()[2 + i]; }
        bool contains(int32_t position) const {
            for (size_t k = 0; k < size(); ++k) if (get(k) == position) return true;
            return false;
        }
        void reserve(size_t capacity) { if (capacity > this->capacity()) reallocate(capacity); }
        void push_back(int32_t position) { append(&position, 1); }
        // Append n positions, growing like std::vector::insert does.
        void append(const int32_t* first, size_t n) {
            if (n == 0) return;
            size_t have = size(), need = have + n;
            if (need > (size_t)INT32_MAX) throw std::length_error("occurrence list too long");
            if (!on_heap() && need <= INLINE) {
                if (!word_) word_ = 1;
                for (size_t k = 0; k < n; ++k) set(have + k, first[k]);
                return;
            }
            if (need > capacity()) reallocate(std::max(need, have + std::max(have, n)));
            std::memcpy(block() + 2 + have, first, n * sizeof(int32_t));
            block()[0] = (int32_t)need;
        }
        // Keep the first `kept` positions (kept <= size()).
        void truncate(size_t kept) {
            if (is_inline()) {
                for (size_t k = kept; k < INLINE; ++k) word_ &= ~(FIELD << shift(k));
                if (kept == 0) word_ = 0;
            } else if (word_) {
                block()[0] = (int32_t)kept;
            }
        }
        // Forget every position and give the memory back.
        void release() {
            if (int32_t* b = block()) {
                positions_freed.fetch_add((b[1] + 2) * sizeof(int32_t), std::memory_order_relaxed);
                std::free(b);
            }
            word_ = 0;
        }
    };

    // Everything known about one pair, in one slot of the pair table.
    struct PairSlot {
        uint64_t key = 0;             // (left << 32) | right
        int64_t count = 0;            // weighted number of adjacent windows, exact
        int64_t queued = -1;          // the count the queue holds (0: not queued; -1: empty slot)
        Positions where;              // positions where it was seen (entries may be stale)
    };
    static_assert(sizeof(PairSlot) == 32, "a pair-table slot is 32 bytes");

    // Open addressing with linear probing: a lookup reads one slot (key,
    // counts and the occurrence list's header share it) instead of a
    // bucket and then a node. Erasing shifts the following run back, so
    // there are no tombstones. Slot pointers stay valid until the next get().
    //
    // The table doubles in place (grow()): its slots are one malloc block,
    // which realloc extends; a block this large is a memory mapping of its
    // own, so the C library extends it by remapping pages, without a copy.
    // The pairs are then laid out anew inside the doubled block. A table
    // that moved into a new vector held old and new slots at once, 1.5x
    // the grown table, at the moment the process peaked.
    class PairTable {
        PairSlot* slots_ = nullptr;
        size_t capacity_ = 0;
        size_t used_ = 0;
        int shift_ = 60;  // 64 - log2(capacity)

        size_t home(uint64_t key) const {
            return (size_t)((key * 0x9E3779B97F4A7C15ull) >> shift_);
        }
        static void empty(PairSlot* first, size_t n) {
            for (size_t i = 0; i < n; ++i) new (&first[i]) PairSlot();
        }
        // Move a pair into an empty slot and empty its old one.
        static void move_slot(PairSlot& to, PairSlot& from) {
            to.key = from.key;
            to.count = from.count;
            to.queued = from.queued;
            to.where.swap(from.where);
            from.queued = -1;
        }
        void allocate(size_t n) {
            slots_ = (PairSlot*)std::malloc(n * sizeof(PairSlot));
            if (slots_ == nullptr) throw std::bad_alloc();
            want_huge_pages(slots_, n * sizeof(PairSlot));
            empty(slots_, n);
            capacity_ = n;
            used_ = 0;
            shift_ = 64 - __builtin_ctzll(n);
        }
        void release() {
            for (size_t i = 0; i < capacity_; ++i) slots_[i].~PairSlot();
            std::free(slots_);
            slots_ = nullptr;
            capacity_ = 0;
        }
        void grow();

    public:
        PairTable() { allocate(16); }
        ~PairTable() { release(); }
        PairTable(const PairTable&) = delete;
        PairTable& operator=(const PairTable&) = delete;
        // Forget every pair and give the memory back.
        void clear() {
            release();
            allocate(16);
        }
        size_t size() const { return used_; }
        size_t capacity() const { return capacity_; }
        PairSlot* at(size_t i) { return &slots_[i]; }
        void reserve(size_t pairs) {
            while (4 * pairs > 3 * capacity_) grow();
        }
        // Ask for the slot key probes first, ahead of a lookup.
        void prefetch(uint64_t key) const {
            __builtin_prefetch(&slots_[home(key)]);
        }
        PairSlot* find(uint64_t key) {
            size_t mask = capacity_ - 1;
            for (size_t i = home(key);; i = (i + 1) & mask) {
                PairSlot* s = &slots_[i];
                if (s->queued < 0) return nullptr;
                if (s->key == key) return s;
            }
        }
        // The slot of key, made empty-counted (count 0, not queued) when new.
        PairSlot* get(uint64_t key) {
            if (4 * (used_ + 1) > 3 * capacity_) grow();
            size_t mask = capacity_ - 1;
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
            size_t mask = capacity_ - 1;
            size_t hole = gone - slots_;
            slots_[hole].where.release();
            for (size_t j = (hole + 1) & mask; slots_[j].queued >= 0; j = (j + 1) & mask) {
                // Move slot j into the hole unless its home lies in (hole, j].
                size_t h = home(slots_[j].key);
                if (((j - h) & mask) >= ((j - hole) & mask)) {
                    move_slot(slots_[hole], slots_[j]);
                    hole = j;
                }
            }
            slots_[hole].queued = -1;
            --used_;
        }
    };

    // Double the table in place. A pair's home is the top bits of its hash,
    // and a table without wrap-around is valid when each pair sits at or
    // after its home with no empty slot between: pairs sorted by home, each
    // at max(its home, the previous pair's slot + 1), is such a layout. One
    // more bit of hash refines the homes, and a probe run only holds pairs
    // out of home order among themselves, so after taking the pairs that
    // wrapped around from the end to the back, an insertion sort by new home
    // is expected linear. The pairs are then moved from the last to the
    // first, each to a slot at or after its own index, which the pairs after
    // it have left empty; pairs that would run past the end go in last by
    // probing (they wrap to the front). O(pairs) expected, plus 4 bytes per
    // pair while it runs.
    inline void PairTable::grow() {
        size_t old = capacity_, n = 2 * old;
        if (n > ((size_t)1 << 32)) throw std::length_error("pair table too large");
        PairSlot* s = (PairSlot*)std::realloc((void*)slots_, n * sizeof(PairSlot));
        if (s == nullptr) throw std::bad_alloc();
        want_huge_pages(s, n * sizeof(PairSlot));
        slots_ = s;
        capacity_ = n;
        empty(s + old, n - old);
        // The pairs to the front, in table order; those of the first probe run
        // that wrapped around from the end (a home after their slot) to the back.
        std::vector<PairSlot> wrapped;
        size_t k = 0;
        bool first_run = true;
        for (size_t i = 0; i < old; ++i) {
            if (s[i].queued < 0) {
                first_run = false;
                continue;
            }
            if (first_run && home(s[i].key) > i) {
                wrapped.emplace_back();
                move_slot(wrapped.back(), s[i]);
                continue;
            }
            if (k != i) move_slot(s[k], s[i]);
            ++k;
        }
        for (PairSlot& p : wrapped) move_slot(s[k++], p);
        std::vector<PairSlot>().swap(wrapped);
        --shift_;
        for (size_t i = 1; i < k; ++i) {
            size_t h = home(s[i].key);
            if (home(s[i - 1].key) <= h) continue;
            PairSlot held;
            move_slot(held, s[i]);
            size_t j = i;
            for (; j > 0 && home(s[j - 1].key) > h; --j) move_slot(s[j], s[j - 1]);
            move_slot(s[j], held);
        }
        std::vector<uint32_t> target(k);
        size_t fits = 0;
        for (size_t next = 0; fits < k; ++fits) {
            size_t t = std::max(home(s[fits].key), next);
            if (t >= n) break;
            target[fits] = (uint32_t)t;
            next = t + 1;
        }
        std::vector<PairSlot> past_end(k - fits);
        for (size_t i = fits; i < k; ++i) move_slot(past_end[i - fits], s[i]);
        for (size_t i = fits; i-- > 0;) {
            if (target[i] != i) move_slot(s[target[i]], s[i]);
        }
        std::vector<uint32_t>().swap(target);
        size_t mask = n - 1;
        for (PairSlot& p : past_end) {
            size_t i = home(p.key);
            while (s[i].queued >= 0) i = (i + 1) & mask;
            move_slot(s[i], p);
        }
    }
    """
    cdef cppclass Positions:
        size_t size() nogil
        size_t capacity() nogil
        bint on_heap() nogil
        int32_t get(size_t k) nogil
        void set(size_t k, int32_t position) nogil
        void to_heap() except + nogil
        int32_t* begin() nogil
        int32_t* end() nogil
        int32_t& operator[](size_t i) nogil
        bint contains(int32_t position) nogil
        void reserve(size_t capacity) except + nogil
        void push_back(int32_t position) except + nogil
        void append(const int32_t* first, size_t n) except + nogil
        void truncate(size_t kept) nogil
        void release() nogil
        void swap(Positions& other) nogil

    cdef cppclass PairSlot:
        uint64_t key
        int64_t count
        int64_t queued
        Positions where

    size_t positions_freed_load "positions_freed.load" () nogil
    void trim_heap() nogil
    void want_huge_pages(void* block, size_t bytes) nogil

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


# One token position is one uint32 slot of PairEngine.pos (see "Positions" in
# _engine.pyx): a live token below GONE, a consumed position marked with the
# length of the run of consumed positions it belongs to, or a BARRIER slot
# between two sequences. There are no links: the next and previous live
# positions are read from the marker next to a position.


# Final: nothing derives from it, so its cdef methods are called directly (and
# inlined) rather than through a table of function pointers.
@cython.final
cdef class PairEngine:
    cdef vector[uint32_t] pos       # token, GONE | run length, or BARRIER, per slot
    cdef vector[int32_t] order      # the caller's index of each laid-out sequence (or none)
    cdef Py_ssize_t sequence_count  # sequences laid out
    cdef bint keeps_order           # False: order was dropped, sequences() refuses
    cdef vector[int64_t] run_end    # sequences sorted by weight, heaviest first: the end
    cdef vector[int64_t] run_weight # of each run of equal weights, and that weight
    cdef size_t run_seen            # the run _weight found last (positions come in order)
    cdef PairTable pairs

    # Scratch space of one merge. Each token seen next to a replacement gets
    # a slot (left and right neighbours apart): the token, the weight moving
    # to its new pair, and the positions of those windows.
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
    cdef bint first_fit             # no fit() call yet: trim the heap at the first

    # Pairs a merge creates counted fewer than keep_floor times are not kept, and
    # kept pairs below it go when the table would grow: no rule above it can be
    # one of them (a pair's count never grows after the merge that made it).
    # recounts: how often every pair was counted again because the rules came
    # down to keep_floor (then 0: every pair is kept from there on).
    cdef readonly int64_t keep_floor
    cdef readonly int64_t recounts
    cdef readonly int64_t forgotten     # kept pairs dropped to make room, in all

    # SuperBPE's word cap (limit_words): each token's shape, by ID
    # (words << 2 | first byte in a word << 1 | last byte in a word), and the
    # cap (0: none). A pair over the cap is counted but never queued.
    cdef vector[uint32_t] shape
    cdef int64_t max_words

    cdef uint32_t _lay_out(self, const unsigned char[:] narrow, const uint32_t[:] wide,
                           const int64_t[:] given_starts,
                           const int64_t[:] given_weights) noexcept nogil
    cdef void _index_pairs(self) noexcept nogil
    cdef void _recount(self) noexcept nogil
    cdef void _size_lists(self) noexcept nogil
    cdef void _drop_below(self, int64_t floor) noexcept nogil
    cdef int64_t _weight(self, int32_t i) noexcept nogil
    cdef int32_t _after(self, int32_t i) noexcept nogil
    cdef int32_t _sequence_end(self, int32_t at) noexcept nogil
    cdef int32_t _next(self, int32_t i) noexcept nogil
    cdef int32_t _prev(self, int32_t i) noexcept nogil
    cdef void _consume(self, int32_t i, int32_t j, int32_t end) noexcept nogil
    cdef void _add(self, uint64_t key, int64_t delta) noexcept nogil
    cdef uint32_t _slot(self, uint64_t side_token) noexcept nogil
    cdef bint _eligible(self, uint64_t key) noexcept nogil
    cdef void _compact(self, PairSlot* info) noexcept nogil
    cdef list _queue_above(self, int64_t floor)
    cdef bint _take_front(self, int64_t* count, uint32_t* left, uint32_t* right) except -1
    cdef int64_t _replace(self, uint32_t a, uint32_t b, uint32_t m,
                          Positions& positions) noexcept nogil
    cdef void _apply_deltas(self, uint32_t a, uint32_t b, uint32_t m,
                            int64_t replaced) noexcept nogil
    cdef PairSlot* _new_pair(self, uint32_t m, size_t slot) noexcept nogil
    cdef void _record_windows(self, uint32_t m, vector[uint64_t]& candidates) noexcept nogil
    cdef int64_t _merge(self, uint32_t left, uint32_t right, uint32_t new,
                        vector[uint64_t]& candidates) noexcept nogil
    cdef int64_t _merge_pair(self, uint32_t left, uint32_t right, uint32_t new,
                             vector[uint64_t]& candidates) noexcept nogil
