"""`POST /api/v1/feedback`: thumbs up / down (and a comment) on one answer."""

from __future__ import annotations

from drf_spectacular.utils import (
    OpenApiResponse,
    extend_schema,
    extend_schema_field,
    extend_schema_serializer,
)
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from assistant.api_errors import INTAKE_ERRORS, ApiError, error_responses
from assistant.ask import intake
from assistant.ask.api import caller_of
from assistant.models import Interaction
from feedback.services import feedback_record

_VOTES = {"up": 1, "down": -1, "1": 1, "-1": -1}


@extend_schema_field({"type": "string", "enum": ["up", "down"]})
class VoteField(serializers.Field):
    """ "up" or "down" (1 and -1 are accepted too)."""

    def to_internal_value(self, data: object) -> int:
        vote = _VOTES.get(str(data).lower()) if isinstance(data, str | int) else None
        if vote is None or isinstance(data, bool):
            raise serializers.ValidationError('Use "up" or "down" (or 1 / -1).')
        return vote

    def to_representation(self, value: int) -> str:
        return "up" if value == 1 else "down"


class FeedbackApi(APIView):
    @extend_schema_serializer(component_name="FeedbackRequest")
    class InputSerializer(serializers.Serializer):
        project = serializers.CharField(required=False, max_length=64, help_text="Public key")
        answer_id = serializers.UUIDField()
        client_id = serializers.RegexField(r"^[A-Za-z0-9_-]{8,64}$", help_text="Widget's id")
        vote = VoteField()
        comment = serializers.CharField(
            required=False, allow_blank=True, max_length=2000, default=None
        )

    @extend_schema_serializer(component_name="FeedbackResponse")
    class OutputSerializer(serializers.Serializer):
        answer_id = serializers.UUIDField(source="interaction.answer_id")
        vote = VoteField()
        comment = serializers.CharField()

    @extend_schema(
        request=InputSerializer,
        responses={
            200: OpenApiResponse(OutputSerializer, description="A changed vote."),
            201: OpenApiResponse(OutputSerializer, description="A first vote."),
            **error_responses(*INTAKE_ERRORS, 404),
        },
    )
    def post(self, request: Request) -> Response:
        caller = caller_of(request)
        project = intake.authorise(caller)
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        intake.limit("feedback", client=caller.client)
        interaction = Interaction.objects.filter(
            project=project, answer_id=data.validated_data["answer_id"]
        ).first()
        if interaction is None:
            raise ApiError("unknown_answer", "No such answer.", status.HTTP_404_NOT_FOUND)
        feedback, created = feedback_record(
            interaction=interaction,
            client_id=data.validated_data["client_id"],
            vote=data.validated_data["vote"],
            comment=data.validated_data["comment"],
        )
        return Response(
            self.OutputSerializer(feedback).data,
            status=status.HTTP_201_CREATED if created else status.HTTP_200_OK,
        )
