"""What daphne (the server `.bin/run` starts) refuses before the application sees it is still
answered in the API's error shape: a GET whose request line is over 16 KiB gets a JSON 414 (it
was a dropped connection), a WebSocket message over 1 MiB an error frame and close code 1009
(it was 1006). A real daphne process on a data folder of its own."""

from __future__ import annotations

import asyncio
import json
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import websockets

from tests.ingestion.processes import REPO, environment, free_port, manage, stop

ORIGIN = "http://127.0.0.1:8000"


@pytest.fixture(scope="module")
def daphne(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str]]:
    folder: Path = tmp_path_factory.mktemp("daphne")
    env = environment(folder)
    manage(env, "migrate", "-v", "0")
    key = manage(env, "shell", "-v", "0", "-c", (
        "from assistant.models import Project; print(Project.objects.create(name='Limits', "
        f"allowed_origins=['{ORIGIN}']).public_key)"
    )).strip()  # fmt: skip
    port = free_port()
    log = folder / "daphne.log"
    server = subprocess.Popen(
        [sys.executable, "-m", "daphne", "-b", "127.0.0.1", "-p", str(port),
         "config.asgi:application"],
        cwd=REPO, env=env, stdout=log.open("wb"), stderr=subprocess.STDOUT,
    )  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            assert server.poll() is None and time.monotonic() < deadline, log.read_text()
            try:
                if httpx.get(f"{url}/healthz", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.3)
        yield url, key
    finally:
        stop(server)


def raw_get(url: str, target: str) -> bytes:
    """The whole answer to a GET sent as raw bytes (httpx would refuse to send some of them)."""
    host, port = url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=30) as connection:
        head = f"GET {target} HTTP/1.1\r\nHost: {host}\r\nOrigin: {ORIGIN}\r\nConnection: close"
        connection.sendall(f"{head}\r\n\r\n".encode())
        answer = b""
        while chunk := connection.recv(65536):
            answer += chunk
    return answer


# Within Twisted's limits (the intake: question_too_long), over its 16 KiB of headers
# (bad_request), over its 16 KiB request line (too_large, a dropped connection before).
@pytest.mark.parametrize("size", [16_000, 16_300, 60_000, 200_000])
def test_a_get_too_long_for_the_server_gets_a_json_4xx(daphne, size: int) -> None:  # noqa: ANN001
    url, key = daphne
    answer = raw_get(url, f"/api/v1/ask/stream?project={key}&question={'x' * size}")
    head, _, body = answer.partition(b"\r\n\r\n")
    status = int(head.split(b" ")[1])
    assert 400 <= status < 500, answer[:300]
    assert b"application/json" in head.lower()
    assert json.loads(body)["error"]["code"] in ("too_large", "bad_request", "question_too_long")


def test_a_websocket_message_over_1_mib_gets_an_error_frame_and_1009(daphne) -> None:  # noqa: ANN001
    url, key = daphne

    async def run() -> tuple[dict, int | None]:
        address = url.replace("http://", "ws://") + f"/ws/ask/?project={key}"
        async with websockets.connect(address, origin=ORIGIN, max_size=None) as ws:
            await ws.send(json.dumps({"question": "x" * (1024 * 1024 + 10)}))
            frame = json.loads(await asyncio.wait_for(ws.recv(), 30))
            with pytest.raises(websockets.ConnectionClosed):
                await asyncio.wait_for(ws.recv(), 30)
            return frame, ws.close_code

    frame, code = asyncio.run(run())
    assert (frame["type"], frame["code"]) == ("error", "too_large")
    assert code == 1009


def test_a_frame_under_the_server_limit_is_refused_by_the_intake(daphne) -> None:  # noqa: ANN001
    url, key = daphne

    async def run() -> dict:
        address = url.replace("http://", "ws://") + f"/ws/ask/?project={key}"
        async with websockets.connect(address, origin=ORIGIN) as ws:
            await ws.send(json.dumps({"question": "x" * 100_000}))
            return json.loads(await asyncio.wait_for(ws.recv(), 30))

    assert asyncio.run(run())["code"] == "too_large"
