"""Writes behind the console's project pages."""

from __future__ import annotations

from django.contrib.sessions.backends.base import SessionBase
from django.db import transaction

from assistant.console_shell.access import show_once, shown_once
from assistant.memory.services import memory_erase_project
from assistant.models import Project, new_public_key
from ingestion.console.services import SourceBusy, source_delete
from ingestion.models import Document, Source
from ingestion.sync import runs_settle

#: Session key of the secret keys waiting to be shown once, by project pk.


@transaction.atomic
def project_key_rotate(*, project: Project) -> str:
    """A new public key; pages still using the old one stop working at once."""
    project.public_key = new_public_key()
    project.save(update_fields=["public_key"])
    return project.public_key


@transaction.atomic
def project_create(*, name: str, allowed_origins: list[str]) -> tuple[Project, str]:
    """A new project with the pipeline's default knobs and fresh public and secret keys; the
    secret key in clear, to be shown once."""
    project = Project(name=name, allowed_origins=allowed_origins)
    secret = project.issue_secret_key()
    project.save()
    return project, secret


@transaction.atomic
def project_secret_rotate(*, project: Project) -> str:
    """A new secret key, returned in clear to be shown once; servers using the old one (and
    user hashes made with it) stop working at once."""
    secret = project.issue_secret_key()
    project.save(update_fields=["secret_key_digest", "secret_key_last4", "secret_key_sealed"])
    return secret


def secret_to_show_once(*, session: SessionBase, project: Project, secret: str) -> None:
    """Keep the project's new secret key for the next page view only (after a redirect)."""
    show_once(session, "project-secret", project.pk, secret)


def secret_shown_once(*, session: SessionBase, project: Project) -> str | None:
    """The secret key waiting for this project's page, removed as it is read; None after."""
    secret = shown_once(session, "project-secret", project.pk)
    # A key rotated again since it was stored is not the one to show.
    return secret if secret and project.secret_key_matches(secret) else None


@transaction.atomic
def project_llms_txt_publish(*, project: Project, enabled: bool) -> None:
    """Serve the project's llms.txt and llms-full.txt publicly, or stop."""
    project.llms_txt_enabled = enabled
    project.save(update_fields=["llms_txt_enabled"])


def project_counts(*, project: Project) -> dict[str, int]:
    """What deleting the project removes, for its confirmation page."""
    return {
        "sources": Source.objects.filter(project=project).count(),
        "documents": Document.objects.filter(source__project=project).count(),
        "questions": project.interactions.count(),
        "facts": project.user_facts.count(),
    }


def project_delete(*, project: Project) -> None:
    """Delete a project with everything it holds: each source with its documents and vectors
    (SourceBusy, before anything of the project goes, when one is syncing), the facts users
    asked it to remember with their vectors, then the project row, whose deletion takes the
    interaction log, votes and SMS conversations with it."""
    sources = list(Source.objects.filter(project=project))
    busy = [source.name for source in sources if runs_settle(source=source)]
    if busy:
        raise SourceBusy(f"{busy[0]} is syncing; delete the project when it has finished.")
    for source in sources:
        source_delete(source=source)
    memory_erase_project(project=project)
    project.delete()
