"""Source text -> findings. The flake8 plugin, the CLI and the harness all call
`lint_source`; nothing else parses or walks code.

Speed matters because every file flake8 lints pays for us. libcst is exact but slow
to parse, so the fast path parses only what can hold a finding:

1. a file whose text matches no rule's trigger pattern is not parsed at all;
2. otherwise, every function (at module level or in a class) whose own text matches
   no trigger is replaced by `def name(): pass` on its first line, and its other
   lines are left out (libcst pays for every line, blank or not); columns stay the
   same and a table maps each kept line back to its line in the file (in
   functions, a rule with a `call_trigger` is triggered by such a call in the `ast`
   tree, not by its word; a rule with `matches_function` decides with its own test on
   the function's tree);
3. `__init__` is kept when another method of its class is: TDV201 reads it;
4. a class that a rule with `keeps_class` judges as a whole (TDV202: what one method
   assigns, another registers or reads) is kept whole, with its base classes in the file.

`fast=False` parses the whole file; the results are the same (tests check it).
"""

from __future__ import annotations

import ast
import copy
import gc
import io
import re
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import (TYPE_CHECKING, AbstractSet, Callable, Dict, FrozenSet, Iterable, Iterator, List, Optional, Sequence,
                    Set, Tuple)

from .analysis.project import ProjectIndex, index_for
from .analysis.helpers import is_candidate, is_host_only_test, is_test_file
from .analysis.syntax import ast_definitions, ast_dotted_name, walk_ast
from .rules import ALL_RULES, DEFAULT_CODES

if TYPE_CHECKING:
    import libcst as cst


@dataclass(frozen=True, order=True)
class Finding:
    line: int  # 1-based
    col: int  # 0-based, as flake8 plugins yield it
    code: str
    message: str  # without the code
    # `flake8-torchdevice fix` can repair it (not part of a finding's identity)
    fixable: bool = field(default=False, compare=False)
    # Where the reported code ends (1-based line, 0-based col), for editors' ranges;
    # not part of a finding's identity either.
    end_line: Optional[int] = field(default=None, compare=False)
    end_col: Optional[int] = field(default=None, compare=False)

    @property
    def text(self) -> str:
        return f"{self.code} {self.message}"


@dataclass(frozen=True)
class Options:
    enabled: FrozenSet[str] = DEFAULT_CODES
    # Extra names (flags, decorators) that mean "CUDA is present here".
    guard_names: Tuple[str, ...] = ()
    # TDV102 also reports `def f(device="cuda")` parameter defaults.
    check_param_defaults: bool = False
    # Fixes may add a module-level device selection (`fix --add-device`).
    add_device: bool = False


DEFAULT_OPTIONS = Options()


class SourceError(Exception):
    """The file cannot be analysed; `line` is 1-based or 0 when unknown."""

    def __init__(self, reason: str, line: int = 0, col: int = 0) -> None:
        super().__init__(reason)
        self.reason = reason
        self.line = line
        self.col = col


class _Triggers:
    """The union of some rules' trigger patterns (and of import aliases' names). Each
    rule's regular expression runs only on text holding one of its `trigger_words`:
    `in` is far cheaper than a long alternation, and most code holds none of them."""

    def __init__(self, rules: Sequence[type], extra_names: Iterable[str] = ()) -> None:
        parts = [(tuple(words), re.compile(pattern)) for rule in rules
                 for words, pattern in (rule.trigger_parts or [(rule.trigger_words, rule.triggers)])]
        names = [rf"\b{re.escape(name)}\b" for name in extra_names]
        if names:
            parts.append(((), re.compile("|".join(names))))
        # `search` stops at the first part that matches: the cheap ones first. A pattern
        # that starts with a literal or a character class (`\.cuda`, `["']cuda`) is found
        # by a fast scan for it; one that starts with `\b` or a lookahead is tried at
        # every position, and costs most where no word guards it.
        self.parts = sorted(parts, key=lambda part: (part[1].pattern.startswith(("\\b", "(?=")), not part[0]))
        self.words = frozenset(word for words, _ in parts for word in words)

    def search(self, text: str) -> bool:
        return any((not words or any(word in text for word in words)) and pattern.search(text) is not None
                   for words, pattern in self.parts)

    def words_in(self, text: str) -> FrozenSet[str]:
        """The parts' words that `text` holds."""
        return frozenset(word for word in self.words if word in text)

    def within(self, found: AbstractSet[str]) -> "_Triggers":
        """These triggers for the pieces of a file (functions, lines) that holds only the
        words `found`: a part none of whose words it holds cannot match in a piece of
        it, and a word it lacks need not be looked for there."""
        narrowed = copy.copy(self)
        narrowed.parts = [(tuple(word for word in words if word in found), pattern) for words, pattern in self.parts
                          if not words or any(word in found for word in words)]
        return narrowed


