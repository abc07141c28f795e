"""The project index: what the other files of the same project define.

A rule linting `train.py` may need to know that `from models.net import Net` is an
`nn.Module` (its base is), that `from utils import build_model` returns a model that
is already on the GPU, or that `from utils import to_device` moves its argument. The
index answers those questions from the imported files themselves:

- a module name is found the way Python would find it when the project runs from
  one of the importing file's parent folders: `from .net import Net` next to the file,
  `from models.net import Net` under the nearest parent folder holding `models/`;
- each imported file is summarised once per process with the `ast` module (cheap:
  no libcst), lazily, only when a rule asks about a name it defines, and cached by
  path, size and modification time, so an editor session sees edits;
- names are followed through re-exports (`models/__init__.py` importing `Net` from
  `.net`), star imports (`from utils import *`, also chained) and base classes through
  other files, with a depth limit and cycle guard.

It only adds knowledge: a file linted alone (no project around it, or a name the
index cannot find) answers "unknown", and every rule treats unknown as "do not
report". The answers depend only on the files, never on the order of linting or on
the process, so flake8 gives the same findings at every `-j`.
"""

from __future__ import annotations

import ast
import bisect
import os
import re
from dataclasses import dataclass, field
from typing import Dict, FrozenSet, List, Optional, Set, Tuple

from .devices import is_device_name
from .syntax import ast_dotted_name

TENSOR, MODULE = "tensor", "module"
ARRAY = "array"  # a NumPy array (or what `np.*` returns): data, never a single number

# torch's legacy typed constructors (`torch.FloatTensor(n)`); its lower-case functions are
# `returns_tensor`.
_TENSOR_CALLS = frozenset({"Tensor", "FloatTensor", "LongTensor", "BoolTensor"})
# torch.<name>(...) that return no tensor (nor a tuple of them): settings, queries, I/O, contexts.
NOT_TENSOR_RESULTS = frozenset({"numel", "load", "save", "device", "no_grad", "enable_grad", "inference_mode",
                                "compile", "typename", "result_type", "promote_types", "can_cast", "Size",
                                "Generator", "autocast", "broadcast_shapes", "finfo", "iinfo", "dtype", "vmap",
                                "cond", "seed", "initial_seed", "equal", "allclose"})
NOT_TENSOR_PREFIXES = ("is_", "get_", "set_", "manual_", "use_", "are_", "_")


# torch.<name>(...) that make a new tensor from sizes or data.
FACTORIES = ("zeros", "ones", "empty", "full", "rand", "randn", "randint", "randperm", "arange",
             "linspace", "logspace", "eye", "tensor", "as_tensor",
             # the signal windows of `torch.stft(x, n, window=torch.hann_window(n))`
             "hann_window", "hamming_window", "blackman_window", "bartlett_window", "kaiser_window")
# Methods only tensors have (not modules, arrays, lists, dicts or batch objects): a name
# used with one holds a tensor. Each but the queries of NOT_TENSOR_METHODS returns a tensor.
TENSOR_ONLY_METHODS = frozenset({
    "unsqueeze", "unsqueeze_", "masked_fill", "masked_fill_", "permute", "contiguous", "detach",
    "detach_", "expand", "expand_as", "view_as", "reshape_as", "type_as", "new_zeros", "new_ones",
    "new_full", "new_empty", "new_tensor", "index_select", "masked_select", "scatter", "scatter_",
    "scatter_add", "scatter_add_", "narrow", "unbind", "bmm", "softmax", "log_softmax", "sigmoid",
    "clamp", "clamp_", "clamp_min", "clamp_max", "long", "int", "bool", "byte", "topk", "chunk",
    "norm", "sqrt", "pow", "mul", "add", "sub", "div", "add_", "mul_", "sub_", "div_", "copy_",
    "zero_", "fill_", "uniform_", "normal_", "numpy", "is_floating_point", "numel",
    "pow_", "sqrt_", "rsqrt_", "exp_", "log_", "abs_", "neg_", "reciprocal_",  # (arrays have no in-place math methods)
    "coalesce", "to_dense", "to_sparse",  # sparse tensors
    "size",  # called: arrays and images have `.size` as an attribute
    "dim", "ndimension", "nelement", "get_device",  # (NumPy has `.ndim` and `.size`, no such methods)
    "mm", "mv", "diag_embed", "repeat_interleave", "masked_scatter", "masked_scatter_",
})
# Methods only tensors have that NumPy, `math` or SciPy have as functions (`np.matmul(a, b)`,
# `np.diag(a)`, `math.exp(x)`): evidence only when called on a value, not on a module.
TENSOR_METHODS_ALSO_FUNCTIONS = frozenset({"matmul", "diag", "exp", "log", "logsumexp", "triu", "tril", "flip",
                                           "roll"})
# Methods of a tensor that do not return a tensor.
NOT_TENSOR_METHODS = frozenset({"item", "tolist", "numpy", "numel", "dim", "size", "stride", "element_size",
                                "data_ptr", "is_contiguous", "is_floating_point", "get_device", "__len__",
                                "nelement", "backward", "storage", "untyped_storage", "equal",
                                "copy", "astype"})  # (NumPy's and pandas' copies: a tensor has `clone`)


def returns_tensor(name: str) -> bool:
    """`torch.<name>(...)` returns a tensor (or tensors): a lower-case function of torch's
    namespace that is no setting, query, I/O or context (`torch.diagonal`, `torch.unique`)."""
    return name[:1].islower() and not name.startswith(NOT_TENSOR_PREFIXES) and name not in NOT_TENSOR_RESULTS


def torch_nn_class(qualified: str) -> Optional[str]:
    """The class name of "torch.nn.Linear" or "torch.nn.modules.loss._Loss" (a class of
    torch.nn, private ones too); None for anything else (`torch.nn.functional.relu`)."""
    if not qualified.startswith("torch.nn."):
        return None
    last = qualified.rsplit(".", 1)[-1]
    return last if last.lstrip("_")[:1].isupper() else None


# Classes of torch.nn that are no modules.
NN_NON_MODULES = frozenset({"Parameter", "UninitializedParameter", "Buffer", "UninitializedBuffer"})
# nn.Module subclasses of well-known libraries that models derive from.
_LIBRARY_MODULE_BASES = frozenset({
    "transformers.PreTrainedModel", "transformers.modeling_utils.PreTrainedModel",
    "torch_geometric.nn.MessagePassing", "torch_geometric.nn.conv.MessagePassing",
    "torch_geometric.nn.aggr.Aggregation", "mmengine.model.BaseModule", "mmcv.runner.BaseModule",
    "diffusers.ModelMixin", "diffusers.models.modeling_utils.ModelMixin",
})
# transformers' model classes, all `nn.Module`s (not its configs, tokenizers, outputs).
_TRANSFORMERS_MODEL_RE = re.compile(r"(?:PreTrainedModel|Model|For[A-Z]\w*)$")
# ... under the names the package had before (research code still imports them)
_TRANSFORMERS_PACKAGES = ("transformers.", "pytorch_transformers.", "pytorch_pretrained_bert.")
# Packages whose classes (by a capitalised name) under these prefixes are all `nn.Module`s:
# torchmetrics' metrics, gpytorch's models, kernels, means and likelihoods, pyro's
# PyroModule, torchvision's and timm's models.
_MODULE_PACKAGES = ("torchmetrics.", "gpytorch.", "pyro.nn.", "torchvision.models.", "timm.models.")


def is_library_module_class(qualified: str) -> bool:
    """Is the class `qualified` ("torch.nn.Linear", "pytorch_lightning.LightningModule",
    "torch_geometric.nn.conv.MessagePassing") an `nn.Module` of torch or of a library models
    derive from? (The one answer for a base in the file, `classes.class_is_module`, and for a
    base in another file of the project, `ProjectIndex.is_module_class`.)"""
    last = qualified.rsplit(".", 1)[-1]
    if torch_nn_class(qualified) not in (None, *NN_NON_MODULES):
        return True
    if qualified.startswith(("pytorch_lightning.", "lightning.")) and qualified.endswith("Module") \
            and not qualified.endswith("DataModule"):
        return True  # (`LightningModule`; a `LightningDataModule` loads data and keeps no layers)
    if qualified in _LIBRARY_MODULE_BASES or (
            qualified.startswith("torch_geometric.nn.") and last in ("MessagePassing", "Aggregation")):
        return True
    if qualified.startswith(_TRANSFORMERS_PACKAGES) and _TRANSFORMERS_MODEL_RE.search(last):
        return True  # `RobertaPreTrainedModel`, `BertModel`, `BertForSequenceClassification`
    return qualified.startswith(_MODULE_PACKAGES) and last[:1].isupper() and not last.endswith(
        ("Weights", "Config", "Cfg"))  # `torchmetrics.Metric`, `gpytorch.models.ExactGP`, `torchvision.models.ResNet`


# numpy.<name>(...) that make an array of data (`torch.tensor(make_grid())` is then no 0-dim tensor).
ARRAY_CALLS = frozenset({
    "array", "asarray", "zeros", "ones", "empty", "full", "arange", "linspace", "eye", "stack", "concatenate",
    "vstack", "hstack", "meshgrid", "inv", "pinv", "transpose", "reshape", "tile", "repeat", "load",
})
# torch.nn classes that a project's class or function result is not taken for a model by
_NN_NON_MODULES = frozenset({"Parameter", "ParameterList", "ParameterDict", "Buffer"})
_MOVE_METHODS = frozenset({"to", "cuda"})
_MAX_DEPTH = 8  # re-exports and base classes followed through at most this many files
_MAX_PARENTS = 6  # parent folders searched for the top package of an absolute import
MAX_FILE_BYTES = 2_000_000


