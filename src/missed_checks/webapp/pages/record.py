"""``GET/POST /record/{equipment_id}``: record a check at phone width. The page lists the checklists of
the equipment (those at sites where the person may read), each one's window now, and a form per
checklist due now that records a check performed now (:func:`~missed_checks.performed_checks.recording.record_checks`
with the person's caller: another site's equipment is a 404 page, a role that may not record a 403
page). A checklist with items (#33) asks each item of the revision in force as plain form fields
(pass/fail and a choice as radio buttons, a number with its unit, text); a refused answer is said
next to its field, from the refusal's own words, nothing written. The answer says in words what was
recorded, whether it was on time or late, and what it found: a failed critical item opens a defect
and the equipment is not cleared to operate ("Recorded. Brakes work failed: FL-1 is NOT cleared to
operate; defect D-... opened, supervisors told"). The equipment's readiness now heads the page. The
page's address is printable as a QR code (an SVG made here, no script) for the equipment's label.
"""

from __future__ import annotations

from datetime import datetime

import segno
from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.api_gateway import Router
from markupsafe import Markup

from missed_checks import clock
from missed_checks.defects import listing
from missed_checks.defects.defect import Defect, defect_id_of
from missed_checks.equipment.registering import get_equipment
from missed_checks.equipment.status import ChecklistStatus, status_for
from missed_checks.errors import InvalidInput, NotFound
from missed_checks.performed_checks.performed_check import PerformedCheck, timeliness
from missed_checks.performed_checks.recording import Row, record_checks
from missed_checks.permissions.caller import Caller
from missed_checks.permissions.role import Action
from missed_checks.readiness.readiness import Readiness, State
from missed_checks.readiness.watching import readiness_now
from missed_checks.timefmt import parse_instant, to_utc_iso
from missed_checks.webapp import context, sessions
from missed_checks.webapp.pages.equipment import site_zone
from missed_checks.webapp.pages.today import READINESS_WORDS, why
from missed_checks.webapp.rendering import page

router = Router()  # type: ignore[no-untyped-call]  # Powertools leaves __init__ unannotated

FIELDS = ("checklist_id",)
ANSWER = "answers."
"""An item's form field is ``answers.<item id>``: the name the refusal's field gives it."""



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


def findings_in_words(status: ChecklistStatus, equipment_id: str, defect: Defect | None,
                      readiness: Readiness) -> str:
    """What a check of a checklist with items found, after what was recorded: the failed critical
    items and the defect they opened (and whether the checklist's people were told), or that every
    critical item passed; then whether the equipment may be used now."""
    if defect is not None:
        failed = ", ".join(item.label for item in defect.failed_items) or "a critical item"
        told = ", supervisors told" if status.checklist.notify is not None and status.checklist.notify.to else ""
        return (f"Recorded. {failed} failed: {equipment_id} is NOT cleared to operate; defect {defect.defect_id} "
                f"opened{told}.")
    said = answer_in_words(status, equipment_id)
    now = f"{equipment_id} is {READINESS_WORDS[readiness.state]}"
    return f"{said} Every critical item passed: {now}." if readiness.state is State.CLEARED else \
        f"{said} Every critical item passed, but {now}: {why(readiness.reason)}."


def _defect_of(store: context.WebAppTable, caller: Caller, checklist_id: str, equipment_id: str,
               performed_at: str | None) -> Defect | None:
    """The defect the check at ``performed_at`` opened (its id is the check's own), if it opened one."""
    if not performed_at:
        return None
    try:
        at = parse_instant(performed_at, "at")
        return listing.get_defect(store, caller, defect_id_of(checklist_id, equipment_id, at))
    except (InvalidInput, NotFound):
        return None


def _page(equipment_id: str, *, status: int = 200, errors: dict[str, str] | None = None,
          recorded: str | None = None, error_of: str | None = None, performed_at: str | None = None,
          values: dict[str, str] | None = None) -> Response[str]:
    person = sessions.signed_in(router)
    store = context.table()
    equipment = get_equipment(store, person.caller, equipment_id)  # another site's: NotFound, a 404 page
    now = clock.now()
    statuses = status_for(store, person.caller, equipment.equipment_id, now)
    if errors and error_of not in {s.checklist.checklist_id for s in statuses}:  # no card to say it on
        errors = {"_form": f"{error_of or 'checklist_id'}: {'; '.join(errors.values())}"}
    readiness = readiness_now(store, equipment.equipment_id, now)
    answer = None
    for s in statuses:
        if s.checklist.checklist_id == recorded and s.state == "done":
            answer = answer_in_words(s, equipment.equipment_id) if not s.checklist.items else findings_in_words(
                s, equipment.equipment_id, _defect_of(store, person.caller, s.checklist.checklist_id,
                                                      equipment.equipment_id, performed_at), readiness)
    event = router.current_event
    address = address_of(dict(event.headers), f"/record/{equipment.equipment_id}")
    return page(router, "record.html.j2", title=f"Record a check: {equipment.name}", status=status,
                equipment=equipment, statuses=statuses, now=now, errors=errors or {}, answer=answer,
                error_of=error_of, values=values or {}, readiness=readiness, readiness_words=READINESS_WORDS,
                why=why, zone=site_zone(store, person, equipment),
                may_record={s.checklist.checklist_id: person.caller.may(Action.record, s.checklist.site_id)
                            for s in statuses},
                address=address, qr=qr_svg(address, f"QR code of {address}"))


@router.get("/record/<equipment_id>")
def record_page(equipment_id: str) -> Response[str]:
    query = router.current_event.query_string_parameters or {}
    return _page(equipment_id, recorded=query.get("recorded"), performed_at=query.get("at"))


def refusal_fields(error: InvalidInput, checklist_id: str) -> dict[str, str]:
    """A refusal said where it belongs: an answer's problem next to its item's field
    (``answers.<item id>``), every other one on the checklist's card."""
    problems = getattr(error, "problems", None) or []
    said: dict[str, str] = {}
    for problem in problems:
        key = problem.field if problem.field.startswith(ANSWER) else checklist_id
        said[key] = f"{said[key]}; {problem.detail}" if key in said else problem.detail
    return said or {checklist_id: error.message}


@router.post("/record/<equipment_id>")
def record(equipment_id: str) -> Response[str]:
    fields, answers = sessions.form_with(router, FIELDS, ANSWER)
    person = sessions.signed_in(router)
    store = context.table()
    equipment = get_equipment(store, person.caller, equipment_id)
    checklist_id = fields["checklist_id"]
    now: datetime = clock.now()
    try:
        check = PerformedCheck(checklist_id, equipment.equipment_id, now, answers=answers or None)
        record_checks(store, [Row(check)], now=now, recorded_by=person.caller.principal, caller=person.caller)
    except InvalidInput as error:
        return _page(equipment_id, status=400, errors=refusal_fields(error, checklist_id), error_of=checklist_id,
                     values={f"{ANSWER}{name}": value for name, value in answers.items()})
    where = f"/record/{equipment.equipment_id}?recorded={checklist_id}"
    if answers:  # what it found: the defect the check opened is named by the check's instant
        where += f"&at={to_utc_iso(now)}"
    return sessions.redirect(where)