_TRIGGERS_BY_CODES: dict = {}


def _triggers_for(codes: FrozenSet[str]) -> _Triggers:
    pattern = _TRIGGERS_BY_CODES.get(codes)
    if pattern is None:
        pattern = _Triggers([r for r in ALL_RULES if r.code in codes])
        _TRIGGERS_BY_CODES[codes] = pattern
    return pattern


def _import_aliases(tree: ast.Module, pattern: _Triggers) -> List[str]:
    """Local names that stand for a trigger: `from torch.nn import DataParallel as DP`."""
    aliases = []
    for node in tree.body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                if alias.asname and pattern.search(alias.name.rsplit(".", 1)[-1]):
                    aliases.append(alias.asname)
    return aliases


class _FunctionTriggers:
    """Does a function's text (and tree) hold something an enabled rule can report?"""

    def __init__(self, rules: Sequence[type], aliases: Sequence[str], found: AbstractSet[str],
                 makes_tensor: Optional[Callable[[str], bool]] = None, source: str = "") -> None:
        """`found`: the trigger words the file holds (`_Triggers.words_in`) in `source`, its
        text; `makes_tensor`: the project index's answer to "does this function return a tensor?"."""
        self.makes_tensor = makes_tensor
        # Rules that judge whole classes are triggered by a class, not by a function's text.
        self.class_rules = [rule for rule in rules if rule.keeps_class is not None]
        # what module-level data the analysis and the rules read although no trigger names it
        # (a rule's only where the file holds its trigger: timm's `default_cfgs` name PyTorch's
        # weights, which TDV301 reads for a load that most of those files lack)
        self.data_words = re.compile("|".join([_READ_BY_ANALYSIS] + [
            rule.module_data_words for rule in rules
            if rule.module_data_words and _Triggers([rule]).within(found).search(source)]))
        self.aliases = frozenset(aliases)
        # what a guard silences: a helper holding it may be silenced by its callers' guards
        guardable = [rule for rule in rules if rule.silenced_by_guards]
        self.guardable = _Triggers(guardable, aliases).within(found) if guardable else None
        # (a rule that keeps some classes whole may still judge functions by their text: TDV201)
        rules = [rule for rule in rules if rule.keeps_class is None or rule.call_trigger is not None
                 or rule.matches_function is not None]
        # Rules whose own test on a function's tree decides, once their words are in its text.
        self.tree_rules = [(_Triggers([rule]).within(found), rule.matches_function) for rule in rules
                           if rule.matches_function is not None]
        rules = [rule for rule in rules if rule.matches_function is None]
        text_rules = [rule for rule in rules if rule.call_trigger is None]
        call_rules = [rule for rule in rules if rule.call_trigger is not None]
        self.text = _Triggers(text_rules).within(found) if text_rules else None
        # an imported alias of a trigger (`DistributedDataParallel as DDP`) keeps a function for any rule
        self.alias_words = re.compile("|".join(rf"\b{re.escape(name)}\b" for name in aliases)) if aliases else None
        self.call_words = _Triggers(call_rules).within(found) if call_rules else None
        # callee name -> keywords that rule the call out
        self.calls: Dict[str, FrozenSet[Optional[str]]] = {}
        for rule in call_rules:
            exempt = rule.call_trigger.exempt_keywords
            self.calls.update((name, exempt) for name in rule.call_trigger.callees if name not in self.calls)

    def match(self, text: str, node: ast.AST) -> bool:
        if self.text is not None and self.text.search(text):
            return True
        if self.alias_words is not None and self.alias_words.search(text):
            return True
        if any(words.search(text) and test(node) for words, test in self.tree_rules):
            return True
        # the regex first: it is much cheaper than walking the tree
        return (self.call_words is not None and self.call_words.search(text)
                and self._has_call(node))

    def keeps_class(self, node: ast.ClassDef, text_of: Callable[[ast.AST], str]) -> bool:
        return any(rule.keeps_class(node, self.aliases, text_of, self.makes_tensor) for rule in self.class_rules)

    def _has_call(self, node: ast.AST) -> bool:
        for sub in walk_ast(node):
            if isinstance(sub, ast.Call):
                func = sub.func
                name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)
                exempt = self.calls.get(name)  # type: ignore[arg-type]
                if exempt is not None and not any(k.arg in exempt for k in sub.keywords):
                    return True
        return False


