"""`evaluate --site`: a real documentation website, crawled and indexed through the product's
own Website connector and sync path, then asked the query file.

A folder is served by a real local HTTP server for the run (Python's, which answers
If-Modified-Since with 304, as most static hosts do). The crawl and the questions run in a
child process with a data folder of its own (see `benchmark/workdir.py`), kept between runs
under DATA_DIR/eval/sites/<key>: a second run re-syncs the unchanged site, which is itself
measured, instead of indexing it again. The key changes with the site, the embedder, the
chunk size and the extraction and chunking versions, so a run never reads pages that were
extracted by other code.
"""

from __future__ import annotations

import contextlib
import hashlib
import shutil
import threading
from collections.abc import Iterator
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from django.conf import settings

from assistant.rag.chunking.pieces import CHUNKING_VERSION
from ingestion.extraction import EXTRACTION_VERSION
from measuring.benchmark.workdir import run_child

#: A generous bound for a whole-site crawl and 200 questions on two cores.
CHILD_TIMEOUT_SECONDS = 4 * 3600


class _QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base's name
        return


class _Server(ThreadingHTTPServer):
    def handle_error(self, request: Any, client_address: Any) -> None:
        return  # a crawler that stops reading a file it does not want is not an error


@contextlib.contextmanager
def served(folder: Path, *, port: int = 0) -> Iterator[str]:
    """Serve `folder` on loopback, on `port` when it is free (else any free port); yields its
    base URL (ending in /)."""
    handler = partial(_QuietHandler, directory=str(folder))
    try:
        server = _Server(("127.0.0.1", port), handler)
    except OSError:
        server = _Server(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


@contextlib.contextmanager
def site_base(site: str, workdir: Path) -> Iterator[str]:
    """The base URL of `site`: a folder is served for the run, a URL is used as it is. A
    folder is served on the port it had last time, so the pages keep their URLs and the kept
    index is re-synced rather than replaced."""
    if site.startswith(("http://", "https://")):
        yield site if site.endswith("/") else site + "/"
        return
    folder = Path(site)
    if not folder.is_dir():
        raise FileNotFoundError(f"No such folder: {site}")
    remembered = workdir / "port"
    port = int(remembered.read_text()) if remembered.is_file() else 0
    with served(folder.resolve(), port=port) as base:
        remembered.write_text(base.rsplit(":", 1)[1].strip("/"))
        yield base


def workdir_for(site: str, *, start: str, embedder_id: str, fresh: bool) -> Path:
    """The data folder of one crawl: the site and start page (its folder is the crawl's
    scope), the embedder, the chunk size and the extraction and chunking versions."""
    identity = "\x1f".join([
        str(Path(site).resolve()) if not site.startswith("http") else site, start,
        embedder_id, str(settings.ASKDOCS_CHUNK_TOKENS), EXTRACTION_VERSION, CHUNKING_VERSION,
    ])  # fmt: skip
    key = hashlib.sha256(identity.encode()).hexdigest()[:16]
    folder = Path(settings.DATA_DIR) / "eval" / "sites" / key
    if fresh and folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def run_site(
    *, site: str, queries: Path, start: str, max_pages: int, options: dict[str, Any],
    embedder_id: str, fresh: bool,
) -> dict[str, Any]:  # fmt: skip
    """Crawl, index, measure and ask in a child process; its report."""
    if not site.startswith(("http://", "https://")) and not Path(site).is_dir():
        raise FileNotFoundError(f"No such folder: {site}")
    folder = workdir_for(site, start=start, embedder_id=embedder_id, fresh=fresh)
    with site_base(site, folder) as base:
        arguments = {
            "base": base, "start": start, "max_pages": max_pages,
            "queries": str(queries.resolve()), **options,
        }  # fmt: skip
        return run_child(
            folder, arguments, timeout=CHILD_TIMEOUT_SECONDS,
            module="measuring.evaluation.site_child", show_progress=True,
        )  # fmt: skip
