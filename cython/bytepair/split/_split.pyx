# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False, cdivision=True
# distutils: language = c++
"""Compiled pre-tokenizers: split and count pieces without the regex engine.

Each scanner decides a piece exactly as the ``regex`` module decides a match
of the pattern of the same name in ``bytepair.split.pretokenize.PATTERNS``: the
alternatives are tried in order at the current position and the first that
matches wins, with the backtracking the regex would do worked out by hand
(see the comments at each scanner). Which code points are letters, numbers,
marks, white space and word characters comes from a table built here with
the ``regex`` module itself, so both agree on every Unicode detail. Property
tests compare every scanner with ``regex`` on arbitrary text.

Splitting costs O(n) for n bytes of text; counting adds one hash-table probe
per piece (expected O(1), amortised over growth).
"""

from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize
from libc.stdint cimport int64_t, uint32_t, uint64_t
from libc.stdlib cimport free, realloc
from libc.string cimport memchr, memcmp, memcpy

from array import array

import regex

# Bits of the code-point class table.
cdef enum:
    LETTER = 1    # \p{L}
    NUMBER = 2    # \p{N}
    SPACE = 4     # \s
    MARK = 8      # \p{M}
    UPPERISH = 16  # [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}] (o200k)
    LOWERISH = 32  # [\p{Ll}\p{Lm}\p{Lo}\p{M}] (o200k)
    WORD = 64     # \w

#: The regex class behind each bit, evaluated by the ``regex`` module.
CLASS_SOURCES = (
    (LETTER, r"\p{L}"),
    (NUMBER, r"\p{N}"),
    (SPACE, r"\s"),
    (MARK, r"\p{M}"),
    (UPPERISH, r"[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]"),
    (LOWERISH, r"[\p{Ll}\p{Lm}\p{Lo}\p{M}]"),
    (WORD, r"\w"),
)
# The same table from single classes, which regex scans about ten times
# faster than a bracketed union (tests check both give the same table).
TABLE_SOURCES = (
    (LETTER, r"\p{L}"),
    (NUMBER, r"\p{N}"),
    (SPACE, r"\s"),
    (MARK | UPPERISH | LOWERISH, r"\p{M}"),
    (UPPERISH, r"\p{Lu}"),
    (UPPERISH, r"\p{Lt}"),
    (UPPERISH | LOWERISH, r"\p{Lm}"),
    (UPPERISH | LOWERISH, r"\p{Lo}"),
    (LOWERISH, r"\p{Ll}"),
    (WORD, r"\w"),
)

#: Pattern names (as in ``bytepair.split.pretokenize.PATTERNS``) and their IDs.
PATTERN_IDS = {
    "gpt2": PAT_GPT2,
    "cl100k": PAT_CL100K,
    "o200k": PAT_O200K,
    "whitespace": PAT_WHITESPACE,
    "nanochat": PAT_NANOCHAT,
    "superbpe": PAT_SUPERBPE,
}

cdef unsigned char CLASSES[0x110000]


def build_classes(sources=TABLE_SOURCES):
    """The class table (one byte per code point) for ``(bits, regex class)`` pairs."""
    # Every code point in one string, from a 4-byte-per-character buffer
    # (joining 1.1 million one-character strings would cost ~100 MiB).
    every = array("I", range(0x110000)).tobytes().decode("utf-32-le", "surrogatepass")
    table = bytearray(0x110000)
    cdef unsigned char[::1] view = table
    cdef Py_ssize_t start, end, code
    cdef unsigned char bit
    for bit, source in sources:
        for match in regex.finditer(source + "+", every):
            start, end = match.span()
            for code in range(start, end):
                view[code] |= bit
    return bytes(table)


def _install(bytes table):
    memcpy(CLASSES, <const char*>table, 0x110000)


_install(build_classes())


def classes():
    """The class table: one byte per code point, bits as in ``CLASS_SOURCES``."""
    return PyBytes_FromStringAndSize(<char*>CLASSES, 0x110000)


class InvalidUTF8(ValueError):
    """Bytes that are not UTF-8; ``offset`` is the first bad byte, counted from the buffer start."""

    def __init__(self, offset):
        super().__init__(f"invalid UTF-8 at byte offset {offset}")
        self.offset = offset


cdef int pattern_id(object name) except -2:
    if name is None:
        return PAT_NONE
    try:
        return PATTERN_IDS[name]
    except (KeyError, TypeError):
        names = ", ".join(PATTERN_IDS)
        raise ValueError(f"pattern must be None or one of {names}, got {name!r}") from None


# ---------------------------------------------------------------------------
# Decoding and character classes

cdef inline uint32_t decode(const unsigned char* s, Py_ssize_t p, Py_ssize_t* width) noexcept nogil:
    # The text is valid UTF-8 (checked, or written by str.encode): no checks here.
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


cdef inline Py_ssize_t run_of(const unsigned char* s, Py_ssize_t n, Py_ssize_t p, unsigned char bits) noexcept nogil:
    # End of the run of characters that have one of `bits`, from p.
    cdef Py_ssize_t width
    while p < n:
        if s[p] < 0x80:  # ASCII, most text: no decoding
            if not (CLASSES[s[p]] & bits):
                break
            p += 1
        elif klass(s, p, &width) & bits:
            p += width
        else:
            break
    return p


