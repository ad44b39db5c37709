# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False
# distutils: language = c++
"""Compiled GPT-2 pre-tokenizer: split and count pieces without the regex engine.

Scans UTF-8 and decides each piece exactly as the ``regex`` module decides a
match of ``bytepair.pretokenize.PATTERNS["gpt2"]``::

    's|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+

Which code points are letters (\\p{L}), numbers (\\p{N}) and white space
(\\s) comes from a table that ``bytepair.fastsplit`` builds with the
``regex`` module itself, so both agree on every Unicode version detail.
Property tests compare this scanner with ``regex`` on arbitrary text.
"""

from cpython.bytes cimport PyBytes_FromStringAndSize
from cython.operator cimport dereference as deref, preincrement as inc
from libc.stdint cimport int64_t, uint32_t
from libcpp.string cimport string
from libcpp.unordered_map cimport unordered_map

cdef enum:
    LETTER = 1
    NUMBER = 2
    SPACE = 4

cdef unsigned char CLASSES[0x110000]
cdef bint classes_ready = False


def set_classes(bytes table):
    """Install the class of every code point (one byte each, bits LETTER|NUMBER|SPACE)."""
    global classes_ready
    if len(table) != 0x110000:
        raise ValueError("the class table needs one byte per code point")
    cdef const unsigned char[:] view = table
    cdef Py_ssize_t i
    for i in range(0x110000):
        CLASSES[i] = view[i]
    classes_ready = True


cdef inline uint32_t decode(const unsigned char* s, Py_ssize_t p, Py_ssize_t* width) noexcept nogil:
    # The input is valid UTF-8 (it comes from str.encode), so no checks.
    cdef unsigned char c = s[p]
    if c < 0x80:
        width[0] = 1
        return c
    if c < 0xE0:
        width[0] = 2
        return ((c & 0x1F) << 6) | (s[p + 1] & 0x3F)
    if c < 0xF0:
        width[0] = 3
        return ((c & 0x0F) << 12) | ((s[p + 1] & 0x3F) << 6) | (s[p + 2] & 0x3F)
    width[0] = 4
    return ((c & 0x07) << 18) | ((s[p + 1] & 0x3F) << 12) | ((s[p + 2] & 0x3F) << 6) | (s[p + 3] & 0x3F)


cdef inline unsigned char klass(const unsigned char* s, Py_ssize_t p, Py_ssize_t* width) noexcept nogil:
    return CLASSES[decode(s, p, width)]


cdef inline Py_ssize_t run(const unsigned char* s, Py_ssize_t n, Py_ssize_t p, unsigned char want) noexcept nogil:
    # End of the run of characters of class `want` starting at p (0: the "other" class).
    cdef Py_ssize_t width
    cdef unsigned char k
    while p < n:
        k = klass(s, p, &width)
        if (want and not (k & want)) or (not want and k):
            break
        p += width
    return p


cdef Py_ssize_t gpt2_piece_end(const unsigned char* s, Py_ssize_t n, Py_ssize_t p) noexcept nogil:
    """End of the GPT-2 piece that starts at byte p (p < n)."""
    cdef Py_ssize_t width, width2, q, last
    cdef unsigned char k, k2
    cdef unsigned char c = s[p]
    if c == 39 and p + 1 < n:  # the contractions 's 't 're 've 'm 'll 'd
        c = s[p + 1]
        if c == 115 or c == 116 or c == 109 or c == 100:  # s t m d
            return p + 2
        if p + 2 < n and ((c == 114 and s[p + 2] == 101) or (c == 118 and s[p + 2] == 101)
                          or (c == 108 and s[p + 2] == 108)):  # re ve ll
            return p + 3
    k = klass(s, p, &width)
    if s[p] == 32 and p + 1 < n:  # an optional space before a letter, number or symbol run
        k2 = klass(s, p + 1, &width2)
        if k2 & LETTER:
            return run(s, n, p + 1, LETTER)
        if k2 & NUMBER:
            return run(s, n, p + 1, NUMBER)
        if not k2:
            return run(s, n, p + 1, 0)
    if k & LETTER:
        return run(s, n, p, LETTER)
    if k & NUMBER:
        return run(s, n, p, NUMBER)
    if not k:
        return run(s, n, p, 0)
    # White space: all of a run that ends the text; otherwise all but its last
    # character (\s+(?!\S) backs off one), or one character (\s+).
    q = p
    last = p
    while q < n:
        k = klass(s, q, &width)
        if not (k & SPACE):
            break
        last = q
        q += width
    if q == n or last == p:
        return q
    return last


def split_gpt2(str text):
    """The GPT-2 pieces of ``text`` (equal to ``regex.findall`` with the GPT-2 pattern)."""
    if not classes_ready:
        raise RuntimeError("call set_classes first")
    cdef bytes data = text.encode("utf-8", "surrogatepass")
    cdef const unsigned char* s = data
    cdef Py_ssize_t n = len(data), p = 0, end
    out = []
    while p < n:
        end = gpt2_piece_end(s, n, p)
        if end <= p:
            raise RuntimeError(f"empty GPT-2 piece at byte {p}")  # a scanner bug; never loop
        out.append(data[p:end].decode("utf-8", "surrogatepass"))
        p = end
    return out


cdef class PieceCounter:
    """Counts GPT-2 pieces of many documents as UTF-8 bytes."""

    cdef unordered_map[string, int64_t] counts

    def add(self, str text):
        """Count the pieces of one document."""
        if not classes_ready:
            raise RuntimeError("call set_classes first")
        cdef bytes data = text.encode("utf-8", "surrogatepass")
        cdef const char* s = data
        cdef Py_ssize_t n = len(data), p = 0, end = 1
        with nogil:
            while p < n:
                end = gpt2_piece_end(<const unsigned char*>s, n, p)
                if end <= p:
                    break
                inc(self.counts[string(s + p, end - p)])
                p = end
        if p < n:
            raise RuntimeError(f"empty GPT-2 piece at byte {p}")  # a scanner bug; never loop

    def items(self):
        """``{piece_bytes: count}``."""
        out = {}
        cdef unordered_map[string, int64_t].iterator it = self.counts.begin()
        while it != self.counts.end():
            out[PyBytes_FromStringAndSize(deref(it).first.data(), deref(it).first.size())] = deref(it).second
            inc(it)
        return out
