"""Host dumps: the files a script writes host data to with `torch.save`.

A checkpoint only fails to load on a CPU-only machine when it holds tensors saved on a
GPU. Preprocessing scripts often write CPU tensors made from NumPy arrays
(`torch.save(torch.from_numpy(csr.indptr), f"{root}/csr/indptr.pt")`) that the same
script, or a training script next to it in the same folder, loads later: those loads
work on any machine. `host_dumps` reads one file's `ast` and names the files (by their
file name, `indptr.pt`) that it saves host data to; `dumps_host_data` asks that of the
file being linted and of the Python files in its folder.

Host data, followed through the names of one function (or the module body): literals,
NumPy values, `torch.from_numpy(...)`, a factory without `device=` (`torch.rand(n)`),
`x.cpu()`, `x.numpy()`, what torch computes from host data only (`torch.sort(deg)`,
`torch.zeros_like(indptr)`, `feat[order]`, `a - b`), containers of host data, and a load
of a file the script dumped from the host or loaded with `map_location="cpu"`. Anything
else (a model's `state_dict()`, a parameter, what a project function returns) is not
known to be on the host, and its file is not a host dump. Only the last binding of a
name before its use is read: when unsure, the load stays reported.
"""

from __future__ import annotations

import ast
import os
import re
from typing import Callable, Dict, FrozenSet, List, Optional, Set, Tuple

from .project import (MAX_FILE_BYTES, FACTORIES, FILE_CACHES, FileSummary, ProjectIndex, bind_imports, mentions,
                      read_text)
from .syntax import ast_dotted_name

# The file name a path ends with: `os.path.join(d, "feats.pth")`, `f"{d}/feats.pth"` -> `feats.pth`.
FILE_NAME_RE = re.compile(r"(?:^|/)([\w\-]+\.\w+)$")

# torch's constructors of CPU tensors from sizes or host data (without `device=`)
_HOST_MAKERS = frozenset(FACTORIES) | {"from_numpy", "Tensor", "FloatTensor", "DoubleTensor", "LongTensor",
                                       "IntTensor", "BoolTensor", "ByteTensor", "HalfTensor"}
# methods whose result is on the host, whatever they are called on
_TO_HOST = frozenset({"cpu", "numpy", "tolist", "item"})
# methods that may move their receiver off the host, or read a module's state
_OFF_HOST = frozenset({"cuda", "to", "type", "type_as", "state_dict", "parameters", "buffers", "pin_memory"})
_MAX_DEPTH = 24
# methods that put values into a container
_FILLERS = frozenset({"append", "extend", "insert", "update", "add", "setdefault"})

_Bound = Callable[[str, int], Optional[ast.AST]]


