"""``bytepair workbench`` as a real process, against what a hostile page or client sends: every field
of every API with every wrong JSON type, curves that are not numbers, requests without the page's
marks, and malformed headers. Each is one line with a 4xx, never a 500 or a traceback."""

from __future__ import annotations

import http.client
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time

import pytest

import bytepair
from helpers import RIGHT_COUNT, RIGHT_MERGE

LEARNER = RIGHT_COUNT + RIGHT_MERGE


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
    encode = {"text": "low", "models": ["tok.json"], "start": 0, "limit": 500}
    for field in encode:
        yield "viewer/encode", encode, field
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


# -- item: hardening -------------------------------------------------------------------

def _raw(server, data: bytes, timeout=20) -> bytes:
    with socket.create_connection((server.host, server.port), timeout=timeout) as sock:
        sock.sendall(data)
        return sock.makefile("rb").read()


def test_a_post_must_be_json_with_or_without_an_origin(server):
    body = json.dumps({"corpus": "low lower", "merges": 1}).encode()
    for kind in (None, "text/plain", "application/x-www-form-urlencoded",
                 "multipart/form-data; boundary=x", "application/jsonx"):
        for extra in ({}, {"Sec-Fetch-Site": "same-origin"}, {"Sec-Fetch-Site": "cross-site"}):
            headers = dict(extra, **({"Content-Type": kind} if kind else {}))
            status, _, answer = server.request("POST", "/api/workbench/learner", body, headers)
            assert status == 415, (kind, extra, status)
            assert json.loads(answer)["error"] == ("a request must be sent as Content-Type: "
                                                   "application/json")
    assert server.post("/api/workbench/learner", {"corpus": "low lower", "merges": 1})[0] == 200
    status, _, _ = server.request("POST", "/api/viewer/info", b"{}",
                                  {"Content-Type": "application/json; charset=utf-8"})
    assert status == 200


def test_no_page_can_be_framed(server):
    for method, path, body, headers in [
            ("GET", "/", b"", {}), ("GET", "/viewer", b"", {}), ("GET", "/nothing", b"", {}),
            ("GET", "/static/viewer.js", b"", {}),
            ("POST", "/api/viewer/info", b"{}", {"Content-Type": "application/json"})]:
        status, answer_headers, _ = server.request(method, path, body, headers)
        assert answer_headers["X-Frame-Options"] == "DENY", path
        policy = answer_headers["Content-Security-Policy"]
        assert "frame-ancestors 'none'" in policy and "default-src 'self'" in policy, path
    # http.server's own refusals too (here: a header line too long).
    reply = _raw(server, b"GET /viewer HTTP/1.1\r\nX-Long: " + b"a" * 70000 + b"\r\n\r\n")
    assert reply.startswith(b"HTTP/1.1 431 ") and b"\r\nX-Frame-Options: DENY\r\n" in reply


@pytest.mark.parametrize("head, status", [
    ("GET /viewer HTTP/1.1\r\nHost: {own}\r\nHost: evil.example\r\n", 400),
    ("GET /viewer HTTP/1.1\r\nHost: {own}\r\nHost: {own}\r\n", 400),
    ("GET http://evil.example/viewer HTTP/1.1\r\nHost: {own}\r\n", 403),
    ("GET https://{own}/viewer HTTP/1.1\r\nHost: {own}\r\n", 400),
    ("GET * HTTP/1.1\r\nHost: {own}\r\n", 400),
    ("POST /api/viewer/info HTTP/1.1\r\nHost: {own}\r\nContent-Type: application/json\r\n"
     "Content-Length: +2\r\n", 400),
    ("POST /api/viewer/info HTTP/1.1\r\nHost: {own}\r\nContent-Type: application/json\r\n"
     "Content-Length: 0_2\r\n", 400),
    ("POST /api/viewer/info HTTP/1.1\r\nHost: {own}\r\nContent-Type: application/json\r\n"
     "Content-Length: \u0662\r\n", 400),
    ("POST /api/viewer/info HTTP/1.1\r\nHost: {own}\r\nContent-Type: application/json\r\n"
     "Content-Length: 2\r\nContent-Length: 7\r\n", 400),
    ("POST /api/viewer/info HTTP/1.1\r\nHost: {own}\r\nContent-Type: application/json\r\n"
     "Content-Length: 2\r\nTransfer-Encoding: identity\r\n", 411),
])
def test_malformed_headers_are_refused(server, head, status):
    own = f"127.0.0.1:{server.port}"
    reply = _raw(server, head.replace("{own}", own).encode() + b"\r\n{}")
    assert reply.startswith(f"HTTP/1.1 {status} ".encode()), reply[:200]
    assert reply.count(b"HTTP/1.1 ") == 1  # nothing after the refusal is read as a request
    # The same request, well formed, is answered.
    reply = _raw(server, f"GET http://{own}/viewer HTTP/1.1\r\nHost: {own}\r\n"
                         "Connection: close\r\n\r\n".encode())
    assert reply.startswith(b"HTTP/1.1 200 ")