@dataclass(frozen=True)
class _Sparse:
    """What is left of a file to parse, and for each of its lines the file's line number."""

    text: str
    origin: Tuple[int, ...]  # origin[i] = 1-based line in the file of the text's line i + 1

    @classmethod
    def compact(cls, sparse: List[Optional[str]]) -> "_Sparse":
        kept = [(index + 1, line) for index, line in enumerate(sparse) if line is not None]
        return cls("".join(line for _, line in kept), tuple(number for number, _ in kept))

    def line_in_file(self, line: int) -> int:
        return self.origin[line - 1] if 0 < line <= len(self.origin) else line


def _stub_unmatched_functions(lines: List[str], tree: ast.Module, triggers: _FunctionTriggers,
                              pattern: _Triggers, test_file: bool = False,
                              guard_words: "re.Pattern[str]" = re.compile(r"(?!)")) -> Optional[_Sparse]:
    """The source with trigger-free functions stubbed out; None when nothing is left.

    A stub keeps the function's name bound (`def f(): pass` on its first line), so
    names resolve as in the full file. `__init__` is kept when a sibling method is:
    TDV201 reads it to learn which methods run at construction time.
    """
    sparse: List[Optional[str]] = list(lines)  # None: a line left out
    kept_any = False
    texts: Dict[int, str] = {}  # the class rules ask for a method's text several times

    def text_of(node: ast.AST) -> str:
        text = texts.get(id(node))
        if text is None:
            text = texts[id(node)] = "".join(lines[_first_line(node):node.end_lineno])  # type: ignore[attr-defined]
        return text

    whole = _whole_classes(tree, triggers, text_of)
    holding_whole = _functions_holding(tree, whole) if whole else set()
    # the callers of a helper that only guarded code may call: their guards decide. A caller
    # whose text (with its class's decorators) names no guard cannot guard its call: its stub
    # keeps the names it uses, an unguarded use in both parses
    helpers, helper_names = _guardable_helpers(tree, triggers, text_of, test_file)
    marks_the_module = helpers is not None and _MODULE_MARK_RE.search("".join(lines)) is not None

    def guards_a_helper(node: ast.AST, header: str) -> bool:
        return helpers is not None and (node.name in helper_names or (  # type: ignore[attr-defined]
            helpers.search(text_of(node)) is not None and (
                marks_the_module or guard_words.search(text_of(node)) is not None
                or guard_words.search(header) is not None)))

    def statement_text(statement: ast.stmt) -> str:
        return "".join(lines[statement.lineno - 1:statement.end_lineno])  # type: ignore[attr-defined]

    # the callers of a module function that returns what a trigger made (`noise = get_noise(n)`):
    # TDV201 judges the returned tensor where they use it
    returning = [node.name for node in tree.body if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
                 and triggers.match(text_of(node), node) and _returns_a_trigger(node, triggers, statement_text)]
    callers = re.compile(r"\b(?:" + "|".join(map(re.escape, returning)) + r")\(") if returning else None

    def stub(node: ast.AST, first: int, last: int, methods: AbstractSet[str] = frozenset()) -> None:
        head = lines[first]
        indent = head[: len(head) - len(head.lstrip())]
        # a method keeps the class's methods it uses (`self.reparameterize`): which methods
        # run only while the module is built, and which also later, reads the calls of all
        read = set(_SELF_ATTRIBUTE_RE.findall(text_of(node))) if methods else set()
        used = sorted(read & methods)
        # (`self.__dict__` where the method reads the object's state: TDV201 asks whether a
        # helper handed a CPU tensor computes with the object's tensors)
        refs = [f"self.{name}" for name in used] + (["self.__dict__"] if read - methods else [])
        if helpers is not None:
            refs += sorted(set(helpers.findall(text_of(node))))  # (see `guards_a_helper`)
        body = ", ".join(refs) if refs else "pass"
        sparse[first] = f"{indent}def {node.name}({'self' if refs else ''}): {body}{_line_ending(head)}"
        for index in range(first + 1, last):
            sparse[index] = None

    def visit(body: Sequence[ast.stmt], in_class: bool = False, module_class: bool = False, header: str = "") -> None:
        nonlocal kept_any
        kept: List[ast.AST] = []
        left: List[ast.AST] = []
        for node in body:
            if isinstance(node, ast.ClassDef):
                if id(node) in whole:
                    kept_any = True  # a rule judges this class whole: nothing in it is stubbed
                else:
                    visit(node.body, in_class=True, module_class=_surely_a_module(node),
                          header="".join(lines[_first_line(node):node.lineno]))
                continue
            if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            if triggers.match(text_of(node), node) or id(node) in holding_whole \
                    or guards_a_helper(node, header) \
                    or (callers is not None and callers.search(text_of(node))):
                kept.append(node)
            else:
                left.append(node)
        if in_class and kept and left:
            # a method that uses what a kept one returns (`masks = self._prepare(x)`): TDV201
            # judges the returned tensor there
            returning = [n.name for n in kept if _returns_a_trigger(n, triggers, statement_text)]
            if returning:
                calls = re.compile(r"\bself\.(?:" + "|".join(map(re.escape, returning)) + r")\(")
                kept.extend(n for n in left if calls.search(text_of(n)))
                left = [n for n in left if n not in kept]
            # a method that sets what a kept one calls and set to None (`self.embeddings =
            # None` in `__init__`, then `init_embeddings` assigning the `self.embeddings(ids)` of
            # forward): whether the placeholder becomes a sub-module decides
            placeholders = {name for n in kept + [n for n in left if n.name == "__init__"]
                            for name in _SELF_NONE_RE.findall(text_of(n))}
            called = {name for n in kept for name in _SELF_CALL_RE.findall(text_of(n))} & placeholders \
                if placeholders else set()
            if called and left:
                sets = re.compile(r"\bself\.(?:" + "|".join(map(re.escape, sorted(called))) + r")\s*=[^=]")
                kept.extend(n for n in left if sets.search(text_of(n)))
                left = [n for n in left if n not in kept]
            # a trainer's method that reads what its `__init__` made (`self.mask = torch.ones(n)`):
            # TDV201 follows that tensor there (not in a module: there it is TDV202's)
            init = next((n for n in kept if n.name == "__init__"), None)
            stored = _self_attributes_set_by_a_trigger(init, triggers, statement_text) \
                if init is not None and not module_class else set()
            if stored:
                reads = re.compile(r"\bself\.(?:" + "|".join(map(re.escape, sorted(stored))) + r")\b")
                kept.extend(n for n in left if reads.search(text_of(n)))
                left = [n for n in left if n not in kept]
        kept_any = kept_any or bool(kept)
        methods = {node.name for node in body if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))} \
            if in_class and kept else set()
        for node in left:
            if node.name != "__init__" or not kept:
                stub(node, _first_line(node), node.end_lineno or node.lineno, methods)

    try:
        visit(tree.body)
    finally:
        # (`visit` calls itself: a cycle through its closure that would keep everything here,
        # the project index and the file's tree with it, alive until a cyclic collection)
        visit = None  # type: ignore[assignment]
    if not kept_any:
        # Only module-level code (and class bodies) can still match.
        outside = "".join(line for line, new in zip(lines, sparse) if line is new)
        if not pattern.search(outside):
            return None
    _stub_module_data(lines, sparse, tree, pattern, triggers.data_words, helpers)
    return _Sparse.compact(sparse)


