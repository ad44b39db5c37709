# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False, cdivision=True
# distutils: language = c++
"""Compiled encoder and decoder of a byte-mode model.

Encoding a piece merges, again and again, the adjacent pair with the lowest
rank, the leftmost one among equals. That is exactly replaying the rules in
rank order, each in one left-to-right pass: a merge only creates pairs that
hold the token just made, and every rule that uses a token ranks after the
rule that made it, so no pass can meet a pair of its own rank that it did not
see before (``bytepair.model.ByteModel.encode`` documents the same argument;
property tests compare the two).

* Short pieces (most of real text) are merged by scanning an array of pair
  ranks: O(n^2) on at most ``SMALL_PIECE`` bytes, with no allocation.
* Longer pieces use a doubly linked list and an indexed 4-ary heap keyed
  ``(rank, position)``: O(n log n) time and 24 bytes per input byte
  (token, next, previous, heap slot: 4 bytes each; heap key: 8 bytes), so one
  piece of millions of identical letters is not quadratic.
* A piece that is a whole token (its bytes merge to that token alone) is
  found in a read-only table shared by all threads, with no rank loop.
* A :class:`PieceCache` maps the other short pieces to their IDs; its memory,
  table and arenas together, never exceeds the byte budget it is given.
* A SuperBPE model merges a piece with its stage-1 rules part by part (whole
  tokens, then the same cache under keys of their own), then with the later
  rules run by run between seams (``merge_stages``).

Token bytes are never all built: tokens of at most ``FLAT_MAX`` bytes are
copied into one flat buffer (at most ``FLAT_MAX`` bytes per token), longer
ones are expanded from their two halves when decoded. Memory is therefore
linear in the number of rules even for a chain of rules each extending the
last token, whose bytes together grow quadratically.
"""

import operator
from array import array

from cython.operator cimport dereference as deref
cimport cpython.array as carray
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize
from cpython.ref cimport PyObject
from cpython.tuple cimport PyTuple_New, PyTuple_SET_ITEM
from cpython.unicode cimport Py_UNICODE_ISSPACE
from libc.stdint cimport int64_t, uint8_t, uint16_t, uint32_t, uint64_t
from libc.stdlib cimport calloc, free, malloc, realloc
from libc.string cimport memchr, memcmp, memcpy, memmove, memset
from libcpp.string cimport string
from libcpp.vector cimport vector

from bytepair.model._hashing cimport hash_bytes
from bytepair.split._split cimport piece_ends, utf8_error

from bytepair.split._split import PATTERN_IDS

cdef extern from *:
    """
    #if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    #define BYTEPAIR_LITTLE_ENDIAN 1
    #else
    #define BYTEPAIR_LITTLE_ENDIAN 0
    #endif
    """
    void __builtin_prefetch(const void* address) noexcept nogil
    const bint BYTEPAIR_LITTLE_ENDIAN

cdef extern from *:
    """
    static inline Py_ssize_t bytepair_take_next(Py_ssize_t* counter) {
        return __atomic_fetch_add(counter, 1, __ATOMIC_RELAXED);
    }
    """
    # The counter's value before adding 1, atomically: threads share out parts with it.
    Py_ssize_t bytepair_take_next(Py_ssize_t* counter) noexcept nogil

cdef extern from *:
    """
    #include <condition_variable>
    #include <mutex>
    static inline Py_ssize_t bytepair_load(Py_ssize_t* at) {
        return __atomic_load_n(at, __ATOMIC_ACQUIRE);
    }
    /* A flag that threads wait on without using the CPU: set it, then notify. */
    struct bytepair_signal {
        std::mutex lock;
        std::condition_variable changed;
    };
    static inline void bytepair_set(bytepair_signal* signal, Py_ssize_t* at, Py_ssize_t value) {
        __atomic_store_n(at, value, __ATOMIC_RELEASE);
        { std::lock_guard<std::mutex> held(signal->lock); }  /* a waiter is waiting or sees it */
        signal->changed.notify_all();
    }
    /* Wait until *value > above or *stop is set. */
    static inline void bytepair_wait(bytepair_signal* signal, Py_ssize_t* value, Py_ssize_t above,
                                     Py_ssize_t* stop) {
        std::unique_lock<std::mutex> held(signal->lock);
        signal->changed.wait(held, [&] { return bytepair_load(value) > above || bytepair_load(stop); });
    }
    """
    cppclass bytepair_signal:
        pass
    Py_ssize_t bytepair_load(Py_ssize_t* at) noexcept nogil
    void bytepair_set(bytepair_signal* signal, Py_ssize_t* at, Py_ssize_t value) noexcept nogil
    void bytepair_wait(bytepair_signal* signal, Py_ssize_t* value, Py_ssize_t above,
                       Py_ssize_t* stop) noexcept nogil

cdef extern from "Python.h":
    bint PyUnicode_IS_ASCII(object text)
    int PyUnicode_KIND(object text)
    void* PyUnicode_DATA(object text)
    Py_ssize_t PyUnicode_GET_LENGTH(object text)
    Py_ssize_t PyUnicode_GetLength(object text) except -1
    void PyObject_GC_UnTrack(PyObject* item)
    void PyObject_GC_Track(PyObject* item)
    PyObject* PyList_GET_ITEM(object items, Py_ssize_t index)
    void PyList_SET_ITEM(object items, Py_ssize_t index, PyObject* item)
    object PyList_New(Py_ssize_t size)
    void Py_INCREF(PyObject* item)
    bint PyLong_CheckExact(PyObject* item)
    bint PyBool_Check(PyObject* item)
    bint PyTuple_Check(PyObject* item)
    bint PyUnicode_Check(PyObject* item)
    bint PyBytes_Check(PyObject* item)
    Py_ssize_t PyBytes_GET_SIZE(PyObject* item)
    Py_ssize_t PyTuple_GET_SIZE(PyObject* item)
    PyObject* PyTuple_GET_ITEM(PyObject* item, Py_ssize_t index)
    ctypedef struct PyTypeObject:
        Py_ssize_t tp_dictoffset
    PyTypeObject* Py_TYPE(PyObject* item)
    long long PyLong_AsLongLongAndOverflow(PyObject* item, int* overflow) except? -1

cdef enum:
    # Pieces up to this many bytes are merged by scanning, not with the heap.
    SMALL_PIECE = 64
    # Tokens up to this many bytes are kept in the flat buffer.
    FLAT_MAX = 128
    # Pieces up to this many bytes go into the piece cache.
    MAX_CACHED_PIECE = 256
    # Tokens up to this many bytes are in the whole-token table.
    WHOLE_MAX = SMALL_PIECE

cdef uint32_t NO_RANK = 0xFFFFFFFFu
cdef uint32_t NONE = 0xFFFFFFFFu
cdef uint32_t NOT_SEAM = 0xFFFFFFFEu  # not a rank: rules are fewer than 2 ** 32 - 256
cdef uint64_t NOT_FLAT = 0xFFFFFFFFFFFFFFFFu
cdef uint64_t LENGTH_CAP = 1u << 62
cdef uint64_t GOLDEN = 0x9E3779B97F4A7C15u
# Flipped in the piece-cache hash of a SuperBPE model's stage-1 parts (see merge_part).
# hash_bytes sets bit 0, so a flipped hash is still never 0, the free-slot mark.
cdef uint64_t STAGE_ONE_KEY = 2
# Bytes of the cache of one encode_spans call (one per thread): the parts it
# caches are mostly words, whose working set is small.
cdef Py_ssize_t SPAN_CACHE_BYTES = 1 << 22

#: No pre-tokenizer: the whole input is one piece.
PATTERN_NONE = -1
cdef int PAT_NONE = -1
#: The compiled splitters' codes, by pattern name (see ``bytepair.split._split``).
PATTERN_CODES = dict(PATTERN_IDS)



cdef struct Heap:
    uint64_t* keys      # rank << 32 | position
    uint32_t* slot      # position -> index in keys, NONE when absent
    Py_ssize_t size


cdef inline void heap_place(Heap* h, Py_ssize_t index, uint64_t key) noexcept nogil:
    h.keys[index] = key
    h.slot[<uint32_t>key] = <uint32_t>index


cdef inline void sift_up(Heap* h, Py_ssize_t index) noexcept nogil:
    cdef uint64_t key = h.keys[index]
    cdef Py_ssize_t parent
    while index > 0:
        parent = (index - 1) >> 2
        if h.keys[parent] <= key:
            break
        heap_place(h, index, h.keys[parent])
        index = parent
    heap_place(h, index, key)


cdef inline void sift_down(Heap* h, Py_ssize_t index) noexcept nogil:
    cdef uint64_t key = h.keys[index]
    cdef Py_ssize_t child, first, last
    while True:
        first = 4 * index + 1
        if first >= h.size:
            break
        last = min(first + 4, h.size)
        child = first
        for first in range(first + 1, last):
            if h.keys[first] < h.keys[child]:
                child = first
        if key <= h.keys[child]:
            break
        heap_place(h, index, h.keys[child])
        index = child
    heap_place(h, index, key)


cdef inline void heap_remove_at(Heap* h, Py_ssize_t index) noexcept nogil:
    # The caller has already marked the removed position absent.
    h.size -= 1
    if index == h.size:
        return
    heap_place(h, index, h.keys[h.size])
    sift_down(h, index)
    sift_up(h, index)


cdef inline void heap_set(Heap* h, uint32_t position, uint32_t rank) noexcept nogil:
    """Give ``position`` the key ``(rank, position)``, or no key when ``rank`` is NO_RANK."""
    cdef uint32_t index = h.slot[position]
    cdef uint64_t key
    if index == NONE:
        if rank == NO_RANK:
            return
        h.size += 1
        heap_place(h, h.size - 1, (<uint64_t>rank << 32) | position)
        sift_up(h, h.size - 1)
        return
    if rank == NO_RANK:
        h.slot[position] = NONE
        heap_remove_at(h, index)
        return
    key = (<uint64_t>rank << 32) | position
    if key < h.keys[index]:
        h.keys[index] = key
        sift_up(h, index)
    else:
        h.keys[index] = key
        sift_down(h, index)


# -- piece cache --------------------------------------------------------------

cdef enum:
    # Keys and IDs up to these sizes live in the slot itself (one cache line
    # per lookup); longer ones in the arenas, their offsets in the slot.
    INLINE_KEY = 24
    INLINE_IDS = 6


cdef struct CacheSlot:
    uint64_t hash                   # 0 when free
    uint32_t key_len
    uint32_t ids_len
    unsigned char key[INLINE_KEY]   # the piece, or its arena offset (8 bytes)
    uint32_t ids[INLINE_IDS]        # its IDs, or their arena offset (8 bytes)


cdef struct CacheState:
    CacheSlot* slots
    Py_ssize_t capacity     # slots, a power of two
    Py_ssize_t count
    unsigned char* key_arena
    Py_ssize_t key_capacity
    Py_ssize_t key_used
    uint32_t* ids_arena
    Py_ssize_t ids_capacity
    Py_ssize_t ids_used
    Py_ssize_t budget       # bytes; the three allocations together never exceed it
    Py_ssize_t hits
    Py_ssize_t misses
    Py_ssize_t resets
    bint full               # an insert would have passed the budget: take no new pieces
    Py_ssize_t full_hits    # hits and misses since the cache became full
    Py_ssize_t full_misses
    CacheState* shared      # a cache read first and never written (see PieceCache.lend)
    Py_ssize_t shared_hits  # lookups that the shared cache answered


cdef enum:
    CACHE_SLOTS = 1024
    CACHE_KEY_BYTES = 4096
    CACHE_IDS = 1024


cdef inline Py_ssize_t cache_bytes(Py_ssize_t slots, Py_ssize_t keys, Py_ssize_t ids) noexcept nogil:
    return slots * sizeof(CacheSlot) + keys + ids * sizeof(uint32_t)


cdef void cache_free(CacheState* c) noexcept nogil:
    free(c.slots)
    free(c.key_arena)
    free(c.ids_arena)
    c.slots = NULL
    c.key_arena = NULL
    c.ids_arena = NULL
    c.capacity = c.key_capacity = c.ids_capacity = 0
    c.count = c.key_used = c.ids_used = 0


cdef bint cache_reset(CacheState* c) noexcept nogil:
    """Empty the cache and go back to the smallest tables (False: out of memory)."""
    cdef Py_ssize_t i
    cache_free(c)
    c.full = False
    c.full_hits = c.full_misses = 0
    c.slots = <CacheSlot*>malloc(CACHE_SLOTS * sizeof(CacheSlot))
    c.key_arena = <unsigned char*>malloc(CACHE_KEY_BYTES)
    c.ids_arena = <uint32_t*>malloc(CACHE_IDS * sizeof(uint32_t))
    if c.slots == NULL or c.key_arena == NULL or c.ids_arena == NULL:
        cache_free(c)
        return False
    for i in range(CACHE_SLOTS):
        c.slots[i].hash = 0
    c.capacity = CACHE_SLOTS
    c.key_capacity = CACHE_KEY_BYTES
    c.ids_capacity = CACHE_IDS
    return True


