"""What the web app needs from outside: where sessions are kept and who signs people in."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from missed_checks.webapp.session import Session


class Sessions(Protocol):
    """The table's session items (:class:`missed_checks.aws.table.sessions.SessionItems`)."""

    def save_session(self, session: Session) -> None: ...

    def session_named(self, key: str) -> Session | None: ...

    def end_session(self, key: str) -> None: ...


class SignIn(Protocol):
    """The user pool (:class:`missed_checks.aws.user_pool.UserPool`): the claims of the person whose user
    name and password these are; :class:`missed_checks.errors.Forbidden` when they do not match."""

    def signed_in_claims(self, user: str, password: str) -> Mapping[str, Any]: ...
