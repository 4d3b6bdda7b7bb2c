"""Saving a checklist: the one use case every writer of a checklist goes through (the operator's
``checklist put``, the emulator's scenarios and seeders, the tools). Validate everything, decide
what the checklist becomes, then write it through :class:`missed_checks.checklists.ports.ChecklistStore`.

The rules: a new checklist takes effect now; an edit that changes the rule (recurrence, time zone,
window or grace) takes effect now (``effective_from``), so the new rule never judges windows that
closed before it existed; every closure calendar it names must exist; every reminder lead must fit
the (possibly new) rule's windows. A put that changes the items (#33) raises ``items_revision`` by
one, and the store keeps the revision it replaces on record, in force from the put's instant.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from missed_checks.checklists.check_item import CheckItem, parse_items
from missed_checks.checklists.checklist import Checklist, validate_checklist_id
from missed_checks.checklists.closure_calendar import validate_closed_on
from missed_checks.checklists.ports import ChecklistStore
from missed_checks.errors import InvalidInput, InvalidRecurrence, describe
from missed_checks.notifications.notification import NotifySettings
from missed_checks.revisions import expected_revision
from missed_checks.sites.saving import require_site
from missed_checks.sites.site import Site, validate_site_id


def save_checklist(
    store: ChecklistStore,
    checklist_id: str,
    *,
    recurrence: str,
    now: datetime,
    by: str,
    name: str = "",
    timezone: str | None = None,
    window: str | None = None,
    grace: str | None = None,
    validate: bool = True,
    closed_on: Sequence[str] | None = None,
    notify: NotifySettings | None = None,
    if_match: int | None = None,
    site_id: str | None = None,
    items: Sequence[CheckItem] | None = None,
    pre_use: bool | None = None,
    clear_on_pass: bool | None = None,
) -> Checklist:
    """Create a checklist or edit an existing one, written by ``by`` (who the audit trail names: the
    caller's principal); returns it as written.

    ``validate=False`` writes the rule unchecked, as a hand edit in the console would (schedule-sync
    then reports it). ``notify`` (#18) replaces who is told (an empty one tells nobody); None keeps
    what the checklist has.

    ``closed_on`` (None: keep the current list) names closure calendars; each must exist
    (InvalidInput ``closed_on[1]: no calendar 'x'``), and the checklist and every calendar
    reference it adds or drops are written together. Changing it is not a rule change: only windows
    not judged yet are affected.

    ``if_match`` (If-Match, #31): written only over that revision (PreconditionFailed when
    the checklist is at another, NotFound when it is missing; the write is conditional on it, Conflict on a race).

    ``site_id`` (#31; None keeps the checklist's): the site must exist (InvalidInput naming
    ``site_id``); a checklist's site never changes, but one made before sites existed may be given
    one. A checklist with a site takes the site's time zone when it gives none (and DTSTART names no
    TZID); every calendar it references must be of its site or of none (InvalidInput ``closed_on[i]``).
    """
    validate_checklist_id(checklist_id)
    wanted = None if closed_on is None else validate_closed_on(list(closed_on))
    current = store.get_checklist(checklist_id)
    # If-Match (#31): the write below is conditional on the revision read, so a change meanwhile is refused too
    expected_revision(f"checklist {checklist_id!r}", current, if_match=if_match)
    site = _site(store, checklist_id, current, site_id)
    timezone = zone_at(site, timezone, recurrence)
    base = current or Checklist(checklist_id=checklist_id, recurrence=recurrence, created_at=now,
                                effective_from=now)
    updated = base.with_changes(
        recurrence=recurrence, name=name or base.name, timezone=timezone or None, window=window or None,
        grace=grace or None, updated_at=now, revision=base.revision + 1,
    )
    # closure calendars (#23 item 2): each named one must exist; written with the checklist
    before = current.closed_on if current else ()
    if wanted is not None:
        updated = updated.with_changes(closed_on=wanted)
    calendars = store.get_calendars([*updated.closed_on, *before]) if (updated.closed_on or before) else {}
    for index, calendar_id in enumerate(updated.closed_on):
        if calendars.get(calendar_id) is None:
            raise InvalidInput(f"closed_on[{index}]", f"no calendar {calendar_id!r} (create it first: "
                               f"missed-checks calendar put {calendar_id} --date YYYY-MM-DD)")
    if site is not None:
        updated = updated.with_changes(site_id=site.site_id)
    for index, calendar_id in enumerate(updated.closed_on):
        calendar = calendars[calendar_id]
        if calendar is not None and calendar.site_id is not None and calendar.site_id != updated.site_id:
            raise InvalidInput(f"closed_on[{index}]", f"calendar {calendar_id!r} belongs to site {calendar.site_id}, "
                               f"not {updated.site_id or 'this checklist (which has no site)'}: a checklist "
                               "references calendars of its own site only")
    if updated.closed_on or before:
        updated = updated.with_changes(closures={c: calendars[c] for c in updated.closed_on})
    if notify is not None:  # notifications (#18)
        updated = updated.with_changes(notify=notify)
    updated = with_item_fields(updated, base, items, pre_use, clear_on_pass)
    if validate:
        rule = updated.parsed()
        if updated.notify is not None:  # a lead must still fit the (possibly new) rule's windows
            NotifySettings.parse(updated.notify.to_dict(), rule)
    elif updated.notify is not None and updated.notify.remind_before and notify is None:
        _kept_leads_fit(updated)
    if current is not None and updated.rule() != current.rule():
        updated = updated.with_changes(effective_from=now)
    store.write_checklist(updated, current, calendars, by=by)
    return updated


def with_item_fields(updated: Checklist, base: Checklist, items: Sequence[CheckItem] | None,
                     pre_use: bool | None, clear_on_pass: bool | None) -> Checklist:
    """``updated`` with the items and flags a put gives (#33; None keeps the checklist's): items
    other than ``base``'s raise ``items_revision`` by one."""
    changes: dict[str, Any] = {}
    if items is not None and tuple(items) != base.items:
        changes.update(items=tuple(items), items_revision=base.items_revision + 1)
    if pre_use is not None:
        changes["pre_use"] = pre_use
    if clear_on_pass is not None:
        changes["clear_on_pass"] = clear_on_pass
    return updated.with_changes(**changes) if changes else updated


ITEM_FIELDS = ("items", "pre_use", "clear_on_pass")
"""A checklist document's fields of what a check finds (#33): the API body's, the CLI file's."""


def item_fields(document: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """The item fields ``document`` gives, parsed (those it leaves out are left out, so a put keeps
    the checklist's): ``items`` a list of item documents (InvalidInput naming ``items[2].minimum``;
    items parsed already are kept), ``pre_use`` and ``clear_on_pass`` true or false; ``prefix``
    comes before each field's name (``entries[1].``)."""
    fields: dict[str, Any] = {}
    if document.get("items") is not None:
        given = document["items"]
        fields["items"] = tuple(given) if isinstance(given, tuple | list) and given and \
            all(isinstance(item, CheckItem) for item in given) else parse_items(given, f"{prefix}items")
    for flag in ("pre_use", "clear_on_pass"):
        value = document.get(flag)
        if value is None:
            continue
        if not isinstance(value, bool):
            raise InvalidInput(f"{prefix}{flag}", f"is {describe(value)}, not true or false")
        fields[flag] = value
    return fields


_TZID = re.compile(r"^DTSTART;[^:\n]*TZID=", re.IGNORECASE | re.MULTILINE)


def zone_at(site: Site | None, timezone: str | None, recurrence: object) -> str | None:
    """The time zone of a checklist at ``site``: its own ``timezone``, else, when DTSTART names no
    TZID either, the site's (None: no site, the rule's own or UTC's)."""
    if site is not None and not timezone and _TZID.search(recurrence if isinstance(recurrence, str) else "") is None:
        return site.timezone
    return timezone


def _site(store: ChecklistStore, checklist_id: str, current: Checklist | None, site_id: object) -> Site | None:
    """The site the checklist is at after the save: ``site_id`` (which must exist and, for a checklist
    with a site, be that site), else the checklist's own."""
    if site_id is None:
        return None if current is None or current.site_id is None else store.get_site(current.site_id)
    site_id = validate_site_id(site_id)
    if current is not None and current.site_id is not None and current.site_id != site_id:
        raise InvalidInput("site_id", f"checklist {checklist_id!r} belongs to site {current.site_id}: a checklist's "
                                      f"site never changes (make a new checklist at site {site_id})")
    return require_site(store, site_id)


def _kept_leads_fit(checklist: Checklist) -> None:
    """Reminders a put kept (#18) must still fit the windows the put may have changed (shorter than
    the window, long enough to fire before it closes); an unchecked rule (``validate=False``) that
    does not parse is left for schedule-sync to report."""
    try:
        rule = checklist.parsed()
    except InvalidRecurrence:
        return
    if checklist.notify is not None:
        NotifySettings.parse(checklist.notify.to_dict(), rule)
