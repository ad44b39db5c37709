# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False, cdivision=True
# distutils: language = c++
"""Counting sentencepiece's words in compiled code, every rule, into a piece table (the compiled
twin of :meth:`bytepair.split.spm_text.SentenceText.block_words` followed by a count).

For each line of a buffer (sentencepiece 0.2.3, ``normalizer.cc`` and ``trainer_interface.cc``):
empty lines, lines over the length limit and lines holding U+2585 are skipped; the line is
normalised as sentencepiece's ``Normalizer`` does it: at each position the longest rule of
the precompiled character map (a darts-clone double array; none for ``identity``) gives the
replacement, else the character is kept (a malformed byte becomes U+FFFD, not looked up);
leading spaces, runs of spaces and trailing ``▁`` are removed (``remove_extra``), the dummy
``▁`` is put first (last as a suffix), each space is written ``▁``; every meta piece
becomes U+001F, the longest first (``PrefixMatcher::GlobalReplace``); the sentence is cut
into words as ``SplitIntoWords`` does. The words are counted into a
``bytepair.split._split.PieceTable`` without the GIL, so threads count blocks at once,
each into a table of its own.
"""

from cpython.unicode cimport PyUnicode_DecodeASCII
from libc.stdint cimport int64_t, uint8_t, uint16_t, uint32_t
from libc.string cimport memchr, memcmp, memcpy
from libcpp.string cimport string
from libcpp.vector cimport vector
from libcpp cimport bool as cbool

from bytepair.split._split cimport PieceTable, Ring, utf8_error as _utf8_error

from array import array

cdef extern from *:
    """
    static const char SPM_SPACE[] = "\\xe2\\x96\\x81";
    static const char SPM_REPLACEMENT[] = "\\xef\\xbf\\xbd";
    static const char SPM_BOUNDARY[] = "\\x1f";
    """
    const char* SPM_SPACE
    const char* SPM_REPLACEMENT
    const char* SPM_BOUNDARY

# darts-clone's unit: a label (the byte, or a leaf mark), a value, an offset and its scale bit.
cdef uint32_t LABEL_MASK = 0x800000FF
cdef uint32_t VALUE_MASK = 0x7FFFFFFF
cdef uint32_t OFFSET_SHIFT_BIT = 0x200

#: Normalised text (of whole lines) is counted in batches of about this many bytes.
cdef size_t FLUSH_BYTES = 1 << 20


cdef inline size_t valid_char(const unsigned char* s, size_t n) noexcept nogil:
    # The length of the UTF-8 character at s (n > 0 bytes left), 0 when malformed: sentencepiece's
    # DecodeUTF8 (no surrogates, no overlong forms, nothing past U+10FFFF).
    cdef unsigned char c = s[0]
    cdef uint32_t cp
    if c < 0x80:
        return 1
    if n >= 2 and (c & 0xE0) == 0xC0 and (s[1] & 0xC0) == 0x80:
        cp = ((c & 0x1F) << 6) | (s[1] & 0x3F)
        return 2 if cp >= 0x80 else 0
    if n >= 3 and (c & 0xF0) == 0xE0 and (s[1] & 0xC0) == 0x80 and (s[2] & 0xC0) == 0x80:
        cp = ((c & 0x0F) << 12) | ((s[1] & 0x3F) << 6) | (s[2] & 0x3F)
        return 3 if cp >= 0x800 and not (0xD800 <= cp <= 0xDFFF) else 0
    if (n >= 4 and (c & 0xF8) == 0xF0 and (s[1] & 0xC0) == 0x80 and (s[2] & 0xC0) == 0x80
            and (s[3] & 0xC0) == 0x80):
        cp = ((c & 0x07) << 18) | ((s[1] & 0x3F) << 12) | ((s[2] & 0x3F) << 6) | (s[3] & 0x3F)
        return 4 if 0x10000 <= cp <= 0x10FFFF else 0
    return 0


