"""What daphne (the server `.bin/run` starts) refuses before the application sees it is still
answered in the API's error shape: a GET whose request line is over 16 KiB gets a JSON 414 (it
was a dropped connection), a WebSocket message over 1 MiB an error frame and close code 1009
(it was 1006), a body over its path's limit a JSON 413 before it is read (it was read whole,
into memory). A real daphne process on a data folder of its own."""

from __future__ import annotations

import asyncio
import json
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
import websockets

from tests.ingestion.processes import REPO, environment, free_port, manage, stop

ORIGIN = "http://127.0.0.1:8000"


@dataclass
class Daphne:
    url: str
    key: str
    folder: Path
    pid: int

    def __iter__(self) -> Iterator[str]:
        return iter((self.url, self.key))

    def rss_bytes(self) -> int:
        status = Path(f"/proc/{self.pid}/status").read_text()
        [line] = [line for line in status.splitlines() if line.startswith("VmRSS:")]
        return int(line.split()[1]) * 1024


@pytest.fixture(scope="module")
def daphne(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Daphne]:
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
        yield Daphne(url, key, folder, server.pid)
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


MB = 1_000_000


def post_answer(daphne: Daphne, target: str, head: str, body: Iterator[bytes]) -> tuple[bytes, int]:
    """The answer to a POST whose body is sent while the answer is read, as a browser does,
    and how many bytes of the body were sent before the server stopped taking them."""
    host, port = daphne.url.removeprefix("http://").split(":")
    sent = 0
    with socket.create_connection((host, int(port)), timeout=30) as connection:
        connection.sendall(f"POST {target} HTTP/1.1\r\nHost: {host}\r\n{head}\r\n".encode())

        def send_body() -> None:
            nonlocal sent
            try:
                for part in body:
                    connection.sendall(part)
                    sent += len(part)
            except OSError:
                pass  # the server hung up: what it refused is not sent

        sender = threading.Thread(target=send_body, daemon=True)
        sender.start()
        answer = b""
        while chunk := connection.recv(65536):
            answer += chunk
        sender.join(timeout=30)
    return answer, sent


def zeros(total: int, size: int = 1 << 20) -> Iterator[bytes]:
    for start in range(0, total, size):
        yield bytes(min(size, total - start))


def assert_413(answer: bytes) -> None:
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 413"), answer[:300]
    assert json.loads(body)["error"]["code"] == "too_large"


def stored_uploads(daphne: Daphne) -> list[Path]:
    return [p for p in (daphne.folder / "uploads").rglob("*") if p.is_file()]


def test_a_100_mb_upload_is_refused_by_its_declared_size_before_it_is_read(daphne) -> None:  # noqa: ANN001
    size = 105 * MB  # over the largest upload form's 101 MB: a 100 MB archive and its fields
    head = f"Content-Type: multipart/form-data; boundary=x\r\nContent-Length: {size}\r\n"
    before = daphne.rss_bytes()
    started = time.monotonic()
    answer, _ = post_answer(daphne, "/admin/sources/new/files/?project=1", head, zeros(size))
    seconds = time.monotonic() - started
    assert_413(answer)
    assert seconds < 5  # at once, not after the server has read 100 MB
    assert daphne.rss_bytes() - before < 20 * MB  # the body was never held in memory
    assert stored_uploads(daphne) == []


def test_a_chunked_body_is_cut_off_when_it_passes_its_limit(daphne) -> None:  # noqa: ANN001
    # Not an upload form: what Django would read of a body at all, 2.5 MB, and the form room.
    head = "Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n"

    def chunks() -> Iterator[bytes]:
        for part in zeros(20 * MB, 256 * 1024):
            yield f"{len(part):x}\r\n".encode() + part + b"\r\n"
        yield b"0\r\n\r\n"

    answer, _ = post_answer(daphne, "/api/v1/ask", head, chunks())
    assert_413(answer)
    assert b"3.6 MB" in answer


def test_a_body_within_its_limit_still_reaches_the_application(daphne) -> None:  # noqa: ANN001
    response = httpx.post(
        f"{daphne.url}/api/v1/ask", content=json.dumps({"question": "x" * 20_000}),
        headers={"Content-Type": "application/json", "Origin": ORIGIN}, timeout=30,
    )  # fmt: skip
    assert response.status_code == 413 and response.json()["error"]["code"] == "too_large"
    assert "16000 bytes" in response.json()["error"]["message"]  # the intake's own limit


async def test_under_another_server_the_body_is_refused_before_the_application_reads_it() -> None:
    # uvicorn (the browser tests' server) hands the body over only when it is asked for.
    from config.asgi import application

    asked: list[str] = []
    answered: list[dict] = []

    async def receive() -> dict:
        asked.append("body")
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: dict) -> None:
        answered.append(message)

    scope = {
        "type": "http", "method": "POST", "path": "/admin/sources/new/files/",
        "query_string": b"project=1", "headers": [(b"content-length", str(105 * MB).encode())],
    }  # fmt: skip
    await application(scope, receive, send)
    assert answered[0]["status"] == 413 and asked == []
    assert json.loads(answered[1]["body"])["error"]["code"] == "too_large"
