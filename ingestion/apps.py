from __future__ import annotations

import os

from django.apps import AppConfig


class IngestionConfig(AppConfig):
    name = "ingestion"

    def ready(self) -> None:
        # Only the web server started by .bin/run sets this: on the embedded default (no
        # broker) it runs scheduled syncs on a background thread instead of Celery beat.
        if os.environ.get("ASKDOCS_INPROCESS_SCHEDULER") == "1":
            from ingestion.dispatch import scheduler_start

            scheduler_start()