@dataclass
class FileSummary:
    """What one file defines, as far as other files' rules care."""

    path: str
    imports: Dict[str, str] = field(default_factory=dict)  # local name -> ".rel.name" or "abs.name"
    # `from utils import *` at the module's level: ".rel" or "abs" modules whose names it takes
    star_imports: List[str] = field(default_factory=list)
    classes: Dict[str, Tuple[str, ...]] = field(default_factory=dict)  # class -> its bases, dotted
    self_moving: Set[str] = field(default_factory=set)  # classes whose __init__ moves the instance
    # classes of a base the index cannot see that define `forward` and build a torch.nn layer
    # on `self` in `__init__` (`acts_as_a_module`)
    module_like: Set[str] = field(default_factory=set)
    # classes whose `to(...)` returns a new object (`return Batch(*moved)`), not `self`: a bare
    # `batch.to(device)` moves nothing
    copying_movers: Set[str] = field(default_factory=set)
    returns: Dict[str, Tuple[str, ...]] = field(default_factory=dict)  # function -> returned calls' callees
    # function returning tuples of one length -> per part, the callees (one per `return`)
    tuple_returns: Dict[str, Tuple[Tuple[str, ...], ...]] = field(default_factory=dict)
    # functions whose every result is a tensor a factory made there without `device=`
    # (`m = torch.eye(n)`, `return m`): a new CPU tensor, not computed from the arguments;
    # and, for those returning tuples, which parts are
    fresh_returns: Set[str] = field(default_factory=set)
    fresh_parts: Dict[str, Tuple[bool, ...]] = field(default_factory=dict)
    moved_returns: Set[str] = field(default_factory=set)  # functions returning `x.to(...)`/`x.cuda()`
    argument_movers: Set[str] = field(default_factory=set)  # functions returning their first argument moved
    # module-level functions whose every result is on their first argument's device (`hat(v)`,
    # `pad_to_multiple(x, n)`): a CPU tensor handed to one comes back on the CPU
    argument_followers: Set[str] = field(default_factory=set)
    # module-level function -> position of a parameter -> the positions of the parameters its
    # tensor meets in the function (`radius_graph_pbc(r, n, pos, cell, n_atoms)` subtracts what
    # it computes from `n_atoms` from an `arange` on `pos.device`): they must share a device
    shared_devices: Dict[str, Dict[int, Set[int]]] = field(default_factory=dict)
    # functions returning a local that one of its own methods set up (`model.initialize(opt)`):
    # a module returned so may have been moved by it
    set_up_returns: Set[str] = field(default_factory=set)
    savers: Set[str] = field(default_factory=set)  # functions, methods and classes that call torch.save
    # module-level functions that return something and move nothing: no move in a statement, an
    # assignment or a return, no call as a statement but prints and logs, no device parameter
    # (neuraloperator's `get_model(config)`: whatever it builds stays where it was built)
    unmoving: Set[str] = field(default_factory=set)
    # `torch.set_default_tensor_type("torch.cuda.FloatTensor")` / `torch.set_default_device(...)`
    # at the module's level (also under `if __name__ == "__main__":`): factories follow it
    sets_default_device: bool = False
    # class -> attributes of `self` that one of its methods moves to a device (a trainer's
    # `self.model.to(self.device)` in `build`) or makes there (`torch.zeros(n, device=self.device)`):
    # where its other methods find them
    moved_attributes: Dict[str, Set[str]] = field(default_factory=dict)
    # classes told their device: a method keeps one (`self.device = device`, `self._device =
    # get_device(cfg)`; not a CPU literal): what their methods compute on lives there
    device_holders: Set[str] = field(default_factory=set)
    device_keepers: Set[str] = field(default_factory=set)  # ... whether or not they read it

    def defines(self, name: str) -> bool:
        return name in self.classes or name in self.returns or name in self.moved_returns or name in self.savers

    def qualify(self, dotted: str) -> str:
        """A dotted name as written in this file, with its head's import spelled out."""
        head, _, rest = dotted.partition(".")
        imported = self.imports.get(head)
        if imported is None:
            return dotted
        return f"{imported}.{rest}" if rest else imported


def _is_move(node: ast.AST) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _MOVE_METHODS \
        and not _is_dtype_cast(node)


# torch's dtypes (`torch.float8_e4m3fn` too): `t.to(torch.float16)` only changes the dtype
DTYPE_NAMES = frozenset({"float", "float16", "float32", "float64", "half", "double", "bfloat16", "int", "int8", "int16",
                         "int32", "int64", "long", "short", "uint8", "uint16", "uint32", "uint64", "bool",
                         "complex32", "complex64", "complex128", "cfloat", "cdouble", "chalf", "qint8", "quint8",
                         "qint32", "quint4x2", "float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz",
                         "float8_e8m0fnu", "float4_e2m1fn_x2"})


def _is_dtype_cast(call: ast.Call) -> bool:
    """`t.to(dtype=torch.float)`, `t.to(torch.float32)`: a new dtype, the same device."""
    if not (isinstance(call.func, ast.Attribute) and call.func.attr == "to"):
        return False
    keywords = {k.arg for k in call.keywords}
    if call.args:
        first = ast_dotted_name(call.args[0]) or ""
        return len(call.args) == 1 and first.startswith("torch.") and first[6:] in DTYPE_NAMES \
            and "device" not in keywords
    return keywords and keywords <= {"dtype", "non_blocking", "copy", "memory_format"}


def _to_cpu(call: ast.Call) -> bool:
    """`x.to("cpu")`: a move that leaves a module where it was built."""
    device = call.args[0] if call.args else next((k.value for k in call.keywords if k.arg == "device"), None)
    return isinstance(device, ast.Constant) and device.value == "cpu"


# Calls as statements that cannot move what a function builds.
_QUIET_CALLS = frozenset({"print", "warnings", "logger", "logging", "log", "LOGGER", "assert_", "os", "sys"})
# A name or an argument that carries a device (`device`, `args.gpu`, `local_rank`).
DEVICE_WORD_RE = re.compile(r"device|gpu|cuda|rank", re.I)


def acts_as_a_module(node: ast.ClassDef, qualify) -> bool:
    """A class whose base the linter cannot see (a library's: nuplan's `TorchModuleWrapper`)
    that defines `forward` and builds a torch.nn layer on `self` in `__init__`: a module.
    `qualify` turns a dotted name of the file into what it imports (`nn.Linear` ->
    `torch.nn.Linear`). (The one answer for a class of the file, `classes.class_is_module`,
    and for a base in another file of the project.)"""
    methods = {item.name: item for item in node.body if isinstance(item, ast.FunctionDef)}
    if "forward" not in methods or "__init__" not in methods:
        return False
    for statement in _own_statements(methods["__init__"]):
        if isinstance(statement, ast.Assign) and isinstance(statement.value, ast.Call) \
                and any(isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "self"
                        for t in statement.targets):
            built = torch_nn_class(qualify(ast_dotted_name(statement.value.func) or ""))
            if built is not None and built not in NN_NON_MODULES:
                return True
    return False


def _own_statements(function: ast.AST):
    """The function's statements, nested blocks included, not those of functions or
    classes defined in it. Statements only: returns and bare moves are all a summary
    needs, and expressions are most of a file's nodes."""
    stack = list(getattr(function, "body", ()))
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        yield node
        for block in ("body", "orelse", "finalbody", "handlers", "cases"):
            stack.extend(getattr(node, block, ()))


# Methods that keep what kind of value they are called on: `torch.FloatTensor(n).fill_(0)`.
SAME_KIND_METHODS = frozenset({"fill_", "zero_", "float", "double", "half", "long", "int", "bool", "byte",
                                "unsqueeze", "squeeze", "view", "reshape", "contiguous", "t", "transpose",
                                "permute", "detach", "clone", "requires_grad_", "eval", "train"})
# Reductions and element-wise math: of a call's result (`torch.diagonal(x).sum(-1)`) the
# same kind again. Not of a name: `torch.log(t)` is no method of a `torch` value.
# Module methods that never move it: calling one as a statement leaves a new module on the CPU.
_NON_MOVING_METHODS = frozenset({"load_state_dict", "eval", "train", "requires_grad_", "zero_grad", "float", "half",
                                 "double", "bfloat16", "register_buffer", "register_parameter", "add_module",
                                 "apply", "share_memory", "register_forward_hook", "register_forward_pre_hook"})
_SAME_KIND_MATH = frozenset({"sum", "mean", "prod", "abs", "exp", "log", "sqrt", "pow", "clamp", "clip", "flatten",
                             "repeat", "expand", "softmax", "sigmoid", "tanh", "cumsum"})


# A function of torch's top level (`torch.zeros`, not `torch.cuda.FloatTensor`): a module-level
# `zeros = torch.zeros` is an import under another name (old RL code), for the summary and the walk.
TORCH_FUNCTION_RE = re.compile(r"torch\.[a-z_]+$")

# Modules whose functions share a tensor method's name: `torch.unsqueeze(x, 0)` is a call, not a
# method of a `torch` value.
_MODULE_NAMES = frozenset({"torch", "th", "np", "numpy"})


def _chain_root(node: ast.AST) -> ast.AST:
    """`torch.ones(n).float().unsqueeze(0)` -> `torch.ones(n)`; `grid.to(dtype=torch.float)` -> `grid`."""
    while isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        receiver = node.func.value
        of_value = isinstance(receiver, ast.Call) or (isinstance(receiver, ast.Name)
                                                      and receiver.id not in _MODULE_NAMES)
        if not ((of_value and (node.func.attr in SAME_KIND_METHODS or _is_dtype_cast(node)))
                or (isinstance(receiver, ast.Call) and node.func.attr in _SAME_KIND_MATH)):
            break
        node = receiver
    return node


