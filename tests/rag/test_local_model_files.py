"""The local model's file: joined from wheels read as zip archives (never installed), refused
unless it is exactly the pinned file. Small synthetic wheels stand in for the 22 real ones,
whose download and join `.bin/test` runs for real (manage.py fetch_model)."""

from __future__ import annotations

import hashlib
import zipfile
from dataclasses import replace
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from assistant.wiring.adapters.gguf_files import (
    QWEN25_CODER_15B,
    LocalModelError,
    OfficialModel,
    WheelPart,
    assemble,
    expected_sha256,
    verify_model_file,
)

PIECES = [b"GGUF" + bytes(range(256)) * 40, b"middle piece " * 500, b"the end\n" * 3]


def _model(folder: Path, pieces: list[bytes] = PIECES) -> OfficialModel:
    """Wheels in `folder` holding `pieces`, and the model they make up."""
    parts = []
    for number, piece in enumerate(pieces, start=1):
        project = f"fake-model-part{number}"
        member = f"fake_model_part{number}/data/part{number:02d}.bin"
        part = WheelPart(project=project, version="0.2.0", sha256="", member=member)
        wheel = folder / part.filename
        with zipfile.ZipFile(wheel, "w") as archive:
            archive.writestr(f"fake_model_part{number}/__init__.py", "")
            archive.writestr(member, piece)
        parts.append(replace(part, sha256=hashlib.sha256(wheel.read_bytes()).hexdigest()))
    whole = b"".join(pieces)
    return OfficialModel(
        name="fake", filename="fake.gguf", size=len(whole),
        sha256=hashlib.sha256(whole).hexdigest(), licence="MIT", publisher_url="",
        parts=tuple(parts),
    )  # fmt: skip


def test_the_pieces_are_joined_in_order_and_checked(tmp_path: Path) -> None:
    model = _model(tmp_path)
    target = tmp_path / "models" / "fake.gguf"
    steps: list[int] = []

    digest = assemble(
        tmp_path, target, model=model, progress=lambda done, total: steps.append(done)
    )

    assert target.read_bytes() == b"".join(PIECES)
    assert digest == model.sha256
    assert steps == [1, 2, 3]
    assert [p.name for p in target.parent.iterdir()] == ["fake.gguf"]  # no temporary left


def test_a_joined_file_with_another_digest_is_refused_and_nothing_is_stored(tmp_path: Path) -> None:
    model = replace(_model(tmp_path), sha256="0" * 64)
    target = tmp_path / "models" / "fake.gguf"

    with pytest.raises(LocalModelError, match="not the official fake.*Nothing was stored"):
        assemble(tmp_path, target, model=model)

    assert list(target.parent.iterdir()) == []


def test_a_wheel_that_is_not_the_pinned_one_is_refused_before_anything_is_read(
    tmp_path: Path,
) -> None:
    model = _model(tmp_path)
    altered = tmp_path / model.parts[1].filename
    with zipfile.ZipFile(altered, "a") as archive:
        archive.writestr("extra.txt", "tampered")
    (tmp_path / model.parts[2].filename).unlink()

    with pytest.raises(LocalModelError) as caught:
        assemble(tmp_path, tmp_path / "fake.gguf", model=model)

    message = str(caught.value)
    assert f"{model.parts[1].filename} has SHA-256" in message
    assert f"{model.parts[2].filename} is missing" in message
    assert not (tmp_path / "fake.gguf").exists()


def test_a_model_file_is_verified_before_it_loads(tmp_path: Path) -> None:
    path = tmp_path / "mine.gguf"
    with pytest.raises(LocalModelError, match="missing.*manage.py fetch_model"):
        verify_model_file(path, sha256="")
    path.write_bytes(b"weights")
    verify_model_file(path, sha256="")  # nobody pinned it: only that it exists
    verify_model_file(path, sha256=hashlib.sha256(b"weights").hexdigest())
    with pytest.raises(LocalModelError, match="expected SHA-256.*refusing to load"):
        verify_model_file(path, sha256="a" * 64)


def test_a_file_named_as_the_official_model_must_be_it(tmp_path: Path) -> None:
    path = tmp_path / QWEN25_CODER_15B.filename
    path.write_bytes(b"not the model")
    assert expected_sha256(path) == QWEN25_CODER_15B.sha256
    assert expected_sha256(tmp_path / "other.gguf") == ""
    assert expected_sha256(tmp_path / "other.gguf", "AB" * 32) == "ab" * 32

    with pytest.raises(LocalModelError, match="13 bytes, not the official 1,117,320,768"):
        verify_model_file(path, sha256=expected_sha256(path))


def test_fetch_model_refuses_a_file_that_is_not_the_official_one(tmp_path: Path, settings) -> None:  # noqa: ANN001
    settings.ASKDOCS_LOCAL_MODEL = tmp_path / "models" / QWEN25_CODER_15B.filename
    impostor = tmp_path / "download.gguf"
    impostor.write_bytes(b"GGUF" + b"\0" * 100)

    with pytest.raises(CommandError, match="not the official 1,117,320,768"):
        call_command("fetch_model", from_file=impostor)

    assert not settings.ASKDOCS_LOCAL_MODEL.exists()


def test_fetch_model_gets_only_the_official_file(tmp_path: Path, settings) -> None:  # noqa: ANN001
    settings.ASKDOCS_LOCAL_MODEL = tmp_path / "my-own-model.gguf"
    with pytest.raises(
        CommandError, match="only gets the official file.*ASKDOCS_LOCAL_MODEL_SHA256"
    ):
        call_command("fetch_model")
