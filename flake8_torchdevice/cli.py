"""The standalone command: `flake8-torchdevice check|rules|explain`.

Output and `# noqa` handling match flake8's defaults, so editors and CI parse it the
same way.

Exit status of `check`:
- 0: every file was linted and nothing was found;
- 1: findings were printed (E999 for a file Python cannot compile counts as one),
  or a file was skipped: `PATH: skipped: REASON` on stderr (it cannot be read, or
  is too large or too deeply nested to analyse);
- 2: usage error, or an internal error (a bug in this linter): `PATH: internal
  error: ...` on stderr; the other files are still linted and reported.
`rules` and `explain` exit 0, or 2 on an unknown code.
"""

from __future__ import annotations

import argparse
import ast
import io
import os
import re
import sys
import tokenize
from typing import Iterable, Iterator, List, Optional, Sequence, Tuple

from .config import GUARD_NAMES_HELP, GUARD_NAMES_OPTION, PARAM_DEFAULTS_HELP, PARAM_DEFAULTS_OPTION
from .config import is_true, read_flake8_section, split_list
from .engine import Finding, Options, SourceError, lint_source, parse_python
from .rules import ALL_RULES, RULES_BY_CODE, select_codes

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2
# The same directories flake8 skips by default.
EXCLUDED_DIRS = {".svn", "CVS", ".bzr", ".hg", ".git", "__pycache__", ".tox", ".nox", ".eggs"}
# flake8's noqa syntax: `# noqa`, `# noqa: TDV101`, `# NOQA:TDV101,TDV102`.
NOQA_RE = re.compile(r"#\s*noqa(?::[\s]?(?P<codes>[A-Z]+[0-9]+(?:[,\s]+[A-Z]+[0-9]+)*))?", re.I)
CODE_RE = re.compile(r"[A-Z]+[0-9]+", re.I)


def iter_python_files(paths: Iterable[str]) -> Iterator[str]:
    for path in paths:
        if path == "-" or not os.path.isdir(path):
            yield path
            continue
        for root, dirs, files in os.walk(path):
            dirs[:] = sorted(d for d in dirs if d not in EXCLUDED_DIRS and not d.endswith(".egg"))
            for name in sorted(files):
                if name.endswith((".py", ".ipynb")):
                    yield os.path.join(root, name)


def read_source(path: str) -> str:
    """Decode like Python does: PEP 263 coding line, BOM, UTF-8 by default; line
    endings read as flake8 reads them (\r\n and \r become \n).

    Raises OSError, or SourceError (a SyntaxError, E999) for bytes Python cannot decode.
    """
    if path == "-":
        data = sys.stdin.buffer.read()
    else:
        with open(path, "rb") as file:
            data = file.read()
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
        text = data.decode(encoding)
    except (SyntaxError, UnicodeDecodeError, LookupError) as error:
        raise _decode_error(data, error) from None
    text = text[1:] if text.startswith("\ufeff") else text
    return text.replace("\r\n", "\n").replace("\r", "\n") if "\r" in text else text


def _decode_error(data: bytes, error: Exception) -> SourceError:
    """Python's own message and position for a file it cannot decode."""
    try:
        compile(data, "<file>", "exec", ast.PyCF_ONLY_AST, dont_inherit=True)
    except SyntaxError as syntax:
        return SourceError(f"SyntaxError: {syntax.msg}", max(syntax.lineno or 1, 1), max(syntax.offset or 1, 1) - 1)
    except (ValueError, RecursionError, MemoryError):
        pass
    return SourceError(f"SyntaxError: cannot decode: {error}", 1, 0)


def is_suppressed(finding: Finding, lines: Sequence[str]) -> bool:
    if not 1 <= finding.line <= len(lines):
        return False
    match = NOQA_RE.search(lines[finding.line - 1])
    if match is None:
        return False
    codes = match.group("codes")
    if not codes:
        return True
    return any(finding.code.upper().startswith(code.upper()) for code in CODE_RE.findall(codes))