def _summarise_function(summary: FileSummary, function: ast.FunctionDef, owner: str = "") -> None:
    """What `function` returns; `owner` is "Class." for a method (its key becomes
    "Class.method", and its first argument after `self` counts as the first)."""
    params = [a.arg for a in (*function.args.posonlyargs, *function.args.args)]
    if owner and params and "staticmethod" not in [ast_dotted_name(d) for d in function.decorator_list]:
        params = params[1:]
    first = params[0] if params else None
    key = owner + function.name
    moved_names: Set[str] = set()
    set_up: Set[str] = set()  # locals one of their own methods was called on, as a statement
    returned: List[ast.AST] = []
    assignments: Dict[str, List[Tuple[int, ast.AST]]] = {}  # name -> (line, value) of `name = value`
    for node in _own_statements(function):
        if isinstance(node, ast.Return) and node.value is not None:
            returned.append(node.value)
        elif isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            assignments.setdefault(node.targets[0].id, []).append((node.lineno, node.value))
        elif isinstance(node, ast.Expr) and _is_move(node.value):
            name = ast_dotted_name(node.value.func.value)  # type: ignore[attr-defined]
            if name:
                moved_names.add(name)
            if owner and not _to_cpu(node.value):  # type: ignore[arg-type]
                _note_moved_attribute(summary, owner, name)  # `self.model.to(self.device)`
        if owner and isinstance(node, (ast.Assign, ast.AnnAssign)) and _keeps_a_device(node):
            summary.device_keepers.add(owner[:-1])
        if owner and isinstance(node, ast.Assign) and (
                (_is_move(node.value) and not _to_cpu(node.value)) or _made_on_a_device(summary, node.value, params)):
            for target in node.targets:
                # `self.model = self.model.cuda()`, `self.state = torch.zeros(n, device=self.device)`
                _note_moved_attribute(summary, owner, ast_dotted_name(target))
        elif isinstance(node, ast.Expr) and isinstance(node.value, ast.Call) \
                and summary.qualify(ast_dotted_name(node.value.func) or "") == "torch.save":
            summary.savers.add(key)
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call) \
                and isinstance(node.value.func, ast.Attribute) and isinstance(node.value.func.value, ast.Name) \
                and node.value.func.attr not in _NON_MOVING_METHODS and not _is_move(node.value):
            set_up.add(node.value.func.value.id)  # `model.initialize(opt)`
    if not owner and returned and not moved_names and not set_up \
            and not any(DEVICE_WORD_RE.search(name) for name in params) \
            and not any(_is_move(value) or _is_move(_chain_root(value))
                        for bound in assignments.values() for _, value in bound) \
            and not any(_is_move(_chain_root(element)) for value in returned if isinstance(value, ast.Tuple)
                        for element in value.elts) \
            and not any(isinstance(node, ast.Expr) and isinstance(node.value, ast.Call)
                        and (ast_dotted_name(node.value.func) or "").split(".")[0] not in _QUIET_CALLS
                        for node in _own_statements(function)):
        summary.unmoving.add(key)  # (a move in a return is caught below, by `moved_returns`)
    callees: List[str] = []
    for value in returned:
        value_line = value.lineno
        for arm in ([value.body, value.orelse] if isinstance(value, ast.IfExp) else [value]):
            arm = _chain_root(arm)  # `return grid.float()`: what `grid` is
            if isinstance(arm, ast.Name) and arm.id in set_up:
                summary.set_up_returns.add(key)
            if isinstance(arm, ast.Name) and arm.id not in moved_names:
                # `pe = torch.zeros(n, d); ...; return pe`: what the name was last bound to; also
                # the argument's own name (`if x is not None: x = torch.from_numpy(x)`, then
                # `return x`: the argument on one path, what it became on the other), unless
                # that was a move, which is kept as the argument's (`argument_movers`)
                earlier = sorted(((line, bound) for line, bound in assignments.get(arm.id, ()) if line < value.lineno),
                                 key=lambda pair: pair[0])
                # `g = g / g.sum()`: arithmetic on itself keeps what the name held before
                while len(earlier) > 1 and _updates_itself(earlier[-1][1], arm.id):
                    earlier.pop()
                last = earlier[-1][1] if earlier else arm
                if arm.id != first or not _is_move(_chain_root(last)):
                    arm = last
                elif ast_dotted_name(_chain_root(last).func.value) == first:  # type: ignore[attr-defined]
                    # graph4nlp's `to_cuda(x, device)`: `if device: x = x.to(device)`, `return x`
                    summary.moved_returns.add(key)
                    summary.argument_movers.add(key)
            arm = _chain_root(arm)
            operand = _elementwise_operand(arm)
            if operand is not None:
                # `return mask[None] == 0`, `return mask`, `mask = ... == 0`: where the operand came from
                if isinstance(operand, ast.Name) and operand.id != first:
                    bound = [(line, value) for line, value in assignments.get(operand.id, ()) if line < value_line]
                    operand = max(bound, key=lambda pair: pair[0])[1] if bound else operand
                arm = _chain_root(operand)
            if _is_move(arm):
                # `return net.cuda()`, `return t.to(device)`: moved, whatever it is
                summary.moved_returns.add(key)
                if first is not None and ast_dotted_name(arm.func.value) == first:  # type: ignore[attr-defined]
                    summary.argument_movers.add(key)
            elif isinstance(arm, ast.Name) and arm.id in moved_names:
                summary.moved_returns.add(key)  # `net.cuda()` as a statement, then `return net`
            elif _tensor_method_chain(arm):
                callees.append("torch.Tensor")  # `return imgs.permute(0, 3, 1, 2).float().div(255)`
            elif isinstance(arm, ast.Call) and ast_dotted_name(arm.func):
                callees.append(ast_dotted_name(arm.func))  # type: ignore[arg-type]
            elif first is None or not (isinstance(arm, ast.Name) and arm.id == first):
                callees.append("")  # a name, a literal: its kind is unknown
    if returned:
        summary.returns[key] = tuple(callees)
    if returned and all(_is_fresh_factory(summary, value, value.lineno, assignments)  # type: ignore[attr-defined]
                        for value in returned):
        summary.fresh_returns.add(key)
    lengths = {len(value.elts) if isinstance(value, ast.Tuple) else -1 for value in returned}
    if len(lengths) == 1 and min(lengths) > 1:
        summary.fresh_parts[key] = tuple(
            all(_is_fresh_factory(summary, value.elts[item], value.lineno, assignments)  # type: ignore[attr-defined]
                for value in returned)
            for item in range(min(lengths)))
        # `return edges, edge_attr`: what each part is, for `a, b = f(...)`
        summary.tuple_returns[key] = tuple(
            tuple(_item_callee(value.elts[item], value.lineno, assignments) for value in returned)  # type: ignore[attr-defined]
            for item in range(min(lengths)))
    annotation = ast_dotted_name(function.returns) if function.returns is not None else None
    if annotation and summary.qualify(annotation) in ("torch.Tensor", "torch.tensor"):
        # `def get_category(cls, labels, n) -> torch.Tensor`: what it says it returns
        summary.returns[key] = ("torch.Tensor",)


def _bound_value(item: ast.AST, line: int, assignments: Dict[str, List[Tuple[int, ast.AST]]]) -> ast.AST:
    """What a returned name was last bound to before `line` (`edge_attr = torch.ones(n, 1)`);
    the item itself when it is no name or was not bound there (a parameter)."""
    if isinstance(item, ast.Name):
        earlier = [(bound_line, value) for bound_line, value in assignments.get(item.id, ()) if bound_line < line]
        if earlier:
            return max(earlier, key=lambda pair: pair[0])[1]
    return item


def _is_fresh_factory(summary: "FileSummary", item: ast.AST, line: int,
                      assignments: Dict[str, List[Tuple[int, ast.AST]]]) -> bool:
    """Is a returned value (or part) a tensor a factory made there without `device=`
    (`m = torch.eye(n + 1)`, filled or not, then `return m`): a new CPU tensor of the
    function's own, whatever its arguments were?"""
    item = _chain_root(_bound_value(item, line, assignments))
    return isinstance(item, ast.Call) and summary.qualify(ast_dotted_name(item.func) or "") in _FACTORY_NAMES \
        and not any(k.arg == "device" or k.arg is None for k in item.keywords)


def _item_callee(item: ast.AST, line: int, assignments: Dict[str, List[Tuple[int, ast.AST]]]) -> str:
    """The callee that made one part of a returned tuple (`edge_attr = torch.ones(n, 1)`, then
    `return edges, edge_attr`): as `FileSummary.returns` has it, "" when unknown."""
    item = _chain_root(_bound_value(item, line, assignments))
    if _tensor_method_chain(item):
        return "torch.Tensor"
    if isinstance(item, ast.Call) and not _is_move(item):
        return ast_dotted_name(item.func) or ""
    return ""


def _elementwise_operand(value: ast.AST) -> Optional[ast.AST]:
    """The tensor operand of `mask[None, :l] == 0`, `-x`, `x * 2`, `2 * x` (its first operand
    that is no number), through indexing; None for anything else."""
    found = None
    while True:
        if isinstance(value, ast.Compare):
            value = value.left
        elif isinstance(value, ast.BinOp):
            value = value.right if isinstance(value.left, ast.Constant) else value.left
        elif isinstance(value, ast.UnaryOp):
            value = value.operand
        elif isinstance(value, ast.Subscript) and found is not None:
            value = value.value
        else:
            return found
        found = value


def _updates_itself(value: ast.AST, name: str) -> bool:
    """`g / g.sum()`, `-g`, `2 * g + 1`: arithmetic with `name` itself as an operand."""
    if isinstance(value, ast.UnaryOp):
        return _updates_itself(value.operand, name)
    if not isinstance(value, ast.BinOp):
        return False
    return any((isinstance(side, ast.Name) and side.id == name) or _updates_itself(side, name)
               for side in (value.left, value.right))


def _tensor_method_chain(value: ast.AST) -> bool:
    """`x.permute(...).float().div(255)`: a chain of method calls with a method only tensors
    have (`permute`) whose last call is no query (`.numpy()`, `.item()`): a tensor."""
    if not (isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute)) \
            or value.func.attr in NOT_TENSOR_METHODS:
        return False
    while isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute):
        if value.func.attr in TENSOR_ONLY_METHODS:
            return True
        value = value.func.value
    return False


