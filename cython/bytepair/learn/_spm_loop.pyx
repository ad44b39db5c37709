# distutils: language = c++
"""The compiled twin of :mod:`bytepair.learn.spm_loop`: sentencepiece's BPE merge loop in C++.

Same rules, same state (symbols in a flat array with links, pairs with their positions
and exact frequencies, a lazy priority queue), same result; see the Python module.
Piece validity runs here on per-character classes (script, ``▁``, digit, forbidden)
that the Python side computes with :class:`bytepair.learn.spm_pieces.PieceRules`.
"""

from cython.operator cimport dereference as deref
from libc.stdint cimport int32_t, int64_t, uint32_t, uint64_t, uint8_t
from libcpp.vector cimport vector
from libcpp.string cimport string
from libcpp.unordered_map cimport unordered_map
from libcpp.unordered_set cimport unordered_set
from libcpp cimport bool as cbool

cdef extern from *:
    """
    #include <algorithm>
    #include <cstdint>
    #include <string>
    #include <vector>
    struct SpmEntry { long long freq; int pair; };
    struct SpmLess {
        const std::vector<int32_t>* chars;
        const std::vector<int32_t>* left;
        const std::vector<int32_t>* right;
        const std::vector<std::string>* pieces;
        // Compares the joined strings of two pairs, byte by byte, without joining them.
        int compare(int a, int b) const {
            const std::string& a1 = (*pieces)[(*left)[a]]; const std::string& a2 = (*pieces)[(*right)[a]];
            const std::string& b1 = (*pieces)[(*left)[b]]; const std::string& b2 = (*pieces)[(*right)[b]];
            size_t na = a1.size() + a2.size(), nb = b1.size() + b2.size();
            for (size_t i = 0; i < na && i < nb; ++i) {
                unsigned char x = i < a1.size() ? a1[i] : a2[i - a1.size()];
                unsigned char y = i < b1.size() ? b1[i] : b2[i - b1.size()];
                if (x != y) return x < y ? -1 : 1;
            }
            return na < nb ? -1 : (na > nb ? 1 : 0);
        }
        bool operator()(const SpmEntry& a, const SpmEntry& b) const {
            if (a.freq != b.freq) return a.freq < b.freq;
            int ca = (*chars)[a.pair], cb = (*chars)[b.pair];
            if (ca != cb) return ca > cb;
            int c = compare(a.pair, b.pair);
            if (c != 0) return c > 0;
            // Two splits of one string: the shorter left side first.
            size_t la = (*pieces)[(*left)[a.pair]].size(), lb = (*pieces)[(*left)[b.pair]].size();
            if (la != lb) return la > lb;
            return a.pair > b.pair;
        }
    };
    // (left, right) -> pair ID, open addressing with linear probing; never shrinks, no removal.
    struct SpmPairMap {
        std::vector<uint64_t> keys;
        std::vector<int32_t> values;
        size_t used = 0;
        int shift = 64 - 16;
        SpmPairMap() : keys(1 << 16, ~0ULL), values(1 << 16, 0) {}
        size_t slot(uint64_t key) const {
            size_t mask = keys.size() - 1;
            size_t i = (size_t)((key * 0x9E3779B97F4A7C15ULL) >> shift);
            while (keys[i] != key && keys[i] != ~0ULL) i = (i + 1) & mask;
            return i;
        }
        // The value of key, or -2 when it is absent.
        int32_t find(uint64_t key) const {
            size_t i = slot(key);
            return keys[i] == key ? values[i] : -2;
        }
        void insert(uint64_t key, int32_t value) {
            if (2 * (used + 1) > keys.size()) grow();
            size_t i = slot(key);
            if (keys[i] != key) { keys[i] = key; ++used; }
            values[i] = value;
        }
        void grow() {
            std::vector<uint64_t> old_keys(keys.size() * 2, ~0ULL);
            std::vector<int32_t> old_values(values.size() * 2, 0);
            old_keys.swap(keys); old_values.swap(values);
            --shift;
            for (size_t j = 0; j < old_keys.size(); ++j)
                if (old_keys[j] != ~0ULL) { size_t i = slot(old_keys[j]); keys[i] = old_keys[j]; values[i] = old_values[j]; }
        }
    };
    static void spm_push(std::vector<SpmEntry>& heap, SpmEntry e, const SpmLess& less) {
        heap.push_back(e); std::push_heap(heap.begin(), heap.end(), less);
    }
    static SpmEntry spm_pop(std::vector<SpmEntry>& heap, const SpmLess& less) {
        std::pop_heap(heap.begin(), heap.end(), less);
        SpmEntry e = heap.back(); heap.pop_back(); return e;
    }
    """
    cdef struct SpmEntry:
        long long freq
        int pair
    cdef cppclass SpmLess:
        const vector[int32_t]* chars
        const vector[int32_t]* left
        const vector[int32_t]* right
        const vector[string]* pieces
    cdef cppclass SpmPairMap:
        int32_t find(uint64_t key) nogil
        void insert(uint64_t key, int32_t value) nogil
    void spm_push(vector[SpmEntry]& heap, SpmEntry e, const SpmLess& less) nogil
    SpmEntry spm_pop(vector[SpmEntry]& heap, const SpmLess& less) nogil

