"""The package reads top-down: syntax -> model -> rules -> engine -> adapters.

The import graph of flake8_torchdevice's own modules, built from their source with
`ast` (module-level imports, imports inside functions and `if TYPE_CHECKING:` imports
alike: each is a dependency a reader has to follow), must have no cycles, and every
import must point down the layers below (or stay within its layer):

- core: the package itself (`__version__`);
- analysis: what the rules know about code, itself ordered syntax, devices, scopes,
  guards, kinds, classes, walker (the order of analysis/__init__.py's docstring);
- rules: the rule catalog and `rules.base`;
- engine: source text -> findings (`engine`), and what every front end but flake8
  applies on top of it: `# noqa` (`noqa`), one file's findings (`files`);
- adapters: the flake8 plugin, the CLI, fix, notebooks, the language server, the
  harness, and what they share (configuration, rule docs, output formats).

The CLI is imported by `__main__` only (and by the `flake8-torchdevice` script).
The emulated GPU (`emulate`) stands apart: it imports nothing of the linter, and only
the CLI's `emulate` command imports it.
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Dict, List, Optional, Tuple

import pytest

import flake8_torchdevice

PACKAGE = "flake8_torchdevice"
ROOT = Path(flake8_torchdevice.__file__).resolve().parent

LAYERS: List[Tuple[str, Tuple[str, ...]]] = [
    ("core", ("flake8_torchdevice",)),
    ("analysis", ("flake8_torchdevice.analysis",)),
    ("rules", ("flake8_torchdevice.rules",)),
    ("engine", ("flake8_torchdevice.engine", "flake8_torchdevice.noqa", "flake8_torchdevice.files")),
    ("adapters", ("flake8_torchdevice.plugin", "flake8_torchdevice.config", "flake8_torchdevice.docs",
                  "flake8_torchdevice.formats", "flake8_torchdevice.notebook", "flake8_torchdevice.fix",
                  "flake8_torchdevice.lsp", "flake8_torchdevice.harness", "flake8_torchdevice.cli",
                  "flake8_torchdevice.__main__")),
]
EMULATE = "flake8_torchdevice.emulate"
ANALYSIS_ORDER = ["syntax", "devices", "project", "dumps", "scopes", "guards", "helpers", "kinds", "classes", "origins", "walker"]

# An import: (importing module, imported module, line).
Edge = Tuple[str, str, int]


def _modules() -> Dict[str, Tuple[Path, bool]]:
    modules = {}
    for path in sorted(ROOT.rglob("*.py")):
        parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
        is_package = parts[-1] == "__init__"
        if is_package:
            parts.pop()
        modules[".".join(parts)] = (path, is_package)
    return modules


MODULES = _modules()


def _resolve(name: str) -> Optional[str]:
    """The package's module that importing `name` runs (an attribute: its module)."""
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


def _imports(module: str) -> List[Edge]:
    path, is_package = MODULES[module]
    package = module if is_package else module.rpartition(".")[0]
    edges: Dict[str, int] = {}  # imported module -> line of its first import
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[:len(parts) - (node.level - 1)] + ([node.module] if node.module else []))
            else:
                base = node.module or ""
            # `from x import y`: the submodule x.y when there is one, else x itself
            names = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in MODULES else base for alias in node.names]
        else:
            continue
        for name in names:
            if name == PACKAGE or name.startswith(PACKAGE + "."):
                target = _resolve(name)
                if target is not None and target != module:
                    edges[target] = min(edges.get(target, node.lineno), node.lineno)
    return [(module, target, line) for target, line in sorted(edges.items())]


EDGES: List[Edge] = [edge for module in MODULES for edge in _imports(module)]


def _shown(edges: List[Edge]) -> str:
    return "\n".join(f"{a} -> {b} ({MODULES[a][0].relative_to(ROOT.parent)}:{line})" for a, b, line in edges)


def _in(module: str, prefix: str) -> bool:
    return module == prefix or module.startswith(prefix + ".")


def _layer(module: str) -> Optional[int]:
    """Index in LAYERS; the longest matching prefix decides (core is a prefix of all)."""
    best: Optional[Tuple[int, int]] = None
    for index, (_, prefixes) in enumerate(LAYERS):
        for prefix in prefixes:
            if _in(module, prefix) and (best is None or len(prefix) > best[0]):
                best = (len(prefix), index)
    return None if best is None else best[1]