_FACTORY_NAMES = frozenset(f"torch.{name}" for name in FACTORIES)


def _made_on_a_device(summary: FileSummary, value: ast.AST, params: List[str]) -> bool:
    """`torch.zeros(n, device=self.device)`: a factory told the device the object was given
    (`self.device`, or a parameter named like one), not one found where it stands
    (`device = self.max_val.device`, which follows the object's own tensors)."""
    if not (isinstance(value, ast.Call) and summary.qualify(ast_dotted_name(value.func) or "") in _FACTORY_NAMES):
        return False
    device = next((k.value for k in value.keywords if k.arg == "device"), None)
    name = ast_dotted_name(device) if device is not None else None
    if name is None or DEVICE_WORD_RE.search(name) is None:
        return False
    return name in params if isinstance(device, ast.Name) else name.count(".") == 1 and name.startswith("self.")


def _keeps_a_device(assignment: ast.AST) -> bool:
    """`self.device = device`, `self._device: torch.device = get_device(cfg)`: the object
    keeps a device it was told (not `self.device = "cpu"`, `torch.device("cpu")` or None)."""
    value = assignment.value  # type: ignore[attr-defined]
    targets = assignment.targets if isinstance(assignment, ast.Assign) else [assignment.target]  # type: ignore[attr-defined]
    if value is None or not any(isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "self"
                                and is_device_name(t.attr) for t in targets):
        return False
    if isinstance(value, ast.Call) and (ast_dotted_name(value.func) or "").endswith("device") and value.args:
        value = value.args[0]  # `torch.device("cpu")`
    return not (isinstance(value, ast.Constant) and (value.value is None or str(value.value).startswith("cpu")))


def _reads_its_device(cls: ast.ClassDef) -> bool:
    """Does a method of `cls` read `self.<device>` (`x.to(self.device)`, `device=self._device`)?"""
    return any(isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load) and is_device_name(node.attr)
               and isinstance(node.value, ast.Name) and node.value.id == "self" for node in ast.walk(cls))


def _note_moved_attribute(summary: FileSummary, owner: str, name: Optional[str]) -> None:
    """`self.m` moved to a device in a method of the class `owner` ("Class.")."""
    if name and name.startswith("self.") and name.count(".") == 1:
        summary.moved_attributes.setdefault(owner[:-1], set()).add(name[5:])


def _own_nodes(scope: ast.AST):
    """(node, parent) for every node of a function or module body, not those of the
    functions, lambdas and classes defined in it."""
    stack = [(child, scope) for child in ast.iter_child_nodes(scope)]
    while stack:
        node, parent = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        yield node, parent
        stack.extend((child, node) for child in ast.iter_child_nodes(node))


def runs_unmoved(tree: ast.Module) -> Set[str]:
    """The classes and functions (their callee as written: "Net", "models.Net",
    "make_model") that a function or the module body of `tree` builds a name with
    (`model = Net(...)`, `Net().eval()`, `model = make_model()`) and then runs (`model(x)`)
    with no move of that name before (`model.to(d)`, `model.cuda()`, in any arm). A
    name passed, returned or stored before it runs escapes: whoever gets it may move it."""
    found: Set[str] = set()
    scopes = [tree] + [node for node in ast.walk(tree) if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))]
    for scope in scopes:
        events = sorted(((getattr(node, "lineno", 0), getattr(node, "col_offset", 0), id(node), node, parent)
                         for node, parent in _own_nodes(scope) if isinstance(node, ast.Name)),
                        key=lambda event: event[:3])
        built: Dict[str, str] = {}  # name -> class, while unmoved and not escaped
        for _, _, _, name, parent in events:
            if isinstance(name.ctx, ast.Store):
                built.pop(name.id, None)
                if isinstance(parent, ast.Assign) and len(parent.targets) == 1 and parent.targets[0] is name:
                    root = _chain_root(parent.value)
                    if isinstance(root, ast.Call) and not _is_move(parent.value):
                        callee = ast_dotted_name(root.func)
                        if callee:
                            built[name.id] = callee
                continue
            if name.id not in built:
                continue
            if isinstance(parent, ast.Call) and parent.func is name:
                found.add(built.pop(name.id))  # run before any move
            elif not isinstance(parent, ast.Attribute) or parent.attr in _MOVE_METHODS:
                built.pop(name.id)  # moved, or handed to something that may move it
    return found


# Calls that take a model to read, save or load it, not to move it: `save_chkpt(self.model, ...)`.
READS_MODEL_RE = re.compile(r"save|chkpt|checkpoint|log|print|summary|count|param|state_dict|export|write|plot",
                             re.I)


def attributes_run_unmoved(tree: ast.Module) -> Set[str]:
    """"self.model" for each `self.<name>` that the file runs (`self.model(x)`) and never
    moves, assigns or hands to a call that might move it (`self.model.to(d)`,
    `self.model = ...`, `prepare(self.model)`): a model that a property builds stays where
    it was built."""
    run: Set[str] = set()
    escaped: Set[str] = set()
    for node in ast.walk(tree):
        for child in ast.iter_child_nodes(node):
            if not (isinstance(child, ast.Attribute) and isinstance(child.value, ast.Name)
                    and child.value.id == "self"):
                continue
            name = child.attr
            if isinstance(child.ctx, ast.Store) or isinstance(node, (ast.Return, ast.Yield, ast.keyword)):
                escaped.add(name)
            elif isinstance(node, ast.Call) and node.func is child:
                run.add(name)
            elif isinstance(node, ast.Call) and not READS_MODEL_RE.search(ast_dotted_name(node.func) or ""):
                escaped.add(name)  # handed to a call that may move it
            elif isinstance(node, ast.Attribute) and node.attr in _MOVE_METHODS | {"to_empty", "cpu"}:
                escaped.add(name)
    return {f"self.{name}" for name in run - escaped}


def summarise(source: str, path: str) -> FileSummary:
    """The summary of one file's text; an unparsable file defines nothing."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return FileSummary(path)
    return summarise_tree(tree, path)


def bind_imports(summary: FileSummary, statements, first_wins: bool) -> None:
    """The imports of `statements` into `summary.imports` (`first_wins`: an earlier binding stays)."""
    for statement in statements:
        if isinstance(statement, ast.Try):
            # `try: from a import X / except ImportError: from b import X`: what runs first
            bind_imports(summary, statement.body, first_wins)
            for handler in statement.handlers:
                bind_imports(summary, handler.body, True)
            continue
        if isinstance(statement, ast.If):
            bind_imports(summary, statement.body, first_wins)
            bind_imports(summary, statement.orelse, True)
            continue
        pairs: List[Tuple[str, str]] = []
        if isinstance(statement, ast.Import):
            for alias in statement.names:
                if alias.asname:
                    pairs.append((alias.asname, alias.name))
                else:
                    top = alias.name.split(".", 1)[0]
                    pairs.append((top, top))
        elif isinstance(statement, ast.ImportFrom):
            prefix = "." * statement.level + (statement.module or "")
            for alias in statement.names:
                if alias.name != "*":
                    joined = f"{prefix}.{alias.name}" if not prefix.endswith(".") else prefix + alias.name
                    pairs.append((alias.asname or alias.name, joined))
                elif prefix.strip("."):
                    summary.star_imports.append(prefix)
        for local, target in pairs:
            if first_wins:
                summary.imports.setdefault(local, target)
            else:
                summary.imports[local] = target


def summarise_tree(tree: ast.Module, path: str) -> FileSummary:
    """The summary of one file's `ast`."""
    summary = FileSummary(path)
    bind_imports(summary, tree.body, False)
    for statement in tree.body:
        if isinstance(statement, ast.Assign) and len(statement.targets) == 1 \
                and isinstance(statement.targets[0], ast.Name) and isinstance(statement.value, ast.Attribute):
            # `zeros = torch.zeros` (old RL code): an import under another spelling
            qualified = summary.qualify(ast_dotted_name(statement.value) or "")
            if TORCH_FUNCTION_RE.match(qualified):
                summary.imports.setdefault(statement.targets[0].id, qualified)
        if isinstance(statement, ast.ClassDef):
            # (`Operator[Tensor, ...]`: a generic base is its class)
            bases = tuple(name for name in (ast_dotted_name(base.value if isinstance(base, ast.Subscript) else base)
                                            for base in statement.bases) if name)
            summary.classes[statement.name] = bases
            for item in statement.body:
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    _summarise_function(summary, item, f"{statement.name}.")  # type: ignore[arg-type]
                    if f"{statement.name}.{item.name}" in summary.savers:
                        summary.savers.add(statement.name)  # `stopper(loss, model, path)` saves
                if isinstance(item, ast.FunctionDef) and item.name == "to" and _returns_a_copy(item):
                    summary.copying_movers.add(statement.name)
                if isinstance(item, ast.FunctionDef) and item.name == "__init__" and bases \
                        and acts_as_a_module(statement, summary.qualify):
                    summary.module_like.add(statement.name)
                if isinstance(item, ast.FunctionDef) and item.name == "__init__":
                    for node in _own_statements(item):
                        if isinstance(node, ast.Expr) and _is_move(node.value) and not _to_cpu(node.value) \
                                and ast_dotted_name(node.value.func.value) == "self":  # type: ignore[attr-defined]
                            summary.self_moving.add(statement.name)
                            break
            if statement.name in summary.device_keepers and _reads_its_device(statement):
                summary.device_holders.add(statement.name)  # (not a device kept and never used)
        elif isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)):
            _summarise_function(summary, statement)  # type: ignore[arg-type]
        elif not summary.sets_default_device:
            summary.sets_default_device = _sets_default_device(statement, summary)
    functions = [statement for statement in tree.body if isinstance(statement, ast.FunctionDef)]
    summary.argument_followers = _argument_followers(summary, functions)
    for function in functions:
        shared = _shared_devices(summary, function)
        if shared:
            summary.shared_devices[function.name] = shared
    return summary


