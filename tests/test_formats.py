"""Output formats: exact text, JSON, GitHub annotations, and SARIF checked against
the official SARIF 2.1.0 schema (tests/data/sarif-schema-2.1.0.json, the OASIS
errata01 schema, unmodified)."""

from __future__ import annotations

import json
import os

import jsonschema
import pytest

from conftest import ONE_OF_EACH, run_module, unmarked
from flake8_torchdevice import __version__, cli
from flake8_torchdevice.docs import section, summary
from flake8_torchdevice.formats import Replacement, SuggestedFix, ReportItem, artifact_uri, render
from flake8_torchdevice.rules import ALL_RULES, RULES_BY_CODE

SCHEMA_PATH = os.path.join(os.path.dirname(__file__), "data", "sarif-schema-2.1.0.json")
MSG101 = RULES_BY_CODE["TDV101"].message
PLAIN = ReportItem("src/a.py", 3, 9, "TDV101", MSG101)
FIXED = ReportItem("src/a.py", 4, 5, "TDV102", "the fix, 100% sure: x", fixable=True, end_line=4, end_col=11,
                   fix=SuggestedFix("use the device variable", (Replacement(4, 5, 4, 11, "device"),)))
CELL = ReportItem("nb.ipynb", 2, 1, "TDV101", MSG101, cell=3)
BROKEN = ReportItem("b c.py", 1, 5, "E999", "SyntaxError: '(' was never closed")


def sarif_validator():
    with open(SCHEMA_PATH, encoding="utf-8") as handle:
        schema = json.load(handle)
    jsonschema.Draft4Validator.check_schema(schema)
    return jsonschema.Draft4Validator(schema)


# ------------------------------------------------------------------------- text


def test_text_is_flake8s_format():
    assert render("text", [PLAIN, BROKEN]) == (
        f"src/a.py:3:9: TDV101 {MSG101}\n"
        "b c.py:1:5: E999 SyntaxError: '(' was never closed\n")


def test_text_marks_fixable_and_counts_them():
    assert render("text", [PLAIN, FIXED]) == (
        f"src/a.py:3:9: TDV101 {MSG101}\n"
        "src/a.py:4:5: TDV102 [*] the fix, 100% sure: x\n"
        "[*] 1 fixable with `flake8-torchdevice fix`\n")


def test_text_notebook_cell_as_ruff_prints_it():
    assert render("text", [CELL]) == f"nb.ipynb:cell 3:2:1: TDV101 {MSG101}\n"


def test_text_show_source_keeps_tabs_under_the_caret():
    item = ReportItem("t.py", 2, 6, "TDV101", "m", source_line="\tx = a.cuda()")
    assert render("text", [item], show_source=True) == "t.py:2:6: TDV101 m\n\tx = a.cuda()\n\t    ^\n"
    assert render("text", [item]) == "t.py:2:6: TDV101 m\n"


def test_empty_outputs():
    assert render("text", []) == ""
    assert render("github", []) == ""
    assert render("json", []) == "[]\n"
    sarif = json.loads(render("sarif", []))
    assert sarif["runs"][0]["results"] == []


# ----------------------------------------------------------------------- github


def test_github_annotations():
    assert render("github", [PLAIN, FIXED, BROKEN]).splitlines() == [
        f"::warning file=src/a.py,line=3,col=9,title=TDV101::{MSG101}",
        "::warning file=src/a.py,line=4,col=5,endLine=4,endColumn=11,title=TDV102::the fix, 100%25 sure: x",
        "::error file=b c.py,line=1,col=5,title=E999::SyntaxError: '(' was never closed",
    ]


def test_github_escapes_workflow_command_syntax():
    item = ReportItem("dir,x/a:b%.py", 1, 1, "TDV101", "two\nlines\r, 50%: done::")
    assert render("github", [item]) == (
        "::warning file=dir%2Cx/a%3Ab%25.py,line=1,col=1,title=TDV101::two%0Alines%0D, 50%25: done::\n")


def test_github_notebook_annotates_the_file():
    assert render("github", [CELL]) == f"::warning file=nb.ipynb,title=TDV101::cell 3:2:1: {MSG101}\n"


# ------------------------------------------------------------------------- json


def test_json_objects():
    assert json.loads(render("json", [PLAIN, FIXED, CELL])) == [
        {"path": "src/a.py", "cell": None, "line": 3, "column": 9, "end_line": None, "end_column": None,
         "code": "TDV101", "message": MSG101, "fixable": False, "fix": None},
        {"path": "src/a.py", "cell": None, "line": 4, "column": 5, "end_line": 4, "end_column": 11,
         "code": "TDV102", "message": "the fix, 100% sure: x", "fixable": True,
         "fix": {"message": "use the device variable",
                 "edits": [{"line": 4, "column": 5, "end_line": 4, "end_column": 11, "content": "device"}]}},
        {"path": "nb.ipynb", "cell": 3, "line": 2, "column": 1, "end_line": None, "end_column": None,
         "code": "TDV101", "message": MSG101, "fixable": False, "fix": None},
    ]


