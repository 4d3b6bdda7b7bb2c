"""Hypothesis strategies for hostile scenario documents (``missed_checks_local.product.scenario``), shared by
the parse-level property (tests/unit/local/test_scenario_properties.py) and the played one
(tests/integration/local/test_scenario_play_properties.py).

A document is mostly a coherent timeline (a few checklists, calendars and pieces of equipment that
events refer to, instants inside the scenario), so that generated scenarios get past validation
often enough to be played; each value is now and then hostile: an id outside its alphabet or with
a trailing newline, an instant without offset, with a fraction of a second, out of range or of the
wrong type, text that is blank, too long or holds control characters, a list where one value is
expected, a field missing or unknown, an event before the thing it names exists (about one event
in six is hostile, so that most documents hold one and many are still played).
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from typing import Any

from hypothesis import strategies as st

START = datetime(2026, 3, 1, 0, 0, tzinfo=UTC)
END = datetime(2026, 3, 15, 0, 0, tzinfo=UTC)
"""The scenario's span (two weeks, a DST change in none of the zones used here)."""

PLAYABLE = ("put_checklist", "put_calendar", "assign", "unassign", "performed", "pause_checklist",
            "resume_checklist", "delete_checklist", "out_of_service", "back_in_service", "subscribe_digest",
            "fail_next_firing")
"""Actions the played property applies (``dismiss`` needs a missed check, which only an evaluation writes)."""
EVERY_ACTION = (*PLAYABLE, "dismiss")

ODD = st.one_of(st.none(), st.booleans(), st.integers(-10**12, 10**12), st.floats(allow_nan=False),
                st.lists(st.integers(), max_size=2), st.dictionaries(st.text(max_size=3), st.integers(), max_size=2))


def mostly(good: st.SearchStrategy[Any], bad: st.SearchStrategy[Any], good_in_ten: int = 8) -> st.SearchStrategy[Any]:
    return st.integers(0, 9).flatmap(lambda n: good if n < good_in_ten else bad)


CHECKLISTS = ("forklift", "yard.2")
CALENDARS = ("holidays",)
EQUIPMENT = ("FL-1", "FL-2", "tag:7/b")
ADDRESSES = ("crew@example.com", "lead@example.com")

BAD_IDS = st.sampled_from(["", " ", "bad id", "forklift\n", " forklift", "_x", "x" * 200, "ü", "a/b", "a\x00b"]) | ODD
_GOOD_TEXT = st.text(st.characters(min_codepoint=32, max_codepoint=0x2FFF, exclude_categories=("Cs",)),
                     min_size=1, max_size=24).filter(lambda t: t.strip() == t and t != "")
_BAD_TEXT = st.sampled_from(["", "   ", "two\nlines", "tab\there", "x" * 600, "\x07bell", " padded "]) | ODD


def vary(good: st.SearchStrategy[Any], bad: st.SearchStrategy[Any], hostile: bool,
         good_in_ten: int = 7) -> st.SearchStrategy[Any]:
    """``good``, or (in a hostile event) now and then ``bad``."""
    return mostly(good, bad, good_in_ten) if hostile else good


def checklist_ids(hostile: bool) -> st.SearchStrategy[Any]:
    return vary(st.sampled_from(CHECKLISTS) if hostile else st.just(CHECKLISTS[0]),
                BAD_IDS | st.just("no-such-checklist"), hostile)


def calendar_ids(hostile: bool) -> st.SearchStrategy[Any]:
    return vary(st.sampled_from(CALENDARS), BAD_IDS | st.just("no-such-calendar"), hostile)


def equipment_ids(hostile: bool) -> st.SearchStrategy[Any]:
    return vary(st.sampled_from(EQUIPMENT) if hostile else st.sampled_from(EQUIPMENT[:2]),
                BAD_IDS | st.just("FL-never"), hostile)


def texts(hostile: bool) -> st.SearchStrategy[Any]:
    return vary(_GOOD_TEXT, _BAD_TEXT, hostile)


def addresses(hostile: bool) -> st.SearchStrategy[Any]:
    return vary(st.sampled_from(ADDRESSES), st.sampled_from(["crew@", "a b@example.com", "Crew <c@example.com>",
                                                            "crew@example.com\n"]) | ODD, hostile)


