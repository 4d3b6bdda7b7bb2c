"""Closure calendar items (#23 item 2): the calendar, its revision records, and who references it.

Existence is kept by DynamoDB itself, with no race: the calendar item holds ``used_by``, the
string set of checklists whose ``closed_on`` names it, and every write that changes a checklist's
``closed_on`` is one TransactWriteItems with the checklist write and, per calendar, an update
conditional on the calendar existing (``ADD``/``DELETE`` of the checklist's id; a kept reference
is a ConditionCheck). Deleting a calendar is conditional on ``used_by`` being absent (DynamoDB
removes a set attribute when its last element is deleted). So a checklist can never be written
referencing a calendar that does not exist, and a referenced calendar can never be deleted,
whichever writer comes first. Only a hand edit in the console (an item written around this
adapter) can break it: the evaluation then fails that checklist's run into the dead-letter queue,
naming ``closed_on[i]``, rather than judge windows with a calendar it cannot read.

Every put writes the calendar as that revision defined it, with who put it and when, to a record
of its own (``REVISION#<n>``, written once: ``attribute_not_exists``) in the same transaction: a
judged window records the revision of each calendar it was judged by, and that record says which
dates it held and who made them so.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import date, datetime
from typing import Any

from botocore.exceptions import ClientError

from missed_checks import identifiers
from missed_checks.aws.table import keys
from missed_checks.aws.table.base import (
    Conflict,
    TableClient,
    condition_item,
    error_code,
    guard_action,
    serialize,
    stamp,
    stamp_update,
)
from missed_checks.checklists.closure_calendar import (
    ClosureCalendar,
    parse_dates,
    validate_author,
    validate_calendar_id,
    validate_description,
)
from missed_checks.checklists.schedule_sync import CalendarImage
from missed_checks.errors import InvalidInput, describe
from missed_checks.timefmt import parse_instant, to_utc_iso

_REVISION_PREFIX = "REVISION#"


class CalendarReferenceError(Conflict):
    """A transaction touching calendars was cancelled: which action failed (its index) and why."""

    def __init__(self, message: str, reasons: list[str]) -> None:
        super().__init__(message)
        self.reasons = reasons


class CalendarItems(TableClient):
    def get_calendar(self, calendar_id: str) -> ClosureCalendar | None:
        item = self._get(keys.calendar_key(validate_calendar_id(calendar_id)))
        return None if item is None else calendar_of(item)

    def get_calendars(self, calendar_ids: Iterable[str]) -> dict[str, ClosureCalendar | None]:
        """Each calendar by id (None when it does not exist); strongly consistent reads, one per
        calendar (a checklist references a handful)."""
        return {calendar_id: self.get_calendar(calendar_id) for calendar_id in dict.fromkeys(calendar_ids)}

    def list_calendars(self) -> list[ClosureCalendar]:
        items = self.query(keys.BY_PERIOD_INDEX, KeyConditionExpression="gsi2pk = :pk",
                           ExpressionAttributeValues=serialize({":pk": keys.CALENDARS_INDEX_PK}))
        return [calendar_of(item) for item in items]

    def calendar_revision(self, calendar_id: str, revision: int) -> ClosureCalendar | None:
        """The calendar as revision ``revision`` defined it (kept after the calendar is deleted)."""
        item = self._get(keys.calendar_revision_key(validate_calendar_id(calendar_id), revision))
        return None if item is None else calendar_of(item)

    def put_calendar(self, calendar_id: str, dates: Sequence[date], *, now: datetime,
                     description: str | None = None, by: str, site_id: str | None = None,
                     expected_revision: int | None = None) -> ClosureCalendar:
        """Create or replace the calendar's dates (and description, when given): a new revision, put
        by ``by`` at ``now`` (its own record, written once, keeps both for good; the calendar item is
        stamped ``changed_by``/``changed_at`` for the audit trail). Its ``used_by`` is never written
        here. Conflict when it changed meanwhile. ``site_id`` (#31): the site of a new calendar, or
        of one that has none yet (None keeps it); a calendar's site never changes (InvalidInput).
        ``expected_revision`` (If-Match): written only over that revision (Conflict otherwise)."""
        validate_calendar_id(calendar_id)
        author = validate_author(by)
        current = self.get_calendar(calendar_id)
        site = calendar_site(calendar_id, current.site_id if current else None, site_id)
        revision = current.revision if current else self._last_revision(calendar_id)
        calendar = ClosureCalendar(
            calendar_id=calendar_id, dates=tuple(sorted(set(dates))),
            description=(validate_description(description) if description is not None
                         else current.description if current else ""),
            revision=revision + 1, updated_at=now, used_by=current.used_by if current else frozenset(),
            updated_by=author, site_id=site)
        item = {**calendar_item(calendar), **stamp(author)}
        owned = [name for name in item if name not in ("pk", "sk")]
        removed: list[str] = []
        condition = ("attribute_exists(pk) AND revision = :expected" if current
                     else "attribute_not_exists(pk)")
        values = {f":{name}": item[name] for name in owned}
        if current:
            values[":expected"] = current.revision if expected_revision is None else expected_revision
        self._transact([
            {"Update": {"TableName": self.name, "Key": serialize(keys.calendar_key(calendar_id)),
                        "UpdateExpression": "SET " + ", ".join(f"#{name} = :{name}" for name in owned)
                                            + "".join(f" REMOVE #{name}" for name in removed),
                        "ConditionExpression": condition,
                        "ExpressionAttributeNames": {f"#{name}": name for name in [*owned, *removed]},
                        "ExpressionAttributeValues": serialize(values)}},
            {"Put": {"TableName": self.name, "Item": serialize(calendar_revision_item(calendar)),
                     "ConditionExpression": "attribute_not_exists(pk)"}},
        ], f"calendar {calendar_id} changed while being written; try again")
        return calendar

    def delete_calendar(self, calendar_id: str, *, by: str, expected_revision: int | None = None) -> bool:
        """Delete the calendar; False when it did not exist. Refused (Conflict naming them) while a
        checklist references it. Its revision records stay: judged windows name them. Stamped by
        ``by`` first (``deleting``: the audit trail's removal names who deleted it). With
        ``expected_revision`` (If-Match), only at that revision (Conflict otherwise)."""
        validate_calendar_id(calendar_id)
        unused = "attribute_exists(pk) AND attribute_not_exists(used_by)"
        values: dict[str, Any] = {}
        if expected_revision is not None:
            unused += " AND revision = :expected"
            values[":expected"] = expected_revision
        try:
            # a refused stamp is refused again by the delete, which says why
            self._stamp_deletion(keys.calendar_key(calendar_id), by, ConditionExpression=unused,
                                 **({"ExpressionAttributeValues": values} if values else {}))
            self._request("delete_item", Key=serialize(keys.calendar_key(calendar_id)),
                          ConditionExpression=unused, ReturnValuesOnConditionCheckFailure="ALL_OLD",
                          **({"ExpressionAttributeValues": serialize(values)} if values else {}))
        except ClientError as error:
            if error_code(error) != "ConditionalCheckFailedException":
                raise
            old = condition_item(error)
            if old is None:
                return False
            if expected_revision is not None and old.get("revision") != expected_revision:
                raise Conflict(f"calendar {calendar_id!r} changed since revision {expected_revision}") from None
            users = sorted(str(c) for c in old.get("used_by") or ())
            raise Conflict(f"calendar {calendar_id!r} is referenced by checklist(s) {', '.join(users)}: remove it "
                           "from their closed_on first (missed-checks checklist put ID --closed-on ...)") from None
        return True

    def _last_revision(self, calendar_id: str) -> int:
        """The highest revision ever written for the id (a deleted calendar put again continues it)."""
        for item in self.query(KeyConditionExpression="pk = :pk AND begins_with(sk, :prefix)",
                               ExpressionAttributeValues=serialize({":pk": keys.calendar_pk(calendar_id),
                                                                    ":prefix": _REVISION_PREFIX}),
                               ScanIndexForward=False, Limit=1, ConsistentRead=True):
            return int(item.get("revision") or 0)
        return 0

    # -- references, in the checklist's own transaction ------------------------------------------
    def reference_actions(self, checklist_id: str, wanted: Sequence[str],
                          before: Mapping[str, ClosureCalendar | None], *, by: str) -> list[dict[str, Any]]:
        """Transaction actions that make ``wanted`` (in order) the calendars referencing
        ``checklist_id``, given ``before`` (every calendar it referenced or will, as read): one
        per calendar, each conditional on the calendar existing; a calendar whose ``used_by``
        changes is stamped by ``by`` (the audit trail)."""
        actions: list[dict[str, Any]] = []
        for calendar_id in wanted:
            calendar = before.get(calendar_id)
            key = serialize(keys.calendar_key(calendar_id))
            if calendar is not None and checklist_id in calendar.used_by:
                actions.append({"ConditionCheck": {"TableName": self.name, "Key": key,
                                                   "ConditionExpression": "attribute_exists(pk)"}})
            else:
                clauses, values = stamp_update(by)
                actions.append({"Update": {"TableName": self.name, "Key": key,
                                           "UpdateExpression": f"ADD used_by :c SET {clauses}",
                                           "ConditionExpression": "attribute_exists(pk)",
                                           "ExpressionAttributeValues": serialize({":c": {checklist_id}, **values})}})
        for calendar_id, calendar in before.items():
            if calendar_id not in wanted and calendar is not None and checklist_id in calendar.used_by:
                actions.append(self.dereference_action(checklist_id, calendar_id, by=by))
        return actions

    def dereference_action(self, checklist_id: str, calendar_id: str, *, by: str) -> dict[str, Any]:
        clauses, values = stamp_update(by)
        return {"Update": {"TableName": self.name, "Key": serialize(keys.calendar_key(calendar_id)),
                           "UpdateExpression": f"DELETE used_by :c SET {clauses}",
                           "ConditionExpression": "attribute_exists(pk)",
                           "ExpressionAttributeValues": serialize({":c": {checklist_id}, **values})}}

    def _transact(self, actions: list[dict[str, Any]], conflict: str) -> None:
        """TransactWriteItems; a cancellation raises :class:`CalendarReferenceError` with the
        per-action reason codes (``ConditionalCheckFailed`` at the index of the action that failed)."""
        for action in actions:
            guard_action(action)
        try:
            self.client.transact_write_items(TransactItems=actions)
        except ClientError as error:
            if error_code(error) != "TransactionCanceledException":
                raise
            reasons = [str(reason.get("Code") or "None")
                       for reason in error.response.get("CancellationReasons", [])]
            raise CalendarReferenceError(conflict, reasons) from None


def calendar_site(calendar_id: str, current: str | None, wanted: str | None) -> str | None:
    """The site a calendar put leaves it at: ``wanted`` when it has none, else its own (InvalidInput
    ``site_id`` when ``wanted`` names another: a calendar's site never changes)."""
    if wanted is None:
        return current
    identifiers.KINDS["site id"].validate(wanted, "site_id")
    if current is not None and current != wanted:
        raise InvalidInput("site_id", f"calendar {calendar_id!r} belongs to site {current}: a calendar's site never "
                                      "changes")
    return wanted


# -- the calendar items -------------------------------------------------------------------------------
def calendar_item(calendar: ClosureCalendar) -> dict[str, Any]:
    """The calendar's item: its key, its entry in the ByPeriod list of calendars, its fields (its
    ``used_by`` is written only by the checklists' transactions)."""
    item: dict[str, Any] = {
        **keys.calendar_key(calendar.calendar_id),
        "type": "calendar",
        "gsi2pk": keys.CALENDARS_INDEX_PK,
        "gsi2sk": calendar.calendar_id,
        "calendar_id": calendar.calendar_id,
        "dates": [d.isoformat() for d in calendar.dates],
        "description": calendar.description,
        "revision": calendar.revision,
    }
    if calendar.site_id is not None:  # sites (#31)
        item["site_id"] = calendar.site_id
    if calendar.updated_at is not None:
        item["updated_at"] = to_utc_iso(calendar.updated_at)
    if calendar.updated_by is not None:
        item["updated_by"] = calendar.updated_by
    return item


def calendar_revision_item(calendar: ClosureCalendar) -> dict[str, Any]:
    """The calendar as this revision defined it, kept for good: a judged window names the
    revision it was judged by, and this record says which dates that was."""
    return {**calendar_item(calendar), **keys.calendar_revision_key(calendar.calendar_id, calendar.revision),
            "type": "calendar_revision", "gsi2pk": None, "gsi2sk": None}


def calendar_image(image: Mapping[str, Any] | None) -> CalendarImage | None:
    """What schedule-sync reads of one side of a closure calendar item's stream record (None: that
    side is absent): its dates as they are, and the checklists its ``used_by`` names, sorted (none
    when it holds no set of them)."""
    if image is None:
        return None
    used_by = image.get("used_by") or ()
    return CalendarImage(dates=image.get("dates"),
                         used_by=tuple(sorted(str(c) for c in used_by))
                         if isinstance(used_by, set | frozenset | list | tuple) else ())


def calendar_of(item: Mapping[str, Any]) -> ClosureCalendar:
    """Read a calendar (or revision) item; a hand-edited one fails with InvalidInput naming the attribute."""
    calendar_id = validate_calendar_id(item.get("calendar_id"), "calendar_id")
    revision = item.get("revision", 0)
    if isinstance(revision, bool) or not isinstance(revision, int) and type(revision).__name__ != "Decimal":
        raise InvalidInput("revision", f"is {describe(revision)}, not a whole number")
    used_by = item.get("used_by") or set()
    updated_at = item.get("updated_at")
    return ClosureCalendar(
        calendar_id=calendar_id,
        dates=parse_dates(list(item.get("dates") or []), "dates"),
        description=validate_description(item.get("description") or ""),
        revision=int(revision),
        updated_at=parse_instant(updated_at, "updated_at") if updated_at else None,
        used_by=frozenset(str(c) for c in used_by),
        updated_by=str(item["updated_by"]) if item.get("updated_by") else None,
        site_id=identifiers.KINDS["site id"].validate(item["site_id"], "site_id") if item.get("site_id") else None,
    )
