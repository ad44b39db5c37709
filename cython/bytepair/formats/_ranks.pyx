# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False, cdivision=True
"""tiktoken's merge loop on every token of a ranks table, in compiled code (twin:
``bytepair.formats._ranks_py``, the plain statement of the same loop).

Reading a tiktoken ranks file as rules needs, for each token, the split its own
bytes reach under tiktoken's merge loop with the tokens ranked before it. The
tokens are held in one open-addressing table keyed by their bytes; each token's
loop keeps the rank of every adjacent pair's joined bytes, so a merge looks up
only the two pairs it changes. O(L^2) compares and O(L) lookups for a token of
L bytes; no Python object per token.
"""

from array import array

from cpython.exc cimport PyErr_CheckSignals
from libc.stdint cimport int64_t, uint32_t, uint64_t
from libc.stdlib cimport calloc, free, malloc
from libc.string cimport memcmp, memmove

from bytepair.model._hashing cimport hash_bytes

#: A part or pair that is no token (ranked below the limit).
cdef uint32_t NONE = 0xFFFFFFFFu
#: Steps of the merge loops between two looks at pending signals (Ctrl-C, SIGTERM): a
#: hostile file's token of a million bytes takes minutes, and must still stop at once.
cdef Py_ssize_t CHECK_EVERY = 1 << 22


cdef struct Slot:
    uint32_t rank_1      # the token's rank + 1; 0 when the slot is free
    uint32_t tag         # the high half of its hash, to skip most byte compares


cdef struct Table:
    Slot* slots
    uint64_t mask
    const unsigned char* data
    const int64_t* starts


cdef uint32_t find(const Table* t, const unsigned char* s, Py_ssize_t n) noexcept nogil:
    """The rank of the token spelled ``s[:n]``, NONE if there is none."""
    cdef uint64_t h = hash_bytes(s, n)
    cdef uint64_t i = h & t.mask
    cdef uint32_t tag = <uint32_t>(h >> 32), rank
    cdef Slot* slot
    while True:
        slot = &t.slots[i]
        if slot.rank_1 == 0:
            return NONE
        rank = slot.rank_1 - 1
        if (slot.tag == tag and t.starts[rank + 1] - t.starts[rank] == n
                and memcmp(t.data + t.starts[rank], s, n) == 0):
            return rank
        i = (i + 1) & t.mask


cdef void insert(Table* t, uint32_t rank) noexcept nogil:
    """Add the token of ``rank`` unless its bytes are there already (the first rank stays)."""
    cdef const unsigned char* s = t.data + t.starts[rank]
    cdef Py_ssize_t n = t.starts[rank + 1] - t.starts[rank]
    cdef uint64_t h = hash_bytes(s, n)
    cdef uint64_t i = h & t.mask
    cdef uint32_t tag = <uint32_t>(h >> 32), other
    while t.slots[i].rank_1 != 0:
        other = t.slots[i].rank_1 - 1
        if (t.slots[i].tag == tag and t.starts[other + 1] - t.starts[other] == n
                and memcmp(t.data + t.starts[other], s, n) == 0):
            return
        i = (i + 1) & t.mask
    t.slots[i].rank_1 = rank + 1
    t.slots[i].tag = tag


cdef inline uint32_t pair_rank(const Table* t, const unsigned char* s, const Py_ssize_t* bound,
                               Py_ssize_t i, uint32_t limit) noexcept nogil:
    """The rank of parts ``i`` and ``i + 1`` joined, when a token ranked below ``limit``."""
    cdef uint32_t rank = find(t, s + bound[i], bound[i + 2] - bound[i])
    return rank if rank < limit else NONE


