"""Count findings per code on real PyTorch code, for docs/precision.md.

    python benchmarks/precision_counts.py [--list] [--markdown] [--select ...] [--extend-select TDV9]
    python benchmarks/precision_counts.py --research DIR [--list] [--markdown] ...

Libraries (the default): downloads (once, into benchmarks/.cache/) the pinned wheels of
timm, ultralytics, mmsegmentation, kornia and MONAI with `pip download --no-deps`,
unpacks them, and lints them and the installed PyTorch's own sources with the engine.

Research code (`--research DIR`): lints the repositories listed in
benchmarks/research_repos.txt (`owner/name commit`; `--repos benchmarks/heldout_repos.txt`
for the held-out ones), each expected in `DIR/<name>` at that commit; nothing is
downloaded. A listed repository missing from DIR is named on stderr and skipped.

`--list` prints every finding with its source line, which is what we read and
classify by hand. `--markdown` prints the counts as a table for docs/precision.md.
"""

from __future__ import annotations

import argparse
import glob
import importlib.util
import os
import subprocess
import sys
import zipfile
from collections import Counter
from typing import Iterator, List, NamedTuple, Optional, Sequence

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

from flake8_torchdevice.cli import iter_python_files, lint_path, read_source  # noqa: E402
from flake8_torchdevice.engine import Options  # noqa: E402
from flake8_torchdevice.rules import select_codes  # noqa: E402

from bench import mark_project_root  # noqa: E402  (this folder is on sys.path: run as a script)

CACHE = os.path.join(HERE, ".cache")
PROJECTS = ["timm==1.0.31", "ultralytics==8.4.190", "mmsegmentation==1.2.2", "kornia==0.9.0", "monai==1.6.1"]
RESEARCH_LIST = os.path.join(HERE, "research_repos.txt")


class Corpus(NamedTuple):
    label: str
    root: str


class Counts(NamedTuple):
    files: int
    lines: int
    by_code: Counter


def project_source(requirement: str) -> str:
    name, _, version = requirement.partition("==")
    target = os.path.join(CACHE, name)
    if not os.path.isdir(target):
        os.makedirs(CACHE, exist_ok=True)
        subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", requirement, "-d", CACHE],
                       check=True)
        wheel = glob.glob(os.path.join(CACHE, f"{name}-*.whl"))[0]
        zipfile.ZipFile(wheel).extractall(target)
    mark_project_root(target, name, version)
    return target


def torch_source() -> str:
    spec = importlib.util.find_spec("torch")  # locate without importing it
    return os.path.dirname(spec.origin)


def library_corpora() -> List[Corpus]:
    return [Corpus(r.replace("==", " "), project_source(r)) for r in PROJECTS] + [Corpus("torch", torch_source())]


def read_research_list(path: str = RESEARCH_LIST) -> List[tuple]:
    """(owner/name, commit) pairs; `#` starts a comment."""
    repos = []
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            fields = line.split("#", 1)[0].split()
            if fields:
                repos.append((fields[0], fields[1]))
    return repos


def research_corpora(directory: str, repos_file: str = RESEARCH_LIST) -> List[Corpus]:
    corpora = []
    for repo, commit in read_research_list(repos_file):
        root = os.path.join(directory, repo.split("/")[1])
        if os.path.isdir(root):
            corpora.append(Corpus(f"{repo} {commit[:7]}", root))
        else:
            print(f"{root}: missing: check out {repo} at {commit} there", file=sys.stderr)
    return corpora


def lint_corpus(corpus: Corpus, options: Options, show: bool) -> Counts:
    by_code, files, lines = Counter(), 0, 0
    for path in iter_python_files([corpus.root]):
        files += 1
        with open(path, "rb") as handle:
            lines += handle.read().count(b"\n")
        findings, _ = lint_path(path, options)
        if show and findings:
            source_lines = read_source(path).split("\n")
            shown = os.path.join(corpus.label.split()[0], os.path.relpath(path, corpus.root))
        for finding in findings:
            by_code[finding.code] += 1
            if show:
                print(f"{shown}:{finding.line}:{finding.col + 1}: {finding.text}")
                print(f"    {source_lines[finding.line - 1].strip()}")
    return Counts(files, lines, by_code)


def markdown_table(rows: Sequence[tuple], codes: Sequence[str]) -> Iterator[str]:
    yield "| corpus | files | lines | " + " | ".join(codes) + " |"
    yield "|---|---:|---:|" + "---:|" * len(codes)
    total = Counts(0, 0, Counter())
    for corpus, counts in rows:
        cells = " | ".join(str(counts.by_code[code]) for code in codes)
        yield f"| {corpus.label} | {counts.files:,} | {counts.lines:,} | {cells} |"
        total = Counts(total.files + counts.files, total.lines + counts.lines, total.by_code + counts.by_code)
    cells = " | ".join(f"**{total.by_code[code]}**" for code in codes)
    yield f"| **all** | {total.files:,} | {total.lines:,} | {cells} |"


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--research", metavar="DIR", help="lint the research repositories checked out under DIR")
    parser.add_argument("--repos", metavar="FILE", default=RESEARCH_LIST,
                        help="with --research: the list of repositories (default: research_repos.txt; "
                             "heldout_repos.txt lists the ones no rule was tuned on)")
    parser.add_argument("--list", action="store_true", help="print every finding with its source line")
    parser.add_argument("--markdown", action="store_true", help="print the counts as a markdown table")
    parser.add_argument("--select", default="", help="codes or prefixes, as flake8's --select")
    parser.add_argument("--extend-select", default="", help="add codes, e.g. TDV9 for the opinionated rules")
    parser.add_argument("--ignore", default="", help="codes or prefixes to leave out")
    args = parser.parse_args(argv)
    split = lambda text: [part for part in text.replace(",", " ").split() if part]  # noqa: E731
    enabled = select_codes(split(args.select), split(args.ignore), split(args.extend_select))
    options = Options(enabled=enabled)
    corpora = research_corpora(args.research, args.repos) if args.research else library_corpora()
    rows = []
    for corpus in corpora:
        counts = lint_corpus(corpus, options, args.list)
        rows.append((corpus, counts))
        summary = ", ".join(f"{code} {n}" for code, n in sorted(counts.by_code.items())) or "none"
        print(f"{corpus.label}: {counts.files} files, {counts.lines} lines: {summary}")
    if args.markdown:
        print()
        print("\n".join(markdown_table(rows, sorted(code for code in enabled if code.startswith("TDV")))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
