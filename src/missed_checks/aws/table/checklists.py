"""Checklist items and their evaluated-until watermark item (an item of its own beside each).

The item's shape is this module's alone: :func:`checklist_item` writes a :class:`Checklist`,
:func:`checklist_of` reads one back (tolerating a hand-edited item). What a put may change and
when its rule takes effect is :mod:`missed_checks.checklists.saving`'s; this module only writes."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from decimal import Decimal
from typing import Any

from botocore.exceptions import ClientError

from missed_checks import clock, identifiers
from missed_checks.aws.table import keys
from missed_checks.aws.table.base import (
    STAMP_ATTRIBUTES,
    Conflict,
    NotFound,
    error_code,
    serialize,
    stamp,
    stamp_update,
)
from missed_checks.aws.table.calendars import CalendarItems, CalendarReferenceError
from missed_checks.aws.table.sites import SiteItems  # a checklist's site (#31)
from missed_checks.checklists.check_item import CheckItem, ItemList, parse_items
from missed_checks.checklists.checklist import Checklist, ChecklistRecord, Status
from missed_checks.checklists.closure_calendar import ClosureCalendar, validate_closed_on
from missed_checks.checklists.schedule_sync import SCHEDULE_FIELDS, ChecklistImage, ScheduleNote, SyncError
from missed_checks.errors import InvalidInput, describe
from missed_checks.notifications.notification import NotifySettings
from missed_checks.timefmt import parse_instant, to_utc_iso

_PK_PREFIX = keys.checklist_pk("")
SCHEDULE_SYNC = "missed-checks schedule-sync"
"""Who the audit trail names for the one checklist change schedule-sync writes itself (moving
``effective_from`` forward after a hand edit of the rule)."""
_MAX_REVISION = 10**15  # far beyond any number of edits; bounds the conversion of a hand-written number


class ChecklistItems(CalendarItems, SiteItems):
    def get_checklist_item(self, checklist_id: str) -> dict[str, Any] | None:
        return self._get(keys.checklist_key(checklist_id))

    def get_checklist_record(self, checklist_id: str) -> ChecklistRecord | None:
        """The checklist item as schedule-sync reads it, whatever a hand edit made of it (None: no item)."""
        item = self.get_checklist_item(checklist_id)
        return None if item is None else checklist_record(item)

    def get_checklist(self, checklist_id: str) -> Checklist | None:
        """The checklist with its evaluated-until watermark (an item of its own): one Query."""
        items = {item["sk"]: item for item in self.query(
            KeyConditionExpression="pk = :pk AND begins_with(sk, :prefix)", ConsistentRead=True,
            ExpressionAttributeValues=serialize({":pk": keys.checklist_pk(checklist_id),
                                                 ":prefix": keys.CHECKLIST_SK}))}
        item = items.get(keys.CHECKLIST_SK)
        if item is None:
            return None
        checklist = checklist_of(_with_watermark(item, items.get(keys.WATERMARK_SK, {}).get("evaluated_until")))
        return self.with_closures(checklist)

    def with_closures(self, checklist: Checklist) -> Checklist:
        """The checklist with its closure calendars read (``closures``), so that its windows leave
        their closed dates out (closure calendars, #23 item 2)."""
        return checklist.with_changes(closures=self.get_calendars(checklist.closed_on)) if checklist.closed_on \
            else checklist

    def list_checklists(self) -> list[Checklist]:
        # No sort-key condition: DynamoDB rejects an empty string as a key value ("" .. HIGH).
        items = list(self.query(keys.BY_PERIOD_INDEX, KeyConditionExpression="gsi2pk = :pk",
                                ExpressionAttributeValues=serialize({":pk": keys.CHECKLISTS_INDEX_PK})))
        watermarks = {item["pk"]: item.get("evaluated_until") for item in
                      self.batch_get([{"pk": item["pk"], "sk": keys.WATERMARK_SK} for item in items])}
        checklists = [checklist_of(_with_watermark(item, watermarks.get(item["pk"]))) for item in items]
        calendars = self.get_calendars(c for checklist in checklists for c in checklist.closed_on)
        return [checklist.with_changes(closures={c: calendars[c] for c in checklist.closed_on})
                if checklist.closed_on else checklist for checklist in checklists]

    def write_checklist(self, checklist: Checklist, current: Checklist | None,
                        calendars: Mapping[str, ClosureCalendar | None], *, by: str) -> None:
        """Write a checklist :func:`missed_checks.checklists.saving.save_checklist` decided: created
        (conditional on no item) when ``current`` is None, else the fields a user owns, conditional on
        ``current``'s revision (Conflict when it changed meanwhile). With ``calendars`` (every calendar
        it references or referenced, as read), the checklist and each reference it adds or drops are
        one transaction, each conditional on the calendar existing (:mod:`.calendars`). Every item
        written is stamped ``changed_by=by`` and ``changed_at`` (the audit trail)."""
        revision = items_revision_action(self.name, checklist, current, by)  # #33: an edit of the items
        if calendars or revision:
            self._write_with_references(checklist, current, calendars, by, revision)
        elif current is None:
            self._create_checklist(checklist, by)
        else:
            self._update_checklist(checklist, current.revision, by)

    def _write_with_references(self, checklist: Checklist, current: Checklist | None,
                               calendars: Mapping[str, ClosureCalendar | None], by: str,
                               revision: list[dict[str, Any]]) -> None:
        """The checklist write, its calendar references (closure calendars) and the record of a new
        revision of its items (#33: ``revision``, last) in one transaction."""
        if current is None:
            write = {"Put": {"TableName": self.name, "Item": serialize({**checklist_item(checklist), **stamp(by)}),
                             "ConditionExpression": "attribute_not_exists(pk)"}}
        else:
            write = {"Update": {"TableName": self.name, "Key": serialize(keys.checklist_key(checklist.checklist_id)),
                                **self._update_request(checklist, current.revision, by)}}
        references = self.reference_actions(checklist.checklist_id, checklist.closed_on, calendars, by=by) \
            if calendars else []
        try:
            self._transact([write, *references, *revision],
                           f"checklist {checklist.checklist_id} changed while being written; try again")
        except CalendarReferenceError as error:
            for index, reason in enumerate(error.reasons[1:len(checklist.closed_on) + 1]):
                if reason == "ConditionalCheckFailed":
                    raise InvalidInput(f"closed_on[{index}]", f"no calendar {checklist.closed_on[index]!r} (it was "
                                       "deleted meanwhile)") from None
            raise

    # -- the revisions of a checklist's items (#33) ---------------------------------------------------
    def item_lists(self, checklist_id: str) -> list[ItemList]:
        """Every revision of the checklist's items, oldest first (empty: it never had items)."""
        return [item_list_of(item) for item in self._query_prefix(keys.checklist_pk(checklist_id),
                                                                  keys.ITEMS_REVISION_PREFIX)]

    def item_list(self, checklist_id: str, revision: int) -> ItemList | None:
        """One revision of the checklist's items (None: there is no such revision)."""
        item = self._get(keys.items_revision_key(checklist_id, revision))
        return None if item is None else item_list_of(item)

    def _create_checklist(self, checklist: Checklist, by: str) -> None:
        try:
            self._request("put_item", Item=serialize({**checklist_item(checklist), **stamp(by)}),
                                 ConditionExpression="attribute_not_exists(pk)")
        except ClientError as error:
            if error_code(error) == "ConditionalCheckFailedException":
                raise Conflict(f"checklist {checklist.checklist_id} was created meanwhile; try again") from error
            raise

    def _update_checklist(self, checklist: Checklist, expected_revision: int, by: str) -> None:
        """Write only the fields a user owns, conditional on the revision read. The evaluation's
        ``evaluated_until`` and schedule-sync's notes are never written back from a stale read."""
        try:
            self._request(
                "update_item", Key=serialize(keys.checklist_key(checklist.checklist_id)),
                **self._update_request(checklist, expected_revision, by),
            )
        except ClientError as error:
            if error_code(error) == "ConditionalCheckFailedException":
                raise Conflict(f"checklist {checklist.checklist_id} changed while being written; try again") from error
            raise

    @staticmethod
    def _update_request(checklist: Checklist, expected_revision: int, by: str) -> dict[str, Any]:
        """The UpdateItem of the fields a user owns, conditional on the revision read, stamped by ``by``."""
        item = checklist_item(checklist)
        owned: tuple[str, ...] = ("name", "recurrence", "timezone", "window", "grace", "status", "updated_at",
                                  "effective_from", "revision", "closed_on", "site_id",
                                  "items", "items_revision", "pre_use", "clear_on_pass")
        if "notify" not in checklist.extra:  # notifications (#18); a hand-edited, unreadable one is left as it is
            owned = (*owned, "notify")
        sets = [f"#{n} = :{n}" for n in owned if n in item]
        removes = [f"#{n}" for n in owned if n not in item]
        values = {f":{n}": item[n] for n in owned if n in item}
        values[":expected"] = expected_revision
        stamp_clauses, stamp_values = stamp_update(by)
        values.update(stamp_values)
        return {
            "UpdateExpression": "SET " + ", ".join([*sets, stamp_clauses])
                                + (" REMOVE " + ", ".join(removes) if removes else ""),
            "ConditionExpression": "attribute_exists(pk) AND #revision = :expected",
            "ExpressionAttributeNames": {f"#{n}": n for n in owned},
            "ExpressionAttributeValues": serialize(values),
        }

    def _require(self, checklist_id: str) -> Checklist:
        checklist = self.get_checklist(checklist_id)
        if checklist is None:
            raise NotFound(f"checklist {checklist_id!r} does not exist")
        return checklist

    def pause_checklist(self, checklist_id: str, now: datetime, *, by: str) -> Checklist:
        current = self._require(checklist_id)
        if current.status is Status.PAUSED:
            return current
        updated = current.with_changes(status=Status.PAUSED, updated_at=now, revision=current.revision + 1)
        self._update_checklist(updated, current.revision, by)
        return updated

    def resume_checklist(self, checklist_id: str, now: datetime, *, by: str) -> Checklist:
        """Resume; the rule takes effect again now, so the pause is never back-filled."""
        current = self._require(checklist_id)
        if current.status is Status.ACTIVE:
            return current
        updated = current.with_changes(status=Status.ACTIVE, updated_at=now, effective_from=now,
                                       revision=current.revision + 1)
        self._update_checklist(updated, current.revision, by)
        return updated

    def move_effective_from(self, checklist_id: str, to: datetime) -> bool:
        """Safety net for rule changes written around this adapter (a hand edit in the console):
        move ``effective_from`` forward to ``to``; never back. Stamped as schedule-sync's own change
        (:data:`SCHEDULE_SYNC`) in the audit trail."""
        return self._move_forward(checklist_id, "effective_from", to)

    def _move_forward(self, checklist_id: str, attribute: str, to: datetime) -> bool:
        """Set an instant attribute of the checklist to ``to`` only if that moves it forward."""
        clauses, values = stamp_update(SCHEDULE_SYNC)
        return self._conditional(
            "update_item", Key=serialize(keys.checklist_key(checklist_id)),
            UpdateExpression=f"SET {attribute} = :to, {clauses}",
            ConditionExpression=f"attribute_exists(pk) AND (attribute_not_exists({attribute}) OR {attribute} < :to)",
            ExpressionAttributeValues=serialize({":to": to_utc_iso(to), **values}),
        )

    def delete_checklist(self, checklist_id: str, *, by: str, expected_revision: int | None = None) -> bool:
        """Delete the checklist (and its watermark). History is kept: its judged windows, performed and
        missed checks stay, and so do its assignments, each still-open one ended at the deletion (or at
        the watermark, or its own start, if that is later), so the report counts its past windows as
        they were judged and a checklist created later with the same id starts with no equipment.
        Every item changed is stamped by ``by``; the checklist item first (``deleting``), then deleted.
        With ``expected_revision`` (If-Match), only at that revision: the stamp, the first write to the
        checklist item, is conditional on it (Conflict when it is at another; nothing is ended)."""
        if expected_revision is not None and not self._stamp_deletion(
                keys.checklist_key(checklist_id), by, ConditionExpression="attribute_exists(pk) AND revision = :rev",
                ExpressionAttributeValues={":rev": expected_revision}):
            if self.get_checklist_item(checklist_id) is None:
                return False
            raise Conflict(f"checklist {checklist_id} changed since revision {expected_revision}; read it again")
        # deleted checklists keep their assignments (#23: deleting a checklist never changes a past figure)
        watermark = self._get(keys.watermark_key(checklist_id)) or {}
        ended = max(to_utc_iso(clock.now()), str(watermark.get("evaluated_until") or ""))
        assignments = [item for item in self._query_prefix(keys.checklist_pk(checklist_id), keys.assignment_prefix())]
        # an assignment that had not begun yet ends as it begins (an empty period, never an inverted one)
        self.batch_write([{"PutRequest": {"Item": serialize({**a, "unassigned_at": max(ended, str(a["assigned_at"])),
                                                             **stamp(by)})}}
                          for a in assignments if not a.get("unassigned_at")])
        if expected_revision is None and not self._stamp_deletion(keys.checklist_key(checklist_id), by):
            return False  # (the stamp: the removal's old image names who deleted it)
        self.batch_write([{"DeleteRequest": {"Key": serialize(keys.watermark_key(checklist_id))}}])
        if (referenced := self._referenced_calendars(checklist_id)):
            # closure calendars (#23 item 2): the checklist and its references go together
            try:
                self._transact([{"Delete": {"TableName": self.name, "Key": serialize(keys.checklist_key(checklist_id)),
                                            "ConditionExpression": "attribute_exists(pk)"}},
                                *(self.dereference_action(checklist_id, c, by=by) for c in referenced)],
                               f"checklist {checklist_id} changed while being deleted; try again")
            except CalendarReferenceError as error:
                if error.reasons[:1] == ["ConditionalCheckFailed"]:
                    return False
                raise
            return True
        response = self._request("delete_item", Key=serialize(keys.checklist_key(checklist_id)), ReturnValues="ALL_OLD")
        return bool(response.get("Attributes"))

    def _referenced_calendars(self, checklist_id: str) -> list[str]:
        """The existing calendars whose ``used_by`` names the checklist (as its ``closed_on`` says)."""
        item = self.get_checklist_item(checklist_id)
        if item is None:
            return []
        try:
            named = validate_closed_on(item.get("closed_on"))
        except InvalidInput:
            return []
        return [c for c, calendar in self.get_calendars(named).items()
                if calendar is not None and checklist_id in calendar.used_by]

    def record_schedule_sync(self, checklist_id: str, revision: int, *, schedule: ScheduleNote | None,
                             error: SyncError | None) -> bool:
        """Note on the checklist what schedule-sync did (or why it could not). Does not touch the rule
        fields, so the stream record this write causes is recognised as a no-op. Returns False when
        the checklist changed or vanished meanwhile (its own stream record will be synced)."""
        sets: list[str] = []
        removes: list[str] = []
        values: dict[str, Any] = {":rev": revision}
        for name, value in (("schedule", schedule_note_map(schedule)), ("sync_error", sync_error_map(error))):
            if value is None:
                removes.append(name)
            else:
                sets.append(f"{name} = :{name}")
                values[f":{name}"] = value
        expression = ("SET " + ", ".join(sets) if sets else "") + (" REMOVE " + ", ".join(removes) if removes else "")
        return self._conditional(
            "update_item", Key=serialize(keys.checklist_key(checklist_id)), UpdateExpression=expression.strip(),
            ConditionExpression="attribute_exists(pk) AND revision = :rev", ExpressionAttributeValues=serialize(values),
        )

    def adopt_checklist(self, checklist_id: str) -> bool:
        """Give a checklist written around this adapter (an item put by hand) the ``revision`` a new
        one has (0), so that schedule-sync's notes and later edits, all conditional on the revision,
        apply to it. False when it has one already (or is gone)."""
        return self._conditional(
            "update_item", Key=serialize(keys.checklist_key(checklist_id)), UpdateExpression="SET revision = :zero",
            ConditionExpression="attribute_exists(pk) AND attribute_not_exists(revision)",
            ExpressionAttributeValues=serialize({":zero": 0}),
        )

    def advance_watermark(self, checklist_id: str, to: datetime) -> bool:
        """Move the checklist's ``evaluated_until`` watermark forward to ``to``; never backwards. False
        when it already was there (a retry or a re-run). It is an item of its own
        (:func:`keys.watermark_key`), so this write does not wake schedule-sync."""
        return self._conditional(
            "update_item", Key=serialize(keys.watermark_key(checklist_id)),
            UpdateExpression="SET evaluated_until = :to, checklist_id = :checklist, #type = :type",
            ConditionExpression="attribute_not_exists(evaluated_until) OR evaluated_until < :to",
            ExpressionAttributeNames={"#type": "type"},
            ExpressionAttributeValues=serialize({":to": to_utc_iso(to), ":checklist": checklist_id,
                                                 ":type": "watermark"}),
        )


def _with_watermark(item: Mapping[str, Any], watermark: object) -> dict[str, Any]:
    """The checklist item with the evaluated-until watermark from its own item, when that is later
    (an older deployment kept it on the checklist item itself)."""
    if isinstance(watermark, str) and str(item.get("evaluated_until") or "") < watermark:
        return {**item, "evaluated_until": watermark}
    return dict(item)




# -- the checklist item -------------------------------------------------------------------------------
def checklist_item(checklist: Checklist) -> dict[str, Any]:
    """The checklist's item: its key, its entry in the ByPeriod list of checklists, then its fields."""
    document = checklist.to_dict()
    if "items" in document:  # #33: bounds as DynamoDB numbers
        document["items"] = stored_items(checklist.items)
    return {**keys.checklist_key(checklist.checklist_id), "type": "checklist",
            "gsi2pk": keys.CHECKLISTS_INDEX_PK, "gsi2sk": checklist.checklist_id, **document}


def stored_items(items: tuple[CheckItem, ...]) -> list[dict[str, Any]]:
    """Item documents as the table keeps them: bounds as Decimal (DynamoDB takes no float)."""
    return [{**item.to_dict(), **{name: bound for name in ("minimum", "maximum")
                                  if (bound := getattr(item, name)) is not None}} for item in items]


def items_revision_action(table_name: str, checklist: Checklist, current: Checklist | None,
                          by: str) -> list[dict[str, Any]]:
    """The transaction's Put of the revision record a put that changed the items writes (#33; empty:
    the items did not change): the items, in force from the put's instant, written once."""
    if checklist.items_revision == (current.items_revision if current is not None else 0):
        return []
    effective = checklist.updated_at or clock.now()
    item = {**keys.items_revision_key(checklist.checklist_id, checklist.items_revision), "type": "items_revision",
            "checklist_id": checklist.checklist_id, "revision": checklist.items_revision,
            "effective_from": to_utc_iso(effective), "items": stored_items(checklist.items), **stamp(by)}
    return [{"Put": {"TableName": table_name, "Item": serialize(item),
                     "ConditionExpression": "attribute_not_exists(pk)"}}]


def item_list_of(item: Mapping[str, Any]) -> ItemList:
    """A revision record read back (InvalidInput naming the attribute a hand edit broke)."""
    effective = item.get("effective_from")
    if not isinstance(effective, str):
        raise InvalidInput("effective_from", f"is {describe(effective)}, not an instant")
    return ItemList(revision_of(item), parse_instant(effective, "effective_from"),
                    parse_items(item.get("items") or [], "items"))


_KNOWN = frozenset({"pk", "sk", "type", "gsi2pk", "gsi2sk", "checklist_id", "name", "recurrence", "status", "revision",
                    "timezone", "window", "grace", "created_at", "updated_at", "evaluated_until", "effective_from",
                    "closed_on", "site_id", "items", "items_revision", "pre_use", "clear_on_pass",
                    *STAMP_ATTRIBUTES})


def checklist_of(item: Mapping[str, Any]) -> Checklist:
    """Read a checklist item, tolerating a hand-edited one: whatever its attributes, the only error
    is :class:`InvalidInput` naming the attribute (a missing recurrence, an instant that is not
    one, a revision that is not a whole number). The rule fields are kept as they are (an empty
    string counts as absent) so that :meth:`Checklist.parsed` judges them, types included."""

    def instant(name: str) -> datetime | None:
        value = item.get(name)
        return None if value is None or value == "" else parse_instant(value, name)

    def rule_field(name: str) -> Any:
        value = item.get(name)
        return None if value is None or value == "" else value

    if item.get("recurrence") is None or item.get("recurrence") == "":
        raise InvalidInput("recurrence", "the checklist item has no recurrence attribute")
    status_value = item.get("status")
    if status_value is None or status_value == "":
        status_value = Status.ACTIVE.value
    try:
        status = Status(status_value.upper() if isinstance(status_value, str) else status_value)
    except (ValueError, TypeError):
        raise InvalidInput("status", f"{describe(status_value)} is not ACTIVE or PAUSED") from None
    name = item.get("name")
    known = set(_KNOWN)
    notify = _notify_of(item)  # notifications (#18)
    if notify is not None:
        known.add("notify")
    return Checklist(
        checklist_id=_checklist_id_of(item),
        name=name if isinstance(name, str) else "" if name is None else str(name),
        recurrence=item["recurrence"],
        timezone=rule_field("timezone"),
        window=rule_field("window"),
        grace=rule_field("grace"),
        status=status,
        created_at=instant("created_at"),
        updated_at=instant("updated_at"),
        evaluated_until=instant("evaluated_until"),
        effective_from=instant("effective_from"),
        revision=revision_of(item),
        closed_on=validate_closed_on(item.get("closed_on")),
        extra={k: v for k, v in item.items() if k not in known},
        notify=notify,
        site_id=_site_id_of(item),
        items=parse_items(item.get("items"), "items"),  # what a check finds (#33)
        items_revision=_whole(item, "items_revision"),
        pre_use=item.get("pre_use") is True,
        clear_on_pass=item.get("clear_on_pass") is True,
    )


def _whole(item: Mapping[str, Any], name: str) -> int:
    """A whole-number attribute (0 when absent); InvalidInput naming it when a hand edit broke it."""
    value = item.get(name)
    if value is None:
        return 0
    if (isinstance(value, bool) or not isinstance(value, int | Decimal)
            or (isinstance(value, Decimal) and not value.is_finite()) or not 0 <= value <= _MAX_REVISION
            or value != int(value)):
        raise InvalidInput(name, f"is {describe(value)}, not a whole number >= 0")
    return int(value)


def _site_id_of(item: Mapping[str, Any]) -> str | None:
    """The checklist's site (#31); None for one made before sites existed (InvalidInput naming
    ``site_id`` when a hand edit made it anything but a site id)."""
    value = item.get("site_id")
    return None if value is None or value == "" else identifiers.KINDS["site id"].validate(value, "site_id")


def checklist_record(item: Mapping[str, Any]) -> ChecklistRecord:
    """What schedule-sync reads of a checklist item (:class:`ChecklistRecord`): its revision (0 when
    unreadable), the checklist or why it cannot be read, and the sync's own notes as they are."""
    checklist: Checklist | None = None
    try:
        revision, problem = revision_of(item), None
    except InvalidInput as invalid:
        revision, problem = 0, invalid
    if problem is None:
        try:
            checklist = checklist_of(item)
        except InvalidInput as invalid:
            problem = invalid
    return ChecklistRecord(has_revision="revision" in item, revision=revision,
                           checklist=checklist, problem=problem, schedule=item.get("schedule"),
                           sync_error=item.get("sync_error"))


def schedule_note_map(note: ScheduleNote | None) -> dict[str, Any] | None:
    """The item's ``schedule`` map (None: removed): FINISHED is its state and when; an applied
    schedule's expression, zone, exactness, state, fingerprint, when, and its reminders when any."""
    if note is None:
        return None
    if note.state == "FINISHED":
        return {"state": note.state, "synced_at": to_utc_iso(note.synced_at)}
    return {"expression": note.expression, "timezone": note.timezone, "exact": note.exact, "state": note.state,
            "fingerprint": note.fingerprint, "synced_at": to_utc_iso(note.synced_at),
            **({"reminders": list(note.reminders)} if note.reminders else {})}


def sync_error_map(error: SyncError | None) -> dict[str, Any] | None:
    """The item's ``sync_error`` map (None: removed)."""
    if error is None:
        return None
    return {"field": error.field, "message": error.message, "at": to_utc_iso(error.at), "revision": error.revision}


def checklist_image(image: Mapping[str, Any] | None) -> ChecklistImage | None:
    """What schedule-sync reads of one side of a checklist item's stream record (None: that side is
    absent, as a creation's old image): the schedule's fields as they are, whatever a hand edit put
    there; ``notify``'s leads and whether it names someone; the reminders the sync's note names."""
    if image is None:
        return None
    notify, note = (value if isinstance(value, Mapping) else {}  # a hand edit may have made it anything
                    for value in (image.get("notify"), image.get("schedule")))
    return ChecklistImage(
        **{name: image.get(name) for name in SCHEDULE_FIELDS}, effective_from=image.get("effective_from"),
        remind_before=notify.get("remind_before"), reminds_someone=bool(notify.get("to")),
        noted_reminders=tuple(str(name) for name in note.get("reminders") or []))


def revision_of(item: Mapping[str, Any]) -> int:
    """The item's ``revision`` (0 when absent); InvalidInput when it is not a whole number >= 0.

    Every conditional write of the checklist compares it, so a value that cannot be written back
    as the same number (a string, a fraction) is refused rather than rounded.
    """
    value = item.get("revision")
    if value is None:
        return 0
    if (isinstance(value, bool) or not isinstance(value, int | Decimal)
            or (isinstance(value, Decimal) and not value.is_finite())
            or not 0 <= value <= _MAX_REVISION or value != int(value)):
        raise InvalidInput("revision", f"is {describe(value)}, not a whole number >= 0")
    return int(value)


def _checklist_id_of(item: Mapping[str, Any]) -> str:
    """The id the item's key names (the schedule and every evaluation use it, so a hand-edited
    ``checklist_id`` attribute cannot point them at another checklist)."""
    pk = item.get("pk")
    if isinstance(pk, str) and pk.startswith(_PK_PREFIX) and len(pk) > len(_PK_PREFIX):
        return pk.removeprefix(_PK_PREFIX)
    attribute = item.get("checklist_id")
    if not isinstance(attribute, str) or not attribute:
        raise InvalidInput("checklist_id", f"the item has no checklist key (pk {describe(pk)})")
    return attribute


def _notify_of(item: Mapping[str, Any]) -> NotifySettings | None:
    """The item's ``notify`` block (#18); None when absent, or when a hand edit made it unreadable (it
    then stays in ``extra`` as it is, and the notifier tells nobody until it is fixed)."""
    value = item.get("notify")
    if value is None:
        return None
    try:
        return NotifySettings.parse(value, window=None)
    except InvalidInput:
        return None
