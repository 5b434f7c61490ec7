"""Files sources: Markdown, HTML, PDF, text and zips of them; bad files are reported by name
and nothing of them is indexed, while the good files are."""

from __future__ import annotations

import io
import zipfile

import pytest

from ingestion.connectors.files import source_folder
from ingestion.models import Source, SyncRun
from ingestion.sync import source_sync
from ingestion.uploads import UploadRejected, source_file_add, source_file_remove
from tests.ingestion.conftest import retrieved

pytestmark = pytest.mark.django_db


def pdf_with_text(text: str) -> bytes:
    """A minimal one-page PDF (hand-built: the test should not trust a PDF writer)."""
    stream = f"BT /F1 12 Tf 72 720 Td ({text}) Tj ET".encode()
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
        b"/Resources << /Font << /F1 5 0 R >> >> >>",
        b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    out = io.BytesIO(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(out.tell())
        out.write(b"%d 0 obj\n" % number + body + b"\nendobj\n")
    xref = out.tell()
    out.write(b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1))
    for offset in offsets:
        out.write(b"%010d 00000 n \n" % offset)
    out.write(
        b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    )
    return out.getvalue()


def zip_of(files: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in files.items():
            archive.writestr(name, data)
    return buffer.getvalue()


@pytest.fixture
def files(project, settings, tmp_path) -> Source:  # noqa: ANN001
    settings.DATA_DIR = tmp_path
    return Source.objects.create(project=project, kind=Source.Kind.FILES, name="files")


def test_it_indexes_each_kind_of_file_under_its_title(files, store, project) -> None:  # noqa: ANN001
    source_file_add(
        source=files, name="setup.md", data=b"# Setup\n\nPlug the sensor into port B.\n"
    )
    source_file_add(source=files, name="notes.txt", data=b"The warranty lasts three years.")
    source_file_add(
        source=files,
        name="faq.html",
        data=b"<html><head><title>FAQ | Acme</title></head><body><main><h1>Sensor FAQ</h1>"
        b"<p>The sensor battery lasts about ten months under normal use.</p></main></body></html>",
    )
    source_file_add(
        source=files,
        name="Safety Sheet.pdf",
        data=pdf_with_text("Keep the sensor away from water."),
    )
    source_file_add(
        source=files,
        name="bundle.zip",
        data=zip_of(
            {"guides/calibration.md": b"# Calibration\n\nHold the reset button for five seconds."}
        ),
    )
    run = source_sync(source=files)

    assert (run.status, run.added) == (SyncRun.Status.SUCCEEDED, 5)
    # A web page is titled by its own heading (not "faq.html"), other files by their names.
    titles = set(files.documents.values_list("title", flat=True))
    assert titles == {"setup.md", "notes.txt", "Sensor FAQ", "Safety Sheet.pdf", "calibration.md"}
    assert any("away from water" in t for t in retrieved(project, "Can the sensor get wet?"))
    assert any("reset button" in t for t in retrieved(project, "How do I calibrate?"))

    source_file_remove(source=files, name="notes.txt")
    run = source_sync(source=files)
    assert (run.removed, run.unchanged) == (1, 4)
    assert not any("warranty" in t for t in retrieved(project, "How long is the warranty?"))


def test_bad_files_are_reported_by_name_and_the_rest_is_indexed(files, store, project) -> None:  # noqa: ANN001
    folder = source_folder(files)
    source_file_add(source=files, name="good.md", data=b"Sensors report every minute.")
    source_file_add(source=files, name="image.md", data=b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    source_file_add(source=files, name="latin1.txt", data="caf\xe9".encode("latin-1"))
    with (folder / "huge.pdf").open("wb") as huge:  # 50 MB, as dropped into the folder
        huge.truncate(50_000_000)
    bomb = zip_of({"a.md": b"# A\n\nfine", "zeros.md": b"0" * 120_000_000})
    source_file_add(source=files, name="bomb.zip", data=bomb)
    run = source_sync(source=files)

    errors = {e["url"]: e["error"] for e in run.errors}
    assert errors["image.md"] == "binary content, not text (wrong file extension?)"
    assert errors["latin1.txt"].startswith("not UTF-8 text")
    assert errors["huge.pdf"] == "larger than the 20 MB limit for one file"
    assert "zip bomb" in errors["bomb.zip"]
    assert run.status == SyncRun.Status.PARTIAL
    assert list(files.documents.values_list("external_id", flat=True)) == ["good.md"]


def test_uploads_refuse_unknown_types_and_oversized_files(files, settings) -> None:  # noqa: ANN001
    with pytest.raises(UploadRejected, match="unsupported file type"):
        source_file_add(source=files, name="run.exe", data=b"MZ")
    settings.ASKDOCS_MAX_FILE_BYTES = 1_000
    with pytest.raises(UploadRejected, match="larger than"):
        source_file_add(source=files, name="big.pdf", data=b"x" * 2_000)
    # A path in the name cannot escape the source's folder.
    stored = source_file_add(source=files, name="../../etc/passwd.txt", data=b"hello")
    assert stored == "passwd.txt"
    assert (source_folder(files) / "passwd.txt").is_file()


def test_an_uploaded_html_page_is_titled_by_its_own_heading_or_title_element():
    from ingestion.connectors.files import parse_file

    page = (
        b"<html><head><title>Pairing a sensor | Acme</title></head><body><main><h1>Pairing</h1>"
        b"<p>Hold the button for five seconds until the light blinks blue.</p></main></body></html>"
    )
    assert parse_file("docs/index.html", page).title == "Pairing"  # its h1, not "index.html"
    no_heading = page.replace(b"<h1>Pairing</h1>", b"")
    assert parse_file("docs/index.html", no_heading).title == "Pairing a sensor | Acme"
    untitled = b"<html><body><p>Hold the button for five seconds to pair it.</p></body></html>"
    assert parse_file("docs/pairing.html", untitled).title == "pairing.html"
