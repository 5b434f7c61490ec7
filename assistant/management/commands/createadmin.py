"""Create (or update) the console's staff account from the environment, for a first login."""

from __future__ import annotations

import os
from argparse import ArgumentParser
from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand


class Command(BaseCommand):
    help = (
        "Create or update a staff superuser named $ASKDOCS_ADMIN_USER (default 'admin') with "
        "the password in $ASKDOCS_ADMIN_PASSWORD; without it, and while no staff user exists, "
        "print how to get one."
    )

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument(
            "--url",
            default="/admin/",
            help="The console's address to print (.bin/run passes the one it serves).",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        url = options["url"]
        username = os.environ.get("ASKDOCS_ADMIN_USER", "admin").strip() or "admin"
        password = os.environ.get("ASKDOCS_ADMIN_PASSWORD", "")
        user_model = get_user_model()
        if not password:
            # Only a first start needs the hint; afterwards it is noise on every start.
            if not user_model.objects.filter(is_staff=True, is_active=True).exists():
                self.stdout.write(
                    f"No staff user yet, so nobody can log in to the console at {url}. "
                    "Set ASKDOCS_ADMIN_PASSWORD (and optionally ASKDOCS_ADMIN_USER) and run "
                    "`.venv/bin/python manage.py createadmin` (or restart .bin/run), or run "
                    "`.venv/bin/python manage.py createsuperuser`."
                )
            return
        user, created = user_model.objects.get_or_create(username=username)
        user.is_staff = user.is_superuser = user.is_active = True
        user.set_password(password)
        user.save()
        verb = "Created" if created else "Updated"
        self.stdout.write(f"{verb} staff user {username!r}; log in at {url}.")
