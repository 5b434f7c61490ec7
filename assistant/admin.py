"""Django admin (/django-admin/): projects, with the SMS number that selects them, handoffs and the
SMS, Slack and Discord channels' records, read-only."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse
from django.utils import timezone

from assistant.memory.selectors import memory_metrics
from assistant.memory.services import memory_erase_user
from assistant.models import (
    DiscordInteraction,
    Handoff,
    PrivacyAudit,
    Project,
    SlackEvent,
    SmsConversation,
    SmsMessage,
    UserFact,
)


@admin.register(Project)
class ProjectAdmin(admin.ModelAdmin):
    list_display = ["name", "sms_number", "generator", "threshold", "created_at"]
    search_fields = ["name", "sms_number"]
    # The secret key is shown in full only once, in the console, when it is made or rotated.
    # The OpenAI-compatible server's key is set (write-only) on the console's project page.
    exclude = [
        "secret_key_digest", "secret_key_last4", "secret_key_sealed",
        "openai_api_key_sealed", "openai_api_key_last4",
    ]  # fmt: skip
    readonly_fields = ["public_key", "secret_key_hint", "openai_api_key_hint", "created_at"]


class ReadOnlyAdmin(admin.ModelAdmin):
    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False


@admin.register(SmsMessage)
class SmsMessageAdmin(ReadOnlyAdmin):
    list_display = ["received_at", "project", "from_number", "kind", "status", "delivery"]
    list_filter = ["project", "kind", "status", "delivery"]
    search_fields = ["message_sid", "from_number", "body"]


@admin.register(SlackEvent)
class SlackEventAdmin(ReadOnlyAdmin):
    list_display = ["received_at", "project", "team_id", "channel_id", "user_id", "status"]
    list_filter = ["project", "status"]
    search_fields = ["event_id", "conversation_id", "text"]


@admin.register(DiscordInteraction)
class DiscordInteractionAdmin(ReadOnlyAdmin):
    list_display = ["received_at", "project", "kind", "guild_id", "channel_id", "user_id", "status"]
    list_filter = ["project", "kind", "status"]
    search_fields = ["discord_id", "conversation_id", "text"]


@admin.register(Handoff)
class HandoffAdmin(ReadOnlyAdmin):
    list_display = ["created_at", "project", "email", "via", "status", "attempts"]
    list_filter = ["project", "via", "status"]
    search_fields = ["email", "conversation_id"]


@admin.register(PrivacyAudit)
class PrivacyAuditAdmin(ReadOnlyAdmin):
    """Exports, erasures and retention runs: counts only, never whose data (docs/privacy.md)."""

    list_display = ["created_at", "action", "project", "identifier_kind", "actor", "counts"]
    list_filter = ["action", "project"]

    def has_delete_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False


@admin.register(SmsConversation)
class SmsConversationAdmin(ReadOnlyAdmin):
    list_display = ["project", "phone", "conversation_id", "last_message_at"]
    list_filter = ["project"]


@admin.register(UserFact)
class UserFactAdmin(ReadOnlyAdmin):
    """What users asked the assistant to remember. Erasing goes through the service so the
    vectors go with the rows."""

    list_display = ["user_key", "text", "project", "updated_at"]
    list_filter = ["project"]
    search_fields = ["user_key"]
    actions = ["erase_users_memory"]
    metrics_days = 30

    def changelist_view(
        self, request: HttpRequest, extra_context: dict[str, Any] | None = None
    ) -> HttpResponse:
        project = request.GET.get("project__id__exact")
        since = timezone.now() - timedelta(days=self.metrics_days)
        metrics = memory_metrics(
            since=since, project_id=int(project) if project and project.isdigit() else None
        )
        context = {**(extra_context or {}), "memory_metrics": metrics}
        context["memory_days"] = self.metrics_days
        return super().changelist_view(request, extra_context=context)

    def has_delete_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False  # a plain delete would leave the vectors behind

    @admin.action(description="Erase the whole memory of the selected facts' users")
    def erase_users_memory(self, request: HttpRequest, queryset: QuerySet[UserFact]) -> None:
        users = queryset.values_list("project_id", "user_key").distinct()
        erased = 0
        for project_id, user_key in users:
            project = Project.objects.get(pk=project_id)
            erased += memory_erase_user(project=project, user_key=user_key)
        self.message_user(
            request,
            f"Erased {erased} facts of {len(users)} user(s), vectors included.",
            messages.SUCCESS,
        )
