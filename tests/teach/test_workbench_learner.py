"""The learner's functions in the workbench and the exercise check: whatever they return or
raise, the answer is the workbench's (or the check's) one line naming the function, never a
crash, and the server answers 400, not 500."""

from __future__ import annotations

import http.client
import itertools
import json

import pytest
from hypothesis import event, given, settings, strategies as st

from bytepair.learn.rules import count_pairs as reference_count_pairs, replace_pair
from bytepair.teach import exercise, workbench
from bytepair.teach.workbench import WorkbenchError, handle
from helpers import examples


def right_count(words):
    counts = reference_count_pairs(words, [1] * len(words))
    return dict(sorted(counts.items(), key=lambda item: (-item[1], item[0])))


def right_merge(word, pair, new):
    return replace_pair(word, pair[0], pair[1], new)[0]


def learner(count_pairs=right_count, merge=right_merge, name="mine.py", contained=False):
    # In this process: the learner's code in a process of its own is tested with files.
    return exercise.Learner(name, count_pairs, merge, contained)


def refusal(action_payload, functions) -> str:
    with pytest.raises(WorkbenchError) as caught:
        handle("learner", action_payload, learner=learner(**functions))
    return str(caught.value)


class Loud:
    """A value whose own repr, str and iteration are code that must not run unguarded."""

    def __repr__(self):
        raise RuntimeError("repr of a learner's value")

    __str__ = __repr__


class Unprintable(Exception):
    def __str__(self):
        raise RuntimeError("str of a learner's exception")


def raising(exc):
    def function(*args):
        raise exc
    return function


def endless_counts(words):
    while True:
        yield ("a", "b"), 1


BYTES = {"corpus": "ab ab\nabab", "mode": "bytes", "merges": 2}
WORDS = {"corpus": "ab ab abab", "mode": "words", "merges": 2}

NAMED = [
    # (payload, the learner's functions, what the line must say)
    (BYTES, {"count_pairs": lambda words: {("a", "b"): 1}},
     "mine.py: your count_pairs returned the key ('a', 'b'): on a bytes corpus a pair is two "
     "token IDs (ints)"),
    (BYTES, {"count_pairs": lambda words: {(97, 999): 1}},
     "your count_pairs returned the key (97, 999): 999 is not a token of any of its words"),
    (BYTES, {"count_pairs": lambda words: {(True, 98): 1}},
     "your count_pairs returned the key (True, 98): on a bytes corpus a pair is two token IDs"),
    (WORDS, {"count_pairs": lambda words: {(97, 98): 1}},
     "your count_pairs returned the key (97, 98): on a words corpus a pair is two tokens "
     "(strings)"),
    (WORDS, {"count_pairs": lambda words: {"ab": 2}},
     "your count_pairs returned the key 'ab': on a words corpus a pair is two tokens (strings), "
     "as a tuple (left, right)"),
    (WORDS, {"count_pairs": lambda words: {("a", "b", "c"): 2}},
     "your count_pairs returned the key ('a', 'b', 'c')"),
    (WORDS, {"count_pairs": lambda words: {("a", "b"): 2.5}},
     "your count_pairs returned the count 2.5 for ('a', 'b'): a count is a whole number (int)"),
    (WORDS, {"count_pairs": lambda words: {("a", "b"): "2"}},
     "your count_pairs returned the count '2' for ('a', 'b')"),
    (WORDS, {"count_pairs": lambda words: {("a", "b"): 10**5000}},
     "your count_pairs returned the count <an int of 16610 bits> for ('a', 'b'): more than the "
     "11 tokens its words hold in all"),
    (WORDS, {"count_pairs": lambda words: None},
     "your count_pairs must return a dict {(left, right): count}, got None"),
    (WORDS, {"count_pairs": lambda words: Loud()},
     "your count_pairs must return a dict {(left, right): count}, got <Loud object>"),
    (WORDS, {"count_pairs": lambda words: [("a", "b")]},
     "your count_pairs must return a dict {(left, right): count}, got the entry ('a', 'b')"),
    (WORDS, {"count_pairs": lambda words: itertools.repeat((("a", "b"), 1))},
     "your count_pairs returned more than 100,000 pairs; its words hold only 11 tokens"),
    (WORDS, {"count_pairs": raising(KeyError("x"))}, "your count_pairs raised KeyError: 'x' (on "),
    (WORDS, {"count_pairs": raising(SystemExit(3))}, "your count_pairs raised SystemExit: 3"),
    (WORDS, {"count_pairs": raising(ValueError("two\nlines"))},
     "your count_pairs raised ValueError: two lines"),
    (WORDS, {"count_pairs": raising(Unprintable())}, "your count_pairs raised Unprintable (on "),
    (WORDS, {"merge": lambda word, pair, new: "".join(word)},
     "your merge must return a list of tokens, got 'ab</w>'"),
    (BYTES, {"merge": lambda word, pair, new: ["ab"]},
     "your merge returned the token 'ab': on a bytes corpus a token is a token ID (int)"),
    (BYTES, {"merge": lambda word, pair, new: [999]},
     "your merge returned the token 999 for the word [97, 98, 32, 97, 98]: a merged word holds "
     "only the word's tokens and the new token 256"),
    (WORDS, {"merge": lambda word, pair, new: [Loud()]},
     "your merge returned the token <Loud object>: on a words corpus a token is a string"),
    (WORDS, {"merge": lambda word, pair, new: word + word},
     "your merge returned more than 3 tokens for the word ['a', 'b', '</w>']: a merge never "
     "makes a word longer"),
    (WORDS, {"merge": lambda word, pair, new: iter(int, 1)},  # never ends
     "your merge returned the token 0: on a words corpus a token is a string"),
    (WORDS, {"merge": raising(IndexError("list index out of range"))},
     "your merge raised IndexError: list index out of range (on ['a', 'b', '</w>'], ('a', 'b'), "
     "'ab')"),
]


