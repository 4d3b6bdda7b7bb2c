"""Single-table keys: the one place that knows how items are laid out.

See README "Data model". Instants in keys are UTC ISO strings (``timefmt.to_utc_iso``), so a
``BETWEEN`` on a sort key is a time range.
"""

from __future__ import annotations

import hashlib

from missed_checks.equipment.assignments import SHARD_COUNT

CHECKLIST_SK = "CHECKLIST"
CHECKLISTS_INDEX_PK = "CHECKLISTS"
BY_EQUIPMENT_INDEX = "ByEquipment"
BY_PERIOD_INDEX = "ByPeriod"
# Sorts after every character our ids and instants use: the top of a BETWEEN range.
HIGH = "~"


_CHECKLIST_PK_PREFIX = "CHECKLIST#"
_CALENDAR_PK_PREFIX = "CALENDAR#"


def _id_of(prefix: str, pk: str) -> str | None:
    """The id in a partition key made of ``prefix`` and an id, None for a key without ``prefix``."""
    return pk.removeprefix(prefix) if pk.startswith(prefix) else None


def checklist_pk(checklist_id: str) -> str:
    return f"{_CHECKLIST_PK_PREFIX}{checklist_id}"


def checklist_id_of(pk: str) -> str | None:
    """The checklist id of a checklist partition's key (``CHECKLIST#<id>``), None for any other."""
    return _id_of(_CHECKLIST_PK_PREFIX, pk)


def checklist_key(checklist_id: str) -> dict[str, str]:
    return {"pk": checklist_pk(checklist_id), "sk": CHECKLIST_SK}


ITEMS_REVISION_PREFIX = "ITEMS#"


def items_revision_key(checklist_id: str, revision: int) -> dict[str, str]:
    """A checklist's items as one revision defined them (#33; never rewritten), in force from its
    ``effective_from``: what a check recorded under it and a window judged under it read by."""
    return {"pk": checklist_pk(checklist_id), "sk": f"{ITEMS_REVISION_PREFIX}{revision:012d}"}


def assignment_prefix(shard: int | None = None) -> str:
    return "EQUIPMENT#" if shard is None else f"EQUIPMENT#{shard:02d}#"


def assignment_key(checklist_id: str, shard: int, equipment_id: str) -> dict[str, str]:
    return {"pk": checklist_pk(checklist_id), "sk": f"{assignment_prefix(shard)}{equipment_id}"}


WATERMARK_SK = "CHECKLIST#EVALUATED_UNTIL"


def watermark_key(checklist_id: str) -> dict[str, str]:
    """The checklist's evaluated-until watermark, an item of its own beside the checklist item: the
    evaluation advances it after every window, and the stream filter (``sk = CHECKLIST`` exactly)
    keeps those writes from waking schedule-sync. ``begins_with(sk, "CHECKLIST")`` reads both."""
    return {"pk": checklist_pk(checklist_id), "sk": WATERMARK_SK}


def judged_window_key(checklist_id: str, window_start: str) -> dict[str, str]:
    """One record per judged window: its totals and the execution that claimed it (the only one that
    announces it, so it is announced once)."""
    return {"pk": checklist_pk(checklist_id), "sk": f"WINDOW#{window_start}"}


def equipment_pk(equipment_id: str) -> str:
    """ByEquipment partition of one piece of equipment: its assignments and performed checks."""
    return f"EQUIPMENT#{equipment_id}"


ASSIGNMENT_INDEX_PREFIX = "ASSIGNMENT#"
"""ByEquipment sort keys of assignments start with this (performed checks with their instant)."""


def assignment_index_sk(checklist_id: str) -> str:
    return f"{ASSIGNMENT_INDEX_PREFIX}{checklist_id}"


def performed_index_sk(performed_at: str, checklist_id: str) -> str:
    """ByEquipment sort key of a performed check: its instant (UTC ISO) first, so a range is a time range."""
    return f"{performed_at}#PERFORMED#{checklist_id}"


