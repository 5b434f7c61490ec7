import os

from django.apps import AppConfig
from django.db.models.signals import post_delete, post_save


class AssistantConfig(AppConfig):
    name = "assistant"
    verbose_name = "Ask AI assistant"

    def ready(self) -> None:
        from assistant.ask import cors
        from assistant.models import Project

        def forget(**kwargs: object) -> None:
            cors.forget_origins()

        if os.environ.get("ASKDOCS_INPROCESS_SCHEDULER") == "1":  # no beat: nightly retention
            from assistant.privacy.schedule import retention_schedule_start

            retention_schedule_start()
        post_save.connect(forget, sender=Project, weak=False, dispatch_uid="cors-forget-save")
        post_delete.connect(forget, sender=Project, weak=False, dispatch_uid="cors-forget-delete")
