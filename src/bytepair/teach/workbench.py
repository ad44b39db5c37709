"""The merge workbench's answers: the page sends a corpus, the library's reference trainer learns.

Every rule, count and token the page shows in the correct mode comes from
:func:`bytepair.learn.naive.fit` (the specification every engine is tested
against); the page only draws. The broken variants come from
:mod:`bytepair.teach.variants` and the learner's own functions from
:mod:`bytepair.teach.exercise`.

Each request carries the corpus and the number of merges done so far; the
page keeps nothing on the server. The server reads a corpus once and gathers
its equal rows (:class:`Session`, kept for a few recent corpora). A round of
every trainer here depends only on the current rows, so the reference, each
broken variant and the learner's functions continue from the rows they last
reached on the same corpus (:class:`_Progress`): one more merge costs one
round, ``O(distinct rows)`` for the reference.

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


# -- sessions: a corpus read once ---------------------------------------------------

class Session(NamedTuple):
    """A parsed corpus with its equal rows gathered: what every request on it shares.

    ``distinct`` holds each distinct row once, in order of first appearance,
    with ``weights`` summed over its copies; ``row_of[i]`` is row ``i``'s
    distinct row. Equal rows are trained once, as the library's word mode
    does: the rules are the same, and a 2,000-word text has about 500
    distinct words.
    """

    corpus: Corpus
    distinct: list
    weights: list[int]
    row_of: list[int]
    texts: list[str]      # each distinct row's text
    symbols: int          # first symbols in all, each row times its weight
    key: tuple


def gather(rows: list, weights: list[int]) -> tuple[list, list[int], list[int]]:
    """Equal rows gathered: the distinct rows in order of first appearance, their summed
    weights, and each row's distinct row.

    >>> gather([["a"], ["b"], ["a"]], [1, 2, 3])
    ([['a'], ['b']], [4, 2], [0, 1, 0])
    """
    index: dict[tuple, int] = {}
    distinct, summed, row_of = [], [], []
    for row, weight in zip(rows, weights):
        key = tuple(row)
        j = index.get(key)
        if j is None:
            j = index[key] = len(distinct)
            distinct.append(list(row))
            summed.append(0)
        summed[j] += weight
        row_of.append(j)
    return distinct, summed, row_of


class _Recent:
    """A small thread-safe table of the most recently used entries."""

    def __init__(self, size: int):
        self.size = size
        self._lock = threading.Lock()
        self._entries: OrderedDict = OrderedDict()

    def get(self, key, make: Callable):
        with self._lock:
            value = self._entries.get(key)
            if value is not None:
                self._entries.move_to_end(key)
                return value
        value = make()  # outside the lock: other corpora are not held up
        with self._lock:
            value = self._entries.setdefault(key, value)
            self._entries.move_to_end(key)
            while len(self._entries) > self.size:
                self._entries.popitem(last=False)
        return value

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()


#: The most recent corpora, parsed.
_sessions = _Recent(8)


def session(payload: dict) -> Session:
    """The :class:`Session` of a request's corpus: read once, then found by its text.

    Refuses bad input in one line, as :func:`parse` does.
    """
    mode = payload.get("mode", "words")
    text = payload.get("corpus")
    eow = payload.get("end_of_word", True)
    if mode not in MODES or not isinstance(text, str) or not isinstance(eow, bool):
        parse(payload)  # raises the request's one-line refusal
    key = (mode, eow and mode != "bytes", text)
    return _sessions.get(key, lambda: _new_session(parse(payload), key))


def _new_session(corpus: Corpus, key: tuple) -> Session:
    distinct, weights, row_of = gather(corpus.rows, corpus.weights)
    texts: list = [None] * len(distinct)
    for i, j in enumerate(row_of):
        if texts[j] is None:
            texts[j] = corpus.texts[i]
    symbols = sum(len(row) * w for row, w in zip(distinct, weights))
    return Session(corpus, distinct, weights, row_of, texts, symbols, key)


# -- progress: a click continues where the trainer got to ------------------------------

class _Progress:
    """Where each trainer got to on recent corpora, so that a click continues it.

    Every trainer of the workbench (the reference, each broken variant, the
    learner's functions) does rounds that depend only on the current rows: the
    rounds from the rows after ``k`` merges, ranks from ``k``, are exactly
    those a fresh run does after its ``k``-th. So for each trainer on each
    corpus (a key) the rules learned so far are kept, with the rows after
    every :data:`EVERY`-th merge and after the last merge asked for; the
    :data:`ENTRIES` most recent keys are kept. One more merge costs one round;
    going back starts from the nearest point before.
    """

    EVERY = 20
    ENTRIES = 24

    def __init__(self):
        self._lock = threading.Lock()
        self._entries: OrderedDict = OrderedDict()

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()

    def fit(self, key, rows: list, merges: int, run: Callable,
            keep_before: bool = False) -> tuple[list[Merge], list, list | None]:
        """The rules and rows after ``merges`` rounds (fewer if no pair is left), and with
        ``keep_before`` the rows before the last round (None before the first).

        ``rows`` are the starting rows of the key; ``run(rows, first_rank, n,
        on_round)`` does up to ``n`` rounds from ``rows``, calling
        ``on_round(rule, before, after)`` after each, and returns the rules and
        the rows. Stored rows are shared: callers must not modify them.
        """
        with self._lock:
            entry = self._entries.get(key)
            if entry is None:
                entry = self._entries[key] = {"rules": [], "points": {0: (rows, None)},
                                              "end": None, "last": 0}
            self._entries.move_to_end(key)
            while len(self._entries) > self.ENTRIES:
                self._entries.popitem(last=False)
            end = entry["end"]
            target = merges if end is None else min(merges, end)
            start = max(k for k in entry["points"] if k <= target)
            current, before = entry["points"][start]
            known = entry["rules"][:start]
        if start == target:
            return known, current, before
        passed: dict = {}
        last_before: list = [before]

        def on_round(rule: Merge, previous: list, after: list) -> None:
            done = rule.rank + 1
            if done % self.EVERY == 0:  # the lists of rows may be reused: shallow copies
                passed[done] = (list(after), list(previous) if keep_before else None)
            last_before[0] = previous

        more, current = run(current, start, target - start, on_round)
        rules = known + more
        done = len(rules)
        before = list(last_before[0]) if keep_before and more else before
        with self._lock:
            points = entry["points"]
            points.update(passed)
            previous_last = entry["last"]
            if previous_last % self.EVERY and previous_last != entry["end"]:
                points.pop(previous_last, None)  # one point only that is not a multiple
            points[done] = (current, before)
            entry["last"] = done
            if len(rules) > len(entry["rules"]):
                entry["rules"] = rules
            if done < target:
                entry["end"] = done
        return rules, current, before


_progress = _Progress()


def clear_caches() -> None:
    """Forget every corpus read and every trainer's progress (tests compare with a fresh run)."""
    _sessions.clear()
    _progress.clear()


# -- the reference ----------------------------------------------------------------

class Fit(NamedTuple):
    rules: list[Merge]
    rows: list            # one per distinct row of the session


def reference(session: Session, merges: int) -> Fit:
    """The reference trainer's rules and distinct rows after ``merges`` merges (fewer if no
    pair is left), continued from where it got to on this corpus (see :class:`_Progress`)."""
    corpus = session.corpus

    def run(rows, first_rank, n, on_round):
        return naive.fit(rows, session.weights, n, corpus.join, first_rank=first_rank,
                         on_round=lambda counts, rule, after: on_round(rule, None, after))

    rules, rows, _ = _progress.fit(("reference", session.key), session.distinct, merges, run)
    return Fit(rules, rows)


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


def _words(session: Session, rows: list, label: Callable, new=None) -> list[dict]:
    """Each distinct row's text and tokens (with ``new``: where the last merge's token is)."""
    ids = session.corpus.mode == "bytes"
    out = []
    for text, row in zip(session.texts, rows):
        # Word tokens are their own text: the row is sent as it is (it is not modified).
        entry = {"text": text, "tokens": [label(token) for token in row] if ids else row}
        if ids:
            entry["ids"] = row
        if new is not None:
            entry["new"] = [k for k, token in enumerate(row) if token == new] if new in row else []
        out.append(entry)
    return out


def rows_of(view: dict) -> list[dict]:
    """A view's rows written out, each with its ``text``, ``count``, ``tokens`` (and ``ids``,
    ``new``): the view sends each distinct row once (``words``) and, per row, which one it is
    (``rows``) and its ``counts``.

    >>> [row["tokens"] for row in rows_of(handle("parse", {"corpus": "ab ab"}))]
    [['a', 'b', '</w>'], ['a', 'b', '</w>']]
    """
    return [dict(view["words"][j], count=count) for j, count in zip(view["rows"], view["counts"])]


def state(session: Session, merges: int, mark_last: bool = False) -> dict:
    """The page's whole view after ``merges`` merges of the reference trainer.

    The rows are sent compactly: ``words`` has each distinct row once (its
    ``text``, ``tokens``, in byte mode ``ids``, with ``mark_last`` the indexes
    ``new`` of the last merge's token), ``rows[i]`` is the word of row ``i``
    and ``counts[i]`` its count (see :func:`rows_of`).
    """
    corpus = session.corpus
    fit = reference(session, merges)
    label = corpus.labeller(fit.rules)
    ids = corpus.mode == "bytes"
    counts = count_pairs(fit.rows, session.weights)
    table, pairs = pair_table(counts, label, ids)
    last = fit.rules[-1] if fit.rules and mark_last else None
    return {
        "mode": corpus.mode, "end_of_word": corpus.end_of_word,
        "merges": len(fit.rules), "requested": merges, "done": not counts,
        "words": _words(session, fit.rows, label, last.token_id if last else None),
        "rows": session.row_of, "counts": corpus.weights,
        "history": [_rule(rule, label, ids) for rule in fit.rules],
        "table": table, "pairs": pairs, "winner": table[0] if table else None,
        "last": _rule(last, label, ids) if last else None,
        "stats": {"rows": len(corpus.rows), "occurrences": sum(session.weights),
                  "symbols": session.symbols,
                  "tokens": sum(len(row) * w for row, w in zip(fit.rows, session.weights))},
        "limits": LIMITS,
    }


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


def _variant_fit(name: str, key, rows: list, weights: list[int], merges: int, join: Callable,
                 keep_before: bool = False) -> tuple[list[Merge], list, list | None]:
    """The variant ``name`` on ``rows`` (as :func:`bytepair.teach.variants.starting_rows` gives
    them), continued from where it got to under ``key``."""
    def run(start, first_rank, n, on_round):
        return variants.rounds(name, start, weights, n, join, first_rank=first_rank,
                               on_round=lambda counts, rule, before, after:
                               on_round(rule, before, after))

    return _progress.fit(key, rows, merges, run, keep_before=keep_before)


def compare_variant(session: Session, merges: int, name: str) -> dict:
    """The variant ``name`` beside the reference after ``merges`` merges, where they diverge marked.

    ``broken.rows[i]`` lines up with the reference's row ``broken.rows[i].of``;
    each has ``differs`` and ``marks`` (token indexes: ``missed`` for the
    occurrences of learned rules that stayed unmerged, ``reused`` for tokens
    made from an input token already used, ``crossing`` for tokens that run
    across a word boundary). ``broken.history[k].differs`` says where the
    rules part; ``diverged_at`` is the first such rank. Variants whose equal
    rows stay alike train each distinct row once.
    """
    if name not in variants.VARIANTS:
        raise WorkbenchError(f"variant must be one of {', '.join(variants.VARIANTS)}, "
                             f"got {name!r}")
    corpus = session.corpus
    variant = variants.VARIANTS[name]
    ref = state(session, merges)
    ref_fit = reference(session, merges)
    ref_rows = [ref_fit.rows[j] for j in session.row_of]
    ids = corpus.mode == "bytes"
    key = ("variant", name, session.key)

    if variant.across_boundaries:
        rows, of = _expanded(corpus)
        start, weights = variants.starting_rows(name, rows, [1] * len(rows))
        rules, (stream,), _ = _variant_fit(name, key, start, weights, merges, corpus.join)
        label = corpus.labeller(rules)
        laid = _split_stream(stream, [len(row) for row in rows], corpus.width(rules))
        broken_rows = [(tokens, {"crossing": crossing}) for tokens, crossing in laid]
        state_rows, weights = [stream], [1]
    else:
        of = list(range(len(corpus.rows)))
        if variant.equal_rows_alike:
            start, weights, gathered = session.distinct, session.weights, session.row_of
        else:
            start, weights, gathered = corpus.rows, corpus.weights, of
        rules, trained, before = _variant_fit(name, key, start, weights, merges, corpus.join,
                                              keep_before=name == "overlapping")
        label = corpus.labeller(rules)
        marks_of: list[dict] = [{} for _ in trained]
        if name == "first-occurrence":
            learned = {(r.left, r.right) for r in rules}
            for tokens, marks in zip(trained, marks_of):
                marks["missed"] = _occurrences(tokens, learned)
        if rules and before is not None and name == "overlapping":
            rule = rules[-1]
            for marks, row in zip(marks_of, before):
                marks["reused"] = variants.overlapping_pass(row, rule.left, rule.right,
                                                            rule.token_id)[2]
        broken_rows = [(trained[j], marks_of[j]) for j in gathered]
        state_rows = trained
    ref_label = corpus.labeller(ref_fit.rules)
    out_rows = []
    for i, (tokens, marks) in enumerate(broken_rows):
        entry = {"of": of[i], "text": corpus.texts[of[i]],
                 "count": 1 if variant.across_boundaries else corpus.weights[i],
                 "tokens": [label(t) for t in tokens], "differs": tokens != ref_rows[of[i]],
                 "marks": {key: value for key, value in marks.items() if value}}
        if ids:
            entry["ids"] = list(tokens)
        out_rows.append(entry)
    history, diverged = _history(rules, ref_fit.rules, label, ref_label, ids)
    # The broken table beside what the reference counts in the same rows.
    broken_counts = variant.pieces.get("count", count_pairs)(state_rows, weights)
    if variant.across_boundaries:  # inside the words: the stream's tokens by the word they start in
        true_counts = count_pairs([tokens for tokens, _ in broken_rows], [1] * len(broken_rows))
    elif "count" in variant.pieces:
        true_counts = count_pairs(state_rows, weights)
    else:  # the variant counts as the reference does
        true_counts = broken_counts
    choose = variant.pieces.get("choose", variants.choose_smallest)
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
        distinct, weights, _ = gather(corpus.rows[::-1], corpus.weights[::-1])
        reordered, _, _ = _variant_fit(name, ("reordered", name, session.key), distinct,
                                       weights, merges, corpus.join)
        other_label = corpus.labeller(reordered)
        out["reordered"] = [dict(_rule(rule, other_label, ids),
                                 differs=k >= len(rules) or rule[:3] != rules[k][:3])
                            for k, rule in enumerate(reordered)]
    out["summary"] = _summary(name, out, rules, ref_fit.rules)
    return out


def _history(rules: list[Merge], ref_rules: list[Merge], label: Callable, ref_label: Callable,
             ids: bool) -> tuple[list[dict], int | None]:
    """The rules rank by rank beside the reference's, and the first rank where they part."""
    history, diverged = [], None
    for k, rule in enumerate(rules):
        entry = _rule(rule, label, ids)
        same = k < len(ref_rules) and ref_rules[k] == rule
        entry["differs"] = not same
        if not same and k < len(ref_rules):
            entry["expected"] = _rule(ref_rules[k], ref_label, ids)
        if not same and diverged is None:
            diverged = k
        history.append(entry)
    if diverged is None and len(rules) != len(ref_rules):
        diverged = min(len(rules), len(ref_rules))
    return history, diverged


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


def compare_learner(session: Session, merges: int, learner) -> dict:
    """The learner's ``count_pairs`` and ``merge`` beside the reference (each word written out),
    continued from where they got to on this corpus."""
    if learner is None:
        raise WorkbenchError("no exercise file was given: start the workbench with "
                             "bytepair workbench --exercise FILE.py")
    from bytepair.teach.exercise import LearnerError, learner_fit

    corpus = session.corpus
    rows, of = _expanded(corpus)

    def run(start, first_rank, n, on_round):
        return learner_fit(learner, start, n, corpus.join, first_rank=first_rank,
                           on_round=on_round)

    try:
        rules, learned_rows, _ = _progress.fit(("learner", learner, session.key),
                                               [list(row) for row in rows], merges, run)
    except LearnerError as exc:
        raise WorkbenchError(str(exc)) from None
    ref_fit = reference(session, merges)
    ids = corpus.mode == "bytes"
    label = corpus.labeller(rules)
    ref_label = corpus.labeller(ref_fit.rules)
    out_rows = []
    for i, row in enumerate(learned_rows):
        entry = {"of": of[i], "text": corpus.texts[of[i]], "count": 1,
                 "tokens": [label(t) for t in row],
                 "differs": list(row) != ref_fit.rows[session.row_of[of[i]]], "marks": {}}
        if ids:
            entry["ids"] = list(row)
        out_rows.append(entry)
    history, diverged = _history(rules, ref_fit.rules, label, ref_label, ids)
    return {"learner": learner.name, "reference": state(session, merges),
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

    Answers share lists with the server's caches: serialise them, do not modify them.

    >>> answer = handle("parse", {"corpus": "low lower lowest"})
    >>> answer["winner"]["left"], answer["winner"]["right"], answer["winner"]["count"]
    ('l', 'o', 3)
    >>> answer = handle("apply", {"corpus": "low lower lowest", "merges": 0})
    >>> answer["words"][answer["rows"][0]]["tokens"], answer["words"][0]["new"]
    (['lo', 'w', '</w>'], [0])
    """
    if not isinstance(payload, dict):
        raise WorkbenchError("the request must be a JSON object")
    if action == "limits":
        return dict(LIMITS)
    if action == "overlap":
        return overlap_example()
    if action not in ("parse", "reset", "pairs", "apply", "run", "variant", "learner"):
        raise WorkbenchError(f"the workbench has no action {action!r}")
    read = session(payload)
    if action in ("parse", "reset"):
        return state(read, 0)
    merges = _integer(payload, "merges", 0, 0, MAX_MERGES)
    if action == "pairs":
        return state(read, merges)
    if action == "apply":
        return state(read, min(merges + 1, MAX_MERGES), mark_last=True)
    if action == "run":
        more = _integer(payload, "n", 1, 1, MAX_MERGES)
        if merges + more > MAX_MERGES:
            raise WorkbenchError(f"merges + n must be at most {MAX_MERGES}, got {merges + more}")
        return state(read, merges + more, mark_last=True)
    if action == "variant":
        return compare_variant(read, merges, payload.get("variant"))
    return compare_learner(read, merges, learner)
