"""The teaching server: routes, limits, errors without tracebacks, no file but its own, threads."""

from __future__ import annotations

import builtins
import http.client
import io
import json
import os
import socket
import sys
import threading
import time
import types
from pathlib import Path

import pytest

import bytepair
import bytepair.teach
from bytepair.teach import server as server_module
from bytepair.teach.server import MAX_BODY, STATIC, read_assets

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def tok():
    return bytepair.train(["low lower lowest"] * 3, merges=6, pretokenize="gpt2", progress=False)


def request(server, method, path, body=None, headers=None):
    host, port = server.server_address[:2]
    connection = http.client.HTTPConnection(host, port, timeout=10)
    headers = dict(headers or {})
    if method == "POST":
        headers.setdefault("Content-Type", "application/json")  # as the pages send it
    try:
        connection.request(method, path, body=body, headers=headers)
        response = connection.getresponse()
        return response.status, response.getheader("Content-Type"), response.read()
    finally:
        connection.close()


def post(server, path, payload):
    status, kind, body = request(server, "POST", path, json.dumps(payload).encode())
    return status, json.loads(body)


def test_pages_and_assets(teach_server):
    server = teach_server()
    for path, name in [("/", "index.html"), ("/viewer", "viewer.html"),
                       ("/static/viewer.js", "viewer.js"), ("/static/style.css", "style.css")]:
        status, kind, body = request(server, "GET", path)
        assert status == 200 and body == (STATIC / name).read_bytes(), path
    assert request(server, "GET", "/static/viewer.js")[1].startswith("text/javascript")
    assert request(server, "HEAD", "/viewer")[2] == b""
    # Every page links only to assets the server has: nothing from a network.
    for name in ("index.html", "viewer.html"):
        html = (STATIC / name).read_text()
        assert "http://" not in html and "https://" not in html and "//cdn" not in html


def test_the_package_ships_its_assets():
    # The installed package serves what the source tree has (CI runs the tests on an install).
    assets = read_assets()
    for name in ("index.html", "style.css", "viewer.html", "viewer.js", "viewer.css"):
        assert name in assets
    pyproject = (ROOT / "pyproject.toml").read_text()
    package_data = pyproject.split("[tool.setuptools.package-data]", 1)[1].split("\n[", 1)[0]
    assert '"teach/static/*"' in package_data


TRAVERSALS = [
    "/static/../server.py", "/static/..%2fserver.py", "/static/%2e%2e%2fserver.py",
    "/static/..%2F..%2F..%2Fpyproject.toml", "/static//etc/passwd", "/static/%2Fetc%2Fpasswd",
    "/static/..\\server.py", "/static/./viewer.js", "/static/", "/static/viewer.js/",
    "/static/VIEWER.JS", "/../../etc/passwd", "/etc/passwd", "//etc/passwd", "/static/%00",
    "/server.py", "/static/__init__.py", "/static/.", "/static/..", "/workbench/../server.py",
    "/static/viewer.js%00.html", "http://127.0.0.1/../etc/passwd",
]


@pytest.mark.parametrize("path", TRAVERSALS)
def test_requests_cannot_read_other_files(teach_server, monkeypatch, path):
    server = teach_server()
    opened = []
    real_open, real_io_open = builtins.open, io.open

    def spy(file, *args, **kwargs):
        opened.append(file)
        return real_open(file, *args, **kwargs)

    def io_spy(file, *args, **kwargs):
        opened.append(file)
        return real_io_open(file, *args, **kwargs)

    monkeypatch.setattr(builtins, "open", spy)
    monkeypatch.setattr(io, "open", io_spy)
    monkeypatch.setattr(os, "open", lambda *a, **k: opened.append(a[0]) or pytest.fail(a))
    status, kind, body = request(server, "GET", path)
    monkeypatch.undo()
    assert status in (403, 404), (path, status)  # an absolute URI names another host: 403
    assert json.loads(body) == {"error": json.loads(body)["error"]}
    assert b"server.py" not in body or b"no page" in body
    assert opened == []


