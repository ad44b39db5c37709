# cython: language_level=3, boundscheck=False, wraparound=False
"""Sorted runs in compiled code: a counting table written out, and the records of a
run buffer found, with no Python object per piece (twin: ``bytepair.counts.spill``'s
``sorted_items`` and ``read_run``).

A record is an int64 count, a uint32 length and the piece's bytes (little-endian,
as ``PieceTable.to_bytes`` writes them); a run is records sorted by piece.
"""

from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize
from libc.stdint cimport int64_t, uint32_t, uint64_t
from libc.string cimport memcmp, memcpy
from libcpp.algorithm cimport sort
from libcpp.vector cimport vector

from array import array

from bytepair.split._split cimport PieceTable, Slot


cdef struct Key:
    uint64_t prefix  # the first 8 bytes, big-endian, zero-padded: most comparisons end here
    const unsigned char* s
    uint32_t n
    int64_t count


cdef inline Key make_key(const unsigned char* s, uint32_t n, int64_t count) noexcept nogil:
    cdef Key key
    cdef uint32_t i
    key.prefix = 0
    for i in range(8):
        key.prefix = (key.prefix << 8) | (s[i] if i < n else 0)
    key.s, key.n, key.count = s, n, count
    return key


cdef bint key_less(const Key& a, const Key& b) noexcept nogil:
    # The order of Python's bytes: byte by byte, then the shorter first. Prefixes that differ
    # decide it (a zero of padding sorts first, as the shorter piece does).
    if a.prefix != b.prefix:
        return a.prefix < b.prefix
    cdef int c = memcmp(a.s, b.s, a.n if a.n < b.n else b.n)
    return c < 0 or (c == 0 and a.n < b.n)


def sorted_records(PieceTable table):
    """Every piece of ``table`` as a record, sorted by piece: a run's body, as ``bytes``.
    O(pieces log pieces); memory: one pointer per piece and the result.

    >>> from bytepair.split._split import PieceTable
    >>> table = PieceTable()
    >>> table.count(b"b a b", "gpt2")
    >>> sorted_records(table)[:13]
    b'\\x01\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x02\\x00\\x00\\x00 '
    """
    cdef vector[Key] keys
    cdef Py_ssize_t i, total = 0, at = 0
    cdef Slot* slot
    keys.reserve(table.size)
    for i in range(table.capacity):
        slot = &table.slots[i]
        if slot.fingerprint:
            keys.push_back(make_key(table.key_of(slot), slot.length, slot.count))
            total += 12 + slot.length
    with nogil:
        sort(keys.begin(), keys.end(), key_less)
    out = PyBytes_FromStringAndSize(NULL, total)
    cdef unsigned char* buffer = <unsigned char*>PyBytes_AS_STRING(out)
    with nogil:
        for i in range(<Py_ssize_t>keys.size()):
            memcpy(buffer + at, &keys[i].count, 8)
            memcpy(buffer + at + 8, &keys[i].n, 4)
            memcpy(buffer + at + 12, keys[i].s, keys[i].n)
            at += 12 + keys[i].n
    return out


def record_starts(data):
    """``array("q")`` of the start of every whole record in ``data`` (bytes-like), then the
    end of the last one: the bytes after it are a record cut short. O(records).

    >>> list(record_starts(b"\\x01" + bytes(7) + b"\\x01\\x00\\x00\\x00a" + b"\\x02"))
    [0, 13]
    """
    cdef const unsigned char[::1] view = data
    cdef Py_ssize_t n = view.shape[0], at = 0, records = 0
    cdef const unsigned char* s = &view[0] if n else <const unsigned char*>b""
    cdef uint32_t length
    while at + 12 <= n:
        memcpy(&length, s + at + 8, 4)
        if at + 12 + <Py_ssize_t>length > n:
            break
        records += 1
        at += 12 + length
    starts = array("q", bytes(8 * (records + 1)))
    cdef int64_t[::1] out = starts
    at = 0
    for i in range(records):
        out[i] = at
        memcpy(&length, s + at + 8, 4)
        at += 12 + length
    out[records] = at
    return starts


def sorted_flat(data, starts, counts):
    """Flat pieces (``data``, ``starts`` with the end last, ``counts``, as ``PieceTable.arrays``
    gives them) in byte order, as a count file holds them: ``(data, lengths, counts)`` with
    ``lengths`` ``array("I")`` and ``counts`` ``array("Q")``, the pieces' bytes laid end to end
    in that order. ValueError when a piece is longer than a uint32 can say.
    O(pieces log pieces); memory: a key per piece and the result (twin: sorting a dict).

    >>> data, lengths, counts = sorted_flat(b"cab", array("q", [0, 1, 3]), array("q", [2, 1]))
    >>> data, list(lengths), list(counts)
    (b'abc', [2, 1], [1, 2])
    """
    cdef const unsigned char[::1] view = data
    cdef const int64_t[::1] at = starts
    cdef const int64_t[::1] count_of = counts
    cdef Py_ssize_t i, n = count_of.shape[0], size = view.shape[0], position = 0
    if at.shape[0] != n + 1 or (n and (at[0] != 0 or at[n] != size)):
        raise ValueError("sorted_flat: starts must hold one offset per piece, then the end")
    cdef const unsigned char* s = &view[0] if size else <const unsigned char*>b""
    cdef vector[Key] keys
    keys.reserve(n)
    for i in range(n):
        if at[i + 1] - at[i] > 0xFFFFFFFF:
            raise ValueError(f"a piece of {at[i + 1] - at[i]} bytes is longer than the format "
                             f"allows ({0xFFFFFFFF})")
        keys.push_back(make_key(s + at[i], <uint32_t>(at[i + 1] - at[i]), count_of[i]))
    with nogil:
        sort(keys.begin(), keys.end(), key_less)
    out = PyBytes_FromStringAndSize(NULL, size)
    lengths = array("I", bytes(4 * n))
    ordered = array("Q", bytes(8 * n))
    cdef unsigned char* buffer = <unsigned char*>PyBytes_AS_STRING(out)
    cdef uint32_t[::1] length_of = lengths
    cdef uint64_t[::1] ordered_count = ordered
    with nogil:
        for i in range(n):
            memcpy(buffer + position, keys[i].s, keys[i].n)
            length_of[i] = keys[i].n
            ordered_count[i] = <uint64_t>keys[i].count
            position += keys[i].n
    return out, lengths, ordered