def _guardable_helpers(tree: ast.Module, triggers: _FunctionTriggers, text_of: Callable[[ast.AST], str],
                       test_file: bool) -> Tuple[Optional["re.Pattern[str]"], Set[str]]:
    """The names of the module's helpers (`analysis/helpers.py`) that hold what a guard
    silences, or call such a helper: as one pattern (None when there are none), and as a set."""
    if triggers.guardable is None:
        return None, set()
    definitions = [node for top in tree.body for node in (top, *(top.body if isinstance(top, ast.ClassDef) else ()))
                   if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and is_candidate(node.name, test_file)]
    # (kept for a rule's trigger: a function the fast path stubs holds no finding to silence)
    names = {node.name for node in definitions
             if triggers.guardable.search(text_of(node)) and triggers.match(text_of(node), node)}
    while names:
        calls = re.compile(r"\b(?:" + "|".join(map(re.escape, sorted(names))) + r")\b")
        more = {node.name for node in definitions if node.name not in names and calls.search(text_of(node))}
        if not more:
            return calls, names
        names |= more
    return None, set()


# What any CUDA guard's text holds (`analysis/guards.py`): a test of CUDA or of a device, a flag
# named for CUDA or a GPU, a skip decorator; and module-wide marks that reach into every function.
_GUARD_WORDS = r"cuda|gpu|device|accel|skip|cpu"
_MODULE_MARK_RE = re.compile(r"pytestmark|allow_module_level|SkipTest")
_GUARD_WORDS_BY_NAMES: Dict[Tuple[str, ...], "re.Pattern[str]"] = {}


def _guard_words(guard_names: Tuple[str, ...]) -> "re.Pattern[str]":
    """`_GUARD_WORDS` and the user's own guard names (`--torchdevice-guard-names`)."""
    pattern = _GUARD_WORDS_BY_NAMES.get(guard_names)
    if pattern is None:
        pattern = _GUARD_WORDS_BY_NAMES[guard_names] = re.compile(
            "|".join([_GUARD_WORDS, *map(re.escape, guard_names)]), re.I)
    return pattern