@st.composite
def instants(draw: st.DrawFn, low: datetime = START, high: datetime = END, hostile: bool = False) -> Any:
    """An instant in ``[low, high]`` (whole seconds, in some offset); in a hostile event, now and then not."""
    if hostile and draw(st.integers(0, 4)) == 0:
        return draw(st.sampled_from(["2026-03-02T08:00:00", "2026-03-02T08:00:00.5Z", "2026-03-02T08:00:00.000001Z",
                                     "1969-12-31T23:59:59Z", "2300-01-01T00:00:00Z", "2026-02-30T00:00:00Z",
                                     "2026-03-02 08:00:00Z", "not a time", "", "2026-03-02T08:00:00+24:00",
                                     "2026-03-01T00:00:00-00:01"]) | ODD)
    seconds = draw(st.integers(0, int((high - low).total_seconds())))
    instant = low + timedelta(seconds=seconds)
    offset = draw(st.sampled_from([timedelta(0), timedelta(hours=1), timedelta(hours=-5, minutes=-30)]))
    local = instant.astimezone(st_timezone(offset))
    text = local.isoformat()
    return text.replace("+00:00", "Z") if offset == timedelta(0) and draw(st.booleans()) else text


def st_timezone(offset: timedelta) -> Any:
    from datetime import timezone

    return timezone(offset)


RULES = ("DTSTART;TZID=Europe/Berlin:20260302T060000\nRRULE:FREQ=DAILY",
         "DTSTART;TZID=America/New_York:20260302T070000\nRRULE:FREQ=WEEKLY;BYDAY=MO,WE,FR",
         "DTSTART:20260302T050000Z\nRRULE:FREQ=DAILY;COUNT=5")


def recurrences(hostile: bool) -> st.SearchStrategy[Any]:
    return vary(st.sampled_from(RULES), st.sampled_from(["RRULE:FREQ=DAILY", "DTSTART:20260302T050000Z\n"
                                                        "RRULE:FREQ=SECONDLY", "", "garbage"]) | ODD, hostile)


def windows(hostile: bool) -> st.SearchStrategy[Any]:
    return vary(st.sampled_from(["PT8H", "PT2H", "PT30M"]), st.sampled_from(["P0D", "PT0S", "-PT1H", "8h", ""]) | ODD,
                hostile)


def _maybe_broken(draw: st.DrawFn, fields: dict[str, Any], required: tuple[str, ...],
                  hostile: bool) -> dict[str, Any]:
    """In a hostile event, now and then a required field missing, or a field nobody knows."""
    roll = draw(st.integers(0, 9)) if hostile else -1
    if roll == 0 and required:
        fields.pop(draw(st.sampled_from(required)), None)
    elif roll == 1:
        fields[draw(st.sampled_from(["colour", "ID", "by ", ""]))] = draw(ODD)
    return fields


@st.composite
def put_checklist(draw: st.DrawFn, hostile: bool) -> dict[str, Any]:
    fields: dict[str, Any] = {"id": draw(checklist_ids(hostile)), "recurrence": draw(recurrences(hostile)),
                              "window": draw(windows(hostile))}
    if draw(st.booleans()):
        fields["name"] = draw(texts(hostile))
    if draw(st.integers(0, 3)) == 0:
        fields["grace"] = draw(vary(st.sampled_from(["PT30M", "PT1H"]), st.sampled_from(["", "-PT1M"]) | ODD, hostile))
    if hostile and draw(st.integers(0, 4)) == 0:
        fields["validate"] = draw(st.just(False) | st.just(True) | ODD)
    if hostile and draw(st.integers(0, 4)) == 0:
        fields["timezone"] = draw(st.sampled_from(["Europe/Berlin", "Europe", "", " UTC", "Mars/Olympus"]) | ODD)
    if draw(st.integers(0, 3)) == 0:
        fields["closed_on"] = draw(vary(st.lists(calendar_ids(hostile), max_size=2), ODD, hostile))
    if draw(st.integers(0, 3)) == 0:
        notify: dict[str, Any] = {"to": draw(vary(st.lists(addresses(hostile), min_size=1, max_size=2), ODD, hostile))}
        if draw(st.booleans()):
            notify["remind_before"] = draw(vary(st.lists(st.sampled_from(["PT1H", "PT15M", "PT1M"]), max_size=2),
                                                st.sampled_from([["PT30S"], ["PT59S"], ["PT8H"], ["P1D"]]) | ODD,
                                                hostile))
        fields["notify"] = notify
    return _maybe_broken(draw, fields, ("id", "recurrence"), hostile)


