"""The ``missed-checks`` command line."""