# ------------------------------------------------------------------------ sarif


def test_sarif_is_valid_and_complete():
    document = json.loads(render("sarif", [PLAIN, FIXED, CELL, BROKEN]))
    sarif_validator().validate(document)
    assert document["version"] == "2.1.0"
    run = document["runs"][0]
    driver = run["tool"]["driver"]
    assert (driver["name"], driver["version"]) == ("flake8-torchdevice", __version__)
    rules = driver["rules"]
    assert [r["id"] for r in rules] == [rule.code for rule in ALL_RULES] + ["E999"]
    for entry, rule in zip(rules, ALL_RULES):
        assert entry["name"] == rule.name
        assert entry["shortDescription"]["text"] == summary(rule)
        assert entry["fullDescription"]["text"] == section(rule, "What it does")
        assert entry["help"]["markdown"].startswith(f"# {rule.code} {rule.name}")
    plain, fixed, cell, broken = run["results"]
    assert plain == {
        "ruleId": "TDV101", "ruleIndex": 0, "level": "warning", "message": {"text": MSG101},
        "locations": [{"physicalLocation": {"artifactLocation": {"uri": "src/a.py"},
                                            "region": {"startLine": 3, "startColumn": 9}}}]}
    assert fixed["locations"][0]["physicalLocation"]["region"] == {
        "startLine": 4, "startColumn": 5, "endLine": 4, "endColumn": 11}
    assert fixed["fixes"] == [{
        "description": {"text": "use the device variable"},
        "artifactChanges": [{"artifactLocation": {"uri": "src/a.py"}, "replacements": [{
            "deletedRegion": {"startLine": 4, "startColumn": 5, "endLine": 4, "endColumn": 11},
            "insertedContent": {"text": "device"}}]}]}]
    assert "fixes" not in plain
    assert cell["message"]["text"] == f"cell 3:2:1: {MSG101}"
    assert "region" not in cell["locations"][0]["physicalLocation"]
    assert broken["ruleId"] == "E999" and broken["ruleIndex"] == len(ALL_RULES)
    assert broken["level"] == "error"
    assert broken["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "b%20c.py"
    assert run["columnKind"] == "unicodeCodePoints"


def test_sarif_schema_rejects_a_broken_document():
    """The schema really checks: a result without a message is invalid."""
    document = json.loads(render("sarif", [PLAIN]))
    del document["runs"][0]["results"][0]["message"]
    with pytest.raises(jsonschema.ValidationError):
        sarif_validator().validate(document)


def test_sarif_help_uri_is_the_rule_page():
    rules = json.loads(render("sarif", [PLAIN]))["runs"][0]["tool"]["driver"]["rules"]
    assert [(r["id"], r["helpUri"]) for r in rules][:2] == [
        ("TDV101", "https://github.com/flake8-torchdevice/flake8-torchdevice/blob/main/docs/rules/TDV101.md"),
        ("TDV102", "https://github.com/flake8-torchdevice/flake8-torchdevice/blob/main/docs/rules/TDV102.md")]


def test_sarif_help_uri_from_the_declared_repository(monkeypatch):
    import flake8_torchdevice.docs as docs

    monkeypatch.setattr(docs, "rule_url", lambda code: f"https://example.org/r/blob/main/docs/rules/{code}.md")
    document = json.loads(render("sarif", [PLAIN]))
    sarif_validator().validate(document)
    assert document["runs"][0]["tool"]["driver"]["rules"][0]["helpUri"] == (
        "https://example.org/r/blob/main/docs/rules/TDV101.md")


@pytest.mark.parametrize("path, uri", [
    ("./src/a.py", "src/a.py"), ("a b/c#d.py", "a%20b/c%23d.py"), ("/abs/x y.py", "file:///abs/x%20y.py"),
])
def test_artifact_uri(path, uri):
    assert artifact_uri(path) == uri


# ------------------------------------------------------------- the command


@pytest.fixture
def project(tmp_path):
    (tmp_path / "bad.py").write_text(ONE_OF_EACH)
    (tmp_path / "broken.py").write_text("x = (\n")
    return tmp_path


def check(project, *args):
    return run_module("flake8_torchdevice", ["check", *args], cwd=str(project))


def test_check_format_sarif(project):
    result = check(project, "--format", "sarif", ".")
    assert (result.returncode, result.stderr) == (1, "")
    document = json.loads(result.stdout)
    sarif_validator().validate(document)
    found = [(r["ruleId"], r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
              r["locations"][0]["physicalLocation"]["region"]["startLine"],
              r["locations"][0]["physicalLocation"]["region"]["startColumn"])
             for r in document["runs"][0]["results"]]
    assert found == [("TDV201", "bad.py", 8, 20), ("TDV101", "bad.py", 12, 20), ("TDV102", "bad.py", 13, 27),
                     ("TDV301", "bad.py", 14, 13), ("TDV401", "bad.py", 16, 11), ("E999", "broken.py", 1, 6)]


def test_check_format_json_and_github(project):
    result = check(project, "--format", "json", "--select", "TDV1", "bad.py")
    assert result.returncode == 1
    found = json.loads(result.stdout)
    assert [(d["code"], d["line"], d["column"], d["path"]) for d in found] == [
        ("TDV101", 12, 20, "bad.py"), ("TDV102", 13, 27, "bad.py")]
    assert all(isinstance(d["fixable"], bool) for d in found)
    result = check(project, "--format", "github", "--select", "TDV101,E9", "bad.py", "broken.py")
    assert result.returncode == 1
    assert result.stdout == (
        f"::warning file=bad.py,line=12,col=20,endLine=12,endColumn=24,title=TDV101::{MSG101}\n"
        "::error file=broken.py,line=1,col=6,title=E999::SyntaxError: '(' was never closed\n")


def test_check_json_keeps_stdout_a_document(project):
    """--statistics and --count go to stderr when stdout holds JSON."""
    result = check(project, "--format", "json", "--select", "TDV101", "--statistics", "--count", "bad.py")
    assert len(json.loads(result.stdout)) == 1
    assert result.stderr == f"1     TDV101 {MSG101}\n1\n"


def test_check_text_output_is_flake8s_plus_fix_marks(project):
    ours = check(project, ".")
    theirs = run_module("flake8", ["--select=TDV,E9", "."], cwd=str(project))
    assert unmarked(ours.stdout) == theirs.stdout
    assert ours.stdout != theirs.stdout  # bad.py has fixable findings


def test_fix_marks_are_what_fix_repairs(project, monkeypatch, capsys):
    """`[*]` exactly on the findings that `fix` then removes, and their count last."""
    monkeypatch.chdir(project)
    assert cli.main(["check", "bad.py"]) == 1
    out = capsys.readouterr().out.splitlines()
    marked = [tuple(line.split(" ")[:2]) for line in out if " [*] " in line]
    unmarked_lines = [tuple(line.split(" ")[:2]) for line in out[:-1] if " [*] " not in line]
    assert marked == [("bad.py:8:20:", "TDV201"), ("bad.py:13:27:", "TDV102"), ("bad.py:14:13:", "TDV301")]
    assert out[-1] == "[*] 3 fixable with `flake8-torchdevice fix`"
    assert cli.main(["fix", "bad.py"]) == 1
    capsys.readouterr()
    assert cli.main(["check", "bad.py"]) == 1
    after = [tuple(line.split(" ")[:2]) for line in capsys.readouterr().out.splitlines()]
    assert after == unmarked_lines


def apply_replacements(text: str, replacements) -> str:
    """SARIF replacements (1-based, end exclusive) applied to `text`, last first."""
    lines = text.splitlines(keepends=True)
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line))
    for r in sorted(replacements, key=lambda r: (r["deletedRegion"]["startLine"], r["deletedRegion"]["startColumn"]),
                    reverse=True):
        region = r["deletedRegion"]
        start = offsets[region["startLine"] - 1] + region["startColumn"] - 1
        end = offsets[region["endLine"] - 1] + region["endColumn"] - 1
        text = text[:start] + r["insertedContent"]["text"] + text[end:]
    return text


