"""What the site use cases read and write (:mod:`.saving`), as Protocols:
:class:`missed_checks.aws.table.sites.SiteItems` serves them, ``tests/fakes.py``'s in-memory table too."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from missed_checks.paging import Page
    from missed_checks.sites.site import Site


class SiteReader(Protocol):
    def get_site(self, site_id: str) -> Site | None:
        """The site, or None (strongly consistent)."""
        ...


class SiteStore(SiteReader, Protocol):
    def list_sites(self, position: str | None, limit: int) -> Page[Site]:
        """Sites in id order after ``position`` (a site id), at most ``limit``."""
        ...

    def write_site(self, site: Site, *, expected: int | None, by: str) -> None:
        """Write ``site`` (at its own revision) only over revision ``expected`` (None: only when no
        site has its id, else Conflict; PreconditionFailed with the current ETag when the stored
        revision differs, NotFound when it vanished); stamped ``changed_by=by`` and ``changed_at``."""
        ...
