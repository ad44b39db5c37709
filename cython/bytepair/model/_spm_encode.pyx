# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False, cdivision=True
# distutils: language = c++
"""Compiled encoder of a sentencepiece BPE model, equal to the Python
``bytepair.model.spm_model.SentencePieceModel.encode_pieces`` (the reference).

The normalised text is cut into symbols: a user-defined symbol (the longest
one at a position) stays whole and never merges, every other character is a
symbol of its own. Then, again and again, the adjacent pair whose joined
string is a normal or user-defined piece with the highest score is merged,
the leftmost among equal scores (a binary heap of candidates and a doubly
linked list of symbols: O(n log n) in the text's length).

Every symbol is a span of the text and a merge joins two adjacent spans, so a
candidate is the position of its left symbol and its joined length: it is
stale, and skipped, when the left symbol's span and the next one's no longer
add up to that length (equal lengths from one start are equal strings, which
is the reference's test).

Pieces are found by their code points in an open-addressing table (the first
ID of a string wins, as the reference's ``ids`` dict does).
"""

from array import array

cimport cpython.array as carray
from cpython.array cimport array
from libc.stdint cimport int32_t, int64_t, uint8_t, uint16_t, uint32_t, uint64_t
from libc.string cimport memcmp
from libcpp.vector cimport vector

from bytepair.model._hashing cimport hash_bytes

cdef extern from "Python.h":
    int PyUnicode_KIND(object text)
    void* PyUnicode_DATA(object text)
    Py_ssize_t PyUnicode_GET_LENGTH(object text)

# sentencepiece's piece types, as bytepair.model.spm_model names them.
cdef enum:
    NORMAL = 1
    UNKNOWN = 2
    CONTROL = 3
    USER_DEFINED = 4
    UNUSED = 5
    BYTE = 6

cdef struct Candidate:
    double score
    int32_t left    # the left symbol (its index: the order of positions)
    int32_t size    # the joined length, in code points


cdef inline bint before(Candidate a, Candidate b) noexcept:
    """sentencepiece's order of candidates: the highest score first, the leftmost among equals."""
    return a.score > b.score or (a.score == b.score and a.left < b.left)


cdef void push(vector[Candidate]& heap, Candidate item) noexcept:
    heap.push_back(item)
    cdef size_t at = heap.size() - 1, up
    while at:
        up = (at - 1) >> 1
        if not before(item, heap[up]):
            break
        heap[at] = heap[up]
        at = up
    heap[at] = item


cdef Candidate pop(vector[Candidate]& heap) noexcept:
    cdef Candidate top = heap[0], last = heap.back()
    heap.pop_back()
    cdef size_t n = heap.size(), at = 0, child
    if n == 0:
        return top
    while True:
        child = 2 * at + 1
        if child >= n:
            break
        if child + 1 < n and before(heap[child + 1], heap[child]):
            child += 1
        if not before(heap[child], last):
            break
        heap[at] = heap[child]
        at = child
    heap[at] = last
    return top


cdef class Scratch:
    """The buffers of one encode call: a text's code points and its symbols."""
    cdef vector[uint32_t] codes
    cdef vector[int32_t] start, size, nxt, prv
    cdef vector[uint8_t] frozen
    cdef vector[Candidate] heap

    cdef const uint32_t* codes_of(self, str text) except NULL:
        """The code points of ``text`` (its own buffer when it is stored 4 bytes a character)."""
        cdef Py_ssize_t n = PyUnicode_GET_LENGTH(text), i
        cdef int kind = PyUnicode_KIND(text)
        cdef void* data = PyUnicode_DATA(text)
        self.codes.resize(n + 1)
        if kind == 4:
            return <const uint32_t*>data
        if kind == 1:
            for i in range(n):
                self.codes[i] = (<const uint8_t*>data)[i]
        else:
            for i in range(n):
                self.codes[i] = (<const uint16_t*>data)[i]
        return self.codes.data()