def test_check_sarif_fixes_are_the_fix_commands_edits(project):
    """Each fixable result carries its fix; applied, it is what `fix` writes for that finding."""
    document = json.loads(check(project, "--format", "sarif", "bad.py").stdout)
    sarif_validator().validate(document)
    results = document["runs"][0]["results"]
    with_fixes = [(r["ruleId"], r["fixes"][0]["description"]["text"]) for r in results if "fixes" in r]
    assert [code for code, _ in with_fixes] == ["TDV201", "TDV102", "TDV301"]
    assert with_fixes[2][1] == ("Fix TDV301: torch.load() without map_location fails on a CPU-only machine "
                                "when the checkpoint was saved on a GPU")
    load = next(r for r in results if r["ruleId"] == "TDV301")
    change = load["fixes"][0]["artifactChanges"][0]
    assert change["artifactLocation"]["uri"] == "bad.py"
    fixed = apply_replacements(ONE_OF_EACH, change["replacements"])
    assert fixed == ONE_OF_EACH.replace('torch.load("m.pt")', 'torch.load("m.pt", map_location="cpu")')


def test_check_end_positions(project):
    found = json.loads(check(project, "--format", "json", "--select", "TDV301", "bad.py").stdout)
    assert [(d["line"], d["column"], d["end_line"], d["end_column"]) for d in found] == [(14, 13, 14, 31)]


def test_check_unknown_format(project):
    result = check(project, "--format", "xml", "bad.py")
    assert result.returncode == 2 and "invalid choice: 'xml'" in result.stderr and result.stdout == ""
