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
each of the chapter's five failure modes and reports the smallest
counterexample it finds; :func:`load_learner` imports the file (for
``bytepair exercise check`` and ``bytepair workbench --exercise``);
:data:`STARTER` is the starter file, with the chapter's deliberate mistake.
"""

from __future__ import annotations

import importlib.util
import operator
import sys
import threading
import time
from pathlib import Path
from typing import Callable, NamedTuple, Sequence

from bytepair.learn.naive import fit as reference_fit
from bytepair.learn.rules import Merge, count_pairs as reference_count_pairs, replace_pair
from bytepair.teach.variants import choose_smallest

#: The longest one call of a learner's function may take, in seconds.
CALL_SECONDS = 2.0
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


class LearnerError(ValueError):
    """The learner's code failed (raised, ran too long, or returned the wrong kind of value)."""


class _Refused(LearnerError):
    """A wrong answer of the learner's function, refused by the check of it."""


class _TooSlow(BaseException):
    """Raised inside the learner's code when a call runs past its time."""


#: The most entries a ``count_pairs`` answer may hold, or the tokens of its words if more
#: (no more distinct pairs can occur in them); an endless generator stops there.
MAX_PAIRS = 100_000


class Learner:
    """The learner's two functions, called with a time limit and their failures in one line.

    Every answer is checked before it is used: ``count_pairs`` must return
    ``{(left, right): count}`` (a mapping, or ``(pair, count)`` entries) whose
    pairs are two tokens of the words it was given and whose counts are whole
    numbers no greater than those words' tokens; ``merge`` must return a list
    no longer than the word, of the word's own tokens and the new token. A
    failure, or an exception of the learner's code, is a :class:`LearnerError`
    in one line that names the function. ``where`` (such as ``"on a bytes
    corpus"``) says in those lines what kind of tokens the words hold.
    """

    def __init__(self, name: str, count_pairs: Callable, merge: Callable, filename: str = ""):
        self.name = name
        self.count_pairs_function = count_pairs
        self.merge_function = merge
        self.filename = filename

    def _call(self, function: Callable, what: str, args: tuple, take: Callable):
        """``take(function(*args))``, both under the time limit: ``take`` reads the answer
        (a generator runs the learner's code as it is read) and refuses a wrong one."""
        # A trace function on the learner's own frames stops a loop that never ends;
        # it works in any thread (the server's), where an alarm signal cannot.
        end = time.perf_counter() + CALL_SECONDS
        filename = self.filename

        def local(frame, event, arg):
            if time.perf_counter() > end:
                raise _TooSlow
            return local

        def calls(frame, event, arg):
            return local if not filename or frame.f_code.co_filename == filename else None

        previous = sys.gettrace()
        sys.settrace(calls)
        try:
            return take(function(*args))
        except _Refused as exc:
            raise LearnerError(str(exc)) from None
        except _TooSlow:
            raise LearnerError(f"your {what} ran for more than {CALL_SECONDS:g} s on "
                               f"{_show_args(args)}: does its loop always move on?") from None
        except KeyboardInterrupt:
            # Ctrl-C reaches the main thread only; in another (the server's) it is the learner's.
            if threading.current_thread() is threading.main_thread():
                raise
            raise LearnerError(_raised(what, KeyboardInterrupt(), args)) from None
        except BaseException as exc:  # SystemExit too: the learner's code stops only itself
            raise LearnerError(_raised(what, exc, args)) from None
        finally:
            sys.settrace(previous)

    def count_pairs(self, words: list[list], where: str = "") -> list[tuple[tuple, int]]:
        """The learner's counts as ``[(pair, count), ...]`` in the order returned (zeros left out)."""
        words = [list(word) for word in words]
        tokens = {token for word in words for token in word}
        kinds = {type(token) for token in tokens}
        symbols = sum(len(word) for word in words)
        limit = max(MAX_PAIRS, symbols)
        a_pair = f"{where + ' ' if where else ''}a pair is two {_kind(kinds)}"

        def take(result) -> list[tuple[tuple, int]]:
            if isinstance(result, (str, bytes)) or not (hasattr(result, "items")
                                                        or hasattr(result, "__iter__")):
                raise _Refused("your count_pairs must return a dict {(left, right): count}, "
                                   f"got {_short(result)}")
            mapping = hasattr(result, "items")
            out = []
            for n, entry in enumerate(result.items() if mapping else result):
                if n == limit:
                    raise _Refused(f"your count_pairs returned more than {limit:,} pairs; "
                                   f"its words hold only {symbols:,} tokens")
                # Outside a mapping, ("a", "b") is a pair without its count, not pair "a".
                if type(entry) not in (tuple, list) or len(entry) != 2 or (
                        not mapping and type(entry[0]) not in (tuple, list)):
                    raise _Refused("your count_pairs must return a dict {(left, right): "
                                       f"count}}, got the entry {_short(entry)}")
                pair, count = entry
                if type(pair) not in (tuple, list) or len(pair) != 2:
                    raise _Refused(f"your count_pairs returned the key {_short(pair)}: "
                                       f"{a_pair}, as a tuple (left, right)")
                if not tokens:
                    raise _Refused(f"your count_pairs returned the key {_short(pair)}, but its "
                                   "words hold no tokens")
                for token in pair:
                    if type(token) not in kinds:
                        raise _Refused(f"your count_pairs returned the key {_short(pair)}: "
                                           f"{a_pair}")
                    if token not in tokens:
                        raise _Refused(f"your count_pairs returned the key {_short(pair)}: "
                                           f"{_short(token)} is not a token of any of its words")
                if isinstance(count, bool) or not hasattr(type(count), "__index__"):
                    raise _Refused(f"your count_pairs returned the count {_short(count)} for "
                                       f"{_short(pair)}: a count is a whole number (int)")
                count = operator.index(count)
                if count > symbols:
                    raise _Refused(f"your count_pairs returned the count {_short(count)} for "
                                       f"{_short(pair)}: more than the {symbols:,} tokens its "
                                       "words hold in all")
                if count > 0:
                    out.append((tuple(pair), count))
            return out

        return self._call(self.count_pairs_function, "count_pairs", (words,), take)

    def merge(self, word: list, pair: tuple, new_token, where: str = "") -> list:
        """The learner's merge of one word, as a list (checked: see the class)."""
        word, pair = list(word), tuple(pair)
        allowed = {*word, new_token}
        kinds = {type(token) for token in allowed}

        def take(result) -> list:
            if isinstance(result, (str, bytes)) or not hasattr(result, "__iter__"):
                raise _Refused(f"your merge must return a list of tokens, got {_short(result)}")
            out = []
            for token in result:
                if len(out) == len(word):
                    raise _Refused(f"your merge returned more than {len(word)} tokens for "
                                       f"the word {_short(word)}: a merge never makes a word "
                                       "longer")
                if type(token) not in kinds:
                    raise _Refused(f"your merge returned the token {_short(token)}: "
                                       f"{where + ' ' if where else ''}a token is "
                                       f"{_kind(kinds, one=True)}")
                if token not in allowed:
                    raise _Refused(f"your merge returned the token {_short(token)} for the "
                                       f"word {_short(word)}: a merged word holds only the "
                                       f"word's tokens and the new token {_short(new_token)}")
                out.append(token)
            return out

        return self._call(self.merge_function, "merge", (word, pair, new_token), take)


