"""What flake8-torchdevice costs inside flake8, measured on timm's sources.

    python benchmarks/bench.py [--rounds 3] [--jobs 1,2] [--tree PATH] [--before DIR]

Runs, alternating and repeated, on the same tree:

- plain:      the same flake8 in the same environment with our plugin's entry point
              filtered out of flake8's plugin discovery (flake8 7.x has no option that
              stops an installed plugin from loading); the ratios' baseline;
- plain-venv: flake8 without our plugin in a second venv under benchmarks/.cache/
              (same flake8, pycodestyle, pyflakes, mccabe versions). It starts faster
              than `plain` because its site-packages holds 4 distributions for flake8
              to scan, not the dozens of this environment: that gap is not our cost;
- plugin:     flake8 with the plugin, every TDV rule selected;
- deselected: flake8 with the plugin installed but `--select=E,F,W,C90`;
- check:      the standalone `flake8-torchdevice check`;
- torchfix:   `flake8 --select=TOR` with TorchFix, only if it is installed;
- plugin@before, check@before: with `--before DIR` (a checkout of an earlier commit,
              e.g. `git worktree add /tmp/before c2afe5c`), the same runs with that
              checkout's package first on PYTHONPATH: before and after in one run.

Each run goes through a small wrapper process that reports wall time, CPU time
(user + system of the run and its workers) and the peak RSS of the largest process
(getrusage(RUSAGE_CHILDREN)). The machine may be shared, so CPU time is the steadier
measure; ratios are against plain flake8's median in the same invocation.

The plugin's package (and the --before checkout's) is compiled to bytecode first: with
PYTHONDONTWRITEBYTECODE set, as on this project's machines, an editable install has no
.pyc files and every run would compile ours from source (0.25 s of CPU and 3 MB of peak
memory) while flake8's own packages load from theirs, as any pip-installed plugin does.

It also checks that the TDV findings are the same at every -j and in the standalone
command. The timm download is cached in benchmarks/.cache/ (git-ignored).
"""

from __future__ import annotations

import argparse
import compileall
import datetime
import glob
import importlib.metadata
import importlib.util
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
CACHE = os.path.join(HERE, ".cache")
TIMM = "1.0.31"
PLAIN_VENV = os.path.join(CACHE, "plain-venv")
FLAKE8_DEPS = ("flake8", "pycodestyle", "pyflakes", "mccabe")
BASE_SELECT = "E,F,W,C90"

# Runs one command, then prints its resource use as JSON on stderr's last line.
WRAPPER = r"""
import json, resource, subprocess, sys, time
start = time.perf_counter()
done = subprocess.run(sys.argv[2:], stdout=open(sys.argv[1], "w"), stderr=subprocess.DEVNULL)
wall = time.perf_counter() - start
use = resource.getrusage(resource.RUSAGE_CHILDREN)
print(json.dumps({"wall": wall, "cpu": use.ru_utime + use.ru_stime, "rss_kb": use.ru_maxrss,
                  "rc": done.returncode}), file=sys.stderr)
"""


def timm_tree() -> str:
    """timm's package directory, downloaded once with pip."""
    target = os.path.join(CACHE, f"timm-{TIMM}")
    package = os.path.join(target, "timm")
    if os.path.isdir(package):
        mark_project_root(target, "timm", TIMM)
        return package
    os.makedirs(CACHE, exist_ok=True)
    wheels = glob.glob(os.path.join(CACHE, f"timm-{TIMM}-*.whl"))
    if not wheels:
        subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", f"timm=={TIMM}",
                        "-d", CACHE, "-q"], check=True)
        wheels = glob.glob(os.path.join(CACHE, f"timm-{TIMM}-*.whl"))
    with zipfile.ZipFile(wheels[0]) as wheel:
        wheel.extractall(target)
    mark_project_root(target, "timm", TIMM)
    return package


def mark_project_root(folder: str, name: str, version: str) -> None:
    """Make an unpacked wheel a project of its own, as a checkout of the library is:
    without a root marker the project index would climb to this repository's root and
    read our files (tests, benchmarks) as the library's."""
    marker = os.path.join(folder, "pyproject.toml")
    if not os.path.exists(marker):
        with open(marker, "w") as handle:
            handle.write(f'[project]\nname = "{name}"\nversion = "{version}"\n')


def plain_flake8() -> str:
    """flake8 in a venv without our plugin, pinned to the versions installed here."""
    exe = os.path.join(PLAIN_VENV, "bin", "flake8")
    pins = [f"{name}=={importlib.metadata.version(name)}" for name in FLAKE8_DEPS]
    stamp = os.path.join(PLAIN_VENV, "pins.txt")
    if os.path.exists(stamp) and open(stamp).read() == "\n".join(pins):
        return exe
    subprocess.run([sys.executable, "-m", "venv", "--clear", PLAIN_VENV], check=True)
    subprocess.run([os.path.join(PLAIN_VENV, "bin", "python"), "-m", "pip", "install", "-q", *pins],
                   check=True)
    with open(stamp, "w") as out:
        out.write("\n".join(pins))
    return exe


# flake8 with every plugin but ours: the entry points flake8 finds, less this package's.
WITHOUT_PLUGIN = """
import sys
from flake8.main.cli import main
from flake8.plugins import finder
found = finder._find_importlib_plugins
finder._find_importlib_plugins = lambda: (p for p in found() if p.package != "flake8-torchdevice")
sys.exit(main())
"""