cdef inline Py_ssize_t run_without(const unsigned char* s, Py_ssize_t n, Py_ssize_t p, unsigned char bits) noexcept nogil:
    # End of the run of characters that have none of `bits`, from p.
    cdef Py_ssize_t width
    while p < n:
        if s[p] < 0x80:
            if CLASSES[s[p]] & bits:
                break
            p += 1
        elif not (klass(s, p, &width) & bits):
            p += width
        else:
            break
    return p


cdef inline Py_ssize_t run_of_bytes(const unsigned char* s, Py_ssize_t n, Py_ssize_t p, bint slash) noexcept nogil:
    # End of the run of "\r", "\n" (and "/" when `slash`) from p.
    while p < n and (s[p] == 13 or s[p] == 10 or (slash and s[p] == 47)):
        p += 1
    return p


cdef inline Py_ssize_t run_of_numbers(const unsigned char* s, Py_ssize_t n, Py_ssize_t p, int most) noexcept nogil:
    # \p{N}{1,most}: the character at p is a number.
    cdef Py_ssize_t width
    cdef int taken = 0
    while taken < most and p < n and klass(s, p, &width) & NUMBER:
        p += width
        taken += 1
    return p


cdef inline bint is_ascii_letter(unsigned char c, unsigned char lower) noexcept nogil:
    # c is `lower` or its upper case (c | 0x20 maps only those two bytes to `lower`).
    return (c | 0x20) == lower


cdef inline Py_ssize_t contraction_end(const unsigned char* s, Py_ssize_t n, Py_ssize_t p, bint fold) noexcept nogil:
    # End of the contraction 's 't 're 've 'm 'll 'd at p, or p when there is none.
    # With `fold` the letters match in any case, as (?i:...) does: that is
    # S/s (and U+017F LATIN SMALL LETTER LONG S, which folds to s) and the
    # ASCII upper and lower case of the rest (checked against regex by tests).
    cdef unsigned char a, b
    if p + 1 >= n or s[p] != 39:
        return p
    a = s[p + 1]
    if not fold:
        if a == 115 or a == 116 or a == 109 or a == 100:  # s t m d
            return p + 2
        if p + 2 < n:
            b = s[p + 2]
            if (a == 114 and b == 101) or (a == 118 and b == 101) or (a == 108 and b == 108):  # re ve ll
                return p + 3
        return p
    if is_ascii_letter(a, 115) or is_ascii_letter(a, 116) or is_ascii_letter(a, 109) or is_ascii_letter(a, 100):
        return p + 2
    if p + 2 < n:
        b = s[p + 2]
        if a == 0xC5 and b == 0xBF:  # U+017F
            return p + 3
        if ((is_ascii_letter(a, 114) or is_ascii_letter(a, 118)) and is_ascii_letter(b, 101)) or (
                is_ascii_letter(a, 108) and is_ascii_letter(b, 108)):
            return p + 3
    return p


cdef inline Py_ssize_t space_end(const unsigned char* s, Py_ssize_t n, Py_ssize_t p, bint to_end_first,
                                 bint newline_first) noexcept nogil:
    # The piece that starts with white space at p. q is the end of the run,
    # last the start of its last character, newline the end of its last "\r"/"\n".
    #   to_end_first  (\s++$ first):       a run that ends the text is one piece;
    #   newline_first (\s*[\r\n] first):   else up to and with the run's last newline;
    #   \s+(?!\S):                         else the whole run at the end of the text,
    #                                      or all but its last character;
    #   \s / \s+:                          else the one character.
    cdef Py_ssize_t q = p, last = p, newline = -1, width
    while q < n and klass(s, q, &width) & SPACE:
        last = q
        if s[q] == 13 or s[q] == 10:
            newline = q + 1
        q += width
    if to_end_first and q == n:
        return q
    if newline_first and newline > 0:
        return newline
    if q == n:
        return q
    if last > p:
        return last
    return q


# ---------------------------------------------------------------------------
# GPT-2: 's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+

cdef inline Py_ssize_t gpt2_end(const unsigned char* s, Py_ssize_t n, Py_ssize_t p) noexcept nogil:
    cdef Py_ssize_t width, width2, end
    cdef unsigned char k, k2
    end = contraction_end(s, n, p, False)
    if end > p:
        return end
    k = klass(s, p, &width)
    if s[p] == 32 and p + 1 < n:  # an optional space before a letter, number or symbol run
        k2 = klass(s, p + 1, &width2)
        if k2 & LETTER:
            return run_of(s, n, p + 1, LETTER)
        if k2 & NUMBER:
            return run_of(s, n, p + 1, NUMBER)
        if not (k2 & (LETTER | NUMBER | SPACE)):
            return run_without(s, n, p + 1, LETTER | NUMBER | SPACE)
    if k & LETTER:
        return run_of(s, n, p, LETTER)
    if k & NUMBER:
        return run_of(s, n, p, NUMBER)
    if not (k & SPACE):
        return run_without(s, n, p, LETTER | NUMBER | SPACE)
    return space_end(s, n, p, False, False)


