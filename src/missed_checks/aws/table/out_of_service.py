"""Out-of-service periods: one item each, in the fleet's one partition sorted by ``from``.

Judging a batch of equipment for one window reads the periods overlapping the window with one
Query (``sk < <window end>``, filtered on ``to``), whatever the batch or fleet size; the report
reads the periods overlapping a range the same way, for a set of equipment.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any

from botocore.exceptions import ClientError

from missed_checks.aws.table import keys
from missed_checks.aws.table.base import (
    Conflict,
    NotFound,
    TableClient,
    condition_item,
    error_code,
    serialize,
    stamp,
    stamp_update,
)
from missed_checks.equipment.assignments import validate_equipment_id
from missed_checks.equipment.out_of_service import OutOfServicePeriod
from missed_checks.errors import InvalidInput
from missed_checks.timefmt import parse_instant, to_utc_iso

ITEM_TYPE = "out_of_service"


class OutOfServiceItems(TableClient):
    def out_of_service_periods(self, start: datetime, end: datetime | None = None,
                               equipment_ids: Iterable[str] | None = None) -> list[OutOfServicePeriod]:
        """Periods sharing an instant with ``[start, end)`` (``end`` None: every period not ended by
        ``start``), of ``equipment_ids`` when given, by ``from`` then equipment: one strongly consistent
        Query of the fleet's partition (``sk < end``), filtered on ``to`` (and on the equipment)."""
        names = {"#to": "to"}
        values: dict[str, object] = {":pk": keys.OUT_OF_SERVICE_PK, ":start": to_utc_iso(start)}
        condition = "pk = :pk"
        if end is not None:
            # sk = "<from>#<equipment>" and from has 20 characters: sk < end exactly when from < end.
            condition += " AND sk < :end"
            values[":end"] = to_utc_iso(end)
        wanted = None if equipment_ids is None else sorted(set(equipment_ids))
        filters = "(attribute_not_exists(#to) OR #to > :start)"
        if wanted is not None:
            if not wanted:
                return []
            if len(wanted) <= 50:  # else filtered here: a FilterExpression holds at most 100 operands in IN
                values.update({f":e{n}": equipment for n, equipment in enumerate(wanted)})
                filters += " AND equipment_id IN (" + ", ".join(f":e{n}" for n in range(len(wanted))) + ")"
        items = self.query(KeyConditionExpression=condition, FilterExpression=filters, ConsistentRead=True,
                           ExpressionAttributeNames=names, ExpressionAttributeValues=serialize(values))
        chosen = None if wanted is None else set(wanted)
        periods = [period_of(item) for item in items
                   if item.get("type") == ITEM_TYPE and (chosen is None or item["equipment_id"] in chosen)]
        return sorted(periods, key=lambda p: (p.start, p.equipment_id))

    def out_of_service_of_equipment(self, equipment_id: str) -> list[OutOfServicePeriod]:
        """Every period of one piece of equipment, past and future, by ``from``."""
        return self.out_of_service_periods(datetime.fromisoformat("1970-01-01T00:00:00+00:00"), None,
                                           [validate_equipment_id(equipment_id, "equipment")])

    def record_out_of_service(self, period: OutOfServicePeriod) -> tuple[OutOfServicePeriod, bool]:
        """Write a period (validated by :meth:`OutOfServicePeriod.create`); the period as it is on
        record and True when written now, or the period recorded earlier and False when the same
        period was recorded already (a re-run, or someone else): its ``recorded_by`` and
        ``recorded_at`` are never rewritten. A period overlapping another one of the same equipment
        is refused (InvalidInput naming ``from``): end or shorten that one first. The item is stamped
        ``changed_by`` = the period's ``recorded_by`` (the audit trail)."""
        for other in self.out_of_service_periods(period.start, period.end, [period.equipment_id]):
            if other.same_as(period):
                return other, False
            until = f"until {to_utc_iso(other.end)}" if other.end else "until further notice"
            raise InvalidInput("from", f"{period.equipment_id} is already out of service from "
                                       f"{to_utc_iso(other.start)} {until} ({other.reason}): a new period must not "
                                       "overlap it (end it early with back-in-service, or choose other dates)")
        try:
            self._request("put_item", Item=serialize({**period_item(period), **stamp(period.recorded_by)}),
                          ConditionExpression="attribute_not_exists(pk)", ReturnValuesOnConditionCheckFailure="ALL_OLD")
        except ClientError as error:
            if error_code(error) != "ConditionalCheckFailedException":
                raise
            old = condition_item(error)
            if old is not None and (earlier := period_of(old)).same_as(period):
                return earlier, False  # the same period, recorded concurrently: the first record stays
            raise Conflict(f"a period of {period.equipment_id} from {to_utc_iso(period.start)} was recorded "
                           "meanwhile; list them and try again") from None
        return period, True

    def end_out_of_service(self, equipment_id: str, at: datetime, *, by: str, now: datetime) -> OutOfServicePeriod:
        """End the equipment's period in effect at ``at`` early, from ``at`` on (see
        :meth:`OutOfServicePeriod.ended` for what is refused); returns the period as it now is.
        :class:`NotFound` when the equipment is not out of service at ``at``. Stamped by ``by``."""
        equipment_id = validate_equipment_id(equipment_id, "equipment")
        periods = self.out_of_service_of_equipment(equipment_id)
        current = next((p for p in periods if p.in_effect_at(at)), None)
        if current is None:
            last = [p for p in periods if p.start <= at]
            since = (f" (its last period ended {to_utc_iso(last[-1].end)})" if last and last[-1].end else "")
            raise NotFound(f"{equipment_id} is not out of service at {to_utc_iso(at)}{since}")
        ended = current.ended(at, by=by, now=now)
        item = period_item(ended)
        unchanged = "#to = :old" if current.end else "attribute_exists(pk) AND attribute_not_exists(#to)"
        clauses, stamped = stamp_update(by)
        update = f"SET #to = :to, ended_by = :by, ended_at = :at, {clauses}"
        values: dict[str, Any] = {":to": item["to"], ":by": item["ended_by"], ":at": item["ended_at"], **stamped}
        if current.end:
            values[":old"] = to_utc_iso(current.end)
        if current.ended_at is None:
            if current.end:  # the plan it had, kept once
                update += ", planned_to = :planned"
                values[":planned"] = item["planned_to"]
            unchanged += " AND attribute_not_exists(ended_at)"
        else:  # ended early before: that ending is appended to the record, never overwritten
            update += ", earlier_endings = list_append(if_not_exists(earlier_endings, :none), :previous)"
            values.update({":none": [], ":previous": [ended.earlier_endings[-1]],
                           ":old_at": to_utc_iso(current.ended_at)})
            unchanged += " AND ended_at = :old_at"
        try:
            self._request(
                "update_item", Key=serialize(keys.out_of_service_key(to_utc_iso(current.start), equipment_id)),
                UpdateExpression=update, ConditionExpression=unchanged, ExpressionAttributeNames={"#to": "to"},
                ExpressionAttributeValues=serialize(values),
            )
        except ClientError as error:
            if error_code(error) == "ConditionalCheckFailedException":
                raise Conflict(f"the period of {equipment_id} from {to_utc_iso(current.start)} changed meanwhile; "
                               "list it and try again") from error
            raise
        return ended

    def cancel_out_of_service(self, equipment_id: str, start: datetime, now: datetime, *,
                              by: str) -> OutOfServicePeriod:
        """Delete the equipment's period starting at ``start`` while it has not started (see
        :meth:`OutOfServicePeriod.require_planned`); returns it. :class:`NotFound` when there is none.
        Stamped by ``by`` first (``deleting``: the audit trail's removal names who cancelled it)."""
        key = keys.out_of_service_key(to_utc_iso(start), validate_equipment_id(equipment_id, "equipment"))
        item = self._get(key)
        if item is None:
            raise NotFound(f"{equipment_id} has no out-of-service period from {to_utc_iso(start)}")
        period = period_of(item)
        period.require_planned(now)
        names, planned = {"#from": "from"}, "#from > :now"
        if not self._stamp_deletion(key, by, planned, ExpressionAttributeNames=names,
                                    ExpressionAttributeValues={":now": to_utc_iso(now)}) \
                or not self._conditional("delete_item", Key=serialize(key), ConditionExpression=planned,
                                         ExpressionAttributeNames=names,
                                         ExpressionAttributeValues=serialize({":now": to_utc_iso(now)})):
            raise Conflict(f"the period of {equipment_id} from {to_utc_iso(start)} changed meanwhile; list it")
        return period