def _bindings(scope: ast.AST) -> Dict[str, List[Tuple[int, Optional[ast.AST]]]]:
    """name -> [(line where the binding ends, value or None when unknown)] of one function
    or module body, in order, not counting nested functions and classes."""
    found: Dict[str, List[Tuple[int, Optional[ast.AST]]]] = {}

    def bind(target: ast.AST, value: Optional[ast.AST], line: int) -> None:
        if isinstance(target, ast.Name):
            found.setdefault(target.id, []).append((line, value))
        elif isinstance(target, (ast.Tuple, ast.List)):
            paired = isinstance(value, (ast.Tuple, ast.List)) and len(value.elts) == len(target.elts)
            for index, element in enumerate(target.elts):
                # `a, b = torch.sort(x)`: each part is what the call made
                bind(element, value.elts[index] if paired else value, line)  # type: ignore[union-attr]
        elif isinstance(target, ast.Starred):
            bind(target.value, None, line)

    if isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef)):
        arguments = scope.args
        for argument in arguments.posonlyargs + arguments.args + arguments.kwonlyargs \
                + [a for a in (arguments.vararg, arguments.kwarg) if a is not None]:
            found.setdefault(argument.arg, []).append((0, None))
    stack = list(getattr(scope, "body", ()))
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            found.setdefault(node.name, []).append((node.lineno, None))
            continue
        line = getattr(node, "end_lineno", None) or getattr(node, "lineno", 0)
        if isinstance(node, ast.Assign):
            for target in node.targets:
                bind(target, node.value, line)
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            bind(node.target, node.value, line)
        elif isinstance(node, ast.AugAssign):
            bind(node.target, _joined(node.target, node.value), line)
        if isinstance(node, ast.Assign):
            for target in node.targets:  # `parts[i] = v`: the container now also holds `v`
                if isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name):
                    bind(target.value, _joined(target.value, node.value), line)
        elif isinstance(node, ast.Expr) and isinstance(node.value, ast.Call) \
                and isinstance(node.value.func, ast.Attribute) and isinstance(node.value.func.value, ast.Name) \
                and node.value.func.attr in _FILLERS:  # `parts.append(v)`
            bind(node.value.func.value, _joined(node.value.func.value, ast.Tuple(elts=list(node.value.args))), line)
        elif isinstance(node, (ast.For, ast.AsyncFor)):
            bind(node.target, None, node.lineno)
        elif isinstance(node, (ast.With, ast.AsyncWith)):
            for item in node.items:
                if item.optional_vars is not None:
                    bind(item.optional_vars, None, node.lineno)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                found.setdefault((alias.asname or alias.name).split(".")[0], []).append((node.lineno, None))
        for block in ("body", "orelse", "finalbody", "handlers", "cases"):
            stack.extend(getattr(node, block, ()))
    for bindings in found.values():
        bindings.sort(key=lambda binding: binding[0])
    return found


def _joined(name: ast.AST, value: ast.AST) -> ast.AST:
    """What a name holds once `value` was added into it (`x += v`, `x[i] = v`, `x.append(v)`):
    host data when both were."""
    previous = ast.Name(id=getattr(name, "id", ""), ctx=ast.Load(), lineno=getattr(name, "lineno", 0), col_offset=0)
    return ast.BinOp(left=previous, op=ast.Add(), right=value)


def _last_before(bindings: Dict[str, List[Tuple[int, Optional[ast.AST]]]], name: str,
                 line: int) -> Tuple[bool, Optional[ast.AST]]:
    """(bound here at all, the value of the last binding that ends before `line`)."""
    entries = bindings.get(name)
    if not entries:
        return False, None
    earlier = [value for end, value in entries if end < line]
    return True, (earlier[-1] if earlier else None)


def file_name_of(path: ast.AST, bound: _Bound) -> Optional[str]:
    """The file name a path expression ends with (`osp.join(d, "csr", "indptr.pt")`,
    `f"{root}/csr/indptr.pt"`, `d + "/indptr.pt"`, or a name bound to one)."""
    for _ in range(_MAX_DEPTH):
        if isinstance(path, ast.Name):
            value = bound(path.id, path.lineno)
            if value is None:
                return None
            path = value
            continue
        if isinstance(path, ast.Call) and path.args:
            path = path.args[-1]  # os.path.join(...)
        elif isinstance(path, ast.BinOp):
            path = path.right
        elif isinstance(path, ast.JoinedStr) and path.values:
            path = path.values[-1]
        if isinstance(path, ast.Constant) and isinstance(path.value, str):
            match = FILE_NAME_RE.search(path.value)
            return match.group(1) if match else None
        if not isinstance(path, ast.Name):
            return None
    return None


