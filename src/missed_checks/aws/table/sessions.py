"""Web app sessions (#32): ``SESSION#<sha256 of the id>`` / ``SESSION``, with the table's TTL attribute
``expires_at`` (epoch seconds). Not audited: the audit function's stream filter names other sort keys."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from missed_checks.aws.table import keys
from missed_checks.aws.table.base import TableClient, serialize
from missed_checks.errors import InvalidInput
from missed_checks.timefmt import parse_instant, to_utc_iso_micro
from missed_checks.webapp.session import Session


class SessionItems(TableClient):
    def save_session(self, session: Session) -> None:
        self._request("put_item", Item=serialize(session_item(session)))

    def session_named(self, key: str) -> Session | None:
        item = self._get(keys.session_key(key))
        return None if item is None else session_of(item)

    def end_session(self, key: str) -> None:
        self._request("delete_item", Key=serialize(keys.session_key(key)))


def session_item(session: Session) -> dict[str, Any]:
    return {**keys.session_key(session.key), "type": "session", "principal": session.principal,
            "name": session.name, "groups": list(session.groups), "csrf": session.csrf,
            "created_at": to_utc_iso_micro(session.created_at), "last_seen": to_utc_iso_micro(session.last_seen),
            "expires_at": int(session.expires_at.timestamp())}


def _instant(item: Mapping[str, Any], name: str) -> datetime:
    return parse_instant(item.get(name), name)  # type: ignore[arg-type]  # refuses what is no string, naming it


def session_of(item: Mapping[str, Any]) -> Session:
    """Read a session item; a hand-edited one fails with InvalidInput naming the attribute."""
    groups = item.get("groups") or []
    if not isinstance(groups, list) or not all(isinstance(g, str) for g in groups):
        raise InvalidInput("groups", "a session item's groups are a list of names")
    texts = {name: item.get(name) for name in ("principal", "name", "csrf")}
    for name, value in texts.items():
        if not isinstance(value, str) or not value:
            raise InvalidInput(name, "a session item needs it as a string")
    return Session(key=str(item["pk"]).removeprefix("SESSION#"), principal=str(texts["principal"]),
                   name=str(texts["name"]), groups=tuple(groups), csrf=str(texts["csrf"]),
                   created_at=_instant(item, "created_at"), last_seen=_instant(item, "last_seen"))