# -- write partitions: a checklist's performed and missed checks are spread over 128 partition keys --
PARTITIONS_PER_SHARD = 8
WRITE_PARTITIONS = SHARD_COUNT * PARTITIONS_PER_SHARD
"""A checklist's performed checks and its missed checks are each spread over this many partition
keys by a stable hash of the equipment id (:func:`write_partition`): one DynamoDB partition takes at
most 1,000 write units a second, and a window of 100,000 equipment writes at most about 800 missed
checks to each (docs/data-model.md, "Write bursts"), however fast its tasks write."""


def write_partition(equipment_id: str) -> int:
    """The equipment's write partition, 0 to ``WRITE_PARTITIONS - 1``: the same hash as its shard
    (:func:`missed_checks.equipment.assignments.shard_of`), so ``write_partition(e) % SHARD_COUNT ==
    shard_of(e)`` and a shard's equipment lies in the :func:`shard_partitions` of that shard."""
    digest = hashlib.sha256(equipment_id.encode("utf-8")).digest()
    return int.from_bytes(digest[:4], "big") % WRITE_PARTITIONS


def shard_partitions(shard: int) -> range:
    """The write partitions of one shard's equipment (``PARTITIONS_PER_SHARD`` of them)."""
    return range(shard, WRITE_PARTITIONS, SHARD_COUNT)


def performed_pk(checklist_id: str, partition: int) -> str:
    """A write partition of the checklist's performed checks (``write_partition`` of the equipment)."""
    return f"PERFORMED#{checklist_id}#{partition:03d}"


def performed_pks(checklist_id: str, shard: int) -> list[str]:
    """The partition keys of one shard's performed checks (the shard's write partitions)."""
    return [performed_pk(checklist_id, partition) for partition in shard_partitions(shard)]


def performed_key(checklist_id: str, equipment_id: str, performed_at: str) -> dict[str, str]:
    return {"pk": performed_pk(checklist_id, write_partition(equipment_id)), "sk": f"{performed_at}#{equipment_id}"}


def missed_pk(checklist_id: str, partition: int) -> str:
    """A write partition of the checklist's missed checks (``write_partition`` of the equipment)."""
    return f"MISSED#{checklist_id}#{partition:03d}"


def missed_pks(checklist_id: str) -> list[str]:
    """Every partition key of the checklist's missed checks: what a read of them all queries."""
    return [missed_pk(checklist_id, partition) for partition in range(WRITE_PARTITIONS)]


def missed_key(checklist_id: str, window_start: str, equipment_id: str) -> dict[str, str]:
    """Deterministic: the same (checklist, window start, equipment) always has the same key."""
    return {"pk": missed_pk(checklist_id, write_partition(equipment_id)), "sk": f"{window_start}#{equipment_id}"}


def fleet_windows_pk(month: str) -> str:
    """ByPeriod partition of the judged windows of every checklist whose window started in ``month``
    (``YYYY-MM``, UTC): one index entry per judged window, none per missed check."""
    return f"WINDOWS#{month}"


def fleet_windows_sk(window_start: str, checklist_id: str) -> str:
    """ByPeriod sort key of a judged window: its start (UTC ISO), then the checklist."""
    return f"{window_start}#{checklist_id}"


# -- out of service (issue #23 item 1: docs/out-of-service.md) ----------------------------------------
OUT_OF_SERVICE_PK = "OUT_OF_SERVICE"
"""The fleet's one partition of out-of-service periods: few next to the equipment, so judging a batch
reads the periods overlapping its window with one Query (``sk < <window end>``, filtered on ``to``)."""


def out_of_service_key(start: str, equipment_id: str) -> dict[str, str]:
    """An out-of-service period, sorted by its ``from`` (UTC ISO), then the equipment."""
    return {"pk": OUT_OF_SERVICE_PK, "sk": f"{start}#{equipment_id}"}


