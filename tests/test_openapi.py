"""The OpenAPI schema is right, checked the way a client generator would find out: schemathesis
generates requests from it (valid and invalid, seeded) against the real app with a real
project, and every response must be documented, match its schema and never be a 5xx."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import schemathesis
from django.core.signals import request_finished, request_started
from django.db import close_old_connections
from hypothesis import HealthCheck, Phase
from hypothesis import settings as hypothesis_settings
from schemathesis import checks

from config.wsgi import application
from tests.conftest import secret_of
from tests.sms.conftest import restore_demo  # noqa: F401 - a fixture

# Transactional: a streamed answer is written by a worker thread on its own connection.
pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("restore_demo")]

#: What a client generated from the schema relies on: no server error, every status code and
#: content type documented, every body matching its schema. (Whether the schema's request
#: constraints are as strict as the server's own checks, e.g. the form of a user key, is
#: schemathesis' `positive_data_acceptance`: not checked here.)
CHECKS = [
    checks.not_a_server_error,
    checks.status_code_conformance,
    checks.content_type_conformance,
    checks.response_schema_conformance,
]
EXAMPLES_PER_OPERATION = 25  # 8 operations: about 200 cases, seeded and repeatable


schema = schemathesis.openapi.from_wsgi("/api/v1/schema", application)


@pytest.fixture(autouse=True)
def _requests_keep_the_test_database_open() -> Iterator[None]:
    """The app runs in this process, as under Django's test client: a finished request must
    not close the test's database connection."""
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    yield
    request_started.connect(close_old_connections)
    request_finished.connect(close_old_connections)


@pytest.fixture
def demo(transactional_db):  # noqa: ANN001, ANN201
    from assistant.demo import demo_seed

    return demo_seed().project


@pytest.fixture
def server_key(demo, settings) -> str:  # noqa: ANN001
    """A server-side caller (secret key) of the demo project; limits high enough that the
    generated requests reach the endpoints rather than the rate limiter."""
    for name in ("ASK_PER_CLIENT", "ASK_PER_CONVERSATION", "RETRIEVE_PER_CLIENT",
                 "FEEDBACK_PER_CLIENT"):  # fmt: skip
        setattr(settings, f"ASKDOCS_RATE_{name}", "10000/m")
    return secret_of(demo)


@schema.parametrize()
# schemathesis calls the app through WSGI, where Django warns that it reads the stream door's
# async iterator synchronously; the product serves that door under ASGI only (daphne), where
# it streams as written (tests/test_sse.py, tests/test_served_streams.py).
@pytest.mark.filterwarnings("ignore:StreamingHttpResponse must consume asynchronous iterators")
@hypothesis_settings(
    max_examples=EXAMPLES_PER_OPERATION,
    derandomize=True,
    deadline=None,
    phases=[Phase.explicit, Phase.generate],
    suppress_health_check=list(HealthCheck),
)
def test_every_response_is_documented_and_never_a_server_error(case, server_key, demo) -> None:  # noqa: ANN001
    # The generated project key is almost never the demo's: where one is given, it is the
    # demo's, so that generated questions get past authorisation into the answer path.
    for given in (case.body, case.query):
        if isinstance(given, dict) and "project" in given:
            given["project"] = demo.public_key
    case.call_and_validate(headers={"Authorization": f"Bearer {server_key}"}, checks=CHECKS)
