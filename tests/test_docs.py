"""The documentation matches the code: rule pages, `rules`/`explain`, the README's
table and commands, CI's test command and the pre-commit hook."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys

import pytest

from conftest import ROOT, run_module
from flake8_torchdevice.cli import build_parser
from flake8_torchdevice.docs import rule_page, summary
from flake8_torchdevice.rules import ALL_RULES, RULES_BY_CODE

SECTIONS = ["## What it does", "## Why is this bad", "## Example", "## Use instead",
            "## When it is not reported", "## How to silence it"]
CODES = sorted(RULES_BY_CODE)


def read(*parts: str) -> str:
    with open(os.path.join(ROOT, *parts), encoding="utf-8") as handle:
        return handle.read()


def between(text: str, name: str) -> str:
    """The text between `<!-- name:start -->` and `<!-- name:end -->`, which must occur once."""
    start, end = f"<!-- {name}:start -->", f"<!-- {name}:end -->"
    assert text.count(start) == 1 and text.count(end) == 1, f"README needs one {start} and one {end}"
    return text.split(start, 1)[1].split(end, 1)[0].strip("\n")


def rules_table() -> str:
    rows = ["| code | name | reports |", "|---|---|---|"]
    rows += [f"| [{r.code}](docs/rules/{r.code}.md) | {r.name} | {summary(r)} |" for r in ALL_RULES]
    return "\n".join(rows)


# ------------------------------------------------------------------ rule pages


def test_pages_in_sync_with_docstrings():
    result = run_module("flake8_torchdevice.docs", ["--check"], cwd=ROOT)
    assert (result.returncode, result.stdout) == (0, ""), "run `python -m flake8_torchdevice.docs`"


def test_check_reports_a_stale_page(tmp_path):
    shutil.copytree(os.path.join(ROOT, "docs", "rules"), tmp_path / "docs" / "rules")
    page = tmp_path / "docs" / "rules" / "TDV301.md"
    page.write_text(page.read_text(encoding="utf-8") + "edited\n", encoding="utf-8")
    result = run_module("flake8_torchdevice.docs", ["--check", str(tmp_path)], cwd=ROOT)
    assert result.returncode == 1
    assert result.stdout.splitlines() == [f"out of date: {page}"]


def test_no_page_without_a_rule():
    pages = sorted(name[:-3] for name in os.listdir(os.path.join(ROOT, "docs", "rules")) if name.endswith(".md"))
    assert pages == CODES


@pytest.mark.parametrize("code", CODES)
def test_page_has_every_section_in_order(code):
    page = read("docs", "rules", f"{code}.md")
    rule = RULES_BY_CODE[code]
    assert page.startswith(f"# {code} {rule.name}\n\n{summary(rule)}\n")
    positions = [page.find(f"\n{section}\n") for section in SECTIONS]
    assert -1 not in positions, f"{code}: missing {SECTIONS[positions.index(-1)]}"
    assert positions == sorted(positions), f"{code}: sections out of order"
    silence = page[positions[-1]:]
    assert f"# noqa: {code}" in silence and f"extend-ignore = {code}" in silence


@pytest.mark.parametrize("code", CODES)
def test_summary_is_one_sentence_line(code):
    doc = RULES_BY_CODE[code].__doc__.strip()
    first, _, rest = doc.partition("\n")
    assert first.endswith(".") and len(first) <= 100
    assert rest.startswith("\n"), "the summary line is followed by a blank line"


@pytest.mark.parametrize("code", CODES)
def test_why_section_names_a_pytorch_error(code):
    if not RULES_BY_CODE[code].default_enabled:
        pytest.skip("family 9 reports opinions: the code runs, only worse (TDV902) or by luck")
    page = read("docs", "rules", f"{code}.md")
    why = page.split("## Why is this bad\n", 1)[1].split("\n## ", 1)[0]
    # TDV501's failure is PyTorch's warning that mixed precision is switched off.
    assert re.search(r"`(AssertionError|RuntimeError|ValueError|TypeError|AttributeError|UserWarning)\b", why), why


# ------------------------------------------------------------------ the command


@pytest.mark.parametrize("code", CODES)
def test_explain_prints_the_page(code):
    result = run_module("flake8_torchdevice", ["explain", code.lower()], cwd=ROOT)
    assert result.returncode == 0
    assert result.stdout == rule_page(RULES_BY_CODE[code]) + "\n"
    assert result.stdout == read("docs", "rules", f"{code}.md") + "\n"


def test_explain_unknown_code_is_a_usage_error():
    result = run_module("flake8_torchdevice", ["explain", "TDV999"], cwd=ROOT)
    assert (result.returncode, result.stdout) == (2, "")
    assert "unknown code TDV999" in result.stderr


def test_rules_lists_every_code_with_its_summary():
    result = run_module("flake8_torchdevice", ["rules"], cwd=ROOT)
    assert result.returncode == 0
    lines = result.stdout.splitlines()
    assert [line.split()[0] for line in lines] == [rule.code for rule in ALL_RULES]
    for line, rule in zip(lines, ALL_RULES):
        assert line.split()[1] == rule.name and summary(rule) in line


# ------------------------------------------------------------------ README


def test_readme_table_matches_the_registry():
    assert between(read("README.md"), "rules") == rules_table(), \
        "README's rules table is out of date; it should read:\n" + rules_table()


def test_readme_links_exist():
    readme = read("README.md")
    targets = re.findall(r"\]\((docs/[^)#]+)\)", readme)
    assert "docs/precision.md" in targets
    for target in targets:
        assert os.path.exists(os.path.join(ROOT, target)), target


def test_readme_starts_with_the_setup_commands():
    readme = read("README.md")
    block = re.search(r"```sh\n(.*?)```", readme, re.S)
    assert block is not None and readme.index("```sh") < readme.index("\n## ")
    install, test = block.group(1).strip().splitlines()
    assert install.startswith("pip install . && flake8 --select=TDV,E9 ")  # E9: a wrong path is reported
    assert test == 'pip install torch==2.13.0 && pip install -e ".[test]" && python -m pytest'


def test_ci_runs_the_readme_test_command():
    script = read(".ci", "run")
    readme = read("README.md")
    test = re.search(r"```sh\n.*?\n(.*?)\n```", readme, re.S).group(1)
    torch_step, rest = test.split(" && ", 1)
    lines = [line.strip() for line in script.splitlines()]
    assert "set -euo pipefail" in lines and "python3 -m venv" in script
    assert lines.index(torch_step) < next(i for i, line in enumerate(lines) if line.startswith(rest))
    assert os.access(os.path.join(ROOT, ".ci", "run"), os.X_OK)


def test_readme_placeholders_for_generated_sections():
    readme = read("README.md")
    assert between(readme, "proof") and between(readme, "bench")
    proof = readme.index("<!-- proof:start -->")
    assert readme.rfind("## Proof: every rule fails for real", 0, proof) != -1


def test_readme_check_options_exist():
    readme = read("README.md")
    section = readme.split("## Standalone command", 1)[1].split("\n## ", 1)[0]
    used = set(re.findall(r"check[^\n`]*", section))
    options = {o for line in used for o in re.findall(r"(--[a-z-]+)", line)}
    check = build_parser()._subparsers._group_actions[0].choices["check"]
    known = {s for action in check._actions for s in action.option_strings}
    assert options and options <= known, options - known


# ------------------------------------------------------------------ pre-commit


def hooks() -> list:
    """The hooks of .pre-commit-hooks.yaml, read as the flat `- key: value` list it is."""
    entries = []
    for line in read(".pre-commit-hooks.yaml").splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        match = re.match(r"(- |  )([a-z_]+): (.*)$", line)
        assert match, f"unexpected line: {line!r}"
        if match.group(1) == "- ":
            entries.append({})
        entries[-1][match.group(2)] = match.group(3).strip()
    return entries


def script_names() -> list:
    scripts = read("pyproject.toml").split("[project.scripts]", 1)[1].split("\n[", 1)[0]
    return re.findall(r"^([\w-]+)\s*=", scripts, re.M)


def test_pre_commit_hook_definition():
    (hook,) = hooks()
    assert hook["id"] == "flake8-torchdevice"
    assert hook["language"] == "python"
    assert hook["entry"] == "flake8-torchdevice check"
    assert hook["types"] == "[python]"
    assert hook["entry"].split()[0] in script_names()


def test_pre_commit_entry_runs(tmp_path):
    """What pre-commit runs: the entry with the staged file names appended."""
    bin_dir = os.path.dirname(sys.executable)
    command = shutil.which("flake8-torchdevice", path=bin_dir) or shutil.which("flake8-torchdevice")
    assert command, "the flake8-torchdevice script is not installed"
    (tmp_path / "bad.py").write_text("model = Net().cuda()\n", encoding="utf-8")
    (tmp_path / "ok.py").write_text("model = Net().to(device)\n", encoding="utf-8")
    entry = hooks()[0]["entry"].split()
    result = subprocess.run([command, *entry[1:], "bad.py", "ok.py"], cwd=tmp_path,
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 1
    assert [line.split(": ")[0] for line in result.stdout.splitlines()] == ["bad.py:1:15"]
    assert " TDV101 " in result.stdout
