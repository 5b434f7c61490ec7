"""Retrieval time of a repeated question (from the cache) against a fresh one (the models).

python manage.py measure_retrieval_cache            # the demo project, 3 rounds
"""

from __future__ import annotations

import json
from typing import Any

from assistant.management.commands.measure_first_token import QUESTIONS
from django.core.management.base import BaseCommand, CommandError

from assistant.demo import PROJECT_NAME
from assistant.models import Project
from measuring.evaluation.cache_latency import retrieval_cache_latency


class Command(BaseCommand):
    help = "Median retrieval time (search + rerank + gate) with and without the cache."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--project", default=PROJECT_NAME)
        parser.add_argument("--rounds", type=int, default=3)

    def handle(self, *args: Any, **options: Any) -> None:
        project = Project.objects.filter(name=options["project"]).first()
        if project is None:
            raise CommandError(f"No project {options['project']!r}: run seed_demo first.")
        if options["rounds"] < 1:
            raise CommandError("--rounds must be at least 1.")
        report = retrieval_cache_latency(
            project=project, questions=QUESTIONS, rounds=options["rounds"]
        )
        self.stdout.write(json.dumps(report, indent=2))
