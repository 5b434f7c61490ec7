"""Real servers for tests, on free loopback ports: a free port, a Chroma server, stopping."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def start_chroma(
    data_dir: Path, *, timeout: float = 90, port: int | None = None
) -> tuple[subprocess.Popen[bytes], str]:
    """`chroma run` (the CLI of the chromadb package) on a free port (or `port`: a restart);
    returns it and its URL once its heartbeat answers. Its log is data_dir/chroma.log."""
    chroma = Path(sys.executable).parent / "chroma"
    if not chroma.exists():
        raise AssertionError(f"The `chroma` CLI (from the chromadb package) is missing at {chroma}")
    port = port or free_port()
    url = f"http://127.0.0.1:{port}"
    log_path = data_dir / "chroma.log"
    with log_path.open("wb") as log:
        server = subprocess.Popen(
            [str(chroma), "run", "--path", str(data_dir / "chroma-server"),
             "--host", "127.0.0.1", "--port", str(port)],
            stdout=log, stderr=subprocess.STDOUT,
        )  # fmt: skip
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and server.poll() is None:
        try:
            if httpx.get(f"{url}/api/v2/heartbeat", timeout=1).status_code == 200:
                return server, url
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    stop(server)
    raise AssertionError(
        f"chroma run did not start:\n{log_path.read_text(errors='replace')[-2000:]}"
    )


def stop(process: subprocess.Popen[bytes], *, timeout: float = 20) -> None:
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
