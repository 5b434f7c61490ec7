"""The `openai` generator at the edges a real server does not show on demand (a server that is
down, garbage in the stream, HTML from a proxy, 5xx, a stream that stops mid-answer), and the
console's settings for it: every failure ends in the quoted passages or a clear 503 error,
never a 500, and the server's API key is sealed and never shown back. The real server (llama.cpp)
is in test_openai_generator.py."""

from __future__ import annotations

import logging

import pytest

from assistant.models import Interaction, Project
from assistant.sealing import unseal
from assistant.wiring import runtime
from assistant.wiring.resilience import reset_circuits
from tests import asking
from tests.broken_openai_server import BrokenServer, chunk
from tests.fake_ollama import unused_url

pytestmark = pytest.mark.django_db

ORIGIN = "http://127.0.0.1:8000"
REFUND = {"question": "How do I get my money back?", "topic": "Billing"}
KEY = "sk-test-0123456789abcdef"


@pytest.fixture
def broken() -> BrokenServer:
    with BrokenServer() as server:
        yield server


@pytest.fixture
def openai_project(demo, settings, allow_loopback):  # noqa: ANN001, ANN201
    # The fake servers are the project's own, on loopback ports: allowed, as a deployment may.
    settings.ASKDOCS_OPENAI_TIMEOUTS = {"connect": 1.0, "first_token": 2.0, "between_tokens": 0.3}
    settings.ASKDOCS_OPENAI_BASE_URL = ""
    runtime.reset()
    reset_circuits()
    demo.generator = "openai"
    demo.save()
    yield demo
    runtime.reset()
    reset_circuits()


def use(project: Project, url: str, key: str = KEY) -> None:
    project.openai_base_url = url
    project.set_openai_api_key(key)
    project.save()


def ask_rest(client, project: Project):  # noqa: ANN001, ANN201
    return client.post(
        "/api/v1/ask", {"project": project.public_key, **REFUND},
        content_type="application/json", HTTP_ORIGIN=ORIGIN,
    )  # fmt: skip


def assert_quoted(body: dict[str, object], because: str) -> None:
    """The visitor gets the quote and a short reason; the server's own words are logged only."""
    assert body["generator"] == "extractive" and not body["refused"]
    assert "refund within 30 days" in str(body["answer"])
    assert body["fallback"] == "unavailable"
    logged = Interaction.objects.get(answer_id=body["answer_id"])
    assert logged.fallback.startswith("openai:default unavailable") and because in logged.fallback


def test_without_a_server_set_the_openai_choice_quotes(openai_project):
    result = asking.ask(project=openai_project, **REFUND)
    assert result.generator == "extractive" and "refund within 30 days" in result.answer


def test_a_server_that_is_down_is_tried_three_times_then_quoted_then_its_circuit_opens(
    openai_project, client
):
    use(openai_project, unused_url() + "/v1")
    response = ask_rest(client, openai_project)
    assert response.status_code == 200
    assert_quoted(response.json(), "cannot connect")
    logged = Interaction.objects.get(answer_id=response.json()["answer_id"])
    assert "after 3 attempts" in logged.fallback

    for _ in range(4):  # five failed calls in all open the circuit
        assert ask_rest(client, openai_project).status_code == 200
    opened = ask_rest(client, openai_project)
    assert opened.status_code == 200
    assert_quoted(opened.json(), "is open after 5 failed calls")


def test_garbage_in_the_stream_is_quoted_instead_and_not_retried(openai_project, broken, client):
    use(openai_project, broken.url)
    broken.reply(parts=[b"data: {this is not json\n\n"])
    response = ask_rest(client, openai_project)
    assert response.status_code == 200
    assert_quoted(response.json(), "malformed stream (not JSON in the event stream")
    assert broken.hits == 1


@pytest.mark.parametrize(
    ("reply", "because"),
    [
        ({"kind": "text/html", "parts": [b"<html>Bad gateway</html>"]}, "text/html, not a stream"),
        ({"parts": [b'data: {"object": "x"}\n\n']}, "a chunk without choices"),
        ({"parts": [b": keep-alive\n\n"]}, "ended without `data: [DONE]`"),
        ({"status": 404, "kind": "application/json", "parts": [b'{"error": "no route"}']},
         "not found (HTTP 404: no route); check the base URL"),
    ],
)  # fmt: skip
def test_what_is_not_an_answer_stream_is_quoted_instead(
    openai_project, broken, client, reply, because
):  # noqa: ANN001
    use(openai_project, broken.url)
    broken.reply(**reply)
    response = ask_rest(client, openai_project)
    assert response.status_code == 200
    assert_quoted(response.json(), because)


