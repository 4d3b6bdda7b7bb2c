"""Operating a stack from the command line: finding it, reporting, re-running, replaying DLQs.

Everything here works the same against a stack deployed with SAM (``--stack NAME``) and against
``missed-checks local serve`` (``--endpoint URL``): see :mod:`missed_checks_ops.target`.
"""
