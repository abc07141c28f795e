"""What `fix` does to real code: findings, fixable, fixed, and the safety properties.

    python benchmarks/fix_numbers.py [--add-device] [--jobs N] [--markdown] NAME=DIR ...

For every Python file under each DIR (nothing is written): the findings (`# noqa`
applied), how many are fixable, how many `fix` fixed; then, for every file it
changed, that the output parses, that a second `fix` changes nothing, that linting
the output finds per code no more than the findings before minus the fixed ones (a
fixed guard may silence more), and that nothing fixable is left. A file with no fixable finding must come back unchanged.
"""

from __future__ import annotations

import argparse
import ast
import os
import sys
from collections import Counter
from dataclasses import dataclass, field
from multiprocessing import Pool
from typing import Dict, List, Optional, Tuple

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

from flake8_torchdevice.cli import iter_python_files  # noqa: E402
from flake8_torchdevice.engine import DEFAULT_OPTIONS, Options, SourceError  # noqa: E402
from flake8_torchdevice.fix import FixError, _lint, fix_file, fix_source  # noqa: E402


@dataclass
class FileNumbers:
    path: str
    findings: int = 0
    fixable: int = 0
    fixed: Counter = field(default_factory=Counter)
    changed: bool = False
    skipped: Optional[str] = None
    problems: List[str] = field(default_factory=list)


def measure(job: Tuple[str, Options]) -> FileNumbers:
    path, options = job
    numbers = FileNumbers(path)
    report = fix_file(path, options, write=False)
    if report.error is not None:
        numbers.problems.append(f"internal error: {report.error}")
        return numbers
    if report.skipped is not None:
        numbers.skipped = report.skipped
        return numbers
    result = report.result
    assert result is not None
    text = report.before.replace("\r\n", "\n").replace("\r", "\n")
    before = _lint(text, path, options)
    numbers.findings = len(before)
    numbers.fixable = sum(1 for f in before if f.fixable)
    numbers.fixed = Counter(f.code for f in result.fixed_findings)
    numbers.changed = result.text != report.before
    if not numbers.fixable and numbers.changed:
        numbers.problems.append("changed without a fixable finding")
    if not numbers.changed:
        return numbers
    try:
        ast.parse(result.text.lstrip("\ufeff"))
    except SyntaxError as error:
        numbers.problems.append(f"output does not parse: {error}")
        return numbers
    try:
        again = fix_source(result.text, path, options)
    except (FixError, SourceError) as error:
        numbers.problems.append(f"second fix failed: {error}")
        return numbers
    if again.text != result.text:
        numbers.problems.append("a second fix changed the output")
    after = _lint(result.text.lstrip("\ufeff").replace("\r\n", "\n").replace("\r", "\n"), path, options)
    # a fixed guard (`is_available` -> `is_available()`) may also silence findings under it
    expected = Counter(f.code for f in before) - numbers.fixed
    if Counter(f.code for f in after) - expected:
        numbers.problems.append(f"findings after fixing {dict(Counter(f.code for f in after))}, "
                                f"expected {dict(expected)}")
    if any(f.fixable for f in after):
        numbers.problems.append("fixable findings left after fixing")
    return numbers


def run(name: str, root: str, options: Options, jobs: int) -> Dict[str, object]:
    paths = sorted(iter_python_files([root]))
    with Pool(jobs) as pool:
        files = pool.map(measure, [(p, options) for p in paths], chunksize=8)
    fixed: Counter = Counter()
    for numbers in files:
        fixed.update(numbers.fixed)
    problems = [(n.path, p) for n in files for p in n.problems]
    return {
        "name": name, "files": len(files), "skipped": sum(1 for n in files if n.skipped),
        "findings": sum(n.findings for n in files), "fixable": sum(n.fixable for n in files),
        "fixed": sum(fixed.values()), "fixed_by_code": dict(sorted(fixed.items())),
        "files_changed": sum(1 for n in files if n.changed), "problems": problems,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("trees", nargs="+", metavar="NAME=DIR")
    parser.add_argument("--add-device", action="store_true")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--extend-select", default="")
    args = parser.parse_args()
    options = DEFAULT_OPTIONS
    if args.extend_select:
        from flake8_torchdevice.rules import select_codes
        options = Options(enabled=select_codes(extend_select=args.extend_select.split(",")))
    if args.add_device:
        options = Options(enabled=options.enabled, add_device=True)
    status = 0
    print("| Code base | Files | Findings | Fixable | Fixed (by code) | Files changed | All outputs parse, "
          "idempotent, findings consistent |")
    print("|---|---|---|---|---|---|---|")
    for tree in args.trees:
        name, _, root = tree.partition("=")
        summary = run(name, root, options, args.jobs)
        by_code = ", ".join(f"{code} {count}" for code, count in summary["fixed_by_code"].items()) or "-"
        ok = "yes" if not summary["problems"] else f"NO: {len(summary['problems'])} problems"
        print(f"| {name} | {summary['files']} ({summary['skipped']} skipped) | {summary['findings']} | "
              f"{summary['fixable']} | {summary['fixed']} ({by_code}) | {summary['files_changed']} | {ok} |",
              flush=True)
        for path, problem in summary["problems"]:
            print(f"    {path}: {problem}", file=sys.stderr)
            status = 1
    return status


if __name__ == "__main__":
    sys.exit(main())
