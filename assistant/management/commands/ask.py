import json
from typing import Any

from django.core.management.base import BaseCommand, CommandError
from django.db import DatabaseError

from assistant.ask import intake, services
from assistant.errors import IntakeError
from assistant.models import Interaction, Project


class Command(BaseCommand):
    help = "Ask a question as the widget would, and print the answer with every scored chunk."

    def add_arguments(self, parser):
        parser.add_argument("question")
        parser.add_argument("--topic", default="")
        parser.add_argument("--project", help="Project name (default: the only/first project)")
        parser.add_argument("--json", action="store_true", help="Print JSON")

    def handle(self, *args: object, **options) -> None:
        project = self._project(options["project"])
        try:  # the same rules as every other door
            question = intake.question_field(options)
            topic = intake.topic_field(options)
        except IntakeError as error:
            raise CommandError(f"{error.code}: {error.message}") from None
        asked = intake.let_in(project, question=question, topic=topic)
        result = services.ask(asked, channel=Interaction.Channel.CLI)
        interaction = (
            Interaction.objects.filter(answer_id=result.answer_id).first()
            if result.answer_id
            else None
        )
        candidates = interaction.candidates if interaction else []
        if options["json"]:
            payload = {
                "answer_id": result.answer_id,
                "answer": result.answer,
                "refused": result.refused,
                "error": result.error,
                "sources": result.sources,
                "related": result.related,
                "retrieval_query": interaction.retrieval_query if interaction else "",
                "candidates": candidates,
                "latency_ms": interaction.latency_ms if interaction else {},
            }
            self.stdout.write(json.dumps(payload, indent=2))
            return
        self.stdout.write(self.style.MIGRATE_HEADING("Answer"))
        self.stdout.write(result.answer)
        for source in result.sources:
            self.stdout.write(f"  [{source['n']}] {source['title']} — {source['url']}")
        if result.related:
            self.stdout.write("These pages may help:")
        for page in result.related:
            self.stdout.write(f"  - {page['title']} — {page['url']} ({page['relevance']:.3f})")
        if interaction:
            self.stdout.write(self.style.MIGRATE_HEADING(f"\nQuery: {interaction.retrieval_query}"))
            self.stdout.write(f"{'kept':<5}{'relevance':>10}{'similarity':>11}  title")
            for c in candidates:
                self.stdout.write(candidate_line(c))
            timings = ", ".join(f"{k} {v:.0f}" for k, v in interaction.latency_ms.items())
            self.stdout.write(f"\nLatency (ms): {timings}")

    def _project(self, name: str | None) -> Project:
        try:
            return self._named(name)
        except DatabaseError as exc:
            # A data folder nobody migrated ("no such table"), or a database that is down.
            raise CommandError(
                f"The database is not ready ({exc}): set it up with `.bin/run` or "
                "`.venv/bin/python manage.py migrate`, and check ASKDOCS_DATA_DIR / DATABASE_URL."
            ) from None

    def _named(self, name: str | None) -> Project:
        projects = Project.objects.all()
        if name:
            project = projects.filter(name=name).first()
            if project is None:
                raise CommandError(f"No project named {name!r}.")
            return project
        project = projects.first()
        if project is None:
            raise CommandError("No project yet: run `.venv/bin/python manage.py seed_demo` first.")
        return project


def candidate_line(candidate: dict[str, Any]) -> str:
    """One scored chunk: kept or not, its relevance ("-": the cross-encoder did not read it),
    its similarity ("-": only the word search found it) and its title."""
    relevance, similarity = candidate["relevance"], candidate["similarity"]
    shown = ["-" if v is None else f"{v:.4f}" for v in (relevance, similarity)]
    mark = "yes" if candidate["kept"] else ""
    return f"{mark:<5}{shown[0]:>10}{shown[1]:>11}  {candidate['title'][:70]}"
