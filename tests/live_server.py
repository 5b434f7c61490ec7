"""The real ASGI application (HTTP + WebSockets) served by uvicorn in a thread of the test
process, so it shares the test database and settings."""

from __future__ import annotations

import threading
import time

import uvicorn

from tests.servers import free_port


class LiveAsgiServer:
    def __init__(self) -> None:
        from config.asgi import application

        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        config = uvicorn.Config(
            application, host="127.0.0.1", port=self.port, lifespan="off", log_level="warning"
        )
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._server.run, daemon=True)

    def __enter__(self) -> LiveAsgiServer:
        self._thread.start()
        deadline = time.monotonic() + 30
        while not self._server.started:
            if time.monotonic() > deadline or not self._thread.is_alive():
                raise RuntimeError("the ASGI server did not start")
            time.sleep(0.05)
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._server.should_exit = True
        self._thread.join(timeout=10)
