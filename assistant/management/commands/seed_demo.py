from django.core.management.base import BaseCommand, CommandError

from assistant.demo import demo_seed


class Command(BaseCommand):
    help = "Create (or refresh) the demo project and its help-centre documents. Idempotent."

    def add_arguments(self, parser):
        parser.add_argument(
            "--origin", action="append", default=[],
            help="Also allow this origin (where the demo pages are served), e.g. "
            "http://127.0.0.1:9000; repeat for more",
        )  # fmt: skip

    def handle(self, *args: object, **options) -> None:
        try:
            result = demo_seed(origins=options["origin"])
        except ValueError as exc:
            raise CommandError(f"--origin: {exc}") from exc
        self.stdout.write(
            self.style.SUCCESS(
                f"Demo project '{result.project.name}' (key {result.project.public_key}): "
                f"{result.added} added, {result.changed} changed, {result.unchanged} unchanged, "
                f"{result.removed} removed."
            )
        )
