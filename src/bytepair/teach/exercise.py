"""The chapter's exercise: the learner's ``count_pairs`` and ``merge``, checked against the reference.

A learner writes two functions in a Python file::

    def count_pairs(words):           # words: a list of words, each a list of tokens
        ...                           # -> {(left, right): count, ...}
    def merge(word, pair, new_token): # one word, left to right, non-overlapping
        ...                           # -> the word's new list of tokens

Training with them (:func:`learner_fit`) takes the winner as a learner's loop
would: the first pair with the greatest count in the order ``count_pairs``
returns them (what ``max(counts, key=counts.get)`` picks). Deterministic
counting therefore means returning the pairs in the documented order, count
descending and then ``(left, right)``, as the starter does.

:func:`check` searches generated corpora (Hypothesis, used as a library) for
each of the chapter's five failure modes and two off-by-one mistakes (:data:`MODES`),
and reports the smallest counterexample it finds, the learner's answer beside the
expected one; :func:`load_learner` imports the file (for
``bytepair exercise check`` and ``bytepair workbench --exercise``);
:data:`STARTER` is the starter file, with the chapter's deliberate mistake.
Loading, calling and checking the learner's code (:class:`Learner`) live in
:mod:`bytepair.teach.exercise_learner`, and its process of its own, with a time
and a memory limit, in :mod:`bytepair.teach.exercise_process`; their names are
importable here.
"""

from __future__ import annotations

from collections import Counter
from typing import Callable, NamedTuple

from bytepair.learn.naive import fit as reference_fit
from bytepair.learn.rules import count_pairs as reference_count_pairs, replace_pair
# The learner's code is loaded, called and checked there; its names stay importable here.
from bytepair.teach.exercise_learner import MAX_PAIRS, Learner, LearnerError, learner_fit
from bytepair.teach.exercise_process import CALL_SECONDS, MEMORY_LIMIT, load_learner
from bytepair.teach.variants import choose_smallest

__all__ = ["CALL_SECONDS", "EXAMPLES", "MAX_PAIRS", "MEMORY_LIMIT", "MODES", "STARTER", "Finding",
           "Learner", "LearnerError", "Report", "check", "learner_fit", "load_learner", "starter"]

#: Examples tried per failure mode (each mode stops at its first counterexample, then shrinks it).
EXAMPLES = 200

STARTER = '''\
"""BPE exercise: count adjacent token pairs, and merge one pair without overlaps.

Check your work:   bytepair exercise check {name}
See it run:        bytepair workbench --exercise {name}

A word is a list of tokens, such as ["l", "o", "w", "</w>"]. Training counts
the pairs of every word, takes the first pair with the greatest count in the
order count_pairs returns them, and merges it in every word.
"""


def count_pairs(words):
    """Count every adjacent pair of tokens in every word.

    Return a dict {(left, right): count} in a deterministic order: the
    greatest count first, equal counts in (left, right) order, so that the
    same corpus always picks the same next rule.
    """
    counts = {}
    for word in words:
        # The deliberate mistake: a pair that occurs twice in one word is
        # counted once ("a a a" holds the pair a + a twice, at 0-1 and 1-2).
        for pair in set(zip(word, word[1:])):
            counts[pair] = counts.get(pair, 0) + 1
    return dict(sorted(counts.items(), key=lambda item: (-item[1], item[0])))


def merge(word, pair, new_token):
    """Replace every non-overlapping occurrence of pair in word by new_token, left to right."""
    out = []
    i = 0
    while i < len(word):
        if i + 1 < len(word) and (word[i], word[i + 1]) == pair:
            out.append(new_token)  # a match consumes both tokens
            i += 2
        else:
            out.append(word[i])
            i += 1
    return out
'''


def starter(name: str = "bpe_exercise.py") -> str:
    """The starter file's text (its docstring names the file as ``name``)."""
    return STARTER.replace("{name}", name)


# -- the check ------------------------------------------------------------------------

class Finding(NamedTuple):
    """One failure mode: whether the learner's code shows it, and the smallest example found."""

    mode: str
    title: str
    shown: bool
    example: str | None = None


#: The failure modes, in the chapter's order, with the two off-by-one mistakes beside the
#: function they are made in.
MODES = {
    "deduplicated": "deduplicating within each word",
    "skips-last-pair": "skipping the last pair of each word (off by one at the end)",
    "first-occurrence": "replacing only the first match",
    "overlapping": "reusing a token in overlapping merges",
    "loses-token": "losing a token in the merge (a token of the word is missing)",
    "across-boundaries": "merging across word boundaries",
    "arbitrary-ties": "leaving ties unspecified",
}