def test_assets_are_read_once_at_start(tmp_path):
    # The table is the whole of what GET can return: a file added later is not served.
    (tmp_path / "a.html").write_text("<p>a</p>")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "b.html").write_text("b")
    assets = read_assets(tmp_path)
    (tmp_path / "c.html").write_text("c")
    assert sorted(assets) == ["a.html"]
    srv = server_module.TeachServer(assets=assets)
    srv.start()
    try:
        assert request(srv, "GET", "/static/a.html")[0] == 200
        assert request(srv, "GET", "/static/c.html")[0] == 404
        assert request(srv, "GET", "/static/sub/b.html")[0] == 404
        assert request(srv, "GET", "/viewer")[0] == 404  # not in this table
    finally:
        srv.stop()


def test_only_local_names_and_its_own_origin(teach_server, tok):
    server = teach_server({"m": tok})
    port = server.server_address[1]
    body = json.dumps({"text": "low", "models": ["m"]}).encode()
    for host in (f"127.0.0.1:{port}", f"localhost:{port}", f"LOCALHOST:{port}"):
        assert request(server, "GET", "/viewer", headers={"Host": host})[0] == 200
    for host in (f"evil.example:{port}", "127.0.0.1", f"127.0.0.1:{port + 1}"):
        status, kind, answer = request(server, "GET", "/viewer", headers={"Host": host})
        assert status == 403 and "answers only to 127.0.0.1" in json.loads(answer)["error"]
    own = {"Origin": f"http://127.0.0.1:{port}"}
    assert request(server, "POST", "/api/viewer/encode", body, own)[0] == 200
    status, kind, answer = request(server, "POST", "/api/viewer/encode", body,
                                   {"Origin": "https://evil.example"})
    assert status == 403 and "refused" in json.loads(answer)["error"]


def test_viewer_api(teach_server, tok):
    server = teach_server({"m": tok})
    status, answer = post(server, "/api/viewer/encode", {"text": "lowest low", "models": ["m"]})
    assert status == 200 and answer["results"][0]["ids"] == tok.encode("lowest low")
    status, answer = post(server, "/api/viewer/tree", {"model": "m", "id": 256})
    assert status == 200 and answer["tree"]["rank"] == 0
    status, answer = post(server, "/api/viewer/encode", {"text": 5, "models": ["m"]})
    assert status == 400 and answer == {"error": "text: expected a string"}
    assert post(server, "/api/viewer/nope", {})[0] == 404
    assert post(server, "/api/elsewhere/encode", {})[0] == 404
    assert post(server, "/api/viewer", {})[0] == 404
    assert request(server, "POST", "/viewer", b"{}")[0] == 404


@pytest.mark.parametrize("body, status, message", [
    (b"{", 400, "not JSON"),
    (b"\xff\xfe", 400, "not JSON"),
    (b"[" * 100_000 + b"]" * 100_000, 400, "not JSON"),
    (b"1" * 5000, 400, "not JSON"),
    (b"[1, 2]", 400, "JSON object"),
    (b"null", 400, "JSON object"),
])
def test_malformed_requests(teach_server, tok, body, status, message):
    server = teach_server({"m": tok})
    got, kind, answer = request(server, "POST", "/api/viewer/encode", body)
    assert got == status and kind == "application/json"
    assert message in json.loads(answer)["error"]
    assert b"Traceback" not in answer


def test_size_limit(teach_server, tok):
    server = teach_server({"m": tok})
    host, port = server.server_address[:2]
    with socket.create_connection((host, port), timeout=10) as sock:
        # Only the headers are sent: the refusal must not wait for a body it will not read.
        sock.sendall(f"POST /api/viewer/encode HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
                     f"Content-Type: application/json\r\nContent-Length: {MAX_BODY + 1}\r\n"
                     "\r\n".encode())
        reply = sock.makefile("rb").read()
    assert reply.startswith(b"HTTP/1.1 413") and b"more than the limit" in reply
    status, kind, body = request(server, "POST", "/api/viewer/encode", b"{}",
                                 {"Content-Length": "-3"})
    assert status == 400
    with socket.create_connection((host, port), timeout=10) as sock:
        sock.sendall(f"POST /api/viewer/encode HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
                     "Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n".encode())
        assert sock.makefile("rb").readline().startswith(b"HTTP/1.1 411")
    with socket.create_connection((host, port), timeout=10) as sock:
        sock.sendall(b"GARBAGE\r\n\r\n")
        reply = sock.makefile("rb").read()
    # A request line that is not HTTP/1.x is answered as HTTP/0.9: a body, no status line.
    assert json.loads(reply)["error"].startswith("Bad request syntax") and b"Traceback" not in reply


