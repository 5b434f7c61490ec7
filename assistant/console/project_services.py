"""Writes behind the console's project pages."""

from __future__ import annotations

from django.db import transaction

from assistant.models import Project, new_public_key


@transaction.atomic
def project_key_rotate(*, project: Project) -> str:
    """A new public key; pages still using the old one stop working at once."""
    project.public_key = new_public_key()
    project.save(update_fields=["public_key"])
    return project.public_key