def _tensor_makers(tree: ast.Module, project: ProjectIndex) -> Callable[[str], bool]:
    """The project index's `makes_tensor`, asked only of names the file's top level defines
    or imports (not `norm_layer(dim)` of a parameter): asking reads files' summaries."""
    names = {node.name for node in tree.body if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))}
    for node in tree.body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((alias.asname or alias.name).split(".")[0] for alias in node.names)
    return lambda dotted: dotted.split(".", 1)[0] in names and project.makes_tensor(dotted)


def _returns_a_trigger(function: ast.AST, triggers: _FunctionTriggers, text_of: Callable[[ast.stmt], str]) -> bool:
    """Does `function` return what a trigger made: `return torch.zeros(n)`, or a name bound
    by a statement with a trigger (`mask = torch.zeros(n)` ... `return x, mask`)?"""
    made: set = set()
    returns = []
    assigns = []
    for node in walk_ast(function):
        if isinstance(node, ast.Assign):
            targets = {t.id for target in node.targets for t in walk_ast(target) if isinstance(t, ast.Name)}
            if triggers.match(text_of(node), node):
                made.update(targets)
            else:
                assigns.append((node.value, targets))
        elif isinstance(node, ast.Return) and node.value is not None:
            returns.append(node)
    # ... and what is computed from such a name (`grid = F.affine_grid(theta, size)`, then `return grid`)
    if made and assigns:
        reads = [({n.id for n in walk_ast(value) if isinstance(n, ast.Name)}, targets) for value, targets in assigns]
        grown = True
        while grown:
            grown = False
            for names, targets in reads:
                if not targets <= made and not names.isdisjoint(made):
                    made |= targets
                    grown = True
    return any(triggers.match(text_of(node), node)
               or any(isinstance(n, ast.Name) and n.id in made for n in walk_ast(node.value)) for node in returns)


def _self_attributes_set_by_a_trigger(function: ast.AST, triggers: _FunctionTriggers,
                                      text_of: Callable[[ast.stmt], str]) -> Set[str]:
    """The `<name>` of `self.<name> = ...` statements of `function` that hold a trigger."""
    return {target.attr for node in walk_ast(function) if isinstance(node, ast.Assign)
            for target in node.targets if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name)
            and target.value.id == "self" and triggers.match(text_of(node), node)}


_SELF_ATTRIBUTE_RE = re.compile(r"\bself\.(\w+)")
_SELF_CALL_RE = re.compile(r"\bself\.(\w+)\(")
_SELF_NONE_RE = re.compile(r"\bself\.(\w+)\s*=\s*None\b")
# Bases that make a class an `nn.Module` for certain, however the file imported them.
_MODULE_BASES = frozenset({"Module", "nn.Module", "torch.nn.Module", "LightningModule", "pl.LightningModule"})


def _surely_a_module(node: ast.ClassDef) -> bool:
    return any(ast_dotted_name(base) in _MODULE_BASES for base in node.bases)


def _first_line(node: ast.AST) -> int:
    """0-based index of a definition's first line (its first decorator's)."""
    return (node.decorator_list[0].lineno if node.decorator_list else node.lineno) - 1  # type: ignore[attr-defined]


def _functions_holding(tree: ast.Module, classes: set) -> set:
    """ids of the functions that contain one of `classes`."""
    found: set = set()
    for function in ast_definitions(tree):
        if isinstance(function, ast.ClassDef) or id(function) in found:
            continue
        if any(id(node) in classes for node in ast_definitions(function) if isinstance(node, ast.ClassDef)):
            found.add(id(function))
    return found


def _whole_classes(tree: ast.Module, triggers: _FunctionTriggers, text_of: Callable[[ast.AST], str]) -> set:
    """ids of the classes that must be kept whole: those a class rule asks for, and
    their base classes defined in the file (what they register counts too)."""
    if not triggers.class_rules:
        return set()
    classes = [node for node in ast_definitions(tree) if isinstance(node, ast.ClassDef)]
    by_name = {node.name: node for node in classes}
    todo = [node for node in classes if triggers.keeps_class(node, text_of)]
    whole = set()
    while todo:
        node = todo.pop()
        if id(node) in whole:
            continue
        whole.add(id(node))
        todo.extend(by_name[base.id] for base in node.bases if isinstance(base, ast.Name) and base.id in by_name)
    return whole


