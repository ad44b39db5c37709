# distutils: language = c++
"""The compiled twin of :mod:`bytepair.learn.spm_loop`: sentencepiece's BPE merge loop in C++.

Same rules, same result as the Python module; the state is laid out for memory:

* the words sit one after another in one int32 array, each after a marker holding its
  count; a merged symbol keeps its first position, the others read DEAD (neighbours are a
  scan past DEAD, a position's count a scan back to its marker cut short by a block
  index): four bytes a character, where links and a count per position took twenty;
* each pair keeps its exact frequency and its ascending positions, which merge()
  prefetches ahead; within one merge the neighbour pairs are memoised by the other symbol;
* a lazy priority queue: pairs are pushed when made (only pairs with the new symbol rise)
  and pushed back at their count when a fallen entry reaches the top.

Piece validity runs in O(1) on per-symbol shapes built from per-character classes (script,
``▁``, digit, forbidden) that the Python side computes with
:class:`bytepair.learn.spm_pieces.PieceRules`.
"""

from cython.operator cimport dereference as deref
from libc.stdint cimport int32_t, int64_t, uint32_t, uint64_t, uint8_t
from libcpp.vector cimport vector
from libcpp.string cimport string
from libcpp.unordered_map cimport unordered_map
from libcpp.unordered_set cimport unordered_set
from libcpp cimport bool as cbool

cdef extern from "_spm_loop.h":
    enum:
        SPM_BAD, SPM_DIGIT, SPM_ALL_SPACE, SPM_SPACE_FIRST, SPM_SPACE_LAST, SPM_SPACE_ANY
        SPM_SPACE_NOT_FIRST, SPM_SPACE_NOT_LAST
    cdef struct SpmShape:
        int32_t chars, first, last
        uint8_t flags
    SpmShape spm_join(const SpmShape& left, const SpmShape& right) nogil
    cdef struct SpmEntry:
        long long freq
        int pair
    cdef cppclass SpmLess:
        const vector[int32_t]* chars
        const vector[int32_t]* left
        const vector[int32_t]* right
        const vector[string]* pieces
    cdef cppclass SpmMemo:
        int32_t get(int32_t symbol) nogil
        void put(int32_t symbol, int32_t pair) nogil
        void clear() nogil
    cdef cppclass SpmPairMap:
        vector[uint64_t] keys
        vector[int32_t] values
        size_t used
        size_t at(uint64_t key) nogil
        void put(size_t at, uint64_t key, int32_t value) nogil
        int32_t find(uint64_t key) nogil
        void insert(uint64_t key, int32_t value) nogil
    void __builtin_prefetch(const void* address) nogil
    void spm_huge_pages(void* start, size_t bytes) nogil
    void spm_push(vector[SpmEntry]& heap, SpmEntry e, const SpmLess& less) nogil
    SpmEntry spm_pop(vector[SpmEntry]& heap, const SpmLess& less) nogil

DEF ANY = -1
DEF INHERITED = -2
DEF DEAD = -1        # a position inside a merged symbol
DEF BLOCK_SHIFT = 6  # one entry of the block index per 64 positions
DEF BIG = 0x7FFFFFFF  # -BIG marks a word whose count is in SpmLoop.big
DEF DENSE = 1024      # first_pairs() looks pairs of up to this many characters up in a square table
DEF AHEAD = 16        # merge() prefetches the position this many occurrences ahead


cdef int64_t code_points(const unsigned char[:] data) noexcept nogil:
    """The characters of UTF-8 ``data`` (surrogates written with surrogatepass included): its
    bytes that start one, all but the continuation bytes 0b10xxxxxx. O(len(data)), no decoding."""
    cdef int64_t n = 0
    cdef Py_ssize_t i
    for i in range(data.shape[0]):
        n += (data[i] & 0xC0) != 0x80
    return n