def test_failures_are_one_line_not_a_traceback(teach_server, tok, monkeypatch, capsys):
    server = teach_server({"m": tok})

    def broken(action, payload):
        raise RuntimeError("secret detail /home/someone/file.py")

    monkeypatch.setattr(server.viewer, "handle", broken)
    status, kind, body = request(server, "POST", "/api/viewer/encode", b"{}")
    assert status == 500 and json.loads(body) == {"error": "internal error (RuntimeError)"}
    assert "Traceback" in capsys.readouterr().err  # for the person running the server


def fake_workbench(monkeypatch, handle):
    module = types.ModuleType("bytepair.teach.workbench")

    class WorkbenchError(ValueError):
        pass

    module.WorkbenchError = WorkbenchError
    module.handle = lambda action, payload, **kw: handle(module, action, payload, **kw)
    monkeypatch.setitem(sys.modules, "bytepair.teach.workbench", module)
    monkeypatch.setattr(bytepair.teach, "workbench", module, raising=False)
    return module


def test_workbench_api_is_routed(teach_server, monkeypatch):
    def handle(module, action, payload, **kw):
        if action == "bad":
            raise module.WorkbenchError("corpus: empty")
        return {"action": action, "payload": payload, "learner": kw.get("learner")}

    fake_workbench(monkeypatch, handle)
    server = teach_server()
    assert post(server, "/api/workbench/merge", {"n": 1}) == (
        200, {"action": "merge", "payload": {"n": 1}, "learner": None})
    assert post(server, "/api/workbench/bad", {}) == (400, {"error": "corpus: empty"})
    with_learner = teach_server(learner="learner's functions")
    assert post(with_learner, "/api/workbench/x", {})[1]["learner"] == "learner's functions"


def test_it_answers_while_a_long_request_runs(teach_server, tok, monkeypatch):
    """Threads: one request held in its handler and one sending its body slowly do not stop
    another from being answered."""
    release, entered = threading.Event(), threading.Event()

    def handle(module, action, payload, **kw):
        entered.set()
        assert release.wait(20)
        return {"done": True}

    fake_workbench(monkeypatch, handle)
    server = teach_server({"m": tok})
    long = {}
    worker = threading.Thread(target=lambda: long.update(answer=post(server, "/api/workbench/run", {})))
    worker.start()
    host, port = server.server_address[:2]
    try:
        assert entered.wait(10)
        with socket.create_connection((host, port), timeout=10) as slow:
            slow.sendall(f"POST /api/viewer/encode HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
                         "Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{".encode())
            started = time.monotonic()
            assert post(server, "/api/viewer/encode", {"text": "low", "models": ["m"]})[0] == 200
            assert request(server, "GET", "/viewer")[0] == 200
            assert time.monotonic() - started < 5
        assert "answer" not in long
    finally:
        release.set()
        worker.join(20)
    assert long["answer"] == (200, {"done": True})


def test_a_refused_body_is_not_read_as_the_next_request(teach_server, tok):
    server = teach_server({"m": tok})
    host, port = server.server_address[:2]
    smuggled = f"GET /viewer HTTP/1.1\r\nHost: {host}:{port}\r\n\r\n"
    with socket.create_connection((host, port), timeout=10) as sock:
        sock.sendall(f"POST /api/viewer/encode HTTP/1.1\r\nHost: {host}:{port}\r\n"
                     f"Origin: https://evil.example\r\nContent-Length: {len(smuggled)}\r\n\r\n"
                     f"{smuggled}".encode())
        reply = sock.makefile("rb").read()
    assert reply.startswith(b"HTTP/1.1 403") and reply.count(b"HTTP/1.1") == 1


def test_at_start_it_reads_only_its_assets(tok, monkeypatch):
    opened = []
    real_open = io.open

    def spy(file, *args, **kwargs):
        opened.append(Path(file).resolve())
        return real_open(file, *args, **kwargs)

    monkeypatch.setattr(builtins, "open", spy)
    monkeypatch.setattr(io, "open", spy)
    srv = server_module.TeachServer(server_module.Viewer({"m": tok}))
    monkeypatch.undo()
    srv.server_close()
    assert opened and all(path.parent == STATIC for path in opened)
