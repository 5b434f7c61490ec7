"""/readyz checks each configured dependency for real (a refused port is a real refusal);
/healthz stays a liveness probe that looks at nothing."""

from __future__ import annotations

import os

import pytest

from tests.fake_ollama import unused_url

pytestmark = pytest.mark.django_db


def test_on_the_embedded_defaults_only_the_database_is_checked(client, settings):
    settings.REDIS_URL = settings.CHROMA_URL = settings.OLLAMA_HOST = ""
    response = client.get("/readyz")
    assert response.status_code == 200
    body = response.json()
    assert body["ok"] is True and list(body["checks"]) == ["database"]
    assert body["checks"]["database"]["ok"] is True


def test_a_configured_server_that_is_down_makes_it_not_ready_and_is_named(client, settings):
    settings.REDIS_URL = unused_url().replace("http://", "redis://") + "/0"
    settings.CHROMA_URL = unused_url()
    settings.OLLAMA_HOST = ""
    response = client.get("/readyz")
    assert response.status_code == 503
    checks = response.json()["checks"]
    assert checks["database"]["ok"] is True
    assert checks["redis"]["ok"] is False and "Connection" in checks["redis"]["error"]
    assert checks["chroma"]["ok"] is False and checks["chroma"]["error"]
    # Liveness does not care: the process itself is fine.
    assert client.get("/healthz").json() == {"ok": True}


def test_ollama_is_checked_when_configured(client, settings, fake_ollama):
    settings.REDIS_URL = settings.CHROMA_URL = ""
    settings.OLLAMA_HOST = fake_ollama.url
    assert client.get("/readyz").json()["checks"]["ollama"]["ok"] is True
    settings.OLLAMA_HOST = unused_url()
    response = client.get("/readyz")
    assert response.status_code == 503 and response.json()["checks"]["ollama"]["ok"] is False


@pytest.mark.skipif(not os.environ.get("REDIS_URL"), reason="the PostgreSQL + Redis pass")
def test_on_the_scale_out_path_the_real_redis_and_database_are_ready(client):
    response = client.get("/readyz")
    assert response.status_code == 200, response.json()
    assert set(response.json()["checks"]) >= {"database", "redis"}
