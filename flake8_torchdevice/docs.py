"""Rule documentation, generated from the rule classes themselves.

Each rule's docstring is its page (what it does / why it breaks / example / use
instead / how to silence it); its VALID and INVALID examples, which the tests run,
are appended. `python -m flake8_torchdevice.docs` rewrites docs/rules/; with
`--check` it only reports pages that are out of date (the test suite runs that).
"""

from __future__ import annotations

import inspect
import os
import sys
from typing import List, Optional, Sequence

from .rules import ALL_RULES


def summary(rule: type) -> str:
    """The first line of the rule's docstring: what it reports, in one line."""
    return inspect.getdoc(rule).strip().splitlines()[0]


def section(rule: type, heading: str) -> str:
    """The text under `## heading` in the rule's docstring ("" when it has none)."""
    text, inside = [], False
    for line in inspect.getdoc(rule).splitlines():
        if line.startswith("## "):
            inside = line[3:].strip() == heading
        elif inside:
            text.append(line)
    return "\n".join(text).strip()


# Where the project lives; pyproject.toml's [project.urls] says the same. An installed
# distribution that declares another repository (a fork) wins.
REPOSITORY = "https://github.com/flake8-torchdevice/flake8-torchdevice"


def declared_repository() -> str:
    """The repository URL the installed distribution declares, else REPOSITORY."""
    try:
        from importlib.metadata import PackageNotFoundError, metadata
        urls = metadata("flake8-torchdevice").get_all("Project-URL") or []
    except (ImportError, PackageNotFoundError):
        return REPOSITORY
    for entry in urls:
        label, _, url = entry.partition(",")
        if label.strip().lower() == "repository" and url.strip():
            return url.strip().rstrip("/")
    return REPOSITORY


def rule_url(code: str) -> str:
    """Absolute address of a rule's docs page."""
    return f"{declared_repository()}/blob/main/docs/rules/{code}.md"


def rule_page(rule: type) -> str:
    body = inspect.getdoc(rule).strip()
    lines = [f"# {rule.code} {rule.name}", "", body, ""]
    if not rule.default_enabled:
        lines += ["Off by default: enable it with `--extend-select=TDV9` (or `extend-select = TDV9` in `[flake8]`).", ""]
    if rule.INVALID:
        lines += ["## Reported (from the rule's tests)", ""]
        for example in rule.INVALID:
            lines += ["```python", example.rstrip(), "```", ""]
    if rule.VALID:
        lines += ["## Not reported (from the rule's tests)", ""]
        for example in rule.VALID:
            lines += ["```python", example.rstrip(), "```", ""]
    return "\n".join(lines).rstrip() + "\n"


def outdated_pages(root: str, write: bool) -> List[str]:
    folder = os.path.join(root, "docs", "rules")
    os.makedirs(folder, exist_ok=True)
    stale = []
    for rule in ALL_RULES:
        path = os.path.join(folder, f"{rule.code}.md")
        page = rule_page(rule)
        current = open(path, encoding="utf-8").read() if os.path.exists(path) else None
        if current != page:
            stale.append(path)
            if write:
                with open(path, "w", encoding="utf-8") as handle:
                    handle.write(page)
    return stale


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    check = "--check" in args
    root = next((a for a in args if not a.startswith("--")), ".")
    stale = outdated_pages(root, write=not check)
    for path in stale:
        print(("out of date: " if check else "wrote ") + path)
    return 1 if check and stale else 0


if __name__ == "__main__":
    sys.exit(main())