def test_no_word_or_address_of_the_model_server_reaches_the_visitor(openai_project, broken, client):
    # A server on the internal network answering with what it should never have said.
    use(openai_project, broken.url)
    broken.reply(status=404, kind="text/plain", parts=[b"no route; db_password=hunter2"])
    response = ask_rest(client, openai_project)
    public = response.content.decode()
    assert response.status_code == 200 and response.json()["fallback"] == "unavailable"
    assert "hunter2" not in public and broken.url.split("//")[1] not in public
    logged = Interaction.objects.get(answer_id=response.json()["answer_id"])
    assert "hunter2" in logged.fallback  # the console's log keeps the server's words


def test_a_server_error_is_retried_before_the_first_token_then_quoted(
    openai_project, broken, client
):
    use(openai_project, broken.url)
    broken.reply(status=500, kind="application/json", parts=[b'{"error": {"message": "oom"}}'])
    response = ask_rest(client, openai_project)
    assert_quoted(response.json(), "failed (HTTP 500): oom")
    assert broken.hits == 3


@pytest.mark.parametrize(
    "after",
    [
        [b"data: <<garbage>>\n\n"],  # malformed after the first words
        [],  # the connection closes without [DONE]
    ],
)
def test_a_stream_broken_mid_answer_leaves_the_visitor_the_quote(
    openai_project, broken, client, after
):  # noqa: ANN001
    use(openai_project, broken.url)
    broken.reply(parts=[chunk("Refunds "), chunk("take "), *after])
    response = ask_rest(client, openai_project)
    # Grounded words never wait on the model: the quote stands, with why nothing was written.
    assert response.status_code == 200
    body = response.json()
    assert body["generator"] == "extractive" and "5 to 10 business days" in body["answer"]
    assert body["fallback"] == "unavailable" and "Refunds take" not in body["answer"]


def test_a_stream_that_stalls_mid_answer_ends_after_the_between_tokens_timeout(
    openai_project, broken, client
):
    use(openai_project, broken.url)
    broken.reply(parts=[chunk("Refunds ")], stall_after=30)
    response = ask_rest(client, openai_project)
    assert response.status_code == 200
    body = response.json()
    assert "5 to 10 business days" in body["answer"] and body["fallback"] == "unavailable"
    logged = Interaction.objects.get(project=openai_project)
    # Bounded by the 0.3 s between tokens, not by the server's 30 s stall.
    assert logged.latency_ms["total_ms"] < 20_000


def test_the_key_goes_in_the_authorization_header_and_the_sites_key_only_to_the_sites_server(
    openai_project, broken, settings
):
    broken.reply(parts=[chunk("Ask for a refund [1]."), b"data: [DONE]\n\n"])
    use(openai_project, broken.url)
    assert asking.ask(project=openai_project, **REFUND).answer == "Ask for a refund [1]."
    assert broken.authorizations == [f"Bearer {KEY}"]

    # The project names a server but no key: the site's key is not sent to it.
    settings.ASKDOCS_OPENAI_BASE_URL = "http://models.internal:8000/v1"
    settings.ASKDOCS_OPENAI_API_KEY = "sk-site-secret-key-000"
    use(openai_project, broken.url, key="")
    asking.ask(project=openai_project, **REFUND)
    assert broken.authorizations[-1] == ""

    # No URL of its own: the site's server, with the site's key.
    settings.ASKDOCS_OPENAI_BASE_URL = broken.url
    use(openai_project, "", key="")
    asking.ask(project=openai_project, **REFUND)
    assert broken.authorizations[-1] == "Bearer sk-site-secret-key-000"


@pytest.fixture
def staff_client(client, django_user_model):  # noqa: ANN001, ANN201
    client.force_login(
        django_user_model.objects.create_user("ada", password="pw-ada-123", is_staff=True)
    )
    return client


def settings_form(project: Project, **changes: str) -> dict[str, str]:
    form = {
        "name": project.name, "allowed_origins": "\n".join(project.allowed_origins),
        "threshold": str(project.threshold), "num_candidates": str(project.num_candidates),
        "rerank_top": str(project.rerank_top), "max_kept": str(project.max_kept),
        "generator": "openai", "openai_base_url": "http://gpu-box:8000/v1",
        "openai_model": "qwen", "contact_support": "",
    }  # fmt: skip
    return {**form, **changes}