# Words the shared analysis reads outside any trigger in plain statements: moves
# (`m.to(d)`) and device values (`d = x.device`). Rules add theirs (`module_data_words`).
_READ_BY_ANALYSIS = r"\.to\b|device"
_DATA_MIN_LINES = 10


def _stub_module_data(lines: List[str], sparse: List[Optional[str]], tree: ast.Module,
                      pattern: _Triggers, read_outside_triggers: "re.Pattern[str]",
                      helpers: Optional["re.Pattern[str]"] = None) -> None:
    """Replace big module-level data (`default_cfgs = {...}`, 1000+ lines in timm's
    model files, most of their parse time and memory) with `name = None`.

    Only a single-name assignment whose text no rule can read, not a constructor call,
    and using no name assigned at module level (which could hold a tensor)."""
    assigned = {target.id for node in tree.body if isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign,
                                                                  ast.For, ast.With))
                for target in walk_ast(node) if isinstance(target, ast.Name) and isinstance(target.ctx, ast.Store)}
    previous_end = 0
    for index, node in enumerate(tree.body):
        first, last = node.lineno - 1, node.end_lineno or node.lineno
        next_start = tree.body[index + 1].lineno if index + 1 < len(tree.body) else len(lines) + 1
        alone = node.col_offset == 0 and previous_end < node.lineno and next_start > last  # no `a; b`
        previous_end = last
        if not (alone and last - first >= _DATA_MIN_LINES and isinstance(node, ast.Assign)
                and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
                and node.targets[0].id != "pytestmark"):
            continue
        value = node.value
        if isinstance(value, ast.Call) and _callee_name(value)[:1].isupper():
            continue  # `model = Net(...)`: TDV401 tracks modules built at module level
        text = "".join(lines[first:last])
        if pattern.search(text) or read_outside_triggers.search(text) or (helpers is not None and helpers.search(text)):
            continue
        if any(isinstance(sub, ast.Name) and sub.id in assigned for sub in walk_ast(value)):
            continue
        sparse[first] = f"{node.targets[0].id} = None{_line_ending(lines[first])}"
        for line in range(first + 1, last):
            sparse[line] = None


def _callee_name(call: ast.Call) -> str:
    func = call.func
    return func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")


def _line_ending(line: str) -> str:
    return line[len(line.rstrip("\r\n")):]


def parse_python(source: str, filename: str = "<unknown>") -> ast.Module:
    """CPython's parse, with its failures as SourceError (E999 positions as flake8 gives them)."""
    try:
        return ast.parse(source, filename)
    except SyntaxError as error:
        # IndentationError and TabError keep their names, as in flake8's E999
        raise SourceError(f"{type(error).__name__}: {error.msg}", error.lineno or 0, error.offset or 0) from None
    except (ValueError, RecursionError, MemoryError) as error:
        raise SourceError(f"cannot parse: {type(error).__name__}: {error}") from None


def lint_source(
    source: str,
    filename: str = "<unknown>",
    options: Options = DEFAULT_OPTIONS,
    tree: Optional[ast.Module] = None,
    fast: bool = True,
) -> List[Finding]:
    """All findings for one file's text, sorted by position.

    Raises SourceError when the text is not valid Python or libcst cannot parse it.
    """
    rules = [rule for rule in ALL_RULES if rule.code in options.enabled]
    if any(rule.needs_a_device_in_tests for rule in rules) and is_host_only_test(filename, source):
        rules = [rule for rule in rules if not rule.needs_a_device_in_tests]
    if not rules:
        return []
    if "\r" in source:
        # Python reads \r\n and a lone \r as \n (as flake8 does); libcst fails on a
        # mix of line endings. Line and column numbers stay the same.
        source = source.replace("\r\n", "\n").replace("\r", "\n")
    pattern = _triggers_for(frozenset(rule.code for rule in rules))
    if fast:
        # the trigger words the file holds: its functions and lines hold no others
        found = pattern.words_in(source)
        if not pattern.within(found).search(source):
            return []
    # libcst makes hundreds of thousands of objects per file, `ast` tens of thousands,
    # and each few hundred trigger a pass of Python's cyclic garbage collector over the
    # young ones, the oldest now and then over all of flake8's: a fifth of our time.
    # Trees hold no cycle and `analyse_module` breaks the analyzer's, so plain reference
    # counting frees nearly everything; the collector resumes afterwards.
    with without_cyclic_gc():
        return _lint_parsed(source, filename, options, rules, pattern, found if fast else None, tree)


