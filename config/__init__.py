"""The project's configuration, apart from the apps: settings (settings.py and its parts by
concern in parts/, read from the environment by env.py), the URLs, the ASGI and WSGI entry
points and the Celery app.

The Celery app is loaded with the package, as Celery's Django guide does it: every process that
loads the settings (web, worker, manage.py) then queues tasks through this app and its broker."""

from config.celery import app as celery_app

__all__ = ["celery_app"]
