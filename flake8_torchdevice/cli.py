"""The standalone command: `flake8-torchdevice check|rules|explain`.

Output (`--format text`), `# noqa`, file discovery, exclusion and configuration
match flake8's, so editors, CI and people read it the same way. This module only
parses options and walks files: formats.py renders, config.py reads the settings.

Exit status of `check`:
- 0: every file was linted and nothing was found (or `--exit-zero`);
- 1: findings were printed (E999 for a file Python cannot compile counts as one),
  or a file was skipped: `PATH: skipped: REASON` on stderr (it cannot be read, or
  is too large or too deeply nested to analyse);
- 2: usage or configuration error (an unknown option, key or code), or an internal
  error (a bug in this linter): `PATH: internal error: ...` on stderr; the other
  files are still linted and reported.
`rules` and `explain` exit 0, or 2 on an unknown code.
"""

from __future__ import annotations

import argparse
import fnmatch
import multiprocessing
import os
import platform
import sys
from dataclasses import dataclass
from typing import Dict, Iterable, Iterator, List, Optional, Sequence, Tuple

from . import __version__
from .config import DEFAULT_EXCLUDE, EXTRA_CODES, GUARD_NAMES_HELP, PARAM_DEFAULTS_HELP, Config, ConfigError
from .config import GUARD_NAMES_OPTION, PARAM_DEFAULTS_OPTION, check_codes, extend_select_help, load_config
from .config import normalize_path, split_list
from .engine import Finding, Options, SourceError
from .files import lint_path, lint_text, read_source
from .formats import FORMATS, Replacement, ReportItem, SuggestedFix
from .rules import ALL_RULES, RULES_BY_CODE

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2
# Files a folder is searched for (files named on the command line are always linted).
LINTED_SUFFIXES = (".py", ".ipynb")
# Jupyter's autosave copies: the notebook beside the folder is the one people run.
# flake8 never reads notebooks, so skipping these keeps `check` equal to it on .py files.
NOTEBOOK_CHECKPOINTS = ".ipynb_checkpoints"


def is_excluded(path: str, patterns: Sequence[str]) -> bool:
    """flake8's test: the base name or the absolute path matches a pattern."""
    if not patterns:
        return False
    base = os.path.basename(path)
    if base not in (".", "..") and any(fnmatch.fnmatch(base, p) for p in patterns):
        return True
    absolute = os.path.abspath(path)
    return any(fnmatch.fnmatch(absolute, p) for p in patterns)


def iter_python_files(paths: Iterable[str], exclude: Sequence[str] = DEFAULT_EXCLUDE,
                      stdin_display_name: str = "stdin") -> Iterator[str]:
    """The files to lint, as flake8 finds them: folders are searched for *.py (and
    notebooks outside `.ipynb_checkpoints`), skipping excluded folders and files; a file
    named on the command line is linted whatever its suffix unless it is excluded; `-`
    (stdin) only if its display name is not."""
    for path in paths:
        if path == "-":
            if stdin_display_name == "stdin" or not is_excluded(stdin_display_name, exclude):
                yield path
            continue
        if is_excluded(path, exclude):
            continue
        if not os.path.isdir(path):
            yield path
            continue
        for root, dirs, files in os.walk(path):
            dirs[:] = [d for d in dirs if not is_excluded(os.path.join(root, d), exclude)]
            in_checkpoints = os.path.basename(root) == NOTEBOOK_CHECKPOINTS
            for name in files:
                joined = os.path.join(root, name)
                if in_checkpoints and name.endswith(".ipynb"):
                    continue
                if name.endswith(LINTED_SUFFIXES) and not is_excluded(joined, exclude):
                    yield joined


@dataclass(frozen=True)
class CheckSettings:
    options: Options
    report_syntax_errors: bool  # E999 selected
    show_source: bool
    stdin_display_name: str = "stdin"
    with_fixes: bool = False  # each fixable finding carries its edits (json, sarif)


