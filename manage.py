#!/usr/bin/env python
import os
import sys


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    if len(sys.argv) < 2 or sys.argv[1] == "help" or {"-h", "--help"} & set(sys.argv[1:]):
        # A command's help needs no secret key, whichever shell it is read from.
        os.environ["ASKDOCS_HELP_ONLY"] = "1"
    from django.conf import settings
    from django.core.exceptions import ImproperlyConfigured
    from django.core.management import execute_from_command_line

    try:
        settings.SECRET_KEY  # noqa: B018 - loads the settings: a bad one is a message, not a trace
    except ImproperlyConfigured as exc:
        sys.exit(f"manage.py: {exc}")
    execute_from_command_line(sys.argv)


if __name__ == "__main__":
    main()
