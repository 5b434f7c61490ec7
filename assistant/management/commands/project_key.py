from django.core.management.base import BaseCommand, CommandError

from assistant.console.project_services import project_secret_rotate
from assistant.models import Project


class Command(BaseCommand):
    help = (
        "Show which secret key a project has (its hint), or rotate it and print the new key "
        "once: for provisioning a server or an MCP client from a script."
    )

    def add_arguments(self, parser):
        parser.add_argument("--project", required=True, help="The project's name")
        parser.add_argument(
            "--rotate", action="store_true",
            help="Issue a new secret key and print it alone on stdout; the old key stops "
            "working at once",
        )  # fmt: skip

    def handle(self, *args: object, **options) -> None:
        project = Project.objects.filter(name=options["project"]).first()
        if project is None:
            names = ", ".join(Project.objects.values_list("name", flat=True)) or "none yet"
            raise CommandError(f"No project named {options['project']!r} (projects: {names}).")
        if not options["rotate"]:
            self.stdout.write(
                f"{project.name}: secret key {project.secret_key_hint}, "
                f"public key {project.public_key}"
            )
            return
        # The console's own rotation: the one write that makes a key, whatever it stores.
        secret = project_secret_rotate(project=project)
        self.stderr.write(
            f"New secret key of {project.name} ({project.secret_key_hint}); it is shown only "
            "now, and the old one no longer works."
        )
        self.stdout.write(secret)
