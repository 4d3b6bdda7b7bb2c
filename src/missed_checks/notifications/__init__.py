"""Telling people: a checklist's notifications and reminders, and the digest subscriptions of the report."""
