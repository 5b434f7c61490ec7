"""The HTTP API of the widget and of server-side integrations. One view per endpoint."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from assistant.ask import services
from assistant.ask.api_errors import ApiError
from assistant.ask.ratelimits import RATE_LIMITED, ask_is_limited
from assistant.ask.selectors import conversation_history, project_by_key
from assistant.memory.identity import IdentityError, check_user_key, user_key_from
from assistant.models import Interaction, Project
from assistant.rag.types import Question, Settings
from assistant.wiring import runtime
from ingestion.selectors import chunks_by_vector_id


def authorise(request: Request, key: str) -> Project:
    """A request is let in by the project's public key and an allowed Origin (browsers), or
    by the project's secret key as a Bearer token (servers, which send no Origin)."""
    project = project_by_key(key)
    if project is None:
        raise ApiError("unknown_project", "Unknown project key.", status.HTTP_401_UNAUTHORIZED)
    origin = request.headers.get("Origin")
    if origin:
        if not project.allows_origin(origin):
            raise ApiError(
                "origin_not_allowed",
                f"Origin {origin} is not allowed for this project.",
                status.HTTP_403_FORBIDDEN,
            )
        return project
    bearer = request.headers.get("Authorization", "").removeprefix("Bearer ").strip()
    if bearer and bearer == project.secret_key:
        return project
    raise ApiError(
        "origin_required",
        "Send the request from an allowed origin, or authenticate with the project's secret key.",
        status.HTTP_403_FORBIDDEN,
    )


class QuestionInput(serializers.Serializer):
    project = serializers.CharField(required=False, max_length=64, help_text="Public key")
    question = serializers.CharField(max_length=settings.ASKDOCS_MAX_QUESTION_CHARS)
    topic = serializers.CharField(required=False, allow_blank=True, max_length=200, default="")

    def project_key(self, request: Request) -> str:
        return self.validated_data.get("project") or request.headers.get("X-Project-Key", "")


class SourceOutput(serializers.Serializer):
    n = serializers.IntegerField()
    title = serializers.CharField()
    url = serializers.CharField()
    relevance = serializers.FloatField(allow_null=True)


class AskApi(APIView):
    class InputSerializer(QuestionInput):
        conversation_id = serializers.CharField(required=False, allow_blank=True, max_length=64)
        # Whose memory to use: a widget-style identity, or (secret key only) a user key.
        visitor_id = serializers.CharField(required=False, allow_blank=True, max_length=64)
        user_id = serializers.CharField(required=False, allow_blank=True, max_length=100)
        user_hash = serializers.CharField(required=False, allow_blank=True, max_length=64)
        user = serializers.CharField(required=False, allow_blank=True, max_length=120)

    class OutputSerializer(serializers.Serializer):
        answer_id = serializers.CharField()
        answer = serializers.CharField()
        refused = serializers.BooleanField()
        sources = SourceOutput(many=True)

    @extend_schema(request=InputSerializer, responses=OutputSerializer)
    def post(self, request: Request) -> Response:
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        project = authorise(request, data.project_key(request))
        conversation_id = data.validated_data.get("conversation_id", "")
        user_key = _user_key(request, project, data.validated_data)
        if ask_is_limited(
            client=request.META.get("REMOTE_ADDR", ""), conversation_id=conversation_id
        ):
            raise ApiError("rate_limited", RATE_LIMITED, status.HTTP_429_TOO_MANY_REQUESTS)
        result = services.ask(
            project=project,
            question=data.validated_data["question"],
            topic=data.validated_data["topic"],
            channel=Interaction.Channel.API,
            conversation_id=conversation_id,
            history=conversation_history(project=project, conversation_id=conversation_id),
            user_key=user_key,
        )
        if result.error:
            raise ApiError(result.error, result.answer, status.HTTP_503_SERVICE_UNAVAILABLE)
        return Response(self.OutputSerializer(result).data)


def _user_key(request: Request, project: Project, data: dict[str, Any]) -> str:
    try:
        if data.get("user"):
            bearer = request.headers.get("Authorization", "").removeprefix("Bearer ").strip()
            if request.headers.get("Origin") or bearer != project.secret_key:
                raise IdentityError("Only the project's secret key may name a user directly.")
            return check_user_key(data["user"])
        return user_key_from(data, project=project)
    except IdentityError as error:
        raise ApiError("invalid_identity", str(error)) from None


class RetrieveApi(APIView):
    class InputSerializer(QuestionInput):
        num_results = serializers.IntegerField(required=False, default=5, min_value=1, max_value=50)
        rerank = serializers.BooleanField(required=False, default=True)

    class OutputSerializer(serializers.Serializer):
        class ChunkOutput(serializers.Serializer):
            id = serializers.CharField(source="chunk.id")
            title = serializers.CharField(source="chunk.title")
            url = serializers.CharField(source="chunk.url")
            text = serializers.CharField(source="chunk.text")
            similarity = serializers.FloatField()
            relevance = serializers.FloatField(allow_null=True)
            relevant = serializers.BooleanField(source="kept")

        query = serializers.CharField()
        chunks = ChunkOutput(many=True, source="candidates")

    @extend_schema(request=InputSerializer, responses=OutputSerializer)
    def post(self, request: Request) -> Response:
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        project = authorise(request, data.project_key(request))
        wanted = data.validated_data["num_results"]
        knobs = Settings(
            threshold=project.threshold,
            num_candidates=max(project.num_candidates, wanted),
            max_kept=wanted,
            rerank=data.validated_data["rerank"],
        )
        question = Question(data.validated_data["question"], data.validated_data["topic"])
        try:
            retriever = runtime.answer_retriever(project_id=project.id, chunks=chunks_by_vector_id)
            retrieval = retriever.retrieve(question, knobs, {"project_id": project.id})
        except Exception as exc:
            raise ApiError(
                "unavailable", services.UNAVAILABLE, status.HTTP_503_SERVICE_UNAVAILABLE
            ) from exc
        retrieval.candidates = retrieval.candidates[:wanted]
        return Response(self.OutputSerializer(retrieval).data)