cdef class SpmEncoder:
    """The pieces of a sentencepiece BPE model in a table of code points, and its encoder.

    ``pieces``: ``(piece, score, type)`` in ID order. ``byte_ids``: 256 IDs, the ID of
    ``<0xNN>`` for each byte (-1 when the model lacks it). ``unk_id``: the unknown piece's
    ID. ``byte_fallback``: unknown characters become byte pieces, else the unknown piece.
    """
    cdef vector[uint32_t] chars       # every piece's code points, one after another
    cdef vector[int64_t] offsets      # piece i is chars[offsets[i]:offsets[i + 1]]
    cdef vector[double] scores
    cdef vector[uint8_t] kinds
    cdef vector[uint8_t] user         # piece i's string is a user-defined symbol
    cdef vector[int32_t] user_sizes   # the lengths of the user-defined symbols, longest first
    cdef vector[int32_t] slots        # open addressing: a piece ID or -1
    cdef uint64_t mask
    cdef int32_t byte_ids[256]
    cdef int32_t unk_id
    cdef bint byte_fallback

    def __init__(self, pieces, byte_ids, int unk_id, bint byte_fallback):
        cdef Py_ssize_t count = len(pieces), i, width = 8
        cdef Scratch scratch = Scratch()
        cdef const uint32_t* codes
        cdef int32_t at
        while width < 2 * count:
            width *= 2
        self.mask = width - 1
        self.slots.assign(width, -1)
        self.offsets.push_back(0)
        sizes = set()
        for i, (piece, score, kind) in enumerate(pieces):
            codes = scratch.codes_of(piece)
            self.chars.insert(self.chars.end(), codes, codes + len(piece))
            self.offsets.push_back(self.chars.size())
            self.scores.push_back(score)
            self.kinds.push_back(kind)
            self.user.push_back(0)
            at = self.find(codes, len(piece))
            if at < 0:
                self.insert(i)
                at = i
            if kind == USER_DEFINED and len(piece):
                self.user[at] = 1
                sizes.add(len(piece))
        self.user_sizes = sorted(sizes, reverse=True)
        for i in range(256):
            self.byte_ids[i] = byte_ids[i]
        self.unk_id = unk_id
        self.byte_fallback = byte_fallback

    cdef void insert(self, int32_t piece) noexcept:
        cdef int64_t n = self.offsets[piece + 1] - self.offsets[piece]
        cdef uint64_t slot = hash_bytes(<const unsigned char*>&self.chars[self.offsets[piece]], n * 4) & self.mask
        while self.slots[slot] >= 0:
            slot = (slot + 1) & self.mask
        self.slots[slot] = piece

    cdef int32_t find(self, const uint32_t* codes, Py_ssize_t n) noexcept:
        """The first ID of the piece spelt ``codes[:n]``, or -1."""
        cdef uint64_t slot = hash_bytes(<const unsigned char*>codes, n * 4) & self.mask
        cdef int32_t piece
        while True:
            piece = self.slots[slot]
            if piece < 0:
                return -1
            if (self.offsets[piece + 1] - self.offsets[piece] == n
                    and memcmp(&self.chars[self.offsets[piece]], codes, n * 4) == 0):
                return piece
            slot = (slot + 1) & self.mask

    cdef int32_t user_at(self, const uint32_t* codes, Py_ssize_t left) noexcept:
        """The length of the longest user-defined symbol ``codes`` starts with (``left`` code
        points remain), or 0."""
        cdef int32_t size, piece
        for size in self.user_sizes:
            if size <= left:
                piece = self.find(codes, size)
                if piece >= 0 and self.user[piece]:
                    return size
        return 0

    cdef void offer(self, Scratch w, const uint32_t* codes, int32_t left, int32_t right) noexcept:
        if left < 0 or right < 0 or w.frozen[left] or w.frozen[right]:
            return
        cdef Candidate item
        item.size = w.size[left] + w.size[right]
        cdef int32_t piece = self.find(codes + w.start[left], item.size)
        if piece >= 0 and (self.kinds[piece] == NORMAL or self.kinds[piece] == USER_DEFINED):
            item.score = self.scores[piece]
            item.left = left
            push(w.heap, item)

    cdef int32_t segment(self, Scratch w, const uint32_t* codes, Py_ssize_t n) noexcept:
        """Cuts ``codes[:n]`` into symbols and merges them; returns how many symbols there
        were (``w.size[i]`` is 0 for a symbol merged into its left neighbour)."""
        cdef Py_ssize_t at = 0
        cdef int32_t m = 0, size, left, right
        cdef Candidate top
        w.start.clear(); w.size.clear(); w.frozen.clear(); w.heap.clear()
        while at < n:
            size = self.user_at(codes + at, n - at) if self.user_sizes.size() else 0
            w.start.push_back(at)
            w.size.push_back(size if size else 1)
            w.frozen.push_back(size != 0)
            at += size if size else 1
            m += 1
        w.nxt.resize(m)
        w.prv.resize(m)
        for left in range(m):
            w.nxt[left] = left + 1 if left + 1 < m else -1
            w.prv[left] = left - 1
        for left in range(m - 1):
            self.offer(w, codes, left, left + 1)
        while w.heap.size():
            top = pop(w.heap)
            left = top.left
            right = w.nxt[left]
            if right < 0 or w.size[left] == 0 or w.size[left] + w.size[right] != top.size:
                continue
            w.size[left] = top.size
            w.size[right] = 0
            w.nxt[left] = w.nxt[right]
            if w.nxt[right] >= 0:
                w.prv[w.nxt[right]] = left
            self.offer(w, codes, w.prv[left], left)
            self.offer(w, codes, left, w.nxt[left])
        return m

    cdef int fall_back(self, const uint32_t* codes, int32_t n, vector[int32_t]& out) except -1:
        """Appends the byte pieces of ``codes[:n]``'s UTF-8."""
        cdef int32_t i
        cdef uint32_t c
        cdef uint8_t utf8[4]
        cdef int k, size
        for i in range(n):
            c = codes[i]
            if 0xD800 <= c <= 0xDFFF:
                chr(c).encode()     # raises UnicodeEncodeError, as the reference does
            if c < 0x80:
                utf8[0] = c; size = 1
            elif c < 0x800:
                utf8[0] = 0xC0 | (c >> 6); utf8[1] = 0x80 | (c & 0x3F); size = 2
            elif c < 0x10000:
                utf8[0] = 0xE0 | (c >> 12); utf8[1] = 0x80 | ((c >> 6) & 0x3F)
                utf8[2] = 0x80 | (c & 0x3F); size = 3
            else:
                utf8[0] = 0xF0 | (c >> 18); utf8[1] = 0x80 | ((c >> 12) & 0x3F)
                utf8[2] = 0x80 | ((c >> 6) & 0x3F); utf8[3] = 0x80 | (c & 0x3F); size = 4
            for k in range(size):
                if self.byte_ids[utf8[k]] < 0:
                    raise KeyError(f"<0x{utf8[k]:02X}>")
                out.push_back(self.byte_ids[utf8[k]])
        return 0

    def encode(self, str normalized):
        """The IDs of ``normalized`` (already normalised), as a list: unknown pieces become
        byte pieces with byte fallback, else the unknown ID (a run of them one ID)."""
        cdef Scratch w = Scratch()
        cdef const uint32_t* codes = w.codes_of(normalized)
        cdef int32_t m = self.segment(w, codes, len(normalized)), i, piece
        cdef size_t k
        cdef vector[int32_t] out
        cdef bint unknown = False
        cdef uint8_t kind
        for i in range(m):
            if not w.size[i]:
                continue
            piece = self.find(codes + w.start[i], w.size[i])
            kind = self.kinds[piece] if piece >= 0 else UNKNOWN
            if kind == UNKNOWN or kind == CONTROL or kind == UNUSED or kind == BYTE:
                if self.byte_fallback:
                    self.fall_back(codes + w.start[i], w.size[i], out)
                elif not unknown:
                    out.push_back(self.unk_id)
                unknown = True
                continue
            unknown = False
            out.push_back(piece)
        return [out[k] for k in range(out.size())]

    def segment_words(self, words):
        """The pieces of each of ``words`` (strings already normalised) as IDs, in one flat
        ``array("i")``, with an ``array("q")`` of offsets (word ``k`` is
        ``ids[offsets[k]:offsets[k + 1]]``). A piece is the first ID of its string, or
        ``-1 - c`` for a character ``c`` that is no piece: nothing is done for unknowns."""
        cdef Scratch w = Scratch()
        cdef const uint32_t* codes
        cdef int32_t m, i, piece
        cdef size_t k
        cdef array ids = array("i"), offsets = array("q", [0])
        cdef vector[int32_t] out
        for word in words:
            codes = w.codes_of(word)
            m = self.segment(w, codes, len(word))
            for i in range(m):
                if w.size[i]:
                    piece = self.find(codes + w.start[i], w.size[i])
                    out.push_back(piece if piece >= 0 else -1 - <int32_t>codes[w.start[i]])
            offsets.append(out.size())
        carray.resize(ids, out.size())
        for k in range(out.size()):
            ids.data.as_ints[k] = out[k]
        return ids, offsets
