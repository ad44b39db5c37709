"""The teaching pages' local web server: the merge workbench and the tokenizer viewer.

A standard-library :class:`http.server.ThreadingHTTPServer` bound to
127.0.0.1 (one thread per connection, so a long request does not hold up the
others). Routes:

``GET /``, ``/workbench``, ``/viewer``
    the index and the two pages;
``GET /static/NAME``
    a file shipped in ``bytepair/teach/static/``. The files are listed and
    read into memory when the server is made: a request names an entry of
    that table, never a path, so no request can make the server read any
    other file (``..``, encoded slashes and absolute paths find no entry);
``POST /api/workbench/ACTION``
    :func:`bytepair.teach.workbench.handle` (imported at the first request);
``POST /api/viewer/ACTION``
    :meth:`bytepair.teach.viewer.Viewer.handle`.

Requests must name the server by its loopback address (one ``Host:
127.0.0.1:PORT`` or ``localhost:PORT``, and no request target naming another
host), and a ``POST`` from a page must come from the server's own origin (403
otherwise): a web page elsewhere cannot drive the server through a DNS name it
points at 127.0.0.1, nor post to it from another site. A ``POST`` must also say
``Content-Type: application/json`` (415 otherwise), which no other site's page
can send here without the server's consent (a CORS preflight it never grants),
with or without an ``Origin``. Request bodies are JSON objects of at most
:data:`MAX_BODY` bytes with one ``Content-Length`` of digits only (larger: 413;
malformed: 400). Every answer forbids framing (``X-Frame-Options: DENY`` and a
``Content-Security-Policy`` of ``frame-ancestors 'none'``; pages load only the
server's own files).

Each connection has a thread of its own, at most :data:`MAX_THREADS` at once (a
connection past that is answered 503 and closed), and each request must arrive
whole within :data:`REQUEST_SECONDS` of the connection's last answer: a client
that trickles its bytes is cut off there, and the others are answered meanwhile.

A refused request gets ``{"error": "one line"}`` with a 4xx status; an
unexpected failure gets a 500 with the exception's type only: the traceback
goes to the server's stderr, never to the client.
"""

from __future__ import annotations

import io
import json
import re
import socket
import sys
import threading
import time
import traceback
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import urlsplit

from bytepair.teach.viewer import Viewer, ViewerError

#: Where the pages' files are shipped.
STATIC = Path(__file__).resolve().parent / "static"
#: The largest request body accepted, in bytes.
MAX_BODY = 8 << 20
#: Seconds an idle connection is kept before its thread lets it go; also the most a slow
#: reader may take to receive an answer.
IDLE_TIMEOUT = 30
#: Seconds within which a request must arrive whole (request line, headers and body),
#: counted from the connection's start or its last answer.
REQUEST_SECONDS = 30
#: The most connections served at once (one thread each).
MAX_THREADS = 64
#: The headers every answer carries: no sniffing, no caching, no framing, nothing foreign.
SECURITY_HEADERS = {
    "Cache-Control": "no-store",
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Content-Security-Policy": "default-src 'self'; frame-ancestors 'none'; base-uri 'none'; "
                               "form-action 'self'",
}
#: The names a request may give the server by (with its port).
LOCAL_NAMES = ("127.0.0.1", "localhost")
#: Page routes -> static file.
PAGES = {"/": "index.html", "/workbench": "workbench.html", "/viewer": "viewer.html",
         "/favicon.ico": "favicon.svg"}
CONTENT_TYPES = {
    ".html": "text/html; charset=utf-8", ".js": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8", ".png": "image/png", ".svg": "image/svg+xml",
    ".json": "application/json", ".ico": "image/x-icon", ".txt": "text/plain; charset=utf-8",
}


def read_assets(folder: Path = STATIC) -> dict[str, tuple[bytes, str]]:
    """Every regular file directly in ``folder``: name -> (bytes, content type)."""
    assets = {}
    if folder.is_dir():
        for path in sorted(folder.iterdir()):
            if path.is_file() and not path.name.startswith("."):
                kind = CONTENT_TYPES.get(path.suffix.lower(), "application/octet-stream")
                assets[path.name] = (path.read_bytes(), kind)
    return assets


class RequestError(Exception):
    """A request refused with ``status`` and a one-line message."""

    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status


