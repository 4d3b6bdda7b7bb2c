"""The audit trail (#31): who changed what a person manages, when, and the object before and after.

Entries are made from the table's stream (:mod:`missed_checks.audit_trails.auditing`, run by the
audit function), written once and never rewritten, and read per object and per site
(:mod:`missed_checks.audit_trails.reading`). See docs/audit.md.
"""
