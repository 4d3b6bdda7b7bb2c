"""docs/access.md shows the one roles x actions table (permissions/role.py ALLOWED) as it is."""

from __future__ import annotations

from pathlib import Path

from missed_checks.permissions.role import markdown_table

ROOT = Path(__file__).resolve().parents[3]


def test_the_doc_prints_the_table_the_code_decides_with() -> None:
    text = (ROOT / "docs" / "access.md").read_text(encoding="utf-8")
    assert markdown_table() in text, "docs/access.md: paste permissions.role.markdown_table()"
