"""Checklist items and their evaluated-until watermark item (an item of its own beside each)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from botocore.exceptions import ClientError

from missed_checks import clock, keys
from missed_checks.aws.table.base import Conflict, NotFound, error_code, serialize
from missed_checks.aws.table.calendars import CalendarItems, CalendarReferenceError
from missed_checks.checklists.checklist import Checklist, Status, validate_checklist_id
from missed_checks.checklists.closure_calendar import validate_closed_on
from missed_checks.errors import InvalidInput, InvalidRecurrence
from missed_checks.notifications.notification import NotifySettings
from missed_checks.timefmt import to_utc_iso


class ChecklistItems(CalendarItems):
    def get_checklist_item(self, checklist_id: str) -> dict[str, Any] | None:
        return self._get(keys.checklist_key(checklist_id))

    def get_checklist(self, checklist_id: str) -> Checklist | None:
        """The checklist with its evaluated-until watermark (an item of its own): one Query."""
        items = {item["sk"]: item for item in self.query(
            KeyConditionExpression="pk = :pk AND begins_with(sk, :prefix)", ConsistentRead=True,
            ExpressionAttributeValues=serialize({":pk": keys.checklist_pk(checklist_id),
                                                 ":prefix": keys.CHECKLIST_SK}))}
        item = items.get(keys.CHECKLIST_SK)
        if item is None:
            return None
        checklist = Checklist.from_item(_with_watermark(item, items.get(keys.WATERMARK_SK, {}).get("evaluated_until")))
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
        checklists = [Checklist.from_item(_with_watermark(item, watermarks.get(item["pk"]))) for item in items]
        calendars = self.get_calendars(c for checklist in checklists for c in checklist.closed_on)
        return [checklist.with_changes(closures={c: calendars[c] for c in checklist.closed_on})
                if checklist.closed_on else checklist for checklist in checklists]

    def put_checklist(
        self,
        checklist_id: str,
        *,
        recurrence: str,
        now: datetime,
        name: str = "",
        timezone: str | None = None,
        window: str | None = None,
        grace: str | None = None,
        validate: bool = True,
        closed_on: Sequence[str] | None = None,
        notify: NotifySettings | None = None,
    ) -> Checklist:
        """Create a checklist or edit an existing one.

        A new checklist takes effect now; an edit that changes the rule (recurrence, time zone,
        window or grace) takes effect now (``effective_from``), so the new rule never judges
        windows that closed before it existed. ``validate=False`` writes the rule unchecked, as a
        hand edit in the console would (schedule-sync then reports it). ``notify`` (#18) replaces
        who is told (an empty one tells nobody); None keeps what the checklist has.

        ``closed_on`` (None: keep the current list) names closure calendars; each must exist
        (InvalidInput ``closed_on[1]: no calendar 'x'``), and the checklist and every calendar
        reference it adds or drops are written in one transaction (:mod:`.calendars`). Changing it is
        not a rule change: only windows not judged yet are affected.
        """
        validate_checklist_id(checklist_id)
        wanted = None if closed_on is None else validate_closed_on(list(closed_on))
        current = self.get_checklist(checklist_id)
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
        calendars = self.get_calendars([*updated.closed_on, *before]) if (updated.closed_on or before) else {}
        for index, calendar_id in enumerate(updated.closed_on):
            if calendars.get(calendar_id) is None:
                raise InvalidInput(f"closed_on[{index}]", f"no calendar {calendar_id!r} (create it first: "
                                   f"missed-checks calendar put {calendar_id} --date YYYY-MM-DD)")
        if updated.closed_on or before:
            updated = updated.with_changes(closures={c: calendars[c] for c in updated.closed_on})
        if notify is not None:  # notifications (#18)
            updated = updated.with_changes(notify=notify)
        if validate:
            rule = updated.parsed()
            if updated.notify is not None:  # a lead must still fit the (possibly new) rule's windows
                NotifySettings.parse(updated.notify.to_dict(), rule)
        elif updated.notify is not None and updated.notify.remind_before and notify is None:
            _kept_leads_fit(updated)
        if current is not None and updated.rule() != current.rule():
            updated = updated.with_changes(effective_from=now)
        if calendars:
            self._write_with_references(updated, current, calendars)
        elif current is None:
            self._create_checklist(updated)
        else:
            self._update_checklist(updated, current.revision)
        return updated

    def _write_with_references(self, checklist: Checklist, current: Checklist | None,
                               calendars: Mapping[str, Any]) -> None:
        """The checklist write and its calendar references in one transaction (closure calendars)."""
        if current is None:
            write = {"Put": {"TableName": self.name, "Item": serialize(checklist.to_item()),
                             "ConditionExpression": "attribute_not_exists(pk)"}}
        else:
            write = {"Update": {"TableName": self.name, "Key": serialize(keys.checklist_key(checklist.checklist_id)),
                                **self._update_request(checklist, current.revision)}}
        references = self.reference_actions(checklist.checklist_id, checklist.closed_on, calendars)
        try:
            self._transact([write, *references], f"checklist {checklist.checklist_id} changed while being written; "
                                                 "try again")
        except CalendarReferenceError as error:
            for index, reason in enumerate(error.reasons[1:len(checklist.closed_on) + 1]):
                if reason == "ConditionalCheckFailed":
                    raise InvalidInput(f"closed_on[{index}]", f"no calendar {checklist.closed_on[index]!r} (it was "
                                       "deleted meanwhile)") from None
            raise

    def _create_checklist(self, checklist: Checklist) -> None:
        try:
            self._request("put_item", Item=serialize(checklist.to_item()),
                                 ConditionExpression="attribute_not_exists(pk)")
        except ClientError as error:
            if error_code(error) == "ConditionalCheckFailedException":
                raise Conflict(f"checklist {checklist.checklist_id} was created meanwhile; try again") from error
            raise

    def _update_checklist(self, checklist: Checklist, expected_revision: int) -> None:
        """Write only the fields a user owns, conditional on the revision read. The evaluation's
        ``evaluated_until`` and schedule-sync's notes are never written back from a stale read."""
        try:
            self._request(
                "update_item", Key=serialize(keys.checklist_key(checklist.checklist_id)),
                **self._update_request(checklist, expected_revision),
            )
        except ClientError as error:
            if error_code(error) == "ConditionalCheckFailedException":
                raise Conflict(f"checklist {checklist.checklist_id} changed while being written; try again") from error
            raise

    @staticmethod
    def _update_request(checklist: Checklist, expected_revision: int) -> dict[str, Any]:
        """The UpdateItem of the fields a user owns, conditional on the revision read."""
        item = checklist.to_item()
        owned: tuple[str, ...] = ("name", "recurrence", "timezone", "window", "grace", "status", "updated_at",
                                  "effective_from", "revision", "closed_on")
        if "notify" not in checklist.extra:  # notifications (#18); a hand-edited, unreadable one is left as it is
            owned = (*owned, "notify")
        sets = [f"#{n} = :{n}" for n in owned if n in item]
        removes = [f"#{n}" for n in owned if n not in item]
        values = {f":{n}": item[n] for n in owned if n in item}
        values[":expected"] = expected_revision
        return {
            "UpdateExpression": "SET " + ", ".join(sets) + (" REMOVE " + ", ".join(removes) if removes else ""),
            "ConditionExpression": "attribute_exists(pk) AND #revision = :expected",
            "ExpressionAttributeNames": {f"#{n}": n for n in owned},
            "ExpressionAttributeValues": serialize(values),
        }

    def _require(self, checklist_id: str) -> Checklist:
        checklist = self.get_checklist(checklist_id)
        if checklist is None:
            raise NotFound(f"checklist {checklist_id!r} does not exist")
        return checklist

    def pause_checklist(self, checklist_id: str, now: datetime) -> Checklist:
        current = self._require(checklist_id)
        if current.status is Status.PAUSED:
            return current
        updated = current.with_changes(status=Status.PAUSED, updated_at=now, revision=current.revision + 1)
        self._update_checklist(updated, current.revision)
        return updated

    def resume_checklist(self, checklist_id: str, now: datetime) -> Checklist:
        """Resume; the rule takes effect again now, so the pause is never back-filled."""
        current = self._require(checklist_id)
        if current.status is Status.ACTIVE:
            return current
        updated = current.with_changes(status=Status.ACTIVE, updated_at=now, effective_from=now,
                                       revision=current.revision + 1)
        self._update_checklist(updated, current.revision)
        return updated

    def move_effective_from(self, checklist_id: str, to: datetime) -> bool:
        """Safety net for rule changes written around this adapter (a hand edit in the console):
        move ``effective_from`` forward to ``to``; never back."""
        return self._move_forward(checklist_id, "effective_from", to)

    def _move_forward(self, checklist_id: str, attribute: str, to: datetime) -> bool:
        """Set an instant attribute of the checklist to ``to`` only if that moves it forward."""
        return self._conditional(
            "update_item", Key=serialize(keys.checklist_key(checklist_id)),
            UpdateExpression=f"SET {attribute} = :to",
            ConditionExpression=f"attribute_exists(pk) AND (attribute_not_exists({attribute}) OR {attribute} < :to)",
            ExpressionAttributeValues=serialize({":to": to_utc_iso(to)}),
        )

    def delete_checklist(self, checklist_id: str) -> bool:
        """Delete the checklist (and its watermark). History is kept: its judged windows, performed and
        missed checks stay, and so do its assignments, each still-open one ended at the deletion (or at
        the watermark, or its own start, if that is later), so the report counts its past windows as
        they were judged and a checklist created later with the same id starts with no equipment."""
        # deleted checklists keep their assignments (#23: deleting a checklist never changes a past figure)
        watermark = self._get(keys.watermark_key(checklist_id)) or {}
        ended = max(to_utc_iso(clock.now()), str(watermark.get("evaluated_until") or ""))
        assignments = [item for item in self._query_prefix(keys.checklist_pk(checklist_id), keys.assignment_prefix())]
        # an assignment that had not begun yet ends as it begins (an empty period, never an inverted one)
        self.batch_write([{"PutRequest": {"Item": serialize({**a, "unassigned_at": max(ended, str(a["assigned_at"]))})}}
                          for a in assignments if not a.get("unassigned_at")])
        self.batch_write([{"DeleteRequest": {"Key": serialize(keys.watermark_key(checklist_id))}}])
        if (referenced := self._referenced_calendars(checklist_id)):
            # closure calendars (#23 item 2): the checklist and its references go together
            try:
                self._transact([{"Delete": {"TableName": self.name, "Key": serialize(keys.checklist_key(checklist_id)),
                                            "ConditionExpression": "attribute_exists(pk)"}},
                                *(self.dereference_action(checklist_id, c) for c in referenced)],
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

    def record_schedule_sync(self, checklist_id: str, revision: int, *, schedule: Mapping[str, Any] | None,
                             error: Mapping[str, Any] | None) -> bool:
        """Note on the checklist what schedule-sync did (or why it could not). Does not touch the rule
        fields, so the stream record this write causes is recognised as a no-op. Returns False when
        the checklist changed or vanished meanwhile (its own stream record will be synced)."""
        sets: list[str] = []
        removes: list[str] = []
        values: dict[str, Any] = {":rev": revision}
        for name, value in (("schedule", schedule), ("sync_error", error)):
            if value is None:
                removes.append(name)
            else:
                sets.append(f"{name} = :{name}")
                values[f":{name}"] = dict(value)
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
