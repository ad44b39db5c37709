"""The merge workbench's answers: the page sends a corpus, the library's reference trainer learns.

Every rule, count and token the page shows in the correct mode comes from
:func:`bytepair.learn.naive.fit` (the specification every engine is tested
against); the page only draws. The broken variants come from
:mod:`bytepair.teach.variants` and the learner's own functions from
:mod:`bytepair.teach.exercise`.

Each request carries the corpus and the number of merges done so far; the
page keeps nothing on the server. A round of the reference trainer depends
only on the current rows, so the server continues from the rows it last
reached on the same corpus (kept for a few recent corpora, see
:class:`_Progress`): one more merge costs one round, ``O(corpus)``.

A corpus is read in one of three modes:

``words``
    the chapter's word lists (``low lower lowest``): words separated by white
    space, each occurrence a row of its own;
``counts``
    ``word count`` lines (the word-count exercise, ``low 5``): one row per
    word, its pairs weighted by its count;
``bytes``
    free text, one document per line, trained as bytes (token IDs 256 and up;
    no end-of-word marker and no word boundaries inside a document).

In the word modes each word starts as its characters plus the end-of-word
marker ``</w>`` (unless ``end_of_word`` is false); ties go to the smallest
``(left, right)`` in string order, so ``</w>`` sorts before letters. In byte
mode ties go to the smallest IDs.

Actions, ``handle(action, payload)``; every payload has ``corpus`` (str),
``mode`` and, in word modes, ``end_of_word`` (bool, default true):

``limits``    the corpus limits (no corpus needed);
``parse``, ``reset``  the rows before any merge and the first pair table;
``pairs``     ``merges``: the state after that many merges and the next table;
``apply``     ``merges``: one merge more (its new tokens marked);
``run``       ``merges``, ``n``: ``n`` merges more;
``variant``   ``merges``, ``variant``: a broken variant beside the reference, the
              divergence marked;
``learner``   ``merges``: the learner's ``count_pairs`` and ``merge`` (``bytepair workbench
              --exercise FILE.py``) beside the reference;
``overlap``   the chapter's ``a a a`` example (no corpus needed).

Bad input raises :class:`WorkbenchError` (a ValueError) with one line for the page.
"""

from __future__ import annotations

import threading
from collections import Counter, OrderedDict
from typing import Callable, NamedTuple

from bytepair.learn import naive
from bytepair.learn.rules import Merge, count_pairs, priority
from bytepair.model.models import BYTE_TOKENS
from bytepair.teach import variants

MODES = ("words", "counts", "bytes")
#: The end-of-word marker of the word modes.
END_OF_WORD = "</w>"
#: The largest corpus, in bytes of UTF-8.
MAX_BYTES = 32 * 1024
#: The most rows: words (word lists), lines (counts) or documents (bytes).
MAX_ROWS = 5000
#: The greatest count of a ``word count`` line.
MAX_COUNT = 10**9
#: The most merges one request may ask for.
MAX_MERGES = 500
#: The most pairs a table sends (the rest are summed up in one line).
MAX_TABLE = 300

LIMITS = {"bytes": MAX_BYTES, "rows": MAX_ROWS, "count": MAX_COUNT, "merges": MAX_MERGES}


class WorkbenchError(ValueError):
    """A request the workbench refuses; the message is shown in the page."""


