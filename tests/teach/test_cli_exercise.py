"""``bytepair exercise``: the starter, the check's report and exit codes, and bad input in one line."""

import subprocess
import sys

import pytest

from bytepair.cli.main import main


def bytepair(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "bytepair", "exercise", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=300)


def test_the_starter_is_written_and_checked(tmp_path):
    result = bytepair("starter", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "bpe_exercise.py").read_text().count("def ") == 2
    again = bytepair("starter", cwd=tmp_path)
    assert again.returncode == 2 and again.stderr.startswith("bytepair: error: PATH: ")
    checked = bytepair("check", "bpe_exercise.py", "--examples", "40", cwd=tmp_path)
    assert checked.returncode == 1, checked.stderr
    lines = checked.stdout.splitlines()
    assert lines[1] == ('  FAIL  deduplicating within each word: [["a", "a", "a"]]: '
                        "counted ('a', 'a') 1, expected 2")
    assert [line.split()[0] for line in lines[2:8]] == ["ok"] * 6
    assert lines[8] == ('  FAIL  training with your functions: [["a", "a", "a"]], 1 merge: '
                        "rank 0, ('a', 'a'): counted 1, expected 2")
    assert "bytepair workbench --exercise bpe_exercise.py" in checked.stdout


@pytest.mark.slow
def test_a_correct_file_passes_with_exit_code_0(tmp_path):
    path = tmp_path / "good.py"
    path.write_text("def count_pairs(words):\n"
                    "    counts = {}\n"
                    "    for word in words:\n"
                    "        for pair in zip(word, word[1:]):\n"
                    "            counts[pair] = counts.get(pair, 0) + 1\n"
                    "    return dict(sorted(counts.items(), key=lambda i: (-i[1], i[0])))\n"
                    "def merge(word, pair, new_token):\n"
                    "    out, i = [], 0\n"
                    "    while i < len(word):\n"
                    "        if word[i:i + 2] == list(pair):\n"
                    "            out.append(new_token); i += 2\n"
                    "        else:\n"
                    "            out.append(word[i]); i += 1\n"
                    "    return out\n")
    result = bytepair("check", str(path), "--examples", "40")
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.splitlines()[-1] == "all checks pass"


@pytest.mark.parametrize("args, message", [
    (["check"], "FILE.py: bytepair exercise check needs the file to check"),
    (["check", "missing.py"], "no such file: 'missing.py'"),
    (["starter", "--examples", "3"], "--examples: only bytepair exercise check takes it"),
    (["grade", "x.py"], "argument ACTION: invalid choice: 'grade'"),
])
def test_bad_input_is_one_line_and_exit_code_2(tmp_path, args, message):
    result = bytepair(*args, cwd=tmp_path)
    assert result.returncode == 2
    assert message in result.stderr and len(result.stderr.strip().splitlines()) == 1
    assert "Traceback" not in result.stderr


def test_without_hypothesis_the_check_says_what_to_install(tmp_path, monkeypatch, capsys):
    (tmp_path / "s.py").write_text("def count_pairs(w):\n    return {}\n"
                                   "def merge(w, p, n):\n    return w\n")
    monkeypatch.setitem(sys.modules, "hypothesis", None)  # an import of it now fails
    assert main(["exercise", "check", str(tmp_path / "s.py")]) == 2
    err = capsys.readouterr().err
    assert err == ("bytepair: error: bytepair exercise check needs Hypothesis: "
                   "pip install 'bytepair[teach]'\n")
