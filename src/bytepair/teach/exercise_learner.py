"""The learner's code for the chapter's exercise: imported, called, its answers checked, trained
with.

:func:`import_learner` imports ``count_pairs`` and ``merge`` from the learner's
file; :class:`Learner` calls them and checks every answer before anything uses
it, so that wrong code (a wrong type, a key that is not a
pair of tokens, an endless generator, an exception of its own) is one line,
:class:`LearnerError`, that names the function; :func:`learner_fit` trains
with them as a learner's loop would. The check (:mod:`bytepair.teach.exercise`)
and the workbench's ``learner`` action run the learner's code in a process of its
own, with a time and a memory limit (:mod:`bytepair.teach.exercise_process`),
which calls it through here.
"""

from __future__ import annotations

import importlib.util
import operator
from pathlib import Path
from typing import Callable, Sequence

from bytepair.learn import naive
from bytepair.learn.rules import Merge


class LearnerError(ValueError):
    """The learner's code failed (raised, ran too long, or returned the wrong kind of value)."""


class _Refused(LearnerError):
    """A wrong answer of the learner's function, refused by the check of it."""


#: The most entries a ``count_pairs`` answer may hold, or the tokens of its words if more
#: (no more distinct pairs can occur in them); an endless generator stops there.
MAX_PAIRS = 100_000


class Learner:
    """The learner's two functions, called in this process, their failures in one line.

    Every answer is checked before it is used: ``count_pairs`` must return
    ``{(left, right): count}`` (a mapping, or ``(pair, count)`` entries) whose
    pairs are two tokens of the words it was given and whose counts are whole
    numbers no greater than those words' tokens; ``merge`` must return a list
    no longer than the word, of the word's own tokens and the new token. A
    failure, or an exception of the learner's code, is a :class:`LearnerError`
    in one line that names the function. ``where`` (such as ``"on a bytes
    corpus"``) says in those lines what kind of tokens the words hold. With
    ``contained`` (in the learner's own process) any exception of the learner's
    code is its failure, KeyboardInterrupt too; otherwise Ctrl-C passes through.
    """

    def __init__(self, name: str, count_pairs: Callable, merge: Callable,
                 contained: bool = False):
        self.name = name
        self.count_pairs_function = count_pairs
        self.merge_function = merge
        self._caught = BaseException if contained else (Exception, SystemExit)

    def _call(self, function: Callable, what: str, args: tuple, take: Callable):
        """``take(function(*args))``: ``take`` reads the answer (a generator runs the learner's
        code as it is read) and refuses a wrong one. No time limit here: that needs a process
        of its own (:mod:`bytepair.teach.exercise_process`)."""
        try:
            return take(function(*args))
        except _Refused as exc:
            raise LearnerError(str(exc)) from None
        except MemoryError:
            raise LearnerError(f"your {what} ran out of memory on {show_args(args)}") from None
        except self._caught as exc:  # exit() in the learner's code stops only itself
            raise LearnerError(_raised(what, exc, args)) from None

    def merge_rows(self, rows: list[list], pair: tuple, new_token, where: str = "") -> list[list]:
        """:meth:`merge` of each row."""
        return [self.merge(row, pair, new_token, where) for row in rows]

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
    return "one of the word's tokens" if one else "tokens of its words"


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
            f"(on {show_args(args)})")


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
        bits = value.bit_length()  # a long int's repr is slow, and refused past 4,300 digits
        return repr(value) if bits <= 256 else f"<an int of {bits} bits>"
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


def show_args(args) -> str:
    return ", ".join(_short(a) for a in args)


def import_learner(path, contained: bool = False) -> Learner:
    """Import ``count_pairs`` and ``merge`` from the Python file ``path`` into this process;
    one-line errors. The file is run as a module of its own (not added to ``sys.modules``).
    :func:`bytepair.teach.exercise_process.LearnerProcess` does this in a child process.
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
    return Learner(path.name, functions["count_pairs"], functions["merge"], contained)


def learner_fit(learner: Learner, words: Sequence[Sequence], merges: int,
                join: Callable, *, first_rank: int = 0, where: str = "",
                on_round: Callable[[Merge, None, list[list]], None] | None = None,
                ) -> tuple[list[Merge], list[list]]:
    """Up to ``merges`` rounds with the learner's functions: count, take the first pair with the
    greatest count in the order returned, merge it in every word (weights are all 1).

    Ranks start at ``first_rank``, so the words after ``k`` rounds with
    ``first_rank=k`` continue a run (the learner's functions are taken to depend
    on their arguments only). ``on_round(rule, None, after)`` sees each round; ``where``
    goes to the learner's refusals (see :class:`Learner`). This is the reference
    trainer, :func:`bytepair.learn.naive.fit`, with the learner's pieces in its
    rules' place.
    """
    def count(rows: list[list], weights) -> list[tuple[tuple, int]]:
        return learner.count_pairs(rows, where)

    def choose(counts: list[tuple[tuple, int]]) -> tuple[tuple, int]:
        best = max(n for _, n in counts)  # the first pair of the greatest count, as returned
        return next((pair, n) for pair, n in counts if n == best)

    def replace(rows: list[list], weights, left, right, new) -> tuple[list[list], int]:
        before = sum(row.count(new) for row in rows)
        rows = learner.merge_rows(rows, (left, right), new, where)
        return rows, sum(row.count(new) for row in rows) - before

    # naive.fit keeps one list of rows and changes it in place each round: ``on_round`` gets
    # this round's rows as a list of its own (the merged rows are new lists, never changed).
    seen = None if on_round is None else \
        (lambda counts, rule, rows: on_round(rule, None, list(rows)))
    return naive.fit(words, [1] * len(words), merges, join, seen, first_rank=first_rank,
                     count=count, choose=choose, replace=replace)