# -- closure calendars (#23 item 2) ---------------------------------------------------------------
CALENDAR_SK = "CALENDAR"
CALENDARS_INDEX_PK = "CALENDARS"
"""ByPeriod partition listing every calendar (sort key: its id), as ``CHECKLISTS`` lists checklists."""


def calendar_pk(calendar_id: str) -> str:
    return f"{_CALENDAR_PK_PREFIX}{calendar_id}"


def calendar_id_of(pk: str) -> str | None:
    """The calendar id of a calendar partition's key (``CALENDAR#<id>``), None for any other."""
    return _id_of(_CALENDAR_PK_PREFIX, pk)


def calendar_key(calendar_id: str) -> dict[str, str]:
    """The calendar item: its dates, revision and the checklists that reference it (``used_by``).
    The stream filter passes ``sk = CALENDAR`` exactly, so schedule-sync re-syncs its checklists."""
    return {"pk": calendar_pk(calendar_id), "sk": CALENDAR_SK}


def calendar_revision_key(calendar_id: str, revision: int) -> dict[str, str]:
    """A calendar as one revision defined it (never rewritten): what a judged window's
    ``judged_by.closed_on`` revision refers to."""
    return {"pk": calendar_pk(calendar_id), "sk": f"REVISION#{revision:012d}"}


# -- notifications (#18, people in the loop): one record per notification, by its deterministic id --
NOTIFICATION_SK = "NOTIFICATION"


def notification_key(notification_id: str) -> dict[str, str]:
    """The once-only record of one notification (``missed_checks.notifications.notification.notification_id``)."""
    return {"pk": f"NOTIFICATION#{notification_id}", "sk": NOTIFICATION_SK}


def notifications_pk(month: str) -> str:
    """ByPeriod partition of the notifications first claimed in ``month`` (``YYYY-MM``, UTC)."""
    return f"NOTIFICATIONS#{month}"


def notifications_sk(claimed_at: str, notification_id: str) -> str:
    """ByPeriod sort key of a notification: when it was first claimed (UTC ISO), then its id."""
    return f"{claimed_at}#{notification_id}"


# -- client requests (the HTTP API's idempotency keys, issue #19) --------------------------------
CLIENT_REQUEST_SK = "REQUEST"


def client_request_key(caller: str, idempotency_key: str) -> dict[str, str]:
    """One item per (caller, idempotency key): the request's fingerprint, when it was recorded and
    what it wrote, so a retry with the same key answers the same and never records twice."""
    return {"pk": f"REQUEST#{caller}#{idempotency_key}", "sk": CLIENT_REQUEST_SK}


# -- digest subscriptions (issue 18, the digest) ---------------------------------------------------
SUBSCRIPTION_SK = "SUBSCRIPTION"
SUBSCRIPTIONS_INDEX_PK = "SUBSCRIPTIONS"
"""ByPeriod partition listing every digest subscription (sort key: its id)."""


def subscription_key(subscription_id: str) -> dict[str, str]:
    """A digest subscription's item. Its sort key is not ``CHECKLIST``, so schedule-sync's stream
    filter never wakes for it."""
    return {"pk": f"SUBSCRIPTION#{subscription_id}", "sk": SUBSCRIPTION_SK}


# -- sites, the equipment registry and grants (#31: docs/access.md) --------------------------------
SITE_SK = "SITE"
SITES_INDEX_PK = "SITES"
"""ByPeriod partition listing every site (sort key: its id)."""


def site_key(site_id: str) -> dict[str, str]:
    return {"pk": f"SITE#{site_id}", "sk": SITE_SK}


REGISTERED_SK = "REGISTERED"


def registered_key(equipment_id: str) -> dict[str, str]:
    """A piece of equipment's registry record: its name, kind, attributes, site and moves."""
    return {"pk": f"REGISTERED#{equipment_id}", "sk": REGISTERED_SK}


def site_equipment_pk(site_id: str) -> str:
    """ByPeriod partition listing the equipment registered at a site now (sort key: its id); a move
    rewrites the record's ``gsi2pk``."""
    return f"SITE#{site_id}#EQUIPMENT"


