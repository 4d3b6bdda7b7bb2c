"""Site items (#31): ``SITE#<id>``, listed through ByPeriod ``SITES``; written by revision
(:mod:`.revised`), every write stamped for the audit trail. A site is never deleted."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from missed_checks.aws.table import keys
from missed_checks.aws.table.revised import RevisedItems, revision_in
from missed_checks.paging import Page
from missed_checks.sites.saving import what
from missed_checks.sites.site import Site, validate_name, validate_site_id, validate_site_timezone
from missed_checks.timefmt import parse_instant, to_utc_iso


class SiteItems(RevisedItems):
    def get_site(self, site_id: str) -> Site | None:
        item = self._get(keys.site_key(validate_site_id(site_id)))
        return None if item is None else site_of(item)

    def list_sites(self, position: str | None, limit: int) -> Page[Site]:
        return self._index_page(keys.SITES_INDEX_PK, position, limit, site_of)

    def write_site(self, site: Site, *, expected: int | None, by: str) -> None:
        self._write_revised(site_item(site), expected=expected, what=what(site.site_id), by=by)


def site_item(site: Site) -> dict[str, Any]:
    return {**keys.site_key(site.site_id), "type": "site", "gsi2pk": keys.SITES_INDEX_PK, "gsi2sk": site.site_id,
            "site_id": site.site_id, "name": site.name, "timezone": site.timezone, "revision": site.revision,
            "created_at": to_utc_iso(site.created_at) if site.created_at else None,
            "updated_at": to_utc_iso(site.updated_at) if site.updated_at else None}


def site_of(item: Mapping[str, Any]) -> Site:
    """Read a site item; a hand-edited one fails with InvalidInput naming the attribute."""
    created_at, updated_at = item.get("created_at"), item.get("updated_at")
    return Site(site_id=validate_site_id(item.get("site_id")), name=validate_name(item.get("name")),
                timezone=validate_site_timezone(item.get("timezone")), revision=revision_in(item),
                created_at=parse_instant(created_at, "created_at") if created_at else None,
                updated_at=parse_instant(updated_at, "updated_at") if updated_at else None)
