"""Who may do what at which site: roles, the caller, the one authorization rule, and grants."""