cdef inline size_t char_len(unsigned char c) noexcept nogil:
    # sentencepiece's OneCharLen: the length its lead byte announces.
    return 1 if c < 0x80 else 2 if (c & 0xE0) == 0xC0 else 3 if (c & 0xF0) == 0xE0 else 4 if (c & 0xF8) == 0xF0 else 1


cdef inline cbool ends_with_space(const string& s, size_t floor) noexcept nogil:
    cdef size_t n = s.size()
    return (n >= floor + 3 and <unsigned char>s[n - 3] == 0xE2 and <unsigned char>s[n - 2] == 0x96
            and <unsigned char>s[n - 1] == 0x81)


cdef inline cbool is_space_at(const unsigned char* s, size_t n, size_t i) noexcept nogil:
    return i + 2 < n and s[i] == 0xE2 and s[i + 1] == 0x96 and s[i + 2] == 0x81


cdef class SentenceCounter:
    """Lines -> normalised words -> counts in a ``PieceTable``, under fixed rules. Shared by
    threads (read-only once made); each thread counts into a table of its own.

    ``charsmap``: the rule's precompiled character map (``b""`` for ``identity``);
    ``metas``: the meta pieces, each made the boundary U+001F in the normalised text.

    >>> from bytepair.split._split import PieceTable
    >>> counter = SentenceCounter(b"", 4192, True, True, False, False, True, [])
    >>> table = PieceTable()
    >>> counter.count(table, b"a  b\\nb\\n")
    0
    >>> sorted((k.decode(), v) for k, v in table.items().items())
    [('\u2581a', 1), ('\u2581b', 2)]
    """

    cdef vector[uint32_t] units
    cdef string replacements
    cdef cbool direct[256]      # no rule starts with this (ASCII) byte: it is kept as it is
    cdef cbool plain[256]       # direct, and not a space
    cdef vector[uint8_t] direct_bmp  # bit c: no rule starts with code point c (U+0080-U+FFFF), kept as it is
    cdef int meta_byte          # the first byte of every meta piece, when they share it; else -1
    cdef cbool meta_first[256]
    cdef vector[string] metas    # longest first
    cdef long long limit
    cdef cbool remove_extra, prefix, suffix, ws_suffix, ws_only, by_whitespace

    def __init__(self, bytes charsmap, long long limit, bint remove_extra, bint add_dummy_prefix,
                 bint treat_whitespace_as_suffix, bint allow_whitespace_only_pieces,
                 bint split_by_whitespace, metas):
        cdef uint32_t trie_bytes
        cdef size_t k
        cdef unsigned char b
        if charsmap:
            if len(charsmap) <= 4:
                raise ValueError("charsmap: too short for sentencepiece's precompiled map")
            memcpy(&trie_bytes, <const char*>charsmap, 4)  # little-endian, as sentencepiece writes it
            if trie_bytes >= len(charsmap) - 4 or trie_bytes % 4:
                raise ValueError("charsmap: its trie size does not fit the map")
            self.units.resize(trie_bytes // 4)
            memcpy(self.units.data(), (<const char*>charsmap) + 4, trie_bytes)
            self.replacements = charsmap[4 + trie_bytes:]
        for k in range(256):
            b = <unsigned char>k
            self.direct[k] = k < 0x80 and not self.starts_rule(b)
            self.plain[k] = self.direct[k] and k != 32
            self.meta_first[k] = False
        self.mark_direct_bmp()
        for piece in sorted(set(metas), key=lambda p: (-len(p), p)):
            if piece:
                self.metas.push_back(piece)
                self.meta_first[(<bytes>piece)[0]] = True
        firsts = {piece[0] for piece in metas if piece}
        self.meta_byte = firsts.pop() if len(firsts) == 1 else -1
        self.limit = limit
        self.remove_extra = remove_extra
        self.prefix = add_dummy_prefix and not treat_whitespace_as_suffix
        self.suffix = add_dummy_prefix and treat_whitespace_as_suffix
        self.ws_suffix = treat_whitespace_as_suffix  # words end with their ▁, dummy or not
        self.ws_only = allow_whitespace_only_pieces
        self.by_whitespace = split_by_whitespace

    cdef void mark_direct_bmp(self) noexcept:
        # Most text outside ASCII has no rule either (nmt_nfkc rewrites compatibility forms
        # only): a bit per code point spares step() the walk down the trie for them.
        cdef unsigned char utf8[3]
        cdef uint32_t cp
        cdef size_t n
        self.direct_bmp.assign(0x10000 // 8, 0)
        for cp in range(0x80, 0x10000):
            if 0xD800 <= cp <= 0xDFFF:
                continue
            if cp < 0x800:
                utf8[0] = 0xC0 | (cp >> 6)
                utf8[1] = 0x80 | (cp & 0x3F)
                n = 2
            else:
                utf8[0] = 0xE0 | (cp >> 12)
                utf8[1] = 0x80 | ((cp >> 6) & 0x3F)
                utf8[2] = 0x80 | (cp & 0x3F)
                n = 3
            if not self.rule_path(utf8, n):
                self.direct_bmp[cp >> 3] |= 1 << (cp & 7)

    cdef cbool rule_path(self, const unsigned char* s, size_t n) noexcept nogil:
        # Whether some rule of the map starts with the n bytes s (all of them walk the trie).
        cdef size_t size = self.units.size(), i
        cdef uint32_t unit, node
        if size == 0:
            return False
        unit = self.units[0]
        node = (unit >> 10) << ((unit & OFFSET_SHIFT_BIT) >> 6)
        for i in range(n):
            node ^= s[i]
            if node >= size:
                return False
            unit = self.units[node]
            if (unit & LABEL_MASK) != s[i]:
                return False
            node ^= (unit >> 10) << ((unit & OFFSET_SHIFT_BIT) >> 6)
        return True

    cdef cbool starts_rule(self, unsigned char b) noexcept nogil:
        # Whether some rule of the map starts with byte b (darts-clone's first step).
        cdef size_t size = self.units.size()
        cdef uint32_t unit, node
        if size == 0:
            return False
        unit = self.units[0]
        node = ((unit >> 10) << ((unit & OFFSET_SHIFT_BIT) >> 6)) ^ b
        return node < size and (self.units[node] & LABEL_MASK) == b

    cdef size_t longest_rule(self, const unsigned char* s, size_t n, const char** replacement) noexcept nogil:
        # darts-clone's commonPrefixSearch, keeping the longest key: its length, 0 when none.
        cdef size_t size = self.units.size(), i, longest = 0
        cdef uint32_t unit, node, value = 0
        if size == 0:
            return 0
        unit = self.units[0]
        node = (unit >> 10) << ((unit & OFFSET_SHIFT_BIT) >> 6)
        for i in range(n):
            node ^= s[i]
            if node >= size:
                break
            unit = self.units[node]
            if (unit & LABEL_MASK) != s[i]:
                break
            node ^= (unit >> 10) << ((unit & OFFSET_SHIFT_BIT) >> 6)
            if (unit >> 8) & 1:
                if node >= size:
                    break
                longest = i + 1
                value = self.units[node] & VALUE_MASK
        if longest and replacement != NULL:
            if value >= self.replacements.size():
                return 0
            replacement[0] = self.replacements.c_str() + value
        return longest

    cdef size_t step(self, const unsigned char* s, size_t n, const char** out, size_t* out_n) noexcept nogil:
        # NormalizePrefix: the bytes consumed at s, and what they become (out, out_n).
        cdef const char* replacement = NULL
        cdef size_t length, k
        cdef uint32_t cp
        if s[0] < 0x80:
            if self.direct[s[0]]:
                out[0] = <const char*>s
                out_n[0] = 1
                return 1
        elif n >= 2 and (s[0] & 0xE0) == 0xC0 and s[0] >= 0xC2 and (s[1] & 0xC0) == 0x80:
            cp = ((s[0] & 0x1F) << 6) | (s[1] & 0x3F)
            if self.direct_bmp[cp >> 3] & (1 << (cp & 7)):
                out[0] = <const char*>s
                out_n[0] = 2
                return 2
        elif n >= 3 and (s[0] & 0xF0) == 0xE0 and (s[1] & 0xC0) == 0x80 and (s[2] & 0xC0) == 0x80:
            cp = ((s[0] & 0x0F) << 12) | ((s[1] & 0x3F) << 6) | (s[2] & 0x3F)
            if cp >= 0x800 and self.direct_bmp[cp >> 3] & (1 << (cp & 7)):  # not overlong; no bit for surrogates
                out[0] = <const char*>s
                out_n[0] = 3
                return 3
        length = self.longest_rule(s, n, &replacement)
        if length:
            k = 0
            while replacement[k]:
                k += 1
            out[0] = replacement
            out_n[0] = k
            return length
        length = valid_char(s, n)
        if length == 0:
            out[0] = SPM_REPLACEMENT
            out_n[0] = 3
            return 1
        out[0] = <const char*>s
        out_n[0] = length
        return length

    cdef void normalize(self, const unsigned char* line, size_t n, string& out) noexcept nogil:
        # Normalizer::Normalize of one line, appended to out (nothing when it is all spaces).
        cdef size_t i = 0, j, used, got, k, floor = out.size()
        cdef const char* piece
        cdef cbool previous_space
        if self.remove_extra:
            while i < n:
                used = self.step(line + i, n - i, &piece, &got)
                if got != 1 or piece[0] != b' ':
                    break
                i += used
        if i == n:
            return
        if self.prefix:
            out.append(SPM_SPACE, 3)
        previous_space = self.remove_extra
        while i < n:
            j = i
            while j < n and self.plain[line[j]]:  # a run kept as it is, no space in it
                j += 1
            if j > i:
                out.append(<const char*>line + i, j - i)
                previous_space = False
                i = j
                continue
            used = self.step(line + i, n - i, &piece, &got)
            k = 0
            if previous_space:
                while k < got and piece[k] == b' ':
                    k += 1
            if k < got:
                while k < got:
                    if piece[k] == b' ':
                        out.append(SPM_SPACE, 3)
                    else:
                        out.push_back(piece[k])
                    k += 1
                previous_space = piece[got - 1] == b' '
            i += used
            if not self.remove_extra:
                previous_space = False
        if self.remove_extra:
            while ends_with_space(out, floor):
                out.resize(out.size() - 3)
        if self.suffix:
            out.append(SPM_SPACE, 3)

    cdef void replace_metas(self, string& s, size_t floor, string& scratch) noexcept nogil:
        # PrefixMatcher::GlobalReplace of s[floor:]: each meta piece (longest first) -> U+001F.
        cdef size_t i = floor, n = s.size(), m, length
        cdef const unsigned char* p = <const unsigned char*>s.data()
        cdef cbool found = False
        if self.meta_byte >= 0:
            found = memchr(p + i, self.meta_byte, n - i) != NULL
        else:
            while i < n and not found:
                found = self.meta_first[p[i]]
                i += 1
        if not found:
            return
        scratch.assign(s, floor, n - floor)
        s.resize(floor)
        p = <const unsigned char*>scratch.data()
        n = scratch.size()
        i = 0
        while i < n:
            if self.meta_first[p[i]]:
                for m in range(self.metas.size()):
                    length = self.metas[m].size()
                    if (length <= n - i and (length == 1 or p[i + 1] == <unsigned char>self.metas[m][1])
                            and memcmp(p + i, self.metas[m].data(), length) == 0):
                        s.append(SPM_BOUNDARY, 1)
                        i += length
                        break
                else:
                    length = char_len(p[i])
                    length = length if length <= n - i else n - i
                    s.append(<const char*>p + i, length)
                    i += length
            else:
                s.push_back(<char>p[i])
                i += 1

    cdef void cut_words(self, const string& s, size_t start, vector[size_t]& ends) noexcept nogil:
        # SplitIntoWords of the sentence s[start:]: the end of each word (words cover it all).
        cdef size_t i = start, n = s.size(), step
        cdef const unsigned char* p = <const unsigned char*>s.data()
        cdef cbool space, in_space = False
        cdef const unsigned char* at
        if not self.by_whitespace:
            ends.push_back(n)
            return
        if not self.ws_suffix:  # a word starts at each ▁ (with ws_only, at each run of them)
            while True:
                at = <const unsigned char*>memchr(p + i, 0xE2, n - i)
                if at == NULL:
                    break
                i = <size_t>(at - p)
                if is_space_at(p, n, i) and i > start and not (
                        self.ws_only and i - start >= 3 and is_space_at(p, n, i - 3)):
                    ends.push_back(i)
                    start = i
                i += 1
            ends.push_back(n)
            return
        while i < n:
            space = is_space_at(p, n, i)
            step = 3 if space else char_len(p[i])
            if self.ws_suffix:
                if i > start and not space and in_space and self.ws_only:
                    ends.push_back(i)
                    start = i
                in_space = space
                i += step
                if space and i < n and not self.ws_only:
                    ends.push_back(i)
                    start = i
            else:
                if i > start and space and (not in_space or not self.ws_only):
                    ends.push_back(i)
                    start = i
                if i == start:
                    in_space = True
                if in_space and not space:
                    in_space = False
                i += step
        if n > start:
            ends.push_back(n)

    cdef cbool skipped(self, const unsigned char* line, size_t n) noexcept nogil:
        # A line spm_train leaves out for holding U+2585 (its mark of an unknown character).
        cdef const unsigned char* at = line
        cdef const unsigned char* end = line + n
        while True:
            at = <const unsigned char*>memchr(at, 0xE2, end - at)
            if at == NULL or at + 2 >= end:
                return False
            if at[1] == 0x96 and at[2] == 0x85:
                return True
            at += 1

    cdef int flush(self, PieceTable table, string& text, vector[size_t]& ends) except -1 nogil:
        cdef Ring ring
        cdef size_t w, start = 0
        cdef const unsigned char* base = <const unsigned char*>text.data()
        ring.found = ring.done = 0
        ring.limit = base + text.size()
        for w in range(ends.size()):
            table.push(&ring, base + start, ends[w] - start)
            start = ends[w]
        table.drain(&ring)
        text.clear()
        ends.clear()
        return 0

    cdef long long count_lines(self, PieceTable table, const unsigned char* data, size_t n) except -1 nogil:
        cdef string text, scratch
        cdef vector[size_t] ends
        cdef size_t start = 0, end, floor
        cdef long long too_long = 0
        cdef const unsigned char* newline
        text.reserve(FLUSH_BYTES + (FLUSH_BYTES >> 1))
        while start < n:
            newline = <const unsigned char*>memchr(data + start, 10, n - start)
            end = <size_t>(newline - data) if newline != NULL else n
            if end == start:
                pass
            elif <long long>(end - start) > self.limit:
                too_long += 1
            elif not self.skipped(data + start, end - start):
                floor = text.size()
                self.normalize(data + start, end - start, text)
                if not self.metas.empty():
                    self.replace_metas(text, floor, scratch)
                if text.size() > floor:
                    self.cut_words(text, floor, ends)
                    if text.size() >= FLUSH_BYTES:
                        self.flush(table, text, ends)
            start = end + 1
        self.flush(table, text, ends)
        return too_long

    def count(self, PieceTable table, data):
        """Count the words of the lines of ``data`` (bytes-like) into ``table``; return how many
        lines were skipped as longer than the limit. O(len(data)) without the GIL."""
        cdef const unsigned char[::1] view = data
        cdef size_t n = view.shape[0]
        cdef long long too_long
        if n == 0:
            return 0
        with nogil:
            too_long = self.count_lines(table, &view[0], n)
        return too_long

    def sentence(self, bytes line):
        """The normalised sentence of one line, meta pieces made U+001F (``b""``: nothing left), as
        bytes; the line is not checked for length or U+2585."""
        cdef string text, scratch
        cdef const unsigned char* s = <const unsigned char*>line
        self.normalize(s, len(line), text)
        if not self.metas.empty():
            self.replace_metas(text, 0, scratch)
        return <bytes>text


cdef extern from "Python.h":
    object PyUnicode_New(Py_ssize_t size, Py_UCS4 maxchar)
    void* PyUnicode_DATA(object o)


cdef int check_flat(Py_ssize_t size, const int64_t[::1] at, Py_ssize_t words) except -1:
    # Offsets that stay inside the data and never go back, one more than the words.
    cdef Py_ssize_t i
    if at.shape[0] != words + 1 or (words >= 0 and (at[0] < 0 or at[words] > size)):
        raise ValueError("flat words: starts must hold one offset a word, then the end")
    for i in range(words):
        if at[i + 1] < at[i]:
            raise ValueError("flat words: starts go back")
    return 0


cdef inline Py_UCS4 next_char(const unsigned char* s, Py_ssize_t* i) noexcept nogil:
    # The character of valid UTF-8 at s[i[0]]; moves i past it.
    cdef unsigned char b = s[i[0]]
    if b < 0x80:
        i[0] += 1
        return b
    if b < 0xE0:
        i[0] += 2
        return ((b & 0x1F) << 6) | (s[i[0] - 1] & 0x3F)
    if b < 0xF0:
        i[0] += 3
        return ((b & 0x0F) << 12) | ((s[i[0] - 2] & 0x3F) << 6) | (s[i[0] - 1] & 0x3F)
    i[0] += 4
    return ((b & 0x07) << 18) | ((s[i[0] - 3] & 0x3F) << 12) | ((s[i[0] - 2] & 0x3F) << 6) | (s[i[0] - 1] & 0x3F)


cdef object decoded(const unsigned char* s, Py_ssize_t n):
    # The str of s[0:n], a part of valid UTF-8 (as the counter writes it) cut at character
    # ends, made in two passes over the bytes: its length and largest character, then the
    # characters at their width (faster than the codec, which guesses the width and widens).
    cdef Py_ssize_t i = 0, length = 0, k = 0
    cdef Py_UCS4 top = 0, c
    cdef unsigned char b
    while i < n:
        b = s[i]
        if 0x80 <= b < 0xC0 or i + (1 if b < 0x80 else 2 if b < 0xE0 else 3 if b < 0xF0 else 4) > n:
            raise ValueError("flat words: a word is cut inside a character")
        c = next_char(s, &i)
        top = c if c > top else top
        length += 1
    if length == n:
        return PyUnicode_DecodeASCII(<const char*>s, n, NULL)
    text = PyUnicode_New(length, top)
    cdef void* out = PyUnicode_DATA(text)
    i = 0
    while i < n:
        c = next_char(s, &i)
        if top < 0x100:
            (<uint8_t*>out)[k] = <uint8_t>c
        elif top < 0x10000:
            (<uint16_t*>out)[k] = <uint16_t>c
        else:
            (<Py_UCS4*>out)[k] = c
        k += 1
    return text


def iter_words(data, starts, counts=None):
    """Each word of flat arrays of UTF-8 words (``PieceTable.arrays()``'s layout) as a ``str``, in
    table order; with ``counts``, ``(word, count)`` pairs. One word made at a time: no table of
    them is held. Words that are not UTF-8 are refused.

    >>> list(iter_words("\u2581a\u2581".encode(), array("q", [0, 4, 7]), array("q", [2, 1])))
    [('\u2581a', 2), ('\u2581', 1)]
    """
    cdef const unsigned char[::1] view = data
    cdef const int64_t[::1] at = starts
    cdef const int64_t[::1] number
    cdef Py_ssize_t i, words = at.shape[0] - 1
    cdef const unsigned char* base = &view[0] if view.shape[0] else NULL
    if _utf8_error(base, view.shape[0]) >= 0:
        raise ValueError("iter_words: the words are not UTF-8")
    check_flat(view.shape[0], at, words)
    if counts is None:
        for i in range(words):
            yield decoded(base + at[i], at[i + 1] - at[i])
        return
    number = counts
    if number.shape[0] != words:
        raise ValueError("iter_words: one count a word")
    for i in range(words):
        yield decoded(base + at[i], at[i + 1] - at[i]), number[i]
