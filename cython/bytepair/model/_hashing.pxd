# cython: language_level=3
"""The hash of a byte string that the compiled modules share (the encoder's piece cache,
the table of a tiktoken file's tokens)."""

from libc.stdint cimport uint64_t
from libc.string cimport memcpy


cdef inline uint64_t hash_bytes(const unsigned char* s, Py_ssize_t n) noexcept nogil:
    """64 well-mixed bits of ``s[:n]``, never 0 (a table's free-slot mark)."""
    cdef uint64_t golden = 0x9E3779B97F4A7C15u
    cdef uint64_t h = golden ^ <uint64_t>n
    cdef uint64_t word
    while n >= 8:
        memcpy(&word, s, 8)
        h = (h ^ word) * golden
        h ^= h >> 29
        s += 8
        n -= 8
    word = 0
    if n:
        memcpy(&word, s, n)
        h = (h ^ word) * golden
        h ^= h >> 29
    h *= 0xBF58476D1CE4E5B9u
    h ^= h >> 31
    return h | 1
