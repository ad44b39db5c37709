"""The merge workbench's API: the reference trainer's rules in every mode, the chapter's
examples, the variants' marked divergence, and one clear line for bad input."""

import json
from collections import Counter

import pytest
from hypothesis import given, settings, strategies as st

from bytepair.training import train_bytes, train_words
from bytepair.teach import workbench, workbench_sessions
from bytepair.teach.workbench import WorkbenchError, handle, rows_of
from helpers import examples

CHAPTER = "low lower lowest"

letters = st.text("abé", min_size=1, max_size=6)
word_lists = st.lists(letters, min_size=1, max_size=8)
count_lines = st.dictionaries(letters, st.integers(1, 4), min_size=1, max_size=6)
documents = st.lists(st.text("ab é\t", max_size=8), min_size=1, max_size=5).filter(
    lambda docs: "".join(docs).strip())


def rules_of(answer):
    return [(r["left"], r["right"], r["count"], r["replacements"]) for r in answer["history"]]


@given(word_lists, st.booleans(), st.integers(0, 10))
def test_word_lists_learn_the_reference_rules(words, end_of_word, merges):
    answer = handle("run", {"corpus": " ".join(words), "mode": "words",
                            "end_of_word": end_of_word, "merges": 0, "n": max(merges, 1)})
    model = train_words(Counter(words), max(merges, 1),
                        end_of_word="</w>" if end_of_word else None)
    assert rules_of(answer) == [(m.left, m.right, m.count, m.replacements) for m in model.merges]
    assert [row["tokens"] for row in rows_of(answer)] == [list(model.words[w]) for w in words]
    # Done: no pair is left for another merge (so fewer merges than asked means done).
    assert answer["done"] == (not answer["table"])
    assert answer["done"] or len(model.merges) == max(merges, 1)


@given(count_lines, st.integers(1, 10))
def test_word_count_lines_learn_the_reference_rules(counts, merges):
    corpus = "\n".join(f"{word} {count}" for word, count in counts.items())
    answer = handle("run", {"corpus": corpus, "mode": "counts", "merges": 0, "n": merges})
    model = train_words(counts, merges, end_of_word="</w>", engine="naive")
    assert rules_of(answer) == [(m.left, m.right, m.count, m.replacements) for m in model.merges]
    assert [row["tokens"] for row in rows_of(answer)] == [list(model.words[w]) for w in counts]
    assert [row["count"] for row in rows_of(answer)] == list(counts.values())


@given(documents, st.integers(1, 10))
def test_free_text_in_byte_mode_learns_the_reference_rules(docs, merges):
    answer = handle("run", {"corpus": "\n".join(docs), "mode": "bytes", "merges": 0, "n": merges})
    if docs[-1] == "":
        docs = docs[:-1]  # the line break that ends the last line starts no document
    model = train_bytes([d.encode() for d in docs], merges)
    assert [(r["ids"][0], r["ids"][1], r["count"], r["replacements"]) for r in answer["history"]] \
        == [(m.left, m.right, m.count, m.replacements) for m in model.merges]
    assert [row["ids"] for row in rows_of(answer)] == [list(s) for s in model.sequences]
    for row in rows_of(answer):
        assert [workbench.byte_label(model.token_bytes(i)) for i in row["ids"]] == row["tokens"]


@settings(max_examples=examples(50))
@given(word_lists, st.integers(0, 6))
def test_one_merge_at_a_time_is_the_same_as_running_n(words, merges):
    payload = {"corpus": " ".join(words), "mode": "words"}
    step = handle("parse", payload)
    for k in range(merges):
        step = handle("apply", dict(payload, merges=step["merges"]))
    if merges:
        ran = handle("run", dict(payload, merges=0, n=merges))
        assert rules_of(step) == rules_of(ran) and rows_of(step) == rows_of(ran)
    assert handle("pairs", dict(payload, merges=step["merges"]))["table"] == step["table"]


def test_the_chapters_table_tie_and_first_merge():
    answer = handle("parse", {"corpus": CHAPTER})
    top = [(r["left"], r["right"], r["count"], r["tied"]) for r in answer["table"][:2]]
    assert top == [("l", "o", 3, True), ("o", "w", 3, True)]
    assert answer["winner"]["left"] == "l" and answer["table"][0]["winner"]
    assert not any(r["winner"] for r in answer["table"][1:])
    # Count descending, then (left, right) in string order: "</w>" sorts before letters.
    keys = [(-r["count"], r["left"], r["right"]) for r in answer["table"]]
    assert keys == sorted(keys)
    after = handle("apply", {"corpus": CHAPTER, "merges": 0})
    assert [r["tokens"] for r in rows_of(after)] == [
        ["lo", "w", "</w>"], ["lo", "w", "e", "r", "</w>"], ["lo", "w", "e", "s", "t", "</w>"]]
    assert [r["new"] for r in rows_of(after)] == [[0], [0], [0]]
    assert after["last"] == {"rank": 0, "left": "l", "right": "o", "token": "lo", "count": 3,
                             "replacements": 3}


