"""``GET/POST /record/{equipment_id}``: record a check at phone width. The page lists the checklists of
the equipment (those at sites where the person may read), each one's window now, and a button per
checklist due now that records a check performed now (:func:`~missed_checks.performed_checks.recording.record_checks`
with the person's caller: another site's equipment is a 404 page, a role that may not record a 403
page); the answer says in words what was recorded and whether it was on time or late. The page's
address is printable as a QR code (an SVG made here, no script) for the equipment's label.
"""

from __future__ import annotations

from datetime import datetime

import segno
from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.api_gateway import Router
from markupsafe import Markup

from missed_checks import clock
from missed_checks.equipment.registering import get_equipment
from missed_checks.equipment.status import ChecklistStatus, status_for
from missed_checks.errors import InvalidInput
from missed_checks.performed_checks.performed_check import PerformedCheck, timeliness
from missed_checks.performed_checks.recording import Row, record_checks
from missed_checks.permissions.role import Action
from missed_checks.webapp import context, sessions
from missed_checks.webapp.rendering import page

router = Router()  # type: ignore[no-untyped-call]  # Powertools leaves __init__ unannotated

FIELDS = ("checklist_id",)


def address_of(event_headers: dict[str, str], path: str) -> str:
    """The page's absolute address as the browser asked for it (``X-Forwarded-Proto`` and ``Host``)."""
    headers = {k.lower(): v for k, v in event_headers.items()}
    scheme = "https" if headers.get("x-forwarded-proto", "").split(",")[0].strip() == "https" else "http"
    return f"{scheme}://{headers.get('host', 'localhost')}{path}"


def qr_svg(address: str, label: str) -> Markup:
    """``address`` as a QR code, an inline SVG scaled by the stylesheet (a viewBox, no size)."""
    code = segno.make(address, error="m")
    return Markup(code.svg_inline(scale=1, border=2, omitsize=True, title=label, svgclass="qr-code",
                                  lineclass="qr-line"))


def answer_in_words(status: ChecklistStatus, equipment_id: str) -> str:
    """What was recorded, in words: on time or late, and in which window."""
    name = status.checklist.name or status.checklist.checklist_id
    window, at = status.window, status.performed_at
    if window is None or at is None:
        return f"Recorded {name} on {equipment_id}."
    when = timeliness(at, window.start, window.end, window.evaluate_at)
    local = at.astimezone(window.start.tzinfo)
    if when is not None and when.value == "late":
        return (f"Recorded {name} on {equipment_id} at {local:%H:%M}: late (it was due by "
                f"{window.end:%H:%M}), but it counts: the window is not missed.")
    return f"Recorded {name} on {equipment_id} at {local:%H:%M}: on time (due by {window.end:%H:%M})."


def _page(equipment_id: str, *, status: int = 200, errors: dict[str, str] | None = None,
          recorded: str | None = None, error_of: str | None = None) -> Response[str]:
    person = sessions.signed_in(router)
    store = context.table()
    equipment = get_equipment(store, person.caller, equipment_id)  # another site's: NotFound, a 404 page
    now = clock.now()
    statuses = status_for(store, person.caller, equipment.equipment_id, now)
    if errors and error_of not in {s.checklist.checklist_id for s in statuses}:  # no card to say it on
        errors = {"_form": f"{error_of or 'checklist_id'}: {'; '.join(errors.values())}"}
    answer = next((answer_in_words(s, equipment.equipment_id) for s in statuses
                   if s.checklist.checklist_id == recorded and s.state == "done"), None)
    event = router.current_event
    address = address_of(dict(event.headers), f"/record/{equipment.equipment_id}")
    return page(router, "record.html.j2", title=f"Record a check: {equipment.name}", status=status,
                equipment=equipment, statuses=statuses, now=now, errors=errors or {}, answer=answer,
                may_record={s.checklist.checklist_id: person.caller.may(Action.record, s.checklist.site_id)
                            for s in statuses},
                address=address, qr=qr_svg(address, f"QR code of {address}"))


@router.get("/record/<equipment_id>")
def record_page(equipment_id: str) -> Response[str]:
    query = router.current_event.query_string_parameters or {}
    return _page(equipment_id, recorded=query.get("recorded"))


@router.post("/record/<equipment_id>")
def record(equipment_id: str) -> Response[str]:
    fields = sessions.form(router, FIELDS)
    person = sessions.signed_in(router)
    store = context.table()
    equipment = get_equipment(store, person.caller, equipment_id)
    checklist_id = fields["checklist_id"]
    now: datetime = clock.now()
    try:
        check = PerformedCheck(checklist_id, equipment.equipment_id, now)
        record_checks(store, [Row(check)], now=now, recorded_by=person.caller.principal, caller=person.caller)
    except InvalidInput as error:
        problems = getattr(error, "problems", None)
        message = "; ".join(p.detail for p in problems) if problems else error.message
        return _page(equipment_id, status=400, errors={checklist_id: message}, error_of=checklist_id)
    return sessions.redirect(f"/record/{equipment.equipment_id}?recorded={checklist_id}")