# ---------------------------------------------------------------------------
# cl100k:   '(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+
#           | ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s
# nanochat: '(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}+|\p{N}{1,2}
#           | ?[^\s\p{L}\p{N}]++[\r\n]*|\s*[\r\n]|\s+(?!\S)|\s+
# They differ only in the digit count and in \s++$ (which nanochat lacks).

cdef inline Py_ssize_t gpt4_end(const unsigned char* s, Py_ssize_t n, Py_ssize_t p, int digits,
                                bint to_end_first) noexcept nogil:
    cdef Py_ssize_t width, width2, end
    cdef unsigned char k, k2
    cdef unsigned char c = s[p]
    end = contraction_end(s, n, p, True)
    if end > p:
        return end
    k = klass(s, p, &width)
    if k & LETTER:
        return run_of(s, n, p, LETTER)
    # [^\r\n\p{L}\p{N}]?+\p{L}+: one such character, then letters. The prefix
    # is possessive, and a non-letter cannot start the letter run anyway.
    if not (k & NUMBER) and c != 13 and c != 10 and p + width < n:
        if klass(s, p + width, &width2) & LETTER:
            return run_of(s, n, p + width, LETTER)
    if k & NUMBER:
        return run_of_numbers(s, n, p, digits)
    #  ?[^\s\p{L}\p{N}]+[\r\n]*
    if c == 32 and p + 1 < n:
        k2 = klass(s, p + 1, &width2)
        if not (k2 & (LETTER | NUMBER | SPACE)):
            return run_of_bytes(s, n, run_without(s, n, p + 1, LETTER | NUMBER | SPACE), False)
    if not (k & SPACE):
        return run_of_bytes(s, n, run_without(s, n, p, LETTER | NUMBER | SPACE), False)
    return space_end(s, n, p, to_end_first, True)


# ---------------------------------------------------------------------------
# o200k, with X = [^\r\n\p{L}\p{N}], U = [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}],
# L = [\p{Ll}\p{Lm}\p{Lo}\p{M}] and C = (?i:'s|'t|'re|'ve|'m|'ll|'d):
#   X?U*L+C? | X?U+L*C? | \p{N}{1,3} | ?[^\s\p{L}\p{N}]+[\r\n/]* | \s*[\r\n]+ | \s+(?!\S) | \s+
# Nothing is possessive, so the regex backtracks: X? is tried taken, then
# not; U* gives back characters one at a time until L+ can start. Marks
# (\p{M}) are in X, U and L at once, which is where backtracking shows.

cdef inline Py_ssize_t o200k_lower_from(const unsigned char* s, Py_ssize_t n, Py_ssize_t a) noexcept nogil:
    # U*L+ from a, or -1. U* first takes its whole run [a, u). If the next
    # character is in L (so only in L), L+ runs on from there. Otherwise U*
    # backs off until L+ can take one character: the last character of the
    # run that is also in L, say at k; L+ then stops at k + 1, since what
    # follows k in the run is only in U (or ends the run, as above).
    cdef Py_ssize_t u = a, both_end = -1, width
    cdef unsigned char k = 0
    while u < n:
        k = klass(s, u, &width)
        if not (k & UPPERISH):
            break
        if k & LOWERISH:
            both_end = u + width
        u += width
    if u < n and k & LOWERISH:
        return run_of(s, n, u, LOWERISH)
    return both_end


cdef inline Py_ssize_t o200k_upper_from(const unsigned char* s, Py_ssize_t n, Py_ssize_t a) noexcept nogil:
    # U+L* from a, or -1.
    cdef Py_ssize_t u = run_of(s, n, a, UPPERISH)
    if u == a:
        return -1
    return run_of(s, n, u, LOWERISH)


cdef inline Py_ssize_t o200k_end(const unsigned char* s, Py_ssize_t n, Py_ssize_t p) noexcept nogil:
    cdef Py_ssize_t width, width2, end
    cdef unsigned char k, k2
    cdef unsigned char c = s[p]
    k = klass(s, p, &width)
    if k & LETTER:  # X? matches nothing here; one of the two letter forms matches
        end = o200k_lower_from(s, n, p)
        if end < 0:
            end = o200k_upper_from(s, n, p)
        return contraction_end(s, n, end, True)
    if not (k & NUMBER) and c != 13 and c != 10:  # X? can take this character
        end = o200k_lower_from(s, n, p + width)
        if end < 0 and k & MARK:
            # X? gives the mark back and U*L+ starts on it; it always
            # matches, since a mark is in both U and L.
            end = o200k_lower_from(s, n, p)
        if end < 0:
            end = o200k_upper_from(s, n, p + width)
        if end >= 0:
            return contraction_end(s, n, end, True)
    if k & NUMBER:
        return run_of_numbers(s, n, p, 3)
    #  ?[^\s\p{L}\p{N}]+[\r\n/]*
    if c == 32 and p + 1 < n:
        k2 = klass(s, p + 1, &width2)
        if not (k2 & (LETTER | NUMBER | SPACE)):
            return run_of_bytes(s, n, run_without(s, n, p + 1, LETTER | NUMBER | SPACE), True)
    if not (k & SPACE):
        return run_of_bytes(s, n, run_without(s, n, p, LETTER | NUMBER | SPACE), True)
    # \s*[\r\n]+ ends at the run's last newline, as \s*[\r\n] does.
    return space_end(s, n, p, False, True)


