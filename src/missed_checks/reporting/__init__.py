"""The fleet report: each window's outcome per checklist and equipment, its pictures and its formats."""