@st.composite
def put_calendar(draw: st.DrawFn, hostile: bool) -> dict[str, Any]:
    dates = st.lists(st.sampled_from(["2026-03-04", "2026-03-10", "2026-03-04"]), max_size=3)
    fields: dict[str, Any] = {"id": draw(calendar_ids(hostile)),
                              "dates": draw(vary(dates, st.sampled_from([["2026-02-30"], ["04/03/2026"], "2026-03-04"])
                                                 | ODD, hostile))}
    if draw(st.booleans()):
        fields["description"] = draw(texts(hostile))
    if draw(st.booleans()):
        fields["by"] = draw(texts(hostile))
    return _maybe_broken(draw, fields, ("id", "dates"), hostile)


@st.composite
def assignment(draw: st.DrawFn, hostile: bool) -> dict[str, Any]:
    equipment = equipment_ids(hostile)
    return _maybe_broken(draw, {"checklist": draw(checklist_ids(hostile)),
                                "equipment": draw(vary(st.lists(equipment, min_size=1, max_size=3) | equipment,
                                                       st.just([]) | ODD, hostile))},
                         ("checklist", "equipment"), hostile)


@st.composite
def performed(draw: st.DrawFn, at: datetime, hostile: bool) -> dict[str, Any]:
    fields: dict[str, Any] = {"checklist": draw(checklist_ids(hostile)), "equipment": draw(equipment_ids(hostile))}
    if draw(st.booleans()):
        fields["performed_at"] = draw(instants(START, at + timedelta(minutes=1) if hostile else at, hostile))
    if draw(st.booleans()):
        fields["by"] = draw(texts(hostile))
    return _maybe_broken(draw, fields, ("checklist", "equipment"), hostile)


@st.composite
def out_of_service(draw: st.DrawFn, hostile: bool) -> dict[str, Any]:
    fields: dict[str, Any] = {"equipment": draw(equipment_ids(hostile)), "from": draw(instants(START, END, hostile)),
                              "reason": draw(texts(hostile))}
    if draw(st.booleans()):
        fields["to"] = draw(vary(instants(START, END + timedelta(days=3)), st.none(), True, 8))
    if draw(st.booleans()):
        fields["by"] = draw(texts(hostile))
    return _maybe_broken(draw, fields, ("equipment", "from", "reason"), hostile)


@st.composite
def subscribe_digest(draw: st.DrawFn, hostile: bool) -> dict[str, Any]:
    to = addresses(hostile)
    fields: dict[str, Any] = {
        "id": draw(vary(st.sampled_from(["fleet-daily", "lead"]), BAD_IDS, hostile)),
        "to": draw(vary(to | st.lists(to, min_size=1, max_size=3), st.just([]) | ODD, hostile)),
        "period": draw(vary(st.sampled_from(["daily", "weekly"]), st.sampled_from(["monthly", ""]) | ODD, hostile)),
        "time": draw(vary(st.sampled_from(["07:00", "23:59"]), st.sampled_from(["7:00", "24:00", "07:00:30"]) | ODD,
                          hostile)),
        "timezone": draw(vary(st.sampled_from(["Europe/Berlin", "UTC"]), st.sampled_from(["Europe", "+01:00"]) | ODD,
                              hostile)),
    }
    if fields["period"] == "weekly" and draw(st.booleans()):
        fields["day"] = draw(vary(st.sampled_from(["MO", "FR"]), st.sampled_from(["XX", ""]) | ODD, hostile))
    if draw(st.integers(0, 3)) == 0:
        fields["checklists"] = draw(vary(st.lists(checklist_ids(hostile), max_size=2), ODD, hostile))
    return _maybe_broken(draw, fields, ("id", "to", "period", "time", "timezone"), hostile)