# what a comparison does without computing on its operands' data
_NOT_COMPUTING = (ast.Is, ast.IsNot, ast.In, ast.NotIn)


def _shared_devices(summary: FileSummary, function: ast.FunctionDef) -> Dict[int, Set[int]]:
    """Which parameters of `function` meet in a computation on tensors (`FileSummary.shared_devices`):
    each value is followed to the parameters whose device it is on, through assignments, tensor
    methods and torch functions, a `device=` it was made with (`device = pos.device`), not
    through what gives a number (`len(n)`, `.shape`, `.item()`) or a host copy (`.cpu()`)."""
    params = [a.arg for a in (*function.args.posonlyargs, *function.args.args)]
    if len(params) < 2:
        return {}
    bindings: Dict[str, List[Tuple[int, ast.AST]]] = {}
    statements = list(_own_statements(function))
    for node in statements:
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
            for target in (node.targets if isinstance(node, ast.Assign) else [node.target]):
                if isinstance(target, ast.Name):
                    bindings.setdefault(target.id, []).append((node.lineno, node.value))
                elif isinstance(target, ast.Tuple):  # `a, b = ...`: not followed
                    for element in target.elts:
                        if isinstance(element, ast.Name):
                            bindings.setdefault(element.id, []).append((node.lineno, ast.Constant(None)))
    for pairs in bindings.values():
        pairs.sort(key=lambda pair: pair[0])
    binding_lines = {name: [line for line, _ in pairs] for name, pairs in bindings.items()}
    # (line, id of the value) -> the parameters a binding's value is on: answered in the order of
    # the lines, so that a name read always finds its earlier binding's answer (no recursion
    # through names; a loop's later binding is not read back)
    answers: Dict[Tuple[int, int], FrozenSet[str]] = {}

    def devices(node: ast.AST, line: int, depth: int = 0) -> FrozenSet[str]:
        if depth > 48:
            return frozenset()
        if isinstance(node, ast.Name):
            lines = binding_lines.get(node.id, ())
            at = bisect.bisect_left(lines, line)  # the last binding on an earlier line
            if at == 0:
                return frozenset([node.id]) if node.id in params else frozenset()
            bound_line, value = bindings[node.id][at - 1]
            return answers.get((bound_line, id(value)), frozenset())
        if isinstance(node, ast.Attribute):
            if node.attr == "device" or node.attr in _SAME_TENSOR_ATTRIBUTES:
                return devices(node.value, line, depth + 1)
            return frozenset()  # `.shape`, `.dtype`, a field of an object
        if isinstance(node, ast.Subscript):
            return devices(node.value, line, depth + 1)
        if isinstance(node, ast.UnaryOp):
            return devices(node.operand, line, depth + 1)
        if isinstance(node, ast.BinOp):
            return devices(node.left, line, depth + 1) | devices(node.right, line, depth + 1)
        if not isinstance(node, ast.Call):
            return frozenset()
        device = next((k.value for k in node.keywords if k.arg == "device"), None)
        if device is not None:
            return devices(device, line, depth + 1)  # `torch.arange(n, device=device)`
        if isinstance(node.func, ast.Attribute) and not _MODULE_NAMES.intersection([ast_dotted_name(node.func.value)]):
            if node.func.attr in _HOST_METHODS or node.func.attr in ("size", "dim", "numel", "tolist"):
                return frozenset()
            if node.func.attr in ("to", "cuda", "type_as") and node.args and not _is_dtype_cast(node):
                return devices(node.args[0], line, depth + 1)
            if isinstance(node.func.value, ast.Name) and node.func.value.id in summary.imports:
                if not summary.qualify(node.func.value.id).startswith("torch"):
                    return frozenset()  # `np.sum(x)`, `math.sqrt(n)`
            else:
                return devices(node.func.value, line, depth + 1)  # `x.long()`, `x.view(-1)`
        callee = summary.qualify(ast_dotted_name(node.func) or "")
        if callee.startswith("torch.") and callee not in _FACTORY_NAMES and callee != "torch.device":
            found: FrozenSet[str] = frozenset()
            for argument in node.args:
                items = argument.elts if isinstance(argument, (ast.List, ast.Tuple)) else [argument]
                for item in items:
                    found |= devices(item, line, depth + 1)
            return found
        return frozenset()  # `len(n)`, a function that may give anything

    values = {(line, id(value)): value for pairs in bindings.values() for line, value in pairs}
    for key in sorted(values):
        answers[key] = devices(values[key], key[0])
    shared: Dict[int, Set[int]] = {}

    def meet(operands: List[ast.AST], line: int) -> None:
        found = [devices(operand, line) for operand in operands]
        for i, one in enumerate(found):
            for other in found[i + 1:]:
                for a in one:
                    for b in other:
                        if a != b:
                            shared.setdefault(params.index(a), set()).add(params.index(b))
                            shared.setdefault(params.index(b), set()).add(params.index(a))

    # (each statement's own expressions: the statements of its blocks come on their own)
    expressions = [child for statement in statements for child in ast.iter_child_nodes(statement)
                   if isinstance(child, (ast.expr, ast.withitem))]
    for node in (node for expression in expressions for node in ast.walk(expression)):
        line = getattr(node, "lineno", 0)
        if isinstance(node, ast.BinOp) and not isinstance(node.op, ast.Mod):
            meet([node.left, node.right], line)
        elif isinstance(node, ast.Compare) and not isinstance(node.ops[0], _NOT_COMPUTING):
            meet([node.left, *node.comparators], line)
        elif isinstance(node, ast.Call) and len(node.args) > 1 \
                and summary.qualify(ast_dotted_name(node.func) or "").startswith("torch.") \
                and not any(k.arg == "device" for k in node.keywords):
            meet([item for argument in node.args
                  for item in (argument.elts if isinstance(argument, (ast.List, ast.Tuple)) else [argument])], line)
    return shared


def _argument_followers(summary: FileSummary, functions: List[ast.FunctionDef]) -> Set[str]:
    """The functions whose every `return` gives a value on their first argument's device:
    the argument, what torch computes from it (`F.pad(x, p)`, `x * 2`, `(pad(x), n)`: a
    tuple's first item), a tensor made or moved there (`torch.zeros(n).to(v.device)`), or what
    another such function of the file gives for it (`pad_at_dim(x, ...)`)."""
    followers: Set[str] = set()
    # (each function's statements read once; a function that follows only through others is
    # asked again only when one of those joined)
    candidates = [prepared for prepared in map(_returns_and_bindings, functions) if prepared is not None]
    grown = True
    while grown and candidates:
        grown = False
        for prepared in list(candidates):
            if _follows_first_argument(summary, prepared, followers):
                followers.add(prepared[0].name)
                candidates.remove(prepared)
                grown = True
    return followers


# a tensor's attributes that are that tensor, on its device
_SAME_TENSOR_ATTRIBUTES = frozenset({"T", "mT", "H", "mH", "data", "real", "imag"})
_HOST_METHODS = frozenset({"cpu", "numpy", "tolist", "item"})


_Prepared = Tuple[ast.FunctionDef, str, Dict[str, List[Tuple[int, ast.AST]]], List[ast.Return]]


def _returns_and_bindings(function: ast.FunctionDef) -> Optional[_Prepared]:
    """(function, its first parameter, what its names are bound to, its returns of a value);
    None for a function without parameters or without such a return."""
    params = [a.arg for a in (*function.args.posonlyargs, *function.args.args)]
    if not params:
        return None
    bindings: Dict[str, List[Tuple[int, ast.AST]]] = {}  # name -> (line, value or the call whose first item it is)
    returned: List[ast.Return] = []
    for node in _own_statements(function):
        if isinstance(node, ast.Return):
            if node.value is not None and not (isinstance(node.value, ast.Constant) and node.value.value is None):
                returned.append(node)
        elif isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            value = node.value
            for target in targets:
                if isinstance(target, ast.Name) and value is not None:
                    bindings.setdefault(target.id, []).append((node.lineno, value if not isinstance(node, ast.AugAssign)
                                                               else ast.BinOp(target, node.op, value)))
                elif isinstance(target, ast.Tuple) and target.elts and isinstance(target.elts[0], ast.Name):
                    # `x, n = pad_to_multiple(x, size)`: the first item
                    first_item = value.elts[0] if isinstance(value, ast.Tuple) and value.elts else value
                    bindings.setdefault(target.elts[0].id, []).append((node.lineno, first_item))
                    for element in target.elts[1:]:
                        if isinstance(element, ast.Name):
                            bindings.setdefault(element.id, []).append((node.lineno, ast.Constant(None)))
    return (function, params[0], bindings, returned) if returned else None


