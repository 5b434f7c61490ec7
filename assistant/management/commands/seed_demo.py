from django.core.management.base import BaseCommand

from assistant.demo import demo_seed


class Command(BaseCommand):
    help = "Create (or refresh) the demo project and its help-centre documents. Idempotent."

    def handle(self, *args: object, **options: object) -> None:
        result = demo_seed()
        self.stdout.write(
            self.style.SUCCESS(
                f"Demo project '{result.project.name}' (key {result.project.public_key}): "
                f"{result.added} added, {result.changed} changed, {result.unchanged} unchanged, "
                f"{result.removed} removed."
            )
        )
