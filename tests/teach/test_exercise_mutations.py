"""``bytepair exercise check`` on mutated learners: each report names the mutation and shows
what differs.

Hypothesis writes a correct learner in one of several spellings, applies one
mutation (a mistake a learner makes), and runs the command. The report must
fail, name that mutation's mistake on a FAIL line, and on that line show two
sides (``yours, expected ...``) that differ.
"""

from __future__ import annotations

import contextlib
import io
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
from helpers import sampled

from bytepair.cli.main import main
from bytepair.teach.exercise import MODES

COUNT = """\
{imports}
def count_pairs(words):
    counts = {container}
    for word in words:
        for i in range(len(word) - {stop}):
            pair = (word[i], word[i + 1])
            counts[pair] = counts.get(pair, 0) + 1
    return dict(sorted(counts.items(), key={key}))
"""
MERGE = """
def merge(word, pair, new_token):
    out, i = [], 0
    while i < len(word) - {end}:
        if i + 1 < len(word) and (word[i], word[i + 1]) == pair:
            out.append(new_token)
            {on_match}
        else:
            out.append(word[i])
            i += 1
    return out
"""
CORRECT = {"stop": "1", "end": "0", "on_match": "i += 2"}
#: Each mutation: what it changes in the correct learner, and the mode its report must name.
MUTATIONS = {
    "skip the last pair": ({"stop": "2"}, "skips-last-pair"),
    "first match only": ({"on_match": "return out + list(word[i + 2:])"}, "first-occurrence"),
    "drop the trailing token": ({"end": "1"}, "loses-token"),
    "unsorted ties": ({"key": "lambda item: -item[1]"}, "arbitrary-ties"),
    "overlap reuse": ({"on_match": "i += 1 if i + 2 < len(word) and "
                                   "(word[i + 1], word[i + 2]) == pair else 2"}, "overlapping"),
}
#: Spellings of a correct learner that the mutations leave alone.
SPELLINGS = st.fixed_dictionaries({
    "container": st.sampled_from(["{}", "dict()", "Counter()"]),
    "key": st.sampled_from(["lambda item: (-item[1], item[0])",
                            "lambda item: (-item[1], item[0][0], item[0][1])"]),
})


def sides(line: str) -> list[tuple[str, str]]:
    """Each ``X, expected Y`` of a report line: the value just before and just after."""
    found = []
    marker = ", expected "
    at = line.find(marker)
    while at >= 0:
        found.append((_value_before(line, at), _value_after(line, at + len(marker))))
        at = line.find(marker, at + 1)
    return found


def _value_before(line: str, end: int) -> str:
    depth, i = 0, end
    while i > 0:
        c = line[i - 1]
        if c in ")]":
            depth += 1
        elif c in "([":
            depth -= 1
        elif depth == 0 and c == " ":
            break
        i -= 1
    return line[i:end]


def _value_after(line: str, start: int) -> str:
    depth, i = 0, start
    while i < len(line):
        c = line[i]
        if c in "([":
            depth += 1
        elif c in ")]":
            depth -= 1
        elif depth == 0 and c in " ;:":
            break
        i += 1
    return line[start:i]


def test_sides_are_read_whole():
    assert sides('merge(["a"], ("a", "b"), "ab") returned ["aa"], expected ["aa", "a"]: x') == [
        ('["aa"]', '["aa", "a"]')]
    assert sides("counted ('a', 'a') 0, expected 1; yours ('b', 'a'), expected ('a', 'a')") == [
        ("0", "1"), ("('b', 'a')", "('a', 'a')")]


# Each mutation runs a whole check (seconds): the default run tries one, CI all five.
@pytest.mark.parametrize("mutation", sampled(list(MUTATIONS), keep={"unsorted ties"}))
# The check runs Hypothesis inside (its own seeded search): a nested search, on purpose.
@settings(max_examples=2, derandomize=True, suppress_health_check=list(HealthCheck))
@given(spelling=SPELLINGS)
def test_each_mutation_is_named_with_differing_sides(mutation, spelling):
    change, mode = MUTATIONS[mutation]
    fields = {**CORRECT, **spelling, **change}
    fields["imports"] = "from collections import Counter\n" if "Counter" in fields["container"] \
        else ""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "mine.py"
        path.write_text(COUNT.format(**fields) + MERGE.format(**fields))
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            code = main(["exercise", "check", str(path), "--examples", "20"])
    report = out.getvalue()
    assert code == 1, report
    named = [line for line in report.splitlines() if line.strip().startswith(f"FAIL  {MODES[mode]}:")]
    assert named, f"{mutation}: no FAIL line names {MODES[mode]!r}\n{report}"
    pairs = sides(named[0])
    assert pairs and any(mine != expected for mine, expected in pairs), named[0]
    # Every FAIL line that compares (the training line too) shows sides that differ.
    for line in report.splitlines():
        if line.strip().startswith("FAIL") and ", expected " in line:
            assert all(mine != expected for mine, expected in sides(line)), line
