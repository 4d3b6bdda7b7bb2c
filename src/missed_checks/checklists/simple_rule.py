"""A recurrence given as a few fields (how often, on which days, at what local time, from which
date) instead of RFC 5545 text: what the web app's checklist form offers a person who does not
write RRULEs. :meth:`SimpleRule.to_text` turns it into the text a checklist holds (the recurrence
engine then validates it as any other); :meth:`SimpleRule.of_text` reads such text back into the
fields when it says no more than they can (to fill the form of an edit), None otherwise.

Each field is checked here with an error naming it (``time: 25:00 is not a time of day ...``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, time
from enum import StrEnum

from missed_checks.errors import InvalidInput, shorten

__all__ = ["WEEKDAYS", "Frequency", "SimpleRule"]

WEEKDAYS = ("MO", "TU", "WE", "TH", "FR", "SA", "SU")
"""RFC 5545's weekday codes, Monday first."""

_TIME = re.compile(r"(\d{1,2}):(\d{2})")
_TEXT = re.compile(r"DTSTART:(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})00\r?\n"
                   r"RRULE:FREQ=(DAILY|WEEKLY|MONTHLY)(?:;BYDAY=([A-Z,]+))?(?:;BYMONTHDAY=(\d{1,2}))?\s*")


class Frequency(StrEnum):
    daily = "daily"
    weekly = "weekly"
    monthly = "monthly"


@dataclass(frozen=True)
class SimpleRule:
    """Every day, every week on ``days``, or every month on ``month_day``, at ``at`` local time,
    from ``starting`` on (the local time is the checklist's zone: the text carries no TZID)."""

    frequency: Frequency
    at: time
    starting: date
    days: tuple[str, ...] = ()
    """Weekday codes (MO..SU), weekly only; in week order."""
    month_day: int | None = None
    """1-31, monthly only (a month without that day has no window that month)."""

    @classmethod
    def parse(cls, frequency: str, at: str, starting: str, days: Sequence[str] = (),
              month_day: str = "") -> SimpleRule:
        """The fields as a form sends them (text); InvalidInput naming the field that is wrong:
        ``frequency``, ``time``, ``starting``, ``days`` or ``month_day``."""
        try:
            kind = Frequency(frequency.strip().lower())
        except ValueError:
            raise InvalidInput("frequency", f"{shorten(frequency)} is not one of daily, weekly, monthly") from None
        matched = _TIME.fullmatch(at.strip())
        if not matched or int(matched[1]) > 23 or int(matched[2]) > 59:
            raise InvalidInput("time", f"{shorten(at)} is not a time of day: give HH:MM, 00:00 to 23:59")
        try:
            first = date.fromisoformat(starting.strip())
        except ValueError:
            raise InvalidInput("starting", f"{shorten(starting)} is not a date: give YYYY-MM-DD") from None
        unknown = [d for d in days if d not in WEEKDAYS]
        if unknown:
            raise InvalidInput("days", f"{shorten(unknown[0])} is not a weekday: give MO, TU, WE, TH, FR, SA or SU")
        chosen = tuple(d for d in WEEKDAYS if d in days)
        if kind is Frequency.weekly and not chosen:
            raise InvalidInput("days", "choose at least one day of the week")
        if kind is not Frequency.weekly and chosen:
            raise InvalidInput("days", f"days of the week go with weekly, not {kind.value}")
        number = None
        if kind is Frequency.monthly:
            text = month_day.strip()
            if not text.isdigit() or not 1 <= int(text) <= 31:
                raise InvalidInput("month_day", f"{shorten(month_day)} is not a day of the month: give 1 to 31")
            number = int(text)
        elif month_day.strip():
            raise InvalidInput("month_day", f"a day of the month goes with monthly, not {kind.value}")
        return cls(kind, time(int(matched[1]), int(matched[2])), first, chosen, number)

    def to_text(self) -> str:
        """The RFC 5545 text: a floating DTSTART (the checklist's zone applies) and one RRULE."""
        start = f"DTSTART:{self.starting:%Y%m%d}T{self.at:%H%M}00"
        rule = f"RRULE:FREQ={self.frequency.value.upper()}"
        if self.frequency is Frequency.weekly:
            rule += ";BYDAY=" + ",".join(self.days)
        elif self.frequency is Frequency.monthly:
            rule += f";BYMONTHDAY={self.month_day}"
        return f"{start}\n{rule}"

    @classmethod
    def of_text(cls, text: str) -> SimpleRule | None:
        """The fields ``text`` says, when it is exactly what :meth:`to_text` writes; None otherwise
        (a TZID, an INTERVAL, an EXDATE...: the text is then edited as text)."""
        matched = _TEXT.fullmatch(text.strip())
        if not matched:
            return None
        year, month, day, hour, minute, frequency, days, month_day = matched.groups()
        try:
            rule = cls.parse(frequency, f"{hour}:{minute}", f"{year}-{month}-{day}",
                             days.split(",") if days else (), month_day or "")
        except InvalidInput:
            return None
        return rule if rule.to_text() == text.strip() else None
