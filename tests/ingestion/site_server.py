"""A small website on 127.0.0.1 served from a folder, with redirects, error statuses and an
optional delay per page: the crawler's outside world."""

from __future__ import annotations

import hashlib
import shutil
import socket
import threading
import time
from collections.abc import Callable, Iterator
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

FIXTURE = Path(__file__).parent / "site"


class Site:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.redirects: dict[str, str] = {"/docs/billing-old.html": "/docs/billing.html"}
        self.statuses: dict[str, int] = {"/docs/broken.html": 500}
        self.delay = 0.0
        self.requests: list[str] = []
        #: Answer with an ETag (a hash of the file) and honour If-None-Match with a 304.
        self.etags = False
        #: (path, status) of every answer to a conditional request.
        self.conditional: list[tuple[str, int]] = []
        #: Paths asked with If-Modified-Since (the server answers them as Python's does).
        self.conditional_since: list[str] = []
        # Paths whose answer waits until `released` is set: a crawl paused at a known point.
        self.held: set[str] = set()
        self.released = threading.Event()
        #: Paths answered from a generator (a 100 MB robots.txt, a page sent a byte at a
        #: time): path -> (content type, generator factory); `sent` counts the bytes that
        #: went out before the client hung up.
        self.streams: dict[str, tuple[str, Callable[[], Iterator[bytes]]]] = {}
        self.sent: dict[str, int] = {}
        site = self

        class Handler(SimpleHTTPRequestHandler):
            def __init__(self, *args, **kwargs) -> None:  # noqa: ANN002, ANN003
                super().__init__(*args, directory=str(site.root), **kwargs)

            def do_GET(self) -> None:  # noqa: N802
                path = self.path.split("?")[0]
                site.requests.append(path)
                if site.delay and path.endswith(".html"):
                    time.sleep(site.delay)
                if path in site.held:
                    site.released.wait(timeout=120)
                if path in site.streams:
                    self._stream(path, *site.streams[path])
                    return
                if path in site.redirects:
                    self.send_response(301)
                    self.send_header("Location", site.redirects[path])
                    self.end_headers()
                    return
                if path in site.statuses:
                    self.send_error(site.statuses[path])
                    return
                if site.etags and not path.endswith(".xml") and (site.root / path[1:]).exists():
                    self._answer_with_etag(path)
                    return
                if path.endswith("sitemap.xml"):
                    body = (site.root / path.lstrip("/")).read_text()
                    data = body.replace("{base}", site.url).encode()
                    self.send_response(200)
                    self.send_header("Content-Type", "application/xml")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                    return
                super().do_GET()

            def _stream(self, path: str, kind: str, parts: Callable[[], Iterator[bytes]]) -> None:
                self.send_response(200)
                self.send_header("Content-Type", kind)
                self.send_header("Connection", "close")
                self.end_headers()
                site.sent[path] = 0
                try:
                    for part in parts():
                        self.wfile.write(part)
                        self.wfile.flush()
                        site.sent[path] += len(part)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client stopped reading
                self.close_connection = True

            def _answer_with_etag(self, path: str) -> None:
                file = site.root / path.lstrip("/")
                file = file / "index.html" if file.is_dir() else file
                data = file.read_bytes()
                etag = '"' + hashlib.sha256(data).hexdigest()[:16] + '"'
                asked = self.headers.get("If-None-Match")
                if asked is not None:
                    site.conditional.append((path, 304 if asked == etag else 200))
                if asked == etag:
                    self.send_response(304)
                    self.send_header("ETag", etag)
                    self.end_headers()
                    return
                self.send_response(200)
                self.send_header("Content-Type", self.guess_type(str(file)))
                self.send_header("Content-Length", str(len(data)))
                self.send_header("ETag", etag)
                self.end_headers()
                self.wfile.write(data)

            def send_head(self):  # noqa: ANN202 - SimpleHTTPRequestHandler's own
                if self.headers.get("If-Modified-Since"):
                    site.conditional_since.append(self.path.split("?")[0])
                return super().send_head()

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @classmethod
    def copy_of_fixture(cls, folder: Path) -> Site:
        root = folder / "site"
        shutil.copytree(FIXTURE, root)
        return cls(root)

    def write(self, path: str, html: str) -> None:
        (self.root / path.lstrip("/")).write_text(html)

    def remove(self, path: str) -> None:
        (self.root / path.lstrip("/")).unlink()

    def start(self) -> Site:
        self.thread.start()
        return self

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def page(title: str, body: str) -> str:
    head = f"<!doctype html><html><head><title>{title}</title></head>"
    return f"{head}<body><main><h1>{title}</h1>{body}</main></body></html>"


def trickle(data: bytes, every: float) -> Callable[[], Iterator[bytes]]:
    """A body sent one byte every `every` seconds."""

    def parts() -> Iterator[bytes]:
        for byte in data:
            time.sleep(every)
            yield bytes([byte])

    return parts


class Listener:
    """A listening socket that must stay untouched: an internal service (a database port,
    a metadata endpoint) the crawler or a webhook must never connect to."""

    def __init__(self, host: str = "127.0.0.2") -> None:
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        self.socket = socket.socket(family, socket.SOCK_STREAM)
        self.socket.bind((host, 0))
        self.socket.listen(8)
        self.socket.setblocking(False)
        self.port = self.socket.getsockname()[1]
        self.url = f"http://{host if family == socket.AF_INET else f'[{host}]'}:{self.port}"

    def touched(self) -> bool:
        try:
            connection, _ = self.socket.accept()
        except BlockingIOError:
            return False
        connection.close()
        return True

    def close(self) -> None:
        self.socket.close()
