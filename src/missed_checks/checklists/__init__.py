"""Checklists: the routine, its recurrence and windows, its closure calendars, and the schedule that fires it."""
