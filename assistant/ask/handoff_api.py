"""`POST /api/v1/handoff`: "Ask a person" from the widget. Let in by the one intake like every
door (key, Origin, validation, rate limit); the delivery runs in the background."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema, extend_schema_serializer
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from assistant.api_errors import error_responses
from assistant.ask import handoff_intake, intake
from assistant.ask.api import body_of, caller_of
from assistant.handoff.services import handoff_create, what_happens_next


class HandoffApi(APIView):
    @extend_schema_serializer(component_name="HandoffRequest")
    class InputSerializer(serializers.Serializer):
        project = serializers.CharField(required=False, max_length=64, help_text="Public key")
        conversation_id = serializers.CharField(
            max_length=64, help_text="The conversation to hand over (from a `done` frame)."
        )
        email = serializers.EmailField(
            required=False, allow_blank=True, help_text="Where support may reply."
        )
        page_url = serializers.URLField(required=False, allow_blank=True, max_length=2000)
        message = serializers.CharField(
            required=False, allow_blank=True, max_length=handoff_intake.MAX_HANDOFF_MESSAGE_CHARS
        )

    @extend_schema_serializer(component_name="Handoff")
    class OutputSerializer(serializers.Serializer):
        handoff_id = serializers.IntegerField()
        via = serializers.ChoiceField(choices=["email", "webhook", "link"])
        url = serializers.CharField(help_text="The support page to open (`link`), else empty.")
        message = serializers.CharField(help_text="What happens next, for the visitor.")

    @extend_schema(
        request=InputSerializer,
        responses={201: OutputSerializer, **error_responses(400, 401, 403, 404, 413, 415, 429)},
    )
    def post(self, request: Request) -> Response:
        caller = caller_of(request)
        project = intake.authorise(caller)
        asked = handoff_intake.handoff_request(body_of(request), project=project, caller=caller)
        handoff = handoff_create(
            project=project, conversation_id=asked.conversation_id, email=asked.email,
            page_url=asked.page_url, message=asked.message,
        )  # fmt: skip
        answer = {
            "handoff_id": handoff.pk,
            "via": handoff.via,
            "url": handoff.target if handoff.via == handoff.Via.LINK else "",
            "message": what_happens_next(handoff),
        }
        return Response(self.OutputSerializer(answer).data, status=status.HTTP_201_CREATED)