cdef inline const unsigned char* slot_key(CacheState* c, CacheSlot* slot) noexcept nogil:
    cdef uint64_t at
    if slot.key_len <= INLINE_KEY:
        return slot.key
    memcpy(&at, slot.key, 8)
    return c.key_arena + at


cdef inline const uint32_t* slot_ids(CacheState* c, CacheSlot* slot) noexcept nogil:
    cdef uint64_t at
    if slot.ids_len <= INLINE_IDS:
        return slot.ids
    memcpy(&at, slot.ids, 8)
    return c.ids_arena + at


cdef inline CacheSlot* cache_find(CacheState* c, uint64_t h, const unsigned char* s,
                                  Py_ssize_t n) noexcept nogil:
    """The slot of piece ``s``, or NULL."""
    cdef Py_ssize_t mask = c.capacity - 1
    cdef Py_ssize_t i = <Py_ssize_t>(h >> 7) & mask
    cdef CacheSlot* slot
    while True:
        slot = &c.slots[i]
        if slot.hash == 0:
            return NULL
        if slot.hash == h and slot.key_len == n and memcmp(slot_key(c, slot), s, n) == 0:
            return slot
        i = (i + 1) & mask


cdef bint cache_grow_slots(CacheState* c) noexcept nogil:
    cdef Py_ssize_t capacity = c.capacity * 2, i, j, mask = capacity - 1
    cdef CacheSlot* slots = <CacheSlot*>malloc(capacity * sizeof(CacheSlot))
    if slots == NULL:
        return False
    for i in range(capacity):
        slots[i].hash = 0
    for i in range(c.capacity):
        if c.slots[i].hash:
            j = <Py_ssize_t>(c.slots[i].hash >> 7) & mask
            while slots[j].hash:
                j = (j + 1) & mask
            slots[j] = c.slots[i]
    free(c.slots)
    c.slots = slots
    c.capacity = capacity
    return True


cdef inline void cache_seen(CacheState* c, bint hit) noexcept nogil:
    """Count a lookup of a full cache (:func:`cache_tally`)."""
    cache_tally(c, 1 if hit else 0, 0 if hit else 1)


cdef void cache_tally(CacheState* c, Py_ssize_t hits, Py_ssize_t misses) noexcept nogil:
    """Count lookups of a full cache; a cache whose pieces no longer serve starts afresh.

    A full cache takes no new pieces, so it keeps the pieces seen first,
    which in a text of one kind are the frequent ones (a working set a little
    larger than the budget is then still served, where emptying the cache
    each time it filled up made it miss again and again). Hits and misses
    are counted over about the last ``2 * count`` lookups (both halve when
    they pass that); once the misses outnumber the hits there, and half the
    pieces the cache holds, the text has moved on: the cache is emptied and
    filled anew. So a cache that served one text for long adapts to the next
    as fast as a new one.
    """
    c.full_hits += hits
    c.full_misses += misses
    if c.full_misses > c.full_hits and 2 * c.full_misses > c.count:
        c.resets += 1
        cache_reset(c)
    else:
        while c.full_hits + c.full_misses > 2 * c.count:
            c.full_hits //= 2
            c.full_misses //= 2


cdef void cache_insert(CacheState* c, uint64_t h, const unsigned char* s, Py_ssize_t n,
                       const uint32_t* ids, Py_ssize_t k) noexcept nogil:
    """Remember piece ``s`` -> ``ids``, unless that would pass the budget (the cache is full)."""
    cdef Py_ssize_t slots = c.capacity, keys = c.key_capacity, idcap = c.ids_capacity, i, mask
    cdef Py_ssize_t key_need = n if n > INLINE_KEY else 0, ids_need = k if k > INLINE_IDS else 0
    cdef void* grown
    cdef CacheSlot* slot
    cdef uint64_t at
    if c.slots == NULL or c.full:
        return
    while (c.count + 1) * 2 > slots:
        slots *= 2
    while c.key_used + key_need > keys:
        keys *= 2
    while c.ids_used + ids_need > idcap:
        idcap *= 2
    if cache_bytes(slots, keys, idcap) > c.budget:
        if (slots == c.capacity or (c.count + 1) * 4 > c.capacity * 3
                or cache_bytes(c.capacity, keys, idcap) > c.budget):
            c.full = True
            return
        # The table cannot double within the budget: fill it to three quarters first
        # (linear probing stays short there), rather than stop at half of it.
        slots = c.capacity
    if slots != c.capacity and not cache_grow_slots(c):
        return
    if keys != c.key_capacity:
        grown = realloc(c.key_arena, keys)
        if grown == NULL:
            return
        c.key_arena = <unsigned char*>grown
        c.key_capacity = keys
    if idcap != c.ids_capacity:
        grown = realloc(c.ids_arena, idcap * sizeof(uint32_t))
        if grown == NULL:
            return
        c.ids_arena = <uint32_t*>grown
        c.ids_capacity = idcap
    mask = c.capacity - 1
    i = <Py_ssize_t>(h >> 7) & mask
    while c.slots[i].hash:
        i = (i + 1) & mask
    slot = &c.slots[i]
    slot.hash = h
    slot.key_len = <uint32_t>n
    slot.ids_len = <uint32_t>k
    if n <= INLINE_KEY:
        memcpy(slot.key, s, n)
    else:
        at = c.key_used
        memcpy(slot.key, &at, 8)
        memcpy(c.key_arena + c.key_used, s, n)
        c.key_used += n
    if k <= INLINE_IDS:
        memcpy(slot.ids, ids, k * sizeof(uint32_t))
    else:
        at = c.ids_used
        memcpy(slot.ids, &at, 8)
        memcpy(c.ids_arena + c.ids_used, ids, k * sizeof(uint32_t))
        c.ids_used += k
    c.count += 1


cdef class PieceCache:
    """Piece bytes -> token IDs for pieces of at most 256 bytes, within ``budget`` bytes.

    The hash table and both arenas count against the budget; when an insert
    would go over it the cache is full: it takes no new pieces until its
    recent misses outnumber its recent hits and half the pieces it holds,
    then it is emptied and starts again (``cache_seen``). Memory is bounded, a working set a little
    larger than the budget is still mostly served, and a text that moves on
    gets a fresh cache. One encode writes to a cache at a time; threads that
    encode one batch together read one cache and learn in caches of their own
    (:meth:`lend`, :meth:`absorb`).
    """

    # The state is written on every lookup by the thread that encodes with this cache; the
    # padding keeps any other object's fields (another thread's cache, made just before or
    # after) out of its cache lines, which the two cores would otherwise pass back and forth.
    cdef char apart_before[64]
    cdef CacheState state
    cdef char apart_after[64]
    cdef PieceCache lender  # the cache this one reads first, if any (kept alive while lent)

    def __cinit__(self, Py_ssize_t budget=24 << 20):
        minimum = cache_bytes(CACHE_SLOTS, CACHE_KEY_BYTES, CACHE_IDS)
        if budget < minimum:
            raise ValueError(f"budget must be at least {minimum} bytes, got {budget}")
        self.state.budget = budget
        if not cache_reset(&self.state):
            raise MemoryError()

    def __dealloc__(self):
        cache_free(&self.state)

    @property
    def budget(self) -> int:
        """The byte bound."""
        return self.state.budget

    @property
    def nbytes(self) -> int:
        """Bytes held now: hash table plus arenas (always <= budget)."""
        return cache_bytes(self.state.capacity, self.state.key_capacity, self.state.ids_capacity)

    def __len__(self) -> int:
        return self.state.count

    @property
    def stats(self) -> dict:
        """Hits, misses and resets since the cache was made, and whether it is full now."""
        return {"hits": self.state.hits, "misses": self.state.misses, "resets": self.state.resets,
                "full": bool(self.state.full)}

    def clear(self) -> None:
        if not cache_reset(&self.state):
            raise MemoryError()

    def lend(self, PieceCache learner) -> None:
        """Let ``learner`` read this cache first: an encode with ``learner`` looks a piece up
        here, then in ``learner``, and puts what it merges in ``learner`` only. Nothing
        writes to this cache until :meth:`absorb` takes ``learner`` back, so any number of
        threads, each with a learner of its own, read it at once."""
        if learner is self or learner.lender is not None or self.lender is not None:
            raise ValueError("learner must be another cache that reads no cache")
        learner.lender = self
        learner.state.shared = &self.state

    def absorb(self, PieceCache learner) -> None:
        """Take back ``learner`` (lent by :meth:`lend`) once no encode uses it: its pieces
        join this cache (those its budget has room for; a full cache whose lookups mostly
        missed starts afresh first, as when it is used alone), its hits and misses count
        here, and ``learner`` is emptied to its smallest size. O(learner's slots): one
        thread runs it once the others are done."""
        cdef CacheState* c = &learner.state
        cdef CacheState* into = &self.state
        cdef Py_ssize_t i
        cdef CacheSlot* slot
        cdef const unsigned char* key
        if learner.lender is not self:
            raise ValueError("learner must be a cache lent by this one")
        with nogil:
            into.hits += c.shared_hits + c.hits
            into.misses += c.misses
            if into.full:
                cache_tally(into, c.shared_hits + c.hits, c.misses)
            for i in range(c.capacity):
                slot = &c.slots[i]
                if slot.hash == 0 or into.full or into.slots == NULL:
                    continue
                key = slot_key(c, slot)
                if cache_find(into, slot.hash, key, slot.key_len) == NULL:
                    cache_insert(into, slot.hash, key, slot.key_len, slot_ids(c, slot), slot.ids_len)
            c.shared = NULL
            c.shared_hits = c.hits = c.misses = c.resets = 0
        learner.lender = None
        if not cache_reset(c):
            raise MemoryError()


# -- whole tokens --------------------------------------------------------------
#
# Most pieces of real text are one token. The whole-token table maps the bytes
# of every token of 2 to WHOLE_MAX bytes whose bytes, merged as one piece, give
# that token alone, to the token: such a piece needs no rank loop. Exact by
# construction: merging depends on the piece's bytes only, and a token whose
# bytes merge to other tokens (``a + bc`` after ``ab``) is left out. The table
# is built once per model and only read after, so every thread shares it.

cdef enum:
    # A slot of the whole-token table keeps the token's first 8 bytes (its head) and
    # the offset of its bytes in the flat buffer << 32 | length << TOKEN_BITS | token
    # (0: free), so it holds tokens below 2 ** TOKEN_BITS whose bytes start below
    # 4 GiB (others are merged).
    TOKEN_BITS = 25
    # Pieces split, looked up and merged together (see encode_into).
    BLOCK = 32
    # How many pairs ahead merge_seams starts reading the seam table.
    SEAMS_AHEAD = 8


cdef struct WholeSlot:
    # A piece of at most 8 bytes is compared with ``head`` alone, in the slot its hash
    # reads: no second memory read for the token's bytes, which were the wait.
    uint64_t head
    uint64_t meta


cdef struct Piece:
    Py_ssize_t start
    Py_ssize_t n
    uint64_t head       # head_of the piece (2..WHOLE_MAX bytes)
    uint64_t h          # whole_hash of the piece (2..WHOLE_MAX bytes)
    uint64_t cached     # the piece cache's hash when find_block took it, else 0
    uint32_t token      # the piece's one token when known, else NONE


cdef inline uint64_t head_of(const unsigned char* s, Py_ssize_t n, Py_ssize_t room) noexcept nogil:
    """The first ``min(n, 8)`` bytes of ``s`` as one word, zero-padded; ``room`` bytes are readable."""
    cdef uint64_t word = 0
    if room >= 8 and BYTEPAIR_LITTLE_ENDIAN:
        memcpy(&word, s, 8)  # one load; the bytes after the piece are masked off
        if n < 8:
            word &= (<uint64_t>1 << (8 * n)) - 1
        return word
    memcpy(&word, s, n if n < 8 else 8)
    return word


cdef inline uint64_t whole_hash(uint64_t head, const unsigned char* s, Py_ssize_t n) noexcept nogil:
    """The whole-token table's hash of piece ``s[:n]`` whose head is ``head``: two
    multiplications for a piece of at most 8 bytes."""
    cdef uint64_t h
    if n > 8:
        return hash_bytes(s, n)
    h = (head ^ (<uint64_t>n << 59)) * GOLDEN
    h ^= h >> 32
    return h * 0xBF58476D1CE4E5B9u


cdef inline uint64_t cache_hash(CacheState* cache, const unsigned char* s, Py_ssize_t n,
                                uint64_t h) noexcept nogil:
    """The piece cache's hash of ``s[:n]`` (0: not cached), given its whole_hash ``h``
    (the same for pieces of more than 8 bytes)."""
    if cache == NULL or n > MAX_CACHED_PIECE:
        return 0
    if 8 < n <= WHOLE_MAX:
        return h
    return hash_bytes(s, n)


# -- the model ---------------------------------------------------------------

# -- batches of texts --
#
# A batch is read in two passes so that threads can encode batches at the same
# time: with the GIL, one pass only takes each text's buffer (no copy); without
# it, everything else: UTF-8 of non-ASCII str, the UTF-8 check of bytes, the
# special-token search, splitting and merging.