def _trickle(port: int, stop: threading.Event, closed: list) -> None:
    """Send a request's headers one byte at a time, until the server closes the connection."""
    data = f"GET /viewer HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nX-Pad: {'a' * 500}\r\n".encode()
    started = time.monotonic()
    with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
        try:
            for byte in data:
                if stop.is_set():
                    return
                sock.sendall(bytes([byte]))
                time.sleep(0.05)
            sock.recv(1)
        except OSError:
            pass
        closed.append(time.monotonic() - started)


def test_a_client_that_trickles_is_cut_off_and_the_others_are_answered(teach_server):
    from bytepair.teach.server import TeachServer

    server = TeachServer(request_seconds=2, max_threads=3)
    server.start()
    port = server.server_address[1]
    stop, closed = threading.Event(), []
    tricklers = [threading.Thread(target=_trickle, args=(port, stop, closed)) for _ in range(3)]
    try:
        for thread in tricklers:
            thread.start()
        time.sleep(0.5)  # every thread is taken by a trickler
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        connection.request("GET", "/viewer")
        assert connection.getresponse().status == 503  # answered at once, not queued
        connection.close()
        for thread in tricklers:
            thread.join(10)
        # Each was cut off at its deadline (2 s), although it was still sending.
        assert len(closed) == 3 and all(1.5 < seconds < 5 for seconds in closed), closed
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        connection.request("GET", "/viewer")
        assert connection.getresponse().status == 200
        connection.close()
    finally:
        stop.set()
        server.stop()


# -- item: the viewer's memory and answers are bounded by what the page draws -------------

def _memory(pid: int) -> dict[str, int]:
    with open(f"/proc/{pid}/status") as handle:
        return {key: int(value.split()[0]) << 10 for key, _, value in
                (line.partition(":") for line in handle) if key in ("VmRSS", "VmHWM")}


@pytest.mark.skipif(not os.path.exists("/proc/self/status"), reason="reads /proc")
def test_a_long_text_costs_the_server_a_small_multiple_of_itself(tmp_path):
    english = "the pair that occurs most often is merged into a new token. " * 20
    names = []
    for k in range(4):  # byte-level models that never merge CJK: a token per byte
        path = tmp_path / f"m{k}.json"
        bytepair.Tokenizer(bytepair.train_bytes([english], 30 + k)).save(path)
        names.append(path.name)
    running = Server(*(str(tmp_path / name) for name in names))
    try:
        assert running.post("/api/viewer/encode", {"text": "warm 日本", "models": names})[0] == 200
        text = "".join(chr(0x4E00 + (i * 7919) % 3000) for i in range(200_000))  # 600 KB
        before = _memory(running.process.pid)
        status, answer = running.post("/api/viewer/encode", {"text": text, "models": names})
        after = _memory(running.process.pid)
        assert status == 200
        result = json.loads(answer)["results"][0]
        assert result["tokens"] == 600_000 and len(result["ids"]) <= 5000
        assert len(answer) < 100_000  # the window the page draws, not 2.4 million tokens
        size = len(text.encode())
        # Kept: the IDs (2 bytes a token a model), the boundaries and the text, about 12 times
        # the text's bytes; at the peak the encoder's scratch and the request's JSON (6 bytes a
        # character, escaped) too: about 33 times here. Before, it was about 780 times.
        assert after["VmHWM"] - before["VmRSS"] < 64 * size, (after, before, size)
    finally:
        running.stop()