class Report(NamedTuple):
    findings: list[Finding]
    errors: list[str]           # the learner's code failed (raised, too slow, wrong type)
    training: str | None        # a corpus where training with the learner's code differs

    @property
    def passed(self) -> bool:
        return not self.errors and self.training is None and not any(f.shown for f in self.findings)

    def lines(self) -> list[str]:
        out = []
        for finding in self.findings:
            if finding.shown:
                out.append(f"FAIL  {finding.title}: {finding.example}")
            else:
                out.append(f"ok    {finding.title}: not seen")
        for error in self.errors:
            out.append(f"FAIL  {error}")
        if self.training is not None:
            out.append(f"FAIL  training with your functions: {self.training}")
        else:
            out.append("ok    training with your functions learns the reference's rules")
        return out


def _show(words) -> str:
    return "[" + ", ".join(_word(w) for w in words) + "]"


def _word(word) -> str:
    return "[" + ", ".join(f'"{t}"' for t in word) + "]"


def _pair(pair) -> str:
    return f"({pair[0]!r}, {pair[1]!r})"


def check(learner: Learner, examples: int = EXAMPLES) -> Report:
    """Search generated corpora for each failure mode in the learner's functions.

    Each search is Hypothesis's :func:`hypothesis.find` with a fixed seed (the
    same file always gets the same report) over words of the letters
    ``a b c`` (merges: ``a b``), so that repeats and ties are common; a counterexample is shrunk
    to the smallest one. Needs Hypothesis (``pip install 'bytepair[teach]'``).
    """
    search = _Search(examples)
    skips_last = _skips_last_pair(search, learner)
    findings = [_deduplicated(search, learner, beyond_last=skips_last.shown), skips_last,
                *_merge_findings(search, learner), _across_boundaries(search, learner),
                _arbitrary_ties(search, learner)]
    findings.sort(key=lambda finding: list(MODES).index(finding.mode))
    training = _training(search, learner)
    return Report(findings, search.errors, training)


class _Search:
    """Hypothesis's :func:`hypothesis.find` with the check's settings, and the corpora it draws.

    A call returns the smallest example that meets the condition, or None. When
    the learner's code fails on an example, the example does not count and the
    first such failure is kept in ``errors`` (one line for the report).
    """

    def __init__(self, examples: int):
        try:
            from hypothesis import HealthCheck, Phase, find, settings, strategies as st
            from hypothesis.errors import Flaky, NoSuchExample
        except ImportError:
            raise ImportError("bytepair exercise check needs Hypothesis: "
                              "pip install 'bytepair[teach]'") from None
        self._find, self._no_example, self._flaky = find, NoSuchExample, Flaky
        self._config = settings(database=None, max_examples=examples, derandomize=True,
                                deadline=None, phases=[Phase.generate, Phase.shrink],
                                suppress_health_check=list(HealthCheck))
        word = st.lists(st.sampled_from("abc"), max_size=8)
        self.one_word = st.lists(word, min_size=1, max_size=1)
        self.corpus = st.lists(word, min_size=1, max_size=4)
        self.several_words = self.corpus.filter(lambda words: len(words) > 1)  # a boundary
        self.corpus_and_merges = st.tuples(self.corpus, st.integers(1, 4))
        # A merge is tried with a pair of the word, so that matches (and repeats) are the rule.
        self.merge_case = st.lists(st.sampled_from("ab"), min_size=2, max_size=8).flatmap(
            lambda w: st.tuples(st.just(w), st.sampled_from(list(zip(w, w[1:])))))
        self.errors: list[str] = []

    def __call__(self, strategy, condition: Callable):
        def safely(example) -> bool:
            try:
                return condition(example)
            except LearnerError as exc:
                if not self.errors:
                    self.errors.append(str(exc))
                return False

        try:
            return self._find(strategy, safely, settings=self._config)
        except self._no_example:
            return None
        except self._flaky:  # an example failed once and not again: state kept between calls
            if not self.errors:
                self.errors.append("your functions answered otherwise when called again on the "
                                   "same input: their answers must depend on their arguments "
                                   "only")
            return None

    def again(self, call: Callable):
        """``call()`` (the learner's code run again on an example found, to show it), or None
        if the code fails this time (kept in ``errors``, as in a search)."""
        try:
            return call()
        except LearnerError as exc:
            if not self.errors:
                self.errors.append(str(exc))
            return None