@st.composite
def dismiss(draw: st.DrawFn, at: datetime, hostile: bool) -> dict[str, Any]:
    return _maybe_broken(draw, {"checklist": draw(checklist_ids(hostile)), "equipment": draw(equipment_ids(hostile)),
                                "window_start": draw(instants(START, at, hostile)), "reason": draw(texts(hostile)),
                                "by": draw(texts(hostile))}, ("checklist", "equipment", "window_start", "reason", "by"),
                         hostile)


@st.composite
def event(draw: st.DrawFn, actions: tuple[str, ...]) -> dict[str, Any]:
    """One event; about one in six is hostile (its values, fields or shape now and then wrong)."""
    hostile = draw(st.integers(0, 5)) == 0
    at_text = draw(instants(hostile=hostile))
    try:
        at = datetime.fromisoformat(str(at_text).replace("Z", "+00:00"))
        at = at if at.tzinfo and START <= at <= END else END
    except ValueError:
        at = END
    action = draw(st.sampled_from(actions))
    ids = checklist_ids(hostile)
    builders: dict[str, Any] = {
        "put_checklist": put_checklist(hostile), "put_calendar": put_calendar(hostile),
        "assign": assignment(hostile), "unassign": assignment(hostile), "performed": performed(at, hostile),
        "out_of_service": out_of_service(hostile), "subscribe_digest": subscribe_digest(hostile),
        "dismiss": dismiss(at, hostile), "pause_checklist": ids, "resume_checklist": ids, "delete_checklist": ids,
        "back_in_service": st.fixed_dictionaries({"equipment": equipment_ids(hostile)},
                                                 optional={"by": texts(hostile)}),
        "fail_next_firing": st.fixed_dictionaries({"checklist": ids},
                                                  optional={"count": vary(st.integers(1, 3), ODD, hostile)}),
    }
    document: dict[str, Any] = {"at": at_text, action: draw(builders[action])}
    roll = draw(st.integers(0, 9)) if hostile else -1
    if roll == 0:
        document.pop("at")
    elif roll == 1:
        document["assign"] = {"checklist": "forklift", "equipment": ["FL-1"]}  # two actions in one event
    return document


@st.composite
def timelines(draw: st.DrawFn, actions: tuple[str, ...] = EVERY_ACTION) -> dict[str, Any]:
    """A scenario document: a checklist, a calendar and an assignment first, most of the time (so the
    events after them have something to name), then random events."""
    events: list[dict[str, Any]] = []
    if draw(st.integers(0, 9)) < 8:
        events.append({"at": "2026-03-01T00:00:00Z", "put_calendar": {"id": "holidays", "dates": ["2026-03-04"]}})
        events.append({"at": "2026-03-01T00:00:00Z", "put_checklist": {"id": "forklift", "recurrence": RULES[0],
                                                                       "window": "PT8H"}})
        events.append({"at": "2026-03-01T00:00:00Z", "assign": {"checklist": "forklift",
                                                                "equipment": ["FL-1", "FL-2"]}})
    events += draw(st.lists(event(actions), max_size=8))
    document: dict[str, Any] = {"start": "2026-03-01T00:00:00Z", "end": "2026-03-15T00:00:00Z", "events": events}
    if draw(st.integers(0, 19)) == 0:
        document[draw(st.sampled_from(["start", "end"]))] = draw(st.sampled_from(["2026-03-20T00:00:00Z", "x"]) | ODD)
    if draw(st.integers(0, 19)) == 0:
        document["parameters"] = draw(st.sampled_from([{"MaxWindowsPerRun": "5"}, {"NoSuchParameter": "1"},
                                                       {"MaxWindowsPerRun": True}, {"MaxWindowsPerRun": None}]))
    return document


NAMED_FIELD = re.compile(r"^(?:scenario|start|end|events|parameters|faults|name|description"
                         r"|events\[(?P<index>\d+)\](?:\.(?P<action>[a-z_]+)(?P<rest>.*))?)$")
"""What a refusal of a scenario document may name: a top-level key, or an event (by its index in
the file) and, below its action, the field (``events[3].put_checklist.notify.to[1]``)."""
