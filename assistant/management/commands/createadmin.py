"""Create (or update) the console's staff account, for a first login.

From the environment (ASKDOCS_ADMIN_PASSWORD), or, with --first-login while nobody can log in,
with a generated password printed once: `.bin/run` passes it, so a first start lets you in.
"""

from __future__ import annotations

import os
import secrets
from argparse import ArgumentParser
from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand


class Command(BaseCommand):
    help = (
        "Create or update a staff superuser named $ASKDOCS_ADMIN_USER (default 'admin') with "
        "the password in $ASKDOCS_ADMIN_PASSWORD. Without it, and while no staff user exists, "
        "--first-login creates that user with a generated password printed once; otherwise it "
        "prints how to get one."
    )

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument(
            "--url",
            default="/admin/",
            help="The console's address to print (.bin/run passes the one it serves).",
        )
        parser.add_argument(
            "--first-login",
            action="store_true",
            help="While no staff user exists, create one with a generated password and print "
            "it once (what .bin/run does on a first start).",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        url = options["url"]
        username = os.environ.get("ASKDOCS_ADMIN_USER", "admin").strip() or "admin"
        password = os.environ.get("ASKDOCS_ADMIN_PASSWORD", "")
        user_model = get_user_model()
        if not password:
            # Only a first start needs any of this; afterwards it is noise on every start.
            if user_model.objects.filter(is_staff=True, is_active=True).exists():
                return
            if options["first_login"]:
                self._create_with_generated_password(username, url)
                return
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

    def _create_with_generated_password(self, username: str, url: str) -> None:
        password = secrets.token_urlsafe(12)
        user, _ = get_user_model().objects.get_or_create(username=username)
        user.is_staff = user.is_superuser = user.is_active = True
        user.set_password(password)
        user.save()
        # Only the hash is stored: this is the one time the password can be read.
        self.stdout.write(
            "\n".join(
                [
                    "",
                    "First start: created the console's staff account.",
                    f"  Log in at {url}",
                    f"  username: {username}",
                    f"  password: {password}",
                    "This password is shown only now: keep it, or change it in the console "
                    "(Django admin > Users). A new one: `.venv/bin/python manage.py "
                    "changepassword " + username + "`.",
                    "",
                ]
            )
        )
