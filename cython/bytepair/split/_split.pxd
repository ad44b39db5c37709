# cython: language_level=3
"""C-level API of the compiled pre-tokenizers (``cimport bytepair.split._split``).

Text is UTF-8 bytes ``s[0:n]``. A piece is found with ``piece_end``; the
caller loops ``p = piece_end(pattern, s, n, p)`` from ``p = 0`` until ``p == n``.
``piece_end`` needs ``s[0:n]`` to be valid UTF-8 (lone surrogates, as
``str.encode("utf-8", "surrogatepass")`` writes them, are allowed): check
untrusted bytes with ``utf8_error`` first. Importing the module installs the
code-point class table (made from the ``regex`` module when the package was
built), so cimporting it is enough.

Counting: a ``PieceTable`` maps piece bytes to an int64 count. Its
``count_text``/``count_lines`` methods split and count a whole buffer
without the GIL and without a Python object per piece or line. One thread
at a time may count into a table; give each worker thread its own and
``merge_from`` them.
"""

cimport cython
from libc.stdint cimport int64_t, uint8_t, uint32_t, uint64_t

# Pattern IDs (names as in bytepair.split.pretokenize.PATTERNS); PAT_NONE: no split,
# each document is one piece.
cdef enum:
    PAT_NONE = -1
    PAT_GPT2 = 0
    PAT_CL100K = 1
    PAT_O200K = 2
    PAT_WHITESPACE = 3
    PAT_NANOCHAT = 4
    PAT_SUPERBPE = 5
    PAT_WHITESPACE_SPLIT = 6
    PAT_COUNT = 7

# End (exclusive) of the piece of `pattern` that starts at byte p < n of the
# valid UTF-8 text s[0:n]; always > p. For "whitespace", "whitespace-split" and "superbpe", the text
# between matches is cut as pieces too (as bytepair.split.pretokenize.splitter gives them).
cdef Py_ssize_t piece_end(int pattern, const unsigned char* s, Py_ssize_t n, Py_ssize_t p) noexcept nogil

# The ends of the next pieces from byte p < n, at most `most` of them, into `ends`;
# returns how many (at least one). The same as calling piece_end in a loop.
cdef Py_ssize_t piece_ends(int pattern, const unsigned char* s, Py_ssize_t n, Py_ssize_t p,
                           Py_ssize_t* ends, Py_ssize_t most) noexcept nogil

# -1 when s[0:n] is valid UTF-8, else the offset of the first byte of the
# first invalid sequence (the ``start`` of Python's UnicodeDecodeError).
cdef Py_ssize_t utf8_error(const unsigned char* s, Py_ssize_t n) noexcept nogil

# The pattern ID of a name ("gpt2", ...) or None (PAT_NONE); ValueError otherwise.
cdef int pattern_id(object name) except -2

cdef struct Slot:
    uint32_t fingerprint  # high hash bits, never 0 (0 marks an empty slot);
                          # also gives the slot's home (fingerprint >> 1) & mask
    uint32_t length       # key length in bytes
    int64_t count
    uint64_t word[2]      # a key of up to 16 bytes itself, zero-padded;
                          # a longer key's offset in the arena (word[0])

# A piece about to be counted: its bytes, hash and (up to 16 bytes) its key words.
cdef struct Piece:
    const unsigned char* s
    Py_ssize_t n
    uint64_t hash
    uint64_t word[2]

cdef enum:
    AHEAD = 16  # pieces found ahead of the one being counted

# Pieces found but not yet counted (their slots are being prefetched).
cdef struct Ring:
    Piece pieces[AHEAD]
    Py_ssize_t found
    Py_ssize_t done
    const unsigned char* limit  # bytes before it may be read past a piece's end (NULL: none)

# Final: its methods are called directly (and inlined in the hot loop), not through a vtable.
@cython.final
cdef class PieceTable:
    cdef Slot* slots
    cdef Py_ssize_t capacity  # a power of two
    cdef Py_ssize_t size      # distinct pieces
    cdef unsigned char* arena  # every key, one after the other
    cdef Py_ssize_t arena_used
    cdef Py_ssize_t arena_capacity
    cdef Py_ssize_t key_bytes  # the length of every key, added up

    # Free everything and start again empty (as a new table).
    cdef int clear(self) except -1
    # The bytes of the key in `slot`.
    cdef const unsigned char* key_of(self, Slot* slot) noexcept nogil
    # Double the slots (each moves by its fingerprint; no key is read).
    cdef int grow(self) except -1 nogil
    # Hash `piece` (s[0:n]) and prefetch its slot; add_prepared then counts it.
    cdef void prepare(self, Piece* piece, const unsigned char* s, Py_ssize_t n) noexcept nogil
    cdef int add_prepared(self, Piece* piece, int64_t count) except -1 nogil
    # Add `count` to piece s[0:n] (n < 2**32).
    cdef int add(self, const unsigned char* s, Py_ssize_t n, int64_t count) except -1 nogil
    # Queue piece s[0:n] in `ring`, counting the oldest queued piece when it is full.
    cdef int push(self, Ring* ring, const unsigned char* s, Py_ssize_t n) except -1 nogil
    # Count every piece still queued in `ring`.
    cdef int drain(self, Ring* ring) except -1 nogil
    # Queue the pieces of one document of valid UTF-8 (s must outlive the drain).
    cdef int scan(self, Ring* ring, int pattern, const unsigned char* s, Py_ssize_t n) except -1 nogil
    # Count the pieces of one document of valid UTF-8 (as count_text, unchecked).
    cdef int count_valid(self, int pattern, const unsigned char* s, Py_ssize_t n) except -1 nogil
    # Split one document s[0:n] with `pattern` and count its pieces (PAT_NONE:
    # the document is one piece, any bytes, empty documents skipped). Returns -1,
    # or for invalid UTF-8 the offset of the first bad byte (nothing is counted).
    cdef Py_ssize_t count_text(self, int pattern, const unsigned char* s, Py_ssize_t n) except -2 nogil
    # The same for every line of s[0:n] as one document: lines end with "\n",
    # one "\n" or "\r\n" is stripped, the last line may lack it.
    cdef Py_ssize_t count_lines(self, int pattern, const unsigned char* s, Py_ssize_t n) except -2 nogil
    # Add every count of `other` into this table.
    cdef int merge_from(self, PieceTable other) except -1


# Helpers shared by the compiled modules that hash pieces or walk UTF-8 (split, word counting,
# the word engine): defined once here, inlined where they are used.
cdef inline uint64_t mix(uint64_t h) noexcept nogil:
    # murmur3's 64-bit finaliser
    h ^= h >> 33
    h *= 0xFF51AFD7ED558CCDULL
    h ^= h >> 33
    h *= 0xC4CEB9FE1A85EC53ULL
    h ^= h >> 33
    return h


cdef inline Py_ssize_t utf8_width(uint8_t lead) noexcept nogil:
    if lead < 0x80:
        return 1
    if lead < 0xE0:
        return 2
    if lead < 0xF0:
        return 3
    return 4