cdef enum:
    # Text.kind of a buffer that already is UTF-8: an ASCII str.
    KIND_UTF8 = 0
    # Text.kind of bytes: UTF-8 only if checked.
    KIND_BYTES = 8
    # BatchError.what
    BAD_SURROGATE = 1
    BAD_UTF8 = 2
    BAD_SIZE = 3


cdef struct Text:
    const void* data      # the bytes (KIND_UTF8, KIND_BYTES) or the str's code units
    Py_ssize_t n          # bytes, or code points of a str of kind 1, 2 or 4
    int kind              # KIND_UTF8, KIND_BYTES, or the str's PyUnicode kind


cdef struct BatchError:
    Py_ssize_t text       # index in the batch, -1 for none
    Py_ssize_t at         # code point (BAD_SURROGATE) or byte (BAD_UTF8) offset
    int what


cdef extern from *:
    """
    #include <stdint.h>
    #include <string.h>
    /* The UTF-8 of n code units of kind 1, 2 or 4 (a str's PyUnicode kind) at `data`, into
       `o` (room for n * (2, 3, 4) bytes): its size, or -1 - index of a lone surrogate.
       Runs of ASCII, most of most text, go eight bytes of input at a time: CPython's own
       encoder goes unit by unit, and took a tenth of encoding a str of English that is
       not all ASCII (curly quotes, dashes). */
    static Py_ssize_t bytepair_to_utf8(const void* data, Py_ssize_t n, int kind, unsigned char* o) {
        Py_ssize_t i = 0, k = 0;
        uint64_t w;
        uint32_t c;
        while (i < n) {
    #if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
            if (kind == 1) {
                while (i + 8 <= n) {
                    memcpy(&w, (const unsigned char*)data + i, 8);
                    if (w & 0x8080808080808080ULL) break;
                    memcpy(o + k, &w, 8);
                    i += 8; k += 8;
                }
            } else if (kind == 2) {
                while (i + 4 <= n) {
                    memcpy(&w, (const uint16_t*)data + i, 8);
                    if (w & 0xFF80FF80FF80FF80ULL) break;
                    w = (w & 0xFFULL) | ((w >> 8) & 0xFF00ULL) | ((w >> 16) & 0xFF0000ULL) | ((w >> 24) & 0xFF000000ULL);
                    memcpy(o + k, &w, 4);
                    i += 4; k += 4;
                }
            } else {
                uint64_t v;
                while (i + 4 <= n) {
                    memcpy(&w, (const uint32_t*)data + i, 8);
                    memcpy(&v, (const uint32_t*)data + i + 2, 8);
                    if ((w | v) & 0xFFFFFF80FFFFFF80ULL) break;
                    w = (w & 0xFFULL) | ((w >> 24) & 0xFF00ULL) | ((v & 0xFFULL) << 16) | ((v >> 8) & 0xFF000000ULL);
                    memcpy(o + k, &w, 4);
                    i += 4; k += 4;
                }
            }
            if (i >= n) break;
    #endif
            c = kind == 1 ? ((const unsigned char*)data)[i]
                : kind == 2 ? ((const uint16_t*)data)[i] : ((const uint32_t*)data)[i];
            if (c < 0x80) {
                o[k++] = (unsigned char)c;
            } else if (c < 0x800) {
                o[k] = (unsigned char)(0xC0 | (c >> 6));
                o[k + 1] = (unsigned char)(0x80 | (c & 0x3F));
                k += 2;
            } else if (c < 0x10000) {
                if (c >= 0xD800 && c < 0xE000) return -1 - i;
                o[k] = (unsigned char)(0xE0 | (c >> 12));
                o[k + 1] = (unsigned char)(0x80 | ((c >> 6) & 0x3F));
                o[k + 2] = (unsigned char)(0x80 | (c & 0x3F));
                k += 3;
            } else {
                o[k] = (unsigned char)(0xF0 | (c >> 18));
                o[k + 1] = (unsigned char)(0x80 | ((c >> 12) & 0x3F));
                o[k + 2] = (unsigned char)(0x80 | ((c >> 6) & 0x3F));
                o[k + 3] = (unsigned char)(0x80 | (c & 0x3F));
                k += 4;
            }
            i++;
        }
        return k;
    }
    """
    Py_ssize_t units_to_utf8 "bytepair_to_utf8"(const void* data, Py_ssize_t n, int kind,
                                                unsigned char* out) noexcept nogil


cdef extern from *:
    """
    #include <stdlib.h>
    /* A buffer that grows and is freed with its scope; unlike a vector it does not
       zero what it adds (three bytes per code unit of every str, written over at once). */
    struct bytepair_scratch {
        unsigned char* data = nullptr;
        Py_ssize_t size = 0;
        ~bytepair_scratch() { free(data); }
        unsigned char* room(Py_ssize_t need) {
            if (need > size) {
                unsigned char* grown = (unsigned char*)realloc(data, need > 0 ? need : 1);
                if (grown == nullptr) return nullptr;
                data = grown;
                size = need;
            }
            return data;
        }
    };
    """
    cdef cppclass Scratch "bytepair_scratch":
        unsigned char* room(Py_ssize_t need) noexcept nogil


cdef bint contains(const unsigned char* s, Py_ssize_t n, const string* needle) noexcept nogil:
    """Whether ``needle`` occurs in ``s[0:n]``: memchr for its first byte, then compare."""
    cdef Py_ssize_t m = needle.size()
    cdef const unsigned char* first = <const unsigned char*>needle.data()
    cdef const unsigned char* at = s
    cdef const unsigned char* last
    if m == 0:
        return True  # as ``"" in text``
    if n < m:
        return False
    last = s + n - m
    while at <= last:
        at = <const unsigned char*>memchr(at, first[0], last - at + 1)
        if at == NULL:
            return False
        if memcmp(at + 1, first + 1, m - 1) == 0:
            return True
        at += 1
    return False


cdef tuple gather(list texts, Py_ssize_t start, Py_ssize_t stop, vector[Text]* out,
                  bint allow_bytes):
    """The buffers of ``texts[start:stop]``, with the GIL: O(stop - start), nothing copied.

    Returns those texts as a tuple, which the caller keeps until the buffers
    have been read without the GIL (another thread cannot drop a text from
    it, as it could from the list).
    """
    if not 0 <= start <= stop <= len(texts):
        raise ValueError(f"texts[{start}:{stop}] is not a range of the {len(texts)} texts")
    cdef Py_ssize_t i, k = stop - start
    cdef Text* t
    cdef tuple kept = PyTuple_New(k)
    out.resize(k)
    for i in range(k):
        text = texts[start + i]
        Py_INCREF(<PyObject*>text)
        PyTuple_SET_ITEM(kept, i, text)
        t = &deref(out)[i]
        if isinstance(text, str):
            # PyUnicode_GetLength first: it readies a string made by the legacy API
            # (Python 3.11), whose kind and data are not set before.
            t.n = PyUnicode_GetLength(text)
            t.data = PyUnicode_DATA(text)
            t.kind = KIND_UTF8 if PyUnicode_IS_ASCII(text) else PyUnicode_KIND(text)
        elif allow_bytes and isinstance(text, bytes):
            t.data = PyBytes_AS_STRING(text)
            t.n = len(<bytes>text)
            t.kind = KIND_BYTES
        else:
            raise TypeError(f"texts[{start + i}] must be a str, got {type(text).__name__}")
    return kept


cdef int raise_batch_error(BatchError* error, Py_ssize_t first) except -1:
    if error.what == BAD_SURROGATE:
        raise ValueError(f"texts[{first + error.text}] is not encodable as UTF-8: "
                         f"surrogates not allowed at index {error.at}")
    if error.what == BAD_UTF8:
        raise ValueError(f"texts[{first + error.text}]: invalid UTF-8 at byte offset {error.at}")
    if error.what == BAD_SIZE:
        raise ValueError(f"texts[{first + error.text}]: {error.at} bytes; one call encodes "
                         "less than 4 GiB")
    return 0


cdef int check_output(int itemsize, long long append) except -1:
    """Refuse an array item size other than 2 or 4 bytes, or an ``append`` ID past 32 bits."""
    if itemsize != 2 and itemsize != 4:
        raise ValueError(f"itemsize must be 2 or 4, got {itemsize}")
    if append > 0xFFFFFFFF:
        raise ValueError(f"append: {append} is not a 32-bit token ID")
    return 0


cdef vector[string] needles(tuple specials) except *:
    """The UTF-8 byte strings of ``specials`` (str or bytes).

    A str with a lone surrogate has no UTF-8 and can occur in no text that
    is UTF-8; the texts that are not are left to the caller anyway.
    """
    cdef vector[string] out
    for special in specials:
        if isinstance(special, str):
            try:
                special = special.encode("utf-8")
            except UnicodeEncodeError:
                continue
        out.push_back(<string>special)
    return out


cdef bytes id_bytes(vector[uint32_t]* ids, int itemsize):
    """``ids`` as raw native unsigned ints of ``itemsize`` bytes (2: each must fit)."""
    cdef Py_ssize_t i, total = ids.size()
    cdef uint16_t* narrow
    cdef uint32_t* wide = ids.data()
    if itemsize == 4:
        return PyBytes_FromStringAndSize(<char*>wide, total * 4)
    result = PyBytes_FromStringAndSize(NULL, total * 2)
    narrow = <uint16_t*>PyBytes_AS_STRING(result)
    with nogil:
        for i in range(total):
            narrow[i] = <uint16_t>wide[i]
    return result