class Corpus(NamedTuple):
    """A parsed corpus: its rows' first symbols, weights and display text."""

    mode: str
    rows: list            # a list of symbols per row (str in word modes, int IDs in byte mode)
    weights: list[int]
    texts: list[str]      # what each row was typed as
    end_of_word: str | None

    def join(self, left, right, rank: int):
        return BYTE_TOKENS + rank if self.mode == "bytes" else left + right

    def labeller(self, rules: list[Merge]) -> Callable:
        """The display text of a token, given the rules that made the merged ones."""
        if self.mode != "bytes":
            return lambda token: token
        expansions = {i: bytes([i]) for i in range(BYTE_TOKENS)}
        for rule in rules:
            expansions[rule.token_id] = expansions[rule.left] + expansions[rule.right]
        return lambda token: byte_label(expansions[token])

    def width(self, rules: list[Merge]) -> Callable:
        """How many first symbols a token covers (to lay a stream back out as rows)."""
        if self.mode == "bytes":
            widths = {}
            for rule in rules:
                widths[rule.token_id] = widths.get(rule.left, 1) + widths.get(rule.right, 1)
            return lambda token: widths.get(token, 1)
        # Words never hold the marker (parse refuses them), so each one in a token is one symbol.
        shrink = len(self.end_of_word) - 1 if self.end_of_word else 0
        eow = self.end_of_word
        return lambda token: len(token) - (shrink * token.count(eow) if eow else 0)


_GLYPHS = {" ": "\u2423", "\t": "\u21e5", "\r": "\u240d", "\n": "\u21b5"}


def byte_label(data: bytes) -> str:
    """A byte token's text: UTF-8 as text (white space as glyphs), other bytes as ``\\xNN``.

    >>> byte_label(b"a b"), byte_label(b"\\xd0"), byte_label("é".encode())
    ('a␣b', '\\\\xd0', 'é')
    """
    text = data.decode("utf-8", "backslashreplace")
    out = []
    for ch in text:
        if ch in _GLYPHS:
            out.append(_GLYPHS[ch])
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\x{ord(ch):02x}")
        else:
            out.append(ch)
    return "".join(out)


# -- reading a request ------------------------------------------------------------

def _integer(payload: dict, key: str, default: int, low: int, high: int) -> int:
    value = payload.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int):
        raise WorkbenchError(f"{key} must be a whole number, got {value!r}")
    if not low <= value <= high:
        raise WorkbenchError(f"{key} must be between {low} and {high}, got {value}")
    return value


def parse(payload: dict) -> Corpus:
    """The corpus of a request (see the module for the modes); refuses bad input in one line.

    >>> parse({"corpus": "low lower", "mode": "words"}).rows
    [['l', 'o', 'w', '</w>'], ['l', 'o', 'w', 'e', 'r', '</w>']]
    >>> parse({"corpus": "ab 3", "mode": "counts", "end_of_word": False})[1:3]
    ([['a', 'b']], [3])
    >>> parse({"corpus": "aa\\nb", "mode": "bytes"}).rows
    [[97, 97], [98]]
    """
    mode = payload.get("mode", "words")
    if mode not in MODES:
        raise WorkbenchError(f"mode must be one of {', '.join(MODES)}, got {mode!r}")
    text = payload.get("corpus")
    if not isinstance(text, str):
        raise WorkbenchError("corpus must be text (a JSON string)"
                             if text is not None else "the request has no corpus")
    eow = payload.get("end_of_word", True)
    if not isinstance(eow, bool):
        raise WorkbenchError(f"end_of_word must be true or false, got {eow!r}")
    end_of_word = END_OF_WORD if eow and mode != "bytes" else None
    for number, line in enumerate(text.split("\n"), 1):
        try:
            line.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise WorkbenchError(
                f"line {number}, character {exc.start + 1}: not valid UTF-8 (a lone surrogate "
                f"U+{ord(line[exc.start]):04X})") from None
    size = len(text.encode("utf-8"))
    if size > MAX_BYTES:
        raise WorkbenchError(f"the corpus is {size:,} bytes, more than the workbench's limit of "
                             f"{MAX_BYTES:,} bytes")
    if not text.strip():
        raise WorkbenchError("the corpus is empty: type some words, such as low lower lowest")
    if mode == "bytes":
        documents = text.split("\n")
        if documents[-1] == "":
            documents.pop()  # the line break that ends the last line
        _check_rows(len(documents), "documents (lines)")
        return Corpus(mode, [list(doc.encode("utf-8")) for doc in documents],
                      [1] * len(documents), documents, None)
    if mode == "words":
        words = text.split()
        _check_rows(len(words), "words")
        for word in words:
            _check_word(word, end_of_word)
        weights = [1] * len(words)
    else:
        words, weights, seen = [], [], {}
        for number, line in enumerate(text.split("\n"), 1):
            fields = line.split()
            if not fields:
                continue
            if len(fields) != 2:
                raise WorkbenchError(f"line {number}: expected 'word count', got {line.strip()!r}")
            word, count = fields
            if not count.isdigit() or not 1 <= int(count) <= MAX_COUNT:
                raise WorkbenchError(f"line {number}: the count of {word!r} must be a whole "
                                     f"number from 1 to {MAX_COUNT:,}, got {count!r}")
            if word in seen:
                raise WorkbenchError(f"line {number}: {word!r} is already counted on line "
                                     f"{seen[word]}")
            _check_word(word, end_of_word)
            seen[word] = number
            words.append(word)
            weights.append(int(count))
        _check_rows(len(words), "word lines")
    tail = [end_of_word] if end_of_word else []
    return Corpus(mode, [[*word, *tail] for word in words], weights, words, end_of_word)