def _kind(kinds: set, one: bool = False) -> str:
    """What the tokens are, for a refusal: token IDs (ints), tokens (strings)."""
    if kinds == {int}:
        return "a token ID (int)" if one else "token IDs (ints)"
    if kinds == {str}:
        return "a string" if one else "tokens (strings)"
    return "one of its word's tokens" if one else "tokens of its words"


def _raised(what: str, exc: BaseException, args: tuple) -> str:
    """The learner's exception in one line: its type and message (only as much of either as is
    safe to read: the message may be the learner's code)."""
    try:
        message = " ".join(str(exc).split())
    except BaseException:  # a __str__ that fails or runs past the time limit
        message = ""
    if len(message) > 200:
        message = message[:197] + "..."
    name = getattr(type(exc), "__name__", "an exception")
    return (f"your {what} raised {name}{': ' + message if message else ''} "
            f"(on {_show_args(args)})")


def _short(value, limit: int = 80) -> str:
    """``repr(value)`` in at most ``limit`` characters, written only from built-in values: any
    other object is shown by its type's name, as its own repr is code of the learner's."""
    text = _repr(value, limit + 1)
    return text if len(text) <= limit else text[:limit - 3] + "..."


def _repr(value, budget: int) -> str:
    kind = type(value)
    if budget <= 0:
        return "..."  # each level has less: a list that holds itself ends
    if value is None or kind in (bool, float):
        return repr(value)
    if kind is int:
        return repr(value) if value.bit_length() <= 256 else f"<an int of {value.bit_length()} bits>"
    if kind in (str, bytes):
        return repr(value[:budget])
    if kind in (tuple, list, set, frozenset, dict):
        parts, used = [], 0
        items = value.items() if kind is dict else value
        for item in items:
            if used > budget:
                parts.append("...")
                break
            room = budget - used - 1
            text = (f"{_repr(item[0], room)}: {_repr(item[1], room)}" if kind is dict
                    else _repr(item, room))
            parts.append(text)
            used += len(text) + 2
        inner = ", ".join(parts)
        if kind is tuple:
            return f"({inner},)" if len(parts) == 1 else f"({inner})"
        if kind is list:
            return f"[{inner}]"
        if kind in (set, frozenset) and not parts:
            return f"{kind.__name__}()"
        return f"{{{inner}}}" if kind is not frozenset else f"frozenset({{{inner}}})"
    return f"<{kind.__name__} object>"