cdef Py_ssize_t merge_token(const Table* t, uint32_t k, const uint32_t* byte_rank,
                            Py_ssize_t* bound, uint32_t* part, uint32_t* pair,
                            Py_ssize_t* work) except -1 nogil:
    """tiktoken's loop on token ``k``'s bytes with the tokens ranked below ``k``: join the
    adjacent pair whose bytes are the lowest-ranked token, the leftmost among equals, until
    none is. Leaves the parts' ranks in ``part`` and returns how many there are; raises
    what a pending signal's handler raises (``work`` counts the steps since the last look)."""
    cdef const unsigned char* s = t.data + t.starts[k]
    cdef Py_ssize_t n = t.starts[k + 1] - t.starts[k], m = n, i, where
    cdef uint32_t best
    for i in range(n):
        bound[i] = i
        part[i] = byte_rank[s[i]]
    bound[n] = n
    for i in range(n - 1):
        pair[i] = pair_rank(t, s, bound, i, k)
    while m > 1:
        work[0] += m
        if work[0] >= CHECK_EVERY:
            work[0] = 0
            with gil:
                PyErr_CheckSignals()
        best, where = NONE, -1
        for i in range(m - 1):
            if pair[i] < best:  # strictly: the leftmost of equal ranks
                best, where = pair[i], i
        if where < 0:
            break
        # Parts where and where + 1 become one: the later parts, bounds and pairs move down.
        part[where] = best
        memmove(&part[where + 1], &part[where + 2], (m - where - 2) * sizeof(uint32_t))
        memmove(&bound[where + 1], &bound[where + 2], (m - where - 1) * sizeof(Py_ssize_t))
        memmove(&pair[where], &pair[where + 1], (m - where - 2) * sizeof(uint32_t))
        m -= 1
        if where < m - 1:
            pair[where] = pair_rank(t, s, bound, where, k)
        if where > 0:
            pair[where - 1] = pair_rank(t, s, bound, where - 1, k)
    return m


def tiktoken_splits(data, starts):
    """Each token's split by tiktoken's merge loop with the tokens ranked before it.

    Token ``k`` (rank ``k``) is ``data[starts[k]:starts[k + 1]]``; the tokens must be
    non-empty (a repeated token counts at its first rank). Returns three ``array("I")``
    of one entry per token: how many parts the loop stops at, and, when two, the ranks
    of the left and the right part (else 0). A part that is a single byte absent from
    the tokens has rank ``2**32 - 1``. O(sum of L^2) for tokens of L bytes.

    >>> parts, lefts, rights = tiktoken_splits(b"abcababc", array("q", [0, 1, 2, 3, 5, 8]))
    >>> parts.tolist(), lefts.tolist(), rights.tolist()  # a, b, c; ab = a b; abc = ab c
    ([1, 1, 1, 2, 2], [0, 0, 0, 0, 3], [0, 0, 0, 1, 2])
    """
    cdef const unsigned char[::1] view = data
    cdef const int64_t[::1] at = starts
    cdef Py_ssize_t count = at.shape[0] - 1, k, longest = 1, m, capacity = 4, work = 0
    cdef Table table
    cdef uint32_t byte_rank[256]
    cdef unsigned char byte
    if count < 0 or count >= NONE:
        raise ValueError(f"starts must hold 1 to {NONE} offsets, got {count + 1}")
    if at[0] != 0 or at[count] != view.shape[0]:
        raise ValueError("starts must begin at 0 and end at len(data)")
    for k in range(count):
        if at[k + 1] <= at[k]:
            raise ValueError(f"token {k} is empty (starts must increase)")
        longest = max(longest, at[k + 1] - at[k])
    parts, lefts, rights = (array("I", bytes(4 * count)) for _ in range(3))
    cdef uint32_t[::1] parts_out = parts, lefts_out = lefts, rights_out = rights
    while capacity < 2 * count:
        capacity *= 2
    table.slots = <Slot*>calloc(capacity, sizeof(Slot))
    table.mask = capacity - 1
    table.data = &view[0] if view.shape[0] else <const unsigned char*>b""
    table.starts = &at[0]
    cdef Py_ssize_t* bound = <Py_ssize_t*>malloc((longest + 1) * sizeof(Py_ssize_t))
    cdef uint32_t* part = <uint32_t*>malloc(longest * sizeof(uint32_t))
    cdef uint32_t* pair = <uint32_t*>malloc(longest * sizeof(uint32_t))
    try:
        if table.slots == NULL or bound == NULL or part == NULL or pair == NULL:
            raise MemoryError()
        with nogil:
            for k in range(count):
                insert(&table, <uint32_t>k)
            for m in range(256):
                byte = <unsigned char>m
                byte_rank[m] = find(&table, &byte, 1)
            for k in range(count):
                m = merge_token(&table, <uint32_t>k, byte_rank, bound, part, pair, &work)
                parts_out[k] = <uint32_t>m
                if m == 2:
                    lefts_out[k] = part[0]
                    rights_out[k] = part[1]
    finally:
        free(table.slots)
        free(bound)
        free(part)
        free(pair)
    return parts, lefts, rights
