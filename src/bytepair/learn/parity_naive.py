"""The parity-aware reference trainer: recount every language, every round.

This is the specification the fast engine (:mod:`bytepair.learn.parity`) is
tested against. Its cost is ``O(merges x corpus)``.

Each round:

1. Choose a language (:class:`bytepair.learn.parity_rules.Selector`), or none
   during the first ``global_merges`` rules, which are chosen from the counts
   of all languages added up.
2. Count that language's pairs (each sequence a barrier, overlapping windows
   counted, weighted) and take the best by ``(-count, key(left), key(right))``:
   greatest count, ties to the smallest keys. With no ``key`` the keys are the
   IDs, bytepair's order (:func:`bytepair.learn.rules.priority`).
3. If that count is below ``min_frequency`` (or nothing is left), the language is
   exhausted and the round learns nothing; in the global phase, training ends.
4. Otherwise replace the pair left to right in every language's sequences and
   dev sequences; each language's dev length (with a dev set) or training
   length (with ratios) falls by its weighted replacements.
"""

from __future__ import annotations

from typing import Callable, Hashable, Sequence

from bytepair.learn.parity_rules import GLOBAL, ParityMerge, Selector, ratio_scores, without_text
from bytepair.learn.rules import count_pairs, replace_pair

Corpus = tuple[Sequence[Sequence[int]], Sequence[int]]  # (sequences, weights)


def fit(
    languages: Sequence[Corpus],
    merges: int,
    join: Callable[[int, int, int], int],
    *,
    dev: Sequence[Corpus] | None = None,
    ratio: Sequence[float] | None = None,
    variant: str = "base",
    global_merges: int = 0,
    window_size: int = 100,
    alpha: float = 2.0,
    min_frequency: int = 1,
    key: Callable[[int], Hashable] | None = None,
) -> list[ParityMerge]:
    """Learn up to ``merges`` rules from one ``(sequences, weights)`` corpus per language.

    Give ``dev`` (one corpus per language) or ``ratio`` (one target per language).
    ``join(left, right, rank)`` names each new symbol.

    >>> rules = fit([([b"aab"], [1]), ([b"cd"], [1])], 2, lambda l, r, rank: 256 + rank,
    ...             dev=[([b"ab"], [1]), ([b"cdcd"], [1])])
    >>> [(m.left, m.right, m.language) for m in rules]
    [(99, 100, 1), (97, 97, 0)]
    """
    key = key or (lambda symbol: symbol)
    seqs = [[list(s) for s in sequences] for sequences, _ in languages]
    weights = [list(w) for _, w in languages]
    dev_seqs = [[list(s) for s in sequences] for sequences, _ in dev] if dev else None
    dev_weights = [list(w) for _, w in dev] if dev else None
    if dev is not None:
        lengths = [sum(len(s) * w for s, w in zip(ss, ws)) for ss, ws in zip(dev_seqs, dev_weights)]
    else:
        lengths = [sum(len(s) * w for s, w in zip(ss, ws)) for ss, ws in zip(seqs, weights)]
    initial = list(lengths)
    selector = Selector(variant, len(languages), window_size=window_size, alpha=alpha)
    exhausted = without_text(initial, ratio)
    rules: list[ParityMerge] = []
    while len(rules) < merges and len(exhausted) < len(languages):
        if len(rules) < global_merges:
            language = GLOBAL
            counts = count_pairs([s for ss in seqs for s in ss], [w for ws in weights for w in ws])
        else:
            scores = lengths if ratio is None else ratio_scores(initial, lengths, ratio)
            language = selector.choose(scores, exhausted)
            counts = count_pairs(seqs[language], weights[language])
        best = min(counts.items(), key=lambda item: (-item[1], key(item[0][0]), key(item[0][1])),
                   default=None)
        if best is None or best[1] < min_frequency:
            if language == GLOBAL:
                break
            exhausted.add(language)
            continue
        (left, right), count = best
        new = join(left, right, len(rules))
        replaced = 0
        for lang in range(len(languages)):
            shrunk = 0
            for i, weight in enumerate(weights[lang]):
                seqs[lang][i], matches = replace_pair(seqs[lang][i], left, right, new)
                shrunk += matches * weight
            if language in (GLOBAL, lang):  # the text that chose the rule
                replaced += shrunk
            if dev_seqs is not None:
                shrunk = 0
                for i, weight in enumerate(dev_weights[lang]):
                    dev_seqs[lang][i], matches = replace_pair(dev_seqs[lang][i], left, right, new)
                    shrunk += matches * weight
            lengths[lang] -= shrunk
        rules.append(ParityMerge(len(rules), left, right, new, count, replaced, language))
    return rules