# -- the period's item --------------------------------------------------------------------------------
def period_item(period: OutOfServicePeriod) -> dict[str, Any]:
    """The table item: in the fleet's one out-of-service partition, sorted by ``from``."""
    return {**keys.out_of_service_key(to_utc_iso(period.start), period.equipment_id), "type": ITEM_TYPE,
            **{name: value for name, value in period.to_dict().items() if value is not None}}


def period_of(item: Mapping[str, Any]) -> OutOfServicePeriod:
    """A stored period, read back as it was written."""
    return OutOfServicePeriod(
        equipment_id=str(item["equipment_id"]),
        start=parse_instant(item["from"], "from"),
        end=parse_instant(item["to"], "to") if item.get("to") else None,
        reason=str(item.get("reason", "")),
        recorded_by=str(item.get("recorded_by", "")),
        recorded_at=parse_instant(item["recorded_at"], "recorded_at"),
        planned_end=parse_instant(item["planned_to"], "planned_to") if item.get("planned_to") else None,
        ended_by=str(item["ended_by"]) if item.get("ended_by") else None,
        ended_at=parse_instant(item["ended_at"], "ended_at") if item.get("ended_at") else None,
        earlier_endings=tuple({str(k): str(v) for k, v in ending.items()}
                              for ending in item.get("earlier_endings") or () if isinstance(ending, Mapping)),
    )
