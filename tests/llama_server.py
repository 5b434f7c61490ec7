"""llama.cpp's own OpenAI-compatible server (from the `xllamacpp` package) in a process of its
own, on a loopback port, with an API key: the real thing an `openai` project talks to.

Run as `python -m tests.llama_server MODEL PORT API_KEY` it serves until terminated; tests
start it with `start_llama_server`."""

from __future__ import annotations

import re
import subprocess
import sys
import time
from pathlib import Path

import httpx

from tests.servers import free_port, stop


def serve(model: str, port: int, api_key: str) -> None:
    import xllamacpp

    params = xllamacpp.CommonParams()
    params.model.path = model
    params.hostnames = ["127.0.0.1"]
    params.port = port
    params.api_keys = [api_key]
    params.n_ctx = 4096
    params.n_parallel = 1
    params.n_batch = params.n_ubatch = 128
    params.cpuparams.n_threads = 2
    params.cpuparams_batch.n_threads = 2
    params.endpoint_slots = True  # /slots: whether it is working
    params.endpoint_metrics = True  # /metrics: how many tokens it has written in all
    params.warmup = False
    params.verbosity = 0
    server = xllamacpp.Server(params)  # serves on its own threads while the object lives
    while server is not None:
        time.sleep(3600)


def start_llama_server(
    model: Path, *, api_key: str, log_path: Path, timeout: float = 120
) -> tuple[subprocess.Popen[bytes], str]:
    """The server and its base URL (`http://127.0.0.1:PORT`) once the model has loaded."""
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    with log_path.open("wb") as log:
        server = subprocess.Popen(
            [sys.executable, "-m", "tests.llama_server", str(model), str(port), api_key],
            stdout=log, stderr=subprocess.STDOUT, cwd=Path(__file__).resolve().parent.parent,
        )  # fmt: skip
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and server.poll() is None:
        try:
            # 503 while the model loads, 200 once it answers.
            if httpx.get(f"{url}/health", timeout=1).status_code == 200:
                return server, url
        except httpx.HTTPError:
            pass
        time.sleep(0.3)
    stop(server)
    raise AssertionError(
        f"llama.cpp's server did not start:\n{log_path.read_text(errors='replace')[-2000:]}"
    )


def is_processing(url: str, api_key: str) -> bool:
    """Whether its one slot is reading a prompt or writing an answer now."""
    slots = httpx.get(f"{url}/slots", headers={"Authorization": f"Bearer {api_key}"}, timeout=5)
    return bool(slots.json()[0]["is_processing"])


def tokens_written(url: str, api_key: str) -> int:
    """Tokens the server has generated since it started (its Prometheus counter)."""
    metrics = httpx.get(f"{url}/metrics", headers={"Authorization": f"Bearer {api_key}"}, timeout=5)
    found = re.search(r"^llamacpp:tokens_predicted_total (\S+)$", metrics.text, re.M)
    if found is None:
        raise AssertionError(f"no tokens_predicted_total in /metrics:\n{metrics.text[:500]}")
    return int(float(found.group(1)))


if __name__ == "__main__":
    serve(sys.argv[1], int(sys.argv[2]), sys.argv[3])