GRANT_SK = "GRANT"
GRANTS_INDEX_PK = "GRANTS"
"""ByPeriod partition listing every grant (sort key: its principal)."""


def grant_key(principal: str) -> dict[str, str]:
    return {"pk": f"GRANT#{principal}", "sk": GRANT_SK}


SESSION_SK = "SESSION"


def session_key(key: str) -> dict[str, str]:
    """A web app session (#32), named by the SHA-256 of its id (never the id itself)."""
    return {"pk": f"SESSION#{key}", "sk": SESSION_SK}


# -- the audit trail (#31, docs/audit.md): one entry per change, written once, never updated ----------
AUDIT_PREFIX = "AUDIT#"
NO_SITE = "-"
"""The site partition of the entries of objects with no site (made before sites existed, grants)."""


def audit_pk(kind: str, object_id: str) -> str:
    """The partition of one object's trail."""
    return f"{AUDIT_PREFIX}{kind}#{object_id}"


def audit_key(kind: str, object_id: str, sequence: str, event_id: str) -> dict[str, str]:
    """One entry: sorted by the stream's sequence number (zero-padded to 40 digits), which is the order
    the table committed the changes in, then the stream record's id (what makes a replay find its
    entry). Not by ``changed_at``: that is the writer's clock, and two writers' clocks disagree (two
    Lambda hosts by milliseconds, the local runtime's workers by more), so an edit made after another
    could sort before it; ``changed_at`` is kept on the entry as what the writer said."""
    return {"pk": audit_pk(kind, object_id), "sk": f"{sequence}#{event_id}"}


def audit_site_pk(site_id: str | None) -> str:
    """ByPeriod partition of the entries of every object at ``site_id`` (None: objects with no site)."""
    return f"{AUDIT_PREFIX}SITE#{site_id or NO_SITE}"


def audit_site_sk(kind: str, object_id: str, sequence: str, event_id: str) -> str:
    """ByPeriod sort key of an entry: the table's commit order (the stream's sequence number, as
    :func:`audit_key`), then which object, then the record."""
    return f"{sequence}#{kind}#{object_id}#{event_id}"


# -- readiness (#33, docs/readiness.md): one state item per piece of equipment ------------------------
READINESS_SK = "READINESS"


def readiness_key(equipment_id: str) -> dict[str, str]:
    """An equipment's stored readiness: what was last announced (its state, sequence, announced)."""
    return {"pk": f"READINESS#{equipment_id}", "sk": READINESS_SK}


def site_readiness_pk(site_id: str | None) -> str:
    """ByPeriod partition of the readiness of a site's equipment (sort key: the equipment id); None:
    equipment at no site."""
    return f"SITE#{site_id or NO_SITE}#READINESS"


# -- defects (#33, docs/defects.md): one item per defect, by its deterministic id -------------------------
DEFECT_SK = "DEFECT"
DEFECT_INDEX_PREFIX = "DEFECT#"
"""ByEquipment sort keys of an equipment's defects start with this (its performed checks with an
instant, its assignments with ``ASSIGNMENT#``)."""


def defect_key(defect_id: str) -> dict[str, str]:
    """A defect (``missed_checks.defects.defect.defect_id_of``: the check that found it names it)."""
    return {"pk": f"DEFECT#{defect_id}", "sk": DEFECT_SK}


def defect_index_sk(found_at: str, defect_id: str) -> str:
    """ByEquipment sort key of a defect: oldest found first."""
    return f"{DEFECT_INDEX_PREFIX}{found_at}#{defect_id}"


def site_defects_pk(site_id: str | None) -> str:
    """ByPeriod partition of the defects of a site's equipment (None: equipment at no site)."""
    return f"SITE#{site_id or NO_SITE}#DEFECTS"


def site_defects_sk(found_at: str, defect_id: str) -> str:
    return f"{found_at}#{defect_id}"
