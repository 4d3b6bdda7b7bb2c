"""What the README and ``docs/`` state about the project is true of the project (issue #29): links
stay inside the repository, counts match the template, quoted messages are the program's own,
``make help`` names each target once."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from missed_checks_ops.cli.main import main
from tests.unit.test_template import RESOURCES, TEMPLATE

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
LINK = re.compile(r"\]\(([^)\s#]+)(?:#[^)]*)?\)")
NUMBERS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9,
           "ten": 10, "eleven": 11, "twelve": 12}


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_every_link_and_path_of_a_page_is_inside_the_repository(page: Path) -> None:
    text = page.read_text(encoding="utf-8")
    for target in LINK.findall(text):
        if re.match(r"[a-z]+:", target):
            continue  # an address on the web
        resolved = (page.parent / target).resolve()
        assert resolved.is_relative_to(ROOT), f"{page.name} links outside the repository: {target}"
        assert resolved.exists(), f"{page.name} links to a missing file: {target}"
    assert "../shared" not in text, f"{page.name} names ../shared, which a user of the repository does not have"


def test_the_number_of_alarms_in_operations_is_the_templates() -> None:
    alarms = [name for name, resource in RESOURCES.items() if resource["Type"] == "AWS::CloudWatch::Alarm"]
    text = (ROOT / "docs" / "operations.md").read_text(encoding="utf-8")
    section = text.split("## Alarms", 1)[1].split("\n## ", 1)[0]
    word = re.search(r"\n(\w+) CloudWatch alarms", section)
    assert word and NUMBERS[word.group(1).lower()] == len(alarms)
    rows = [line for line in section.splitlines() if line.startswith("| `")]
    assert len(rows) == len(alarms)
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert f"the {next(k for k, v in NUMBERS.items() if v == len(alarms))} alarms" in readme


def test_the_readmes_deploy_section_names_every_template_parameter() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("\n## Deploy", 1)[1].split("\n## ", 1)[0]
    missing = [name for name in TEMPLATE["Parameters"] if f"`{name}`" not in section]
    assert not missing, f"README's Deploy section does not name the template's parameters {missing}"


def test_the_error_message_quoted_in_operations_is_the_commands_own(capsys: pytest.CaptureFixture[str]) -> None:
    text = " ".join((ROOT / "docs" / "operations.md").read_text(encoding="utf-8").split())
    quoted = re.search(r"for example `(missed-checks: error: queue: [^`]+)`", text)
    assert quoted
    with pytest.raises(SystemExit) as exited:
        main(["dlq", "list", "--queue", "dead", "--endpoint", "http://127.0.0.1:9"])
    assert exited.value.code == 2
    assert capsys.readouterr().err.strip() == quoted.group(1)


def test_make_help_lists_each_target_once_and_only_targets_that_exist() -> None:
    shown = subprocess.run(["make", "--no-print-directory", "help"], cwd=ROOT, capture_output=True, text=True,
                           check=True).stdout.splitlines()
    targets = [line.split()[1] for line in shown]
    assert len(targets) == len(set(targets)), shown
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    for target in targets:
        assert re.search(rf"^{re.escape(target)}:", makefile, re.MULTILINE), f"make help names no target {target}"
