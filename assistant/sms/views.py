"""Twilio's incoming-message webhook. Thin: check the signature and the form, find the
project by the number that was texted, let the service decide the reply."""

from __future__ import annotations

import logging
import time

from django import forms
from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_POST
from twilio.request_validator import (
    SIGNATURE_HEADER,
    SIGNATURE_SETTINGS_HEADER,
    RequestValidator,
    get_signature_algorithm,
)
from twilio.twiml.messaging_response import MessagingResponse

from assistant.ask import intake
from assistant.errors import IntakeError
from assistant.sms import services
from assistant.sms.selectors import project_by_sms_number

logger = logging.getLogger(__name__)

IDEMPOTENCY_HEADER = "I-Twilio-Idempotency-Token"
#: Twilio's own limit for one inbound message.
MAX_BODY_CHARS = 1600


class InboundForm(forms.Form):
    MessageSid = forms.RegexField(regex=r"^[A-Z]{2}[0-9a-fA-F]{32}$")
    From = forms.CharField(max_length=32)
    To = forms.CharField(max_length=32)
    Body = forms.CharField(max_length=MAX_BODY_CHARS, required=False, strip=False)


def signature_is_valid(request: HttpRequest) -> bool:
    """Twilio signs the URL it called plus the posted parameters; the URL is the configured
    public one, since behind a proxy the request's own host and scheme are not."""
    signature = request.headers.get(SIGNATURE_HEADER, "")
    if not signature:
        return False
    url = settings.TWILIO_PUBLIC_BASE_URL + request.get_full_path()
    algorithm = get_signature_algorithm(request.headers.get(SIGNATURE_SETTINGS_HEADER))
    validator = RequestValidator(settings.TWILIO_AUTH_TOKEN)
    return bool(validator.validate(url, request.POST, signature, algorithm))


def twiml(reply: str | None) -> HttpResponse:
    response = MessagingResponse()
    if reply:
        response.message(reply)
    return HttpResponse(str(response), content_type="application/xml")


@csrf_exempt
@require_POST
def incoming(request: HttpRequest) -> HttpResponse:
    started = time.monotonic()
    if not (settings.TWILIO_AUTH_TOKEN and settings.TWILIO_PUBLIC_BASE_URL):
        logger.error("SMS webhook called but the SMS channel is not configured (TWILIO_*)")
        return HttpResponse("The SMS channel is not configured.\n", status=503)
    if not signature_is_valid(request):
        logger.warning(
            "SMS webhook refused: %s X-Twilio-Signature from %s",
            "bad" if request.headers.get(SIGNATURE_HEADER) else "missing",
            request.META.get("REMOTE_ADDR", "?"),
        )
        return HttpResponse("Invalid signature.\n", status=403)
    try:
        # The same text rules as every other door (no NUL, valid Unicode, words), before the form.
        intake.text_field(request.POST, "Body", max_chars=MAX_BODY_CHARS, words=True)
    except IntakeError as error:
        logger.warning("SMS webhook with a bad body: %s", error.message)
        return HttpResponse(f"{error.code}: {error.message}\n", status=error.status)
    form = InboundForm(request.POST)
    if not form.is_valid():
        logger.warning("SMS webhook with a bad form: %s", form.errors.as_json())
        return HttpResponse(f"Bad request: {form.errors.as_text()}\n", status=400)
    data = form.cleaned_data
    project = project_by_sms_number(data["To"])
    if project is None:
        logger.warning("SMS to %s: no project has this number", data["To"])
        return HttpResponse("No project answers this number.\n", status=404)
    try:
        intake.limit("sms", sender=data["From"].strip())
    except IntakeError:
        # Every reply is a paid text: a sender over the limit gets none (Twilio is told OK).
        logger.warning("SMS from %s is over the rate limit; not answered", data["From"])
        return twiml(None)
    reply = services.sms_receive(
        project=project,
        inbound=services.Inbound(
            message_sid=data["MessageSid"],
            from_number=data["From"].strip(),
            to_number=data["To"].strip(),
            body=data["Body"],
            idempotency_token=request.headers.get(IDEMPOTENCY_HEADER, "")[:128],
        ),
        started=started,
    )
    return twiml(reply)
