// The C++ helpers of _spm_loop.pyx: the queue's order, the pair map, one merge's memo.
#pragma once
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>
// What piece validity needs of a symbol, so that a pair is checked in O(1): its length in
// characters, the first and last script of its characters that have one (-1 a digit without
// split_by_number, -3 none), and flags.
enum { SPM_BAD = 1, SPM_DIGIT = 2, SPM_ALL_SPACE = 4, SPM_SPACE_FIRST = 8, SPM_SPACE_LAST = 16,
       SPM_SPACE_ANY = 32, SPM_SPACE_NOT_FIRST = 64, SPM_SPACE_NOT_LAST = 128 };
struct SpmShape { int32_t chars, first, last; uint8_t flags; };
// The shape of the piece left + right.
static inline SpmShape spm_join(const SpmShape& l, const SpmShape& r) {
    SpmShape out;
    out.chars = l.chars + r.chars;
    out.first = l.first != -3 ? l.first : r.first;
    out.last = r.last != -3 ? r.last : l.last;
    uint8_t any = (l.flags | r.flags) & (SPM_BAD | SPM_DIGIT | SPM_SPACE_ANY);
    out.flags = any | (l.flags & r.flags & SPM_ALL_SPACE) | (l.flags & SPM_SPACE_FIRST) | (r.flags & SPM_SPACE_LAST)
        | ((l.flags & SPM_SPACE_NOT_FIRST) || (r.flags & SPM_SPACE_ANY) ? SPM_SPACE_NOT_FIRST : 0)
        | ((l.flags & SPM_SPACE_ANY) || (r.flags & SPM_SPACE_NOT_LAST) ? SPM_SPACE_NOT_LAST : 0);
    return out;
}
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
    // Where key is, or the empty slot where it would go.
    size_t at(uint64_t key) const { return slot(key); }
    // Puts a key that is absent in the empty slot at(key) gave.
    void put(size_t i, uint64_t key, int32_t value) {
        keys[i] = key; values[i] = value; ++used;
        if (4 * used > 3 * keys.size()) grow();  // at most 3/4 full
    }
    void insert(uint64_t key, int32_t value) {
        if (4 * (used + 1) > 3 * keys.size()) grow();  // at most 3/4 full
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
#include <sys/mman.h>
// One merge's memo of pair IDs by the other symbol: (x, fixed) or (fixed, x) -> pair ID
// (-1 invalid), so that the pair map is read once per neighbour symbol, not per occurrence.
struct SpmMemo {
    std::vector<int32_t> value, touched;
    int32_t get(int32_t symbol) const { return (size_t)symbol < value.size() ? value[symbol] : -3; }
    void put(int32_t symbol, int32_t pair) {
        if ((size_t)symbol >= value.size()) value.resize(symbol + 1024, -3);
        value[symbol] = pair; touched.push_back(symbol);
    }
    void clear() { for (int32_t s : touched) value[s] = -3; touched.clear(); }
};
// Asks for huge pages over a large array read at random (fewer TLB misses); a hint only.
static void spm_huge_pages(void* start, size_t bytes) {
    const uintptr_t huge = 1 << 21;
    uintptr_t from = ((uintptr_t)start + huge - 1) & ~(huge - 1), to = ((uintptr_t)start + bytes) & ~(huge - 1);
    if (to > from) madvise((void*)from, to - from, MADV_HUGEPAGE);
}
static void spm_push(std::vector<SpmEntry>& heap, SpmEntry e, const SpmLess& less) {
    heap.push_back(e); std::push_heap(heap.begin(), heap.end(), less);
}
static SpmEntry spm_pop(std::vector<SpmEntry>& heap, const SpmLess& less) {
    std::pop_heap(heap.begin(), heap.end(), less);
    SpmEntry e = heap.back(); heap.pop_back(); return e;
}
