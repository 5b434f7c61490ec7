"""The manual at /docs/: the MkDocs site `.bin/run` builds into the data folder (docs/ in the
checkout is its source). Public, as the manual is; read-only files, never a listing."""

from __future__ import annotations

from django.conf import settings
from django.http import HttpRequest
from django.http.response import HttpResponseBase
from django.template.response import TemplateResponse
from django.views.decorators.http import require_GET
from django.views.static import serve


@require_GET
def docs_page(request: HttpRequest, path: str = "") -> HttpResponseBase:
    root = settings.ASKDOCS_DOCS_DIR
    if not (root / "index.html").is_file():
        return TemplateResponse(request, "assistant/docs_not_built.html", status=404)
    if path == "" or path.endswith("/"):
        path += "index.html"
    return serve(request, path, document_root=str(root))