# ---------------------------------------------------------------------------
# whitespace: \w+|[^\w\s]+, and the white space between matches as pieces.

cdef inline Py_ssize_t whitespace_end(const unsigned char* s, Py_ssize_t n, Py_ssize_t p) noexcept nogil:
    cdef Py_ssize_t width
    cdef unsigned char k = klass(s, p, &width)
    if k & WORD:
        return run_of(s, n, p, WORD)
    if not (k & SPACE):
        return run_without(s, n, p, WORD | SPACE)
    return run_of(s, n, p, SPACE)


# superbpe: \p{N}{1,3}| ?[^\s\p{L}\p{N}]{2,}[\r\n/]*| +(?!\S), split isolated: a
# match is a piece, and so is the text between two matches.
cdef inline Py_ssize_t superbpe_match(const unsigned char* s, Py_ssize_t n, Py_ssize_t p) noexcept nogil:
    # End of the match at p, or p when the pattern does not match there.
    cdef Py_ssize_t width, q = p, end, r
    if klass(s, p, &width) & NUMBER:
        return run_of_numbers(s, n, p, 3)
    if s[p] == 32:
        q = p + 1  # " ?": taken if what follows can match; else the class fails at the space
    if q < n and not (klass(s, q, &width) & (LETTER | NUMBER | SPACE)):
        end = run_without(s, n, q, LETTER | NUMBER | SPACE)
        if end > q + width:  # {2,}: at least two characters
            return run_of_bytes(s, n, end, True)
    if s[p] == 32:
        # " +(?!\S)": the run of spaces, less its last one when a non-space follows.
        r = p
        while r < n and s[r] == 32:
            r += 1
        if r == n or klass(s, r, &width) & SPACE:
            return r
        return r - 1
    return p


cdef inline Py_ssize_t superbpe_end(const unsigned char* s, Py_ssize_t n, Py_ssize_t p) noexcept nogil:
    cdef Py_ssize_t width, end = superbpe_match(s, n, p)
    if end > p:
        return end
    # Between matches: up to the next position where the pattern matches.
    klass(s, p, &width)
    end = p + width
    while end < n and superbpe_match(s, n, end) == end:
        klass(s, end, &width)
        end += width
    return end


cdef inline Py_ssize_t end_of(int pattern, const unsigned char* s, Py_ssize_t n, Py_ssize_t p) noexcept nogil:
    if pattern == PAT_GPT2:
        return gpt2_end(s, n, p)
    if pattern == PAT_CL100K:
        return gpt4_end(s, n, p, 3, True)
    if pattern == PAT_O200K:
        return o200k_end(s, n, p)
    if pattern == PAT_WHITESPACE:
        return whitespace_end(s, n, p)
    if pattern == PAT_NANOCHAT:
        return gpt4_end(s, n, p, 2, False)
    if pattern == PAT_SUPERBPE:
        return superbpe_end(s, n, p)
    return n


cdef Py_ssize_t piece_end(int pattern, const unsigned char* s, Py_ssize_t n, Py_ssize_t p) noexcept nogil:
    return end_of(pattern, s, n, p)


# ---------------------------------------------------------------------------
# UTF-8 validation, as strict as bytes.decode("utf-8")

cdef inline bint continuation(unsigned char c) noexcept nogil:
    return (c & 0xC0) == 0x80


cdef Py_ssize_t utf8_error(const unsigned char* s, Py_ssize_t n) noexcept nogil:
    cdef Py_ssize_t p = 0
    cdef uint64_t word
    cdef unsigned char c, c1
    while p < n:
        while p + 8 <= n:  # ASCII eight bytes at a time
            memcpy(&word, s + p, 8)
            if word & 0x8080808080808080ULL:
                break
            p += 8
        if p >= n:
            break
        c = s[p]
        if c < 0x80:
            p += 1
        elif c < 0xC2:  # a continuation byte, or an overlong two-byte lead
            return p
        elif c < 0xE0:
            if p + 1 >= n or not continuation(s[p + 1]):
                return p
            p += 2
        elif c < 0xF0:
            if p + 1 >= n:
                return p
            c1 = s[p + 1]
            if not continuation(c1) or (c == 0xE0 and c1 < 0xA0) or (c == 0xED and c1 >= 0xA0):
                return p  # overlong, or a surrogate
            if p + 2 >= n or not continuation(s[p + 2]):
                return p
            p += 3
        elif c < 0xF5:
            if p + 1 >= n:
                return p
            c1 = s[p + 1]
            if not continuation(c1) or (c == 0xF0 and c1 < 0x90) or (c == 0xF4 and c1 >= 0x90):
                return p  # overlong, or past U+10FFFF
            if p + 2 >= n or not continuation(s[p + 2]) or p + 3 >= n or not continuation(s[p + 3]):
                return p
            p += 4
        else:
            return p
    return -1


