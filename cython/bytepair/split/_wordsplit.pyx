# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False, cdivision=True
# distutils: language = c++
"""Compiled word splitting: count white-space-separated words into a piece table.

Word mode's corpus reader (Sennrich's ``learn_bpe`` reads text the same way):
a word is a maximal run of characters that are not white space, as
``str.split()`` cuts them. The words are counted into a
``bytepair.split._split.PieceTable``, so worker threads count blocks into
tables of their own and merge them, as piece counting does.
"""

from libc.stdint cimport uint8_t

from bytepair.split._split cimport PieceTable, Ring, utf8_error, utf8_width


def count_words(PieceTable table, data):
    """Count the white-space-separated words of UTF-8 ``data`` (bytes-like) into ``table``.

    A word is a maximal run of characters that are not white space in the
    sense of ``str.split()`` (so the words are ``data.decode().split()``).
    Returns -1, or the offset of the first invalid UTF-8 byte (nothing is
    counted then). O(len(data)) without the GIL.

    >>> from bytepair.split._split import PieceTable
    >>> table = PieceTable()
    >>> count_words(table, "low lower\\u3000low\\n".encode())
    -1
    >>> sorted(table.items().items())
    [(b'low', 2), (b'lower', 1)]
    """
    cdef const uint8_t[::1] view = data
    cdef Py_ssize_t n = view.shape[0], bad
    if n == 0:
        return -1
    cdef const uint8_t* s = &view[0]
    with nogil:
        bad = utf8_error(s, n)
        if bad < 0:
            scan_words(table, s, n)
    return bad


cdef inline Py_ssize_t space_width(const uint8_t* s, Py_ssize_t n, Py_ssize_t p) noexcept nogil:
    """The bytes of the white-space character at p, or 0 when s[p] starts another character.

    White space as ``str.isspace()``: ASCII 9-13 and 28-32, U+0085, U+00A0,
    U+1680, U+2000-U+200A, U+2028, U+2029, U+202F, U+205F, U+3000.
    """
    cdef uint8_t c = s[p], c1, c2
    if c < 0x80:
        return 1 if (9 <= c <= 13 or 28 <= c <= 32) else 0
    if c == 0xC2:
        return 2 if p + 1 < n and (s[p + 1] == 0x85 or s[p + 1] == 0xA0) else 0
    if p + 2 >= n:
        return 0
    c1, c2 = s[p + 1], s[p + 2]
    if c == 0xE1:
        return 3 if c1 == 0x9A and c2 == 0x80 else 0
    if c == 0xE2:
        if c1 == 0x80 and (c2 <= 0x8A or c2 == 0xA8 or c2 == 0xA9 or c2 == 0xAF):
            return 3
        return 3 if c1 == 0x81 and c2 == 0x9F else 0
    if c == 0xE3:
        return 3 if c1 == 0x80 and c2 == 0x80 else 0
    return 0


cdef int scan_words(PieceTable table, const uint8_t* s, Py_ssize_t n) except -1 nogil:
    # Each word's slot is prefetched while the next few words are found.
    cdef Ring ring
    cdef Py_ssize_t p = 0, start, width
    ring.found = ring.done = 0
    ring.limit = s + n
    while p < n:
        width = space_width(s, n, p)
        if width:
            p += width
            continue
        start = p
        while p < n and space_width(s, n, p) == 0:
            p += utf8_width(s[p])
        table.push(&ring, <const unsigned char*>s + start, p - start)
    return table.drain(&ring)