def _check_rows(rows: int, what: str) -> None:
    if rows > MAX_ROWS:
        raise WorkbenchError(f"the corpus has {rows:,} {what}, more than the workbench's limit "
                             f"of {MAX_ROWS:,}")


def _check_word(word: str, end_of_word: str | None) -> None:
    if end_of_word and end_of_word in word:
        raise WorkbenchError(f"the word {word!r} holds the end-of-word marker {end_of_word}; "
                             "remove it or switch the marker off")


# -- the reference ----------------------------------------------------------------

class Fit(NamedTuple):
    rules: list[Merge]
    rows: list


class _Progress:
    """Where the reference trainer got to on recent corpora, so that a click continues it.

    A round of the reference trainer depends only on the current rows, so
    :func:`bytepair.learn.naive.fit` started from the rows after ``k`` merges
    (``first_rank=k``) learns exactly the rules it would have learned next.
    Each corpus keeps its rows after every :data:`EVERY`-th merge and after the
    last one asked for; the :data:`CORPORA` most recent corpora are kept.
    """

    EVERY = 20
    CORPORA = 8

    def __init__(self):
        self._lock = threading.Lock()
        self._corpora: OrderedDict = OrderedDict()

    def fit(self, key, rows: list, weights: list[int], merges: int, join) -> tuple[list, list]:
        with self._lock:
            saved = self._corpora.get(key)
            if saved is None:
                saved = self._corpora[key] = {"points": {0: ([], rows)}, "end": None}
            self._corpora.move_to_end(key)
            while len(self._corpora) > self.CORPORA:
                self._corpora.popitem(last=False)
            end = saved["end"]
            start = max(k for k in saved["points"] if k <= merges)
            rules, current = saved["points"][start]
        if end is not None and merges >= end:  # the rows ran out of pairs there
            rules, current = saved["points"][end]
            return rules, current
        passed: dict = {}

        def keep(counts, rule, rows) -> None:
            if (rule.rank + 1) % self.EVERY == 0:  # rows are new lists each round: a shallow copy
                passed[rule.rank + 1] = list(rows)

        more, current = naive.fit(current, weights, merges - start, join, on_round=keep,
                                  first_rank=start)
        rules = rules + more
        done = len(rules)
        with self._lock:
            points = saved["points"]
            for k, rows_k in passed.items():
                points[k] = (rules[:k], rows_k)
            last = saved.get("last")
            if last is not None and last % self.EVERY and last not in (0, saved["end"]):
                points.pop(last, None)  # only one point that is not a multiple of EVERY
            points[done] = (rules, current)
            saved["last"] = done
            if done < merges:
                saved["end"] = done
        return rules, current


_progress = _Progress()