def lint_path(path: str, options: Options) -> Tuple[List[Finding], Optional[str]]:
    """Findings for one file, or a one-line reason why it was skipped."""
    try:
        source = read_source(path)
        # Parse here rather than in the engine so a broken file is reported (E999,
        # as flake8 does) even when nothing in it could hold a TDV finding.
        tree = parse_python(source, path)
        findings = lint_source(source, path, options, tree=tree)
    except SourceError as error:
        if error.reason.startswith(("SyntaxError", "IndentationError", "TabError")):
            return [Finding(error.line or 1, error.col, "E999", error.reason)], None
        return [], error.reason
    except OSError as error:
        return [], f"cannot read: {error.strerror or error}"
    # Only \n ends a line now; str.splitlines() would also split at \f, \x1c, \u2028...
    lines = source.split("\n")
    return [f for f in findings if not is_suppressed(f, lines)], None


def _options_from(args: argparse.Namespace) -> Options:
    config = read_flake8_section()
    tdv_only = lambda values: [v for v in values if v.upper().startswith("TDV")]  # noqa: E731
    select = split_list(args.select) or tdv_only(split_list(config.get("select")))
    ignore = split_list(args.ignore) + tdv_only(split_list(config.get("ignore")) + split_list(config.get("extend-ignore")))
    extend = split_list(args.extend_select) + tdv_only(split_list(config.get("extend-select")))
    guard_names = split_list(args.guard_names) + split_list(config.get(GUARD_NAMES_OPTION))
    return Options(
        enabled=select_codes(select, ignore, extend),
        guard_names=tuple(guard_names),
        check_param_defaults=args.check_param_defaults or is_true(config.get(PARAM_DEFAULTS_OPTION)),
    )


def command_check(args: argparse.Namespace) -> int:
    options = _options_from(args)
    status = EXIT_CLEAN
    counts = {"files": 0, "skipped": 0, "errors": 0, "findings": 0}
    for path in iter_python_files(args.paths):
        shown = "stdin" if path == "-" else path
        counts["files"] += 1
        try:
            if path.endswith(".ipynb"):
                from .notebook import lint_notebook_path

                located, skipped = lint_notebook_path(path, options)
            else:
                findings, skipped = lint_path(path, options)
                located = [(None, finding) for finding in findings]
        except Exception as error:  # a bug of ours: report it, go on with the other files
            message = " ".join(str(error).split())[:200]
            print(f"{shown}: internal error: {type(error).__name__}: {message}; "
                  "please report this bug at the flake8-torchdevice issue tracker "
                  "with the file attached", file=sys.stderr)
            counts["errors"] += 1
            status = EXIT_ERROR
            continue
        if skipped is not None:
            print(f"{shown}: skipped: {skipped}", file=sys.stderr)
            counts["skipped"] += 1
            status = max(status, EXIT_FINDINGS)
        for cell, finding in located:  # a notebook's findings as ruff shows them: path:cell N:line:col
            where = "" if cell is None else f"cell {cell}:"
            print(f"{shown}:{where}{finding.line}:{finding.col + 1}: {finding.text}")
            counts["findings"] += 1
            status = max(status, EXIT_FINDINGS)
    if args.verbose:
        print("flake8-torchdevice: {files} files, {findings} findings, {skipped} skipped, "
              "{errors} internal errors".format(**counts), file=sys.stderr)
    return status


def command_fix(args: argparse.Namespace) -> int:
    """`fix`: the work is in fix.py."""
    from dataclasses import replace

    from .fix import run_fix

    if "-" in args.paths:
        print("flake8-torchdevice: error: fix rewrites files; it cannot read stdin", file=sys.stderr)
        return EXIT_ERROR
    options = replace(_options_from(args), add_device=args.add_device)
    return run_fix(iter_python_files(args.paths), options, diff=args.diff)


