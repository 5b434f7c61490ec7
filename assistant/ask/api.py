"""The HTTP API of the widget and of server-side integrations. One view per endpoint."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.conf import settings
from drf_spectacular.utils import extend_schema, extend_schema_serializer
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from assistant import admission
from assistant.api_errors import INTAKE_ERRORS, ApiError, error_responses
from assistant.ask import intake, search, services
from assistant.ask.intake import MAX_TOPIC_CHARS, Caller
from assistant.ask.selectors import suggested_questions
from assistant.errors import UNAVAILABLE, IntakeError
from assistant.models import Interaction
from assistant.rag.types import Question


def body_of(request: Request) -> Mapping[str, Any]:
    """The parsed body: a JSON object (the intake's parser refuses anything else), or an empty
    mapping for an empty body."""
    data = request.data
    return data if isinstance(data, Mapping) else {}


def caller_of(request: Request) -> Caller:
    """Who knocks on a REST door; the project key comes from the body or X-Project-Key."""
    key = body_of(request).get("project")
    return Caller.from_headers(
        request.headers, key=key if isinstance(key, str) else "",
        client=request.META.get("REMOTE_ADDR", ""),
    )  # fmt: skip


def door_schema(request: type, response: type) -> Any:
    """The schema of a door of the one intake: its body, its answer and the intake's errors."""
    return extend_schema(
        request=request, responses={200: response, **error_responses(*INTAKE_ERRORS)}
    )


class QuestionInput(serializers.Serializer):
    project = serializers.CharField(required=False, max_length=64, help_text="Public key")
    question = serializers.CharField(max_length=settings.ASKDOCS_MAX_QUESTION_CHARS)
    topic = serializers.CharField(
        required=False, allow_blank=True, max_length=MAX_TOPIC_CHARS, default=""
    )


class SourceOutput(serializers.Serializer):
    n = serializers.IntegerField()
    title = serializers.CharField()
    url = serializers.CharField()
    relevance = serializers.FloatField(allow_null=True)
    #: An answer the project's team wrote (a curated answer), shown as such.
    curated = serializers.BooleanField(default=False)


class RelatedOutput(serializers.Serializer):
    title = serializers.CharField()
    url = serializers.CharField()
    relevance = serializers.FloatField()


class AskApi(APIView):
    @extend_schema_serializer(component_name="AskRequest")
    class InputSerializer(QuestionInput):
        conversation_id = serializers.CharField(required=False, allow_blank=True, max_length=64)
        # Whose memory to use: a widget-style identity, or (secret key only) a user key.
        visitor_id = serializers.CharField(required=False, allow_blank=True, max_length=64)
        user_id = serializers.CharField(required=False, allow_blank=True, max_length=100)
        user_hash = serializers.CharField(required=False, allow_blank=True, max_length=64)
        user = serializers.CharField(required=False, allow_blank=True, max_length=120)

    @extend_schema_serializer(component_name="AskResponse")
    class OutputSerializer(serializers.Serializer):
        answer_id = serializers.CharField()
        answer = serializers.CharField()
        refused = serializers.BooleanField()
        sources = SourceOutput(many=True)
        conversation_id = serializers.CharField(
            help_text="Send it back with a follow-up question to continue the conversation."
        )
        generator = serializers.CharField(
            help_text="What wrote the answer: extractive, ollama, memory, or empty for a refusal."
        )
        fallback = serializers.CharField(
            help_text="Why the project's generator's text does not stand, as a short code "
            "(busy, unavailable, late, stopped, omits, ungrounded, cut, refused, empty), or "
            "empty. The model server's own words are in the console's log, never here."
        )
        quote = serializers.CharField(
            help_text="With a model that writes (Ollama, the local model): the quoted answer, "
            "made from the same sources before the model wrote. `answer` is the written "
            "answer when `written` is complete, else this quote."
        )
        written = serializers.CharField(
            help_text="How the model's written answer ended: complete, busy (it could not "
            "start in time), late (not done within the server's wait), unavailable, cut, "
            "refused, ungrounded (withheld: it stated what no source holds), omits (complete "
            "but without an option, identifier or command the quote names: the quote is the "
            "answer), or empty when no model writes for this project."
        )
        truncated = serializers.BooleanField(
            help_text="The answer was cut short (it ends at a whole sentence)."
        )
        related = RelatedOutput(
            many=True,
            help_text="With a refusal: up to 3 nearest pages on the project's subject (\"These "
            'pages may help"), never an answer; empty otherwise.',
        )

    @door_schema(InputSerializer, OutputSerializer)
    def post(self, request: Request) -> Response:
        caller = caller_of(request)
        project = intake.authorise(caller)
        asked = intake.ask_request(body_of(request), project=project, caller=caller)
        # Waits its turn, or 503 busy at once; the slot is given back once the quote is done.
        with admission.admit(project.public_key) as ticket:
            result = services.ask(asked, channel=Interaction.Channel.API, on_written=ticket.release)
        if result.error:
            raise ApiError(result.error, result.answer, status.HTTP_503_SERVICE_UNAVAILABLE)
        result.conversation_id = asked.conversation_id
        return Response(self.OutputSerializer(result).data)


class RetrieveApi(APIView):
    @extend_schema_serializer(component_name="RetrieveRequest")
    class InputSerializer(QuestionInput):
        num_results = serializers.IntegerField(required=False, default=5, min_value=1, max_value=50)
        rerank = serializers.BooleanField(required=False, default=True)

    @extend_schema_serializer(component_name="RetrieveResponse")
    class OutputSerializer(serializers.Serializer):
        @extend_schema_serializer(component_name="RetrievedChunk")
        class ChunkOutput(serializers.Serializer):
            id = serializers.CharField(source="chunk.id")
            title = serializers.CharField(source="chunk.title")
            url = serializers.CharField(source="chunk.url")
            text = serializers.CharField(source="chunk.text")
            similarity = serializers.FloatField(allow_null=True)
            relevance = serializers.FloatField(allow_null=True)
            relevant = serializers.BooleanField(source="kept")

        query = serializers.CharField()
        chunks = ChunkOutput(many=True, source="candidates")

    @door_schema(InputSerializer, OutputSerializer)
    def post(self, request: Request) -> Response:
        caller = caller_of(request)
        project = intake.authorise(caller)
        asked = intake.retrieve_request(body_of(request), project=project, caller=caller)
        try:
            with admission.admit(project.public_key):
                retrieval = search.retrieve(
                    project=project,
                    question=Question(asked.question, asked.topic),
                    settings=asked.settings,
                )
        except IntakeError:
            raise
        except Exception as exc:
            raise ApiError("unavailable", UNAVAILABLE, status.HTTP_503_SERVICE_UNAVAILABLE) from exc
        retrieval.candidates = retrieval.candidates[: asked.num_results]
        return Response(self.OutputSerializer(retrieval).data)


class SuggestionsApi(APIView):
    """Questions to offer in the widget's empty panel for a topic (see `suggested_questions`).
    A POST like every other door: a browser sends no Origin with a same-origin GET."""

    @extend_schema_serializer(component_name="SuggestionsRequest")
    class InputSerializer(serializers.Serializer):
        project = serializers.CharField(required=False, max_length=64, help_text="Public key")
        topic = serializers.CharField(
            required=False, allow_blank=True, max_length=MAX_TOPIC_CHARS, default=""
        )

    @extend_schema_serializer(component_name="Suggestions")
    class OutputSerializer(serializers.Serializer):
        questions = serializers.ListField(child=serializers.CharField())

    @door_schema(InputSerializer, OutputSerializer)
    def post(self, request: Request) -> Response:
        caller = caller_of(request)
        project = intake.authorise(caller)
        topic = intake.topic_field(body_of(request))
        intake.limit("retrieve", client=caller.client)
        questions = suggested_questions(project=project, topic=topic)
        return Response(self.OutputSerializer({"questions": questions}).data)
