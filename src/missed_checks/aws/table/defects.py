"""Defects (#33, docs/defects.md): one item per defect (``DEFECT#<id>`` / ``DEFECT``), listed per piece
of equipment (ByEquipment ``EQUIPMENT#<id>``, ``DEFECT#<found_at>#<id>``) and per site (ByPeriod
``SITE#<site or ->#DEFECTS``, ``<found_at>#<id>``), oldest found first.

A defect is opened once (a put conditional on its key being free: a retry, a replay or a second
writer finds it and leaves it as it is) and resolved once (a put conditional on the revision it was
read at). Every write is stamped (``changed_by``/``changed_at``/``change_id``), so the audit
function records it (kind ``defect``)."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from missed_checks.aws.table import keys
from missed_checks.aws.table.base import serialize, stamp
from missed_checks.aws.table.revised import RevisedItems, revision_in
from missed_checks.defects.defect import Defect, DefectStatus, ResolvedHow
from missed_checks.errors import InvalidInput, describe
from missed_checks.paging import Page, page_limit
from missed_checks.performed_checks.answers import failed_item_of
from missed_checks.timefmt import parse_instant, to_utc_iso

ITEM_TYPE = "defect"


class DefectItems(RevisedItems):
    """:class:`missed_checks.defects.ports.DefectStore`."""

    def put_defect(self, defect: Defect, *, by: str) -> bool:
        """Write a new defect stamped by ``by``; False when one with its id is on record (left as it is)."""
        return self._conditional("put_item", Item=serialize({**defect_item(defect), **stamp(by)}),
                                 ConditionExpression="attribute_not_exists(pk)")

    def get_defect(self, defect_id: str) -> Defect | None:
        item = self._get(keys.defect_key(defect_id))
        return None if item is None else defect_of(item)

    def resolve_defect_item(self, defect: Defect, *, expected: int, by: str) -> None:
        """Write the resolved ``defect`` over revision ``expected`` (PreconditionFailed naming the
        current ETag when it moved, NotFound when it is gone), stamped by ``by``."""
        self._write_revised(defect_item(defect), expected=expected, what=f"defect {defect.defect_id!r}", by=by)

    def defects_of_equipment(self, equipment_id: str, status: DefectStatus | None = None) -> list[Defect]:
        """The equipment's defects (of ``status`` only, when given), oldest found first: one ByEquipment Query."""
        items = self.query(keys.BY_EQUIPMENT_INDEX,
                           KeyConditionExpression="gsi1pk = :pk AND begins_with(gsi1sk, :prefix)",
                           ExpressionAttributeValues=serialize({":pk": keys.equipment_pk(equipment_id),
                                                                ":prefix": keys.DEFECT_INDEX_PREFIX}))
        defects = [defect_of(item) for item in items if item.get("type") == ITEM_TYPE]
        return [d for d in defects if status is None or d.status is status]

    def defects_of_site(self, site_id: str | None, status: DefectStatus | None = None,
                        position: str | None = None, limit: int = 100) -> Page[Defect]:
        """A page of the site's defects (of ``status`` only, when given), oldest found first, after
        ``position`` (the last one's ``<found_at>#<id>``): ByPeriod Queries until the page is full."""
        limit = page_limit(limit)
        condition = "gsi2pk = :pk" + (" AND gsi2sk > :after" if position is not None else "")
        values = {":pk": keys.site_defects_pk(site_id), **({":after": position} if position is not None else {})}
        found: list[Defect] = []
        last: str | None = None
        for item in self.query(keys.BY_PERIOD_INDEX, KeyConditionExpression=condition,
                               ExpressionAttributeValues=serialize(values)):
            defect = defect_of(item)
            if status is not None and defect.status is not status:
                continue
            if len(found) == limit:
                return Page(found, last)
            found.append(defect)
            last = str(item["gsi2sk"])
        return Page(found, None)


def defect_item(defect: Defect) -> dict[str, Any]:
    """The defect's item: its key, its two index entries, then its fields (:meth:`Defect.to_dict`;
    answers as DynamoDB numbers)."""
    found_at = to_utc_iso(defect.found_at)
    document = defect.to_dict()
    document["failed_items"] = [{**item.to_dict(), "answer": item.answer} for item in defect.failed_items]
    return {**keys.defect_key(defect.defect_id), "type": ITEM_TYPE,
            "gsi1pk": keys.equipment_pk(defect.equipment_id),
            "gsi1sk": keys.defect_index_sk(found_at, defect.defect_id),
            "gsi2pk": keys.site_defects_pk(defect.site_id),
            "gsi2sk": keys.site_defects_sk(found_at, defect.defect_id),
            **{name: value for name, value in document.items() if value is not None}}


def defect_of(item: Mapping[str, Any]) -> Defect:
    """A defect item read back; a hand-edited one fails with InvalidInput naming the attribute."""
    def text(name: str, required: bool = True) -> str | None:
        value = item.get(name)
        if value is None and not required:
            return None
        if not isinstance(value, str) or not value:
            raise InvalidInput(name, f"is {describe(value)}, not a text")
        return value

    def instant(name: str) -> datetime:
        return parse_instant(str(text(name)), name)

    def maybe_instant(name: str) -> datetime | None:
        value = text(name, required=False)
        return None if value is None else parse_instant(value, name)

    try:
        status = DefectStatus(str(item.get("status")))
        how = None if item.get("resolved_how") is None else ResolvedHow(str(item.get("resolved_how")))
    except ValueError as error:
        raise InvalidInput("status", str(error)) from None
    failed = item.get("failed_items") or []
    if not isinstance(failed, list) or not all(isinstance(f, Mapping) for f in failed):
        raise InvalidInput("failed_items", f"is {describe(failed)}, not a list of items")
    cleared = item.get("cleared_by_check")
    return Defect(
        defect_id=str(text("defect_id")), checklist_id=str(text("checklist_id")),
        equipment_id=str(text("equipment_id")), site_id=text("site_id", required=False),
        failed_items=tuple(failed_item_of(f) for f in failed), found_by=text("found_by", required=False),
        found_at=instant("found_at"), opened_at=instant("opened_at"), status=status,
        resolved_by=text("resolved_by", required=False),
        resolved_at=maybe_instant("resolved_at"), resolution=text("resolution", required=False),
        resolved_how=how,
        cleared_by_check={str(k): str(v) for k, v in cleared.items()} if isinstance(cleared, Mapping) else None,
        revision=revision_in(item))