def command_rules(args: argparse.Namespace) -> int:
    from .docs import summary

    for rule in ALL_RULES:
        default = "" if rule.default_enabled else "  (off by default)"
        print(f"{rule.code}  {rule.name:28} {summary(rule)}{default}")
    return EXIT_CLEAN


def command_explain(args: argparse.Namespace) -> int:
    rule = RULES_BY_CODE.get(args.code.upper())
    if rule is None:
        print(f"unknown code {args.code}; `flake8-torchdevice rules` lists them", file=sys.stderr)
        return EXIT_ERROR
    from .docs import rule_page

    print(rule_page(rule))
    return EXIT_CLEAN


def command_lsp(args: argparse.Namespace) -> int:
    try:
        from .lsp import main as serve  # pygls only for this command
    except ImportError as error:
        print(f"the language server needs pygls: pip install 'flake8-torchdevice[lsp]' ({error})",
              file=sys.stderr)
        return EXIT_ERROR
    return serve()


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="flake8-torchdevice", description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    check = commands.add_parser("check", help="lint files and folders (- reads stdin)")
    check.add_argument("paths", nargs="+", metavar="PATH")
    check.add_argument("--select", default="", help="comma-separated codes or prefixes to report")
    check.add_argument("--ignore", default="", help="comma-separated codes or prefixes not to report")
    check.add_argument("--extend-select", default="", help="add codes, e.g. TDV9 for the opinionated rules")
    check.add_argument("--guard-names", default="", help=GUARD_NAMES_HELP)
    check.add_argument("--check-param-defaults", action="store_true", help=PARAM_DEFAULTS_HELP)
    check.add_argument("-v", "--verbose", action="store_true",
                       help="end with a line on stderr: files checked, findings, skipped files")
    check.set_defaults(handler=command_check)
    commands.add_parser("rules", help="list every code").set_defaults(handler=command_rules)
    explain = commands.add_parser("explain", help="print a rule's documentation")
    explain.add_argument("code")
    explain.set_defaults(handler=command_explain)
    commands.add_parser("lsp", help="run the language server on stdin/stdout (the lsp extra)").set_defaults(
        handler=command_lsp)
    fix = commands.add_parser("fix", help="apply the fixes of fixable findings ([*] in check) to files and folders",
                              description="Rewrite files with the fixes the TDV rules offer; options as in check.")
    fix.add_argument("paths", nargs="+", metavar="PATH")
    fix.add_argument("--select", default="", help="comma-separated codes or prefixes to fix")
    fix.add_argument("--ignore", default="", help="comma-separated codes or prefixes not to fix")
    fix.add_argument("--extend-select", default="", help="add codes, e.g. TDV9 for the opinionated rules")
    fix.add_argument("--guard-names", default="", help=GUARD_NAMES_HELP)
    fix.add_argument("--check-param-defaults", action="store_true", help=PARAM_DEFAULTS_HELP)
    fix.add_argument("--diff", action="store_true", help="print the changes as a unified diff, write nothing")
    fix.add_argument("--add-device", action="store_true",
                     help="where a fix needs a device and none is in scope, add one selection after the imports: "
                          'device = torch.device("cuda" if torch.cuda.is_available() else "cpu")')
    fix.set_defaults(handler=command_fix)
    return parser


def main(argv: Optional[Sequence[str]] = None) -> int:
    for stream in (sys.stdout, sys.stderr):
        # a file name that is not valid UTF-8 must not stop the run
        if hasattr(stream, "reconfigure"):
            stream.reconfigure(errors="backslashreplace")
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exit_:
        return EXIT_CLEAN if exit_.code == 0 else EXIT_ERROR
    try:
        return args.handler(args)
    except KeyboardInterrupt:
        return EXIT_ERROR
    except BrokenPipeError:  # `... | head`: stop quietly, also when Python flushes at exit
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_CLEAN


__all__ = ["main", "lint_path", "PARAM_DEFAULTS_OPTION", "GUARD_NAMES_OPTION"]

if __name__ == "__main__":
    sys.exit(main())
