"""The memory API for the host site's server (project secret key only): read what a user's
memory holds, add a fact, and erase a user's memory entirely (a privacy request)."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema, extend_schema_serializer
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from assistant.api_errors import ApiError, error_responses
from assistant.ask import intake
from assistant.ask.intake import Caller
from assistant.errors import UNAVAILABLE
from assistant.memory.identity import IdentityError, check_user_key
from assistant.memory.services import memory_erase_user, memory_facts, memory_remember
from assistant.models import Project
from assistant.rag.memory import MAX_FACT_CHARS, FactRefused


def authorise_server(request: Request, key: str) -> Project:
    """Memory is personal: only the project's own server (its secret key) may read or erase
    it through the API. Visitors manage theirs by talking to the assistant."""
    caller = Caller.from_headers(
        request.headers, key=key, client=request.META.get("REMOTE_ADDR", "")
    )
    return intake.authorise_server(caller)


class TextOnly(serializers.CharField):
    """A CharField that takes text only: DRF's would read `5` or `5.0` as "5", where every
    door of the intake answers "Send text."."""

    def to_internal_value(self, data: object) -> str:
        if not isinstance(data, str):
            self.fail("invalid")
        return super().to_internal_value(data)


class UserInput(serializers.Serializer):
    project = TextOnly(max_length=64, help_text="Public key")
    user = TextOnly(max_length=120, help_text='"visitor:<id>", "user:<id>", "sms:+1..."')

    def validate_user(self, value: str) -> str:
        try:
            return check_user_key(value)
        except IdentityError as error:
            raise serializers.ValidationError(str(error)) from None


class FactOutput(serializers.Serializer):
    id = serializers.IntegerField()
    text = serializers.CharField()
    created_at = serializers.DateTimeField()
    updated_at = serializers.DateTimeField()


class MemoryFactsApi(APIView):
    @extend_schema_serializer(component_name="MemoryFactRequest")
    class AddInput(UserInput):
        # The exact limit is checked by the memory core, with its own message.
        text = TextOnly(max_length=MAX_FACT_CHARS * 4, allow_blank=True)

    @extend_schema_serializer(component_name="MemoryFacts")
    class OutputSerializer(serializers.Serializer):
        user = serializers.CharField()
        facts = FactOutput(many=True)

    @extend_schema(
        parameters=[UserInput], responses={200: OutputSerializer, **error_responses(400, 401, 429)}
    )
    def get(self, request: Request) -> Response:
        data = UserInput(data=request.query_params)
        data.is_valid(raise_exception=True)
        project = authorise_server(request, data.validated_data["project"])
        user = data.validated_data["user"]
        facts = memory_facts(project=project, user_key=user)
        return Response(self.OutputSerializer({"user": user, "facts": facts}).data)

    @extend_schema(
        request=AddInput,
        responses={200: FactOutput, 201: FactOutput, **error_responses(400, 401, 413, 415, 503)},
    )
    def post(self, request: Request) -> Response:
        data = self.AddInput(data=request.data)
        data.is_valid(raise_exception=True)
        project = authorise_server(request, data.validated_data["project"])
        try:
            remembered = memory_remember(
                project=project,
                user_key=data.validated_data["user"],
                text=data.validated_data["text"],
            )
        except FactRefused as refused:
            raise ApiError("fact_refused", str(refused)) from None
        except Exception as exc:
            raise ApiError("unavailable", UNAVAILABLE, status.HTTP_503_SERVICE_UNAVAILABLE) from exc
        code = status.HTTP_200_OK if remembered.merged else status.HTTP_201_CREATED
        body = {**FactOutput(remembered.fact).data, "merged": remembered.merged}
        return Response(body, status=code)


class MemoryEraseApi(APIView):
    @extend_schema_serializer(component_name="MemoryErased")
    class OutputSerializer(serializers.Serializer):
        user = serializers.CharField()
        deleted = serializers.IntegerField()

    @extend_schema(
        request=UserInput,
        responses={200: OutputSerializer, **error_responses(400, 401, 413, 415, 503)},
    )
    def post(self, request: Request) -> Response:
        data = UserInput(data=request.data)
        data.is_valid(raise_exception=True)
        project = authorise_server(request, data.validated_data["project"])
        user = data.validated_data["user"]
        try:
            deleted = memory_erase_user(project=project, user_key=user)
        except Exception as exc:
            raise ApiError("unavailable", UNAVAILABLE, status.HTTP_503_SERVICE_UNAVAILABLE) from exc
        return Response(self.OutputSerializer({"user": user, "deleted": deleted}).data)