def commands(tree: str, jobs: int, before: str | None = None) -> dict:
    """name -> (command, extra environment)."""
    flake8 = shutil.which("flake8") or "flake8"
    runs = {
        "plain": [sys.executable, "-c", WITHOUT_PLUGIN, f"-j{jobs}", f"--select={BASE_SELECT}", tree],
        "plain-venv": [plain_flake8(), f"-j{jobs}", f"--select={BASE_SELECT}", tree],
        "plugin": [flake8, f"-j{jobs}", f"--select={BASE_SELECT},TDV", tree],
        "deselected": [flake8, f"-j{jobs}", f"--select={BASE_SELECT}", tree],
    }
    if jobs == 1:  # the standalone command has no -j
        runs["check"] = [shutil.which("flake8-torchdevice") or "flake8-torchdevice", "check",
                         "--select=TDV", tree]
    if _has_torchfix():
        runs["torchfix"] = [flake8, f"-j{jobs}", f"--select={BASE_SELECT},TOR", tree]
    runs = {name: (command, {}) for name, command in runs.items()}
    if before:
        for name in ("plugin", "check"):
            if name in runs:
                runs[f"{name}@before"] = (runs[name][0], {"PYTHONPATH": os.path.abspath(before)})
    return runs


def _has_torchfix() -> bool:
    try:
        importlib.metadata.version("torchfix")
        return True
    except importlib.metadata.PackageNotFoundError:
        return False


def measure(command: list, output: str, env: dict) -> dict:
    done = subprocess.run([sys.executable, "-c", WRAPPER, output, *command],
                          stderr=subprocess.PIPE, text=True, check=True, env=dict(os.environ, **env))
    result = json.loads(done.stderr.strip().splitlines()[-1])
    if result["rc"] not in (0, 1):
        raise SystemExit(f"{command} exited with {result['rc']}")
    return result


def compile_packages(before: str | None) -> None:
    """Bytecode for the measured packages, as `pip install` writes it (see the docstring)."""
    spec = importlib.util.find_spec("flake8_torchdevice")
    folders = [os.path.dirname(spec.origin)] if spec and spec.origin else []
    if before:
        folders.append(os.path.join(os.path.abspath(before), "flake8_torchdevice"))
    for folder in folders:
        compileall.compile_dir(folder, quiet=1)


def tdv_lines(path: str) -> list:
    with open(path) as lines:
        # `check` marks fixable findings `[*]`; flake8 does not
        return [line.rstrip("\n").replace(" [*] ", " ") for line in lines if ": TDV" in line]


def main(argv: list | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--jobs", default="1,2", help="comma-separated -j values")
    parser.add_argument("--tree", help="lint this directory instead of timm")
    parser.add_argument("--before", metavar="DIR", help="also run the plugin from this checkout (an earlier commit)")
    args = parser.parse_args(argv)
    tree = args.tree or timm_tree()
    compile_packages(args.before)
    files = glob.glob(os.path.join(tree, "**", "*.py"), recursive=True)
    lines = sum(1 for name in files for _ in open(name, encoding="utf-8", errors="replace"))
    out_dir = os.path.join(CACHE, "out")
    os.makedirs(out_dir, exist_ok=True)

    print(f"# {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC, {platform.machine()}, "
          f"{os.cpu_count()} cores, Python {platform.python_version()}, "
          f"flake8 {importlib.metadata.version('flake8')}, libcst {importlib.metadata.version('libcst')}")
    print(f"# tree: {os.path.relpath(tree)} ({len(files)} files, {lines} lines), "
          f"{args.rounds} rounds, medians; ratio = median / plain flake8's median at the same -j", flush=True)
    findings: dict = {}
    for jobs in (int(j) for j in args.jobs.split(",")):
        runs = commands(tree, jobs, args.before)
        results: dict = {name: [] for name in runs}
        for round_ in range(args.rounds):
            names = list(runs) if round_ % 2 == 0 else list(reversed(runs))  # alternate the order
            for name in names:
                output = os.path.join(out_dir, f"{name}-j{jobs}.txt")
                command, env = runs[name]
                results[name].append(measure(command, output, env))
                findings[f"{name} -j{jobs}"] = tdv_lines(output)
        base = {key: statistics.median(r[key] for r in results["plain"]) for key in ("wall", "cpu", "rss_kb")}
        print(f"\n-j{jobs}: {'run':<14}{'wall s':>8}{'ratio':>7}{'cpu s':>8}{'ratio':>7}{'peak MB':>9}{'ratio':>7}")
        for name, rows in results.items():
            cells = []
            for key, width in (("wall", 8), ("cpu", 8), ("rss_kb", 9)):
                value = statistics.median(r[key] for r in rows)
                shown = value / 1024 if key == "rss_kb" else value
                cells.append(f"{shown:>{width}.1f}{value / base[key]:>6.2f}x")
            print(f"     {name:<14}{''.join(cells)}")
            if name == "check":
                print("     (check runs TDV only, in one process)")

    for suffix in ("", "@before") if args.before else ("",):
        reference = findings.get(f"plugin{suffix} -j1", [])
        print(f"\nTDV findings{suffix and ' before'}: {len(reference)}")
        for name, found in findings.items():
            if not name.startswith((f"plugin{suffix} ", f"check{suffix} ")):
                continue
            # flake8 orders files by name; the standalone command in walk order
            same = sorted(found) == sorted(reference) if name.startswith("check") else found == reference
            if not same:
                print(f"MISMATCH: {name} differs from plugin{suffix} -j1")
                return 1
    print("identical in flake8 at every -j and in the standalone command")
    return 0


if __name__ == "__main__":
    sys.exit(main())
