from __future__ import annotations

import os
from typing import TYPE_CHECKING

from django.apps import AppConfig

if TYPE_CHECKING:
    from ingestion.models import Source


class IngestionConfig(AppConfig):
    name = "ingestion"

    def ready(self) -> None:
        from django.db.models.signals import post_delete

        from ingestion.models import Source

        # A source deleted anywhere (admin, console, shell) takes its chunks with it.
        post_delete.connect(
            _forget_retrievals, sender=Source, weak=False, dispatch_uid="retrieval-cache-source"
        )
        # Only the web server started by .bin/run sets this: on the embedded default (no
        # broker) it runs scheduled syncs on a background thread instead of Celery beat.
        if os.environ.get("ASKDOCS_INPROCESS_SCHEDULER") == "1":
            from ingestion.dispatch import scheduler_start

            scheduler_start()


def _forget_retrievals(*, instance: Source, **kwargs: object) -> None:
    from ingestion.index import index_written

    index_written(project_id=instance.project_id)
