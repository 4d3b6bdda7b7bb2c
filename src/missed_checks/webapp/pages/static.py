"""``GET /static/{name}``: the stylesheet and the small scripts of ``webapp/static`` (no session needed)."""

from __future__ import annotations

from importlib.resources import files

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.api_gateway import Router

from missed_checks.errors import NotFound
from missed_checks.webapp.rendering import SECURITY_HEADERS

router = Router()  # type: ignore[no-untyped-call]  # Powertools leaves __init__ unannotated

TYPES = {".css": "text/css; charset=utf-8", ".js": "text/javascript; charset=utf-8", ".svg": "image/svg+xml"}


@router.get("/static/<name>")
def static_file(name: str) -> Response[str]:
    suffix = name[name.rfind("."):] if "." in name else ""
    resource = files("missed_checks.webapp").joinpath("static", name)
    if suffix not in TYPES or "/" in name or name.startswith(".") or not resource.is_file():
        raise NotFound(f"there is no file {name} here")
    return Response(status_code=200, content_type=TYPES[suffix], body=resource.read_text(encoding="utf-8"),
                    headers={**SECURITY_HEADERS, "Cache-Control": "public, max-age=300"})
