"""The fleet manager's web app (#32): pages served by ``WebAppFunction`` behind the ``WebApp`` HTTP API.

Every page calls the same scoped use cases as the people's API with the signed-in person's
:class:`~missed_checks.permissions.caller.Caller` (no second door, no second rule). Shared by every
page: :mod:`.rendering` (Jinja templates, security headers, error pages), :mod:`.sessions` (sign-in
with the stack's user pool, server-side sessions, CSRF-checked forms), :mod:`.context` (the table of
the request). One module per page under :mod:`.pages`, each with one Powertools ``Router``.
"""
