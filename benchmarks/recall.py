"""Recall on real device bugs: does the linter report the bugs research projects fixed?

    python benchmarks/recall.py DIR [--list] [--commits PATH]

benchmarks/fix_commits.tsv lists commits that fixed a device bug (repository, commit,
file, the code that should report it, and a needle: text on the buggy line). DIR/<name>
must be a git clone of each repository with its history (pull-request refs too for the
commits that exist only there). For each row the file is linted as it was before the
commit and after it, alone, with the default rules plus TDV9: the bug is caught when a
finding of that code lies within two lines of a line holding the needle before the fix.
Prints the recall per code, and with --list every row.

With --project DIR the file is linted in its project, as flake8 sees it in a checkout:
the repository's Python files as they were before the commit are written under
DIR/<name>-<commit> (once; reused later), and the file is linted at its path there, so
the project index (flake8_torchdevice/analysis/project.py) can read the files it
imports. Without it each file is linted alone, as text.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from collections import Counter
from typing import List, Optional, Sequence, Tuple

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

from flake8_torchdevice.engine import Finding, Options, SourceError, lint_source  # noqa: E402
from flake8_torchdevice.rules import select_codes  # noqa: E402

FIX_COMMITS = os.path.join(HERE, "fix_commits.tsv")
OPTIONS = Options(enabled=select_codes(extend_select=["TDV9"]))


def rows(path: str = FIX_COMMITS) -> List[Tuple[str, ...]]:
    with open(path, encoding="utf-8") as handle:
        return [tuple(line.rstrip("\n").split("\t")) for line in handle if line.strip() and not line.startswith("#")]


def file_at(clone: str, revision: str, path: str) -> Optional[str]:
    done = subprocess.run(["git", "-C", clone, "show", f"{revision}:{path}"], capture_output=True)
    return done.stdout.decode("utf-8", "replace") if done.returncode == 0 else None


def findings(source: str, path: str) -> List[Finding]:
    try:
        return lint_source(source, path, OPTIONS)
    except SourceError:
        return []


def project_tree(clone: str, revision: str, root: str) -> Optional[str]:
    """The repository's .py files at `revision`, written under `root` once."""
    if os.path.isdir(root):
        return root
    listing = subprocess.run(["git", "-C", clone, "ls-tree", "-r", "--name-only", revision],
                             capture_output=True, text=True)
    if listing.returncode != 0:
        return None
    for name in listing.stdout.splitlines():
        if not name.endswith(".py"):
            continue
        text = subprocess.run(["git", "-C", clone, "show", f"{revision}:{name}"], capture_output=True).stdout
        target = os.path.join(root, name)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        with open(target, "wb") as out:
            out.write(text)
    open(os.path.join(root, ".git"), "w").close()  # the project's root, as in a checkout
    return root


def caught(source: str, path: str, code: str, needle: str) -> bool:
    needles = needle.split("|")
    sites = [number for number, line in enumerate(source.split("\n"), 1)
             if any(n in line for n in needles) and not line.strip().startswith("#")]
    return any(f.code == code and any(abs(f.line - site) <= 2 for site in sites) for f in findings(source, path))


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("clones", metavar="DIR", help="folder of git clones, one per repository (DIR/<name>, "
                                                      "or DIR/<owner>+<name> where two repositories share a name)")
    parser.add_argument("--list", action="store_true", help="print every row with its verdict")
    parser.add_argument("--project", metavar="DIR", help="lint each file inside its repository's tree (kept in DIR)")
    parser.add_argument("--commits", default=FIX_COMMITS, metavar="PATH",
                        help="table of fix commits to read (default: benchmarks/fix_commits.tsv)")
    args = parser.parse_args(argv)
    found, total, missing = Counter(), Counter(), 0
    for repo, commit, path, code, needle, note in rows(args.commits):
        clone = os.path.join(args.clones, repo.replace("/", "+"))
        if not os.path.isdir(clone):
            clone = os.path.join(args.clones, repo.split("/")[1])
        before_path, _, after_path = path.partition(">")
        before = file_at(clone, f"{commit}^", before_path) if os.path.isdir(clone) else None
        if before is None:
            missing += 1
            print(f"{repo} {commit[:9]}: not in {clone}", file=sys.stderr)
            continue
        total[code] += 1
        lint_path = before_path
        if args.project:
            tree = project_tree(clone, f"{commit}^", os.path.join(args.project, f"{clone.rstrip('/').rsplit('/', 1)[-1]}-{commit[:9]}"))
            lint_path = os.path.join(tree, before_path) if tree else before_path
        hit = caught(before, lint_path, code, needle)
        found[code] += hit
        if args.list:
            print(f"{'caught' if hit else 'MISSED'}  {code}  {repo} {commit[:9]} {before_path}: {note}")
    for code in sorted(total):
        print(f"{code}: {found[code]}/{total[code]}")
    print(f"all: {sum(found.values())}/{sum(total.values())}" + (f" ({missing} rows not found)" if missing else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