def _show_args(args) -> str:
    return ", ".join(_short(a) for a in args)


def load_learner(path) -> Learner:
    """Import ``count_pairs`` and ``merge`` from the Python file ``path``; one-line errors.

    The file is run as a module of its own (not added to ``sys.modules``).
    """
    path = Path(path)
    if not path.is_file():
        raise ValueError(f"no such file: {str(path)!r}")
    name = f"bytepair_exercise_{abs(hash(str(path.resolve())))}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ValueError(f"{str(path)!r} cannot be imported as Python")
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
    except SyntaxError as exc:
        raise ValueError(f"{path.name}, line {exc.lineno}: {exc.msg}") from None
    except (Exception, SystemExit) as exc:  # a file that calls exit() when imported, too
        raise ValueError(f"{path.name} raised {type(exc).__name__} when imported: "
                         f"{' '.join(str(exc).split())}") from None
    functions = {}
    for function in ("count_pairs", "merge"):
        value = getattr(module, function, None)
        if not callable(value):
            raise ValueError(f"{path.name} must define a function {function}(...)"
                             + (f", got {type(value).__name__}" if value is not None else ""))
        functions[function] = value
    return Learner(path.name, functions["count_pairs"], functions["merge"],
                   str(path.resolve()) if path.exists() else "")


def learner_fit(learner: Learner, words: Sequence[Sequence], merges: int,
                join: Callable, *, first_rank: int = 0, where: str = "",
                on_round: Callable[[Merge, list[list], list[list]], None] | None = None,
                ) -> tuple[list[Merge], list[list]]:
    """Up to ``merges`` rounds with the learner's functions: count, take the first pair with the
    greatest count in the order returned, merge it in every word (weights are all 1).

    Ranks start at ``first_rank``, so the words after ``k`` rounds with
    ``first_rank=k`` continue a run (the learner's functions are taken to depend
    on their arguments only). ``on_round(rule, before, after)`` sees each round; ``where``
    goes to the learner's refusals (see :class:`Learner`).
    """
    rows = [list(word) for word in words]
    rules: list[Merge] = []
    for rank in range(first_rank, first_rank + merges):
        counts = learner.count_pairs(rows, where)
        if not counts:
            break
        best = max(count for _, count in counts)
        pair = next(pair for pair, count in counts if count == best)
        new = join(pair[0], pair[1], rank)
        before = sum(row.count(new) for row in rows)
        previous, rows = rows, [learner.merge(row, pair, new, where) for row in rows]
        rules.append(Merge(rank, pair[0], pair[1], new, best,
                           sum(row.count(new) for row in rows) - before))
        if on_round is not None:
            on_round(rules[-1], previous, rows)
    return rules, rows


# -- the check ------------------------------------------------------------------------

class Finding(NamedTuple):
    """One failure mode: whether the learner's code shows it, and the smallest example found."""

    mode: str
    title: str
    shown: bool
    example: str | None = None