def test_the_word_count_exercise():
    corpus = "low 5\nlower 2\nnewest 6\nwidest 3"
    answer = handle("run", {"corpus": corpus, "mode": "counts", "end_of_word": False,
                            "merges": 0, "n": 4})
    assert [(r["left"], r["right"]) for r in answer["history"]] == \
        [("e", "s"), ("es", "t"), ("l", "o"), ("lo", "w")]


def test_the_overlap_example():
    example = handle("overlap", {})
    assert example["before"] == ["a", "a", "a"] and example["count"] == 2
    assert example["replacements"] == 1 and example["after"] == ["aa", "a"]
    assert example["overlapping"]["after"] == ["aa", "aa"]
    answer = handle("apply", {"corpus": "aaa", "end_of_word": False, "merges": 0})
    assert answer["last"]["count"] == 2 and answer["last"]["replacements"] == 1
    assert rows_of(answer)[0]["tokens"] == ["aa", "a"]


def test_abab_counts_two():
    answer = handle("parse", {"corpus": "abab"})
    assert (answer["winner"]["left"], answer["winner"]["right"], answer["winner"]["count"]) == \
        ("a", "b", 2)
    assert rows_of(handle("apply", {"corpus": "abab", "merges": 0}))[0]["tokens"] == \
        ["ab", "ab", "</w>"]


def test_byte_tokens_that_are_not_whole_utf8_are_written_in_hex():
    answer = handle("parse", {"corpus": "é a", "mode": "bytes"})
    assert rows_of(answer)[0]["tokens"] == ["\\xc3", "\\xa9", "\u2423", "a"]
    merged = handle("apply", {"corpus": "é a", "mode": "bytes", "merges": 0})
    assert rows_of(merged)[0]["tokens"] == ["\\xc3", "\\xa9", "\u2423a"]  # ties: smallest IDs
    merged = handle("apply", {"corpus": "éé", "mode": "bytes", "merges": 0})
    assert rows_of(merged)[0]["tokens"] == ["é", "é"] and rows_of(merged)[0]["ids"] == [256, 256]


# -- the variants -------------------------------------------------------------------

def variant(name, corpus=CHAPTER, merges=1, **more):
    return handle("variant", dict({"corpus": corpus, "merges": merges, "variant": name}, **more))


def test_first_occurrence_marks_the_occurrences_the_rule_should_have_merged():
    answer = variant("first-occurrence")
    rows = answer["broken"]["rows"]
    assert [r["tokens"][:2] for r in rows] == [["lo", "w"], ["l", "o"], ["l", "o"]]
    assert [r["marks"] for r in rows] == [{}, {"missed": [0, 1]}, {"missed": [0, 1]}]
    assert [r["differs"] for r in rows] == [False, True, True]
    assert answer["broken"]["history"][0]["replacements"] == 1
    assert answer["broken"]["history"][0]["expected"]["replacements"] == 3
    assert answer["diverged_at"] == 0
    assert answer["summary"].startswith("2 occurrences")


def test_deduplicated_marks_the_undercounted_pairs():
    answer = variant("deduplicated", corpus="aaaa ab", merges=0)
    table = {(r["left"], r["right"]): (r["count"], r["expected"]) for r in answer["broken"]["table"]}
    assert table[("a", "a")] == (1, 3)
    under = [(r["left"], r["right"]) for r in answer["broken"]["table"]
             if r["count"] != r["expected"]]
    assert under == [("a", "a")]


def test_overlapping_marks_the_reused_tokens():
    answer = variant("overlapping", corpus="aaa", end_of_word=False)
    row = answer["broken"]["rows"][0]
    assert row["tokens"] == ["aa", "aa"] and row["marks"] == {"reused": [1]} and row["differs"]
    assert rows_of(answer["reference"])[0]["tokens"] == ["aa", "a"]
    assert answer["broken"]["history"][0]["replacements"] == 2


