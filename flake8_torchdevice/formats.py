"""Output formats of `flake8-torchdevice check --format`: text (flake8's own),
json, github (workflow-command annotations) and sarif (SARIF 2.1.0).

A front end turns its findings into `ReportItem`s; a format prints each item as it
comes (`item`, for the streaming formats) and what follows them all (`end`).
"""

from __future__ import annotations

import json
import os
import urllib.parse
from dataclasses import dataclass
from pathlib import PurePath
from typing import Dict, List, Optional, Sequence, Tuple

from . import __version__

TOOL_NAME = "flake8-torchdevice"
# Codes the command reports besides the rules' own; E999 as flake8 reports it.
EXTRA_CODES = {"E999": "The file is not valid Python: it cannot be compiled, so it was not checked."}


@dataclass(frozen=True)
class Replacement:
    """Replace the text from (line, col) up to (end_line, end_col), 1-based, end exclusive."""

    line: int
    col: int
    end_line: int
    end_col: int
    text: str


@dataclass(frozen=True)
class SuggestedFix:
    description: str
    edits: Tuple[Replacement, ...]


@dataclass(frozen=True)
class ReportItem:
    """One finding as the user sees it. Positions are 1-based, as printed."""

    path: str
    line: int
    col: int
    code: str
    message: str
    # Notebooks: the 1-based code cell; line and col are then counted in that cell.
    cell: Optional[int] = None
    fixable: bool = False
    end_line: Optional[int] = None
    end_col: Optional[int] = None
    fix: Optional[SuggestedFix] = None
    # The line's text without its newline, for --show-source.
    source_line: Optional[str] = None

    @property
    def location(self) -> str:
        cell = f"cell {self.cell}:" if self.cell is not None else ""
        return f"{self.path}:{cell}{self.line}:{self.col}"


class TextFormat:
    """flake8's format, `path:line:col: CODE message` (ruff's `path:cell N:line:col`
    for notebooks). Fixable findings get `[*]` after the code and a closing count;
    with nothing fixable the output is byte for byte flake8's."""

    streams = True

    def __init__(self, show_source: bool = False) -> None:
        self.show_source = show_source

    def item(self, item: ReportItem) -> str:
        mark = " [*]" if item.fixable else ""
        text = f"{item.location}: {item.code}{mark} {item.message}"
        if self.show_source and item.source_line is not None:
            # the caret keeps the line's tabs so that it lines up, as flake8's does
            before = item.source_line[: item.col - 1]
            text += "\n" + item.source_line + "\n" + "".join(c if c.isspace() else " " for c in before) + "^"
        return text

    def end(self, items: Sequence[ReportItem]) -> str:
        fixable = sum(1 for item in items if item.fixable)
        return f"[*] {fixable} fixable with `{TOOL_NAME} fix`" if fixable else ""


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


class GithubFormat:
    """GitHub Actions workflow commands: each finding becomes an annotation on the
    pull request. Syntax errors are errors; the rules' findings are warnings."""

    streams = True

    def __init__(self, show_source: bool = False) -> None:
        pass

    def item(self, item: ReportItem) -> str:
        level = "error" if item.code == "E999" else "warning"
        props = [("file", item.path)]
        message = item.message
        if item.cell is None:
            props += [("line", item.line), ("col", item.col)]
            if item.end_line is not None and item.end_col is not None:
                props += [("endLine", item.end_line), ("endColumn", item.end_col)]
        else:
            # a cell's line is not a line of the .ipynb file: annotate the file
            message = f"cell {item.cell}:{item.line}:{item.col}: {message}"
        props.append(("title", item.code))
        joined = ",".join(f"{key}={_escape_property(str(value))}" for key, value in props)
        return f"::{level} {joined}::{_escape_data(message)}"

    def end(self, items: Sequence[ReportItem]) -> str:
        return ""


def _fix_json(fix: Optional[SuggestedFix]) -> Optional[dict]:
    if fix is None:
        return None
    return {"message": fix.description, "edits": [
        {"line": e.line, "column": e.col, "end_line": e.end_line, "end_column": e.end_col, "content": e.text}
        for e in fix.edits]}


