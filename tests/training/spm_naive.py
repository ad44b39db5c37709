"""The naive reference of spm_train's BPE (sentencepiece 0.2.3), short enough to read at once.

1. Sentences: one per line; empty lines, lines over ``max_sentence_length`` bytes and
   lines holding U+2585 are skipped. Each is normalised by sentencepiece's own
   normaliser (rule, dummy prefix, extra whitespace; spaces written ``▁``) and every
   meta piece in it becomes the boundary U+001F, longest first.
2. Characters: counted (NUL left out), sorted by (count desc, code point), kept while
   the float32 share counted so far is below ``character_coverage``; the rest (and the
   boundary) become U+2585, which never merges.
3. Words: a new word starts at the start and at each ``▁`` (a run of ``▁`` stays one
   word with ``allow_whitespace_only_pieces``; ``▁`` ends words as a suffix).
4. The loop, recounting everything each step: a pair's frequency is the sum over words
   of count x adjacent occurrences (overlapping ones too). Candidates are the valid
   pairs ever adjacent (their frequency may have fallen to 0) whose string is not made
   yet; the best has the greatest frequency, then the fewest characters, then the
   smallest UTF-8 string. It is replaced left to right in every word.
5. Output: meta pieces at their IDs (score 0), then the merged pieces (score -i), then
   the kept characters (count desc, code point), scores going on from the merges.
"""

from __future__ import annotations

from collections import Counter

import sentencepiece as spm

from bytepair.learn.spm_chars import float32
from bytepair.learn.spm_pieces import PieceRules

SPACE, UNK_CHAR, BOUNDARY = "\u2581", "\u2585", "\x1f"
NORMAL, UNKNOWN, CONTROL, USER_DEFINED, BYTE = 1, 2, 3, 4, 6


def meta_pieces(o: dict) -> dict[int, tuple[str, int]]:
    """ID -> (piece, type) of unk/bos/eos/pad, control and user-defined symbols, bytes."""
    meta = {}
    for name, kind in (("unk", UNKNOWN), ("bos", CONTROL), ("eos", CONTROL), ("pad", CONTROL)):
        if o[f"{name}_id"] >= 0:
            meta[o[f"{name}_id"]] = (o[f"{name}_piece"], kind)
    extra = [(s, CONTROL) for s in o["control_symbols"]] + [(s, USER_DEFINED) for s in o["user_defined_symbols"]]
    if o["byte_fallback"]:
        extra += [(f"<0x{b:02X}>", BYTE) for b in range(256)]
    free = 0
    for piece, kind in extra:
        while free in meta:
            free += 1
        meta[free] = (piece, kind)
    return meta


def normalize(line: str, o: dict) -> str:
    normalizer = spm.SentencePieceNormalizer(
        rule_name=o["normalization_rule_name"], add_dummy_prefix=o["add_dummy_prefix"],
        remove_extra_whitespaces=o["remove_extra_whitespaces"], escape_whitespaces=True)
    return normalizer.normalize(line)


def split_words(s: str, o: dict) -> list[str]:
    if not o["split_by_whitespace"]:
        return [s]
    words, in_space = [], False
    for i, c in enumerate(s):
        space = c == SPACE
        if o["treat_whitespace_as_suffix"]:
            if i == 0 or (not space and in_space and o["allow_whitespace_only_pieces"]):
                words.append("")
            if not space:
                in_space = False
            else:
                in_space = True
            words[-1] += c
            if space and i + 1 < len(s) and not o["allow_whitespace_only_pieces"]:
                words.append("")
        else:
            if i == 0 or (space and (not in_space or not o["allow_whitespace_only_pieces"])):
                words.append("")
                in_space = True
            if in_space and not space:
                in_space = False
            words[-1] += c
    return words


def train(lines: list[bytes], o: dict) -> list[tuple[str, float, int]]:
    """spm_train's pieces ``(piece, score, type)`` for ``lines`` under options ``o``."""
    meta = meta_pieces(o)
    metas = sorted({p for p, _ in meta.values()}, key=len, reverse=True)
    sentences = []
    for line in lines:
        if not line or len(line) > o["max_sentence_length"] or UNK_CHAR.encode() in line:
            continue
        s = normalize(line.decode("utf-8", "replace"), o)
        for piece in metas:  # longest first, left to right, as one scan would
            s = s.replace(piece, BOUNDARY) if piece in s else s
        if s:
            sentences.append(s)
    kept = kept_chars(sentences, o["character_coverage"])
    words = Counter()
    for s in sentences:
        s = "".join(c if c in kept else UNK_CHAR for c in s)
        words.update(split_words(s, o))
    rules = PieceRules(**{k: o[k] for k in PieceRules.__dataclass_fields__})
    merges = learn([list(w) for w in words], list(words.values()),
                   o["vocab_size"] - len(meta) - len(kept), rules)
    final = merges + sorted(kept, key=lambda c: (-kept[c], c))
    out, pieces = [], iter(final)
    for i in range(len(meta) + len(final)):
        out.append((meta[i][0], 0.0, meta[i][1]) if i in meta else (next(pieces), 0.0, NORMAL))
    return [(p, -float(final.index(p)) if t == NORMAL else s, t) for p, s, t in out]


def kept_chars(sentences: list[str], coverage: float) -> dict[str, int]:
    """The characters kept, with their counts, in the order spm_train sorts them."""
    chars = Counter(c for s in sentences for c in s if c != "\0")
    total, done, kept = sum(chars.values()), 0, {}
    for c, n in sorted(chars.items(), key=lambda cn: (-cn[1], cn[0])):
        if float32(done / total) >= float32(coverage):
            break
        done += n
        if c != BOUNDARY:
            kept[c] = n
    return kept


def learn(words: list[list[str]], counts: list[int], merges: int, rules: PieceRules,
          taken: set[str] = frozenset()) -> list[str]:
    """The merged pieces; a pair spelling a string of ``taken`` (or one made) is never a candidate."""
    def valid(a: str, b: str) -> bool:
        return UNK_CHAR not in (a, b) and rules.valid(a + b)

    def live() -> Counter:
        freq = Counter()
        for w, n in zip(words, counts):
            for a, b in zip(w, w[1:]):
                if valid(a, b):
                    freq[a, b] += n
        return freq

    seen, made, out = set(live()), set(taken), []
    while len(out) < merges:
        freq = live()
        candidates = [p for p in seen if p[0] + p[1] not in made]
        if not candidates:
            break
        a, b = min(candidates, key=lambda p: (-freq[p], len(p[0] + p[1]), (p[0] + p[1]).encode(), p))
        made.add(a + b)
        out.append(a + b)
        for w in words:
            i = 0
            while i < len(w) - 1:
                if w[i] == a and w[i + 1] == b:
                    w[i:i + 2] = [a + b]
                    # spm_train makes the new piece's neighbours candidates as it merges, so a
                    # pair that the next match in the same word undoes stays one (count 0).
                    if i > 0 and valid(w[i - 1], w[i]):
                        seen.add((w[i - 1], w[i]))
                    if i + 1 < len(w) and valid(w[i], w[i + 1]):
                        seen.add((w[i], w[i + 1]))
                i += 1
        seen |= set(live())
    return out