def reference(corpus: Corpus, merges: int) -> Fit:
    """The reference trainer's rules and rows after ``merges`` merges (fewer if no pair is left).

    Equal rows are trained once, weighted by how often they occur (as the
    library's word mode does): the rules are the same, and a 2,000-word text
    has far fewer distinct words. A corpus seen recently continues from where
    the trainer got to (see :class:`_Progress`).
    """
    index: dict[tuple, int] = {}
    weights: list[int] = []
    for row, weight in zip(corpus.rows, corpus.weights):
        key = tuple(row)
        if key in index:
            weights[index[key]] += weight
        else:
            index[key] = len(weights)
            weights.append(weight)
    key = (corpus.mode, corpus.end_of_word, tuple(index), tuple(weights))
    rules, rows = _progress.fit(key, [list(row) for row in index], weights, merges, corpus.join)
    return Fit(rules[:merges], [rows[index[tuple(row)]] for row in corpus.rows])


def pair_table(counts: Counter, label: Callable, ids: bool) -> tuple[list[dict], int]:
    """The candidates in the documented order (count descending, then ``(left, right)``).

    Each row: ``left``, ``right`` (display text), ``count``, ``tied`` (another
    row has the same count), ``winner`` (the first row); with ``ids``, the
    token IDs too. Returns the first :data:`MAX_TABLE` rows and how many there are.
    """
    ordered = sorted(counts.items(), key=lambda item: priority(item[1], *item[0]))
    sizes = Counter(counts.values())
    table = []
    for i, ((left, right), count) in enumerate(ordered[:MAX_TABLE]):
        row = {"left": label(left), "right": label(right), "count": count,
               "tied": sizes[count] > 1, "winner": i == 0}
        if ids:
            row["ids"] = [left, right]
        table.append(row)
    return table, len(ordered)


def _rule(rule: Merge, label: Callable, ids: bool) -> dict:
    out = {"rank": rule.rank, "left": label(rule.left), "right": label(rule.right),
           "token": label(rule.token_id), "count": rule.count,
           "replacements": rule.replacements}
    if ids:
        out["ids"] = [rule.left, rule.right, rule.token_id]
    return out


def _rows(corpus: Corpus, rows: list, label: Callable, new=None) -> list[dict]:
    out = []
    for i, row in enumerate(rows):
        entry = {"text": corpus.texts[i], "count": corpus.weights[i],
                 "tokens": [label(token) for token in row]}
        if corpus.mode == "bytes":
            entry["ids"] = list(row)
        if new is not None:
            entry["new"] = [j for j, token in enumerate(row) if token == new]
        out.append(entry)
    return out


def state(corpus: Corpus, merges: int, mark_last: bool = False) -> dict:
    """The page's whole view after ``merges`` merges of the reference trainer."""
    fit = reference(corpus, merges)
    label = corpus.labeller(fit.rules)
    ids = corpus.mode == "bytes"
    counts = count_pairs(fit.rows, corpus.weights)
    table, pairs = pair_table(counts, label, ids)
    last = fit.rules[-1] if fit.rules and mark_last else None
    return {
        "mode": corpus.mode, "end_of_word": corpus.end_of_word,
        "merges": len(fit.rules), "requested": merges, "done": not counts,
        "rows": _rows(corpus, fit.rows, label, last.token_id if last else None),
        "history": [_rule(rule, label, ids) for rule in fit.rules],
        "table": table, "pairs": pairs, "winner": table[0] if table else None,
        "last": _rule(last, label, ids) if last else None,
        "stats": _stats(corpus, fit.rows),
        "limits": LIMITS,
    }


def _stats(corpus: Corpus, rows: list) -> dict:
    return {"rows": len(corpus.rows), "occurrences": sum(corpus.weights),
            "symbols": sum(len(row) * w for row, w in zip(corpus.rows, corpus.weights)),
            "tokens": sum(len(row) * w for row, w in zip(rows, corpus.weights))}


# -- beside the reference ------------------------------------------------------------

def _expanded(corpus: Corpus) -> tuple[list, list[int]]:
    """Each row written out ``count`` times, and which row each copy is of (a limit applies)."""
    total = sum(corpus.weights)
    if total > MAX_ROWS:
        raise WorkbenchError(f"this needs every word written out count times: {total:,} words, "
                             f"more than the workbench's limit of {MAX_ROWS:,}")
    rows, of = [], []
    for i, (row, weight) in enumerate(zip(corpus.rows, corpus.weights)):
        for _ in range(weight):
            rows.append(row)
            of.append(i)
    return rows, of


