"""Performed checks: what one is, how it meets a window, and recording them (the one use case every writer uses)."""
