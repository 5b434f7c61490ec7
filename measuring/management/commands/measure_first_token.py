"""Time from question to first token through the real ASGI server and the widget's WebSocket.

    python manage.py measure_first_token                 # serves the app itself (uvicorn)
    python manage.py measure_first_token --url http://127.0.0.1:8000   # a running server

Against a running server, raise its limit first (ASKDOCS_RATE_ASK_PER_CLIENT=1000/m): the
default lets one address ask 20 questions a minute.
"""

from __future__ import annotations

import json
import socket
import statistics
import threading
import time
from typing import Any
from urllib.parse import quote, urlsplit

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from assistant.demo import PROJECT_NAME
from assistant.models import Project

QUESTIONS = [
    ("Billing", "How do I get my money back?"),
    ("Retrieval endpoint token management", "When does my token expire?"),
    ("Billing", "Can I change my plan?"),
    ("Retrieval endpoint token management", "How do I revoke a token?"),
    ("Account", "How do I reset my password?"),
    ("", "How do I rotate an API key?"),
    ("", "How do I export my data?"),
    ("", "How long does delivery take?"),
    ("Billing", "Where do I find my invoices?"),
    ("", "Do you offer a student discount?"),
]


class Command(BaseCommand):
    help = "Median time from question to first token over the WebSocket (real ASGI server)."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--url", help="a running server; default: serve the app here")
        parser.add_argument("--questions", type=int, default=20)
        parser.add_argument("--project", default=PROJECT_NAME)

    def handle(self, *args: Any, **options: Any) -> None:
        from websockets.sync.client import connect

        project = Project.objects.filter(name=options["project"]).first()
        if project is None:
            raise CommandError(f"No project {options['project']!r}: run seed_demo first.")
        if not project.allowed_origins:
            raise CommandError("The project has no allowed origins.")
        # A browser on one of the project's pages sends that page's origin.
        origin = project.allowed_origins[0]
        server = None
        url = options["url"]
        if not url:
            settings.ASKDOCS_RATE_ASK_PER_CLIENT = "100000/m"
            server = _InProcessServer()
            url = server.start()
        ws_url = "ws://" + urlsplit(url).netloc + "/ws/ask/?project=" + quote(project.public_key)
        first_token: list[float] = []
        whole: list[float] = []
        stages: dict[str, list[float]] = {}
        try:
            with connect(ws_url, origin=origin, open_timeout=30) as ws:
                cold = _ask(ws, *QUESTIONS[0])
                self.stdout.write(f"cold start (models load): first token {cold[0]:.0f} ms")
                for n in range(options["questions"]):
                    topic, question = QUESTIONS[n % len(QUESTIONS)]
                    to_first, to_done, timings = _ask(ws, topic, question)
                    first_token.append(to_first)
                    whole.append(to_done)
                    for stage, ms in timings.items():
                        stages.setdefault(stage, []).append(ms)
        finally:
            if server:
                server.stop()
        self.stdout.write(
            f"{len(first_token)} questions: first token median {statistics.median(first_token):.0f}"
            f" ms (min {min(first_token):.0f}, max {max(first_token):.0f}); whole answer median "
            f"{statistics.median(whole):.0f} ms"
        )
        self.stdout.write(
            "server-side stage medians: "
            + ", ".join(f"{k} {statistics.median(v):.0f} ms" for k, v in sorted(stages.items()))
        )


def _ask(ws: Any, topic: str, question: str) -> tuple[float, float, dict[str, float]]:
    started = time.perf_counter()
    ws.send(json.dumps({"question": question, "topic": topic}))
    to_first = 0.0
    while True:
        frame = json.loads(ws.recv(timeout=120))
        if frame["type"] == "token" and not to_first:
            to_first = (time.perf_counter() - started) * 1000
        if frame["type"] == "error":
            raise CommandError(f"{question!r}: {frame['code']}: {frame['message']}")
        if frame["type"] == "done":
            timings = {k: v for k, v in frame["timings_ms"].items() if isinstance(v, int | float)}
            return to_first, (time.perf_counter() - started) * 1000, timings


class _InProcessServer:
    def start(self) -> str:
        import uvicorn

        from config.asgi import application

        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        config = uvicorn.Config(
            application, host="127.0.0.1", port=port, lifespan="off", log_level="warning"
        )
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, daemon=True)
        self.thread.start()
        while not self.server.started:
            if not self.thread.is_alive():
                raise CommandError("uvicorn did not start")
            time.sleep(0.05)
        return f"http://127.0.0.1:{port}"

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=10)
