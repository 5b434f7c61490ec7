"""A sync killed mid-run (SIGKILL, as when a worker dies) and run again ends in the same state
as one that was never interrupted: no duplicate chunks, no orphan vectors, no rows without
vectors. Each sync runs in its own process, as `manage.py sync_source`."""

from __future__ import annotations

import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from tests.ingestion.processes import REPO, drive, environment, manage
from tests.ingestion.site_server import Site, page

PAGES = 24


def many_pages(site: Site) -> None:
    # The crawl is the index and its links: no sitemap adds the fixture's other pages.
    site.write("robots.txt", "User-agent: *\nDisallow: /docs/private/\n")
    links = "".join(f'<li><a href="topic-{i}.html">Topic {i}</a></li>' for i in range(PAGES))
    site.write(
        "docs/index.html",
        page("Handbook", f"<p>All the topics of the handbook.</p><ul>{links}</ul>"),
    )
    for i in range(PAGES):
        site.write(
            f"docs/topic-{i}.html",
            page(
                f"Topic {i}",
                f"<p>Topic {i} explains how procedure number {i} works, step by step, "
                f"for the team that owns area {i}.</p>",
            ),
        )


def progress(db: Path) -> tuple[str, int] | None:
    try:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5) as connection:
            row = connection.execute(
                "SELECT status, done FROM ingestion_syncrun ORDER BY id DESC"
            ).fetchone()
    except sqlite3.OperationalError:
        return None
    return row


def test_a_killed_sync_rerun_ends_like_an_uninterrupted_one(tmp_path: Path) -> None:
    site = Site.copy_of_fixture(tmp_path)
    many_pages(site)
    site.delay = 0.05
    site.start()
    try:
        # Reference: one uninterrupted sync in a data folder of its own.
        reference = environment(tmp_path / "reference")
        manage(reference, "migrate", "-v0")
        source_id = drive(reference, "setup", f"{site.url}/docs/index.html")["source_id"]
        manage(reference, "sync_source", str(source_id))
        expected = drive(reference, "state")

        # The crawl of the second run pauses at the last page, so the kill lands mid-sync
        # however slow or fast the machine is.
        held = f"/docs/topic-{PAGES - 1}.html"
        site.held.add(held)
        env = environment(tmp_path / "interrupted")
        manage(env, "migrate", "-v0")
        assert drive(env, "setup", f"{site.url}/docs/index.html")["source_id"] == source_id
        worker = subprocess.Popen(
            [sys.executable, "manage.py", "sync_source", str(source_id)],
            cwd=REPO,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 240
        while time.monotonic() < deadline and worker.poll() is None:
            row = progress(tmp_path / "interrupted" / "db.sqlite3")
            if row and row[1] >= 16 and held in site.requests:  # a batch written, crawl paused
                break
            time.sleep(0.05)
        assert worker.poll() is None, "the sync finished before it could be interrupted"
        worker.send_signal(signal.SIGKILL)
        worker.wait()
        site.released.set()
        killed = drive(env, "state")
        assert killed["runs"][0]["status"] == "running"
        assert 0 < len(killed["documents"]) < PAGES + 1

        manage(env, "sync_source", str(source_id))
        after = drive(env, "state")
        assert [r["status"] for r in after["runs"]] == ["interrupted", "succeeded"]
        assert after["row_ids"] == after["store_ids"] == expected["row_ids"]
        assert after["row_positions"] == len(after["row_ids"])  # no duplicate chunks
        assert after["documents"] == expected["documents"]
        assert len(after["documents"]) == PAGES + 1
        assert after["unfinished_documents"] == 0
        assert '"vectors_without_rows": []' in manage(env, "check_index", "--json")
    finally:
        site.released.set()
        site.stop()