def _lint_parsed(source: str, filename: str, options: Options, rules: Sequence[type], pattern: _Triggers,
                 found: Optional[FrozenSet[str]], tree: Optional[ast.Module]) -> List[Finding]:
    """`lint_source` past the file's trigger test; `found`: its trigger words, None for a full parse."""
    if tree is None:
        tree = parse_python(source, filename)
    sparse: Optional[_Sparse] = None
    project = index_for(filename, tree=tree)
    if found is not None:
        aliases = _import_aliases(tree, pattern)
        if aliases:
            pattern = _Triggers(rules, aliases)
        pattern = pattern.within(found)
        triggers = _FunctionTriggers(rules, aliases, found, _tensor_makers(tree, project), source)
        sparse = _stub_unmatched_functions(io.StringIO(source, newline="").readlines(), tree, triggers, pattern,
                                           is_test_file(filename), _guard_words(options.guard_names))
        if sparse is None:
            return []
    text = source if sparse is None else sparse.text
    if len(text) > MAX_ANALYSED:
        # libcst needs ~1 GB of memory per MB of code; PyTorch's largest file keeps 1 MB.
        raise SourceError(f"too large to analyse: {len(text) / 1e6:.1f} MB of code could hold "
                          f"findings, the limit is {MAX_ANALYSED / 1e6:.0f} MB")
    _check_chains(text, tree)
    return _analyse(text, rules, options, sparse.line_in_file if sparse is not None else lambda line: line,
                    filename, project, _statement_starts(tree, sparse))


@contextmanager
def without_cyclic_gc() -> Iterator[None]:
    """Python's cyclic garbage collector off for a while (as it was, afterwards)."""
    collecting = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if collecting:
            gc.enable()


def _statement_starts(tree: ast.Module, sparse: Optional[_Sparse]) -> List[int]:
    """0-based lines of the analysed text where a module-level statement starts on a
    line of its own (after its decorators' first line, never inside another statement)."""
    in_text = ({line: index for index, line in enumerate(sparse.origin)} if sparse is not None else None)
    starts: List[int] = []
    previous_end = 0
    for node in tree.body:
        first = _first_line(node) if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) \
            else node.lineno - 1
        if first >= previous_end:  # not `a = 1; b = 2` nor after a multi-line string on its line
            index = first if in_text is None else in_text.get(first + 1)
            if index is not None and (not starts or index > starts[-1]):
                starts.append(index)
        previous_end = max(previous_end, node.end_lineno or node.lineno)
    return starts


# libcst's native parser nests `a and b and ...` and dotted import names one level
# per item, where CPython keeps them flat, and a few thousand levels overflow its C
# stack: the process dies. Far shorter chains already fail the analysis (too deep
# for the visitor), so skipping long ones before parsing loses nothing.
MAX_CHAIN = 500
MAX_ANALYSED = 2_000_000  # characters handed to libcst
_PART_CHARS = 8_000  # characters of module-level statements parsed at once (`_parse_in_parts`)