class _HostData:
    """Is an expression of one scope host data? (see the module's docstring)"""

    def __init__(self, qualify: Callable[[str], str], bound: _Bound, dumps: Set[str]) -> None:
        self.qualify = qualify
        self.bound = bound
        self.dumps = dumps
        self.names: Dict[Tuple[str, int], bool] = {}  # (name, line read) -> decided

    def __call__(self, node: Optional[ast.AST], depth: int = 0) -> bool:
        if node is None or depth > _MAX_DEPTH:
            return False
        deeper = depth + 1
        if isinstance(node, ast.Constant):
            return True
        if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
            return bool(node.elts) and all(self(element, deeper) for element in node.elts)
        if isinstance(node, ast.Dict):
            return bool(node.values) and None not in node.keys and all(self(v, deeper) for v in node.values)
        if isinstance(node, ast.Name):
            key = (node.id, node.lineno)
            if key not in self.names:
                self.names[key] = False  # (while it is being decided: a cycle is not host data)
                self.names[key] = self(self.bound(node.id, node.lineno), deeper)
            return self.names[key]
        if isinstance(node, (ast.Subscript, ast.Attribute, ast.Starred)):
            return self(node.value, deeper)  # `feat[order]`, `x.T`, `x.data`
        if isinstance(node, ast.UnaryOp):
            return self(node.operand, deeper)
        if isinstance(node, ast.BinOp):
            return self(node.left, deeper) and self(node.right, deeper)
        if isinstance(node, ast.IfExp):
            return self(node.body, deeper) and self(node.orelse, deeper)
        if isinstance(node, ast.Call):
            return self._call(node, deeper)
        return False

    def _call(self, call: ast.Call, depth: int) -> bool:
        qualified = self.qualify(ast_dotted_name(call.func) or "")
        if qualified.split(".", 1)[0] in ("numpy", "np"):
            return True
        if qualified.startswith("torch."):
            name = qualified[len("torch."):]
            if name.startswith("cuda") or any(k.arg in ("device", None) for k in call.keywords):
                return False  # `torch.cuda.*`, `device=`, `**kwargs`
            if name == "load":
                location = next((k.value for k in call.keywords if k.arg == "map_location"),
                                call.args[1] if len(call.args) > 1 else None)
                if isinstance(location, ast.Constant) and location.value == "cpu":
                    return True
                loaded = file_name_of(call.args[0], self.bound) if call.args and location is None else None
                return loaded is not None and loaded in self.dumps
            if name in _HOST_MAKERS:
                return True
            # what torch computes from host data only (`torch.sort(deg)`, `torch.cat([a, b])`)
            return all(self(argument, depth) for argument in call.args)
        if isinstance(call.func, ast.Attribute):
            method = call.func.attr
            if method in _TO_HOST:
                return True
            if method in ("to", "type") and _casts_only(call):
                return self(call.func.value, depth)  # `.type(torch.long)`, `.to(dtype=torch.float)`
            if method in _OFF_HOST:
                return False
            return self(call.func.value, depth)  # `.float()`, `.share_memory_()`, `.squeeze()`
        if isinstance(call.func, ast.Name) and call.func.id in ("int", "float", "str", "len", "bool"):
            return True
        if isinstance(call.func, ast.Name) and call.func.id in ("dict", "list", "tuple"):
            return all(self(argument, depth) for argument in call.args) \
                and all(self(k.value, depth) for k in call.keywords)
        return False  # a function of the project or a library: unknown


def _casts_only(call: ast.Call) -> bool:
    """`x.to(torch.long)`, `x.type(torch.float)`, `x.to(dtype=torch.half)`: a new dtype, not a
    device (`torch.cuda.FloatTensor` and `"cuda"` are devices; `"cpu"` keeps the host)."""
    values = list(call.args) + [k.value for k in call.keywords if k.arg in ("dtype", "device", "non_blocking")]
    if not values or any(k.arg not in ("dtype", "device", "non_blocking", "copy") for k in call.keywords):
        return False
    for value in values:
        text = ast_dotted_name(value) or (value.value if isinstance(value, ast.Constant) else None)
        if not isinstance(text, (str, bool)) or (isinstance(text, str) and "cuda" in text):
            return False
        if isinstance(text, str) and not (text.startswith("torch.") or text == "cpu"):
            return False
    return True


def _is_torch_save(call: ast.Call, qualify: Callable[[str], str]) -> bool:
    return qualify(ast_dotted_name(call.func) or "") in ("torch.save", "torch.serialization.save") \
        and len(call.args) >= 2


