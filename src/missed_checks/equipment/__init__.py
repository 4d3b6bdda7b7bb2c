"""Equipment: assignments to checklists (and the shards that split a fleet), out-of-service periods, status."""
