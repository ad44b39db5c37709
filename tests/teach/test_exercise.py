"""The exercise checker: the reference passes, the starter shows exactly its mistake, and one
implementation of each failure mode shows that mode alone."""

import textwrap

import pytest
from helpers import sampled

from bytepair.teach import exercise
from bytepair.teach.workbench import WorkbenchError, handle, rows_of

#: Enough for these tiny alphabets; the search is seeded, so the report never changes.
EXAMPLES = 30

CORRECT_COUNT = """
def count_pairs(words):
    counts = {}
    for word in words:
        for pair in zip(word, word[1:]):
            counts[pair] = counts.get(pair, 0) + 1
    return dict(sorted(counts.items(), key=lambda item: (-item[1], item[0])))
"""
CORRECT_MERGE = """
def merge(word, pair, new_token):
    out, i = [], 0
    while i < len(word):
        if i + 1 < len(word) and (word[i], word[i + 1]) == pair:
            out.append(new_token)
            i += 2
        else:
            out.append(word[i])
            i += 1
    return out
"""
BROKEN = {
    "deduplicated": """
def count_pairs(words):
    counts = {}
    for word in words:
        for pair in set(zip(word, word[1:])):
            counts[pair] = counts.get(pair, 0) + 1
    return dict(sorted(counts.items(), key=lambda item: (-item[1], item[0])))
""",
    "first-occurrence": """
def merge(word, pair, new_token):
    for i in range(len(word) - 1):
        if (word[i], word[i + 1]) == pair:
            return word[:i] + [new_token] + word[i + 2:]
    return list(word)
""",
    "overlapping": """
def merge(word, pair, new_token):
    out, i = [], 0
    while i < len(word):
        if i + 1 < len(word) and (word[i], word[i + 1]) == pair:
            out.append(new_token)
            # the bug: step one token, so the right token can start the next match
            if i + 2 < len(word) and (word[i + 1], word[i + 2]) == pair:
                i += 1
            else:
                i += 2
        else:
            out.append(word[i])
            i += 1
    return out
""",
    "skips-last-pair": """
def count_pairs(words):
    counts = {}
    for word in words:
        for i in range(len(word) - 2):  # the bug: stops one pair early
            pair = (word[i], word[i + 1])
            counts[pair] = counts.get(pair, 0) + 1
    return dict(sorted(counts.items(), key=lambda item: (-item[1], item[0])))
""",
    "loses-token": """
def merge(word, pair, new_token):
    out, i = [], 0
    while i < len(word) - 1:  # the bug: a last token left unmatched is never copied
        if (word[i], word[i + 1]) == pair:
            out.append(new_token)
            i += 2
        else:
            out.append(word[i])
            i += 1
    return out
""",
    "across-boundaries": """
def count_pairs(words):
    stream = [token for word in words for token in word]
    counts = {}
    for pair in zip(stream, stream[1:]):
        counts[pair] = counts.get(pair, 0) + 1
    return dict(sorted(counts.items(), key=lambda item: (-item[1], item[0])))
""",
    "arbitrary-ties": """
from collections import Counter

def count_pairs(words):
    counts = Counter()
    for word in words:
        counts.update(zip(word, word[1:]))
    return counts
""",
}


def write(tmp_path, name, text):
    path = tmp_path / f"{name}.py"
    path.write_text(textwrap.dedent(text))
    return path


def implementation(tmp_path, mode=None):
    count = BROKEN[mode] if mode in ("deduplicated", "skips-last-pair", "across-boundaries",
                                     "arbitrary-ties") else CORRECT_COUNT
    merge = BROKEN[mode] if mode in ("first-occurrence", "overlapping", "loses-token") \
        else CORRECT_MERGE
    return write(tmp_path, mode or "correct", count + merge)


def shown(report):
    return {finding.mode for finding in report.findings if finding.shown}


def test_the_reference_passes(tmp_path):
    report = exercise.check(exercise.load_learner(implementation(tmp_path)), EXAMPLES)
    assert report.passed and shown(report) == set() and not report.errors
    assert report.training is None


def test_the_reference_functions_themselves_pass():
    from bytepair.learn.rules import count_pairs, replace_pair

    def counts(words):
        found = count_pairs(words, [1] * len(words))
        return dict(sorted(found.items(), key=lambda item: (-item[1], item[0])))

    learner = exercise.Learner("reference", counts,
                               lambda word, pair, new: replace_pair(word, *pair, new)[0])
    assert exercise.check(learner, EXAMPLES).passed


def test_the_starter_shows_exactly_its_mistake(tmp_path):
    path = tmp_path / "starter.py"
    path.write_text(exercise.starter("starter.py"))
    report = exercise.check(exercise.load_learner(path), EXAMPLES)
    assert shown(report) == {"deduplicated"}
    finding = report.findings[0]
    assert finding.example == '[["a", "a", "a"]]: counted (\'a\', \'a\') 1, expected 2'
    assert not report.passed