def _check_chains(text: str, tree: ast.Module) -> None:
    if text.count("and") + text.count("or") + text.count(".") < MAX_CHAIN:
        return  # cheap: no chain can be that long
    for node in walk_ast(tree):
        if isinstance(node, ast.BoolOp):
            size = len(node.values)
        elif isinstance(node, ast.Import):
            size = max(alias.name.count(".") + 1 for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            size = (node.module or "").count(".") + 1
        else:
            continue
        if size >= MAX_CHAIN:
            raise SourceError(f"line {node.lineno}: a chain of {size} operands or names is too long to analyse",
                              node.lineno, node.col_offset)


def _analyse(text: str, rules: Sequence[type], options: Options, line_in_file: Callable[[int], int],
             filename: str, project: ProjectIndex, starts: Sequence[int]) -> List[Finding]:
    import libcst as cst
    from libcst.metadata import MetadataWrapper, PositionProvider

    indents: Dict[int, Tuple[int, int]] = {}  # line -> widths of its indentation, as written and as parsed
    try:
        parts = _parse_in_parts(text, starts, line_in_file)
    except SourceError:
        # Python reads a tab in an indentation as up to 8 columns and takes a block that
        # mixes tabs and spaces (old research code); libcst's tokenizer does not: parse the
        # text with its indentations spelled in spaces, and give the columns back as written
        text, indents = _indentation_in_spaces(text)
        if not indents:
            raise
        parts = _parse_in_parts(text, starts, line_in_file)
    module = parts[0][1] if len(parts) == 1 else cst.Module(body=[s for _, part in parts for s in part.body])
    raw = analyse_module(module, rules, options, project, filename)
    if not raw:
        return []
    located: Dict[int, Tuple[int, int, int, int]] = {}  # id(node) -> lines and columns in the text
    wanted = {id(node) for node, *_ in raw}
    for offset, part in parts:
        try:
            positions = MetadataWrapper(part, unsafe_skip_copy=True).resolve(PositionProvider)
        except RecursionError:
            raise SourceError("code nested too deeply to analyse") from None
        for node, where in positions.items():
            if id(node) in wanted:
                located[id(node)] = (where.start.line + offset, where.start.column,
                                     where.end.line + offset, where.end.column)
    def as_written(line: int, col: int) -> int:
        written, parsed = indents.get(line, (0, 0))
        return col - parsed + written if col >= parsed else min(col, written)

    findings: Dict[Tuple[int, int, str, str], Finding] = {}
    for node, code, message, fix in raw:
        start_line, start_col, end_line, end_col = located[id(node)]
        key = (line_in_file(start_line), as_written(start_line, start_col), code, message)
        # (`fix` rewrites the file as written: it leaves a file libcst cannot read alone)
        fixable = not indents and (is_applicable(fix, options) or (key in findings and findings[key].fixable))
        findings[key] = Finding(*key, fixable=fixable, end_line=line_in_file(end_line),
                                end_col=as_written(end_line, end_col))
    return sorted(findings.values())


def _indentation_in_spaces(text: str) -> Tuple[str, Dict[int, Tuple[int, int]]]:
    """`text` with each indentation that holds a tab written in spaces (a tab to the next
    multiple of 8, as Python reads it), and, per changed line (1-based), the widths of its
    indentation before and after. Lines inside strings are indented too, so their text
    changes; no rule reads the text of a string's indentation."""
    lines = io.StringIO(text, newline="").readlines()
    indents: Dict[int, Tuple[int, int]] = {}
    for number, line in enumerate(lines, 1):
        body = line.lstrip(" \t\f")
        indent = line[:len(line) - len(body)]
        if "\t" in indent:
            spaces = indent.expandtabs(8)
            lines[number - 1] = spaces + body
            indents[number] = (len(indent), len(spaces))
    return "".join(lines), indents


def _parse_in_parts(text: str, starts: Sequence[int],
                    line_in_file: Callable[[int], int]) -> List[Tuple[int, "cst.Module"]]:
    """The text parsed a few module-level statements at a time (about `_PART_CHARS`
    characters), each part with the number of lines before it. libcst's native parser
    holds about 300 bytes per character of its input until it returns, five times what
    the tree it returns keeps: parsed whole, a 1 MB file peaked at 375 MB and took 2.8 s;
    in parts, 110 MB and 1.9 s (timm's vision_transformer.py, four times over)."""
    lines = io.StringIO(text, newline="").readlines()
    bounds = [0]
    size = 0
    for previous, start in zip(starts, starts[1:]):
        size += sum(len(line) for line in lines[previous:start])
        if size >= _PART_CHARS:
            bounds.append(start)
            size = 0
    bounds.append(len(lines))
    parts = []
    for first, end in zip(bounds, bounds[1:]):
        try:
            parts.append((first, parse_cst("".join(lines[first:end]))))
        except SourceError as error:
            raise SourceError(error.reason, line_in_file(error.line + first), error.col) from None
    return parts


def is_applicable(fix: object, options: Options) -> bool:
    """Would `fix` with these options apply this fix (one needing an added device only with --add-device)?"""
    return fix is not None and (options.add_device or not getattr(fix, "adds_device", False))


def parse_cst(text: str) -> "cst.Module":
    import libcst as cst  # imported lazily: most files never get here

    try:
        return cst.parse_module(text)
    except cst.ParserSyntaxError as error:
        raise SourceError(f"libcst cannot parse this file: {error.message}", error.raw_line, error.raw_column) from None
    except (RecursionError, MemoryError) as error:
        raise SourceError(f"libcst cannot parse this file: {type(error).__name__}") from None


def analyse_module(module: "cst.Module", rules: Sequence[type], options: Options,
                   project: Optional[ProjectIndex] = None, filename: Optional[str] = None) -> list:
    """The rules' raw findings `(node, code, message, fix)` for a parsed module: one traversal.
    `project` knows what the file's functions return and what its project's other files
    define (`index_for(filename, ...)`); without it the rules know less, never report more.
    `filename` (as given, on disk or not) can say the module is CUDA-only (`accelerators/cuda.py`)."""
    from .analysis import Analyzer

    raw: list = []
    analyzer = Analyzer(lambda a: [rule(a, raw, options) for rule in rules], options.guard_names, project, filename)
    try:
        analyzer.walk(module)
    except RecursionError:
        raise SourceError("code nested too deeply to analyse") from None
    finally:
        analyzer.release()
    return raw
