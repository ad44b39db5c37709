# cython: language_level=3, boundscheck=False, wraparound=False
"""Sorted runs in compiled code: a counting table written out, and the records of a
run buffer found, with no Python object per piece (twin: ``bytepair.counts.spill``'s
``sorted_items`` and ``read_run``).

A record is an int64 count, a uint32 length and the piece's bytes (little-endian,
as ``PieceTable.to_bytes`` writes them); a run is records sorted by piece.
"""

from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize
from libc.stdint cimport int64_t, uint32_t
from libc.string cimport memcmp, memcpy
from libcpp.algorithm cimport sort
from libcpp.vector cimport vector

from array import array

from bytepair.split._split cimport PieceTable, Slot


cdef struct Key:
    const unsigned char* s
    uint32_t n
    int64_t count


cdef bint key_less(const Key& a, const Key& b) noexcept nogil:
    # The order of Python's bytes: byte by byte, then the shorter first.
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
    cdef Key key
    keys.reserve(table.size)
    for i in range(table.capacity):
        slot = &table.slots[i]
        if slot.fingerprint:
            key.s = table.key_of(slot)
            key.n = slot.length
            key.count = slot.count
            keys.push_back(key)
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