cdef class Encoder:
    """The rules of a byte-mode model in compiled form: encode, decode, token bytes.

    Built from the left and right token of every rule in rank order, in
    O(rules) time and memory (about 85-135 bytes per rule: pair table and keys, lengths,
    flat offsets, the whole-token table and one shared int object per ID; see the module notes
    on token bytes). Building the whole-token table merges the bytes of every token of at most
    64 bytes once (about 12 ms for 32k rules). Methods that take a :class:`PieceCache` also accept
    ``None`` (no cache).
    """

    # Pair -> rank: an open-addressing table of rank + 1 (0: free), 4 bytes a
    # slot, each candidate checked against ``rule_key[rank]``. A quarter of the
    # memory of (key, rank) slots, so the table of a 32k-rule model (256 KiB)
    # stays in the core's own cache, where a first encode's lookups go.
    cdef uint32_t* pair_slots
    cdef uint64_t* rule_key        # left << 32 | right of each rule (its only copy of them)
    cdef int pair_shift
    cdef uint64_t pair_mask
    cdef uint32_t byte_rank[65536]
    cdef Py_ssize_t n_rules
    cdef uint64_t* length         # bytes of each token, saturating at LENGTH_CAP
    cdef uint64_t* flat_at        # offset into flat, NOT_FLAT for long tokens
    cdef unsigned char* flat
    cdef object ints              # the int object of every ID, shared by all outputs
    cdef PyObject** int_items
    cdef WholeSlot* whole         # the whole-token table (see its section above)
    cdef int whole_shift          # slot of hash h: h >> whole_shift
    cdef Py_ssize_t whole_mask
    # A SuperBPE model's stage-1 rules alone (None for other models), the byte pairs
    # they join and the pairs of stage-1 tokens that the other rules join (an open-addressing
    # set of ``(left << 32 | right) + 1``, 0: free; see :meth:`merge_stages`).
    cdef Encoder stage_one
    cdef unsigned char* stage_joins
    cdef uint64_t* seams
    cdef uint32_t* seam_ranks       # the rank of each seam's own pair, NO_RANK if none
    cdef unsigned char* seam_sides  # per stage-1 token: 1 ends a seam, 2 starts one
    cdef int seam_shift
    cdef Py_ssize_t seam_mask

    def __cinit__(self, lefts, rights):
        cdef Py_ssize_t n = len(lefts), i, capacity, at, flat_size
        cdef uint32_t a, b, t
        cdef uint64_t key, h
        if len(rights) != n:
            raise ValueError("lefts and rights must have the same length")
        if n > 0xFFFFFFFF - 256:
            raise ValueError(f"{n} rules are more than 32-bit token IDs allow")
        self.n_rules = n
        self.length = <uint64_t*>malloc((n + 256) * sizeof(uint64_t))
        self.flat_at = <uint64_t*>malloc((n + 256) * sizeof(uint64_t))
        capacity = 16
        while capacity < 2 * n:
            capacity *= 2
        self.pair_mask = capacity - 1
        self.pair_shift = 64
        while (<uint64_t>1 << (64 - self.pair_shift)) < <uint64_t>capacity:
            self.pair_shift -= 1
        self.pair_slots = <uint32_t*>malloc(capacity * sizeof(uint32_t))
        self.rule_key = <uint64_t*>malloc((n + 1) * sizeof(uint64_t))
        if (self.length == NULL or self.flat_at == NULL or self.pair_slots == NULL or self.rule_key == NULL):
            raise MemoryError()
        for i in range(capacity):
            self.pair_slots[i] = 0
        for i in range(65536):
            self.byte_rank[i] = NO_RANK
        for i in range(256):
            self.length[i] = 1
        flat_size = 256
        for i in range(n):
            a = lefts[i]
            b = rights[i]
            t = <uint32_t>(256 + i)
            if a >= t or b >= t:
                raise ValueError(f"rule {i} joins a token that is not before it")
            self.length[t] = min(self.length[a] + self.length[b], LENGTH_CAP)
            if self.length[t] <= FLAT_MAX:
                flat_size += self.length[t]
            key = (<uint64_t>a << 32) | b
            h = (key * GOLDEN) >> self.pair_shift
            while self.pair_slots[h]:
                if self.rule_key[self.pair_slots[h] - 1] == key:
                    raise ValueError(f"rule {i} repeats the pair ({a}, {b})")
                h = (h + 1) & self.pair_mask
            self.rule_key[i] = key
            self.pair_slots[h] = <uint32_t>(i + 1)
            if a < 256 and b < 256:
                self.byte_rank[a * 256 + b] = <uint32_t>i
        self.flat = <unsigned char*>calloc(flat_size + 8, 1)  # 8 bytes to spare
        if self.flat == NULL:
            raise MemoryError()
        for i in range(256):
            self.flat[i] = <unsigned char>i
            self.flat_at[i] = i
        at = 256
        for i in range(n):
            t = <uint32_t>(256 + i)
            if self.length[t] <= FLAT_MAX:
                # Both halves are shorter, so they are already in the buffer.
                a = <uint32_t>(self.rule_key[i] >> 32)
                b = <uint32_t>self.rule_key[i]
                memcpy(self.flat + at, self.flat + self.flat_at[a], self.length[a])
                memcpy(self.flat + at + self.length[a], self.flat + self.flat_at[b], self.length[b])
                self.flat_at[t] = at
                at += self.length[t]
            else:
                self.flat_at[t] = NOT_FLAT
        # A tuple of ints, which the cyclic collector drops from its lists (a list
        # would make every full collection read 256 + n int objects).
        self.ints = tuple(range(n + 256))
        self.int_items = <PyObject**>malloc((n + 256) * sizeof(PyObject*))
        if self.int_items == NULL:
            raise MemoryError()
        for i in range(n + 256):
            self.int_items[i] = PyTuple_GET_ITEM(<PyObject*>self.ints, i)
        self.fill_whole()

    cdef int fill_whole(self) except -1:
        """Build the whole-token table: 16 bytes a slot, at most half of them used.

        O(sum of L^2) for the L bytes of each token of at most WHOLE_MAX bytes,
        each merged once (about 12 ms for 32k tokens). A slot holds the
        token's first 8 bytes, its length and where its bytes are in the flat
        buffer: 1 MiB for 32k tokens.
        """
        cdef uint32_t merged[SMALL_PIECE]
        cdef Py_ssize_t i, count = 256, capacity = 16, at, n
        cdef uint32_t t
        cdef uint64_t head
        cdef const unsigned char* s
        for i in range(self.n_rules):
            if self.length[256 + i] <= WHOLE_MAX:
                count += 1
        while capacity < 2 * count:
            capacity *= 2
        self.whole_mask = capacity - 1
        self.whole_shift = 64
        while (<Py_ssize_t>1 << (64 - self.whole_shift)) < capacity:
            self.whole_shift -= 1
        self.whole = <WholeSlot*>calloc(capacity, sizeof(WholeSlot))
        if self.whole == NULL:
            raise MemoryError()
        with nogil:
            # The single bytes too: then every piece of a block takes the same path, with
            # no branch on its length, which was one misprediction a piece.
            for i in range(256 + self.n_rules):
                t = <uint32_t>i
                n = <Py_ssize_t>self.length[t]
                if n > WHOLE_MAX or t >> TOKEN_BITS or self.flat_at[t] >> 32:
                    continue
                s = self.flat + self.flat_at[t]
                if t >= 256 and (self.merge_small(s, n, merged) != 1 or merged[0] != t):
                    continue
                head = head_of(s, n, n)
                at = <Py_ssize_t>(whole_hash(head, s, n) >> self.whole_shift)
                while self.whole[at].meta:
                    at = (at + 1) & self.whole_mask
                self.whole[at].head = head
                self.whole[at].meta = self.flat_at[t] << 32 | (<uint32_t>n << TOKEN_BITS) | t
        return 0

    def __dealloc__(self):
        free(self.stage_joins)
        free(self.seams)
        free(self.seam_ranks)
        free(self.seam_sides)
        free(self.pair_slots)
        free(self.rule_key)
        free(self.length)
        free(self.flat_at)
        free(self.flat)
        free(self.int_items)
        free(self.whole)

    @property
    def vocab_size(self) -> int:
        return self.n_rules + 256

    def set_stage_one(self, Encoder first):
        """Encode pieces in two phases (:meth:`merge_stages`): ``first`` holds this
        encoder's first rules alone, a SuperBPE model's stage-1 rules. O(rules)."""
        cdef Py_ssize_t r
        if not 0 < first.n_rules < self.n_rules:
            raise ValueError(f"stage one must hold between 1 and {self.n_rules - 1} rules, "
                             f"got {first.n_rules}")
        for r in range(first.n_rules):
            if first.rule_key[r] != self.rule_key[r]:
                raise ValueError(f"stage one's rule {r} is not this encoder's rule {r}")
        if self.stage_joins == NULL:
            self.stage_joins = <unsigned char*>malloc(65536)
            if self.stage_joins == NULL:
                raise MemoryError()
        first.byte_joins(self.stage_joins)
        self.fill_seams(first.n_rules)
        self.stage_one = first

    cdef int fill_seams(self, Py_ssize_t stage_one) except -1:
        """Build the set of pairs ``a b`` of stage-1 tokens that a later rule joins: the last
        stage-1 token of its left and the first of its right.

        A token of a later rule is a run of stage-1 tokens, so no later rule can ever merge
        across two stage-1 tokens that are not such a pair (:meth:`merge_seams`). O(rules)
        time; 12 bytes a slot (the pair and its own rank), at most half of them used (192 KiB
        for 8,192 later rules), and a byte per stage-1 token for whether it ends or starts a
        seam at all.
        """
        cdef Py_ssize_t r, total = self.n_rules + 256, capacity = 16, at
        cdef uint32_t* first = <uint32_t*>malloc(2 * total * sizeof(uint32_t))
        cdef uint32_t* last
        cdef uint32_t a, b
        cdef uint64_t key
        while capacity < 2 * (self.n_rules - stage_one):
            capacity *= 2
        free(self.seams)
        free(self.seam_ranks)
        free(self.seam_sides)
        self.seams = <uint64_t*>calloc(capacity, sizeof(uint64_t))
        self.seam_ranks = <uint32_t*>malloc(capacity * sizeof(uint32_t))
        self.seam_sides = <unsigned char*>calloc(256 + stage_one, 1)
        if (first == NULL or self.seams == NULL or self.seam_ranks == NULL
                or self.seam_sides == NULL):
            free(first)
            raise MemoryError()
        self.seam_mask = capacity - 1
        self.seam_shift = 64
        while (<Py_ssize_t>1 << (64 - self.seam_shift)) < capacity:
            self.seam_shift -= 1
        last = first + total
        for r in range(256 + stage_one):
            first[r] = last[r] = <uint32_t>r
        for r in range(stage_one, self.n_rules):
            a = <uint32_t>(self.rule_key[r] >> 32)
            b = <uint32_t>self.rule_key[r]
            first[256 + r] = first[a]
            last[256 + r] = last[b]
            key = ((<uint64_t>last[a] << 32) | first[b]) + 1
            self.seam_sides[last[a]] |= 1
            self.seam_sides[first[b]] |= 2
            at = <Py_ssize_t>((key * GOLDEN) >> self.seam_shift)
            while self.seams[at] and self.seams[at] != key:
                at = (at + 1) & self.seam_mask
            self.seams[at] = key
            self.seam_ranks[at] = self.rank(last[a], first[b])
        free(first)
        return 0

    cdef inline uint32_t seam_rank(self, uint32_t a, uint32_t b, bint prefetch) noexcept nogil:
        """The rank of stage-1 tokens ``a b`` (``rank(a, b)``) when some rule after stage one
        may join them (see fill_seams), else NOT_SEAM; with ``prefetch``, only start reading
        the slot that tells (returns NOT_SEAM)."""
        cdef uint64_t key = ((<uint64_t>a << 32) | b) + 1
        cdef Py_ssize_t at = <Py_ssize_t>((key * GOLDEN) >> self.seam_shift)
        if not (self.seam_sides[a] & 1 and self.seam_sides[b] & 2):
            return NOT_SEAM  # most pairs: one of the two tokens is at no seam at all
        if prefetch:
            __builtin_prefetch(&self.seams[at])
            __builtin_prefetch(&self.seam_ranks[at])
            return NOT_SEAM
        while self.seams[at] != key:
            if self.seams[at] == 0:
                return NOT_SEAM
            at = (at + 1) & self.seam_mask
        return self.seam_ranks[at]

    # -- merging (no GIL) --

    cdef inline uint32_t rank(self, uint32_t a, uint32_t b) noexcept nogil:
        cdef uint64_t key, h
        if (a | b) < 256:
            return self.byte_rank[(a << 8) | b]
        cdef uint32_t slot
        key = (<uint64_t>a << 32) | b
        h = (key * GOLDEN) >> self.pair_shift
        while True:
            slot = self.pair_slots[h]
            if slot == 0:
                return NO_RANK
            if self.rule_key[slot - 1] == key:
                return slot - 1
            h = (h + 1) & self.pair_mask

    cdef Py_ssize_t merge_small(self, const unsigned char* s, Py_ssize_t n, uint32_t* out) noexcept nogil:
        """Merge a piece of at most SMALL_PIECE bytes into ``out``; returns the token count."""
        cdef uint32_t ranks[SMALL_PIECE]
        cdef Py_ssize_t i
        for i in range(n):
            out[i] = s[i]
        for i in range(n - 1):
            ranks[i] = self.rank(out[i], out[i + 1])
        return self.merge_tokens(out, n, ranks)

    cdef inline Py_ssize_t merge_tokens(self, uint32_t* out, Py_ssize_t n,
                                        uint32_t* ranks) noexcept nogil:
        """Merge the ``n`` <= SMALL_PIECE tokens ``out`` in place, ``ranks[i]`` the rank of
        pair ``i`` (both changed); returns how many tokens are left."""
        cdef Py_ssize_t i, at, m = n
        cdef uint32_t best
        while m > 1:
            best = NO_RANK
            at = -1
            for i in range(m - 1):
                if ranks[i] < best:
                    best = ranks[i]
                    at = i
            if at < 0:
                break
            out[at] = 256 + best
            # Token at + 1 is consumed: pair at + 1 goes, later pairs move down.
            # (Plain loops: these moves are a few words, less than a call to memmove.)
            for i in range(at + 1, m - 1):
                out[i] = out[i + 1]
            for i in range(at + 1, m - 2):
                ranks[i] = ranks[i + 1]
            m -= 1
            if at + 1 < m:
                ranks[at] = self.rank(out[at], out[at + 1])
            if at > 0:
                ranks[at - 1] = self.rank(out[at - 1], out[at])
        return m

    cdef int merge_large(self, const unsigned char* s, const uint32_t* ids, Py_ssize_t n,
                         vector[uint32_t]* out) except -1 nogil:
        """Merge a piece of any length with the linked list and the indexed heap: its bytes
        ``s``, or (``s`` NULL) the tokens ``ids`` that earlier rules left of it."""
        cdef uint32_t* tokens = <uint32_t*>malloc(n * 4 * sizeof(uint32_t))
        cdef uint32_t* nxt
        cdef uint32_t* prv
        cdef Heap heap
        cdef Py_ssize_t i
        cdef uint32_t r, j, after, before, position
        cdef uint64_t key
        heap.keys = <uint64_t*>malloc(n * sizeof(uint64_t))
        if tokens == NULL or heap.keys == NULL:
            free(tokens)
            free(heap.keys)
            with gil:
                raise MemoryError()
        nxt = tokens + n
        prv = tokens + 2 * n
        heap.slot = tokens + 3 * n
        heap.size = 0
        for i in range(n):
            tokens[i] = s[i] if s != NULL else ids[i]
            nxt[i] = <uint32_t>(i + 1)
            prv[i] = <uint32_t>(i - 1)
            heap.slot[i] = NONE
        nxt[n - 1] = NONE
        prv[0] = NONE
        for i in range(n - 1):
            r = self.rank(tokens[i], tokens[i + 1])
            if r != NO_RANK:
                heap.keys[heap.size] = (<uint64_t>r << 32) | <uint64_t>i
                heap.slot[i] = <uint32_t>heap.size
                heap.size += 1
        i = (heap.size - 2) // 4 if heap.size > 1 else -1
        while i >= 0:
            sift_down(&heap, i)
            i -= 1
        while heap.size:
            key = heap.keys[0]
            r = <uint32_t>(key >> 32)
            position = <uint32_t>key
            heap.slot[position] = NONE
            heap_remove_at(&heap, 0)
            j = nxt[position]
            tokens[position] = 256 + r
            if heap.slot[j] != NONE:  # the consumed token's own pair goes too
                i = heap.slot[j]
                heap.slot[j] = NONE
                heap_remove_at(&heap, i)
            after = nxt[j]
            nxt[position] = after
            if after != NONE:
                prv[after] = position
                heap_set(&heap, position, self.rank(tokens[position], tokens[after]))
            before = prv[position]
            if before != NONE:
                heap_set(&heap, before, self.rank(tokens[before], tokens[position]))
        position = 0
        while position != NONE:
            out.push_back(tokens[position])
            position = nxt[position]
        free(tokens)
        free(heap.keys)
        return 0

    cdef inline uint32_t whole_find(self, const unsigned char* s, Py_ssize_t n, uint64_t head,
                                    uint64_t h) noexcept nogil:
        """The token that piece ``s[:n]`` (2..WHOLE_MAX bytes, head ``head``, whole_hash
        ``h``) merges to alone, or NONE."""
        cdef Py_ssize_t at = <Py_ssize_t>(h >> self.whole_shift)
        cdef uint64_t meta
        cdef uint32_t length = <uint32_t>n
        while True:
            meta = self.whole[at].meta
            if meta == 0:
                return NONE
            if (self.whole[at].head == head and (<uint32_t>meta) >> TOKEN_BITS == length
                    and (n <= 8 or memcmp(self.flat + (meta >> 32) + 8, s + 8, n - 8) == 0)):
                return (<uint32_t>meta) & ((1u << TOKEN_BITS) - 1)
            at = (at + 1) & self.whole_mask

    cdef int merge_piece(self, const unsigned char* s, Py_ssize_t n, CacheState* cache,
                         vector[uint32_t]* out) except -1 nogil:
        """Append the IDs of one piece to ``out``: a whole token, or through the cache when
        it is short."""
        cdef uint64_t h = 0, head
        cdef uint32_t t
        if 1 < n <= WHOLE_MAX:
            head = head_of(s, n, n)
            h = whole_hash(head, s, n)
            t = self.whole_find(s, n, head, h)
            if t != NONE:
                out.push_back(t)
                return 0
            if n <= 8:
                h = 0
        if h == 0 and cache != NULL and 1 < n <= MAX_CACHED_PIECE:
            h = hash_bytes(s, n)
        return self.merge_hashed(s, n, h if cache != NULL else 0, cache, out)

    cdef int merge_hashed(self, const unsigned char* s, Py_ssize_t n, uint64_t h,
                          CacheState* cache, vector[uint32_t]* out) except -1 nogil:
        """:meth:`merge_piece` with the piece's hash already known (0: do not cache)."""
        cdef uint32_t small[SMALL_PIECE]
        cdef Py_ssize_t k, start
        cdef CacheSlot* slot
        cdef const uint32_t* ids
        if n == 1:
            out.push_back(s[0])
            return 0
        if h and cache.shared != NULL and cache.shared.slots != NULL and cache.shared.count:
            slot = cache_find(cache.shared, h, s, n)  # read only: threads share it
            if slot != NULL:
                cache.shared_hits += 1
                ids = slot_ids(cache.shared, slot)
                out.insert(out.end(), ids, ids + slot.ids_len)
                return 0
        if h and cache.slots != NULL:
            slot = cache_find(cache, h, s, n)
            if slot != NULL:
                cache.hits += 1
                ids = slot_ids(cache, slot)
                out.insert(out.end(), ids, ids + slot.ids_len)
                if cache.full:
                    cache_seen(cache, True)
                return 0
            cache.misses += 1
            if cache.full:
                cache_seen(cache, False)
        if n <= SMALL_PIECE and self.stage_one is None:
            k = self.merge_small(s, n, small)
            out.insert(out.end(), small, small + k)
            if h:
                cache_insert(cache, h, s, n, small, k)
            return 0
        start = out.size()
        if self.stage_one is not None:
            # A piece that is cached whole needs no cached parts: they would only crowd
            # the cache (and fill it, with the pieces of a 5 MB text).
            self.merge_stages(s, n, <CacheState*>NULL if h else cache, out)
        else:
            self.merge_large(s, NULL, n, out)
        if h:
            cache_insert(cache, h, s, n, out.data() + start, out.size() - start)
        return 0

    cdef int merge_stages(self, const unsigned char* s, Py_ssize_t n, CacheState* cache,
                          vector[uint32_t]* out) except -1 nogil:
        """Merge a piece of a SuperBPE model: its stage-1 rules, then the others.

        Subtle: replaying the rules in rank order runs every stage-1 rule before any
        stage-2 one, and no stage-2 merge makes a pair of stage-1 tokens. The stage-1
        phase cuts the piece between two bytes that no stage-1 rule joins (as
        :meth:`encode_spans` does): each part merges on its own, mostly a word that is
        one stage-1 token. The parts go BLOCK at a time through the stage-1 rules'
        whole-token table and the piece cache ``cache`` (NULL for a piece that is cached
        whole), as the pieces of :meth:`encode_into` do.
        Subtle: the cache also holds whole pieces, whose IDs are the model's own; a part's
        cache hash has bit STAGE_ONE_KEY flipped, so its slot can never be taken for the
        same bytes as a piece (their hashes differ) nor for other bytes (the keys differ).
        The stage-2 rules then merge the tokens across the cuts as the whole piece would
        (:meth:`merge_seams`).
        """
        cdef vector[uint32_t] first
        cdef Piece block[BLOCK]
        cdef Py_ssize_t i, k = 0, cut = 0
        first.reserve(n // 3 + 16)
        for i in range(1, n + 1):
            if i < n and self.stage_joins[(<uint32_t>s[i - 1] << 8) | s[i]]:
                continue
            self.stage_one.begin_piece(&block[k], s, cut, i, n)
            k += 1
            cut = i
            if k == BLOCK or i == n:
                self.stage_one.find_block(s, block, k, cache)
                self.stage_one.put_block(s, block, k, cache, STAGE_ONE_KEY, &first)
                k = 0
        return self.merge_seams(first.data(), <Py_ssize_t>first.size(), out)

    cdef int merge_seams(self, const uint32_t* ids, Py_ssize_t k,
                         vector[uint32_t]* out) except -1 nogil:
        """Merge the stage-1 tokens ``ids[:k]`` by the later rules into ``out``.

        They are cut between two tokens that are no seam (:meth:`fill_seams`): no later
        rule can join across such a cut, so each run merges on its own as inside the
        whole sequence. Most runs are one token (nothing to do) or a few, scanned like a
        short piece from the ranks the seam table holds; a run of more than SMALL_PIECE
        tokens takes the heap. The seam table is read SEAMS_AHEAD pairs ahead.
        """
        cdef uint32_t small[SMALL_PIECE]
        cdef uint32_t ranks[SMALL_PIECE]
        cdef Py_ssize_t i, m, start = 0
        cdef uint32_t r
        for i in range(1, k + 1):
            if i + SEAMS_AHEAD < k:
                self.seam_rank(ids[i + SEAMS_AHEAD - 1], ids[i + SEAMS_AHEAD], True)
            if i < k:
                r = self.seam_rank(ids[i - 1], ids[i], False)
                if r != NOT_SEAM:
                    if i - start < SMALL_PIECE:
                        ranks[i - start - 1] = r
                    continue
            m = i - start
            if m == 1:
                out.push_back(ids[start])
            elif m <= SMALL_PIECE:
                memcpy(small, ids + start, m * sizeof(uint32_t))
                m = self.merge_tokens(small, m, ranks)
                out.insert(out.end(), small, small + m)
            else:
                self.merge_large(NULL, ids + start, m, out)
            start = i
        return 0

    cdef int encode_into(self, const unsigned char* s, Py_ssize_t n, int pattern,
                         CacheState* cache, vector[uint32_t]* out) except -1 nogil:
        """Split, look up and merge every piece of ``s``, BLOCK pieces at a time.

        Most pieces are whole tokens: one lookup in the shared, read-only
        whole-token table; the others go through the piece cache. The table
        is larger than the core's own cache, so each block is read in passes
        (:meth:`split_block`, :meth:`find_block`, then :meth:`put_block`), each
        prefetching what the next reads: a block's lookups wait on memory
        together instead of one after the other.
        """
        cdef Piece block[BLOCK]
        cdef Py_ssize_t p = 0, k
        if pattern == PAT_NONE:
            if n:
                self.merge_piece(s, n, cache, out)
            return 0
        while p < n:
            k = self.split_block(s, n, pattern, p, block)
            p = block[k - 1].start + block[k - 1].n
            self.find_block(s, block, k, cache)
            self.put_block(s, block, k, cache, 0, out)
        return 0

    cdef int put_block(self, const unsigned char* s, Piece* block, Py_ssize_t k,
                       CacheState* cache, uint64_t key, vector[uint32_t]* out) except -1 nogil:
        """Append the IDs of the ``k`` pieces of a block that :meth:`find_block` read: the
        whole tokens, the others merged through the cache, their hashes xor ``key``."""
        cdef Py_ssize_t i
        cdef Piece* piece
        cdef uint64_t h
        for i in range(k):
            piece = &block[i]
            if piece.token != NONE:
                out.push_back(piece.token)
                continue
            h = piece.cached if piece.cached else cache_hash(cache, s + piece.start, piece.n,
                                                             piece.h)
            self.merge_hashed(s + piece.start, piece.n, h ^ key if h else 0, cache, out)
        return 0

    cdef Py_ssize_t split_block(self, const unsigned char* s, Py_ssize_t n, int pattern,
                                Py_ssize_t p, Piece* block) except -1 nogil:
        """Up to BLOCK pieces from byte ``p`` < ``n``, with their hashes; their table slots
        prefetched. Returns how many."""
        cdef Py_ssize_t ends[BLOCK]
        cdef Py_ssize_t k, count = piece_ends(pattern, s, n, p, ends, BLOCK), end
        for k in range(count):
            end = ends[k]
            if end <= p:
                with gil:
                    raise RuntimeError(f"empty piece at byte {p}")  # a scanner bug; never loop
            self.begin_piece(&block[k], s, p, end, n)
            p = end
        return count

    cdef inline void begin_piece(self, Piece* piece, const unsigned char* s, Py_ssize_t p,
                                 Py_ssize_t end, Py_ssize_t n) noexcept nogil:
        """Set ``piece`` to bytes ``p:end`` of ``s[:n]``: up to WHOLE_MAX bytes, its hash,
        its whole-token slot prefetched (single bytes are whole tokens too)."""
        piece.start = p
        piece.n = end - p
        piece.token = NONE
        piece.h = 0
        piece.cached = 0
        if piece.n <= WHOLE_MAX:
            piece.head = head_of(s + p, piece.n, n - p)
            piece.h = whole_hash(piece.head, s + p, piece.n)
            __builtin_prefetch(&self.whole[<Py_ssize_t>(piece.h >> self.whole_shift)])

    cdef void find_block(self, const unsigned char* s, Piece* block, Py_ssize_t k,
                         CacheState* cache) noexcept nogil:
        """The tokens of the block's whole pieces; the cache slots of the others prefetched.

        Two passes: the first reads the slot (prefetched by :meth:`split_block`)
        of each piece longer than 8 bytes and prefetches the rest of the token's
        bytes there, the second compares.
        """
        cdef Py_ssize_t i
        cdef Piece* piece
        cdef uint64_t meta
        cdef CacheState* looked
        for i in range(k):
            piece = &block[i]
            if piece.n <= 8 or piece.n > WHOLE_MAX:
                continue
            meta = self.whole[<Py_ssize_t>(piece.h >> self.whole_shift)].meta
            if meta:
                __builtin_prefetch(self.flat + (meta >> 32) + 8)
        for i in range(k):
            piece = &block[i]
            if piece.n > WHOLE_MAX:
                continue
            piece.token = self.whole_find(s + piece.start, piece.n, piece.head, piece.h)
            if piece.token == NONE and cache != NULL and cache.slots != NULL:
                piece.cached = cache_hash(cache, s + piece.start, piece.n, piece.h)
                looked = cache.shared  # read first, when it holds pieces
                if looked != NULL and looked.slots != NULL and looked.count:
                    __builtin_prefetch(&looked.slots[<Py_ssize_t>(piece.cached >> 7) & (looked.capacity - 1)])
                __builtin_prefetch(&cache.slots[<Py_ssize_t>(piece.cached >> 7) & (cache.capacity - 1)])

    cdef object to_list(self, vector[uint32_t]* ids):
        return self.to_list_range(ids, 0, ids.size())

    cdef object to_list_range(self, vector[uint32_t]* ids, Py_ssize_t start, Py_ssize_t end):
        """IDs ``start:end`` as a list of the shared int objects."""
        cdef Py_ssize_t i
        cdef PyObject* item
        cdef uint32_t* data = ids.data()
        out = PyList_New(end - start)
        for i in range(start, end):
            item = self.int_items[data[i]]
            Py_INCREF(item)
            PyList_SET_ITEM(out, i - start, item)
        return out

    # -- Python entry points --

    def encode(self, data, int pattern=-1, PieceCache cache=None):
        """Token IDs of ``data`` (str: its UTF-8; bytes: as they are, valid UTF-8 when split).

        ``pattern`` is a code of ``PATTERN_CODES`` (or PATTERN_NONE: one
        piece). O(n log n) worst case for n bytes; the GIL is released while
        splitting and merging.
        """
        cdef const unsigned char* s
        cdef Py_ssize_t n, bad = -1
        cdef vector[uint32_t] ids
        cdef CacheState* state = &cache.state if cache is not None else NULL
        owner = utf8_of(data, &s, &n, "data")
        if pattern != PAT_NONE and not isinstance(data, str):
            with nogil:
                bad = utf8_error(s, n)
            if bad >= 0:
                raise ValueError(f"data: invalid UTF-8 at byte offset {bad}")
        with nogil:
            # Room for a token per three bytes (real text has about four a token): the
            # IDs are then seldom copied to a larger buffer as they grow.
            ids.reserve(n // 3 + 16)
            self.encode_into(s, n, pattern, state, &ids)
        return self.to_list(&ids)

    cdef int encode_texts(self, vector[Text]* texts, int pattern, CacheState* cache,
                          const vector[string]* specials, long long append,
                          vector[uint32_t]* ids, vector[Py_ssize_t]* ends,
                          vector[char]* skipped, BatchError* error,
                          bint stop_at_skip=False) except -1 nogil:
        """The batch's second pass, without the GIL: each text's IDs appended to ``ids``.
        Returns how many texts it skipped (below).

        ``ends[i]`` is where text i's IDs (and ``append``, when >= 0) end. A
        text is not encoded when it holds one of ``specials`` (``skipped[i]``
        is 1) or when it is a ``str`` with a lone surrogate, which UTF-8 cannot
        hold (``skipped[i]`` is 2, and ``error`` names the first such text): the
        caller encodes those one by one, so that a special token in them is
        refused before their UTF-8 is, as :meth:`Tokenizer.encode` does. Stops
        at ``bytes`` that are not UTF-8, at a text of 4 GiB or more, and with
        ``stop_at_skip`` at the first skipped text (a caller that then encodes
        every text on its own has no use for the rest).
        """
        cdef Scratch scratch
        cdef unsigned char* room
        cdef const unsigned char* s
        cdef Py_ssize_t i, j, n, bad, k = texts.size()
        cdef Text* t
        cdef Py_ssize_t size = 0, not_encoded = 0
        ends.resize(k)
        skipped.assign(k, 0)
        # Room for a token per four units of input (real text has about four bytes
        # a token): the IDs are then seldom copied to a larger buffer as they grow.
        for i in range(k):
            size += deref(texts)[i].n
        ids.reserve(ids.size() + size // 4 + (k if append >= 0 else 0))
        for i in range(k):
            t = &deref(texts)[i]
            if t.kind == KIND_UTF8 or t.kind == KIND_BYTES:
                s = <const unsigned char*>t.data
                n = t.n
                if t.kind == KIND_BYTES and pattern != PAT_NONE:
                    bad = utf8_error(s, n)
                    if bad >= 0:
                        error.text = i
                        error.at = bad
                        error.what = BAD_UTF8
                        return 0
            else:
                # A str of kind 1, 2 or 4: its UTF-8, as str.encode gives it (which
                # refuses lone surrogates: n is then -1 - the index of the first).
                room = scratch.room(t.n * (2 if t.kind == 1 else 3 if t.kind == 2 else 4))
                if room == NULL:
                    with gil:
                        raise MemoryError()
                n = units_to_utf8(t.data, t.n, t.kind, room)
                if n < 0:
                    if error.what == 0:
                        error.text = i
                        error.at = -1 - n
                        error.what = BAD_SURROGATE
                    skipped[0][i] = 2
                    ends[0][i] = ids.size()
                    not_encoded += 1
                    if stop_at_skip:
                        return not_encoded
                    continue
                s = room
            if n >= <Py_ssize_t>0xFFFFFFFFu:
                error.text = i
                error.at = n
                error.what = BAD_SIZE
                return 0
            for j in range(<Py_ssize_t>specials.size()):
                if contains(s, n, &deref(specials)[j]):
                    skipped[0][i] = 1
                    break
            if skipped[0][i]:
                not_encoded += 1
                if stop_at_skip:
                    return not_encoded
            else:
                self.encode_into(s, n, pattern, cache, ids)
                if append >= 0:
                    ids.push_back(<uint32_t>append)
            ends[0][i] = ids.size()
        return not_encoded

    def encode_batch(self, list texts, int pattern=-1, PieceCache cache=None,
                     tuple skip=(), Py_ssize_t start=0, stop=None):
        """:meth:`encode` of each str of ``texts[start:stop]``: one list of IDs per text.

        A text that contains one of ``skip`` (str or bytes) is not encoded:
        its entry is None. A str that UTF-8 cannot hold raises ValueError.
        """
        batch = self.encode_batch_ids(texts, pattern, cache, skip, start, stop)
        batch.check()
        return batch.lists()

    def encode_batch_ids(self, list texts, int pattern=-1, PieceCache cache=None,
                         tuple skip=(), Py_ssize_t start=0, stop=None):
        """The IDs of :meth:`encode_batch`, as a :class:`BatchIDs` (its lists not built yet).

        The GIL is held only to take each text's buffer: UTF-8, the ``skip``
        search, splitting and merging run without it. Building the lists
        needs the GIL again; a thread pool does better to leave that to one
        thread while its workers encode the next batches. A str that UTF-8
        cannot hold is not encoded either (``skipped()``); ``check()`` raises
        for the first one.
        """
        cdef BatchIDs batch = BatchIDs.__new__(BatchIDs)
        cdef vector[Text] items
        cdef vector[string] specials = needles(skip)
        cdef BatchError error
        cdef CacheState* state = &cache.state if cache is not None else NULL
        error.text = -1
        error.what = 0
        batch.encoder = self
        kept = gather(texts, start, len(texts) if stop is None else stop, &items, False)
        with nogil:
            self.encode_texts(&items, pattern, state, &specials, -1, &batch.ids, &batch.ends,
                              &batch.not_encoded, &error)
        if error.what == BAD_SURROGATE:
            batch.error = error
            batch.start = start
        else:
            raise_batch_error(&error, start)
        return batch

    def encode_batch_array(self, list texts, int pattern=-1, PieceCache cache=None,
                           long long append=-1, int itemsize=4, tuple skip=(),
                           Py_ssize_t start=0, stop=None, bint accept_bytes=True):
        """The IDs of all ``texts[start:stop]`` one after the other as raw unsigned integers.

        ``append`` (when >= 0) follows each text; ``itemsize`` is 2 or 4 bytes,
        native byte order. Returns ``bytes``, or None when a text contains one
        of ``skip`` or is a str that UTF-8 cannot hold (the caller then encodes
        the texts one by one). No Python int is made for any
        ID, and the GIL is held only to take each text's buffer. ``bytes``
        texts are allowed with ``accept_bytes`` (checked as UTF-8 when
        ``pattern`` splits).
        """
        cdef vector[Text] items
        cdef vector[string] specials = needles(skip)
        cdef vector[uint32_t] ids
        cdef vector[Py_ssize_t] ends
        cdef vector[char] skipped
        cdef BatchError error
        cdef Py_ssize_t i, total, not_encoded
        cdef uint32_t most = 0
        cdef CacheState* state = &cache.state if cache is not None else NULL
        check_output(itemsize, append)
        error.text = -1
        error.what = 0
        kept = gather(texts, start, len(texts) if stop is None else stop, &items, accept_bytes)
        with nogil:
            # A skip string, or a str that is not UTF-8: the caller encodes every
            # text on its own, so nothing after the first such text is encoded here.
            not_encoded = self.encode_texts(&items, pattern, state, &specials, append, &ids,
                                            &ends, &skipped, &error, True)
            total = ids.size()
            if itemsize == 2 and not not_encoded:
                for i in range(total):
                    if ids[i] > most:
                        most = ids[i]
        if error.what != BAD_SURROGATE:
            raise_batch_error(&error, start)
        if not_encoded:
            return None
        if itemsize == 2 and most > 0xFFFF:
            raise ValueError(f"ID {most} does not fit in 16 bits")
        return id_bytes(&ids, itemsize)

    def encode_parts(self, list texts, starts, int pattern=-1, tuple skip=(),
                     long long append=-1, int itemsize=4, bint lists=True, Py_ssize_t slots=1):
        """A :class:`Parts` of ``texts`` cut at ``starts`` (the first index of each part, then
        the end), for threads to encode together: each part as :meth:`encode_batch_ids`
        (``lists``) or :meth:`encode_batch_array` (``append``, ``itemsize``) would. Nothing
        is read here: :meth:`Parts.gather` takes the buffers, :meth:`Parts.run` encodes on
        ``slots`` threads, each starting on its own contiguous range of parts (what it learns
        comes from one region of the batch) and then helping with the others'."""
        cdef Parts job = Parts.__new__(Parts)
        cdef Py_ssize_t k = len(starts) - 1, i
        if k < 0:
            raise ValueError("starts must hold at least the end")
        if not lists:
            check_output(itemsize, append)
        job.encoder = self
        job.pattern = pattern
        job.append = append if not lists else -1
        job.make_lists = lists
        job.specials = needles(skip)
        job.kept, job.failed, job.done_lists = [None] * k, [None] * k, [None] * k
        job.texts = texts
        job.starts.resize(k + 1)
        for i in range(k + 1):
            job.starts[i] = starts[i]
            if not (0 if i == 0 else job.starts[i - 1]) <= job.starts[i] <= len(texts):
                raise ValueError(f"starts must be rising indices of the {len(texts)} texts, "
                                 f"got {list(starts)}")
        job.items.resize(k)
        job.ids.resize(k)
        job.ends.resize(k)
        job.skipped.resize(k)
        job.errors.resize(k)
        for i in range(k):
            job.errors[i].text = -1
            job.errors[i].what = 0
        job.not_encoded.assign(k, 0)
        job.done.assign(k, 0)
        job.ready.assign(k, 0)
        slots = max(1, min(slots, k))
        job.ranges.resize(slots + 1)
        job.next_in.assign(8 * slots, 0)
        for i in range(slots + 1):
            job.ranges[i] = k * i // slots
        for i in range(slots):
            job.next_in[8 * i] = job.ranges[i]
        return job

    def encode_lines_array(self, data, int pattern=-1, PieceCache cache=None,
                           long long append=-1, int itemsize=4, tuple skip=(),
                           bint keep_ends=True):
        """The IDs of every line of ``data`` (UTF-8 bytes), line after line, ``append`` after each.

        A line ends after each ``\\n``; the last one may have none. Without
        ``keep_ends`` a line's ``\\n`` or ``\\r\\n`` is left out (a lone ``\\r`` is
        text). Returns ``(raw IDs, lines, characters)``, the IDs as in
        :meth:`encode_batch_array`, or None when a line holds one of ``skip``
        or is not UTF-8 (the caller then reads the lines one by one, for their
        errors and special tokens). The GIL is held only to take ``data``'s
        buffer: cutting the lines runs without it too, so threads given
        blocks of lines run in parallel and no Python object is made per
        line. O(len(data)) beside the merges.
        """
        cdef const unsigned char[::1] view = data
        cdef Py_ssize_t n = view.shape[0], p = 0, end, size, total, i, not_encoded = 0
        cdef Py_ssize_t characters = 0
        cdef const unsigned char* s = &view[0] if n else <const unsigned char*>b""
        cdef const unsigned char* found
        cdef vector[Text] items
        cdef Text line
        cdef vector[string] specials = needles(skip)
        cdef vector[uint32_t] ids
        cdef vector[Py_ssize_t] ends
        cdef vector[char] skipped
        cdef BatchError error
        cdef uint32_t most = 0
        cdef CacheState* state = &cache.state if cache is not None else NULL
        check_output(itemsize, append)
        error.text = -1
        error.what = 0
        line.kind = KIND_BYTES
        with nogil:
            while p < n:
                found = <const unsigned char*>memchr(s + p, 10, n - p)
                end = n if found == NULL else found - s + 1
                size = end - p
                if not keep_ends and found != NULL:
                    size -= 2 if size >= 2 and s[end - 2] == 13 else 1
                line.data = s + p
                line.n = size
                items.push_back(line)
                for i in range(p, p + size):
                    characters += (s[i] & 0xC0) != 0x80  # not a continuation byte
                p = end
            not_encoded = self.encode_texts(&items, pattern, state, &specials, append, &ids,
                                            &ends, &skipped, &error, True)
            total = ids.size()
            if itemsize == 2 and not not_encoded and error.what == 0:
                for i in range(total):
                    if ids[i] > most:
                        most = ids[i]
        if not_encoded or error.what != 0:
            return None
        if itemsize == 2 and most > 0xFFFF:
            raise ValueError(f"ID {most} does not fit in 16 bits")
        return id_bytes(&ids, itemsize), <Py_ssize_t>items.size(), characters

    cdef void byte_joins(self, unsigned char* joins) noexcept nogil:
        """Mark ``joins[a << 8 | b]`` for each byte pair ``a b`` that lies inside some token.

        Every bigram inside a token lies where some rule joined its left
        token's last byte to its right token's first byte, so one pass over
        the rules in rank order finds them all. O(rules) time and memory.
        """
        cdef Py_ssize_t r, total = self.n_rules + 256
        cdef unsigned char* first = <unsigned char*>malloc(2 * total)
        cdef unsigned char* last
        cdef uint32_t a, b
        memset(joins, 0, 65536)
        if first == NULL:  # no table: claim every join (no cut, still exact)
            memset(joins, 1, 65536)
            return
        last = first + total
        for r in range(256):
            first[r] = <unsigned char>r
            last[r] = <unsigned char>r
        for r in range(self.n_rules):
            a = <uint32_t>(self.rule_key[r] >> 32)
            b = <uint32_t>self.rule_key[r]
            first[256 + r] = first[a]
            last[256 + r] = last[b]
            joins[(<uint32_t>last[a] << 8) | first[b]] = 1
        free(first)

    def encode_spans(self, data, starts):
        """Each piece ``data[starts[k]:starts[k + 1]]`` encoded whole, laid end to end.

        Returns ``(ids, offsets)``: ``array("I")`` of the IDs and ``array("q")``
        of where each piece's IDs begin, then their total. No Python object per
        piece. Runs without the GIL.

        Subtle: a piece is cut between two bytes that no token holds side by
        side (:meth:`byte_joins`). No rule can ever join across such a cut, so
        each part merges on its own exactly as it would inside the whole piece
        (the rank-order passes of the parts interleave but never meet). The
        parts repeat much more than the pieces (they are mostly words), so
        they go through a cache of this call's own.
        """
        cdef const unsigned char[::1] view = data
        cdef const int64_t[::1] at = starts
        cdef Py_ssize_t k, i, cut, pieces = at.shape[0] - 1, n = view.shape[0]
        if pieces < 0:
            raise ValueError("starts must hold one offset per piece plus the total")
        for k in range(pieces):
            if not 0 <= at[k] <= at[k + 1] <= n:
                raise ValueError(f"starts: piece {k} ({at[k]}, {at[k + 1]}) is outside 0..{n}")
        cdef const unsigned char* s = &view[0] if n else <const unsigned char*>b""
        # Every entry is written below: no need to zero them first.
        offsets = carray.clone(array("q"), pieces + 1, False)
        cdef int64_t[::1] out_at = offsets
        cdef vector[uint32_t] ids
        cdef vector[uint8_t] joins
        cdef PieceCache cache = PieceCache(SPAN_CACHE_BYTES)
        joins.resize(65536)
        with nogil:
            # Room for one ID per two bytes up front (tokens of a trained
            # vocabulary average more; when they do not, the vector grows once).
            # Only the pages written are backed by memory (a large block is
            # mapped lazily) and a block this large goes back to the system
            # when freed. Grown from small on a thread, the vector's old blocks
            # stayed in that thread's malloc arena, whose top malloc_trim does
            # not give back.
            if pieces:
                ids.reserve((at[pieces] - at[0]) // 2 + 1)
            self.byte_joins(joins.data())
            for k in range(pieces):
                out_at[k] = <int64_t>ids.size()
                cut = at[k]
                for i in range(at[k] + 1, at[k + 1]):
                    if not joins[(<uint32_t>s[i - 1] << 8) | s[i]]:
                        self.merge_piece(s + cut, i - cut, &cache.state, &ids)
                        cut = i
                if at[k + 1] > cut:
                    self.merge_piece(s + cut, at[k + 1] - cut, &cache.state, &ids)
            out_at[pieces] = <int64_t>ids.size()
        out = carray.clone(array("I"), ids.size(), False)
        if ids.size():
            memcpy((<carray.array>out).data.as_voidptr, ids.data(), 4 * ids.size())
        return out, offsets

    def encode_pieces(self, pieces, PieceCache cache=None):
        """The IDs of each piece (str or bytes) in turn, as one list."""
        cdef const unsigned char* s
        cdef Py_ssize_t n
        cdef vector[uint32_t] ids
        cdef CacheState* state = &cache.state if cache is not None else NULL
        for piece in pieces:
            owner = utf8_of(piece, &s, &n, "data")
            if n:
                if n > SMALL_PIECE:
                    with nogil:
                        self.merge_piece(s, n, state, &ids)
                else:
                    self.merge_piece(s, n, state, &ids)
        return self.to_list(&ids)

    # -- token bytes and decoding --

    cdef void write_token(self, uint32_t token, unsigned char* out, vector[uint32_t]* stack) noexcept nogil:
        """Write a token's bytes: one copy when it is flat, else its halves in order."""
        cdef uint32_t t
        if self.flat_at[token] != NOT_FLAT:
            memcpy(out, self.flat + self.flat_at[token], self.length[token])
            return
        stack.clear()
        stack.push_back(token)
        while stack.size():
            t = stack.back()
            stack.pop_back()
            if self.flat_at[t] != NOT_FLAT:
                memcpy(out, self.flat + self.flat_at[t], self.length[t])
                out += self.length[t]
            else:
                stack.push_back(<uint32_t>self.rule_key[t - 256])  # right, then left
                stack.push_back(<uint32_t>(self.rule_key[t - 256] >> 32))

    def token_length(self, Py_ssize_t token) -> int:
        """Bytes of one token, O(1) (saturates at 2**62 for absurd models)."""
        if token < 0 or token >= self.n_rules + 256:
            raise ValueError(f"token {token} is outside the vocabulary")
        return self.length[token]

    cdef object join(self, vector[uint32_t]* tokens, tuple specials):
        """The bytes of checked IDs: O(total bytes); one copy per flat token."""
        cdef Py_ssize_t i, k = tokens.size(), base = self.n_rules + 256
        cdef uint64_t total = 0
        cdef uint32_t t
        cdef vector[uint32_t] stack
        cdef unsigned char* out
        for i in range(k):
            t = deref(tokens)[i]
            total += self.length[t] if t < base else len(<bytes>specials[t - base])
            if total > LENGTH_CAP:
                raise ValueError("ids: the decoded bytes would not fit in memory")
        result = PyBytes_FromStringAndSize(NULL, <Py_ssize_t>total)
        out = <unsigned char*>PyBytes_AS_STRING(result)
        for i in range(k):
            t = deref(tokens)[i]
            if t < base:
                self.write_token(t, out, &stack)
                out += self.length[t]
            else:
                special = <bytes>specials[t - base]
                memcpy(out, PyBytes_AS_STRING(special), len(special))
                out += len(special)
        return result

    def decode(self, ids, tuple specials=()):
        """The bytes of a sequence of IDs; ID ``vocab_size + k`` stands for ``specials[k]``.

        O(number of IDs + total bytes); long tokens are expanded from their halves.
        """
        cdef Py_ssize_t k, i, limit = self.n_rules + 256 + len(specials)
        cdef long long token
        cdef int overflow = 0
        cdef PyObject* item
        cdef vector[uint32_t] tokens
        if not isinstance(ids, list):
            ids = list(ids)
        k = len(ids)
        tokens.resize(k)
        for i in range(k):
            item = PyList_GET_ITEM(ids, i)
            if PyLong_CheckExact(item):
                token = PyLong_AsLongLongAndOverflow(item, &overflow)
                if overflow:
                    raise ValueError(f"ids[{i}] = {<object>item} is outside the vocabulary (0..{limit - 1})")
            else:
                token = as_id(<object>item, i, limit)
            if token < 0 or token >= limit:
                raise ValueError(f"ids[{i}] = {token} is outside the vocabulary (0..{limit - 1})")
            tokens[i] = <uint32_t>token
        return self.join(&tokens, specials)

    def decode_array(self, ids, tuple specials=()):
        """:meth:`decode` of a buffer of unsigned 16- or 32-bit IDs (array, numpy, memoryview)."""
        cdef const uint16_t[:] narrow
        cdef const uint32_t[:] wide
        cdef Py_ssize_t k, i, limit = self.n_rules + 256 + len(specials)
        cdef vector[uint32_t] tokens
        view = memoryview(ids)
        if view.itemsize == 2 and view.format in ("H", "<H", "=H"):
            narrow = view
            k = narrow.shape[0]
            tokens.resize(k)
            for i in range(k):
                tokens[i] = narrow[i]
        elif view.itemsize == 4 and view.format in ("I", "<I", "=I", "L", "<L", "=L"):
            wide = view
            k = wide.shape[0]
            tokens.resize(k)
            for i in range(k):
                tokens[i] = wide[i]
        else:
            raise TypeError(f"ids: need unsigned 16- or 32-bit integers, got format {view.format!r}")
        for i in range(k):
            if tokens[i] >= limit:
                raise ValueError(f"ids[{i}] = {tokens[i]} is outside the vocabulary (0..{limit - 1})")
        return self.join(&tokens, specials)

    def token_bytes(self, Py_ssize_t token) -> bytes:
        """The bytes of one token, O(its length)."""
        return self.decode([token])


cdef class BatchIDs:
    """The IDs of a batch of texts as :meth:`Encoder.encode_batch_ids` leaves them."""

    cdef Encoder encoder
    cdef vector[uint32_t] ids
    cdef vector[Py_ssize_t] ends
    cdef vector[char] not_encoded   # 1: holds a skip string; 2: a str UTF-8 cannot hold
    cdef BatchError error           # the first text of kind 2, if any
    cdef Py_ssize_t start           # the batch's first index in the caller's list

    def __len__(self):
        return self.ends.size()

    def skipped(self):
        """The positions in the batch of the texts that were not encoded: those that hold
        a ``skip`` string, and str that UTF-8 cannot hold."""
        return [i for i in range(<Py_ssize_t>self.not_encoded.size()) if self.not_encoded[i]]

    def check(self):
        """Raise ValueError for the first text that UTF-8 cannot hold, if there is one."""
        if self.error.what:
            raise_batch_error(&self.error, self.start)

    def lists(self, bint track=True):
        """One list of IDs per text (None for a skipped text), O(IDs); needs the GIL.

        Many new lists would set off the cyclic garbage collector again and
        again, and each would be traversed by every later collection (a third
        of the time on short texts). A list of ints is in no reference cycle,
        so the lists are not tracked (as CPython does for tuples of atoms):
        only a cycle a caller builds through them later would go uncollected.
        The list that holds them joins the collector once it is full, or not
        at all with ``track=False`` (a part for :func:`join_lists`): a
        collection that the new lists set off would otherwise read every list
        made so far through it.
        """
        return id_lists(self.encoder, &self.ids, &self.ends, &self.not_encoded, track)


cdef object id_lists(Encoder encoder, vector[uint32_t]* ids, vector[Py_ssize_t]* ends,
                     vector[char]* not_encoded, bint track):
    """:meth:`BatchIDs.lists` of IDs, their text ends and the texts not encoded."""
    cdef Py_ssize_t k = ends.size(), i, start = 0
    out = PyList_New(k)
    PyObject_GC_UnTrack(<PyObject*>out)
    for i in range(k):
        if deref(not_encoded)[i]:
            item = None
        else:
            item = encoder.to_list_range(ids, start, deref(ends)[i])
            PyObject_GC_UnTrack(<PyObject*>item)
        Py_INCREF(<PyObject*>item)
        PyList_SET_ITEM(out, i, <PyObject*>item)
        start = deref(ends)[i]
    if track:
        PyObject_GC_Track(<PyObject*>out)
    return out


cdef class Parts:
    """A batch cut in parts that threads encode together (:meth:`Encoder.encode_parts`).

    Each thread calls :meth:`run` once: without the GIL it takes the next part
    of its own contiguous range (an atomic counter per range), encodes it and
    goes on, then helps with what is left of the other ranges, never taking the
    GIL again: the reader builds a part's lists (``lists``) when it reads it, so
    the shared int objects' reference counts stay with one thread. One
    release of the GIL per thread and call, where a pool task per part took
    and dropped it several times a part: a thread that held it when the OS
    let another program run stalled the other threads meanwhile. Meanwhile
    the calling thread takes the texts' buffers (:meth:`gather`, with the
    GIL; a thread waits for a part's buffers) and then reads the parts in
    order as they are done (:meth:`lists`, :meth:`array_bytes`), each raising
    its own errors, so errors come in the order of the texts.
    """

    cdef Encoder encoder
    cdef list texts
    cdef int pattern
    cdef long long append
    cdef bint make_lists
    cdef vector[string] specials
    cdef list kept                  # each part's texts (alive while their buffers are read)
    cdef list failed                # each part's exception from taking its buffers, or None
    cdef list done_lists            # each part's lists (make_lists)
    cdef vector[Py_ssize_t] starts  # each part's first index in the caller's list, then the end
    cdef vector[vector[Text]] items
    cdef vector[vector[uint32_t]] ids
    cdef vector[vector[Py_ssize_t]] ends
    cdef vector[vector[char]] skipped
    cdef vector[BatchError] errors
    cdef vector[Py_ssize_t] not_encoded
    cdef vector[Py_ssize_t] done    # 1 once a part is encoded (atomic)
    cdef vector[Py_ssize_t] ready   # 1 once a part's buffers are taken (atomic)
    cdef vector[Py_ssize_t] ranges  # thread slot r's parts: ranges[r] to ranges[r + 1]
    cdef vector[Py_ssize_t] next_in # the next part no thread took of range r: next_in[8 * r]
                                    # (atomic; 64 bytes apart, so threads share no cache line)
    cdef Py_ssize_t stopped         # a thread stopped on an error: nobody waits (atomic)
    cdef bytepair_signal* signal    # notified when any of the last four change

    def __cinit__(self):
        self.signal = new bytepair_signal()

    def __dealloc__(self):
        del self.signal

    def __len__(self):
        return self.items.size()

    def gather(self):
        """Take each part's buffers, in order, with the GIL; threads may run meanwhile.
        A part whose texts are not all str keeps the TypeError for when it is read."""
        cdef Py_ssize_t i, step, r, slots = self.ranges.size() - 1
        try:
            for step in range(<Py_ssize_t>self.items.size()):
                for r in range(slots):  # the first parts of every thread's range first
                    i = self.ranges[r] + step
                    if i >= self.ranges[r + 1]:
                        continue
                    try:
                        self.kept[i] = gather(self.texts, self.starts[i], self.starts[i + 1],
                                              &self.items[i], False)
                    except TypeError as exc:
                        self.failed[i] = exc
                        self.items[i].clear()
                    bytepair_set(self.signal, &self.ready[i], 1)
        except BaseException:
            bytepair_set(self.signal, &self.stopped, 1)  # no thread waits for buffers that never come
            raise

    def run(self, PieceCache cache=None, Py_ssize_t slot=0):
        """Encode parts that no thread took yet until none is left; call it once on each
        thread, each with its own cache and ``slot`` (0 to the slots the job was made for):
        the parts of the slot's own range first, in order, then what is left of the others."""
        cdef CacheState* state = &cache.state if cache is not None else NULL
        if not 0 <= slot < <Py_ssize_t>self.ranges.size() - 1:
            raise ValueError(f"slot must be in 0..{self.ranges.size() - 2}, got {slot}")
        try:
            with nogil:
                self.work(state, slot)
        except BaseException:
            bytepair_set(self.signal, &self.stopped, 1)  # the reader stops waiting, and raises it
            raise

    cdef int work(self, CacheState* state, Py_ssize_t slot) except -1 nogil:
        cdef Py_ssize_t i, tried, r, slots = self.ranges.size() - 1
        for tried in range(slots):
            r = (slot + tried) % slots
            while not bytepair_load(&self.stopped):
                i = bytepair_take_next(&self.next_in[8 * r])
                if i >= self.ranges[r + 1]:
                    break
                bytepair_wait(self.signal, &self.ready[i], 0, &self.stopped)
                if not bytepair_load(&self.ready[i]):
                    return 0  # stopped
                self.encode_part(i, state)
        return 0

    cdef int encode_part(self, Py_ssize_t i, CacheState* state) except -1 nogil:
        """Encode part ``i`` (its buffers taken) and mark it done."""
        # Arrays stop at a text that is not encoded: the caller then encodes the part
        # text by text. Lists leave such a text out and go on.
        self.not_encoded[i] = self.encoder.encode_texts(
            &self.items[i], self.pattern, state, &self.specials, self.append, &self.ids[i],
            &self.ends[i], &self.skipped[i], &self.errors[i], not self.make_lists)
        bytepair_set(self.signal, &self.done[i], 1)
        return 0

    def stop(self):
        """No thread takes another part (the reader gave up: an error in an earlier part)."""
        bytepair_set(self.signal, &self.stopped, 1)

    def wait(self, Py_ssize_t part):
        """Wait until part ``part`` is encoded (True), or a thread stopped on an error (False)."""
        if not 0 <= part < <Py_ssize_t>self.items.size():
            raise IndexError(f"part {part} of {self.items.size()}")
        with nogil:
            bytepair_wait(self.signal, &self.done[part], 0, &self.stopped)
        return bytepair_load(&self.done[part]) != 0

    cdef int check(self, Py_ssize_t part) except -1:
        if not bytepair_load(&self.done[part]):
            raise RuntimeError(f"part {part} is not encoded yet")
        if self.failed[part] is not None:
            raise self.failed[part]
        if self.errors[part].what != BAD_SURROGATE:
            raise_batch_error(&self.errors[part], self.starts[part])
        return 0

    def lists(self, Py_ssize_t part):
        """Part ``part``'s lists (``make_lists``) and the positions in it of the texts not
        encoded, as :meth:`BatchIDs.lists` (``track=False``) and :meth:`BatchIDs.skipped`;
        raises that part's error. Once :meth:`wait` returned True for it."""
        self.check(part)
        cdef vector[char]* skipped = &self.skipped[part]
        if self.done_lists[part] is None:
            self.done_lists[part] = id_lists(self.encoder, &self.ids[part], &self.ends[part],
                                             skipped, False)
            vector[uint32_t]().swap(self.ids[part])
        return self.done_lists[part], [i for i in range(<Py_ssize_t>skipped.size()) if deref(skipped)[i]]

    def array_bytes(self, Py_ssize_t part, int itemsize):
        """Part ``part``'s IDs as :meth:`Encoder.encode_batch_array` gives them: bytes, or None
        when a text in it is not encoded; raises that part's error. Once :meth:`wait`
        returned True for it."""
        cdef uint32_t most = 0
        cdef Py_ssize_t i
        cdef vector[uint32_t]* ids = &self.ids[part]
        self.check(part)
        if self.not_encoded[part]:
            return None
        if itemsize == 2:
            with nogil:
                for i in range(<Py_ssize_t>ids.size()):
                    if deref(ids)[i] > most:
                        most = deref(ids)[i]
            if most > 0xFFFF:
                raise ValueError(f"ID {most} does not fit in 16 bits")
        data = id_bytes(ids, itemsize)
        vector[uint32_t]().swap(deref(ids))
        return data


def join_lists(list parts):
    """One new list of the items of every list in ``parts``, in order, O(items).

    Built out of the cyclic collector's sight and handed to it when full (see
    :meth:`BatchIDs.lists`): the collections that building the parts set off
    then never read the items through it.
    """
    cdef Py_ssize_t total = 0, i, j, at = 0, n
    cdef PyObject* part
    cdef PyObject* item
    for i in range(len(parts)):
        if not isinstance(parts[i], list):
            raise TypeError(f"parts[{i}] must be a list, got {type(parts[i]).__name__}")
        total += len(<list>parts[i])
    out = PyList_New(total)
    PyObject_GC_UnTrack(<PyObject*>out)
    for i in range(len(parts)):
        part = PyList_GET_ITEM(parts, i)
        n = len(<list>part)
        for j in range(n):
            item = PyList_GET_ITEM(<object>part, j)
            Py_INCREF(item)
            PyList_SET_ITEM(out, at, item)
            at += 1
    PyObject_GC_Track(<PyObject*>out)
    return out


def text_ends(list texts):
    """The running sums of the lengths of ``texts`` as ``array("q")``: ``ends[i]`` is the
    length of ``texts[:i + 1]`` (a str's in characters, a bytes' in bytes; anything else
    counts 0). O(len(texts)), no Python object per text: where a thread pool cuts a
    batch in parts of equal size (``itertools.accumulate`` took 14 ms for 92k lines,
    a sixth of encoding them).
    """
    cdef Py_ssize_t i, k = len(texts), total = 0
    cdef PyObject* item
    ends = array("q", bytes(8 * k))
    cdef int64_t[::1] out = ends
    for i in range(k):
        item = PyList_GET_ITEM(texts, i)
        if PyUnicode_Check(item):
            total += PyUnicode_GET_LENGTH(<object>item)
        elif PyBytes_Check(item):
            total += PyBytes_GET_SIZE(item)
        out[i] = total
    return ends


def untrack_int_records(list records):
    """Leave the tuples of ``records`` that hold only ints out of the cyclic garbage collector.

    Such a tuple can be in no reference cycle. CPython untracks plain tuples
    of atoms itself, but never a tuple subclass such as ``Merge``: a model of
    100k rules would add 100k objects to every full collection (measured: a
    loaded 32k-rule model took one collection from 5 to 15 ms). Only tuples
    without an instance ``__dict__`` and with exact ints (or bools) in every
    field are untracked; anything else is left as it is. O(len(records)).
    """
    cdef Py_ssize_t i, j, n
    cdef PyObject* record
    cdef PyObject* item
    for i in range(len(records)):
        record = PyList_GET_ITEM(records, i)
        if not PyTuple_Check(record) or Py_TYPE(record).tp_dictoffset != 0:
            continue
        n = PyTuple_GET_SIZE(record)
        for j in range(n):
            item = PyTuple_GET_ITEM(record, j)
            if not PyLong_CheckExact(item) and not PyBool_Check(item):
                break
        else:
            PyObject_GC_UnTrack(record)


cdef object utf8_of(object data, const unsigned char** s, Py_ssize_t* n, str name):
    """Point ``s``/``n`` at the UTF-8 of ``data``; returns the object that owns those bytes.

    ASCII str is read in place; other str is encoded into a new bytes object
    (not cached on the str, so memory is given back after the call), without the GIL.
    """
    cdef const unsigned char[:] view
    cdef Py_ssize_t units, written
    cdef int kind
    cdef const void* units_data
    cdef unsigned char* out
    if isinstance(data, str):
        if PyUnicode_IS_ASCII(data):
            s[0] = <const unsigned char*>PyUnicode_DATA(data)
            n[0] = PyUnicode_GET_LENGTH(data)
            owner = data
        else:
            units = PyUnicode_GET_LENGTH(data)
            kind = PyUnicode_KIND(data)
            units_data = PyUnicode_DATA(data)
            # Room for the longest UTF-8; only the pages written are touched.
            owner = PyBytes_FromStringAndSize(NULL, units * (2 if kind == 1 else 3 if kind == 2 else 4))
            out = <unsigned char*>PyBytes_AS_STRING(owner)
            with nogil:
                written = units_to_utf8(units_data, units, kind, out)
            if written < 0:
                raise ValueError(f"{name} is not encodable as UTF-8: surrogates not allowed "
                                 f"at index {-1 - written}")
            s[0] = out
            n[0] = written
    elif isinstance(data, bytes):
        s[0] = <const unsigned char*>PyBytes_AS_STRING(data)
        n[0] = len(<bytes>data)
        owner = data
    else:
        view = data
        n[0] = view.shape[0]
        s[0] = &view[0] if n[0] else NULL
        owner = view
    if n[0] >= 0xFFFFFFFF:
        raise ValueError(f"{name}: {n[0]} bytes; one call encodes less than 4 GiB")
    return owner


cdef long long as_id(object item, Py_ssize_t position, Py_ssize_t limit) except? -1:
    """An ID that is not an exact int: numpy integers and the like, never bool."""
    if isinstance(item, bool):
        raise TypeError(f"ids[{position}] must be an int, got bool")
    try:
        value = operator.index(item)
    except TypeError:
        raise TypeError(f"ids[{position}] must be an int, got {type(item).__name__}") from None
    if not 0 <= value < limit:
        raise ValueError(f"ids[{position}] = {value} is outside the vocabulary (0..{limit - 1})")
    return value


def count_ids(ids, Py_ssize_t size):
    """How often each ID below ``size`` occurs in a buffer of unsigned 32-bit IDs, O(len + size).

    Returns ``array("q")`` of ``size`` counts; an ID at or above ``size``
    raises ValueError. Runs without the GIL: evaluation counts the IDs of
    every sample this way instead of building a dict of Python ints.
    """
    cdef const uint32_t[:] wide
    cdef Py_ssize_t i, k, bad = -1
    view = memoryview(ids)
    if not (view.itemsize == 4 and view.format in ("I", "<I", "=I", "L", "<L", "=L")):
        raise TypeError(f"ids: need unsigned 32-bit integers, got format {view.format!r}")
    if size < 0:
        raise ValueError(f"size must be >= 0, got {size}")
    wide = view
    k = wide.shape[0]
    counts = array("q", bytes(8 * size))
    cdef long long[::1] out = counts
    with nogil:
        for i in range(k):
            if wide[i] >= <uint32_t>size:
                bad = i
                break
            out[wide[i]] += 1
    if bad >= 0:
        raise ValueError(f"ids[{bad}] = {wide[bad]} is outside the vocabulary (0..{size - 1})")
    return counts


def words_in_text(str text):
    """``len(text.split())`` without building the list: runs of characters that are not
    white space (Python's definition, ``str.isspace``). O(len(text))."""
    cdef Py_ssize_t words = 0
    cdef bint inside = False
    cdef Py_UCS4 ch
    for ch in text:
        if Py_UNICODE_ISSPACE(ch):
            inside = False
        elif not inside:
            inside = True
            words += 1
    return words
