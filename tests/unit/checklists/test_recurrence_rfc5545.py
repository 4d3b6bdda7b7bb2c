"""RFC 5545 §3.8.5.3's own RRULE examples (the ones that are not sub-hourly), run through
parse_recurrence: the occurrence starts must be the ones the RFC lists."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from missed_checks.checklists.recurrence import parse_recurrence

NY = "America/New_York"


def starts(dtstart: str, rrule: str, n: int, *, extra: str = "") -> list[str]:
    text = f"DTSTART;TZID={NY}:{dtstart}\nRRULE:{rrule}" + (f"\n{extra}" if extra else "")
    recurrence = parse_recurrence(text, window="PT1H")
    windows = recurrence.windows_after(datetime(1990, 1, 1, tzinfo=UTC), n)
    for window in windows:
        assert window.start.tzinfo == recurrence.zone
        assert window.end - window.start == timedelta(hours=1)
    return [w.start.strftime("%Y-%m-%d %H:%M") for w in windows]


def days(*items: str, time: str = "09:00") -> list[str]:
    return [f"{item} {time}" for item in items]


CASES = [
    ("daily, 10 occurrences", "19970902T090000", "FREQ=DAILY;COUNT=10", 20,
     days(*(f"1997-09-{d:02d}" for d in range(2, 12)))),
    ("every other day", "19970902T090000", "FREQ=DAILY;INTERVAL=2", 4,
     days("1997-09-02", "1997-09-04", "1997-09-06", "1997-09-08")),
    ("every 10 days, 5 occurrences", "19970902T090000", "FREQ=DAILY;INTERVAL=10;COUNT=5", 10,
     days("1997-09-02", "1997-09-12", "1997-09-22", "1997-10-02", "1997-10-12")),
    ("weekly, 10 occurrences", "19970902T090000", "FREQ=WEEKLY;COUNT=10", 20,
     days("1997-09-02", "1997-09-09", "1997-09-16", "1997-09-23", "1997-09-30", "1997-10-07",
          "1997-10-14", "1997-10-21", "1997-10-28", "1997-11-04")),
    ("every other week MO,WE,FR until 24 Dec", "19970901T090000",
     "FREQ=WEEKLY;INTERVAL=2;UNTIL=19971224T000000Z;WKST=SU;BYDAY=MO,WE,FR", 40,
     days("1997-09-01", "1997-09-03", "1997-09-05", "1997-09-15", "1997-09-17", "1997-09-19",
          "1997-09-29", "1997-10-01", "1997-10-03", "1997-10-13", "1997-10-15", "1997-10-17",
          "1997-10-27", "1997-10-29", "1997-10-31", "1997-11-10", "1997-11-12", "1997-11-14",
          "1997-11-24", "1997-11-26", "1997-11-28", "1997-12-08", "1997-12-10", "1997-12-12",
          "1997-12-22")),
    ("monthly on the first Friday", "19970905T090000", "FREQ=MONTHLY;COUNT=10;BYDAY=1FR", 20,
     days("1997-09-05", "1997-10-03", "1997-11-07", "1997-12-05", "1998-01-02", "1998-02-06",
          "1998-03-06", "1998-04-03", "1998-05-01", "1998-06-05")),
    ("every other month, first and last Sunday", "19970907T090000",
     "FREQ=MONTHLY;INTERVAL=2;COUNT=10;BYDAY=1SU,-1SU", 20,
     days("1997-09-07", "1997-09-28", "1997-11-02", "1997-11-30", "1998-01-04", "1998-01-25",
          "1998-03-01", "1998-03-29", "1998-05-03", "1998-05-31")),
    ("second-to-last Monday, 6 months", "19970922T090000", "FREQ=MONTHLY;COUNT=6;BYDAY=-2MO", 10,
     days("1997-09-22", "1997-10-20", "1997-11-17", "1997-12-22", "1998-01-19", "1998-02-16")),
    ("third-to-last day of the month", "19970928T090000", "FREQ=MONTHLY;BYMONTHDAY=-3", 6,
     days("1997-09-28", "1997-10-29", "1997-11-28", "1997-12-29", "1998-01-29", "1998-02-26")),
    ("2nd and 15th, 10 occurrences", "19970902T090000", "FREQ=MONTHLY;COUNT=10;BYMONTHDAY=2,15", 20,
     days("1997-09-02", "1997-09-15", "1997-10-02", "1997-10-15", "1997-11-02", "1997-11-15",
          "1997-12-02", "1997-12-15", "1998-01-02", "1998-01-15")),
    ("yearly in June and July", "19970610T090000", "FREQ=YEARLY;COUNT=10;BYMONTH=6,7", 20,
     days(*(f"{y}-{m}-10" for y in range(1997, 2002) for m in ("06", "07")))),
    ("every 3rd year on day 1, 100, 200", "19970101T090000",
     "FREQ=YEARLY;INTERVAL=3;COUNT=10;BYYEARDAY=1,100,200", 20,
     days("1997-01-01", "1997-04-10", "1997-07-19", "2000-01-01", "2000-04-09", "2000-07-18",
          "2003-01-01", "2003-04-10", "2003-07-19", "2006-01-01")),
    ("every 20th Monday of the year", "19970519T090000", "FREQ=YEARLY;BYDAY=20MO", 3,
     days("1997-05-19", "1998-05-18", "1999-05-17")),
    ("Monday of week 20", "19970512T090000", "FREQ=YEARLY;BYWEEKNO=20;BYDAY=MO", 3,
     days("1997-05-12", "1998-05-11", "1999-05-17")),
    ("every Thursday in March", "19970313T090000", "FREQ=YEARLY;BYMONTH=3;BYDAY=TH", 7,
     days("1997-03-13", "1997-03-20", "1997-03-27", "1998-03-05", "1998-03-12", "1998-03-19",
          "1998-03-26")),
    ("Thursdays in June to August", "19970605T090000", "FREQ=YEARLY;BYDAY=TH;BYMONTH=6,7,8", 14,
     days("1997-06-05", "1997-06-12", "1997-06-19", "1997-06-26", "1997-07-03", "1997-07-10",
          "1997-07-17", "1997-07-24", "1997-07-31", "1997-08-07", "1997-08-14", "1997-08-21",
          "1997-08-28", "1998-06-04")),
    ("first Saturday after the first Sunday", "19970913T090000",
     "FREQ=MONTHLY;BYDAY=SA;BYMONTHDAY=7,8,9,10,11,12,13", 10,
     days("1997-09-13", "1997-10-11", "1997-11-08", "1997-12-13", "1998-01-10", "1998-02-07",
          "1998-03-07", "1998-04-11", "1998-05-09", "1998-06-13")),
    ("US presidential election day", "19961105T090000",
     "FREQ=YEARLY;INTERVAL=4;BYMONTH=11;BYDAY=TU;BYMONTHDAY=2,3,4,5,6,7,8", 3,
     days("1996-11-05", "2000-11-07", "2004-11-02")),
    ("third TU/WE/TH, 3 months", "19970904T090000", "FREQ=MONTHLY;COUNT=3;BYDAY=TU,WE,TH;BYSETPOS=3", 5,
     days("1997-09-04", "1997-10-07", "1997-11-06")),
    ("second-to-last weekday", "19970929T090000", "FREQ=MONTHLY;BYDAY=MO,TU,WE,TH,FR;BYSETPOS=-2", 7,
     days("1997-09-29", "1997-10-30", "1997-11-27", "1997-12-30", "1998-01-29", "1998-02-26",
          "1998-03-30")),
    ("WKST=MO", "19970805T090000", "FREQ=WEEKLY;INTERVAL=2;COUNT=4;BYDAY=TU,SU;WKST=MO", 10,
     days("1997-08-05", "1997-08-10", "1997-08-19", "1997-08-24")),
    ("WKST=SU", "19970805T090000", "FREQ=WEEKLY;INTERVAL=2;COUNT=4;BYDAY=TU,SU;WKST=SU", 10,
     days("1997-08-05", "1997-08-17", "1997-08-19", "1997-08-31")),
    ("invalid dates are skipped", "20070115T090000", "FREQ=MONTHLY;BYMONTHDAY=15,30;COUNT=5", 10,
     days("2007-01-15", "2007-01-30", "2007-02-15", "2007-03-15", "2007-03-30")),
]  # fmt: skip


@pytest.mark.parametrize(("dtstart", "rrule", "n", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_rfc5545_example(dtstart: str, rrule: str, n: int, expected: list[str]) -> None:
    assert starts(dtstart, rrule, n) == expected


def test_daily_until_24_december_has_113_occurrences_ending_23_december() -> None:
    found = starts("19970902T090000", "FREQ=DAILY;UNTIL=19971224T000000Z", 200)
    assert len(found) == 113
    assert (found[0], found[-1]) == ("1997-09-02 09:00", "1997-12-23 09:00")


def test_every_day_in_january_for_3_years() -> None:
    found = starts(
        "19980101T090000", "FREQ=YEARLY;UNTIL=20000131T140000Z;BYMONTH=1;BYDAY=SU,MO,TU,WE,TH,FR,SA", 200
    )
    assert len(found) == 93
    assert {f[:7] for f in found} == {"1998-01", "1999-01", "2000-01"}


def test_friday_13th_with_exdate_of_dtstart() -> None:
    exdate = f"EXDATE;TZID={NY}:19970902T090000"
    found = starts("19970902T090000", "FREQ=MONTHLY;BYDAY=FR;BYMONTHDAY=13", 5, extra=exdate)
    assert found == days("1998-02-13", "1998-03-13", "1998-11-13", "1999-08-13", "2000-10-13")


def test_hourly_every_three_hours_until_utc() -> None:
    # RFC lists 09:00, 12:00, 15:00 but its UNTIL (17:00Z = 13:00 EDT) only allows the first two
    # (a known erratum); dateutil and RFC 5545's own UNTIL definition agree on two.
    found = starts("19970902T090000", "FREQ=HOURLY;INTERVAL=3;UNTIL=19970902T170000Z", 10)
    assert found == ["1997-09-02 09:00", "1997-09-02 12:00"]