def test_across_boundaries_marks_tokens_that_span_two_words():
    answer = variant("across-boundaries", corpus="ab ba", end_of_word=False)
    # b|b is only adjacent across the boundary, and a|b, b|a tie with it... the first
    # merge is (a, b); then (b, b) does not exist; so look at a corpus where the boundary wins.
    answer = variant("across-boundaries", corpus="a a a", end_of_word=False)
    rows = answer["broken"]["rows"]
    assert answer["reference"]["merges"] == 0 and answer["broken"]["merges"] == 1
    assert rows[0]["tokens"] == ["aa"] and rows[0]["marks"] == {"crossing": [0]}
    assert rows[1]["tokens"] == [] and rows[2]["tokens"] == ["a"]
    assert answer["diverged_at"] == 0
    table = handle("variant", {"corpus": "a a a", "end_of_word": False, "merges": 0,
                               "variant": "across-boundaries"})["broken"]["table"]
    assert (table[0]["count"], table[0]["expected"]) == (2, 0)


def test_across_boundaries_writes_counted_words_out():
    answer = variant("across-boundaries", corpus="ab 2", mode="counts", end_of_word=False,
                     merges=2)
    assert [r["of"] for r in answer["broken"]["rows"]] == [0, 0]
    assert answer["broken"]["history"][1]["left"] == "b" or \
        answer["broken"]["history"][1]["right"] == "ab"


def test_arbitrary_ties_show_other_rules_for_the_same_words_reordered():
    answer = variant("arbitrary-ties", corpus="ow lo")
    assert answer["diverged_at"] == 0
    history = answer["broken"]["history"][0]
    assert (history["left"], history["right"]) == ("o", "w")
    assert (history["expected"]["left"], history["expected"]["right"]) == ("l", "o")
    assert answer["reordered"][0]["left"] == "l" and answer["reordered"][0]["differs"]


@pytest.mark.parametrize("name", ["first-occurrence", "deduplicated", "overlapping",
                                  "across-boundaries", "arbitrary-ties"])
def test_every_variant_answers_in_every_mode(name):
    for mode, corpus in (("words", CHAPTER), ("counts", "low 2\nlowest 1"),
                         ("bytes", "abab\naaa")):
        answer = handle("variant", {"corpus": corpus, "mode": mode, "merges": 3,
                                    "variant": name})
        assert answer["reference"]["merges"] == 3
        assert answer["variant"]["name"] == name and answer["summary"]


# -- bad input ------------------------------------------------------------------------

@pytest.mark.parametrize("action, payload, message", [
    ("parse", [], "must be a JSON object"),
    ("parse", {}, "has no corpus"),
    ("parse", {"corpus": 3}, "corpus must be text"),
    ("parse", {"corpus": "   \n "}, "the corpus is empty"),
    ("parse", {"corpus": "a", "mode": "chars"}, "mode must be one of"),
    ("parse", {"corpus": "a", "end_of_word": "yes"}, "end_of_word must be true or false"),
    ("parse", {"corpus": "x" * (workbench.MAX_BYTES + 1)}, "more than the workbench's limit"),
    ("parse", {"corpus": "a " * (workbench.MAX_ROWS + 1)}, "5,001 words, more than"),
    ("parse", {"corpus": "ok\nab\ud800c", "mode": "bytes"},
     "line 2, character 3: not valid UTF-8 (a lone surrogate U+D800)"),
    ("parse", {"corpus": "low five", "mode": "counts"}, "line 1: the count of 'low'"),
    ("parse", {"corpus": "low 0", "mode": "counts"}, "must be a whole number from 1"),
    ("parse", {"corpus": "low", "mode": "counts"}, "line 1: expected 'word count'"),
    ("parse", {"corpus": "low 1\nlow 2", "mode": "counts"}, "already counted on line 1"),
    ("parse", {"corpus": "a</w>"}, "holds the end-of-word marker"),
    ("apply", {"corpus": "a", "merges": "1"}, "merges must be a whole number"),
    ("apply", {"corpus": "a", "merges": True}, "merges must be a whole number"),
    ("apply", {"corpus": "a", "merges": -1}, "merges must be between 0 and"),
    ("run", {"corpus": "a", "merges": 0, "n": 0}, "n must be between 1 and"),
    ("run", {"corpus": "a", "merges": 400, "n": 400}, "merges + n must be at most"),
    ("variant", {"corpus": "a", "variant": "none"}, "variant must be one of"),
    ("variant", {"corpus": "a 6000", "mode": "counts", "variant": "across-boundaries"},
     "6,000 words, more than"),
    ("learner", {"corpus": "a"}, "no exercise file was given"),
    ("train", {"corpus": "a"}, "no action 'train'"),
])
def test_bad_input_is_one_clear_line(action, payload, message):
    with pytest.raises(WorkbenchError, match=None) as caught:
        handle(action, payload)
    assert message in str(caught.value)
    assert "\n" not in str(caught.value)