class TeachServer(ThreadingHTTPServer):
    """The server of both pages; ``url`` is where it listens.

    ``viewer`` answers the viewer's requests; ``learner`` (the functions of
    ``bytepair workbench --exercise``) is handed to the workbench's actions.
    """

    daemon_threads = True  # a connection left open by a closed tab never keeps the process alive
    allow_reuse_address = True

    def __init__(self, viewer: Viewer | None = None, *, port: int = 0, learner=None,
                 assets: dict | None = None, quiet: bool = True,
                 request_seconds: float = REQUEST_SECONDS, max_threads: int = MAX_THREADS):
        self.viewer = viewer if viewer is not None else Viewer({})
        self.learner = learner
        self.assets = read_assets() if assets is None else assets
        self.quiet = quiet
        self.request_seconds = request_seconds
        self._slots = threading.BoundedSemaphore(max_threads)
        super().__init__(("127.0.0.1", port), Handler)

    def process_request(self, request, client_address) -> None:
        if not self._slots.acquire(blocking=False):
            # Every thread is taken: say so at once rather than queue behind slow clients.
            try:
                request.sendall(_raw_answer(503, "the server is busy: try again"))
            except OSError:
                pass
            self.shutdown_request(request)
            return
        try:
            super().process_request(request, client_address)
        except BaseException:
            self._slots.release()
            raise

    def process_request_thread(self, request, client_address) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            self._slots.release()

    @property
    def url(self) -> str:
        host, port = self.server_address[:2]
        return f"http://{host}:{port}/"

    def start(self) -> threading.Thread:
        """Serve in a daemon thread (for tests and embedding); :meth:`stop` ends it."""
        # A short poll: stop() returns within it.
        thread = threading.Thread(target=self.serve_forever, args=(0.05,),
                                  name="bytepair-teach-server", daemon=True)
        thread.start()
        return thread

    def stop(self) -> None:
        self.shutdown()
        self.server_close()


