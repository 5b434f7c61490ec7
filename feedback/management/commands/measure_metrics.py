"""Time the console's metrics pages over a large interaction log.

Creates a throwaway project with N logged questions (and votes on a tenth of them) spread over
90 days, requests the pages as a staff user, reports the median time, and deletes it all."""

from __future__ import annotations

import random
import statistics
import time
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand
from django.test import Client, override_settings
from django.utils import timezone

from assistant.models import Interaction, Project
from feedback.models import Feedback

PAGES = [
    "/admin/overview/", "/admin/metrics/", "/admin/blind-spots/", "/admin/tuner/",
    "/admin/feedback/", "/admin/feedback/export.csv", "/admin/conversations/",
    "/admin/conversations/?q=invoice&refused=on",
]  # fmt: skip
TOPICS = ["Billing", "Tokens", "Account", "Shipping", "Exports", "API keys", "", "Refunds"]
# About 600 distinct questions, so blind spots have real clustering work to do.
VERBS = ["change", "reset", "export", "delete", "find", "renew", "share", "cancel", "move",
         "rename", "download", "restore", "verify", "update", "merge", "lock", "transfer",
         "archive", "copy", "hide"]  # fmt: skip
NOUNS = ["password", "invoice", "API key", "account", "order", "plan", "team", "token",
         "payment method", "address", "report", "project", "workspace", "receipt", "webhook",
         "avatar", "subscription", "email", "refund", "export", "backup", "domain", "SSO login",
         "billing contact", "data", "tax id", "seat", "label", "bucket", "dashboard"]  # fmt: skip


class Command(BaseCommand):
    help = "Report the time of the metrics pages at N logged questions (default 100,000)."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--questions", type=int, default=100_000)
        parser.add_argument("--repeat", type=int, default=5)

    def handle(self, *args: Any, questions: int, repeat: int, **options: Any) -> None:
        rng = random.Random(7)
        project = Project.objects.create(name=f"metrics-benchmark-{rng.randrange(10**9)}")
        user = get_user_model().objects.create_user(
            f"bench-{project.pk}", password=None, is_staff=True
        )
        try:
            self._fill(project, questions, rng)
            client = Client()
            client.force_login(user)
            # The test client calls itself "testserver"; this process only talks to itself.
            hosts = override_settings(ALLOWED_HOSTS=[*settings.ALLOWED_HOSTS, "testserver"])
            with hosts:
                self._time_pages(client, project, questions, repeat)
        finally:
            project.delete()
            user.delete()

    def _time_pages(self, client: Client, project: Project, questions: int, repeat: int) -> None:
        for page in PAGES:
            url = f"{page}{'&' if '?' in page else '?'}project={project.pk}&days=90"
            first = self._timed_get(client, url)  # warms caches (blind spots: embeddings)
            times = [self._timed_get(client, url) for _ in range(repeat)]
            self.stdout.write(
                f"{page:44} median {statistics.median(times) * 1000:7.0f} ms "
                f"(min {min(times) * 1000:.0f}, max {max(times) * 1000:.0f}; "
                f"first view {first * 1000:.0f}) at {questions:,} questions"
            )

    @staticmethod
    def _timed_get(client: Client, url: str) -> float:
        started = time.perf_counter()
        response = client.get(url)
        if response.streaming:
            b"".join(response.streaming_content)  # type: ignore[attr-defined]
        elapsed = time.perf_counter() - started
        assert response.status_code == 200, response.status_code  # noqa: S101
        return elapsed

    def _fill(self, project: Project, count: int, rng: random.Random) -> None:
        now = timezone.now()
        started = time.perf_counter()
        batch: list[Interaction] = []
        for i in range(count):
            best = rng.random() if rng.random() > 0.05 else None
            kept = int(best is not None and best >= project.threshold)
            batch.append(
                Interaction(
                    project=project,
                    channel="widget",
                    # Conversations of three questions; a tenth asked without one (the API).
                    conversation_id=f"bench-{i // 3}" if i % 10 else "",
                    question=f"How do I {rng.choice(VERBS)} my {rng.choice(NOUNS)}?",
                    topic=rng.choice(TOPICS),
                    retrieval_query="q",
                    best_relevance=best,
                    kept_count=kept,
                    refused=not kept,
                    total_ms=rng.uniform(50, 3000),
                )  # fmt: skip
            )
            if len(batch) == 5000:
                Interaction.objects.bulk_create(batch)
                batch = []
        Interaction.objects.bulk_create(batch)
        # auto_now_add overwrote created_at; spread the rows back over 90 days.
        ids = list(Interaction.objects.filter(project=project).values_list("id", flat=True))
        shuffled = rng.sample(ids, len(ids))
        hours = 90 * 24
        for hour in range(hours):
            Interaction.objects.filter(id__in=shuffled[hour::hours]).update(
                created_at=now - timedelta(hours=hour, minutes=rng.randrange(60))
            )
        votes = [
            Feedback(interaction_id=pk, client_id=f"bench-{pk}", vote=rng.choice([1, -1]))
            for pk in rng.sample(ids, len(ids) // 10)
        ]
        Feedback.objects.bulk_create(votes, batch_size=5000)
        self.stdout.write(f"logged {count:,} questions in {time.perf_counter() - started:.1f} s")