DEF ANY = -1
DEF INHERITED = -2


cdef class SpmLoop:
    # rules
    cdef int max_length
    cdef cbool by_script, by_number, by_whitespace, split_digits, suffix, whitespace_only
    # per character: class arrays (indexed by character ID)
    cdef vector[int32_t] char_script
    cdef vector[uint8_t] char_space, char_digit, char_bad
    # symbols
    cdef vector[vector[int32_t]] sym_chars
    cdef vector[string] sym_piece
    cdef unordered_map[string, int32_t] sym_of
    # positions
    cdef vector[int32_t] sym, nxt, prv
    cdef vector[int64_t] weight
    # pairs
    cdef SpmPairMap pair_of
    cdef vector[int32_t] pair_left, pair_right, pair_chars
    cdef vector[int64_t] freq
    cdef vector[vector[int32_t]] positions
    cdef vector[uint8_t] active, changed_flag
    cdef vector[int32_t] changed
    cdef vector[SpmEntry] heap
    cdef SpmLess less

    # the words as read: code points, word starts, counts
    cdef vector[int32_t] text, starts
    cdef vector[int64_t] counts
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

    def read_words(self, words):
        """Keep ``{word: count}``; return each character's count (NUL left out), as ``{char: count}``."""
        cdef vector[int64_t] seen = vector[int64_t](0x110000, 0)
        cdef str word
        cdef Py_UCS4 char
        cdef int64_t count
        for word, number in words.items():
            count = number
            self.starts.push_back(<int32_t>self.text.size())
            self.counts.push_back(count)
            for char in word:
                self.text.push_back(<int32_t>char)
                seen[char] += count
        self.starts.push_back(<int32_t>self.text.size())
        seen[0] = 0
        return {chr(c): seen[c] for c in range(0x110000) if seen[c]}

    cdef void characters(self, list chars, list scripts, list space, list digit, list bad):
        """Character IDs 0..n-1 for ``chars`` (with their classes), n for the unknown one, each
        also the symbol of its one character."""
        cdef Py_ssize_t i
        cdef vector[int32_t] one
        for i in range(len(chars) + 1):
            self.char_script.push_back(scripts[i] if i < len(chars) else 0)
            self.char_space.push_back(space[i] if i < len(chars) else 0)
            self.char_digit.push_back(digit[i] if i < len(chars) else 0)
            self.char_bad.push_back(bad[i] if i < len(chars) else 1)
            one.clear()
            one.push_back(<int32_t>i)
            self.sym_chars.push_back(one)
            piece = (chars[i] if i < len(chars) else "\u2585").encode("utf-8", "surrogatepass")
            self.sym_piece.push_back(piece)
            self.sym_of[piece] = <int32_t>i

    cdef void pairs_of_words(self) noexcept nogil:
        """Every adjacent pair of the laid-out words counted, and queued."""
        cdef Py_ssize_t i
        for i in range(<Py_ssize_t>self.sym.size() - 1):
            if self.nxt[i] >= 0:
                self.add(<int32_t>i, self.sym[i], self.sym[i + 1])
        self.flush()

    def lay_out(self, list chars, list scripts, list space, list digit, list bad):
        """Lay the words out over the kept characters ``chars`` (with their classes); any other is unknown."""
        cdef Py_ssize_t i, w, n, start, end
        cdef vector[int32_t] ids = vector[int32_t](0x110000, <int32_t>len(chars))
        self.characters(chars, scripts, space, digit, bad)
        for i in range(len(chars)):
            ids[ord(chars[i])] = <int32_t>i
        with nogil:
            for w in range(<Py_ssize_t>self.counts.size()):
                start = self.starts[w]
                end = self.starts[w + 1]
                n = end - start
                for i in range(n):
                    self.sym.push_back(ids[self.text[start + i]])
                    self.prv.push_back(<int32_t>(start + i - 1) if i else -1)
                    self.nxt.push_back(<int32_t>(start + i + 1) if i + 1 < n else -1)
                    self.weight.push_back(self.counts[w])
            vector[int32_t]().swap(self.text)
            self.pairs_of_words()

    def lay_out_pieces(self, list chars, list scripts, list space, list digit, list bad,
                       list pieces, const int32_t[:] symbols, const int64_t[:] starts,
                       const int64_t[:] counts, taken):
        """Lay out words that start as pieces: symbols 0..n-1 are the characters ``chars``
        (with their classes), n the unknown one, n+1... the ``pieces`` (strings of several
        of ``chars``); word w is ``symbols[starts[w]:starts[w + 1]]``, seen ``counts[w]``
        times. No merge makes a string of ``taken``."""
        cdef Py_ssize_t i, w, n, start
        cdef vector[int32_t] one
        self.characters(chars, scripts, space, digit, bad)
        index = {char: at for at, char in enumerate(chars)}
        for piece in pieces:
            one.clear()
            for char in piece:
                one.push_back(<int32_t>index[char])
            data = piece.encode("utf-8", "surrogatepass")
            self.sym_of[data] = <int32_t>self.sym_piece.size()
            self.sym_chars.push_back(one)
            self.sym_piece.push_back(data)
        for piece in taken:
            self.taken.insert(piece.encode("utf-8", "surrogatepass"))
        with nogil:
            for w in range(counts.shape[0]):
                start = starts[w]
                n = starts[w + 1] - start
                for i in range(n):
                    self.sym.push_back(symbols[start + i])
                    self.prv.push_back(<int32_t>(start + i - 1) if i else -1)
                    self.nxt.push_back(<int32_t>(start + i + 1) if i + 1 < n else -1)
                    self.weight.push_back(counts[w])
            self.pairs_of_words()

    cdef cbool misplaced(self, int pos, int last) noexcept nogil:
        if self.suffix:
            if self.by_whitespace:
                return pos < last
            return pos < last and pos == 0
        if self.by_whitespace:
            return pos > 0
        return pos > 0 and pos == last

    cdef cbool valid(self, int32_t left, int32_t right) noexcept nogil:
        cdef vector[int32_t]* a = &self.sym_chars[left]
        cdef vector[int32_t]* b = &self.sym_chars[right]
        cdef int n = a.size() + b.size()
        cdef int pos, c, s, previous = ANY
        cdef cbool all_space = True
        if n > self.max_length:
            return False
        for pos in range(n):
            c = a[0][pos] if pos < <int>a.size() else b[0][pos - a.size()]
            if not self.char_space[c]:
                all_space = False
                break
        for pos in range(n):
            c = a[0][pos] if pos < <int>a.size() else b[0][pos - a.size()]
            if self.char_bad[c]:
                return False
            if self.char_space[c]:
                if not (self.whitespace_only and all_space) and self.misplaced(pos, n - 1):
                    return False
                continue
            s = self.char_script[c]
            if s == INHERITED:
                s = previous
            if self.char_digit[c] and not self.by_number:
                s = ANY
            if self.char_digit[c] and self.split_digits and n > 1:
                return False
            if self.by_script and s != ANY and previous != ANY and s != previous:
                return False
            previous = s
        return True

    cdef int32_t pair(self, int32_t left, int32_t right) noexcept nogil:
        cdef uint64_t key = (<uint64_t>left << 32) | <uint32_t>right
        cdef int32_t known = self.pair_of.find(key)
        if known != -2:
            return known
        cdef int32_t found = -1
        cdef vector[int32_t] none
        if self.valid(left, right):
            found = <int32_t>self.freq.size()
            self.pair_left.push_back(left)
            self.pair_right.push_back(right)
            self.pair_chars.push_back(<int32_t>(self.sym_chars[left].size() + self.sym_chars[right].size()))
            self.freq.push_back(0)
            self.positions.push_back(none)
            self.active.push_back(1)
            self.changed_flag.push_back(0)
        self.pair_of.insert(key, found)
        return found

    cdef inline void touch(self, int32_t pair) noexcept nogil:
        if not self.changed_flag[pair]:
            self.changed_flag[pair] = 1
            self.changed.push_back(pair)

    cdef void add(self, int32_t position, int32_t left, int32_t right) noexcept nogil:
        cdef int32_t pair = self.pair(left, right)
        if pair >= 0 and self.active[pair]:
            self.freq[pair] += self.weight[position]
            self.positions[pair].push_back(position)
            self.touch(pair)

    cdef void remove(self, int32_t position, int32_t left, int32_t right, int32_t best) noexcept nogil:
        cdef uint64_t key = (<uint64_t>left << 32) | <uint32_t>right
        cdef int32_t pair = self.pair_of.find(key)
        if pair >= 0 and pair != best and self.active[pair]:
            # No entry is pushed for a fall: the pair's entry above its count is pushed
            # again, with the count, when it reaches the top (best()).
            self.freq[pair] -= self.weight[position]

    cdef void flush(self) noexcept nogil:
        cdef SpmEntry entry
        for pair in self.changed:
            self.changed_flag[pair] = 0
            if self.active[pair]:
                entry.freq = self.freq[pair]
                entry.pair = pair
                spm_push(self.heap, entry, self.less)
        self.changed.clear()

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
        cdef vector[int32_t] chars = self.sym_chars[left]
        chars.insert(chars.end(), self.sym_chars[right].begin(), self.sym_chars[right].end())
        self.sym_chars.push_back(chars)
        self.sym_piece.push_back(piece)
        self.sym_of[piece] = new
        return new

    cdef void merge(self, int32_t best) noexcept nogil:
        cdef int32_t left = self.pair_left[best], right = self.pair_right[best]
        cdef int32_t new = self.symbol(left, right)
        cdef int32_t p, r, before, after
        cdef vector[int32_t] seen
        seen.swap(self.positions[best])
        for p in seen:
            r = self.nxt[p]
            if self.sym[p] != left or r < 0 or self.sym[r] != right:
                continue
            before = self.prv[p]
            after = self.nxt[r]
            if before >= 0:
                self.remove(before, self.sym[before], left, best)
            if after >= 0:
                self.remove(r, right, self.sym[after], best)
            self.sym[p] = new
            self.sym[r] = -1
            self.nxt[p] = after
            if after >= 0:
                self.prv[after] = p
            if before >= 0:
                self.add(before, self.sym[before], new)
            if after >= 0:
                self.add(p, new, self.sym[after])
        self.active[best] = 0
        self.flush()

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