def suggested_fix(source: str, path: str, options: Options, finding: Finding) -> Optional[SuggestedFix]:
    """The edits of `finding`'s own fix, as `fix` would apply it alone (1-based)."""
    if not finding.fixable:
        return None
    from .fix import changed_lines, fix_source, fix_title

    try:
        result = fix_source(source, path, options, only=finding)
    except SourceError:  # FixError included: that fix would not parse
        return None
    if not result.changed:
        return None
    edits = tuple(Replacement(line + 1, col + 1, end_line + 1, end_col + 1, text)
                  for line, col, end_line, end_col, text in changed_lines(source, result.text))
    return SuggestedFix(fix_title(finding), edits)


@dataclass
class FileReport:
    items: List[ReportItem]
    skipped: Optional[str] = None  # why the file was not linted
    error: Optional[str] = None  # an internal error (a bug of ours)


def check_file(path: str, settings: CheckSettings) -> FileReport:
    """One file's report; never raises (a bug of ours becomes `error`)."""
    shown = settings.stdin_display_name if path == "-" else path
    try:
        try:
            source = read_source(path)
        except OSError as error:
            return FileReport([], skipped=f"cannot read: {error.strerror or error}")
        if path.endswith(".ipynb"):  # findings as ruff shows them: path:cell N:line:col
            from .notebook import lint_notebook_path

            located, skipped = lint_notebook_path(path, settings.options)
            if skipped is not None:
                return FileReport([], skipped=skipped)
            return FileReport([ReportItem(path=shown, line=f.line, col=f.col + 1, code=f.code, message=f.message,
                                          cell=cell, fixable=f.fixable) for cell, f in located
                               if f.code != "E999" or settings.report_syntax_errors])
        try:
            findings = lint_text(source, path, settings.options)
        except SourceError as error:
            return FileReport([], skipped=error.reason)
    except Exception as error:  # report it, go on with the other files
        message = " ".join(str(error).split())[:200]
        return FileReport([], error=f"{type(error).__name__}: {message}")
    lines = source.split("\n") if settings.show_source else []
    items = [ReportItem(path=shown, line=f.line, col=f.col + 1, code=f.code, message=f.message,
                        fixable=f.fixable,
                        fix=suggested_fix(source, path, settings.options, f) if settings.with_fixes else None,
                        end_line=f.end_line, end_col=None if f.end_col is None else f.end_col + 1,
                        source_line=lines[f.line - 1] if 0 < f.line <= len(lines) else None)
             for f in findings if f.code != "E999" or settings.report_syntax_errors]
    return FileReport(items)


def _check_job(job: Tuple[str, CheckSettings]) -> FileReport:
    return check_file(*job)


