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
        parser.add_argument(
            "--docs-url", default="",
            help="Where the help centre's pages are read, e.g. http://127.0.0.1:8000/demo/help/ "
            "(this server's copy; .bin/run passes it). Default: the fictional help.acme.example",
        )  # fmt: skip

    def handle(self, *args: object, **options) -> None:
        try:
            extra = {"docs_url": options["docs_url"]} if options["docs_url"] else {}
            result = demo_seed(origins=options["origin"], **extra)
        except ValueError as exc:
            raise CommandError(f"--origin: {exc}") from exc
        self.stdout.write(
            self.style.SUCCESS(
                f"Demo project '{result.project.name}' (key {result.project.public_key}): "
                f"{result.added} added, {result.changed} changed, {result.unchanged} unchanged, "
                f"{result.removed} removed."
            )
        )
