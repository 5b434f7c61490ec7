import json

from django.core.management.base import BaseCommand, CommandError, CommandParser

from assistant.models import Project
from assistant.privacy.erasure import privacy_erase, privacy_export
from assistant.privacy.holdings import UnknownIdentifier, person_from
from assistant.privacy.retention import retention_run


class Command(BaseCommand):
    help = (
        "What is held about one person: `privacy export <who>` prints it as JSON, `privacy "
        "erase <who> --yes` deletes it everywhere; <who> is visitor:<id>, user:<id>, a phone "
        "number (+15551234567), an e-mail address, a Slack member (slack:<team id>:<member id>) "
        "or a Discord user (discord:<user id>). `privacy retention` deletes what is "
        "older than each project keeps (as the nightly schedule does)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        actions = parser.add_subparsers(dest="action", required=True)
        for name in ("export", "erase"):
            action = actions.add_parser(name)
            action.add_argument("who")
            action.add_argument("--project", help="Only this project (name); default: all")
        actions.choices["erase"].add_argument(
            "--yes", action="store_true", help="Really delete (there is no undo)"
        )
        actions.add_parser("retention")

    def handle(self, *args: object, **options) -> None:
        if options["action"] == "retention":
            report = retention_run(actor="command")
            self.stdout.write(json.dumps(report, indent=2))
            return
        try:
            person = person_from(options["who"])
        except UnknownIdentifier as error:
            raise CommandError(str(error)) from None
        projects = Project.objects.all()
        if options["project"]:
            projects = projects.filter(name=options["project"])
            if not projects.exists():
                raise CommandError(f"No project named {options['project']!r}.")
        if options["action"] == "export":
            exported = privacy_export(person=person, projects=projects, actor="command")
            self.stdout.write(json.dumps(exported, indent=2, ensure_ascii=False))
            return
        if not options["yes"]:
            raise CommandError("Erasure cannot be undone: add --yes (see `privacy export` first).")
        counts = privacy_erase(person=person, projects=projects, actor="command")
        self.stdout.write(json.dumps(counts, indent=2))
