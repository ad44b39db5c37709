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

Requests must name the server by its loopback address (``Host: 127.0.0.1:PORT``
or ``localhost:PORT``), and a ``POST`` from a page must come from the server's
own origin (403 otherwise): a web page elsewhere cannot drive the server
through a DNS name it points at 127.0.0.1, nor post to it from another site.
Request bodies are JSON objects of at most :data:`MAX_BODY` bytes (larger:
413; malformed: 400). A refused request gets ``{"error": "one line"}`` with
a 4xx status; an unexpected failure gets a 500 with the exception's type
only: the traceback goes to the server's stderr, never to the client.
"""

from __future__ import annotations

import json
import sys
import threading
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
#: Seconds an idle connection is kept before its thread lets it go.
IDLE_TIMEOUT = 30
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
                 assets: dict | None = None, quiet: bool = True):
        self.viewer = viewer if viewer is not None else Viewer({})
        self.learner = learner
        self.assets = read_assets() if assets is None else assets
        self.quiet = quiet
        super().__init__(("127.0.0.1", port), Handler)

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

    # -- GET ---------------------------------------------------------------

    def do_GET(self) -> None:
        self._answer(self._get)

    def do_HEAD(self) -> None:
        self._answer(self._get, head=True)

    def _check_origin(self, post: bool) -> None:
        port = self.server.server_address[1]
        allowed = {f"{name}:{port}" for name in LOCAL_NAMES}
        host = self.headers.get("Host")
        if host is not None and host.lower() not in allowed:
            raise RequestError(403, f"this server answers only to 127.0.0.1:{port}, not {host!r}")
        origin = self.headers.get("Origin")
        if post and origin is not None and origin.lower() not in {f"http://{a}" for a in allowed}:
            raise RequestError(403, f"requests from {origin!r} are refused")

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
        length = self.headers.get("Content-Length")
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked" or length is None:
            raise RequestError(411, "the request needs a Content-Length")
        try:
            size = int(length)
        except ValueError:
            raise RequestError(400, "Content-Length is not a number") from None
        if size < 0:
            raise RequestError(400, "Content-Length is negative")
        if size > MAX_BODY:  # refused before its body is read
            raise RequestError(413, f"the request is {size:,} bytes, more than the limit of "
                               f"{MAX_BODY:,}")
        body = self.rfile.read(size)
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
            self.send_header("Cache-Control", "no-store")
            self.send_header("X-Content-Type-Options", "nosniff")
            if self.close_connection:
                self.send_header("Connection", "close")
            self.end_headers()
            if not head:
                self.wfile.write(body)
        except (BrokenPipeError, ConnectionResetError):  # the tab went away
            self.close_connection = True

    def send_error(self, code, message=None, explain=None) -> None:
        # http.server's own refusals (a malformed request line, a header too long) as JSON too.
        self.close_connection = True
        body = _error(message or HTTPStatus(code).phrase)
        try:
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Connection", "close")
            self.end_headers()
            if self.command != "HEAD" and code >= 200 and code not in (204, 304):
                self.wfile.write(body)
        except OSError:
            pass


def _no_constant(name: str):
    raise ValueError(f"{name} is not a JSON number")


def _error(message: str) -> bytes:
    return json.dumps({"error": message}, ensure_ascii=False).encode()
