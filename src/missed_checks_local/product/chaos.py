"""``missed-checks local chaos``: a scenario played under faults, recovered as an operator would,
and compared with the same scenario played without them.

Both runs end the same way: stopped executions re-run, every dead-letter queue replayed (README
"Operate"). The invariants, each of which must be 0:

- ``missed_checks_lost``: missed checks of the clean run that the faulty run does not have;
- ``missed_checks_extra``: missed checks the faulty run has and the clean run does not (a check
  judged twice, or judged against the wrong window);
- ``missed_checks_duplicated``: the same (checklist, window, equipment) recorded more than once;
- ``windows_announced_twice``: a judged window published on EventBridge more than once;
- ``announcements_lost``: a window the clean run announced that the faulty run never did;
- ``stream_shards_blocked``: stream records still waiting for delivery at the end;
- ``notifications_lost``: notifications (#18: reminders, missed alerts, escalations) the clean run
  sent that the faulty run never did (by their deterministic id);
- ``notifications_extra``: notifications the faulty run sent and the clean run did not;
- ``notifications_duplicated``: a notification e-mailed more than once.
"""

from __future__ import annotations

import json
from collections import Counter
from datetime import timedelta
from typing import Any

from missed_checks.aws.events import WINDOW_JUDGED
from missed_checks_local.product.faults import Fault, FaultInjector, random_faults
from missed_checks_local.product.scenario import DeadLetterReplay, run_scenario

__all__ = ["INVARIANTS", "compare", "run_chaos"]

INVARIANTS = (
    "missed_checks_lost",
    "missed_checks_extra",
    "missed_checks_duplicated",
    "windows_announced_twice",
    "announcements_lost",
    "stream_shards_blocked",
    "notifications_lost",
    "notifications_extra",
    "notifications_duplicated",
)
_CAPTURE_QUEUE = "chaos-announcements"
SETTLE = timedelta(days=2)