# ---------------------------------------------------------------------------
# Python API: splitting

def split(str text, pattern):
    """The pieces of ``text`` for the named pattern (see ``piece_end``), as str."""
    cdef int pat = pattern_id(pattern)
    cdef bytes data = text.encode("utf-8", "surrogatepass")
    cdef const unsigned char* s = <const unsigned char*>PyBytes_AS_STRING(data)
    cdef Py_ssize_t n = len(data), p = 0, end
    if pat == PAT_NONE:
        return [text] if text else []
    out = []
    while p < n:
        end = end_of(pat, s, n, p)
        out.append(data[p:end].decode("utf-8", "surrogatepass"))
        p = end
    return out


def utf8_error_offset(data):
    """-1 when ``data`` (bytes-like) is valid UTF-8, else the offset of the first bad byte."""
    cdef const unsigned char[::1] view = data
    if view.shape[0] == 0:
        return -1
    return utf8_error(&view[0], view.shape[0])


# ---------------------------------------------------------------------------
# Counting

cdef enum:
    SHORT_KEY = 16  # keys up to this many bytes live in their slot


cdef extern from *:
    """
    #include <string.h>
    /* w[0], w[1] = s[0:n] (n <= 16) zero-padded, laid out in memory as the
       bytes themselves. On little-endian machines by overlapping fixed-size
       loads, which compile to a few moves, not a call to memcpy. */
    static inline void bytepair_load16(const unsigned char* s, Py_ssize_t n, uint64_t* w) {
    #if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
        uint64_t a = 0, b = 0;
        if (n >= 8) {
            memcpy(&a, s, 8);
            if (n > 8) { memcpy(&b, s + n - 8, 8); b >>= 8 * (16 - n); }
        } else if (n >= 4) {
            uint32_t lo, hi;
            memcpy(&lo, s, 4);
            memcpy(&hi, s + n - 4, 4);
            a = (uint64_t)lo | (((uint64_t)hi >> (8 * (8 - n))) << 32);
        } else if (n > 0) {
            a = (uint64_t)s[0] | ((uint64_t)s[n >> 1] << (8 * (n >> 1))) | ((uint64_t)s[n - 1] << (8 * (n - 1)));
        }
        w[0] = a;
        w[1] = b;
    #else
        w[0] = 0;
        w[1] = 0;
        memcpy(w, s, (size_t)n);
    #endif
    }
    /* Zeroed memory for the slots (free() releases it). Tables of 2 MiB and
       more ask for transparent huge pages: a probe lands anywhere in the
       table, and with 4 KiB pages most probes of a large table also miss the TLB. */
    #if defined(__linux__)
    #include <stdlib.h>
    #include <sys/mman.h>
    static void* bytepair_zeroed_slots(size_t bytes) {
        const size_t huge = (size_t)1 << 21;
        void* memory = NULL;
        if (bytes < huge) return calloc(1, bytes);
        if (posix_memalign(&memory, huge, bytes) != 0) return NULL;
        madvise(memory, bytes, MADV_HUGEPAGE);
        memset(memory, 0, bytes);
        return memory;
    }
    #else
    static void* bytepair_zeroed_slots(size_t bytes) { return calloc(1, bytes); }
    #endif
    #if defined(__GNUC__) || defined(__clang__)
    #define BYTEPAIR_PREFETCH(address) __builtin_prefetch(address)
    #else
    #define BYTEPAIR_PREFETCH(address) ((void)0)
    #endif
    """
    void prefetch "BYTEPAIR_PREFETCH"(const void* address) noexcept nogil
    void load16 "bytepair_load16"(const unsigned char* s, Py_ssize_t n, uint64_t* words) noexcept nogil
    void* zeroed_slots "bytepair_zeroed_slots"(size_t bytes) noexcept nogil


cdef inline uint64_t mix(uint64_t h) noexcept nogil:
    # murmur3's 64-bit finaliser
    h ^= h >> 33
    h *= 0xFF51AFD7ED558CCDULL
    h ^= h >> 33
    h *= 0xC4CEB9FE1A85EC53ULL
    h ^= h >> 33
    return h


cdef inline uint32_t fingerprint_of(uint64_t h) noexcept nogil:
    # Never 0 (an empty slot); holds the slot's place too, so growing needs no key.
    return <uint32_t>(h >> 32) | 1


cdef inline Py_ssize_t home(uint32_t fingerprint, Py_ssize_t mask) noexcept nogil:
    # The first slot to probe (tables of up to 2**31 slots).
    return (fingerprint >> 1) & mask


cdef inline uint64_t hash_short(uint64_t w0, uint64_t w1, Py_ssize_t n) noexcept nogil:
    return mix((w0 * 0x9E3779B97F4A7C15ULL) ^ ((w1 + <uint64_t>n) * 0xC2B2AE3D27D4EB4FULL))


