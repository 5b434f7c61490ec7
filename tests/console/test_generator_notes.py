"""Under the project's generator choice, the console says how fast each generator answers on
this server (from the log) and warns where one will be slow or cannot answer."""

from __future__ import annotations

import re

import pytest

from assistant.models import Interaction, Project

pytestmark = pytest.mark.django_db


def notes(client, project: Project) -> dict[str, str]:  # noqa: ANN001
    html = client.get(f"/admin/projects/{project.pk}/").content.decode()
    found = re.findall(r'<div data-generator="(\w+)">(.*?)</div>', html, re.S)
    return {choice: " ".join(re.sub(r"<[^>]+>", " ", body).split()) for choice, body in found}


def answered(project: Project, generator: str, first_ms: float, total_ms: float, n: int) -> None:
    Interaction.objects.bulk_create(
        Interaction(
            project=project,
            channel="widget",
            question=f"q{i}",
            answer="a",
            generator=generator,
            latency_ms={"first_token_ms": first_ms, "total_ms": total_ms},
            total_ms=total_ms,
        )  # fmt: skip
        for i in range(n)
    )


def test_the_local_model_is_said_to_be_missing_until_it_is_fetched(
    staff_client, settings, tmp_path
):  # noqa: ANN001
    project = Project.objects.create(name="Docs")
    settings.ASKDOCS_LOCAL_MODEL = tmp_path / "absent.gguf"

    shown = notes(staff_client, project)

    assert "Not measured on this server yet" in shown["local"]
    assert "Cannot answer on this server" in shown["local"]
    assert "manage.py fetch_model" in shown["local"]
    assert "answers are quoted until then" in shown["local"]


def test_measured_speeds_come_from_this_servers_answers_and_a_slow_one_is_flagged(
    staff_client, settings, tmp_path
):  # noqa: ANN001
    project = Project.objects.create(name="Docs")
    model = tmp_path / "model.gguf"
    model.write_bytes(b"GGUF")
    settings.ASKDOCS_LOCAL_MODEL = model
    answered(project, "local:qwen", first_ms=7000, total_ms=16000, n=5)
    answered(project, "extractive", first_ms=3, total_ms=180, n=3)

    shown = notes(staff_client, project)

    assert (
        "first words 7 s after the question, whole answer in 16 s (median of the last 5 answers)"
        in (shown["local"])
    )
    assert "Slow here: 16 s per answer" in shown["local"]
    assert "whole answer in 0.2 s (median of the last 3 answers)" in shown["extractive"]
    assert "OLLAMA_HOST is not set" in shown["ollama"]


def test_a_fast_local_model_gets_no_warning(staff_client, settings, tmp_path):  # noqa: ANN001
    project = Project.objects.create(name="Docs")
    model = tmp_path / "model.gguf"
    model.write_bytes(b"GGUF")
    settings.ASKDOCS_LOCAL_MODEL = model
    answered(project, "local:qwen", first_ms=900, total_ms=2500, n=4)

    shown = notes(staff_client, project)

    assert "whole answer in 2.5 s" in shown["local"]
    assert "Slow" not in shown["local"] and "Cannot" not in shown["local"]


def test_a_quoted_answers_first_words_count_from_the_question_as_a_visitor_sees_them(
    staff_client,
):  # noqa: ANN001
    project = Project.objects.create(name="Docs")
    Interaction.objects.bulk_create(
        Interaction(
            project=project,
            channel="widget",
            question=f"q{i}",
            answer="a",
            generator="extractive",
            total_ms=1200,
            # a second of retrieval and the check, then 3 ms to the first quoted word
            latency_ms={"rerank_ms": 900, "first_token_ms": 3, "generate_ms": 20, "total_ms": 1200},
        )  # fmt: skip
        for i in range(3)
    )
    shown = notes(staff_client, project)
    assert "first words 1.2 s after the question" in shown["extractive"]
    assert "0 s after" not in shown["extractive"]
