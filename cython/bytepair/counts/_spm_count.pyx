# distutils: language = c++
"""Counting sentencepiece's words in C++ for the ``identity`` rule (the compiled twin of
:meth:`bytepair.split.spm_text.SentenceText.block_words` followed by a count).

Lines are read from a bytes buffer: empty ones, ones over the length limit and ones
holding U+2585 are skipped; spaces are removed at the ends and in runs (with
``remove_extra_whitespaces``), the dummy ``▁`` is put first (last as a suffix), each
space is written ``▁`` and the sentence is cut into words as SplitIntoWords does. A line
that is not valid UTF-8, or holds the first character of a meta piece, is handed back
for the Python path, which handles every case.
"""

from libc.stdint cimport int64_t
from libcpp.string cimport string
from libcpp.unordered_map cimport unordered_map
from libcpp.vector cimport vector
from libcpp cimport bool as cbool

cdef extern from *:
    """
    #include <cstdint>
    #include <string>
    #include <unordered_map>
    static const char SPM_SPACE[] = "\\xe2\\x96\\x81";
    static inline bool spm_valid_utf8(const unsigned char* s, size_t n) {
        size_t i = 0;
        while (i < n) {
            unsigned char c = s[i];
            if (c < 0x80) { ++i; continue; }
            size_t len; unsigned int cp;
            if ((c & 0xE0) == 0xC0) { len = 2; cp = c & 0x1F; }
            else if ((c & 0xF0) == 0xE0) { len = 3; cp = c & 0x0F; }
            else if ((c & 0xF8) == 0xF0) { len = 4; cp = c & 0x07; }
            else return false;
            if (i + len > n) return false;
            for (size_t k = 1; k < len; ++k) {
                if ((s[i + k] & 0xC0) != 0x80) return false;
                cp = (cp << 6) | (s[i + k] & 0x3F);
            }
            if ((len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000)
                || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return false;
            i += len;
        }
        return true;
    }
    static inline bool spm_is_space(const std::string& s, size_t i) {
        return i + 2 < s.size() && (unsigned char)s[i] == 0xE2 && (unsigned char)s[i + 1] == 0x96
            && (unsigned char)s[i + 2] == 0x81;
    }
    static inline void spm_count(std::unordered_map<std::string, int64_t>& counts, const std::string& s,
                                 size_t start, size_t length) {
        ++counts[s.substr(start, length)];
    }
    static inline size_t spm_char_len(unsigned char c) {
        return c < 0x80 ? 1 : (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3 : 4;
    }
    """
    cbool spm_valid_utf8(const unsigned char* s, size_t n) nogil
    cbool spm_is_space(const string& s, size_t i) nogil
    size_t spm_char_len(unsigned char c) nogil
    void spm_count(unordered_map[string, int64_t]& counts, const string& s, size_t start, size_t length) nogil
    const char* SPM_SPACE


cdef void _normalize(const unsigned char* line, size_t n, cbool remove_extra, cbool prefix,
                     cbool suffix, string& out) noexcept nogil:
    cdef size_t i = 0, end = n
    out.clear()
    if remove_extra:
        while i < end and line[i] == 32:
            i += 1
        while end > i and line[end - 1] == 32:
            end -= 1
        if i == end:
            return
    if prefix:
        out.append(SPM_SPACE, 3)
    cdef cbool previous_space = False
    while i < end:
        if line[i] == 32:
            if not (remove_extra and previous_space):
                out.append(SPM_SPACE, 3)
            previous_space = True
        else:
            out.push_back(<char>line[i])
            previous_space = False
        i += 1
    if remove_extra:  # every trailing ▁ goes, a ▁ of the line too, as sentencepiece's normaliser does
        while (out.size() >= 3 and <unsigned char>out[out.size() - 3] == 0xE2
               and <unsigned char>out[out.size() - 2] == 0x96
               and <unsigned char>out[out.size() - 1] == 0x81):
            out.resize(out.size() - 3)
    if suffix:
        out.append(SPM_SPACE, 3)


cdef void _words(const string& s, cbool by_whitespace, cbool suffix, cbool ws_only,
                 unordered_map[string, int64_t]& counts) noexcept nogil:
    cdef size_t i = 0, start = 0, step, n = s.size()
    cdef cbool space, in_space = False
    if not by_whitespace:
        spm_count(counts, s, 0, s.size())
        return
    while i < n:
        space = spm_is_space(s, i)
        step = 3 if space else spm_char_len(<unsigned char>s[i])
        if suffix:
            if i > start and not space and in_space and ws_only:
                spm_count(counts, s, start, i - start)
                start = i
            in_space = space
            i += step
            if space and i < n and not ws_only:
                spm_count(counts, s, start, i - start)
                start = i
        else:
            if i > start and space and (not in_space or not ws_only):
                spm_count(counts, s, start, i - start)
                start = i
            if i == start:
                in_space = True
            if in_space and not space:
                in_space = False
            i += step
    if n > start:
        spm_count(counts, s, start, n - start)


def count_identity(const unsigned char[:] data, long long limit, bint remove_extra, bint prefix,
                   bint suffix, bint ws_only, bint by_whitespace, bytes meta_firsts):
    """``({word: count}, lines too long, [lines for the Python path])`` of a buffer of lines."""
    cdef unordered_map[string, int64_t] counts
    cdef vector[size_t] handed
    cdef string normalized
    cdef size_t n = data.shape[0], start = 0, end, k
    cdef long long too_long = 0
    cdef const unsigned char* base = &data[0] if n else NULL
    cdef const unsigned char* line
    cdef cbool special[256]
    cdef size_t length
    for k in range(256):
        special[k] = False
    for k in range(len(meta_firsts)):
        special[meta_firsts[k]] = True
    with nogil:
        while start < n:
            end = start
            while end < n and base[end] != 10:
                end += 1
            line = base + start
            length = end - start
            if length == 0:
                pass
            elif <long long>length > limit:
                too_long += 1
            else:
                for k in range(length):
                    if special[line[k]] or (line[k] == 0xE2 and k + 2 < length and line[k + 1] == 0x96
                                            and line[k + 2] == 0x85):
                        break
                else:
                    k = length
                if k < length or not spm_valid_utf8(line, length):
                    handed.push_back(start)
                    handed.push_back(end)
                else:
                    _normalize(line, length, remove_extra, prefix and not suffix, prefix and suffix,
                               normalized)
                    if normalized.size():
                        _words(normalized, by_whitespace, suffix, ws_only, counts)
            start = end + 1
    table = {}
    for item in counts:
        table[item.first.decode("utf-8")] = item.second
    lines = [bytes(data[handed[k]:handed[k + 1]]) for k in range(0, handed.size(), 2)]
    return table, too_long, lines