def _follows_first_argument(summary: FileSummary, prepared: _Prepared, followers: Set[str]) -> bool:
    _, first, bindings, returned = prepared

    def reads_first(node: ast.AST) -> bool:
        return any(isinstance(n, ast.Name) and n.id == first for n in ast.walk(node))

    def follows(node: ast.AST, line: int, depth: int = 0) -> bool:
        if depth > 12:
            return False
        if isinstance(node, ast.Name):
            earlier = [pair for pair in bindings.get(node.id, ()) if pair[0] < line]
            if earlier:
                bound_line, value = max(earlier, key=lambda pair: pair[0])
                return follows(value, bound_line, depth + 1)
            return node.id == first
        if isinstance(node, ast.Attribute):
            return node.attr in _SAME_TENSOR_ATTRIBUTES and follows(node.value, line, depth + 1)
        if isinstance(node, ast.Subscript):
            return follows(node.value, line, depth + 1)
        if isinstance(node, ast.UnaryOp):
            return follows(node.operand, line, depth + 1)
        if isinstance(node, ast.BinOp):
            return follows(node.left, line, depth + 1) or follows(node.right, line, depth + 1)
        if isinstance(node, ast.Compare) and not isinstance(node.ops[0], (ast.In, ast.NotIn, ast.Is, ast.IsNot)):
            # `x.unsqueeze(0) < length.unsqueeze(1)`: a mask where the compared tensors are
            return any(follows(operand, line, depth + 1) for operand in (node.left, *node.comparators))
        if not isinstance(node, ast.Call):
            return False
        positional = [a for a in node.args if not isinstance(a, ast.Starred)]
        if isinstance(node.func, ast.Attribute) and not _MODULE_NAMES.intersection([ast_dotted_name(node.func.value)]):
            method = node.func.attr
            if method in _HOST_METHODS:
                return False
            if method in ("to", "cuda", "type_as"):
                # `.to(v.device)`, `.type_as(v)`: moved to the argument's device; `.to(torch.float)` keeps it
                return (bool(node.args) and reads_first(node.args[0])) or (
                    method == "to" and _is_dtype_cast(node) and follows(node.func.value, line, depth + 1))
            if isinstance(node.func.value, ast.Name) and node.func.value.id in summary.imports \
                    and not summary.qualify(node.func.value.id).startswith(("torch", "einops")):
                return False  # `np.pad(x)`, `math.sqrt(x)`: another library's
            if not (isinstance(node.func.value, ast.Name) and summary.qualify(node.func.value.id).startswith(("torch", "einops"))):
                return follows(node.func.value, line, depth + 1)  # `x.permute(0, 2, 1)`
        callee = summary.qualify(ast_dotted_name(node.func) or "")
        device = next((k.value for k in node.keywords if k.arg == "device"), None)
        if device is not None:
            return reads_first(device)  # `torch.zeros(n, device=v.device)`
        if callee.startswith(("torch.", "einops.")) and callee not in _FACTORY_NAMES:
            return any(follows(a, line, depth + 1) for a in positional)  # `F.pad(x, p)`, `torch.einsum(eq, a, x)`
        if isinstance(node.func, ast.Name) and node.func.id in followers and positional:
            return follows(positional[0], line, depth + 1)
        return False

    return all(follows(r.value.elts[0] if isinstance(r.value, ast.Tuple) and r.value.elts else r.value, r.lineno)
               for r in returned)


def _returns_a_copy(method: ast.FunctionDef) -> bool:
    """Does every `return` of `method` return something made by a call (`Batch(*moved)`,
    `type(self)(...)`, `dataclasses.replace(self, ...)`), never `self`?"""
    returns = [node.value for node in _own_statements(method) if isinstance(node, ast.Return)]
    return bool(returns) and all(isinstance(value, ast.Call) for value in returns)


def _sets_default_device(statement: ast.AST, summary: FileSummary) -> bool:
    """A module-level statement (or one in its `if`/`try` blocks) that sets the default
    device of new tensors: `torch.set_default_device(d)`, or
    `torch.set_default_tensor_type("torch.cuda.FloatTensor")` (a CUDA type)."""
    for node in _own_statements(ast.Module(body=[statement], type_ignores=[])):
        if not (isinstance(node, ast.Expr) and isinstance(node.value, ast.Call)):
            continue
        callee = summary.qualify(ast_dotted_name(node.value.func) or "")
        if callee == "torch.set_default_device":
            return True
        if callee == "torch.set_default_tensor_type" and node.value.args:
            kind = node.value.args[0]
            literal = isinstance(kind, ast.Constant) and isinstance(kind.value, str)
            text = kind.value if literal else ast_dotted_name(kind)
            if text and "cuda" in text:
                return True
    return False


_summaries: Dict[str, Tuple[Tuple[int, int], FileSummary]] = {}
_found: Dict[Tuple[str, str], Optional[str]] = {}


def _summary_of(path: str) -> Optional[FileSummary]:
    try:
        stat = os.stat(path)
    except OSError:
        return None
    key = (stat.st_size, stat.st_mtime_ns)
    cached = _summaries.get(path)
    if cached is not None and cached[0] == key:
        return cached[1]
    if stat.st_size > MAX_FILE_BYTES:
        summary = FileSummary(path)
    else:
        source = read_text(path)
        if source is None:
            return None
        summary = summarise(source, path)
    _summaries[path] = (key, summary)
    return summary


def _module_file(folder: str, parts: List[str]) -> Optional[str]:
    """`folder/a/b.py` or `folder/a/b/__init__.py` for parts [a, b]."""
    base = os.path.join(folder, *parts)
    for candidate in (base + ".py", os.path.join(base, "__init__.py")):
        if os.path.isfile(candidate):
            return candidate
    return None


def _find_module(importer: str, module: str) -> Optional[str]:
    """The file of `module` ("models.net", ".net", "..utils") imported from `importer`."""
    level = len(module) - len(module.lstrip("."))
    parts = [part for part in module[level:].split(".") if part]
    folder = os.path.dirname(os.path.abspath(importer))
    if level:
        for _ in range(level - 1):
            folder = os.path.dirname(folder)
        if not parts:
            candidate = os.path.join(folder, "__init__.py")
            return candidate if os.path.isfile(candidate) else None
        return _module_file(folder, parts)
    if not parts or parts[0] in _NEVER_PROJECT:
        return None
    key = (folder, module)
    if key not in _found:
        found = None
        for _ in range(_MAX_PARENTS):
            found = _module_file(folder, parts)
            if found is not None or _is_project_root(folder):
                break
            parent = os.path.dirname(folder)
            if parent == folder:
                break
            folder = parent
        _found[key] = found
    return _found[key]


_MAX_PROJECT_FILES = 3000
_SKIPPED_FOLDERS = frozenset({"node_modules", "site-packages", "build", "dist", "__pycache__", "venv", "env"})
_project_listing: Dict[str, Tuple[str, ...]] = {}
_runs_unmoved_cache: Dict[Tuple[str, str], Tuple[Tuple[int, int], Tuple[str, ...]]] = {}
# caches of per-file facts kept by the modules built on this one (`dumps`), cleared with ours
FILE_CACHES: List[Dict] = []


def _project_files(path: str) -> Tuple[str, ...]:
    """The `.py` files of the project `path` is in (sorted; none when no project root
    is found within a few parent folders)."""
    folder = os.path.dirname(path)
    for _ in range(_MAX_PARENTS):
        if _is_project_root(folder):
            break
        parent = os.path.dirname(folder)
        if parent == folder:
            return ()
        folder = parent
    else:
        return ()
    if folder not in _project_listing:
        found: List[str] = []
        for root, folders, files in os.walk(folder):
            folders[:] = sorted(f for f in folders if not f.startswith(".") and f not in _SKIPPED_FOLDERS)
            found.extend(os.path.join(root, name) for name in sorted(files) if name.endswith(".py"))
            if len(found) > _MAX_PROJECT_FILES:
                found = []  # too big to read on a question: unknown
                break
        _project_listing[folder] = tuple(found)
    return _project_listing[folder]


def _runs_unmoved_of(path: str, class_name: str) -> Tuple[str, ...]:
    """`runs_unmoved` of a file, the callees that end in `class_name`, cached by the
    file's size and modification time; only files whose text names the class are parsed."""
    try:
        stat = os.stat(path)
    except OSError:
        return ()
    key = (stat.st_size, stat.st_mtime_ns)
    cached = _runs_unmoved_cache.get((path, class_name))
    if cached is not None and cached[0] == key:
        return cached[1]
    callees: Tuple[str, ...] = ()
    if stat.st_size <= MAX_FILE_BYTES:
        text = read_text(path) or ""
        try:
            if class_name in text:
                callees = tuple(sorted(c for c in runs_unmoved(ast.parse(text))
                                       if c.rpartition(".")[2] == class_name))
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            callees = ()
    _runs_unmoved_cache[(path, class_name)] = (key, callees)
    return callees


_DEFAULT_DEVICE_SETTERS = ("set_default_tensor_type", "set_default_device")
_mentions_cache: Dict[Tuple[str, Tuple[str, ...]], Tuple[Tuple[int, int], bool]] = {}


def mentions(path: str, words: Tuple[str, ...]) -> bool:
    """Does the file's text hold one of `words`? Cached by its size and modification time."""
    try:
        stat = os.stat(path)
    except OSError:
        return False
    key = (stat.st_size, stat.st_mtime_ns)
    cached = _mentions_cache.get((path, words))
    if cached is not None and cached[0] == key:
        return cached[1]
    found = False
    if stat.st_size <= MAX_FILE_BYTES:
        found = any(word in (read_text(path) or "") for word in words)
    _mentions_cache[(path, words)] = (key, found)
    return found


_IMPORTED_MODULE_RE = re.compile(r"^[ \t]*(?:from[ \t]+([\w.]+)[ \t]+import|import[ \t]+([\w.]+))", re.M)


def read_text(path: str) -> Optional[str]:
    """A project file's text (undecodable bytes replaced); None when it cannot be read."""
    try:
        with open(path, "rb") as handle:
            return handle.read().decode("utf-8", "replace")
    except OSError:
        return None


def _imports_file(importer: str, target: str) -> bool:
    """Does the file `importer` import the module that is the file `target`?"""
    for match in _IMPORTED_MODULE_RE.finditer(read_text(importer) or ""):
        found = _find_module(importer, match.group(1) or match.group(2))
        if found is not None and os.path.abspath(found) == target:
            return True
    return False


def _is_project_root(folder: str) -> bool:
    return any(os.path.exists(os.path.join(folder, marker))
               for marker in (".git", "pyproject.toml", "setup.py", "setup.cfg"))


# Packages never looked up as project files: the ones every file imports.
_NEVER_PROJECT = frozenset({"torch", "torchvision", "torchaudio", "numpy", "os", "sys", "typing", "math",
                            "collections", "functools", "itertools", "re", "json", "time", "random",
                            "argparse", "logging", "dataclasses", "abc", "copy", "warnings", "pathlib",
                            "__future__", "scipy", "PIL", "cv2", "tqdm", "matplotlib", "pandas", "yaml",
                            "einops", "transformers", "timm", "lightning", "pytorch_lightning"})