#: An example found, shown again: the learner's function answered otherwise the second time.
_NOT_AGAIN = "your {what} answered otherwise (or failed) when called again on the same input"


def _last_pairs(words) -> Counter:
    """How many words end with each pair."""
    return Counter((word[-2], word[-1]) for word in words if len(word) > 1)


def _deduplicated(search: _Search, learner: Learner, beyond_last: bool) -> Finding:
    """Deduplicating: one word, a pair counted fewer times than it occurs. With ``beyond_last``
    (the last pair is known to be skipped), fewer times than it occurs before the last pair."""
    def undercounts(words):
        ref = reference_count_pairs(words, [1] * len(words))
        if beyond_last:
            ref = ref - _last_pairs(words)
        mine = dict(learner.count_pairs(words))
        return any(mine.get(pair, 0) < n for pair, n in ref.items())

    found = search(search.one_word, undercounts)
    return _count_finding("deduplicated", found, search, learner, under=True)


def _skips_last_pair(search: _Search, learner: Learner) -> Finding:
    """Off by one at the end: a word's last pair, which occurs once in it, is not counted."""
    def skips_last(words):
        # The learner's code is called on every example, as in the other count searches: this
        # search runs first, so a count_pairs that fails on any corpus fails on the smallest.
        mine = dict(learner.count_pairs(words))
        ref = reference_count_pairs(words, [1] * len(words))
        last = next(iter(_last_pairs(words)), None)
        return last is not None and ref[last] == 1 and mine.get(last, 0) == 0

    found = search(search.one_word, skips_last)
    return _count_finding("skips-last-pair", found, search, learner, under=True,
                          pairs=lambda words: list(_last_pairs(words)))


def _spelled_out(tokens, pair, new) -> list:
    """The merge's output with each new token written as its pair again: the word, if no
    token was lost or reused."""
    return [part for token in tokens for part in (pair if token == new else (token,))]


def _merge_findings(search: _Search, learner: Learner) -> list[Finding]:
    """One merge of one word: first match only (fewer new tokens than non-overlapping matches,
    none lost), overlapping (more), a token lost (the output, spelled out, is shorter)."""
    def merged(word, pair):
        new = pair[0] + pair[1]
        got = learner.merge(word, pair, new)
        expected, matches = replace_pair(word, pair[0], pair[1], new)
        return got, expected, matches, len(_spelled_out(got, pair, new)) - len(word)

    conditions = {
        "first-occurrence": lambda got, new, matches, grown: got.count(new) < matches
        and grown >= 0,
        "overlapping": lambda got, new, matches, grown: got.count(new) > matches,
        "loses-token": lambda got, new, matches, grown: grown < 0,
    }
    findings = []
    for mode, shows in conditions.items():
        def condition(case, shows=shows):
            word, pair = case
            got, _, matches, grown = merged(word, pair)
            return shows(got, pair[0] + pair[1], matches, grown)

        found = search(search.merge_case, condition)
        example = None
        if found is not None:
            word, pair = found
            new = pair[0] + pair[1]
            again = search.again(lambda: merged(word, pair))
            if again is not None and shows(again[0], new, again[2], again[3]):
                got, expected = again[0], again[1]
                example = (f"merge({_word(word)}, {_pair(pair)}, \"{new}\") returned "
                           f"{_word(got)}, expected {_word(expected)}")
                if mode == "loses-token":
                    example += _lost(word, _spelled_out(got, pair, new))
            else:
                example = _NOT_AGAIN.format(what="merge")
        findings.append(Finding(mode, MODES[mode], found is not None, example))
    return findings


def _lost(word, spelled: list) -> str:
    """Which of the word's tokens a merge lost, as the report says it."""
    if spelled == list(word[:len(spelled)]):
        lost = word[len(spelled):]
        return (f": the last {'token' if len(lost) == 1 else f'{len(lost)} tokens'} "
                f"{_word(lost)} dropped (off by one at the end)")
    return f": {len(word) - len(spelled)} of the word's tokens lost"


def _across_boundaries(search: _Search, learner: Learner) -> Finding:
    """Across boundaries: a pair counted more often than it occurs inside the words."""
    def overcounts(words):
        ref = reference_count_pairs(words, [1] * len(words))
        return any(n > ref.get(pair, 0) for pair, n in dict(learner.count_pairs(words)).items())

    found = search(search.several_words, overcounts)
    return _count_finding("across-boundaries", found, search, learner, under=False)


