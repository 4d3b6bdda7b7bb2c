"""missed-checks: records the checks that were not done.

The domain modules (recurrence, durations, schedule_expression, equipment, missed_check, ...)
are plain Python with no AWS calls; ``missed_checks.aws`` holds the thin boto3 adapters the
Lambda handlers, the command line and the local runtime share.
"""

__version__ = "0.1.0"