def _calls_by_name(tree: ast.Module) -> Dict[str, List[Optional[Tuple[int, FrozenSet[str]]]]]:
    """name -> (positional count, keywords) of each call `name(...)` or `x.name(...)` in the
    tree; None for a call with `*args`/`**kwargs` and for a use that is not a call."""
    calls: Dict[str, List[Optional[Tuple[int, FrozenSet[str]]]]] = {}
    callees = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            func = node.func
            name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None
            if name is None:
                continue
            callees.add(id(func))
            starred = any(isinstance(a, ast.Starred) for a in node.args) or any(k.arg is None for k in node.keywords)
            calls.setdefault(name, []).append(None if starred else (
                len(node.args), frozenset(k.arg for k in node.keywords if k.arg is not None)))
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and id(node) not in callees \
                or isinstance(node, ast.Attribute) and id(node) not in callees:
            name = node.id if isinstance(node, ast.Name) else node.attr
            if name in calls:
                calls[name].append(None)  # `map(f, xs)`, `self.f`: called elsewhere, unseen
    return calls


@dataclass(frozen=True)
class _Definition:
    summary: FileSummary
    name: str


class ProjectIndex:
    """The file being linted in its project: what its own functions and methods return
    (read from the whole file, also the functions the fast path leaves out of the
    parse), and what the names it imports from the project's other files are."""

    def __init__(self, path: Optional[str], tree: Optional[ast.Module] = None, source: Optional[str] = None) -> None:
        self.path = path  # None: text with no file around it (stdin, tests)
        self._tree = tree
        self._source = source
        self._own: Optional[FileSummary] = None
        self._whole_tree = tree  # kept for the rare questions the summary does not answer
        self._runs_unmoved: Optional[Set[str]] = None
        self._calls: Optional[Dict[str, List[Optional[Tuple[int, FrozenSet[str]]]]]] = None
        self.memo: Dict[str, object] = {}  # what other analysis modules read from the whole file, once

    @property
    def own(self) -> FileSummary:
        """The file's own summary, made on first use."""
        if self._own is None:
            if self._tree is not None:
                self._own = summarise_tree(self._tree, self.path or "<unknown>")
            elif self._source is not None:
                self._own = summarise(self._source, self.path or "<unknown>")
            elif self.path is not None:
                self._own = _summary_of(self.path) or FileSummary(self.path)
            else:
                self._own = FileSummary("<unknown>")
            self._tree = None
            if self._whole_tree is not None:
                self._source = None  # kept while runs_unmoved_here may still need it
        return self._own

    # ------------------------------------------------------------ queries

    def is_module_class(self, reference: str) -> bool:
        """Is the imported name `reference` ("models.net.Net", ".net.Net") a class whose
        bases lead, through the project's files, to `torch.nn.Module`?"""
        found = self._imported(reference)
        return found is not None and self._class_is_module(found, 0, set())

    def returns(self, reference: str) -> Optional[str]:
        """TENSOR or MODULE for an imported project function whose every return says
        so; None when unknown."""
        found = self._imported(reference)
        return None if found is None else self._function_kind(found, 0)

    def returns_here(self, function: str) -> Optional[str]:
        """The same for a function ("make_mask") or method ("Net._make_mask") of this file."""
        own = self.own
        return self._function_kind(_Definition(own, function), 0) if function in own.returns \
            or function in own.moved_returns else None

    def tuple_kinds(self, reference: str) -> Optional[Tuple[Optional[str], ...]]:
        """For an imported project function that returns tuples of one length, the kind
        of each part (TENSOR, MODULE, ARRAY or None) where every return agrees."""
        found = self._imported(reference)
        return None if found is None else self._tuple_kinds(found)

    def tuple_kinds_here(self, function: str) -> Optional[Tuple[Optional[str], ...]]:
        return self._tuple_kinds(_Definition(self.own, function))

    def _tuple_kinds(self, found: _Definition) -> Optional[Tuple[Optional[str], ...]]:
        parts = found.summary.tuple_returns.get(found.name)
        if parts is None:
            return None
        agreed = [self._returned_kinds(found, 0, callees) for callees in parts]
        return tuple(kinds.pop() if len(kinds) == 1 and None not in kinds else None for kinds in agreed)

    def fresh_parts(self, reference: str) -> Optional[Tuple[bool, ...]]:
        """For an imported project function, which results are new CPU tensors of its own
        (`FileSummary.fresh_returns`, `fresh_parts`): one flag, or one per part of a tuple."""
        found = self._imported(reference)
        return None if found is None else _fresh(found.summary, found.name)

    def fresh_parts_here(self, function: str) -> Optional[Tuple[bool, ...]]:
        return _fresh(self.own, function)

    def makes_tensor(self, dotted: str) -> bool:
        """Does a call of `dotted`, as written in this file (`make_grid`, `geometry.gaussian2d`),
        return a tensor: a module-level function of the file or of the project's files
        it imports whose every return is one? For the fast path, which has no scopes:
        a name the file binds otherwise may answer wrongly, the analysis decides."""
        own = self.own
        if "." not in dotted and dotted in own.returns:
            return self.returns_here(dotted) == TENSOR
        reference = own.qualify(dotted)
        return reference != dotted and self.returns(reference) == TENSOR

    def saves(self, reference: str) -> bool:
        """An imported project function, or class with a method, that calls `torch.save`."""
        found = self._imported(reference)
        return found is not None and found.name in found.summary.savers

    def saves_here(self, name: str) -> bool:
        return name in self.own.savers

    def returns_moved(self, reference: str) -> bool:
        """An imported project function with a return that is moved to a device
        (`return net.cuda()`, or `net.to(device)` then `return net`)."""
        found = self._imported(reference)
        return found is not None and found.name in found.summary.moved_returns

    def returns_moved_here(self, function: str) -> bool:
        """The same for a function ("build_model") or method of this file."""
        return function in self.own.moved_returns

    def moves_itself(self, reference: str) -> bool:
        """A class of the project whose `__init__` moves the instance (`self.cuda()`)."""
        found = self._imported(reference)
        return found is not None and found.name in found.summary.self_moving

    def moves_itself_here(self, name: str) -> bool:
        """The same for a class of this file."""
        return name in self.own.self_moving

    def holds_a_device(self, reference: str) -> bool:
        """A class of the project that keeps a device it was told, itself or through a base
        class of the project (`FileSummary.device_holders`)."""
        found = self._imported(reference)
        return found is not None and self._holds_a_device(found, 0, set())

    def holds_a_device_here(self, name: str) -> bool:
        """The same for a class of this file."""
        return name in self.own.classes and self._holds_a_device(_Definition(self.own, name), 0, set())

    def _holds_a_device(self, found: _Definition, depth: int, seen: Set[Tuple[str, str]]) -> bool:
        key = (found.summary.path, found.name)
        if key in seen or depth > _MAX_DEPTH or found.name not in found.summary.classes:
            return False
        seen.add(key)
        if found.name in found.summary.device_holders:
            return True
        for base in found.summary.classes[found.name]:
            base_definition = self._local(found.summary, base, depth)
            if base_definition is not None and self._holds_a_device(base_definition, depth + 1, seen):
                return True
        return False

    def copies_when_moved(self, reference: str) -> bool:
        """A class of the project whose `to(...)` returns a new object (`FileSummary.copying_movers`)."""
        found = self._imported(reference)
        return found is not None and found.name in found.summary.copying_movers

    def copies_when_moved_here(self, name: str) -> bool:
        return name in self.own.copying_movers

    def runs_unmoved_here(self, class_name: str) -> bool:
        """Does this file build `class_name` and run the instance before moving it
        (`model = Net()` ... `model(x)`, no `model.to(...)`/`.cuda()` in between, in the
        same function or at module level)? For "self.<name>": does it run `self.<name>`
        and never move it (`attributes_run_unmoved`)? Read from the whole file, once."""
        if self._runs_unmoved is None:
            tree = self.file_tree()
            self._runs_unmoved = runs_unmoved(tree) | attributes_run_unmoved(tree) if tree is not None else set()
            self._whole_tree = None
        return class_name in self._runs_unmoved

    def file_tree(self) -> Optional[ast.Module]:
        """The whole file's tree, for the rare questions the summary does not answer."""
        if self._whole_tree is not None:
            return self._whole_tree
        try:
            if self._source is not None:
                return ast.parse(self._source)
            if self.path is not None:
                with open(self.path, "rb") as handle:
                    return ast.parse(handle.read().decode("utf-8", "replace"))
        except (OSError, SyntaxError, ValueError, RecursionError, MemoryError):
            pass
        return None

    def always_default(self, function: str, parameter: str, position: int) -> bool:
        """Does every call of `function` (a function or method of this file, by its name) in
        this file leave `parameter` (the `position`-th positional one, `self` not counted)
        at its default? False when there is no call, or the name is used otherwise
        (handed on as a value, called with `*args`/`**kwargs`)."""
        if self._calls is None:
            tree = self.file_tree()
            self._calls = _calls_by_name(tree) if tree is not None else {}
        calls = self._calls.get(function)
        return bool(calls) and all(
            call is not None and call[0] <= position and parameter not in call[1] for call in calls)

    def runs_unmoved_in_project(self, class_name: str) -> bool:
        """Does another file of the project import this file's class `class_name`, build
        it and run the instance before moving it? The project's files (those under the
        nearest parent folder holding `.git`, `pyproject.toml`, `setup.py` or
        `setup.cfg`, at most a few thousand) that name the class are read, once per
        file version."""
        if self.path is None:
            return False
        mine = os.path.abspath(self.path)
        for path in _project_files(mine):
            if path == mine:
                continue
            summary = _summary_of(path)
            if summary is None:
                continue
            for callee in _runs_unmoved_of(path, class_name):
                head, _, rest = callee.partition(".")
                target = summary.imports.get(head)
                if target is None:
                    continue
                found = self._definition(path, f"{target}.{rest}" if rest else target, 0)
                if found is not None and found.name == class_name \
                        and os.path.abspath(found.summary.path) == mine:
                    return True
        return False

    def default_device_set_in_project(self) -> bool:
        """Does a file of the project that imports this one set the default device of new
        tensors at its top (nerf-pytorch's `run_nerf.py`, `from run_nerf_helpers import *`,
        then `torch.set_default_tensor_type(torch.cuda.FloatTensor)`)? The factories of this
        file then follow it. (Not any file of the project: a library's example script that
        sets it says nothing of the library.) Only files whose text names one of the two
        setters are parsed."""
        if self.path is None:
            return False
        mine = os.path.abspath(self.path)
        for path in _project_files(mine):
            # (the cheap tests first: a summary parses the whole file, 10 MB for timm's biggest)
            if path != mine and mentions(path, _DEFAULT_DEVICE_SETTERS) and _imports_file(path, mine):
                summary = _summary_of(path)
                if summary is not None and summary.sets_default_device:
                    return True
        return False

    def never_moves(self, reference: str) -> bool:
        """An imported project function that moves nothing it returns (`FileSummary.unmoving`)."""
        found = self._imported(reference)
        return found is not None and found.name in found.summary.unmoving \
            and found.name not in found.summary.moved_returns

    def never_moves_here(self, function: str) -> bool:
        return function in self.own.unmoving and function not in self.own.moved_returns

    def moves_argument(self, reference: str) -> bool:
        """A project function that returns its first argument moved (`to_device(t)`)."""
        found = self._imported(reference)
        return found is not None and found.name in found.summary.argument_movers

    def moves_argument_here(self, function: str) -> bool:
        return function in self.own.argument_movers

    def follows_argument(self, reference: str) -> bool:
        """A project function whose result is on its first argument's device (`hat(v)`)."""
        found = self._imported(reference)
        return found is not None and found.name in found.summary.argument_followers

    def follows_argument_here(self, function: str) -> bool:
        return function in self.own.argument_followers

    def shares_devices(self, reference: str) -> Dict[int, Set[int]]:
        """Which parameters of a project function meet in a computation (`FileSummary.shared_devices`)."""
        found = self._imported(reference)
        return {} if found is None else found.summary.shared_devices.get(found.name, {})

    def shares_devices_here(self, function: str) -> Dict[int, Set[int]]:
        return self.own.shared_devices.get(function, {})

    # ------------------------------------------------------------ resolution

    def _imported(self, reference: str) -> Optional[_Definition]:
        return None if self.path is None else self._definition(self.path, reference, 0)

    def _definition(self, importer: str, reference: str, depth: int) -> Optional[_Definition]:
        """Where the imported `reference` is defined: follows re-exports."""
        level = len(reference) - len(reference.lstrip("."))
        within, _, name = reference[level:].rpartition(".")
        if depth > _MAX_DEPTH or not name or not (level or within):
            return None
        module = "." * level + within
        path = _find_module(importer, module)
        if path is None and "." in within:
            # `Dataset.get_category` of `from .datasets import Dataset`: a method of a class
            within, _, owner = within.rpartition(".")
            path, name = _find_module(importer, "." * level + within), f"{owner}.{name}"
        if path is None:
            return None
        summary = _summary_of(path)
        if summary is None:
            return None
        if summary.defines(name):
            return _Definition(summary, name)
        target = summary.imports.get(name)
        if target is not None:
            return self._definition(path, target, depth + 1)
        owner, _, method = name.partition(".")
        target = summary.imports.get(owner) if method else None
        if target is not None:  # `GADNRBase.process_graph` where a package re-exports the class
            return self._definition(path, f"{target}.{method}", depth + 1)
        found = self._from_star_imports(summary, name, depth + 1)
        return found[1] if found is not None else None

    def _from_star_imports(self, summary: FileSummary, name: str, depth: int) -> Optional[Tuple[str, _Definition]]:
        """(reference, definition) of `name` taken by `from utils import *` in `summary`'s file
        (research code chains them: `main.py` star-imports `train.py`, which star-imports
        `utils.py`)."""
        if summary.path.startswith("<"):
            return None
        for module in summary.star_imports:
            reference = f"{module}.{name}"
            found = self._definition(summary.path, reference, depth)
            if found is not None:
                return reference, found
        return None

    def star_torch_name(self, name: str) -> Optional[str]:
        """What torch function this file's star imports bring as `name` ("torch.zeros" for
        `from utils import *` where utils has `from torch import zeros` or `zeros =
        torch.zeros`); None when they bring none."""
        if self.path is None:
            return None
        summaries, seen = [self.own], set()
        while summaries and len(seen) <= _MAX_DEPTH:
            summary = summaries.pop(0)
            for module in summary.star_imports:
                path = _find_module(summary.path, module)
                found = _summary_of(path) if path is not None and path not in seen else None
                if found is None:
                    continue
                seen.add(path)
                target = found.imports.get(name)
                if target is not None:
                    return target if target.startswith("torch.") else None
                summaries.append(found)
        return None

    def star_reference(self, name: str) -> Optional[str]:
        """The reference ("utils.readImgs") under which this file's star imports bring `name`
        from a file of the project; None when they bring no such name."""
        found = self._from_star_imports(self.own, name, 0) if self.path is not None else None
        return found[0] if found is not None else None

    def _local(self, summary: FileSummary, name: str, depth: int) -> Optional[_Definition]:
        """A dotted name as written in `summary`'s file, resolved to its definition."""
        head, _, rest = name.partition(".")
        if not rest and summary.defines(head):
            return _Definition(summary, head)
        target = summary.imports.get(head)
        if target is None and not rest:
            found = self._from_star_imports(summary, head, depth + 1)
            return found[1] if found is not None else None
        if target is None or summary.path.startswith("<"):
            return None
        return self._definition(summary.path, f"{target}.{rest}" if rest else target, depth + 1)

    def _class_is_module(self, found: _Definition, depth: int, seen: Set[Tuple[str, str]]) -> bool:
        key = (found.summary.path, found.name)
        if key in seen or depth > _MAX_DEPTH or found.name not in found.summary.classes:
            return False
        seen.add(key)
        summary = found.summary
        for base in summary.classes[found.name]:
            if is_library_module_class(summary.qualify(base)):
                return True
            base_definition = self._local(summary, base, depth)
            if base_definition is not None and self._class_is_module(base_definition, depth + 1, seen):
                return True
        return found.name in summary.module_like

    def _function_kind(self, found: _Definition, depth: int) -> Optional[str]:
        """What a function returns when every return agrees: TENSOR, MODULE or ARRAY, else None."""
        summary = found.summary
        kinds = self._returned_kinds(found, depth)
        if found.name in summary.moved_returns:
            return None  # `return x.cuda()`: placement is known (`returns_moved`), not the kind
        kind = kinds.pop() if len(kinds) == 1 and None not in kinds else None
        if kind == MODULE and found.name in summary.set_up_returns:
            return None  # `model.initialize(opt); return model`: set up by its own code, maybe moved there
        return kind

    def _returned_kinds(self, found: _Definition, depth: int,
                        callees: Optional[Tuple[str, ...]] = None) -> Set[Optional[str]]:
        kinds: Set[Optional[str]] = set()
        summary = found.summary
        owner = found.name.rpartition(".")[0]  # "Net" for the method "Net._make_mask"
        for callee in (summary.returns.get(found.name, ()) if callees is None else callees):
            if not callee:
                kinds.add(None)
                continue
            if owner and callee.startswith("self."):
                callee = owner + callee[4:]
            full = summary.qualify(callee)
            module, _, last = full.rpartition(".")
            if module == "torch" and (last in _TENSOR_CALLS or returns_tensor(last)):
                kinds.add(TENSOR)
                continue
            if module in ("numpy", "numpy.linalg") and last in ARRAY_CALLS:
                kinds.add(ARRAY)
                continue
            if torch_nn_class(full) not in (None, *_NN_NON_MODULES):
                kinds.add(MODULE)
                continue
            definition = self._local(summary, callee, depth)
            if definition is None or depth >= _MAX_DEPTH:
                kinds.add(None)
            elif definition.name in summary.classes or definition.name in definition.summary.classes:
                kinds.add(MODULE if self._class_is_module(definition, 0, set()) else None)
            elif definition.name == found.name and definition.summary is summary:
                continue  # recursion adds nothing
            else:
                kinds.add(self._function_kind(definition, depth + 1))
        return kinds