class _Announcements:
    """Subscribes a queue to the stack's event bus (``prepare``) and counts, at the end
    (``observe``), how often each window was announced; also counts undelivered stream records."""

    def __init__(self) -> None:
        self.by_window: Counter[str] = Counter()
        self.pending_stream_records = 0
        self._url: str | None = None

    def prepare(self, runtime: Any) -> None:
        stack = runtime.stack
        sqs, events = stack.client("sqs"), stack.client("events")
        self._url = sqs.create_queue(QueueName=_CAPTURE_QUEUE)["QueueUrl"]
        arn = sqs.get_queue_attributes(QueueUrl=self._url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
        bus = stack.outputs["EventBusName"]  # the template always outputs it (its default is the parameter's)
        # The window events only: the notifications' own events (#18) share the source.
        pattern = {"source": ["missed-checks"], "detail-type": [WINDOW_JUDGED]}
        events.put_rule(Name=_CAPTURE_QUEUE, EventBusName=bus, EventPattern=json.dumps(pattern))
        events.put_targets(Rule=_CAPTURE_QUEUE, EventBusName=bus, Targets=[{"Id": "capture", "Arn": arn}])

    def observe(self, runtime: Any) -> None:
        sqs = runtime.stack.client("sqs")
        while self._url:
            messages = sqs.receive_message(QueueUrl=self._url, MaxNumberOfMessages=10, VisibilityTimeout=600)
            batch = messages.get("Messages", [])
            if not batch:
                break
            for message in batch:
                body = json.loads(message["Body"])
                detail = body.get("detail") or {}
                self.by_window[str(detail.get("window_id"))] += 1
        self.pending_stream_records = sum(len(poller._pending) for poller in runtime.pollers)


def _missed(report: dict[str, Any]) -> list[tuple[str, str, str]]:
    return [(m["checklist"], m["equipment"], m["window_start"]) for m in report["missed"]]


def _notified(report: dict[str, Any]) -> list[str]:
    """The id of every notification the run e-mailed, once per e-mail (#18)."""
    return [str(n["notification_id"]) for n in report.get("notifications", [])]


def compare(
    clean_missed: list[tuple[str, str, str]],
    faulty_missed: list[tuple[str, str, str]],
    clean_announced: Counter[str],
    faulty_announced: Counter[str],
    pending_stream_records: int,
    clean_notified: list[str] | None = None,
    faulty_notified: list[str] | None = None,
) -> dict[str, int]:
    """The invariants (see the module's docstring) from both runs' missed checks, announcements and
    notifications."""
    clean_notes, faulty_notes = clean_notified or [], faulty_notified or []
    return {
        "missed_checks_lost": len(set(clean_missed) - set(faulty_missed)),
        "missed_checks_extra": len(set(faulty_missed) - set(clean_missed)),
        "missed_checks_duplicated": len(faulty_missed) - len(set(faulty_missed)),
        "windows_announced_twice": sum(1 for count in faulty_announced.values() if count > 1),
        "announcements_lost": len(set(clean_announced) - set(faulty_announced)),
        "stream_shards_blocked": pending_stream_records,
        "notifications_lost": len(set(clean_notes) - set(faulty_notes)),
        "notifications_extra": len(set(faulty_notes) - set(clean_notes)),
        "notifications_duplicated": len(faulty_notes) - len(set(faulty_notes)),
    }


_RETRIED = {"lambda_throttle", "dynamodb_throttle", "eventbridge_failure"}


def survived_by_retry(injector: FaultInjector) -> int:
    """Injected faults that a retry absorbs (the state machine's or the SDK's): throttles, failing
    publishes and the Lambda service's own transient failures."""
    return sum(fault.struck for fault in injector.faults
               if fault.kind in _RETRIED or (fault.kind == "lambda_error" and fault.transient))


def _play(scenario: Any, injector: FaultInjector | None, log_path: Any, settle: timedelta,
          replay: DeadLetterReplay) -> tuple[dict[str, Any], _Announcements]:

    announcements = _Announcements()
    report = run_scenario(scenario, log_path=log_path, faults=injector or FaultInjector([]), recover=replay,
                          prepare=announcements.prepare, observe=announcements.observe, settle=settle)
    return report, announcements


def run_chaos(scenario: Any, *, replay: DeadLetterReplay, seed: int = 0, faults: list[Fault] | None = None,
              log_path: Any = None, settle: timedelta = SETTLE) -> dict[str, Any]:
    """Play ``scenario`` clean, then under ``faults`` (default: a random plan from ``seed``), both
    recovered as an operator would (``replay``: the operator's replay of the dead-letter queues);
    return the comparison (``ok`` is False when an invariant broke).

    Both runs go on for ``settle`` after the scenario's end, with no events and no more faults: a
    dropped or late firing is caught up by the next one, as on AWS, and that must have happened by then."""
    clean, clean_announcements = _play(scenario, None, log_path, settle, replay)
    if faults is None:
        from missed_checks_local.cloudformation.deploy import load_sam_template  # deferred: samtranslator and moto
        from missed_checks_local.stack import default_template_path

        functions = [lid for lid, res in load_sam_template(default_template_path())["Resources"].items()
                     if res.get("Type") == "AWS::Serverless::Function" and "Events" not in res.get("Properties", {})]
        faults = random_faults(seed, functions=functions)
    injector = FaultInjector(faults)
    faulty, faulty_announcements = _play(scenario, injector, log_path, settle, replay)

    invariants = compare(_missed(clean), _missed(faulty), clean_announcements.by_window,
                         faulty_announcements.by_window, faulty_announcements.pending_stream_records,
                         _notified(clean), _notified(faulty))
    clean_missed, faulty_missed = _missed(clean), _missed(faulty)
    dead_lettered = faulty.get("recovery", {}).get("dead_lettered", {})
    return {
        "scenario": scenario.name,
        "seed": seed,
        "plan": injector.plan(),
        "injected": dict(sorted(injector.injected.items())),
        "injected_total": sum(injector.injected.values()),
        "survived_by_retry": survived_by_retry(injector),
        "dead_lettered": dead_lettered,
        "recovery": faulty.get("recovery", {}),
        "clean_recovery": clean.get("recovery", {}),
        "executions": faulty["executions"],
        "lambda": faulty["lambda"],
        "missed_checks": {"clean": len(clean_missed), "faulty": len(faulty_missed)},
        "windows_announced": {"clean": len(clean_announcements.by_window),
                              "faulty": len(faulty_announcements.by_window)},
        "notifications": {"clean": len(_notified(clean)), "faulty": len(_notified(faulty))},
        "invariants": invariants,
        "ok": not any(invariants.values()),
        "elapsed_s": round(clean["elapsed_s"] + faulty["elapsed_s"], 1),
    }
