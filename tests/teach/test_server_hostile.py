"""``bytepair workbench`` as a real process, against what a hostile page or client sends: every field
of every API with every wrong JSON type, curves that are not numbers, requests without the page's
marks, and malformed headers. Each is one line with a 4xx, never a 500 or a traceback."""

from __future__ import annotations

import http.client
import json
import signal
import subprocess
import sys

import pytest

import bytepair

LEARNER = """
def count_pairs(words):
    counts = {}
    for word in words:
        for pair in zip(word, word[1:]):
            counts[pair] = counts.get(pair, 0) + 1
    return dict(sorted(counts.items(), key=lambda item: (-item[1], item[0])))

def merge(word, pair, new_token):
    out, i = [], 0
    while i < len(word):
        if word[i:i + 2] == list(pair):
            out.append(new_token); i += 2
        else:
            out.append(word[i]); i += 1
    return out
"""


class Server:
    """A ``bytepair workbench`` process; ``stop()`` returns what it wrote to stderr."""

    def __init__(self, *args):
        self.process = subprocess.Popen(
            [sys.executable, "-m", "bytepair", "workbench", "--no-browser", *args],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        line = self.process.stdout.readline()
        assert "serving on http://127.0.0.1:" in line, (line, self.process.stderr.read())
        self.host, port = line.split("http://")[1].split("/")[0].split(":")
        self.port = int(port)
        self.token = None

    def request(self, method, path, body=b"", headers=None, timeout=30):
        connection = http.client.HTTPConnection(self.host, self.port, timeout=timeout)
        try:
            connection.request(method, path, body=body, headers=headers or {})
            response = connection.getresponse()
            return response.status, dict(response.getheaders()), response.read()
        finally:
            connection.close()

    def post(self, path, payload, headers=None):
        body = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
        marks = {"Content-Type": "application/json"}
        if self.token is not None:
            marks["X-Bytepair-Token"] = self.token
        status, _, answer = self.request("POST", path, body, dict(marks, **(headers or {})))
        return status, answer

    def stop(self) -> str:
        self.process.send_signal(signal.SIGINT)
        _, err = self.process.communicate(timeout=20)
        return err


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    folder = tmp_path_factory.mktemp("hostile")
    model = folder / "tok.json"
    bytepair.train(["low lower lowest"] * 3, merges=6, pretokenize="gpt2",
                   progress=False).save(model)
    learner = folder / "mine.py"
    learner.write_text(LEARNER)
    return str(model), str(learner)


@pytest.fixture(scope="module")
def server(files):
    model, learner = files
    running = Server(model, "--exercise", learner)
    yield running
    err = running.stop()
    assert "Traceback" not in err, err


# -- item: every field of every API, every wrong type ----------------------------------

WRONG = [None, True, 1.5, -1, 10**30, "x", "", [], {}, [[]], ["a"], {"a": 1}]
WORKBENCH = {
    "parse": {"corpus": "low lower", "mode": "words", "end_of_word": True},
    "pairs": {"corpus": "low lower", "merges": 1},
    "apply": {"corpus": "low lower", "merges": 1},
    "run": {"corpus": "low lower", "merges": 0, "n": 2},
    "variant": {"corpus": "low lower", "merges": 1, "variant": "overlapping"},
    "learner": {"corpus": "low lower", "merges": 1},
}


def _fields():
    for action, payload in WORKBENCH.items():
        for field in payload:
            yield f"workbench/{action}", payload, field
    yield "viewer/encode", {"text": "low", "models": ["tok.json"]}, "text"
    yield "viewer/encode", {"text": "low", "models": ["tok.json"]}, "models"
    yield "viewer/tree", {"model": "tok.json", "id": 256}, "model"
    yield "viewer/tree", {"model": "tok.json", "id": 256}, "id"


@pytest.mark.parametrize("path, payload, field", list(_fields()))
def test_a_field_of_the_wrong_type_is_a_400_in_one_line(server, path, payload, field):
    assert server.post(f"/api/{path}", payload)[0] == 200
    for value in WRONG:
        status, answer = server.post(f"/api/{path}", dict(payload, **{field: value}))
        assert status in (200, 400), (field, value, status, answer)
        if status == 400:
            line = json.loads(answer)["error"]
            assert "\n" not in line and line, (field, value)
    for body in (b"[]", b'"x"', b"3", b"null"):
        status, answer = server.post(f"/api/{path}", body)
        assert status == 400 and "JSON object" in json.loads(answer)["error"]


def test_json_without_numbers_of_its_own_is_refused(server):
    for constant in (b"NaN", b"Infinity", b"-Infinity"):
        status, answer = server.post("/api/workbench/pairs",
                                     b'{"corpus": "low", "merges": ' + constant + b"}")
        assert status == 400 and b"not JSON" in answer, answer


# -- item: curves that are not numbers --------------------------------------------------

@pytest.mark.parametrize("value, shown", [("NaN", "NaN"), ("Infinity", "Infinity"),
                                          ('"nan"', '"nan"'), ("true", "true")])
def test_curves_that_are_not_numbers_are_refused_in_one_line(files, tmp_path, value, shown):
    curves = tmp_path / "curves.json"
    curves.write_text('{"rows": [{"model": "m", "sample": "en", "vocab_size": 256, '
                      '"bytes_per_token": 1.5}, {"model": "m", "sample": "en", "vocab_size": '
                      f'512, "bytes_per_token": {value}}}]}}')
    result = subprocess.run([sys.executable, "-m", "bytepair", "workbench", "--no-browser",
                             files[0], "--curves", str(curves)],
                            capture_output=True, text=True, timeout=30)
    assert result.returncode == 2 and result.stdout == "", result
    assert result.stderr == (f"bytepair: error: --curves: {str(curves)!r}: rows[1].bytes_per_token "
                             f"must be a finite number, got {shown}\n")


def test_the_server_never_answers_with_what_is_not_json(teach_server):
    curves = [{"model": "m", "sample": "en", "sizes": [256], "bytes_per_token": [float("nan")]}]
    server = teach_server(curves=curves)  # given by Python, past the command line's checks
    host, port = server.server_address[:2]
    connection = http.client.HTTPConnection(host, port, timeout=30)
    connection.request("POST", "/api/viewer/info", b"{}", {"Content-Type": "application/json"})
    response = connection.getresponse()
    body = response.read()
    connection.close()
    json.loads(body, parse_constant=lambda name: pytest.fail(f"{name} in {body!r}"))
    assert response.status == 500