def _fresh(summary: FileSummary, name: str) -> Optional[Tuple[bool, ...]]:
    if name in summary.fresh_returns:
        return (True,)
    return summary.fresh_parts.get(name)


def clear_cache() -> None:
    """Forget every summary (tests; a long-running server may call it too)."""
    _summaries.clear()
    _found.clear()
    _project_listing.clear()
    _runs_unmoved_cache.clear()
    _mentions_cache.clear()
    for cache in FILE_CACHES:
        cache.clear()


def index_for(path: Optional[str], tree: Optional[ast.Module] = None, source: Optional[str] = None) -> ProjectIndex:
    """The index for a file: its own functions (from its `ast` or its text, as linted) and,
    when it is a file on disk, the project's files it imports."""
    # an editor's unsaved file still sits in its folder: an absolute path in an existing one
    on_disk = bool(path) and not path.startswith("<") and path != "-" and (
        os.path.isfile(path) or (os.path.isabs(path) and os.path.isdir(os.path.dirname(path))))
    return ProjectIndex(path if on_disk else None, tree, source)


__all__ = ["ARRAY", "ARRAY_CALLS", "MODULE", "READS_MODEL_RE", "TENSOR", "TENSOR_METHODS_ALSO_FUNCTIONS", "FileSummary", "ProjectIndex", "clear_cache", "index_for",
           "summarise", "summarise_tree", "torch_nn_class"]