class Handler(BaseHTTPRequestHandler):
    server: TeachServer
    protocol_version = "HTTP/1.1"
    timeout = IDLE_TIMEOUT
    server_version = "bytepair-teach"

    def log_message(self, format, *args) -> None:
        if not self.server.quiet:
            super().log_message(format, *args)

    def setup(self) -> None:
        super().setup()
        # Every read of a request is bounded by its deadline, not only each recv by a timeout.
        self.deadline = time.monotonic() + self.server.request_seconds
        self.rfile = io.BufferedReader(_DeadlineReader(self), 65536)

    def handle_one_request(self) -> None:
        self.deadline = time.monotonic() + self.server.request_seconds
        super().handle_one_request()

    # -- GET ---------------------------------------------------------------

    def do_GET(self) -> None:
        self._answer(self._get)

    def do_HEAD(self) -> None:
        self._answer(self._get, head=True)

    def _check_origin(self, post: bool) -> None:
        port = self.server.server_address[1]
        allowed = {f"{name}:{port}" for name in LOCAL_NAMES}
        hosts = self.headers.get_all("Host") or []
        if len(hosts) > 1:
            raise RequestError(400, "the request names its Host more than once")
        target = urlsplit(self.path)
        if not self.path.startswith("/"):  # absolute form: it names the host too
            if target.scheme.lower() != "http" or not target.netloc:
                raise RequestError(400, f"the request target {self.path[:60]!r} is not a path")
            hosts.append(target.netloc)
        for host in hosts:
            if host.lower() not in allowed:
                raise RequestError(403, f"this server answers only to 127.0.0.1:{port}, "
                                   f"not {host[:60]!r}")
        origin = self.headers.get("Origin")
        if post and origin is not None and origin.lower() not in {f"http://{a}" for a in allowed}:
            raise RequestError(403, f"requests from {origin!r} are refused")
        if post and self.headers.get_content_type() != "application/json":
            # A page of another site can post a form or text/plain without asking; not JSON.
            raise RequestError(415, "a request must be sent as Content-Type: application/json")

    def _get(self):
        self._check_origin(post=False)
        path = urlsplit(self.path).path
        if path in PAGES:
            return self._asset(PAGES[path])
        if path.startswith("/static/"):
            return self._asset(path[len("/static/"):])
        raise RequestError(404, f"no page at {path!r}")

    def _asset(self, name: str):
        # Only a name of the table made at start-up; the path is never opened.
        asset = self.server.assets.get(name)
        if asset is None:
            raise RequestError(404, "no such file")
        return asset

    # -- POST --------------------------------------------------------------

    def do_POST(self) -> None:
        self._answer(self._post)

    def _post(self):
        self._check_origin(post=True)
        path = urlsplit(self.path).path
        parts = path.split("/")
        if len(parts) != 4 or parts[:2] != ["", "api"] or not parts[3]:
            raise RequestError(404, f"no API at {path!r}")
        page, action = parts[2], parts[3]
        payload = self._json_body()
        if page == "viewer":
            try:
                answer = self.server.viewer.handle(action, payload)
            except ViewerError as exc:
                raise RequestError(400, str(exc)) from None
            except KeyError:
                raise RequestError(404, f"the viewer has no action {action!r}") from None
        elif page == "workbench":
            answer = self._workbench(action, payload)
        else:
            raise RequestError(404, f"no API at {path!r}")
        # Never NaN or Infinity, which are not JSON: a page could not read the answer.
        return json.dumps(answer, ensure_ascii=False, separators=(",", ":"),
                          allow_nan=False).encode(), "application/json"

    def _workbench(self, action: str, payload):
        from bytepair.teach import workbench  # the workbench's code loads at its first request

        try:
            if self.server.learner is not None:
                return workbench.handle(action, payload, learner=self.server.learner)
            return workbench.handle(action, payload)
        except workbench.WorkbenchError as exc:
            raise RequestError(400, str(exc)) from None

    def _json_body(self):
        lengths = self.headers.get_all("Content-Length") or []
        if self.headers.get("Transfer-Encoding") is not None or not lengths:
            raise RequestError(411, "the request needs a Content-Length (and no "
                               "Transfer-Encoding)")
        if len(set(lengths)) > 1:
            raise RequestError(400, "the request gives Content-Lengths that disagree")
        if not _DIGITS.fullmatch(lengths[0]):  # int() would take '+15', '1_5', ' 15' and '١٥'
            raise RequestError(400, f"Content-Length is not a number: {lengths[0][:20]!r}")
        size = int(lengths[0])
        if size > MAX_BODY:  # refused before its body is read
            raise RequestError(413, f"the request is {size:,} bytes, more than the limit of "
                               f"{MAX_BODY:,}")
        try:
            body = self.rfile.read(size)
        except TimeoutError:
            raise RequestError(408, f"the request did not arrive within "
                               f"{self.server.request_seconds:g} s") from None
        if len(body) < size:
            raise RequestError(400, "the request body ended early")
        try:
            return json.loads(body.decode("utf-8"), parse_constant=_no_constant) if body else {}
        except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
            raise RequestError(400, f"the request is not JSON: {exc}") from None
        except ValueError as exc:  # an integer too long to read
            raise RequestError(400, f"the request is not JSON: {exc}") from None

    # -- answers -----------------------------------------------------------

    def _answer(self, work, head: bool = False) -> None:
        try:
            body, kind = work()
            status = 200
        except RequestError as exc:
            status, body, kind = exc.status, _error(str(exc)), "application/json"
            # A refused request's body may be unread: it must not be taken for the next request.
            self.close_connection = True
        except Exception as exc:  # never a traceback to the client
            traceback.print_exc(file=sys.stderr)
            status, body, kind = 500, _error(f"internal error ({type(exc).__name__})"), \
                "application/json"
        try:
            self.send_response(status)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            for name, value in SECURITY_HEADERS.items():
                self.send_header(name, value)
            if self.close_connection:
                self.send_header("Connection", "close")
            self.end_headers()
            if not head:
                self.wfile.write(body)
        except (BrokenPipeError, ConnectionResetError, TimeoutError):  # the tab went away
            self.close_connection = True

    def send_error(self, code, message=None, explain=None) -> None:
        # http.server's own refusals (a malformed request line, a header too long) as JSON too.
        self.close_connection = True
        body = _error(message or HTTPStatus(code).phrase)
        try:
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            for name, value in SECURITY_HEADERS.items():
                self.send_header(name, value)
            self.send_header("Connection", "close")
            self.end_headers()
            if self.command != "HEAD" and code >= 200 and code not in (204, 304):
                self.wfile.write(body)
        except OSError:
            pass


_DIGITS = re.compile(r"[0-9]{1,16}")


class _DeadlineReader(io.RawIOBase):
    """The connection's socket, read until the handler's ``deadline`` at most: each read waits
    only for the time left, so a client cannot hold a thread by sending a byte at a time."""

    def __init__(self, handler: Handler):
        self.handler = handler

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        left = self.handler.deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError("the request did not arrive in time")
        sock: socket.socket = self.handler.connection
        sock.settimeout(min(left, IDLE_TIMEOUT))
        try:
            return sock.recv_into(buffer)
        finally:
            sock.settimeout(IDLE_TIMEOUT)  # writing the answer: bounded by the idle timeout


def _raw_answer(status: int, message: str) -> bytes:
    """A whole HTTP answer, for when no handler runs."""
    body = _error(message)
    head = (f"HTTP/1.1 {status} {HTTPStatus(status).phrase}\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\nConnection: close\r\n")
    head += "".join(f"{name}: {value}\r\n" for name, value in SECURITY_HEADERS.items())
    return head.encode() + b"\r\n" + body


def _no_constant(name: str):
    raise ValueError(f"{name} is not a JSON number")


def _error(message: str) -> bytes:
    return json.dumps({"error": message}, ensure_ascii=False).encode()