def _cycles(modules: List[str]) -> List[List[str]]:
    """The strongly connected components with more than one module (Tarjan)."""
    graph: Dict[str, List[str]] = {m: [] for m in modules}
    for a, b, _ in EDGES:
        if a in graph and b in graph:
            graph[a].append(b)
    index: Dict[str, int] = {}
    low: Dict[str, int] = {}
    stack: List[str] = []
    on_stack = set()
    found: List[List[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for module in modules:
        if module not in index:
            visit(module)
    return found


def _cycle_report(cycles: List[List[str]]) -> str:
    return "\n\n".join(_shown([e for e in EDGES if e[0] in c and e[1] in c]) for c in cycles)


LINTER = [m for m in MODULES if not _in(m, EMULATE)]


def test_the_graph_is_read():
    # the walk finds the package's modules and the imports every layer is built on
    assert {"flake8_torchdevice.engine", "flake8_torchdevice.analysis.walker", "flake8_torchdevice.rules.base",
            "flake8_torchdevice.cli", f"{EMULATE}.session"} <= set(MODULES)
    pairs = {(a, b) for a, b, _ in EDGES}
    assert ("flake8_torchdevice.engine", "flake8_torchdevice.rules") in pairs
    assert ("flake8_torchdevice.analysis.walker", "flake8_torchdevice.analysis.kinds") in pairs
    assert ("flake8_torchdevice.__main__", "flake8_torchdevice.cli") in pairs
    # function-level imports count
    assert ("flake8_torchdevice.engine", "flake8_torchdevice.analysis") in pairs


def test_every_module_has_a_layer():
    unplaced = [m for m in LINTER if _layer(m) is None or (m != PACKAGE and _layer(m) == 0)]
    assert not unplaced, f"place these modules in a layer in {__file__}: {unplaced}"


def test_no_import_cycles():
    cycles = _cycles(LINTER)
    assert not cycles, "import cycles:\n" + _cycle_report(cycles)


def test_imports_point_down_the_layers():
    upward = [(a, b, line) for a, b, line in EDGES if a in LINTER and b in LINTER
              and (_layer(b) or 0) > (_layer(a) or 0)]
    assert not upward, "imports of a higher layer:\n" + _shown(upward)


@pytest.mark.parametrize("layer, forbidden", [
    ("analysis", ("rules", "engine", "adapters")),
    ("rules", ("engine", "adapters")),
    ("engine", ("adapters",)),
])
def test_layer_never_imports(layer, forbidden):
    names = [name for name, _ in LAYERS]
    wrong = [(a, b, line) for a, b, line in EDGES if _layer(a) == names.index(layer)
             and _layer(b) is not None and names[_layer(b)] in forbidden]
    assert not wrong, f"{layer} imports {'/'.join(forbidden)}:\n" + _shown(wrong)


def test_analysis_reads_bottom_up():
    prefix = "flake8_torchdevice.analysis."
    rank = {prefix + name: i for i, name in enumerate(ANALYSIS_ORDER)}
    assert set(rank) == {m for m in MODULES if m.startswith(prefix)}, "add the new module to ANALYSIS_ORDER"
    upward = [(a, b, line) for a, b, line in EDGES if a in rank and b in rank and rank[b] > rank[a]]
    assert not upward, "analysis modules importing a later one:\n" + _shown(upward)


def test_only_the_entry_point_imports_the_cli():
    importers = sorted({a for a, b, _ in EDGES if b == "flake8_torchdevice.cli"})
    assert importers == ["flake8_torchdevice.__main__"]


def test_emulate_stands_apart():
    into_linter = [(a, b, line) for a, b, line in EDGES if _in(a, EMULATE) and not _in(b, EMULATE)]
    assert not into_linter, "emulate imports the linter:\n" + _shown(into_linter)
    importers = sorted({a for a, b, _ in EDGES if _in(b, EMULATE) and not _in(a, EMULATE)})
    assert importers == ["flake8_torchdevice.cli"]


def test_emulate_has_no_import_cycles():
    cycles = _cycles([m for m in MODULES if _in(m, EMULATE)])
    assert not cycles, "import cycles:\n" + _cycle_report(cycles)