@pytest.mark.parametrize("payload, functions, message", NAMED)
def test_a_wrong_learner_is_refused_in_one_line_naming_the_function(payload, functions,
                                                                     message):
    workbench.clear_caches()
    line = refusal(payload, functions)
    assert message in line and "\n" not in line and line.startswith("mine.py: your ")


def test_a_generator_that_never_ends_is_stopped_by_the_size_limit():
    line = refusal(WORDS, {"count_pairs": endless_counts})
    assert "your count_pairs returned more than 100,000 pairs" in line


def test_ctrl_c_in_the_main_thread_still_stops_the_learners_code():
    with pytest.raises(KeyboardInterrupt):
        handle("learner", dict(WORDS, corpus="ab"),
               learner=learner(count_pairs=raising(KeyboardInterrupt())))


def test_the_server_answers_a_wrong_learner_with_400_and_its_line(teach_server):
    cases = [(payload, functions, message) for payload, functions, message in NAMED[:2]]
    cases += [(WORDS, {"count_pairs": raising(KeyError("x"))}, "your count_pairs raised KeyError"),
              # In the server's thread a KeyboardInterrupt can only be the learner's own.
              (WORDS, {"count_pairs": raising(KeyboardInterrupt())},
               "your count_pairs raised KeyboardInterrupt"),
              (WORDS, {"count_pairs": raising(SystemExit(1))},
               "your count_pairs raised SystemExit"),
              (WORDS, {"merge": lambda word, pair, new: [Loud()]}, "a token is a string")]
    for payload, functions, message in cases:
        workbench.clear_caches()
        server = teach_server(learner=learner(**functions, contained=True))
        status, answer = _post(server, "/api/workbench/learner", payload)
        assert status == 400 and message in answer["error"], (status, answer)
        assert "\n" not in answer["error"]
        status, answer = _post(server, "/api/workbench/learner", dict(payload, merges=0))
        assert status == 200, answer  # the server goes on answering


def _post(server, path, payload):
    host, port = server.server_address[:2]
    connection = http.client.HTTPConnection(host, port, timeout=30)
    try:
        connection.request("POST", path, json.dumps(payload).encode(),
                           {"Content-Type": "application/json"})
        response = connection.getresponse()
        return response.status, json.loads(response.read())
    finally:
        connection.close()


def test_the_exercise_check_reports_a_wrong_learner_in_one_line():
    report = exercise.check(learner(count_pairs=lambda words: {(1, 2): 1}), 5)
    assert report.errors and "\n" not in report.errors[0]
    assert report.errors[0] in ("your count_pairs returned the key (1, 2): a pair is two "
                                "tokens (strings)",
                                "your count_pairs returned the key (1, 2), but its words hold "
                                "no tokens")
    report = exercise.check(learner(merge=lambda word, pair, new: [object()]), 5)
    assert report.errors[0].startswith("your merge returned the token <object object>: "
                                       "a token is a string")


# -- any wrong answer at all --------------------------------------------------------------

class Own(int):
    """A recipe's stand-in for one of the tokens of the words the function was given."""


NEW = "new token"
EXCEPTIONS = [KeyError("k"), IndexError("i"), ZeroDivisionError("z"), TypeError("t"),
              RecursionError("r"), StopIteration(), SystemExit(2), Unprintable(), MemoryError()]
hashable_leaves = (st.none() | st.booleans() | st.integers(-2, 300) | st.just(10**30)
                   | st.floats() | st.text("ab</w>", max_size=4) | st.binary(max_size=2))
anything = st.recursive(
    hashable_leaves | st.builds(Loud),
    lambda inner: (st.lists(inner, max_size=3) | st.tuples(inner, inner)
                   | st.dictionaries(hashable_leaves, inner, max_size=3)),
    max_leaves=6)