cdef inline uint64_t hash_long(const unsigned char* s, Py_ssize_t n) noexcept nogil:
    # Eight bytes at a time, multiply-xorshift mixing, then the finaliser.
    cdef uint64_t h = 0x9E3779B97F4A7C15ULL ^ (<uint64_t>n * 0xFF51AFD7ED558CCDULL)
    cdef uint64_t word
    while n >= 8:
        memcpy(&word, s, 8)
        h = (h ^ word) * 0xBF58476D1CE4E5B9ULL
        h ^= h >> 31
        s += 8
        n -= 8
    if n > 0:
        word = 0
        memcpy(&word, s, n)
        h = (h ^ word) * 0xBF58476D1CE4E5B9ULL
        h ^= h >> 31
    return mix(h)


cdef class PieceTable:
    """Counts of pieces (UTF-8 bytes -> int), in an open-addressing hash table.

    A slot (32 bytes) holds a hash fingerprint, the count and the key itself
    when it has at most 16 bytes (most pieces), so a probe touches one cache
    line; longer keys live one after another in one buffer. A probe is
    expected O(1); the table doubles when 60% full. Pickles compactly, so
    worker processes can send one back.

    >>> table = PieceTable()
    >>> table.count(b"one two\\ntwo", "gpt2", per_line=True)
    >>> sorted(table.items().items())
    [(b' two', 1), (b'one', 1), (b'two', 1)]
    """

    def __cinit__(self):
        self.capacity = 1024
        self.size = 0
        self.slots = <Slot*>zeroed_slots(self.capacity * sizeof(Slot))
        self.arena_capacity = 1 << 14
        self.arena_used = 0
        self.arena = <unsigned char*>realloc(NULL, self.arena_capacity)
        if self.slots == NULL or self.arena == NULL:
            raise MemoryError()

    def __dealloc__(self):
        free(self.slots)
        free(self.arena)

    cdef const unsigned char* key_of(self, Slot* slot) noexcept nogil:
        if slot.length <= SHORT_KEY:
            return <const unsigned char*>slot.word
        return self.arena + slot.word[0]

    cdef int grow(self) except -1 nogil:
        cdef Py_ssize_t capacity = self.capacity * 2, i, j
        cdef Py_ssize_t mask = capacity - 1
        cdef Slot* slots = <Slot*>zeroed_slots(capacity * sizeof(Slot))
        cdef Slot* old
        if slots == NULL:
            with gil:
                raise MemoryError()
        for i in range(self.capacity):
            old = &self.slots[i]
            if old.fingerprint:
                j = home(old.fingerprint, mask)
                while slots[j].fingerprint:
                    j = (j + 1) & mask
                slots[j] = old[0]
        free(self.slots)
        self.slots = slots
        self.capacity = capacity
        return 0

    cdef void prepare(self, Piece* piece, const unsigned char* s, Py_ssize_t n) noexcept nogil:
        piece.s = s
        piece.n = n
        if n <= SHORT_KEY:
            load16(s, n, piece.word)
            piece.hash = hash_short(piece.word[0], piece.word[1], n)
        else:
            piece.hash = hash_long(s, n)
        prefetch(&self.slots[home(fingerprint_of(piece.hash), self.capacity - 1)])

    cdef int add_prepared(self, Piece* piece, int64_t count) except -1 nogil:
        cdef Py_ssize_t n = piece.n
        cdef uint64_t h = piece.hash
        cdef uint32_t fingerprint = fingerprint_of(h)
        cdef Py_ssize_t mask = self.capacity - 1
        cdef Py_ssize_t i = home(fingerprint, mask), need
        cdef Slot* slot
        cdef unsigned char* arena
        if n <= SHORT_KEY:
            while True:
                slot = &self.slots[i]
                if slot.fingerprint == 0:
                    break
                if slot.word[0] == piece.word[0] and slot.word[1] == piece.word[1] and slot.length == n:
                    slot.count += count
                    return 0
                i = (i + 1) & mask
            slot.word[0] = piece.word[0]
            slot.word[1] = piece.word[1]
        else:
            while True:
                slot = &self.slots[i]
                if slot.fingerprint == 0:
                    break
                if (slot.fingerprint == fingerprint and slot.length == n
                        and memcmp(self.arena + slot.word[0], piece.s, n) == 0):
                    slot.count += count
                    return 0
                i = (i + 1) & mask
            if <uint64_t>n >= 0xFFFFFFFFULL:
                with gil:
                    raise OverflowError(f"a piece of {n} bytes is too long to count (limit 4 GiB)")
            need = self.arena_used + n
            if need > self.arena_capacity:
                while need > self.arena_capacity:
                    self.arena_capacity *= 2
                arena = <unsigned char*>realloc(self.arena, self.arena_capacity)
                if arena == NULL:
                    with gil:
                        raise MemoryError()
                self.arena = arena
            memcpy(self.arena + self.arena_used, piece.s, n)
            slot.word[0] = self.arena_used
            slot.word[1] = 0
            self.arena_used = need
        slot.fingerprint = fingerprint
        slot.length = <uint32_t>n
        slot.count = count
        self.size += 1
        if self.size * 5 >= self.capacity * 3:
            self.grow()
        return 0

    cdef int add(self, const unsigned char* s, Py_ssize_t n, int64_t count) except -1 nogil:
        cdef Piece piece
        self.prepare(&piece, s, n)
        return self.add_prepared(&piece, count)

    cdef int push(self, Ring* ring, const unsigned char* s, Py_ssize_t n) except -1 nogil:
        # Each piece's slot is prefetched while the next AHEAD pieces are
        # found, which hides most cache misses of a large table behind the scanning.
        if ring.found - ring.done == AHEAD:
            self.add_prepared(&ring.pieces[ring.done % AHEAD], 1)
            ring.done += 1
        self.prepare(&ring.pieces[ring.found % AHEAD], s, n)
        ring.found += 1
        return 0

    cdef int drain(self, Ring* ring) except -1 nogil:
        while ring.done < ring.found:
            self.add_prepared(&ring.pieces[ring.done % AHEAD], 1)
            ring.done += 1
        return 0

    cdef int scan(self, Ring* ring, int pattern, const unsigned char* s, Py_ssize_t n) except -1 nogil:
        cdef Py_ssize_t p = 0, end
        if pattern == PAT_NONE:
            if n:
                self.push(ring, s, n)
            return 0
        while p < n:
            end = end_of(pattern, s, n, p)
            self.push(ring, s + p, end - p)
            p = end
        return 0

    cdef int count_valid(self, int pattern, const unsigned char* s, Py_ssize_t n) except -1 nogil:
        cdef Ring ring
        ring.found = ring.done = 0
        self.scan(&ring, pattern, s, n)
        return self.drain(&ring)

    cdef Py_ssize_t count_text(self, int pattern, const unsigned char* s, Py_ssize_t n) except -2 nogil:
        cdef Py_ssize_t bad
        if pattern != PAT_NONE:
            bad = utf8_error(s, n)
            if bad >= 0:
                return bad
        self.count_valid(pattern, s, n)
        return -1

    cdef Py_ssize_t count_lines(self, int pattern, const unsigned char* s, Py_ssize_t n) except -2 nogil:
        cdef Py_ssize_t start = 0, stop, next_start, bad
        cdef const unsigned char* newline
        cdef Ring ring
        ring.found = ring.done = 0
        if pattern != PAT_NONE:
            # "\n" is never part of a multi-byte sequence, so the first bad
            # byte of the buffer is the first bad byte of the first bad line.
            bad = utf8_error(s, n)
            if bad >= 0:
                return bad
        while start < n:
            newline = <const unsigned char*>memchr(s + start, 10, n - start)
            if newline == NULL:
                stop = n
                next_start = n
            else:
                stop = newline - s
                next_start = stop + 1
                if stop > start and s[stop - 1] == 13:
                    stop -= 1
            self.scan(&ring, pattern, s + start, stop - start)
            start = next_start
        self.drain(&ring)
        return -1

    cdef int merge_from(self, PieceTable other) except -1:
        cdef Py_ssize_t i
        cdef Slot* slot
        for i in range(other.capacity):
            slot = &other.slots[i]
            if slot.fingerprint:
                self.add(other.key_of(slot), slot.length, slot.count)
        return 0

    def count(self, data, pattern, *, bint per_line=False, offsets=None):
        """Split the UTF-8 ``data`` (bytes-like) with the named ``pattern`` and count its pieces.

        ``pattern`` is a name of ``PATTERN_IDS`` or None (each document is one
        piece; any bytes). Documents: all of ``data``; with ``per_line`` each
        line (one "\\n" or "\\r\\n" stripped); with ``offsets`` (a flat buffer of
        int64 start, end pairs such as ``array("q")``, or an iterable of
        ``(start, end)``) each ``data[start:end]``. Empty documents are
        skipped. Invalid UTF-8 raises :class:`InvalidUTF8` with the offset of
        the first bad byte in ``data``; with ``offsets`` the table may then
        hold the counts of the documents before it. O(len(data)) without the GIL.
        """
        cdef int pat = pattern_id(pattern)
        cdef const unsigned char[::1] view
        cdef const int64_t[::1] bounds
        try:
            view = data
        except (TypeError, ValueError):
            raise TypeError(f"data must be a contiguous bytes-like object, got {type(data).__name__}") from None
        cdef Py_ssize_t n = view.shape[0], bad = -1, i, start, stop
        cdef const unsigned char* s = &view[0] if n else <const unsigned char*>b""
        if per_line and offsets is not None:
            raise ValueError("give per_line or offsets, not both")
        if offsets is None:
            with nogil:
                if per_line:
                    bad = self.count_lines(pat, s, n)
                else:
                    bad = self.count_text(pat, s, n)
        else:
            try:
                bounds = offsets
            except (TypeError, ValueError):  # not an int64 buffer: (start, end) pairs
                bounds = array("q", [int(x) for pair in offsets for x in pair])
            if bounds.shape[0] % 2:
                raise ValueError("offsets must hold (start, end) pairs: an even number of int64")
            for i in range(0, bounds.shape[0], 2):
                start, stop = bounds[i], bounds[i + 1]
                if not 0 <= start <= stop <= n:
                    raise ValueError(f"offsets: document {i // 2} ({start}, {stop}) is outside 0..{n}")
            with nogil:
                for i in range(0, bounds.shape[0], 2):
                    start = bounds[i]
                    bad = self.count_text(pat, s + start, bounds[i + 1] - start)
                    if bad >= 0:
                        bad += start
                        break
        if bad >= 0:
            raise InvalidUTF8(bad)

    def add_text(self, str text, pattern):
        """Count the pieces of one document given as str (lone surrogates allowed)."""
        cdef int pat = pattern_id(pattern)
        cdef bytes data = text.encode("utf-8", "surrogatepass")
        cdef const unsigned char* s = <const unsigned char*>PyBytes_AS_STRING(data)
        cdef Py_ssize_t n = len(data)
        with nogil:
            self.count_valid(pat, s, n)

    def add_documents(self, documents, pattern):
        """Count the pieces of every str in ``documents``."""
        for text in documents:
            self.add_text(text, pattern)

    def merge(self, PieceTable other):
        """Add every count of ``other`` into this table."""
        self.merge_from(other)

    def __len__(self):
        return self.size

    def items(self):
        """``{piece_bytes: count}``."""
        out = {}
        cdef Py_ssize_t i
        cdef Slot* slot
        for i in range(self.capacity):
            slot = &self.slots[i]
            if slot.fingerprint:
                out[PyBytes_FromStringAndSize(<const char*>self.key_of(slot), slot.length)] = slot.count
        return out

    def arrays(self):
        """``(data, starts, counts)``: every piece laid end to end in ``data``, ``starts``
        (``array("q")``: each piece's offset, then ``len(data)``) and ``counts``
        (``array("q")``), in the table's own order.

        What the merge loop's engine reads, with no Python object per piece.
        O(pieces + bytes).

        >>> table = PieceTable()
        >>> table.count(b"ab ab c", "gpt2")
        >>> data, starts, counts = table.arrays()
        >>> sorted((data[a:b], n) for a, b, n in zip(starts, starts[1:], counts))
        [(b' ab', 1), (b' c', 1), (b'ab', 1)]
        """
        cdef Py_ssize_t i, k = 0, total = 0, at = 0
        cdef Slot* slot
        for i in range(self.capacity):
            if self.slots[i].fingerprint:
                total += self.slots[i].length
        data = PyBytes_FromStringAndSize(NULL, total)
        starts = array("q", bytes(8 * (self.size + 1)))
        counts = array("q", bytes(8 * self.size))
        cdef unsigned char* buffer = <unsigned char*>PyBytes_AS_STRING(data)
        cdef int64_t[::1] at_of = starts
        cdef int64_t[::1] count_of = counts
        for i in range(self.capacity):
            slot = &self.slots[i]
            if slot.fingerprint:
                memcpy(buffer + at, self.key_of(slot), slot.length)
                at_of[k] = at
                count_of[k] = slot.count
                at += slot.length
                k += 1
        at_of[k] = at
        return data, starts, counts

    def to_bytes(self):
        """The counts as one bytes object: per piece, int64 count, uint32 length, the bytes."""
        cdef Py_ssize_t i, total = 0, at = 0
        cdef Slot* slot
        for i in range(self.capacity):
            if self.slots[i].fingerprint:
                total += 12 + self.slots[i].length
        out = PyBytes_FromStringAndSize(NULL, total)
        cdef unsigned char* buffer = <unsigned char*>PyBytes_AS_STRING(out)
        for i in range(self.capacity):
            slot = &self.slots[i]
            if slot.fingerprint:
                memcpy(buffer + at, &slot.count, 8)
                memcpy(buffer + at + 8, &slot.length, 4)
                memcpy(buffer + at + 12, self.key_of(slot), slot.length)
                at += 12 + slot.length
        return out

    @staticmethod
    def from_bytes(data):
        """The table that ``to_bytes`` wrote."""
        cdef PieceTable table = PieceTable()
        cdef const unsigned char[::1] view = data
        cdef Py_ssize_t n = view.shape[0], at = 0
        cdef const unsigned char* base = &view[0] if n else <const unsigned char*>b""
        cdef int64_t count
        cdef uint32_t length
        while at < n:
            if at + 12 > n:
                raise ValueError("truncated piece table")
            memcpy(&count, base + at, 8)
            memcpy(&length, base + at + 8, 4)
            if at + 12 + length > n:
                raise ValueError("truncated piece table")
            table.add(base + at + 12, length, count)
            at += 12 + length
        return table

    def __reduce__(self):
        return (PieceTable.from_bytes, (self.to_bytes(),))


def number_of_pieces(data, pattern):
    """How many pieces the valid UTF-8 ``data`` splits into (split alone, to time it). O(len(data))."""
    cdef int pat = pattern_id(pattern)
    cdef const unsigned char[::1] view = data
    cdef Py_ssize_t n = view.shape[0], p = 0, pieces = 0
    if n == 0 or pat == PAT_NONE:
        return 1 if n else 0
    if utf8_error(&view[0], n) >= 0:
        raise InvalidUTF8(utf8_error(&view[0], n))
    with nogil:
        while p < n:
            p = end_of(pat, &view[0], n, p)
            pieces += 1
    return pieces

