"""The real ASGI server in a process of its own, on a throwaway data folder: daphne, as
`.bin/run` serves the product (or uvicorn, as the tests do)."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from collections.abc import Mapping
from pathlib import Path

from measuring.benchmark.workdir import child_env, repo_root

SERVERS = ("daphne", "uvicorn")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


class AsgiServer:
    def __init__(
        self,
        folder: Path,
        *,
        kind: str = "daphne",
        env: Mapping[str, str] | None = None,
        log_name: str = "",
    ) -> None:
        """`env` adds to the throwaway folder's environment (the overload section's
        PostgreSQL and Redis); the output goes to `log_name` in the folder (the server's
        name by default)."""
        if kind not in SERVERS:
            raise ValueError(f"unknown server {kind!r}; choose one of {SERVERS}")
        self.folder = folder
        self.kind = kind
        self.port = free_port()
        self.process: subprocess.Popen[bytes] | None = None
        self.env = dict(env or {})
        self.log_name = log_name or f"{kind}.log"

    @property
    def ws_url(self) -> str:
        return f"ws://127.0.0.1:{self.port}"

    def __enter__(self) -> AsgiServer:
        app = "config.asgi:application"
        if self.kind == "daphne":
            args = ["-m", "daphne", "-b", "127.0.0.1", "-p", str(self.port), app]
        else:
            args = ["-m", "uvicorn", app, "--host", "127.0.0.1", "--port", str(self.port),
                    "--lifespan", "off", "--log-level", "warning"]  # fmt: skip
        log = (self.folder / self.log_name).open("wb")
        self.process = subprocess.Popen(  # noqa: S603 - our own interpreter and app
            [sys.executable, *args], cwd=repo_root(), env={**child_env(self.folder), **self.env},
            stdout=log, stderr=subprocess.STDOUT,
        )  # fmt: skip
        deadline = time.monotonic() + 60
        while True:
            if self.process.poll() is not None:
                raise RuntimeError(f"{self.kind} exited; see {self.folder / self.log_name}")
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                return self
            except OSError:
                if time.monotonic() > deadline:
                    self.__exit__()
                    raise RuntimeError(f"{self.kind} did not start listening within 60 s") from None
                time.sleep(0.1)

    def __exit__(self, *exc_info: object) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()

    @property
    def pid(self) -> int:
        assert self.process is not None
        return self.process.pid

    def rss_kb(self) -> int:
        """Resident memory of the server process (Linux /proc)."""
        assert self.process is not None
        for line in Path(f"/proc/{self.process.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
        raise RuntimeError("no VmRSS in /proc status")