# test_the_smallest_counterexamples finds five of the modes; that each is flagged alone is
# checked for two by default (a whole check each), for all seven in CI.
@pytest.mark.parametrize("mode", sampled(list(exercise.MODES), keep={"overlapping", "deduplicated"}))
def test_each_failure_mode_is_flagged_alone(tmp_path, mode):
    report = exercise.check(exercise.load_learner(implementation(tmp_path, mode)), EXAMPLES)
    assert shown(report) == {mode}
    assert not report.errors and report.training is not None
    finding = next(f for f in report.findings if f.mode == mode)
    assert finding.example


def test_the_smallest_counterexamples(tmp_path):
    def example(mode):
        report = exercise.check(exercise.load_learner(implementation(tmp_path, mode)), EXAMPLES)
        return next(f.example for f in report.findings if f.mode == mode)

    assert example("first-occurrence") == \
        'merge(["a", "a", "a", "a"], (\'a\', \'a\'), "aa") returned ["aa", "a", "a"], ' \
        'expected ["aa", "aa"]'
    assert example("overlapping") == \
        'merge(["a", "a", "a"], (\'a\', \'a\'), "aa") returned ["aa", "aa"], expected ["aa", "a"]'
    assert example("across-boundaries") == '[["a"], ["a"]]: counted (\'a\', \'a\') 1, expected 0'
    assert example("skips-last-pair") == '[["a", "a"]]: counted (\'a\', \'a\') 0, expected 1'
    assert example("loses-token") == \
        'merge(["a", "a", "a"], (\'a\', \'a\'), "aa") returned ["aa"], expected ["aa", "a"]: ' \
        'the last token ["a"] dropped (off by one at the end)'


def test_training_shows_what_differs_not_equal_sides(tmp_path):
    # Only the replacements and the words differ: the line shows those, each with its expected.
    report = exercise.check(exercise.load_learner(implementation(tmp_path, "first-occurrence")),
                            EXAMPLES)
    assert report.training == ('[["a", "a", "a", "a"]], 1 merge: rank 0, (\'a\', \'a\'): '
                               'replaced 1, expected 2; words after it [["aa", "a", "a"]], '
                               'expected [["aa", "aa"]]')


def test_code_that_raises_or_never_ends_is_one_line(tmp_path):
    raises = write(tmp_path, "raises", CORRECT_COUNT + "\ndef merge(word, pair, new):\n"
                   "    return word[len(word)]\n")
    report = exercise.check(exercise.load_learner(raises), 10)
    assert report.errors and report.errors[0].startswith("your merge raised IndexError")
    loops = write(tmp_path, "loops", CORRECT_COUNT + "\ndef merge(word, pair, new):\n"
                  "    i = 0\n    while i < len(word):\n        pass\n    return word\n")
    learner = exercise.load_learner(loops)
    with pytest.raises(exercise.LearnerError, match="ran for more than 2 s"):
        learner.merge(["a"], ("a", "a"), "aa")
    wrong = write(tmp_path, "wrong", "def count_pairs(words):\n    return 3\n" + CORRECT_MERGE)
    with pytest.raises(exercise.LearnerError, match="must return a dict"):
        exercise.load_learner(wrong).count_pairs([["a", "b"]])


@pytest.mark.parametrize("text, message", [
    ("def count_pairs(words):\n    return {}\n", "must define a function merge"),
    ("def count_pairs(words:\n", "line 1"),
    ("raise RuntimeError('boom')\n", "raised RuntimeError when imported: boom"),
    ("import sys\nsys.exit('bye\\nnow')\n", "raised SystemExit when imported: bye now$"),
])
def test_a_file_that_cannot_be_loaded_is_one_line(tmp_path, text, message):
    path = write(tmp_path, "bad", text)
    with pytest.raises(ValueError, match=message):
        exercise.load_learner(path)
    with pytest.raises(ValueError, match="no such file"):
        exercise.load_learner(tmp_path / "missing.py")


def test_the_workbench_runs_the_learners_functions_beside_the_reference(tmp_path):
    learner = exercise.load_learner(implementation(tmp_path, "first-occurrence"))
    answer = handle("learner", {"corpus": "low lower lowest", "merges": 1}, learner=learner)
    assert answer["diverged_at"] is None  # first-in-word only: still right on these words
    answer = handle("learner", {"corpus": "abab", "merges": 1}, learner=learner)
    assert answer["diverged_at"] == 0
    assert answer["broken"]["rows"][0]["tokens"] == ["ab", "a", "b", "</w>"]
    assert rows_of(answer["reference"])[0]["tokens"] == ["ab", "ab", "</w>"]
    correct = exercise.load_learner(implementation(tmp_path))
    for mode, corpus in (("words", "low lower lowest"), ("counts", "low 3\nlowest 2"),
                         ("bytes", "aaa\nab ab")):
        answer = handle("learner", {"corpus": corpus, "mode": mode, "merges": 4}, learner=correct)
        assert answer["diverged_at"] is None
        assert [r["tokens"] for r in answer["broken"]["rows"]] == \
            [rows_of(answer["reference"])[r["of"]]["tokens"] for r in answer["broken"]["rows"]]
    raises = write(tmp_path, "raises", CORRECT_COUNT + "\ndef merge(word, pair, new):\n"
                   "    return word[len(word)]\n")
    with pytest.raises(WorkbenchError, match="your merge raised IndexError"):
        handle("learner", {"corpus": "ab", "merges": 1}, learner=exercise.load_learner(raises))
