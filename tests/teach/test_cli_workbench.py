"""``bytepair workbench``: start-up checks, the URL, and a clean stop on Ctrl-C and SIGTERM."""

from __future__ import annotations

import http.client
import json
import signal
import socket
import subprocess
import sys
import webbrowser

import pytest

import bytepair
from bytepair.cli.main import main
from bytepair.teach.server import TeachServer


@pytest.fixture(scope="module")
def model_path(tmp_path_factory):
    path = tmp_path_factory.mktemp("models") / "tok.json"
    bytepair.train(["low lower lowest"] * 3, merges=6, pretokenize="gpt2",
                   progress=False).save(path)
    return str(path)


def start(*args):
    process = subprocess.Popen([sys.executable, "-m", "bytepair", "workbench", "--no-browser", *args],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    line = process.stdout.readline()
    assert "serving on http://127.0.0.1:" in line, (line, process.stderr.read())
    url = line.split("serving on ", 1)[1].split()[0]
    host, port = url[len("http://"):].rstrip("/").split(":")
    return process, host, int(port)


def get(host, port, path="/"):
    connection = http.client.HTTPConnection(host, port, timeout=10)
    connection.request("GET", path)
    response = connection.getresponse()
    response.read()
    return connection, response.status


@pytest.mark.parametrize("stop, code", [(signal.SIGINT, 0), (signal.SIGTERM, 143)])
def test_it_serves_and_stops_cleanly(model_path, stop, code):
    process, host, port = start(model_path)
    try:
        # A tab left open: a kept-alive connection the server is still holding.
        open_tab, status = get(host, port, "/viewer")
        assert status == 200
        connection = http.client.HTTPConnection(host, port, timeout=10)
        connection.request("POST", "/api/viewer/info", body=b"{}",
                           headers={"Content-Type": "application/json"})
        assert json.loads(connection.getresponse().read())["models"][0]["name"] == "tok.json"
        process.send_signal(stop)
        out, err = process.communicate(timeout=10)
        assert process.returncode == code and "stopped" in err
        with pytest.raises(OSError):
            socket.create_connection((host, port), timeout=2).close()
        open_tab.close()
        connection.close()
    finally:
        if process.poll() is None:
            process.kill()
        process.communicate()


LEARNER = """
def count_pairs(words):
    counts = {}
    for word in words:
        for pair in zip(word, word[1:]):
            counts[pair] = counts.get(pair, 0) + 1
    return counts


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


def test_the_learners_functions_reach_the_workbench(tmp_path):
    (tmp_path / "mine.py").write_text(LEARNER)
    process, host, port = start("--exercise", str(tmp_path / "mine.py"))
    try:
        connection = http.client.HTTPConnection(host, port, timeout=30)
        connection.request("POST", "/api/workbench/learner",
                           body=json.dumps({"corpus": "low lower lowest", "merges": 2}).encode(),
                           headers={"Content-Type": "application/json"})
        response = connection.getresponse()
        answer = json.loads(response.read())
        connection.close()
        assert response.status == 200 and answer["learner"] == "mine.py", answer
    finally:
        process.send_signal(signal.SIGINT)
        process.communicate(timeout=10)


def run_bad(*args):
    result = subprocess.run([sys.executable, "-m", "bytepair", "workbench", "--no-browser", *args],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 2 and result.stdout == "", result
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("bytepair: error: "), result.stderr
    return lines[0]


@pytest.mark.slow
def test_bad_models_are_refused_at_start(model_path, tmp_path):
    (tmp_path / "bad.json").write_text('{"format": "bytepair-model", "version": 1}')
    assert "does not exist" in run_bad(str(tmp_path / "missing.json"))
    assert "bad.json" in run_bad(model_path, str(tmp_path / "bad.json"))
    bytepair.to_tiktoken(bytepair.load(model_path).model, tmp_path / "r.tiktoken")
    assert "--pattern" in run_bad(str(tmp_path / "r.tiktoken"))
    (tmp_path / "curves.json").write_text("{}")
    assert "--curves" in run_bad(model_path, "--curves", str(tmp_path / "curves.json"))
    assert "--curves" in run_bad(model_path, "--curves", str(tmp_path / "none.json"))
    (tmp_path / "broken.py").write_text("def count_pairs(:\n")
    assert run_bad("--exercise", str(tmp_path / "broken.py")).startswith(
        "bytepair: error: --exercise: broken.py, line 1")


def test_a_port_in_use_is_refused(model_path):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        assert f"--port: cannot listen on 127.0.0.1:{port}" in run_bad(model_path, "--port", str(port))
    assert "from 0 to 65535" in run_bad(model_path, "--port", "70000")
    assert "--port" in run_bad(model_path, "--port", "-1")


def test_it_opens_the_browser_unless_told_not_to(model_path, monkeypatch, capsys):
    opened = []
    monkeypatch.setattr(webbrowser, "open", opened.append)

    def interrupted(self, *args):
        raise KeyboardInterrupt

    monkeypatch.setattr(TeachServer, "serve_forever", interrupted)
    assert main(["workbench", model_path]) == 0
    url = capsys.readouterr().out.split("serving on ", 1)[1].split()[0]
    assert opened == [url]
    assert main(["workbench", model_path, "--no-browser"]) == 0
    assert len(opened) == 1
