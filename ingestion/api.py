"""HTTP API of ingestion: a webhook that pushes one approved support answer."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema, extend_schema_serializer
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from assistant.api_errors import ApiError, error_responses
from ingestion.dispatch import sync_enqueue
from ingestion.models import Source
from ingestion.support_answers import (
    MAX_TEXT,
    AnswerInput,
    ImportRejected,
    source_webhook_token_valid,
    support_answer_save,
)


class SupportAnswerApi(APIView):
    """Push one approved question/answer pair (or un-approve it with `approved: false`).
    Authenticated with the source's webhook token as `Authorization: Bearer whk_...`.
    Retried deliveries of one `id` are idempotent; the answer is indexed by a sync queued
    right away, so this answers fast."""

    @extend_schema_serializer(component_name="SupportAnswerRequest")
    class Input(serializers.Serializer):
        id = serializers.CharField(max_length=200)
        question = serializers.CharField(max_length=MAX_TEXT)
        answer = serializers.CharField(max_length=MAX_TEXT)
        url = serializers.URLField(required=False, allow_blank=True, default="", max_length=1000)
        approved = serializers.BooleanField(required=False, default=True)

    @extend_schema_serializer(component_name="SupportAnswerResponse")
    class Output(serializers.Serializer):
        id = serializers.CharField()
        status = serializers.CharField()

    @extend_schema(
        request=Input, responses={202: Output, **error_responses(400, 401, 404, 413, 415)}, auth=[]
    )
    def post(self, request: Request, source_id: int) -> Response:
        source = Source.objects.filter(pk=source_id).first()
        token = request.headers.get("Authorization", "").removeprefix("Bearer ").strip()
        # One answer for a wrong token and a missing source: do not reveal which ids exist.
        if (
            source is None
            or not token
            or not source_webhook_token_valid(source=source, token=token)
        ):
            raise ApiError(
                "invalid_token",
                "Unknown source or wrong webhook token.",
                status.HTTP_401_UNAUTHORIZED,
            )
        data = self.Input(data=request.data)
        data.is_valid(raise_exception=True)
        values = data.validated_data
        try:
            support_answer_save(
                source=source,
                answer=AnswerInput(
                    external_id=values["id"],
                    question=values["question"],
                    answer=values["answer"],
                    url=values["url"],
                    approved=values["approved"],
                ),
            )
        except ImportRejected as error:
            raise ApiError("wrong_source", str(error), status.HTTP_400_BAD_REQUEST) from error
        sync_enqueue(source=source, trigger="webhook")
        state = "approved" if values["approved"] else "unapproved"
        return Response(
            self.Output({"id": values["id"], "status": state}).data, status=status.HTTP_202_ACCEPTED
        )