def _split_stream(stream: list, lengths: list[int], width: Callable) -> list[tuple[list, list]]:
    """A stream laid back out as rows of ``lengths`` first symbols: per row its tokens and the
    indexes of the tokens that run past its end (they start in it)."""
    rows: list[tuple[list, list]] = [([], []) for _ in lengths]
    ends, total = [], 0
    for n in lengths:
        total += n
        ends.append(total)
    r, offset = 0, 0
    for token in stream:
        while r < len(lengths) - 1 and offset >= ends[r]:
            r += 1
        tokens, crossing = rows[r]
        offset += width(token)
        if offset > ends[r]:
            crossing.append(len(tokens))
        tokens.append(token)
    return rows


def compare_variant(corpus: Corpus, merges: int, name: str) -> dict:
    """The variant ``name`` beside the reference after ``merges`` merges, where they diverge marked.

    ``broken.rows[i]`` lines up with ``reference.rows[broken.rows[i].of]``;
    each has ``differs`` and ``marks`` (token indexes: ``missed`` for the
    occurrences of learned rules that stayed unmerged, ``reused`` for tokens
    made from an input token already used, ``crossing`` for tokens that run
    across a word boundary). ``broken.history[k].differs`` says where the
    rules part; ``diverged_at`` is the first such rank.
    """
    if name not in variants.VARIANTS:
        raise WorkbenchError(f"variant must be one of {', '.join(variants.VARIANTS)}, "
                             f"got {name!r}")
    variant = variants.VARIANTS[name]
    ref = state(corpus, merges)
    ref_fit = reference(corpus, merges)
    ids = corpus.mode == "bytes"
    last: list = [None, None, None]

    def keep(counts, rule, before, after):
        last[:] = [counts, rule, before]

    if variant.across_boundaries:
        rows, of = _expanded(corpus)
        rules, (stream,) = variants.fit_variant(name, rows, [1] * len(rows), merges, corpus.join,
                                                on_round=keep)
        label = corpus.labeller(rules)
        laid = _split_stream(stream, [len(row) for row in rows], corpus.width(rules))
        broken_rows = [(tokens, {"crossing": crossing}) for tokens, crossing in laid]
        state_rows, weights = [stream], [1]
    else:
        of = list(range(len(corpus.rows)))
        rules, rows = variants.fit_variant(name, corpus.rows, corpus.weights, merges, corpus.join,
                                           on_round=keep)
        label = corpus.labeller(rules)
        broken_rows = [(row, {}) for row in rows]
        state_rows, weights = rows, corpus.weights
        counts, rule, before = last
        if name == "first-occurrence":
            learned = {(r.left, r.right) for r in rules}
            for tokens, marks in broken_rows:
                marks["missed"] = _occurrences(tokens, learned)
        if rule is not None and name == "overlapping":
            for (tokens, marks), row in zip(broken_rows, before):
                marks["reused"] = variants.overlapping_pass(row, rule.left, rule.right,
                                                            rule.token_id)[2]
    ref_label = corpus.labeller(ref_fit.rules)
    out_rows = []
    for i, (tokens, marks) in enumerate(broken_rows):
        expected = ref_fit.rows[of[i]]
        entry = {"of": of[i], "text": corpus.texts[of[i]],
                 "count": 1 if variant.across_boundaries else corpus.weights[i],
                 "tokens": [label(t) for t in tokens], "differs": list(tokens) != list(expected),
                 "marks": {key: value for key, value in marks.items() if value}}
        if ids:
            entry["ids"] = list(tokens)
        out_rows.append(entry)
    history, diverged = [], None
    for k, rule in enumerate(rules):
        entry = _rule(rule, label, ids)
        same = k < len(ref_fit.rules) and ref_fit.rules[k] == rule
        entry["differs"] = not same
        if not same and k < len(ref_fit.rules):
            entry["expected"] = _rule(ref_fit.rules[k], ref_label, ids)
        if not same and diverged is None:
            diverged = k
        history.append(entry)
    if diverged is None and len(rules) != len(ref_fit.rules):
        diverged = min(len(rules), len(ref_fit.rules))
    # The broken table beside what the reference counts in the same rows.
    broken_counts = variants.VARIANTS[name].pieces.get("count", count_pairs)(state_rows, weights)
    if variant.across_boundaries:  # inside the words: the stream's tokens by the word they start in
        true_counts = count_pairs([tokens for tokens, _ in broken_rows], [1] * len(broken_rows))
    else:
        true_counts = count_pairs(state_rows, weights)
    choose = variants.VARIANTS[name].pieces.get("choose", variants.choose_smallest)
    table, pairs = pair_table(broken_counts, label, ids)
    if broken_counts:
        winner = choose(broken_counts)[0]
        for row, (pair, _) in zip(table, sorted(broken_counts.items(),
                                                key=lambda item: priority(item[1], *item[0]))):
            row["winner"] = pair == winner
            row["expected"] = true_counts.get(pair, 0)
    out = {
        "variant": {"name": name, "title": variant.title, "symptom": variant.symptom},
        "reference": ref,
        "broken": {"rows": out_rows, "history": history, "table": table, "pairs": pairs,
                   "merges": len(rules)},
        "diverged_at": diverged,
    }
    if name == "arbitrary-ties":
        # The same words in the other order: another insertion order, other ties.
        reordered, _ = variants.fit_variant(name, corpus.rows[::-1], corpus.weights[::-1],
                                            merges, corpus.join)
        other_label = corpus.labeller(reordered)
        out["reordered"] = [dict(_rule(rule, other_label, ids),
                                 differs=k >= len(rules) or rule[:3] != rules[k][:3])
                            for k, rule in enumerate(reordered)]
    out["summary"] = _summary(name, out, rules, ref_fit.rules)
    return out