def iter_reports(paths: Sequence[str], settings: CheckSettings, jobs: int) -> Iterator[Tuple[str, FileReport]]:
    """(path, report) in the order of `paths`, from `jobs` processes."""
    if jobs > 1 and len(paths) > 1 and "-" not in paths:
        chunk = max(1, min(8, len(paths) // (jobs * 4)))
        with multiprocessing.Pool(min(jobs, len(paths))) as pool:
            yield from zip(paths, pool.imap(_check_job, [(p, settings) for p in paths], chunksize=chunk))
        return
    for path in paths:
        yield path, check_file(path, settings)


def statistics(items: Sequence[ReportItem]) -> List[str]:
    """flake8's --statistics lines: count, code and the first message, by code."""
    counts: Dict[str, int] = {}
    first: Dict[str, str] = {}
    for item in items:
        counts[item.code] = counts.get(item.code, 0) + 1
        first.setdefault(item.code, item.message)
    return [f"{counts[code]:<5} {code} {first[code]}" for code in sorted(counts)]


def _config_from(args: argparse.Namespace) -> Config:
    """Files, then the command line on top (an option given replaces the configured one)."""
    config = load_config(".", explicit_path=args.config, isolated=args.isolated)
    cli: Dict[str, object] = {}
    for key in ("select", "ignore", "extend_select", "extend_ignore", "guard_names"):
        value = getattr(args, key)
        if value:
            items = split_list(value)
            if key != "guard_names":
                check_codes(items, "--" + key.replace("_", "-"))
            cli[key.replace("_", "-")] = tuple(items)
    for key in ("exclude", "extend_exclude"):
        value = getattr(args, key)
        if value:
            cli[key.replace("_", "-")] = tuple(normalize_path(p, ".") for p in split_list(value))
    if args.check_param_defaults:
        cli["check-param-defaults"] = True
    if (not args.select and config.get("select") is not None
            and not config.enabled_codes() - set(EXTRA_CODES)):
        print(f"flake8-torchdevice: warning: select = {','.join(config.get('select'))} "
              f"({', '.join(config.sources)}) turns every TDV rule off; add TDV to it",
              file=sys.stderr)
    return config.updated(cli, "the command line" if cli else None)


def _jobs(value: str) -> int:
    if value == "auto":
        return os.cpu_count() or 1
    try:
        jobs = int(value)
    except ValueError:
        jobs = 0
    if jobs < 1:
        raise argparse.ArgumentTypeError(f"expected a number of processes or auto, not {value!r}")
    return jobs


def command_check(args: argparse.Namespace) -> int:
    config = _config_from(args)
    codes = config.enabled_codes()
    settings = CheckSettings(options=config.options(), report_syntax_errors="E999" in codes,
                             show_source=args.show_source, stdin_display_name=args.stdin_display_name,
                             with_fixes=args.format in ("json", "sarif"))
    paths = sorted(iter_python_files(args.paths, config.exclude(), args.stdin_display_name),
                   key=lambda p: args.stdin_display_name if p == "-" else p)  # flake8's order
    fmt = FORMATS[args.format](show_source=args.show_source)
    # what is not findings goes to stderr when stdout holds a JSON document or annotations
    extra_out = sys.stdout if args.format == "text" else sys.stderr
    status = EXIT_CLEAN
    counts = {"files": 0, "skipped": 0, "errors": 0, "findings": 0}
    items: List[ReportItem] = []
    try:
        for path, report in iter_reports(paths, settings, args.jobs):
            shown = args.stdin_display_name if path == "-" else path
            counts["files"] += 1
            if report.error is not None:
                print(f"{shown}: internal error: {report.error}; please report this bug at the "
                      "flake8-torchdevice issue tracker with the file attached", file=sys.stderr)
                counts["errors"] += 1
                status = EXIT_ERROR
            if report.skipped is not None:
                print(f"{shown}: skipped: {report.skipped}", file=sys.stderr)
                counts["skipped"] += 1
                status = max(status, EXIT_FINDINGS)
            for item in report.items:
                counts["findings"] += 1
                status = max(status, EXIT_FINDINGS)
                items.append(item)
                line = fmt.item(item)
                if line is not None:
                    print(line)
        closing = fmt.end(items)
        if closing:
            print(closing)
        if args.statistics:
            for line in statistics(items):
                print(line, file=extra_out)
        if args.count:
            print(len(items), file=extra_out)
        sys.stdout.flush()
    except BrokenPipeError:  # `check ... | head`: stop quietly, keep the findings' status
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        status = max(status, EXIT_FINDINGS if items else EXIT_CLEAN)
    if args.verbose:
        print("flake8-torchdevice: {files} files, {findings} findings, {skipped} skipped, "
              "{errors} internal errors".format(**counts), file=sys.stderr)
    if args.exit_zero and status == EXIT_FINDINGS:
        return EXIT_CLEAN
    return status


def command_fix(args: argparse.Namespace) -> int:
    """`fix`: the work is in fix.py."""
    from dataclasses import replace

    from .fix import run_fix

    if "-" in args.paths:
        print("flake8-torchdevice: error: fix rewrites files; it cannot read stdin", file=sys.stderr)
        return EXIT_ERROR
    config = _config_from(args)
    options = replace(config.options(), add_device=args.add_device)
    return run_fix(iter_python_files(args.paths, config.exclude()), options, diff=args.diff)


def command_rules(args: argparse.Namespace) -> int:
    from .docs import summary

    for rule in ALL_RULES:
        default = "" if rule.default_enabled else "  (off by default)"
        print(f"{rule.code}  {rule.name:28} {summary(rule)}{default}")
    return EXIT_CLEAN


def find_rule(code_or_name: str) -> Optional[type]:
    wanted = code_or_name.strip()
    by_name = {rule.name: rule for rule in ALL_RULES}
    return RULES_BY_CODE.get(wanted.upper()) or by_name.get(wanted.lower())


def command_explain(args: argparse.Namespace) -> int:
    rule = find_rule(args.code)
    if rule is None:
        print(f"unknown code {args.code}: no rule has this code or name; `flake8-torchdevice rules` lists them", file=sys.stderr)
        return EXIT_ERROR
    from .docs import rule_page

    print(rule_page(rule))
    return EXIT_CLEAN


def version_text() -> str:
    import libcst

    libcst_version = getattr(libcst, "__version__", None)
    if libcst_version is None:
        from importlib.metadata import version
        libcst_version = version("libcst")
    return (f"flake8-torchdevice {__version__} (libcst {libcst_version}) "
            f"{platform.python_implementation()} {platform.python_version()} on {platform.system()}")


class _VersionAction(argparse.Action):
    def __init__(self, option_strings: Sequence[str], dest: str = argparse.SUPPRESS, **kwargs: object) -> None:
        super().__init__(option_strings, dest=dest, nargs=0, help="print the version and exit")

    def __call__(self, parser: argparse.ArgumentParser, *args: object) -> None:
        print(version_text())
        parser.exit()


def command_lsp(args: argparse.Namespace) -> int:
    try:
        from .lsp import main as serve  # pygls only for this command
    except ImportError as error:
        print(f"the language server needs pygls: pip install 'flake8-torchdevice[lsp]' ({error})",
              file=sys.stderr)
        return EXIT_ERROR
    return serve()


def add_configuration_options(command: argparse.ArgumentParser, verb: str) -> None:
    """What check and fix share: which codes, which files, which configuration."""
    command.add_argument("--select", help=f"comma-separated codes or prefixes to {verb} (replaces the configured "
                                          "select); TDV,E9 also reports files Python cannot compile")
    command.add_argument("--ignore", help=f"comma-separated codes or prefixes not to {verb}")
    command.add_argument("--extend-select", help=extend_select_help())
    command.add_argument("--extend-ignore", help=f"codes or prefixes not to {verb}, besides the ignored ones")
    command.add_argument("--guard-names", help=GUARD_NAMES_HELP)
    command.add_argument("--check-param-defaults", action="store_true", help=PARAM_DEFAULTS_HELP)
    command.add_argument("--exclude", help="comma-separated file or folder patterns to skip (replaces the "
                                           "default: " + ",".join(DEFAULT_EXCLUDE) + ")")
    command.add_argument("--extend-exclude", help="patterns to skip besides the excluded ones")
    command.add_argument("--config", metavar="PATH", help="read this file (a [flake8] section, or "
                                                          "[tool.flake8-torchdevice] of a .toml) instead of searching")
    command.add_argument("--isolated", action="store_true", help="ignore every configuration file")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="flake8-torchdevice", description=__doc__.splitlines()[0])
    parser.add_argument("--version", action=_VersionAction)
    commands = parser.add_subparsers(dest="command", required=True)
    check = commands.add_parser(
        "check", help="lint files and folders (- reads stdin)",
        description="Lint files and folders (- reads stdin) with the TDV rules; options as in flake8.")
    check.add_argument("paths", nargs="+", metavar="PATH")
    add_configuration_options(check, "report")
    check.add_argument("--format", choices=sorted(FORMATS), default="text",
                       help="text (flake8's), json, github (workflow annotations) or sarif (SARIF 2.1.0)")
    check.add_argument("--show-source", action="store_true", help="print each finding's line, with a caret")
    check.add_argument("--statistics", action="store_true", help="end with the count of each code")
    check.add_argument("--count", action="store_true", help="end with the number of findings")
    check.add_argument("--exit-zero", action="store_true", help="exit 0 even when there are findings")
    check.add_argument("--stdin-display-name", default="stdin", metavar="NAME",
                       help="the name stdin's findings are reported under")
    check.add_argument("-j", "--jobs", type=_jobs, default=1, metavar="N",
                       help="lint files in N processes, or auto (default 1); output is the same")
    check.add_argument("-v", "--verbose", action="store_true",
                       help="end with a line on stderr: files checked, findings, skipped files")
    check.set_defaults(handler=command_check)
    commands.add_parser("rules", help="list every code").set_defaults(handler=command_rules)
    explain = commands.add_parser("explain", help="print a rule's documentation")
    explain.add_argument("code", help="a code (TDV101) or a rule name (cuda-call)")
    explain.set_defaults(handler=command_explain)
    commands.add_parser("lsp", help="run the language server on stdin/stdout (the lsp extra)").set_defaults(
        handler=command_lsp)
    fix = commands.add_parser("fix", help="apply the fixes of fixable findings ([*] in check) to files and folders",
                              description="Rewrite files with the fixes the TDV rules offer; options as in check.")
    fix.add_argument("paths", nargs="+", metavar="PATH")
    add_configuration_options(fix, "fix")
    fix.add_argument("--diff", action="store_true", help="print the changes as a unified diff, write nothing")
    fix.add_argument("--add-device", action="store_true",
                     help="where a fix needs a device and none is in scope, add one selection after the imports: "
                          'device = torch.device("cuda" if torch.cuda.is_available() else "cpu")')
    fix.set_defaults(handler=command_fix)
    # Listed for --help; main() hands its arguments to the emulator untouched.
    commands.add_parser("emulate", help="run a script (or -m module) with an emulated CUDA GPU (needs torch)",
                        add_help=False)
    return parser


def command_emulate(argv: Sequence[str]) -> int:
    from .emulate.run import main as run_emulated  # imports torch only when the program starts

    return run_emulated(argv, prog="flake8-torchdevice emulate")


def main(argv: Optional[Sequence[str]] = None) -> int:
    for stream in (sys.stdout, sys.stderr):
        # a file name that is not valid UTF-8 must not stop the run
        if hasattr(stream, "reconfigure"):
            stream.reconfigure(errors="backslashreplace")
    arguments = sys.argv[1:] if argv is None else list(argv)
    if arguments[:1] == ["emulate"]:
        # The program's own exceptions and exit status pass through, as under `python`.
        return command_emulate(arguments[1:])
    parser = build_parser()
    try:
        args = parser.parse_args(arguments)
    except SystemExit as exit_:
        return EXIT_CLEAN if exit_.code == 0 else EXIT_ERROR
    try:
        return args.handler(args)
    except ConfigError as error:
        print(f"flake8-torchdevice: error: {error}", file=sys.stderr)
        return EXIT_ERROR
    except KeyboardInterrupt:
        return EXIT_ERROR
    except BrokenPipeError:  # `rules | head`: stop quietly, also when Python flushes at exit
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_CLEAN


__all__ = ["main", "lint_path", "iter_python_files", "check_file", "PARAM_DEFAULTS_OPTION", "GUARD_NAMES_OPTION"]

if __name__ == "__main__":
    sys.exit(main())