def test_the_console_seals_the_key_and_never_shows_it_back(openai_project, staff_client, caplog):
    caplog.set_level(logging.DEBUG)
    page = f"/admin/projects/{openai_project.pk}/"
    secret = "sk-live-abcdefghijklmnop-WXYZ"
    saved = staff_client.post(page, settings_form(openai_project, openai_api_key=secret))
    assert saved.status_code == 302

    openai_project.refresh_from_db()
    assert (openai_project.openai_base_url, openai_project.openai_model) == (
        "http://gpu-box:8000/v1", "qwen",
    )  # fmt: skip
    assert secret not in openai_project.openai_api_key_sealed
    assert unseal(openai_project.openai_api_key_sealed) == secret
    html = staff_client.get(page).content.decode()
    assert "set, ending …WXYZ" in html and secret not in html
    assert "Asks http://gpu-box:8000/v1, model qwen." in html

    # An empty field keeps the stored key; a wrong form does not echo a typed one.
    staff_client.post(page, settings_form(openai_project))
    openai_project.refresh_from_db()
    assert unseal(openai_project.openai_api_key_sealed) == secret
    rejected = staff_client.post(
        page, settings_form(openai_project, openai_base_url="not a url", openai_api_key="sk-new-1")
    )
    assert rejected.status_code == 200 and "sk-new-1" not in rejected.content.decode()

    staff_client.post(page, settings_form(openai_project, openai_api_key_clear="on"))
    openai_project.refresh_from_db()
    assert openai_project.openai_api_key_sealed == "" and openai_project.openai_api_key_hint == ""
    assert secret not in caplog.text and "sk-new-1" not in caplog.text


def test_the_console_says_when_no_server_is_set(openai_project, staff_client):
    html = staff_client.get(f"/admin/projects/{openai_project.pk}/").content.decode()
    assert "No server set (Server base URL below, or ASKDOCS_OPENAI_BASE_URL)" in html


def test_a_server_that_quotes_the_refused_key_back_does_not_get_it_logged(
    openai_project, broken, client, caplog
):
    caplog.set_level(logging.DEBUG)
    use(openai_project, broken.url)
    broken.reply(
        status=401, kind="application/json", parts=[f'{{"error": "bad key {KEY}"}}'.encode()]
    )
    response = ask_rest(client, openai_project)
    assert_quoted(response.json(), "refused the API key (HTTP 401: bad key [the API key])")
    assert broken.hits == 1  # a refusal is not retried
    logged = Interaction.objects.get(project=openai_project)
    assert KEY not in logged.fallback and KEY not in response.content.decode()
    assert KEY not in caplog.text


INTERNAL_SERVERS = [
    "http://169.254.169.254/latest/", "http://10.0.0.1:8000/v1", "http://127.0.0.1:6379/v1",
    "http://127.0.0.1:5432", "http://[::1]:8000/v1", "http://0.0.0.0:8000/v1",
    "http://localhost:8000/v1", "http://[::]:8000/v1", "http://[64:ff9b::7f00:1]/v1",
    "http://[2002:7f00:1::]/v1",
]  # fmt: skip


@pytest.mark.parametrize("url", INTERNAL_SERVERS)
def test_the_console_refuses_a_model_server_at_an_internal_address(
    openai_project, staff_client, settings, url
):  # noqa: ANN001
    settings.ASKDOCS_ALLOWED_PRIVATE_HOSTS = []
    page = f"/admin/projects/{openai_project.pk}/"
    response = staff_client.post(page, settings_form(openai_project, openai_base_url=url))
    assert response.status_code == 200
    html = response.content.decode()
    assert "not reachable from the server" in html and "ASKDOCS_ALLOWED_PRIVATE_HOSTS" in html
    openai_project.refresh_from_db()
    assert openai_project.openai_base_url == ""


def test_a_stored_model_server_at_an_internal_address_is_never_asked(
    openai_project, broken, settings
):
    # Saved before the check, or straight into the database: refused where it connects.
    use(openai_project, broken.url)
    settings.ASKDOCS_ALLOWED_PRIVATE_HOSTS = []
    runtime.reset()
    result = asking.ask(project=openai_project, **REFUND)
    assert result.generator == "extractive" and "refund within 30 days" in result.answer
    assert broken.hits == 0
    logged = Interaction.objects.get(project=openai_project)
    assert "non-public address 127.0.0.1" in logged.fallback
    assert "attempts" not in logged.fallback  # no retry changes an address

    # The allow-list names it: asked.
    settings.ASKDOCS_ALLOWED_PRIVATE_HOSTS = ["127.0.0.1"]
    runtime.reset()
    reset_circuits()
    broken.reply(parts=[chunk("Ask for a refund [1]."), b"data: [DONE]\n\n"])
    assert asking.ask(project=openai_project, **REFUND).answer == "Ask for a refund [1]."
    assert broken.hits == 1


def test_the_sites_own_model_server_is_reached_wherever_it_is(openai_project, broken, settings):
    # ASKDOCS_OPENAI_BASE_URL is the operator's choice, not a staff member's: no allow-list.
    settings.ASKDOCS_ALLOWED_PRIVATE_HOSTS = []
    settings.ASKDOCS_OPENAI_BASE_URL = broken.url
    runtime.reset()
    broken.reply(parts=[chunk("Ask for a refund [1]."), b"data: [DONE]\n\n"])
    assert asking.ask(project=openai_project, **REFUND).answer == "Ask for a refund [1]."
    assert broken.hits == 1
