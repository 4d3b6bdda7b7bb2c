"""Defects (#33): what a failed critical item of a check found, followed until it is resolved."""
