"""``GET/POST /sign-in`` and ``POST /sign-out``: a person signs in with their user name and password
at the stack's user pool (:func:`missed_checks.webapp.sessions.sign_in`) and is sent on to the page
they asked for (``next``, a path of this app), or out again."""

from __future__ import annotations

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.api_gateway import Router

from missed_checks.errors import InvalidInput
from missed_checks.webapp import sessions
from missed_checks.webapp.rendering import errors_of, page

router = Router()  # type: ignore[no-untyped-call]  # Powertools leaves __init__ unannotated

FIELDS = ("user", "password", "next")


def _form_page(*, user: str = "", next_path: str = "/", errors: dict[str, str] | None = None,
               status: int = 200, signed_out: bool = False) -> Response[str]:
    token, cookie = sessions.sign_in_token(router)
    answer = page(router, "sign_in.html.j2", title="Sign in", status=status, token=token, user=user,
                  next=sessions.safe_next(next_path), errors=errors or {}, signed_out=signed_out)
    answer.cookies.append(cookie)
    return answer


@router.get("/sign-in")
def sign_in_page() -> Response[str]:
    query = router.current_event.query_string_parameters or {}
    try:
        sessions.signed_in(router)  # the page shows who is signed in already (and the sign-out form)
    except sessions.SignInRequired:
        pass
    return _form_page(next_path=query.get("next", "/"), signed_out=bool(query.get("signed_out")))


@router.post("/sign-in")
def sign_in() -> Response[str]:
    fields = sessions.sign_in_form(router, FIELDS)
    try:
        cookie = sessions.sign_in(router, fields["user"], fields["password"])
    except InvalidInput as error:
        return _form_page(user=fields["user"], next_path=fields["next"], errors=errors_of(error, FIELDS), status=400)
    return sessions.redirect(sessions.safe_next(fields["next"]), [cookie])


@router.post("/sign-out")
def sign_out() -> Response[str]:
    return sessions.sign_out(router)