def _arbitrary_ties(search: _Search, learner: Learner) -> Finding:
    """Ties: right counts, but the first pair of greatest count is not the smallest one."""
    def wrong_tie(words):
        ref = reference_count_pairs(words, [1] * len(words))
        mine = learner.count_pairs(words)
        if not ref or dict(mine) != dict(ref):
            return False
        best = max(n for _, n in mine)
        return next(p for p, n in mine if n == best) != choose_smallest(ref)[0]

    found = search(search.corpus, wrong_tie)
    example = None
    if found is not None:
        mine = search.again(lambda: learner.count_pairs(found))
        if mine:
            best = max(n for _, n in mine)
            picked = next(p for p, n in mine if n == best)
            right = choose_smallest(reference_count_pairs(found, [1] * len(found)))[0]
            example = (f"{_show(found)}: first of the pairs counted {_times(best)}, yours "
                       f"{_pair(picked)}, expected {_pair(right)} (count descending, then "
                       "(left, right) order)")
        else:
            example = f"{_show(found)}: {_NOT_AGAIN.format(what='count_pairs')}"
    return Finding("arbitrary-ties", MODES["arbitrary-ties"], found is not None, example)


def _training(search: _Search, learner: Learner) -> str | None:
    """Training as a whole, on corpora with a few merges: the first round where the learner's
    rule or words differ from the reference's, and what differs."""
    def fits(words, merges):
        mine, ref = [], []
        learner_fit(learner, words, merges, _join,
                    on_round=lambda rule, before, after: mine.append((rule, list(after))))
        reference_fit(words, [1] * len(words), merges, _join,
                      on_round=lambda counts, rule, after: ref.append((rule, list(after))))
        return mine, ref

    def trains_differently(case):
        mine, ref = fits(*case)
        return mine != ref

    found = search(search.corpus_and_merges, trains_differently)
    if found is None:
        return None
    words, merges = found
    head = f"{_show(words)}, {merges} merge{'s' if merges > 1 else ''}"
    fitted = search.again(lambda: fits(words, merges))
    if fitted is None or fitted[0] == fitted[1]:
        return f"{head}: your functions failed or answered otherwise when run again on it"
    return f"{head}: {_first_difference(*fitted)}"


def _first_difference(mine: list, ref: list) -> str:
    """The first round where two trainings differ, each differing field as ``yours, expected``."""
    for (rule, rows), (want, want_rows) in zip(mine, ref):
        parts = []
        if (rule.left, rule.right) != (want.left, want.right):
            parts.append(f"merged {_pair((rule.left, rule.right))}, expected "
                         f"{_pair((want.left, want.right))}")
        if rule.count != want.count:
            parts.append(f"counted {rule.count}, expected {want.count}")
        if rule.replacements != want.replacements:
            parts.append(f"replaced {rule.replacements}, expected {want.replacements}")
        if rows != want_rows:
            parts.append(f"words after it {_show(rows)}, expected {_show(want_rows)}")
        if parts:
            same = "" if parts[0].startswith("merged") else f", {_pair((want.left, want.right))}"
            return f"rank {want.rank}{same}: " + "; ".join(parts)
    rounds = lambda n: f"{n} merge{'' if n == 1 else 's'}"  # noqa: E731
    return f"your training made {rounds(len(mine))}, expected {rounds(len(ref))}"


def _times(n: int) -> str:
    return "once" if n == 1 else f"{n} times"


def _join(left: str, right: str, rank: int) -> str:
    return left + right  # a new token of the word modes: the two texts side by side


def _count_finding(mode: str, found, search: _Search, learner: Learner, under: bool,
                   pairs: Callable | None = None) -> Finding:
    """The finding of a count search: the first pair (of ``pairs(found)``, else of all pairs)
    whose count is off the way the mode says."""
    if found is None:
        return Finding(mode, MODES[mode], False)
    ref = reference_count_pairs(found, [1] * len(found))
    counted = search.again(lambda: learner.count_pairs(found))
    mine = dict(counted or ())
    candidates = pairs(found) if pairs is not None else sorted(set(ref) | set(mine))
    pair = next((p for p in candidates if (mine.get(p, 0) < ref.get(p, 0) if under
                                           else mine.get(p, 0) > ref.get(p, 0))), None)
    if counted is None or pair is None:
        return Finding(mode, MODES[mode], True,
                       f"{_show(found)}: {_NOT_AGAIN.format(what='count_pairs')}")
    return Finding(mode, MODES[mode], True,
                   f"{_show(found)}: counted {_pair(pair)} {mine.get(pair, 0)}, "
                   f"expected {ref.get(pair, 0)}")
