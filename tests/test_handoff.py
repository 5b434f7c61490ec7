""" "Ask a person": the handoff door (the one intake), its delivery by Django's mail backend or
to a webhook in the background (retried), and the console's list. The webhook is a local HTTP
server (the outside world, faked at its edge); everything else is real."""

from __future__ import annotations

import hashlib
import hmac
import json
import time
from collections.abc import Iterator

import pytest
from django.core import mail
from django.core.exceptions import ValidationError
from django.core.mail import EmailMessage, get_connection

from assistant.handoff.models import Handoff
from assistant.models import Interaction, Project
from assistant.rag.types import SORRY
from tests.celery_worker import tasks_in_this_process
from tests.conftest import secret_of
from tests.fake_webhook import FakeWebhook
from tests.ingestion.site_server import Listener

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("allow_loopback")]

ORIGIN = "https://app.example.com"
PAGE = "https://app.example.com/billing?tab=plans"


@pytest.fixture(autouse=True)
def _background_in_this_process() -> Iterator[None]:
    """The embedded default: deliveries run on this process's background thread (also on the
    suite's Redis pass; tests/test_handoff_worker.py covers a real worker)."""
    with tasks_in_this_process():
        yield


@pytest.fixture
def project() -> Project:
    project = Project.objects.create(name="Shop", allowed_origins=[ORIGIN])
    # A conversation as the doors log it: an answer with its source, then a refusal that
    # offered a related page.
    for question, answer, refused, sources, related in [
        ("How do I get my money back?", "Open Billing > Invoices and click Request refund [1].",
         False, [{"n": 1, "title": "Refunds", "url": "https://help.example/refunds",
                  "relevance": 0.99}], []),
        ("Can I pay my invoice by cheque?", SORRY, True, [],
         [{"title": "Invoices", "url": "https://help.example/plans#invoices",
           "relevance": 0.71}]),
    ]:  # fmt: skip
        Interaction.objects.create(
            project=project, channel="widget", conversation_id="c0ffee", question=question,
            retrieval_query=question, answer=answer, refused=refused, sources=sources,
            related=related,
        )  # fmt: skip
    return project


def support(project: Project, via: str, target: str) -> Project:
    project.contact_support, project.contact_support_target = via, target
    project.full_clean()
    project.save()
    return project


def hand_over(client, project: Project, origin: str = ORIGIN, **body):  # noqa: ANN001, ANN201
    payload = {"project": project.public_key, "conversation_id": "c0ffee", **body}
    return client.post(
        "/api/v1/handoff", json.dumps(payload), content_type="application/json",
        HTTP_ORIGIN=origin,
    )  # fmt: skip