def host_dumps(tree: ast.Module, qualify: Callable[[str], str]) -> FrozenSet[str]:
    """The file names `tree` saves host data to (see the module's docstring)."""
    scopes: List[ast.AST] = [tree] + [node for node in ast.walk(tree)
                                      if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))]
    saves: List[Tuple[ast.Call, _Bound]] = []
    module_bindings = _bindings(tree)

    def bound_in(bindings: Dict[str, List[Tuple[int, Optional[ast.AST]]]], at_module: bool) -> _Bound:
        def bound(name: str, line: int) -> Optional[ast.AST]:
            known, value = _last_before(bindings, name, line)
            if known or at_module:
                return value
            # a name the function never binds: the module's (it ran before any call)
            return _last_before(module_bindings, name, 1 << 30)[1]
        return bound

    for scope in scopes:
        calls = [node for node in _own_expressions(scope)
                 if isinstance(node, ast.Call) and _is_torch_save(node, qualify)]
        if calls:
            bound = bound_in(module_bindings if scope is tree else _bindings(scope), scope is tree)
            saves.extend((call, bound) for call in calls)
    dumps: Set[str] = set()
    named = [(call, bound, file_name_of(call.args[1], bound)) for call, bound in saves]
    for _ in range(3):  # a dump of what the script loaded from its own host dump
        before = len(dumps)
        for call, bound, name in named:
            if name is not None and name not in dumps and _HostData(qualify, bound, dumps)(call.args[0]):
                dumps.add(name)
        if len(dumps) == before:
            break
    # (a file some save fills with what is not known to be host data is no host dump:
    # `torch.save(None, path)` on one path, `torch.save(sched.state_dict(), path)` on the other)
    return frozenset(dumps - {name for call, bound, name in named
                              if not _HostData(qualify, bound, dumps)(call.args[0])})


def _own_expressions(scope: ast.AST):
    """Every node of a function or module body, not those of functions and classes in it."""
    stack = list(ast.iter_child_nodes(scope))
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        yield node
        stack.extend(ast.iter_child_nodes(node))


_cache: Dict[str, Tuple[Tuple[int, int], FrozenSet[str]]] = {}
FILE_CACHES.append(_cache)


def _host_dumps_of(path: str) -> FrozenSet[str]:
    """`host_dumps` of a file, cached by its size and modification time."""
    try:
        stat = os.stat(path)
    except OSError:
        return frozenset()
    key = (stat.st_size, stat.st_mtime_ns)
    cached = _cache.get(path)
    if cached is not None and cached[0] == key:
        return cached[1]
    found: FrozenSet[str] = frozenset()
    text = read_text(path) if stat.st_size <= MAX_FILE_BYTES else None
    if text and "save" in text:
        try:
            tree = ast.parse(text)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            tree = None
        if tree is not None:
            summary = FileSummary(path)
            bind_imports(summary, tree.body, False)
            found = host_dumps(tree, summary.qualify)
    _cache[path] = (key, found)
    return found


def dumps_host_data(project: Optional[ProjectIndex], file_name: str) -> bool:
    """Does the linted file, or a Python file in its folder, save host data to a file named
    `file_name`? The folder's files are read only when their text names the file."""
    if project is None:
        return False
    own = project.memo.get("host dumps")
    if own is None:
        tree = project.file_tree()
        own = project.memo["host dumps"] = host_dumps(tree, project.own.qualify) if tree is not None else frozenset()
    if file_name in own:  # type: ignore[operator]
        return True
    if project.path is None:
        return False
    mine = os.path.abspath(project.path)
    folder = os.path.dirname(mine)
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return False
    return any(name.endswith(".py") and os.path.join(folder, name) != mine
               and mentions(os.path.join(folder, name), (file_name,))
               and file_name in _host_dumps_of(os.path.join(folder, name)) for name in names)
