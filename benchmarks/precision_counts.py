"""Count findings per code on real PyTorch projects, for docs/precision.md.

    python benchmarks/precision_counts.py [--list]

Downloads (once, into benchmarks/.cache/) the pinned wheels of timm, ultralytics,
mmsegmentation, kornia and MONAI with `pip download --no-deps`, unpacks them, and
lints them and the installed PyTorch's own sources with the engine. `--list` prints
every finding, which is what we read and classify by hand.
"""

from __future__ import annotations

import glob
import importlib.util
import os
import subprocess
import sys
import zipfile
from collections import Counter

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

from flake8_torchdevice.cli import iter_python_files, lint_path  # noqa: E402
from flake8_torchdevice.engine import Options  # noqa: E402

CACHE = os.path.join(HERE, ".cache")
PROJECTS = ["timm==1.0.31", "ultralytics==8.4.190", "mmsegmentation==1.2.2", "kornia==0.9.0", "monai==1.6.1"]


def project_source(requirement: str) -> str:
    name = requirement.split("==")[0]
    target = os.path.join(CACHE, name)
    if not os.path.isdir(target):
        os.makedirs(CACHE, exist_ok=True)
        subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", requirement, "-d", CACHE],
                       check=True)
        wheel = glob.glob(os.path.join(CACHE, f"{name}-*.whl"))[0]
        zipfile.ZipFile(wheel).extractall(target)
    return target


def torch_source() -> str:
    spec = importlib.util.find_spec("torch")  # locate without importing it
    return os.path.dirname(spec.origin)


def main() -> int:
    show = "--list" in sys.argv
    corpora = [(r.split("==")[0], project_source(r)) for r in PROJECTS] + [("torch", torch_source())]
    options = Options()
    for name, root in corpora:
        counts, files, lines = Counter(), 0, 0
        for path in iter_python_files([root]):
            files += 1
            with open(path, "rb") as handle:
                lines += handle.read().count(b"\n")
            findings, _ = lint_path(path, options)
            for finding in findings:
                counts[finding.code] += 1
                if show:
                    print(f"{os.path.relpath(path, root)}:{finding.line}:{finding.col + 1}: {finding.text}")
        summary = ", ".join(f"{code} {count}" for code, count in sorted(counts.items())) or "none"
        print(f"{name}: {files} files, {lines} lines: {summary}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
