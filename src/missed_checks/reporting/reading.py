"""Reading the fleet report as a caller (#31): the rows of the checklists at their sites where they may
``read_records`` (at ``site_id`` only, when given). The people's API's ``GET /report``
(``functions/api_report/app.py``) and the web app's report page (``missed_checks.webapp.pages.report``)
both read it this way: one rule for who sees which rows.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from missed_checks.checklists.managing import get_checklist, scope_of
from missed_checks.errors import NotFound
from missed_checks.permissions.caller import Caller
from missed_checks.permissions.role import Action
from missed_checks.reporting.fleet_report import Progress, Report, build_report
from missed_checks.reporting.ports import ReportReader
from missed_checks.sites.site import validate_site_id


def report_for(store: ReportReader, caller: Caller, start: datetime, end: datetime, *, now: datetime,
               site_id: str | None = None, checklist_ids: Sequence[str] = (), equipment_ids: Sequence[str] = (),
               detail: bool = False, progress: Progress | None = None) -> Report:
    """:func:`~missed_checks.reporting.fleet_report.build_report` over the checklists ``caller`` may
    ``read_records`` of (:func:`~missed_checks.checklists.managing.scope_of`: a site they hold no role
    at is NotFound, one where their role lacks it Forbidden), ``checklist_ids`` among them: a named
    checklist at another site (or at none of theirs) is NotFound (field ``checklist``), as a missing
    one. A caller who may read no checklist gets an empty report (its outcomes too, with ``detail``)."""
    scope = scope_of(store, caller, Action.read_records, None if site_id is None else validate_site_id(site_id))
    for checklist_id in checklist_ids:
        if scope is not None and checklist_id not in scope:
            get_checklist(store, caller, checklist_id, action=Action.read_records, field="checklist")
            raise NotFound(f"checklist {checklist_id!r} does not exist")  # at another site than site_id
    if scope is not None and not scope:
        return Report(start, end, now, [], outcomes=[] if detail else None)
    return build_report(store, start, end, now=now, checklist_ids=checklist_ids or sorted(scope or ()),
                        equipment_ids=equipment_ids, detail=detail, progress=progress)