#: The five failure modes, in the chapter's order.
MODES = {
    "deduplicated": "deduplicating within each word",
    "first-occurrence": "replacing only the first match",
    "overlapping": "reusing a token in overlapping merges",
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
    findings = [_deduplicated(search, learner), *_merge_findings(search, learner),
                _across_boundaries(search, learner), _arbitrary_ties(search, learner)]
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


def _deduplicated(search: _Search, learner: Learner) -> Finding:
    """Deduplicating: one word, a pair counted fewer times than it occurs."""
    def undercounts(words):
        ref = reference_count_pairs(words, [1] * len(words))
        mine = dict(learner.count_pairs(words))
        return any(mine.get(pair, 0) < n for pair, n in ref.items())

    found = search(search.one_word, undercounts)
    return _count_finding("deduplicated", found, search, learner, under=True)


def _merge_findings(search: _Search, learner: Learner) -> list[Finding]:
    """First match only / overlapping: one merge of one word makes fewer / more tokens than
    the word has non-overlapping matches."""
    def replaced(case):
        word, pair = case
        new = pair[0] + pair[1]
        expected, matches = replace_pair(word, pair[0], pair[1], new)
        return learner.merge(word, pair, new).count(new), matches, expected

    findings = []
    for mode, shows in (("first-occurrence", operator.lt), ("overlapping", operator.gt)):
        found = search(search.merge_case, lambda case: shows(*replaced(case)[:2]))
        example = None
        if found is not None:
            word, pair = found
            new = pair[0] + pair[1]
            expected, matches = replace_pair(word, pair[0], pair[1], new)
            got = search.again(lambda: learner.merge(word, pair, new))
            example = (f"merge({_word(word)}, {_pair(pair)}, \"{new}\") returned {_word(got)}, "
                       f"expected {_word(expected)}"
                       if got is not None and shows(got.count(new), matches)
                       else _NOT_AGAIN.format(what="merge"))
        findings.append(Finding(mode, MODES[mode], found is not None, example))
    return findings


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
            example = (f"{_show(found)}: your counts put {_pair(picked)} first among the pairs "
                       f"counted {best} times; the documented order picks {_pair(right)}")
        else:
            example = f"{_show(found)}: {_NOT_AGAIN.format(what='count_pairs')}"
    return Finding("arbitrary-ties", MODES["arbitrary-ties"], found is not None, example)


def _training(search: _Search, learner: Learner) -> str | None:
    """Training as a whole, on corpora with a few merges: where the learner's rules differ."""
    def fits(words, merges):
        mine, _ = learner_fit(learner, words, merges, _join)
        ref, _ = reference_fit(words, [1] * len(words), merges, _join)
        return mine, ref

    def trains_differently(case):
        mine, ref = fits(*case)
        return mine != ref

    found = search(search.corpus_and_merges, trains_differently)
    if found is None:
        return None
    words, merges = found
    fitted = search.again(lambda: fits(words, merges))
    if fitted is None:
        return (f"{_show(words)}, {merges} merge{'s' if merges > 1 else ''}: your functions "
                "failed when run again on it")
    mine, ref = fitted
    return (f"{_show(words)}, {merges} merge{'s' if merges > 1 else ''}: your rules "
            f"{_rules(mine)}, expected {_rules(ref)}")


def _join(left: str, right: str, rank: int) -> str:
    return left + right  # a new token of the word modes: the two texts side by side


def _rules(rules: list[Merge]) -> str:
    return "[" + ", ".join(f"{_pair((r.left, r.right))}x{r.count}" for r in rules) + "]"


def _count_finding(mode: str, found, search: _Search, learner: Learner, under: bool) -> Finding:
    if found is None:
        return Finding(mode, MODES[mode], False)
    ref = reference_count_pairs(found, [1] * len(found))
    counted = search.again(lambda: learner.count_pairs(found))
    mine = dict(counted or ())
    pairs = sorted(set(ref) | set(mine))
    pair = next((p for p in pairs if (mine.get(p, 0) < ref.get(p, 0) if under
                                      else mine.get(p, 0) > ref.get(p, 0))), None)
    if counted is None or pair is None:
        return Finding(mode, MODES[mode], True,
                       f"{_show(found)}: {_NOT_AGAIN.format(what='count_pairs')}")
    return Finding(mode, MODES[mode], True,
                   f"{_show(found)}: counted {_pair(pair)} {mine.get(pair, 0)}, "
                   f"expected {ref.get(pair, 0)}")