class JsonFormat:
    """A JSON list with one object per finding, in output order."""

    streams = False

    def __init__(self, show_source: bool = False) -> None:
        pass

    def item(self, item: ReportItem) -> None:
        return None

    def end(self, items: Sequence[ReportItem]) -> str:
        return json.dumps([{
            "path": item.path, "cell": item.cell, "line": item.line, "column": item.col,
            "end_line": item.end_line, "end_column": item.end_col,
            "code": item.code, "message": item.message,
            "fixable": item.fixable, "fix": _fix_json(item.fix),
        } for item in items], indent=2)


def artifact_uri(path: str) -> str:
    """A relative URI reference for a relative path (`./src/a b.py` -> `src/a%20b.py`),
    a file: URI for an absolute one."""
    pure = PurePath(path)
    if pure.is_absolute():
        return pure.as_uri()
    return urllib.parse.quote(os.path.normpath(path).replace(os.sep, "/"))


class SarifFormat:
    """SARIF 2.1.0, as GitHub code scanning and other result viewers read it: one rule
    entry per code (documented from the rule's docstring), one result per finding."""

    streams = False
    SCHEMA = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"

    def __init__(self, show_source: bool = False) -> None:
        pass

    def item(self, item: ReportItem) -> None:
        return None

    @staticmethod
    def rule_entries(extra_codes: Sequence[str] = ()) -> List[dict]:
        from .docs import rule_page, rule_url, section, summary
        from .rules import ALL_RULES

        entries = []
        for rule in ALL_RULES:
            entry = {
                "id": rule.code,
                "name": rule.name,
                "shortDescription": {"text": summary(rule)},
                "fullDescription": {"text": section(rule, "What it does") or summary(rule)},
                "help": {"text": rule_page(rule), "markdown": rule_page(rule)},
                "defaultConfiguration": {"level": "warning", "enabled": rule.default_enabled},
                "helpUri": rule_url(rule.code),
            }
            entries.append(entry)
        for code in extra_codes:
            entries.append({"id": code, "shortDescription": {"text": EXTRA_CODES[code]},
                            "defaultConfiguration": {"level": "error"}})
        return entries

    @staticmethod
    def _region(line: int, col: int, end_line: Optional[int], end_col: Optional[int]) -> dict:
        region = {"startLine": line, "startColumn": col}
        if end_line is not None and end_col is not None:
            region.update(endLine=end_line, endColumn=end_col)
        return region

    def _result(self, item: ReportItem, index: Dict[str, int]) -> dict:
        location: dict = {"artifactLocation": {"uri": artifact_uri(item.path)}}
        message = item.message
        if item.cell is None:
            location["region"] = self._region(item.line, item.col, item.end_line, item.end_col)
        else:
            message = f"cell {item.cell}:{item.line}:{item.col}: {message}"
        result = {
            "ruleId": item.code,
            "ruleIndex": index[item.code],
            "level": "error" if item.code in EXTRA_CODES else "warning",
            "message": {"text": message},
            "locations": [{"physicalLocation": location}],
        }
        if item.fix is not None and item.cell is None:
            result["fixes"] = [{
                "description": {"text": item.fix.description},
                "artifactChanges": [{
                    "artifactLocation": {"uri": artifact_uri(item.path)},
                    "replacements": [{
                        "deletedRegion": self._region(e.line, e.col, e.end_line, e.end_col),
                        "insertedContent": {"text": e.text},
                    } for e in item.fix.edits],
                }],
            }]
        return result

    def end(self, items: Sequence[ReportItem]) -> str:
        extra = sorted({item.code for item in items if item.code in EXTRA_CODES})
        rules = self.rule_entries(extra)
        index = {entry["id"]: number for number, entry in enumerate(rules)}
        driver = {"name": TOOL_NAME, "version": __version__, "semanticVersion": __version__, "rules": rules}
        run = {
            "tool": {"driver": driver},
            # libcst counts columns in code points, not in UTF-16 units (SARIF's default)
            "columnKind": "unicodeCodePoints",
            "results": [self._result(item, index) for item in items],
        }
        return json.dumps({"$schema": self.SCHEMA, "version": "2.1.0", "runs": [run]}, indent=2)


FORMATS = {"text": TextFormat, "json": JsonFormat, "github": GithubFormat, "sarif": SarifFormat}


def render(name: str, items: Sequence[ReportItem], show_source: bool = False) -> str:
    """The whole output of `name` for `items`, as the command prints it."""
    fmt = FORMATS[name](show_source=show_source)
    lines = [fmt.item(item) for item in items] if fmt.streams else []
    closing = fmt.end(items)
    return "".join(line + "\n" for line in lines + ([closing] if closing else []))