tokens = st.integers(0, 9).map(Own) | hashable_leaves
counts = (st.integers(-2, 30) | st.just(10**6) | st.floats() | st.booleans()
          | st.text("1", max_size=2))
count_recipes = st.tuples(
    st.sampled_from(["right", "dict", "entries", "generator", "anything", "raise"]),
    st.lists(st.tuples(st.one_of(st.tuples(tokens, tokens), tokens), counts), max_size=4),
    anything, st.sampled_from(EXCEPTIONS))
merge_recipes = st.tuples(
    st.sampled_from(["right", "list", "tuple", "generator", "anything", "raise"]),
    st.lists(tokens | st.just(NEW), max_size=8), anything, st.sampled_from(EXCEPTIONS))


def _token(recipe, own: list, new=None):
    if recipe is NEW:
        return new
    if type(recipe) is Own:
        return own[int(recipe) % len(own)] if own else int(recipe)
    return recipe


def _shape(shape: str, made: list, whole, exc, right):
    if shape == "right":
        return right()
    if shape == "raise":
        raise exc
    if shape == "anything":
        return whole
    if shape == "generator":
        return iter(made)
    if shape == "tuple":
        return tuple(made)
    return made


def scripted(count_script: list, merge_script: list) -> exercise.Learner:
    """A learner whose answers follow the scripts, call after call (round and round)."""
    calls = {"count": 0, "merge": 0}

    def count_pairs(words):
        shape, entries, whole, exc = count_script[calls["count"] % len(count_script)]
        calls["count"] += 1
        own = sorted({t for word in words for t in word}, key=repr)
        made = [(tuple(_token(t, own) for t in key) if type(key) is tuple else _token(key, own),
                 count) for key, count in entries]
        if shape == "dict":
            made = dict(made)
        return _shape(shape, made, whole, exc, lambda: right_count(words))

    def merge(word, pair, new):
        shape, made, whole, exc = merge_script[calls["merge"] % len(merge_script)]
        calls["merge"] += 1
        made = [_token(t, word, new) for t in made]
        return _shape(shape, made, whole, exc, lambda: right_merge(word, pair, new))

    return learner(count_pairs, merge)


corpora = st.sampled_from([("words", "ab ab abab"), ("words", "aaa ba"), ("counts", "ab 2\naab 1"),
                           ("bytes", "ab ab\nabab"), ("bytes", "é\n\naa")])


@settings(max_examples=examples(200), deadline=None)
@given(corpora, st.integers(0, 4), st.lists(count_recipes, min_size=1, max_size=3),
       st.lists(merge_recipes, min_size=1, max_size=3))
def test_any_wrong_learner_is_answered_or_refused_in_one_line(corpus, merges, count_script,
                                                               merge_script):
    mode, text = corpus
    workbench.clear_caches()
    try:
        answer = handle("learner", {"corpus": text, "mode": mode, "merges": merges},
                        learner=scripted(count_script, merge_script))
    except WorkbenchError as exc:
        line = str(exc)
        assert line.startswith("mine.py: your count_pairs ") or \
            line.startswith("mine.py: your merge "), line
        assert "\n" not in line and len(line) < 1000
        event("refused: count_pairs" if line.startswith("mine.py: your count_pairs")
              else "refused: merge")
    else:
        json.dumps(answer, allow_nan=False)  # JSON-ready: the page gets it as is
        event("answered")
        assert answer["broken"]["merges"] <= merges
        assert all(type(r["count"]) is int for r in answer["broken"]["history"])


def flaky(right, wrong):
    """A function that answers right and wrong by turns (or raises), as code with state may."""
    calls = []

    def function(*args):
        calls.append(args)
        return (right if len(calls) % 2 else wrong)(*args)
    return function


def dedup_count(words):
    counts = {}
    for word in words:
        for pair in set(zip(word, word[1:])):
            counts[pair] = counts.get(pair, 0) + 1
    return counts


@pytest.mark.parametrize("functions", [
    {"count_pairs": flaky(right_count, raising(KeyError("k")))},
    {"count_pairs": flaky(raising(KeyError("k")), right_count)},
    {"count_pairs": flaky(lambda words: {}, right_count)},
    {"count_pairs": flaky(right_count, lambda words: {})},
    {"count_pairs": flaky(dedup_count, right_count)},
    {"merge": flaky(right_merge, raising(IndexError("i")))},
    {"merge": flaky(lambda word, pair, new: list(word), right_merge)},
])
def test_the_check_of_a_learner_whose_answers_change_is_a_report_of_one_lines(functions):
    # The check calls the learner's functions again to show what it found: a second answer
    # unlike the first (or a failure) is said in the report, never raised.
    report = exercise.check(learner(**functions), 10)
    lines = report.lines()
    assert lines and all(line and "\n" not in line for line in lines)
    assert not report.passed or not report.errors