cdef class SpmLoop:
    # rules
    cdef int max_length
    cdef cbool by_script, by_number, by_whitespace, split_digits, suffix, whitespace_only
    # symbols
    cdef vector[SpmShape] sym_shape
    cdef vector[string] sym_piece
    cdef unordered_map[string, int32_t] sym_of
    # The words, one after another, each after a marker: seq[p] is the symbol that starts at
    # position p, DEAD inside a merged symbol, -2 - count at a word's marker (BIG when the count
    # is too large for it: then in ``big``). Code points until lay_out. A final marker (count 0)
    # closes the last word.
    cdef vector[int32_t] seq
    cdef vector[int64_t] block_count  # p >> BLOCK_SHIFT -> the count of the word holding p & ~63
    cdef unordered_map[int64_t, int64_t] big  # marker position -> count, for counts of 2**31 - 3 and over
    # pairs
    cdef SpmPairMap pair_of
    cdef vector[int32_t] pair_left, pair_right, pair_chars
    cdef vector[int64_t] freq
    cdef vector[vector[int32_t]] positions
    cdef vector[uint8_t] active
    cdef vector[SpmEntry] heap
    cdef SpmLess less
    # merge(): pair IDs of (x, left), (right, x), (x, new), (new, x) by x
    cdef SpmMemo with_left, with_right, to_new, from_new
    # strings no merge may make (the pieces of a base being extended)
    cdef unordered_set[string] taken

    def __init__(self, rules):
        self.max_length = rules.max_sentencepiece_length
        self.by_script = rules.split_by_unicode_script
        self.by_number = rules.split_by_number
        self.by_whitespace = rules.split_by_whitespace
        self.split_digits = rules.split_digits
        self.suffix = rules.treat_whitespace_as_suffix
        self.whitespace_only = rules.allow_whitespace_only_pieces
        self.less.chars = &self.pair_chars
        self.less.left = &self.pair_left
        self.less.right = &self.pair_right
        self.less.pieces = &self.sym_piece

    def read_words(self, words, release=False):
        """Keep ``{word: count}``; return each character's count (NUL left out), as ``{char: count}``.

        ``release``: empty ``words`` as it is read (a dict word by word, a table of flat arrays
        at the end), so that the table and this copy of it are not both whole at once.
        """
        cdef vector[int64_t] seen = vector[int64_t](0x110000, 0)
        cdef str word
        cdef int64_t size = 1
        flat = getattr(words, "flat", None)
        if flat is not None:  # a WordTable: its characters are counted in its UTF-8, not decoded
            data, starts, _ = flat()
            size += len(starts) - 1 + code_points(data)
        else:
            for word in words:
                size += 1 + len(word)
        if size >= BIG:
            raise ValueError(f"words: {size:,} characters and words in all, more than the loop's "
                             f"{BIG - 1:,} positions")
        self.seq.reserve(size)  # exactly: no copy while the words' table is still held
        spm_huge_pages(self.seq.data(), size * sizeof(int32_t))
        if release and isinstance(words, dict):
            while words:
                word, number = words.popitem()
                self.hold(word, number, seen)
        else:  # a table of flat arrays (counts.spm_words.WordTable) lets them go at once
            for word, number in words.items():
                self.hold(word, number, seen)
        if release:
            words.clear()
        self.mark(0)
        seen[0] = 0
        return {chr(c): seen[c] for c in range(0x110000) if seen[c]}

    cdef void hold(self, str word, object number, vector[int64_t]& seen):
        cdef Py_UCS4 char
        cdef int64_t count = number
        self.mark(count)
        for char in word:
            self.seq.push_back(<int32_t>char)
            seen[char] += count

    cdef void mark(self, int64_t count) noexcept nogil:
        """Start a word of count ``count``."""
        if count >= BIG - 2 or count < 0:
            self.big[<int64_t>self.seq.size()] = count
            self.seq.push_back(-BIG)
        else:
            self.seq.push_back(<int32_t>(-2 - count))

    cdef inline int64_t marked(self, int64_t p) noexcept nogil:
        """The count at the marker at ``p``."""
        if self.seq[p] == -BIG:
            return self.big[p]
        return -2 - <int64_t>self.seq[p]

    cdef void characters(self, list chars, list scripts, list space, list digit, list bad):
        """Symbols 0..n-1 for the characters ``chars`` (with their classes), n for the unknown one."""
        cdef Py_ssize_t i
        for i in range(len(chars) + 1):
            if i < len(chars):
                self.sym_shape.push_back(self.char_shape(scripts[i], space[i], digit[i], bad[i]))
            else:
                self.sym_shape.push_back(self.char_shape(0, False, False, True))
            piece = (chars[i] if i < len(chars) else "\u2585").encode("utf-8", "surrogatepass")
            self.sym_piece.push_back(piece)
            self.sym_of[piece] = <int32_t>i

    def lay_out(self, list chars, list scripts, list space, list digit, list bad):
        """Lay the words out over the kept characters ``chars`` (with their classes); any other is unknown."""
        cdef vector[int32_t] ids = vector[int32_t](0x110000, <int32_t>len(chars))
        self.characters(chars, scripts, space, digit, bad)
        for at, char in enumerate(chars):
            ids[ord(char)] = <int32_t>at
        with nogil:
            self.index(&ids)
            self.first_pairs()

    def lay_out_pieces(self, list chars, list scripts, list space, list digit, list bad,
                       list pieces, const int32_t[:] symbols, const int64_t[:] starts,
                       const int64_t[:] counts, taken):
        """Lay out words that start as pieces: symbols are ``chars``, the unknown one, then
        ``pieces`` (valid pieces of ``chars``); word w is ``symbols[starts[w]:starts[w + 1]]``,
        seen ``counts[w]`` times. No merge makes a string of ``taken``."""
        cdef Py_ssize_t i, w
        cdef SpmShape shape
        self.characters(chars, scripts, space, digit, bad)
        index = {char: at for at, char in enumerate(chars)}
        for piece in pieces:
            shape = self.sym_shape[index[piece[0]]]
            for char in piece[1:]:
                shape = spm_join(shape, self.sym_shape[index[char]])
            data = piece.encode("utf-8", "surrogatepass")
            self.sym_of[data] = <int32_t>self.sym_piece.size()
            self.sym_shape.push_back(shape)
            self.sym_piece.push_back(data)
        for piece in taken:
            self.taken.insert(piece.encode("utf-8", "surrogatepass"))
        if symbols.shape[0] + counts.shape[0] + 1 >= BIG:
            raise ValueError(f"words: more symbols and words than the loop's {BIG - 1:,} positions")
        with nogil:
            self.seq.reserve(symbols.shape[0] + counts.shape[0] + 1)
            for w in range(counts.shape[0]):
                self.mark(counts[w])
                for i in range(starts[w], starts[w + 1]):
                    self.seq.push_back(symbols[i])
            self.mark(0)
            self.index(NULL)
            self.first_pairs()

    cdef void index(self, const vector[int32_t]* ids) noexcept nogil:
        """Code points -> character IDs in place (unless ``ids`` is NULL), and the block index."""
        cdef size_t p, n = self.seq.size()
        cdef int64_t count = 0
        self.block_count.resize((n >> BLOCK_SHIFT) + 1)
        for p in range(n):
            if self.seq[p] >= 0:
                if ids != NULL:
                    self.seq[p] = deref(ids)[self.seq[p]]
            else:
                count = self.marked(p)
            if (p & ((1 << BLOCK_SHIFT) - 1)) == 0:
                self.block_count[p >> BLOCK_SHIFT] = count

    cdef void first_pairs(self) noexcept nogil:
        """Every adjacent pair counted, then its positions stored in lists of exact size. Pairs
        of the first DENSE symbols are looked up in a square table, others in the pair map:
        characters come most frequent first, so the table holds most positions' pairs."""
        cdef size_t p, n = self.seq.size()
        cdef int32_t pair, dense = min(<int32_t>self.sym_shape.size(), DENSE)
        cdef int64_t count = 0
        cdef vector[int32_t] sizes, table
        table.resize(dense * dense, -2)
        for p in range(n - 1):
            if self.seq[p] < 0:
                count = self.marked(p)
            elif self.seq[p + 1] >= 0:
                pair = self.first_pair(self.seq[p], self.seq[p + 1], table, dense)
                if pair >= 0:
                    self.freq[pair] += count
                    if <size_t>pair >= sizes.size():
                        sizes.resize(pair + 1, 0)
                    sizes[pair] += 1
        for pair in range(<int32_t>sizes.size()):
            self.positions[pair].reserve(sizes[pair])
        for p in range(n - 1):
            if self.seq[p] >= 0 and self.seq[p + 1] >= 0:
                pair = self.first_pair(self.seq[p], self.seq[p + 1], table, dense)
                if pair >= 0:
                    self.positions[pair].push_back(<int32_t>p)
        self.flush(0)

    cdef inline int32_t first_pair(self, int32_t left, int32_t right, vector[int32_t]& table,
                                   int32_t dense) noexcept nogil:
        if left >= dense or right >= dense:
            return self.pair(left, right)
        cdef int32_t* cell = &table[left * dense + right]
        if cell[0] == -2:
            cell[0] = self.pair(left, right)
        return cell[0]

    cdef SpmShape char_shape(self, int32_t script, cbool space, cbool digit, cbool bad) noexcept:
        cdef SpmShape shape
        shape.chars = 1
        shape.first = shape.last = -3 if space or script == INHERITED else (ANY if digit and not self.by_number
                                                                           else script)
        shape.flags = (SPM_BAD if bad else 0) | (SPM_DIGIT if digit else 0)
        if space:
            shape.flags |= SPM_ALL_SPACE | SPM_SPACE_FIRST | SPM_SPACE_LAST | SPM_SPACE_ANY
        return shape

    cdef cbool valid(self, int32_t left, int32_t right) noexcept nogil:
        """Whether the piece left + right may be made, in O(1) from the two symbols' shapes.

        Exact when both are valid pieces themselves (characters and merged symbols are):
        an inherited character takes the script before it, so the two scripts that meet at
        the join are the only ones not checked already; a digit without split_by_number
        matches any script.
        """
        cdef SpmShape* a = &self.sym_shape[left]
        cdef SpmShape* b = &self.sym_shape[right]
        cdef uint8_t both = a.flags | b.flags
        if a.chars + b.chars > self.max_length or both & SPM_BAD or (self.split_digits and both & SPM_DIGIT):
            return False
        if not (self.whitespace_only and a.flags & b.flags & SPM_ALL_SPACE):
            if self.suffix and self.by_whitespace:  # a ▁ only last
                if a.flags & SPM_SPACE_ANY or b.flags & SPM_SPACE_NOT_LAST:
                    return False
            elif self.suffix:  # not first
                if a.flags & SPM_SPACE_FIRST:
                    return False
            elif self.by_whitespace:  # only first
                if a.flags & SPM_SPACE_NOT_FIRST or b.flags & SPM_SPACE_ANY:
                    return False
            elif b.flags & SPM_SPACE_LAST:  # not last
                return False
        return not (self.by_script and a.last >= 0 and b.first >= 0 and a.last != b.first)

    cdef int32_t pair(self, int32_t left, int32_t right) noexcept nogil:
        """The pair ID of (left, right), made at first sight; -1 when it may not merge (checked
        first, in O(1): the map holds valid pairs only)."""
        if not self.valid(left, right):
            return -1
        cdef uint64_t key = (<uint64_t>left << 32) | <uint32_t>right
        cdef size_t at = self.pair_of.at(key)
        if self.pair_of.keys[at] == key:
            return self.pair_of.values[at]
        cdef int32_t found = <int32_t>self.freq.size()
        cdef vector[int32_t] none
        self.pair_left.push_back(left)
        self.pair_right.push_back(right)
        self.pair_chars.push_back(self.sym_shape[left].chars + self.sym_shape[right].chars)
        self.freq.push_back(0)
        self.positions.push_back(none)
        self.active.push_back(1)
        self.pair_of.put(at, key, found)
        return found

    cdef inline int32_t after(self, int32_t p) noexcept nogil:
        """The live position after ``p`` in its word, or -1 at the word's end (O(symbol length))."""
        p += 1
        while self.seq[p] == DEAD:
            p += 1
        return p if self.seq[p] >= 0 else -1

    cdef inline int32_t before(self, int32_t p) noexcept nogil:
        p -= 1
        while self.seq[p] == DEAD:
            p -= 1
        return p if self.seq[p] >= 0 else -1

    cdef inline int64_t weight(self, int32_t p) noexcept nogil:
        """The count of the word holding position ``p`` (O(64)): its marker, or the block index."""
        cdef int32_t q = p - 1, low = p & ~((1 << BLOCK_SHIFT) - 1)
        while q >= low:
            if self.seq[q] < DEAD:
                return self.marked(q)
            q -= 1
        return self.block_count[p >> BLOCK_SHIFT]

    cdef inline int32_t memo(self, SpmMemo* memo, int32_t x, int32_t left, int32_t right,
                             cbool make) noexcept nogil:
        """The pair ID of (left, right), one of which is ``x``, through ``memo``."""
        cdef int32_t pair = memo.get(x)
        if pair == -3:
            if make:
                pair = self.pair(left, right)
            else:
                pair = max(-1, self.pair_of.find((<uint64_t>left << 32) | <uint32_t>right))
            memo.put(x, pair)
        return pair

    cdef inline void add(self, int32_t pair, int32_t position, int64_t count) noexcept nogil:
        if pair >= 0 and self.active[pair]:
            self.freq[pair] += count
            self.positions[pair].push_back(position)

    cdef inline void remove(self, int32_t pair, int32_t best, int64_t count) noexcept nogil:
        if pair >= 0 and pair != best and self.active[pair]:
            # No entry is pushed for a fall: the pair's entry above its count is pushed
            # again, with the count, when it reaches the top (best()).
            self.freq[pair] -= count

    cdef void flush(self, int32_t first) noexcept nogil:
        """Push the pairs made since pair ``first``: only new pairs (with the new symbol) rise."""
        cdef SpmEntry entry
        cdef int32_t pair
        for pair in range(first, <int32_t>self.freq.size()):
            if self.active[pair]:
                entry.freq = self.freq[pair]
                entry.pair = pair
                spm_push(self.heap, entry, self.less)

    cdef int32_t best(self) noexcept nogil:
        cdef SpmEntry entry
        while self.heap.size():
            entry = spm_pop(self.heap, self.less)
            if not self.active[entry.pair] or entry.freq < self.freq[entry.pair]:
                continue  # retired, or a later rise pushed a newer entry
            if entry.freq > self.freq[entry.pair]:
                entry.freq = self.freq[entry.pair]  # fallen since: back in at its count
                spm_push(self.heap, entry, self.less)
                continue
            return entry.pair
        return -1

    cdef int32_t symbol(self, int32_t left, int32_t right) noexcept nogil:
        cdef string piece = self.sym_piece[left] + self.sym_piece[right]
        cdef unordered_map[string, int32_t].iterator it = self.sym_of.find(piece)
        if it != self.sym_of.end():
            return deref(it).second
        cdef int32_t new = <int32_t>self.sym_piece.size()
        self.sym_shape.push_back(spm_join(self.sym_shape[left], self.sym_shape[right]))
        self.sym_piece.push_back(piece)
        self.sym_of[piece] = new
        return new

    cdef void merge(self, int32_t best) noexcept nogil:
        """Replace every live occurrence of ``best``, left to right (its positions are ascending)."""
        cdef int32_t left = self.pair_left[best], right = self.pair_right[best]
        cdef int32_t new = self.symbol(left, right), first = <int32_t>self.freq.size()
        cdef int32_t p, r, before, after, x, y, pair, ahead
        cdef int64_t count
        cdef vector[int32_t] seen
        cdef size_t i
        seen.swap(self.positions[best])
        for i in range(seen.size()):
            if i + AHEAD < seen.size():  # the symbols, the word's marker or its block's count
                ahead = seen[i + AHEAD]
                __builtin_prefetch(self.seq.data() + ahead)
                __builtin_prefetch(self.seq.data() + max(0, ahead - 15))
                __builtin_prefetch(self.block_count.data() + (ahead >> BLOCK_SHIFT))
            p = seen[i]
            if self.seq[p] != left:
                continue  # stale: merged away since it was seen
            r = self.after(p)
            if r < 0 or self.seq[r] != right:
                continue
            before = self.before(p)
            after = self.after(r)
            count = self.weight(p)
            if before >= 0:
                x = self.seq[before]
                if x == new:  # (new, left) made in this merge: not memoised before it was
                    pair = max(-1, self.pair_of.find((<uint64_t>new << 32) | <uint32_t>left))
                else:
                    pair = self.memo(&self.with_left, x, x, left, False)
                self.remove(pair, best, count)
            if after >= 0:
                y = self.seq[after]
                self.remove(self.memo(&self.with_right, y, right, y, False), best, count)
            self.seq[p] = new
            self.seq[r] = DEAD
            if before >= 0:
                self.add(self.memo(&self.to_new, x, x, new, True), before, count)
            if after >= 0:
                self.add(self.memo(&self.from_new, y, new, y, True), p, count)
        self.active[best] = 0
        self.with_left.clear()
        self.with_right.clear()
        self.to_new.clear()
        self.from_new.clear()
        self.flush(first)

    def learn(self, int merges):
        """The pieces made, in order (UTF-8 bytes)."""
        cdef vector[int32_t] out
        cdef int32_t best
        cdef string piece
        with nogil:
            while <int>out.size() < merges:
                best = self.best()
                if best < 0:
                    break
                piece = self.sym_piece[self.pair_left[best]] + self.sym_piece[self.pair_right[best]]
                if self.sym_of.count(piece) or self.taken.count(piece):  # made already, or a base's
                    self.active[best] = 0
                    vector[int32_t]().swap(self.positions[best])
                    continue
                out.push_back(best)
                self.merge(best)
        return [self.sym_piece[self.pair_left[p]] + self.sym_piece[self.pair_right[p]] for p in out]

    def _check(self):
        """Recount every pair from the words and compare with the kept frequencies (tests call it)."""
        cdef dict found = {}
        cdef size_t p
        cdef int32_t pair, q
        cdef int64_t count = 0
        for p in range(self.seq.size()):
            if self.seq[p] < DEAD:
                count = self.marked(p)
            elif self.seq[p] >= 0:
                assert self.weight(<int32_t>p) == count, f"position {p}: weight"
                q = self.after(<int32_t>p)
                if q >= 0:
                    pair = self.pair_of.find((<uint64_t>self.seq[p] << 32) | <uint32_t>self.seq[q])
                    if pair >= 0 and self.active[pair]:
                        found[pair] = found.get(pair, 0) + count
        for pair in range(<int32_t>self.freq.size()):
            if self.active[pair]:
                assert self.freq[pair] == found.get(pair, 0), f"pair {pair}: {self.freq[pair]} != recount"
        return len(self.freq), self.seq.size()

    def stats(self):
        """Sizes of the state (pairs, positions held, heap, pair map), as the loop bench records them."""
        cdef size_t held = 0, capacity = 0, i
        for i in range(self.positions.size()):
            held += self.positions[i].size()
            capacity += self.positions[i].capacity()
        return {"pairs": self.freq.size(), "held": held, "capacity": capacity,
                "heap": self.heap.size(), "positions": self.seq.size(),
                "keys": self.pair_of.used, "slots": self.pair_of.keys.size()}
