"""Readiness (#33): whether each piece of equipment is cleared to operate, and its announcements."""