def settled(handoff_id: int, timeout: float = 20.0) -> Handoff:
    """The handoff once its background delivery has finished (sent or failed)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        handoff = Handoff.objects.get(pk=handoff_id)
        if handoff.status in (Handoff.Status.SENT, Handoff.Status.WRITTEN, Handoff.Status.FAILED):
            return handoff
        time.sleep(0.05)
    raise AssertionError(f"handoff {handoff_id} still {handoff.status}")


def test_it_mails_the_conversation_to_support_with_the_visitors_address(client, project):
    support(project, "email", "help@shop.example")
    response = hand_over(client, project, email="ada@example.org", page_url=PAGE)
    assert response.status_code == 201, response.content
    body = response.json()
    assert body["via"] == "email" and body["url"] == ""
    assert "A person will reply to ada@example.org" in body["message"]

    handoff = settled(body["handoff_id"])
    assert (handoff.status, handoff.attempts, handoff.error) == ("sent", 1, "")
    [sent] = mail.outbox
    assert sent.to == ["help@shop.example"] and sent.reply_to == ["ada@example.org"]
    assert "[Shop]" in sent.subject
    text = sent.body
    # The questions, the answers, the sources, the page offered, the page the visitor was on.
    assert text.index("How do I get my money back?") < text.index("Can I pay my invoice")
    assert "Request refund" in text and "https://help.example/refunds" in text
    assert "Offered page: Invoices https://help.example/plans#invoices" in text
    assert f"Page: {PAGE}" in text and "ada@example.org" in text


def test_without_an_email_the_visitor_is_told_support_cannot_reply(client, project):
    support(project, "email", "help@shop.example")
    body = hand_over(client, project).json()
    assert "can't reply to you directly" in body["message"]
    assert settled(body["handoff_id"]).status == "sent" and mail.outbox[0].reply_to == []


def test_a_webhook_gets_signed_json_and_is_retried_until_it_takes_it(client, project):
    key = secret_of(project)  # the signature is keyed by the project's secret key
    with FakeWebhook() as hook:
        support(project, "webhook", hook.url)
        hook.fail_next(2, status=503)
        body = hand_over(client, project, email="ada@example.org", page_url=PAGE).json()
        handoff = settled(body["handoff_id"])
        assert (handoff.status, handoff.attempts, hook.attempts) == ("sent", 3, 3)
        [delivery] = hook.received
    sent = delivery["body"]
    assert sent["conversation_id"] == "c0ffee" and sent["email"] == "ada@example.org"
    assert sent["page_url"] == PAGE and sent["project"] == "Shop"
    assert [x["question"] for x in sent["exchanges"]] == [
        "How do I get my money back?", "Can I pay my invoice by cheque?",
    ]  # fmt: skip
    assert sent["exchanges"][0]["sources"] == [
        {"title": "Refunds", "url": "https://help.example/refunds"}
    ]
    assert sent["exchanges"][1]["refused"] is True
    expected = hmac.new(key.encode(), delivery["raw"], hashlib.sha256).hexdigest()
    assert delivery["headers"]["X-AskAI-Signature"] == f"sha256={expected}"


def test_a_webhook_that_refuses_is_not_retried_and_the_failure_is_recorded(client, project):
    with FakeWebhook() as hook:
        support(project, "webhook", hook.url)
        hook.fail_next(1, status=410)
        handoff = settled(hand_over(client, project).json()["handoff_id"])
        assert hook.attempts == 1
    assert (handoff.status, handoff.attempts, handoff.error) == ("failed", 1, "HTTP 410")


def test_a_webhook_that_trickles_its_answer_is_cut_at_the_deadline_and_retried(
    client, project, settings
):
    """The timeout bounds a whole delivery: a receiver sending a byte every 0.3 s once held a
    delivery (and the lane behind it) as long as it liked."""
    settings.ASKDOCS_HANDOFF_WEBHOOK_TIMEOUT = 1.0
    with FakeWebhook() as hook:
        support(project, "webhook", hook.url)
        hook.trickle_next(1, every=0.3)  # 38 bytes: about 11 s if read to the end
        handoff = settled(hand_over(client, project).json()["handoff_id"])
        assert (handoff.status, handoff.attempts, hook.attempts) == ("sent", 2, 2)


def test_a_webhook_at_an_internal_address_is_refused_at_connect_and_not_retried(client, project):
    internal = Listener("127.0.0.2")  # loopback, but not the allowed 127.0.0.1
    try:
        # stored before forms checked targets: the connection itself is checked too
        Project.objects.filter(pk=project.pk).update(
            contact_support="webhook", contact_support_target=f"{internal.url}/hooks"
        )
        handoff = settled(hand_over(client, project).json()["handoff_id"])
        assert (handoff.status, handoff.attempts) == ("failed", 1)
        assert "non-public address 127.0.0.2" in handoff.error
        assert not internal.touched()
    finally:
        internal.close()


@pytest.mark.parametrize(
    "url",
    ["http://169.254.169.254/latest/meta-data/", "http://10.0.0.1/hooks", "http://[::1]/hooks",
     "http://0.0.0.0:8000/hooks", "http://127.0.0.2:5432/", "http://127.0.0.2:6379/",
     "http://[64:ff9b::7f00:1]/hooks", "http://[2002:7f00:1::]/hooks", "http://[::]/hooks"],
)  # fmt: skip
def test_a_webhook_target_at_an_internal_address_is_refused_with_a_clear_error(project, url):
    with pytest.raises(ValidationError) as refused:
        support(project, "webhook", url)
    [message] = refused.value.message_dict["contact_support_target"]
    assert "not reachable from the server" in message and "non-public address" in message


def test_a_webhook_that_stays_down_fails_after_the_retries(client, project):
    with FakeWebhook() as hook:
        support(project, "webhook", hook.url)
        hook.fail_next(10, status=500)
        handoff = settled(hand_over(client, project).json()["handoff_id"])
        assert hook.attempts == 6  # the first attempt and five retries
    assert (handoff.status, handoff.attempts) == ("failed", 6)


def test_a_support_page_is_opened_and_the_handoff_recorded(client, project):
    support(project, "link", "https://shop.example/contact")
    body = hand_over(client, project, page_url=PAGE).json()
    assert body["via"] == "link" and body["url"] == "https://shop.example/contact"
    assert "support page opens" in body["message"]
    handoff = Handoff.objects.get(pk=body["handoff_id"])
    assert handoff.status == "opened" and len(handoff.exchanges) == 2 and not mail.outbox


@pytest.mark.parametrize(
    ("body", "origin", "status", "code"),
    [
        ({"conversation_id": "nope"}, ORIGIN, 400, "unknown_conversation"),
        ({"conversation_id": ""}, ORIGIN, 400, "unknown_conversation"),
        ({"email": "not-an-address"}, ORIGIN, 400, "invalid"),
        ({"page_url": "javascript:alert(1)"}, ORIGIN, 400, "invalid"),
        ({"message": "x" * 1001}, ORIGIN, 400, "invalid"),
        ({}, "https://evil.example", 403, "origin_not_allowed"),
    ],
)
def test_the_intake_refuses_bad_handoffs_and_records_nothing(
    client, project, body, origin, status, code
):
    support(project, "email", "help@shop.example")
    response = hand_over(client, project, origin=origin, **body)
    assert response.status_code == status, response.content
    assert response.json()["error"]["code"] == code
    assert not Handoff.objects.exists() and not mail.outbox


def test_a_project_without_contact_support_offers_no_handoff(client, project):
    response = hand_over(client, project)
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "no_contact_support"
    assert not Handoff.objects.exists()


def test_handoffs_are_rate_limited_per_conversation(client, project, settings):
    support(project, "link", "https://shop.example/contact")
    settings.ASKDOCS_RATE_HANDOFF_PER_CONVERSATION = "2/h"
    assert [hand_over(client, project).status_code for _ in range(3)] == [201, 201, 429]
    assert Handoff.objects.count() == 2


def test_the_console_lists_the_handoffs_with_their_conversation(client, project, django_user_model):
    support(project, "email", "help@shop.example")
    handoff = settled(hand_over(client, project, email="ada@example.org", page_url=PAGE).json()[
        "handoff_id"])  # fmt: skip
    staff = django_user_model.objects.create_user("ada", password="pw-ada-123", is_staff=True)
    client.force_login(staff)
    html = client.get("/admin/handoffs/", {"project": project.pk}).content.decode()
    assert html.count('data-testid="handoff"') == 1
    assert "ada@example.org" in html and "2 exchanges" in html and "Sent" in html
    assert "Can I pay my invoice by cheque?" in html and handoff.target in html


def test_without_a_mail_server_the_console_says_the_mail_was_only_written_to_outbox(
    client, project, django_user_model, settings, tmp_path
):
    settings.EMAIL_BACKEND = "assistant.handoff.outbox.OutboxBackend"
    settings.EMAIL_FILE_PATH = tmp_path / "outbox"
    support(project, "email", "help@shop.example")
    body = hand_over(client, project, email="ada@example.org").json()
    # The visitor is not told it was sent, nor to wait for a reply that cannot come.
    assert "We've sent" not in body["message"] and "will reply to" not in body["message"]
    assert body["message"].startswith("Your request is saved, but this site cannot send e-mail")
    handoff = settled(body["handoff_id"])
    assert handoff.status == Handoff.Status.WRITTEN
    [written] = (tmp_path / "outbox").iterdir()
    assert "help@shop.example" in written.read_text()

    staff = django_user_model.objects.create_user("ada", password="pw-ada-123", is_staff=True)
    client.force_login(staff)
    html = client.get("/admin/handoffs/", {"project": project.pk}).content.decode()
    assert "Written to outbox/" in html and "not sent: no mail server" in html
    assert "No mail server is configured" in html and str(tmp_path / "outbox") in html
    assert ">Sent<" not in html


def test_the_project_page_sets_contact_support_and_checks_the_address(
    client, project, django_user_model
):
    staff = django_user_model.objects.create_user("ada", password="pw-ada-123", is_staff=True)
    client.force_login(staff)
    form = {
        "name": "Shop", "allowed_origins": ORIGIN, "threshold": 0.5, "num_candidates": 20,
        "rerank_top": 8, "max_kept": 5, "generator": "auto", "sms_number": "",
        "contact_support": "email", "contact_support_target": "not an address",
    }  # fmt: skip
    response = client.post(f"/admin/projects/{project.pk}/", form)
    assert response.status_code == 200 and "Enter an e-mail address" in response.content.decode()
    response = client.post(
        f"/admin/projects/{project.pk}/", {**form, "contact_support_target": "help@shop.example"}
    )
    assert response.status_code == 302
    project.refresh_from_db()
    assert (project.contact_support, project.contact_support_target) == (
        "email", "help@shop.example",
    )  # fmt: skip


def test_the_console_pages_handoffs_and_htmx_gets_the_list_alone(
    client, project, django_user_model
):
    support(project, "link", "https://shop.example/contact")
    for _ in range(25):
        Handoff.objects.create(project=project, conversation_id="c0ffee", via="link",
                               target="https://shop.example/contact", status="opened")  # fmt: skip
    staff = django_user_model.objects.create_user("ada", password="pw-ada-123", is_staff=True)
    client.force_login(staff)
    first = client.get("/admin/handoffs/", {"project": project.pk}).content.decode()
    assert first.count('data-testid="handoff"') == 20 and "Page 1 of 2" in first
    more = client.get(
        "/admin/handoffs/", {"project": project.pk, "page": 2}, HTTP_HX_REQUEST="true"
    )
    html = more.content.decode()
    assert "<html" not in html and html.count('data-testid="handoff"') == 5
    assert html.lstrip().startswith('<section class="card" id="handoffs">')


def test_the_outbox_keeps_each_mail_in_a_file_of_its_own(settings, tmp_path):
    """Erasure and retention delete an outbox file by the handoff it holds: a file shared by
    two mails (Django's file backend appends one connection's mails, and names a file by the
    second) would take the other person's mail with it."""
    settings.EMAIL_BACKEND = "assistant.handoff.outbox.OutboxBackend"
    settings.EMAIL_FILE_PATH = tmp_path
    mails = [
        EmailMessage(subject=f"handoff {n}", body=f"Conversation id: c{n} (handoff {n})",
                     to=["help@shop.example"])
        for n in range(3)
    ]  # fmt: skip
    with get_connection() as connection:
        assert connection.send_messages(mails[:2]) == 2
    mails[2].send()
    texts = sorted(path.read_text() for path in tmp_path.iterdir())
    assert len(texts) == 3
    assert [sum(f"(handoff {n})" in text for text in texts) for n in range(3)] == [1, 1, 1]