def _occurrences(row: list, pairs: set) -> list[int]:
    """Indexes of both tokens of every non-overlapping match of a learned pair left in ``row``."""
    found, i = [], 0
    while i + 1 < len(row):
        if (row[i], row[i + 1]) in pairs:
            found += [i, i + 1]
            i += 2
        else:
            i += 1
    return found


def _summary(name: str, out: dict, rules: list[Merge], ref_rules: list[Merge]) -> str:
    rows = out["broken"]["rows"]
    k = out["diverged_at"]
    where = (f"the rules part at rank {k}" if k is not None
             else "the rules are the reference's so far")
    if name == "first-occurrence":
        missed = sum(len(r["marks"].get("missed", ())) // 2 for r in rows)
        return (f"{missed} occurrence{'s' if missed != 1 else ''} of learned rules left unmerged; "
                f"{where}")
    if name == "overlapping":
        reused = sum(len(r["marks"].get("reused", ())) for r in rows)
        return f"{reused} token{'s' if reused != 1 else ''} made from a reused input token; {where}"
    if name == "across-boundaries":
        crossing = sum(len(r["marks"].get("crossing", ())) for r in rows)
        return f"{crossing} token{'s' if crossing != 1 else ''} across a word boundary; {where}"
    if name == "deduplicated":
        under = sum(1 for row in out["broken"]["table"] if row["count"] != row["expected"])
        return f"{under} pair{'s' if under != 1 else ''} undercounted in the table; {where}"
    reordered = out.get("reordered", [])
    changed = sum(1 for rule in reordered if rule["differs"])
    return (f"{where}; the same words in reverse order learn {changed} "
            f"rule{'s' if changed != 1 else ''} differently")


def compare_learner(corpus: Corpus, merges: int, learner) -> dict:
    """The learner's ``count_pairs`` and ``merge`` beside the reference (each word written out)."""
    if learner is None:
        raise WorkbenchError("no exercise file was given: start the workbench with "
                             "bytepair workbench --exercise FILE.py")
    from bytepair.teach.exercise import LearnerError, learner_fit

    rows, of = _expanded(corpus)
    try:
        rules, learned_rows = learner_fit(learner, rows, merges, corpus.join)
    except LearnerError as exc:
        raise WorkbenchError(str(exc)) from None
    ref_fit = reference(corpus, merges)
    ids = corpus.mode == "bytes"
    label = corpus.labeller(rules)
    ref_label = corpus.labeller(ref_fit.rules)
    out_rows = []
    for i, row in enumerate(learned_rows):
        entry = {"of": of[i], "text": corpus.texts[of[i]], "count": 1,
                 "tokens": [label(t) for t in row],
                 "differs": list(row) != list(ref_fit.rows[of[i]]), "marks": {}}
        if ids:
            entry["ids"] = list(row)
        out_rows.append(entry)
    history, diverged = [], None
    for k, rule in enumerate(rules):
        entry = _rule(rule, label, ids)
        same = k < len(ref_fit.rules) and ref_fit.rules[k] == rule
        entry["differs"] = not same
        if not same and k < len(ref_fit.rules):
            entry["expected"] = _rule(ref_fit.rules[k], ref_label, ids)
        if not same and diverged is None:
            diverged = k
        history.append(entry)
    if diverged is None and len(rules) != len(ref_fit.rules):
        diverged = min(len(rules), len(ref_fit.rules))
    return {"learner": learner.name, "reference": state(corpus, merges),
            "broken": {"rows": out_rows, "history": history, "merges": len(rules)},
            "diverged_at": diverged,
            "summary": ("your functions learn the reference's rules" if diverged is None
                        else f"your functions part from the reference at rank {diverged}")}


def overlap_example() -> dict:
    """The chapter's ``a a a``: two windows of ``a a``, one replacement, ``aa a``; and the broken
    overlapping pass beside it (``aa aa``)."""
    word = ["a", "a", "a"]
    rules, (after,) = naive.fit([word], [1], 1, lambda left, right, rank: left + right)
    broken, matches, reused = variants.overlapping_pass(word, "a", "a", "aa")
    rule = rules[0]
    return {"before": word, "pair": [rule.left, rule.right], "count": rule.count,
            "replacements": rule.replacements, "after": after,
            "overlapping": {"after": broken, "replacements": matches, "reused": reused}}


def handle(action: str, payload, learner=None) -> dict:
    """Answer one request of the page (see the module); bad input raises :class:`WorkbenchError`.

    >>> answer = handle("parse", {"corpus": "low lower lowest"})
    >>> answer["winner"]["left"], answer["winner"]["right"], answer["winner"]["count"]
    ('l', 'o', 3)
    >>> handle("apply", {"corpus": "low lower lowest", "merges": 0})["rows"][0]["tokens"]
    ['lo', 'w', '</w>']
    """
    if not isinstance(payload, dict):
        raise WorkbenchError("the request must be a JSON object")
    if action == "limits":
        return dict(LIMITS)
    if action == "overlap":
        return overlap_example()
    if action not in ("parse", "reset", "pairs", "apply", "run", "variant", "learner"):
        raise WorkbenchError(f"the workbench has no action {action!r}")
    corpus = parse(payload)
    if action in ("parse", "reset"):
        return state(corpus, 0)
    merges = _integer(payload, "merges", 0, 0, MAX_MERGES)
    if action == "pairs":
        return state(corpus, merges)
    if action == "apply":
        return state(corpus, min(merges + 1, MAX_MERGES), mark_last=True)
    if action == "run":
        more = _integer(payload, "n", 1, 1, MAX_MERGES)
        if merges + more > MAX_MERGES:
            raise WorkbenchError(f"merges + n must be at most {MAX_MERGES}, got {merges + more}")
        return state(corpus, merges + more, mark_last=True)
    if action == "variant":
        return compare_variant(corpus, merges, payload.get("variant"))
    return compare_learner(corpus, merges, learner)
