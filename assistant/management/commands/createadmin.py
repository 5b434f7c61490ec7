"""Create (or update) the console's staff account from the environment, for a first login."""

from __future__ import annotations

import os
from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand


class Command(BaseCommand):
    help = (
        "Create or update a staff superuser named $ASKDOCS_ADMIN_USER (default 'admin') with "
        "the password in $ASKDOCS_ADMIN_PASSWORD; without it, print how to log in."
    )

    def handle(self, *args: Any, **options: Any) -> None:
        username = os.environ.get("ASKDOCS_ADMIN_USER", "admin").strip() or "admin"
        password = os.environ.get("ASKDOCS_ADMIN_PASSWORD", "")
        if not password:
            self.stdout.write(
                "Console: http://HOST/admin/ — set ASKDOCS_ADMIN_PASSWORD (and optionally "
                "ASKDOCS_ADMIN_USER) before .bin/run, or run `python manage.py "
                "createsuperuser`, to get a staff login."
            )
            return
        user_model = get_user_model()
        user, created = user_model.objects.get_or_create(username=username)
        user.is_staff = user.is_superuser = user.is_active = True
        user.set_password(password)
        user.save()
        verb = "Created" if created else "Updated"
        self.stdout.write(f"{verb} staff user {username!r}; log in at /admin/.")
