"""The equipment registry's items (#31): ``REGISTERED#<equipment id>``, listed per site through
ByPeriod ``SITE#<site>#EQUIPMENT`` (a move rewrites the one item's ``gsi2pk``); written by revision
(:mod:`.revised`), every write stamped for the audit trail. A record is never deleted (retiring
keeps it, with ``retired_at``)."""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any

from missed_checks.aws.table import keys
from missed_checks.aws.table.revised import RevisedItems, revision_in
from missed_checks.equipment.assignments import validate_equipment_id
from missed_checks.equipment.registering import what
from missed_checks.equipment.registration import (
    RegisteredEquipment,
    SiteMove,
    validate_attributes,
    validate_kind,
    validate_name,
)
from missed_checks.errors import InvalidInput, describe
from missed_checks.paging import Page
from missed_checks.sites.site import validate_site_id
from missed_checks.timefmt import parse_instant, to_utc_iso


class RegistryItems(RevisedItems):
    def get_registered(self, equipment_id: str) -> RegisteredEquipment | None:
        item = self._get(keys.registered_key(validate_equipment_id(equipment_id, "equipment_id")))
        return None if item is None else registered_of(item)

    def registered_equipment(self, equipment_ids: Collection[str]) -> dict[str, RegisteredEquipment]:
        """The record of each of ``equipment_ids`` that is registered (strongly consistent BatchGetItem)."""
        wanted = sorted({validate_equipment_id(e) for e in equipment_ids})
        items = self.batch_get([keys.registered_key(e) for e in wanted], consistent=True)
        return {record.equipment_id: record for record in map(registered_of, items)}

    def list_registered(self, site_id: str, position: str | None, limit: int) -> Page[RegisteredEquipment]:
        return self._index_page(keys.site_equipment_pk(validate_site_id(site_id)), position, limit, registered_of)

    def write_registered(self, equipment: RegisteredEquipment, *, expected: int | None, by: str) -> None:
        self._write_revised(registered_item(equipment), expected=expected, what=what(equipment.equipment_id), by=by)


def registered_item(equipment: RegisteredEquipment) -> dict[str, Any]:
    return {**keys.registered_key(equipment.equipment_id), "type": "registered_equipment",
            "gsi2pk": keys.site_equipment_pk(equipment.site_id), "gsi2sk": equipment.equipment_id,
            "equipment_id": equipment.equipment_id, "name": equipment.name, "kind": equipment.kind,
            "site_id": equipment.site_id, "attributes": dict(equipment.attributes),
            "moves": [move.to_dict() for move in equipment.moves],
            "retired_at": to_utc_iso(equipment.retired_at) if equipment.retired_at else None,
            "revision": equipment.revision,
            "created_at": to_utc_iso(equipment.created_at) if equipment.created_at else None,
            "updated_at": to_utc_iso(equipment.updated_at) if equipment.updated_at else None}


def registered_of(item: Mapping[str, Any]) -> RegisteredEquipment:
    """Read a registry item; a hand-edited one fails with InvalidInput naming the attribute."""
    moves = item.get("moves") or []
    if not isinstance(moves, list):
        raise InvalidInput("moves", f"is {describe(moves)}, not a list of moves")
    placements = []
    for index, move in enumerate(moves):
        if not isinstance(move, Mapping):
            raise InvalidInput(f"moves[{index}]", f"is {describe(move)}, not a map of site_id and since")
        since: Any = move.get("since")  # parse_instant refuses anything but an instant's text, naming the field
        placements.append(SiteMove(validate_site_id(move.get("site_id"), f"moves[{index}].site_id"),
                                   parse_instant(since, f"moves[{index}].since")))
    retired_at, created_at, updated_at = (item.get(name) for name in ("retired_at", "created_at", "updated_at"))
    return RegisteredEquipment(
        equipment_id=validate_equipment_id(item.get("equipment_id"), "equipment_id"),
        name=validate_name(item.get("name")), kind=validate_kind(item.get("kind")),
        site_id=validate_site_id(item.get("site_id")), attributes=validate_attributes(item.get("attributes")),
        moves=tuple(placements), revision=revision_in(item),
        retired_at=parse_instant(retired_at, "retired_at") if retired_at else None,
        created_at=parse_instant(created_at, "created_at") if created_at else None,
        updated_at=parse_instant(updated_at, "updated_at") if updated_at else None)
