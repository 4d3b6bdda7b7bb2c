"""Sites: where equipment is and checklists run; a site's time zone is its checklists' default."""