def test_limits_are_stated():
    assert handle("limits", {}) == {"bytes": workbench.MAX_BYTES, "rows": workbench.MAX_ROWS,
                                    "count": workbench.MAX_COUNT, "merges": workbench.MAX_MERGES}


@settings(max_examples=examples(60))
@given(word_lists, st.lists(st.integers(0, 30), min_size=1, max_size=6))
def test_requests_in_any_order_continue_the_reference_exactly(words, steps):
    # The workbench continues the trainer from the rows of an earlier request; whatever the
    # order of the requests, each answer is a fresh fit's.
    payload = {"corpus": " ".join(words), "mode": "words"}
    for merges in steps:
        answer = handle("pairs", dict(payload, merges=merges))
        model = train_words(Counter(words), merges, end_of_word="</w>", engine="naive") \
            if merges else None
        expected = [(m.left, m.right, m.count, m.replacements) for m in model.merges] \
            if model else []
        assert rules_of(answer) == expected
        if model:
            assert [row["tokens"] for row in rows_of(answer)] == [list(model.words[w]) for w in words]


def test_many_corpora_and_threads_at_once():
    from concurrent.futures import ThreadPoolExecutor

    corpora = [" ".join(["low", "lower", "lowest"] * i + ["newest"] * (i % 3)) for i in range(1, 12)]

    def ask(job):
        corpus, merges = job
        return corpus, merges, rules_of(handle("pairs", {"corpus": corpus, "merges": merges}))

    jobs = [(c, m) for c in corpora for m in (3, 9, 1, 6)]
    with ThreadPoolExecutor(4) as pool:
        for corpus, merges, rules in pool.map(ask, jobs):
            model = train_words(Counter(corpus.split()), merges, end_of_word="</w>")
            assert rules == [(m.left, m.right, m.count, m.replacements) for m in model.merges]


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 600) | st.text("ab </w>\n5", max_size=12),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text("ab", max_size=2), inner,
                                                                max_size=3),
    max_leaves=6)
payloads = st.fixed_dictionaries({}, optional={
    "corpus": json_values, "mode": st.sampled_from(["words", "counts", "bytes"]) | json_values,
    "end_of_word": json_values, "merges": json_values, "n": json_values,
    "variant": st.sampled_from(sorted(workbench.variants.VARIANTS)) | json_values})


@settings(max_examples=examples(300))
@given(st.sampled_from(["parse", "reset", "pairs", "apply", "run", "variant", "learner", "overlap",
                        "limits", "nope"]), payloads | json_values)
def test_any_request_is_answered_or_refused_in_one_line(action, payload):
    try:
        answer = handle(action, payload)
    except WorkbenchError as exc:
        assert str(exc) and "\n" not in str(exc)
    else:
        assert isinstance(answer, dict)
        json.dumps(answer, allow_nan=False)  # JSON-ready


def _starter_learner():
    from bytepair.teach import exercise

    space: dict = {}
    exec(exercise.starter(), space)
    return exercise.Learner("starter", space["count_pairs"], space["merge"])


STARTER = _starter_learner()
small_corpora = st.one_of(
    st.tuples(st.just("words"), st.lists(st.text("ab", min_size=1, max_size=5), min_size=1,
                                         max_size=6).map(" ".join)),
    st.tuples(st.just("counts"), count_lines.map(
        lambda counts: "\n".join(f"{word} {count}" for word, count in counts.items()))),
    st.tuples(st.just("bytes"), documents.map("\n".join)))


@settings(max_examples=40, deadline=None)
@given(small_corpora, st.booleans(), st.lists(st.integers(0, 12), min_size=2, max_size=5))
def test_continued_answers_equal_fresh_ones_for_every_trainer(corpus, end_of_word, steps):
    # Each trainer (the reference, every variant, the learner's functions) continues from the rows
    # it last reached on the corpus; in any order of requests, every answer equals the answer of a
    # server that has seen nothing.
    mode, text = corpus
    payload = {"corpus": text, "mode": mode, "end_of_word": end_of_word}
    asks = [("pairs", {})] + [("variant", {"variant": name}) for name in workbench.variants.VARIANTS]
    asks.append(("learner", {}))
    progress = workbench_sessions.progress  # where each trainer got to, shared by every request
    every = progress.EVERY
    progress.EVERY = 4  # points inside the steps, not only at the last merge asked for
    try:
        workbench.clear_caches()
        answers = [(action, request, handle(action, request, learner=STARTER))
                   for merges in steps for action, extra in asks
                   for request in [dict(payload, merges=merges, **extra)]]
        for action, request, continued in answers:
            workbench.clear_caches()
            assert continued == handle(action, request, learner=STARTER), request
    finally:
        progress.EVERY = every
