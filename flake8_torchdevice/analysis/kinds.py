"""Value kinds: is this expression a tensor, a module, a device, or unknown?

`ValueKinds` follows the walk (the `Analyzer` runs it before the rules on the way
down and after them on the way up) and keeps, per function scope, the kind each name
was last bound to, in statement order:

- tensors: tensor factories and `torch.from_numpy`/`torch.tensor(...)`, tensor ops
  (`torch.cat`, `F.pad`, arithmetic with a tensor, `t.float()` chains), parameters
  annotated `torch.Tensor`, names used with a method only tensors have
  (`x.unsqueeze(0)`), the values unpacked from a `DataLoader` loop
  (`for x, y in loader:`, `for i, (x, y) in enumerate(train_loader):`) or from `next()`
  of one (`x, y = next(iter(loader))`, `next(self.train_iter)`), items of a
  batch (`batch["x"]`) or of `tokenizer(..., return_tensors="pt")`, array indexing
  (`x[:, -n:]`), and the items of `xs: Tuple[torch.Tensor, ...]`;
- modules: constructors of `torch.nn` classes and of the file's own `nn.Module`
  subclasses, and model-like names (`model = Net(...)`) bound from a constructor;
- devices: `torch.device(...)`, `x.device`, device-named values.

Anything else is unknown, and rules that need a kind do not guess.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Container, Dict, FrozenSet, Iterable, List, Optional, Protocol, Sequence, Set, Tuple

import libcst as cst

from .devices import is_device_name
from .project import (ARRAY, ARRAY_CALLS, DTYPE_NAMES, FACTORIES, NN_NON_MODULES, NOT_TENSOR_METHODS,
                      TENSOR_METHODS_ALSO_FUNCTIONS, TENSOR_ONLY_METHODS, returns_tensor, torch_nn_class)
from .syntax import (comprehension_clauses, descendants, dotted_name, exclusive_arms, has_star_kwargs, keyword, last_identifier,
                     method_call, number_value, parameter_loop_targets, positional_args, string_value, unpacked_pairs)

if TYPE_CHECKING:
    from .scopes import Scope


class _BuiltClass(Protocol):
    def is_init_time(self, method: str) -> bool: ...


class KindsContext(Protocol):
    """What `ValueKinds` reads from the walk. The `Analyzer` (walker.py) is one; it is
    declared here so that this module need not import the walker, which imports it."""

    scopes: List[Scope]
    module_classes: Set[str]
    stack: List[cst.CSTNode]  # the nodes from the module down to the one being visited

    @property
    def current_function(self) -> Optional[cst.FunctionDef]: ...

    @property
    def current_class(self) -> Optional[_BuiltClass]: ...

    def resolve(self, node: cst.CSTNode) -> Optional[str]: ...

    def project_says(self, node: cst.CSTNode, question: str) -> object: ...

    def function_scope(self) -> Scope: ...

    def enclosing_tests(self, stack: Optional[Sequence[cst.CSTNode]] = None) \
            -> Iterable[Tuple[cst.CSTNode, cst.BaseExpression, bool]]: ...


TENSOR, MODULE, DEVICE, NUMBER = "tensor", "module", "device", "number"
# Methods and attributes that turn a tensor into plain Python data (device no longer matters).
TO_PYTHON = frozenset({"item", "tolist", "numpy", "numel", "dim", "size", "shape", "dtype", "ndim", "__len__",
                       "nelement", "element_size", "stride", "is_cuda", "device", "data_ptr"})

# torch.<name>(...) that return a tensor.
TENSOR_FUNCTIONS = frozenset(FACTORIES) | {
    "from_numpy", "frombuffer", "zeros_like", "ones_like", "empty_like", "full_like", "rand_like",
    "randn_like", "randint_like", "cat", "concat", "concatenate", "stack", "hstack", "vstack", "dstack",
    "where", "matmul", "mm", "bmm", "einsum", "outer", "cumsum", "cumprod", "triu", "tril", "meshgrid",
    "exp", "log", "sqrt", "abs", "sin", "cos", "sigmoid", "tanh", "softmax", "clamp", "clip", "flip",
    "roll", "gather", "index_select", "masked_select", "nonzero", "multinomial", "bernoulli", "normal",
    "polar", "complex", "view_as_real", "view_as_complex", "diag", "diag_embed", "tile", "repeat_interleave",
    "transpose", "permute", "reshape", "flatten", "unsqueeze", "squeeze", "chunk", "split", "bucketize",
    "searchsorted", "cdist", "norm", "randn_like", "erfinv", "logical_not", "logical_and", "logical_or",
}
# The pre-0.4 wrapper of a tensor: `Variable(t)` is `t`.
VARIABLE = frozenset({"torch.autograd.Variable", "torch.autograd.variable.Variable"})
# Legacy typed constructors: `torch.FloatTensor(3)` is a CPU tensor.
LEGACY_TENSOR_TYPES = frozenset({"Tensor", "FloatTensor", "DoubleTensor", "HalfTensor", "BFloat16Tensor",
                                 "LongTensor", "IntTensor", "ShortTensor", "CharTensor", "ByteTensor",
                                 "BoolTensor"})
# Keywords of tensor methods that numpy's and Python's methods do not take (numpy says `axis=`).
_TENSOR_METHOD_KEYWORDS = frozenset({"dim", "keepdim"})


# `nn.Module` itself, however it is reached
TORCH_MODULE = frozenset({"torch.nn.Module", "torch.nn.modules.module.Module"})
# torch.nn layers whose output is not one tensor: recurrent layers and attention give tuples,
# containers whatever their last layer gives
_NOT_ONE_TENSOR_LAYERS = frozenset({"RNN", "LSTM", "GRU", "RNNBase", "MultiheadAttention", "Transformer",
                                    "TransformerEncoder", "TransformerDecoder", "TransformerEncoderLayer",
                                    "TransformerDecoderLayer", "Sequential", "ModuleList", "ModuleDict",
                                    "ParameterList", "ParameterDict", "Parameter", "Buffer", "Module",
                                    "DataParallel", "DistributedDataParallel", "AdaptiveLogSoftmaxWithLoss"})


_SPLITTING_FUNCTIONS = frozenset({"torch.split", "torch.chunk", "torch.unbind", "torch.tensor_split"})
_SPLITTING_METHODS = frozenset({"split", "chunk", "unbind", "tensor_split"})


# Methods named for what they return: a tensor (easytext's `self._data.to_tensor()`).
_TENSOR_CONVERTERS = frozenset({"to_tensor", "to_torch", "as_tensor", "to_torch_tensor"})


def _takes_dim(call: cst.Call) -> bool:
    """`x.cumsum(dim=1)`, `x.sum(-1, keepdim=True)`: a method called as only a tensor's is."""
    return any(arg.keyword is not None and arg.keyword.value in _TENSOR_METHOD_KEYWORDS for arg in call.args)


def _views_a_size(call: cst.Call) -> bool:
    """`lens.view(-1, 1)`: a tensor's `view` (NumPy's takes a dtype, never a size)."""
    return isinstance(call.func, cst.Attribute) and call.func.attr.value == "view" \
        and any(arg.keyword is None and number_value(arg.value) is not None for arg in call.args)


# Methods that arrays and tensors share, returning another one (no module, list, dict or
# batch object has them).
_ARRAY_METHODS = frozenset({"repeat", "reshape", "transpose", "flatten", "squeeze", "swapaxes", "cumsum",
                            "argmax", "argmin", "argsort"})
# Methods whose result is an array (or tensor) of data, never a number.
_ARRAY_DATA_METHODS = frozenset({"reshape", "transpose", "flatten", "ravel", "swapaxes", "astype", "numpy"})
# Attributes of a tensor that are tensors.
TENSOR_ATTRIBUTES = frozenset({"T", "mT", "H", "mH", "data", "grad", "real", "imag"})
# Methods of a module that return the module itself.
MODULE_METHODS = frozenset({"to", "cuda", "cpu", "float", "half", "double", "bfloat16", "train", "eval",
                            "requires_grad_", "apply", "type", "to_empty", "share_memory"})

# Methods of a module that other objects seldom have (a trainer has `.train()`, an optimizer
# `.zero_grad()` but is never called on tensors).
_MODULE_ONLY_METHODS = frozenset({"eval", "parameters", "named_parameters", "buffers", "named_buffers",
                                  "modules", "named_modules", "children", "named_children"})

# torch.<op>(sequence of tensors): its items are tensors.
_SEQUENCE_OPS = frozenset(f"torch.{name}" for name in ("cat", "concat", "concatenate", "stack", "hstack",
                                                       "vstack", "dstack"))
# torch.<op>(a, b, ...) whose first n positional arguments must be tensors.
_TENSOR_OPERAND_OPS = {f"torch.{name}": count for name, count in (
    ("matmul", 2), ("mm", 2), ("bmm", 2), ("masked_fill", 1), ("gather", 1), ("index_select", 1),
    ("transpose", 1), ("permute", 1), ("flatten", 1), ("unsqueeze", 1), ("squeeze", 1), ("softmax", 1),
    ("sigmoid", 1), ("argmax", 1), ("topk", 1), ("sort", 1), ("cumsum", 1), ("masked_select", 1),
    # binary ops whose second operand must be a tensor too (`torch.maximum(x, 0)` raises)
    ("heaviside", 2), ("maximum", 2), ("minimum", 2), ("fmax", 2), ("fmin", 2), ("atan2", 2), ("hypot", 2),
    ("logaddexp", 2), ("cdist", 2), ("kron", 2), ("outer", 2), ("dot", 2), ("mv", 2), ("cross", 2),
    ("bucketize", 2), ("searchsorted", 2), ("take_along_dim", 2), ("isclose", 2))}
# torch.<op>(input, ...) that raise a TypeError for anything but a tensor as `input` (a number,
# a list or a NumPy array), checked against torch 2.13: elementwise math, reductions, logical
# ops, comparisons and reshaping (not `add`/`sub`/`mul`/`div`, which take a number first)
_INPUT_TENSOR_OPS = frozenset(f"torch.{name}" for name in (
    "where", "logical_not", "logical_and", "logical_or", "logical_xor", "exp", "log", "sqrt", "abs", "sin",
    "cos", "tan", "tanh", "floor", "ceil", "round", "sign", "isnan", "isinf", "isfinite", "nonzero", "any",
    "all", "sum", "mean", "prod", "std", "var", "max", "min", "argsort", "clamp", "clip", "reshape", "diag",
    "tril", "triu", "flip", "roll", "norm", "cumprod", "logsumexp", "chunk", "split", "unbind", "nan_to_num",
    "count_nonzero", "unique", "bincount", "diff", "trace", "det", "inverse", "square", "rsqrt",
    "reciprocal", "erf", "log1p", "expm1", "log2", "log10", "relu", "movedim", "narrow", "take", "eq", "ne",
    "lt", "le", "gt", "ge", "repeat_interleave", "tile", "broadcast_to", "neg", "fmod", "trunc", "frac",
    "lerp", "addcmul", "addcdiv", "baddbmm", "addmm", "matrix_power", "kthvalue", "median", "quantile",
    "rot90", "fliplr", "flipud", "diagonal", "diag_embed", "tensordot", "cummax", "cummin", "amax", "amin",
    "nansum", "nanmean", "cosine_similarity", "pairwise_distance", "cdist"))
# torch.nn.functional.<op>(input, ...): the input is a tensor.
_FUNCTIONAL_ON_INPUT = frozenset({"pad", "interpolate", "softmax", "log_softmax", "relu", "gelu", "linear",
                                  "conv1d", "conv2d", "conv3d", "normalize", "cross_entropy", "mse_loss",
                                  "l1_loss", "nll_loss", "binary_cross_entropy", "grid_sample", "avg_pool2d",
                                  "max_pool2d", "dropout", "layer_norm", "embedding", "one_hot"})
# Keywords of torch.nn's functions and classes that take a tensor (class weights, a
# convolution's weight), never Python data.
_TENSOR_KEYWORDS = frozenset({"weight", "pos_weight"})
# The last names of the torch functions above: the text a fast path looks for.
TENSOR_OPERAND_NAMES = frozenset({name.rsplit(".", 1)[-1] for name in (*_SEQUENCE_OPS, *_TENSOR_OPERAND_OPS)}
                                 | _FUNCTIONAL_ON_INPUT | {"einsum"})


# Functions of PyTorch's libraries that return tensors: the positions of the tensors in the
# tuple they return, or None where the result is a tensor.
LIBRARY_TENSORS: Dict[str, Optional[Tuple[int, ...]]] = {
    "torchaudio.load": (0,), "torchaudio.load_with_torchcodec": (0,), "torchvision.io.read_video": (0, 1),
    "torchvision.io.read_image": None, "torchvision.io.decode_image": None, "torchvision.io.decode_jpeg": None,
    "torchvision.transforms.functional.to_tensor": None, "torchvision.transforms.functional.pil_to_tensor": None,
}


def tensor_operands(qualified: str, call: cst.Call) -> List[cst.BaseExpression]:
    """The arguments of the torch call `call` (its callee resolved to `qualified`) that only
    a tensor can be: the items of `torch.cat([a, b])`, the operands of `torch.einsum(eq, a, b)`,
    `torch.matmul(a, b)`, the input of `F.pad(x, ...)`, `src` and `index` of torch_scatter's
    reductions, and `weight=`/`pos_weight=` of torch.nn's losses and layers."""
    found: List[cst.BaseExpression] = []
    args = positional_args(call)
    if qualified in _SEQUENCE_OPS and args and isinstance(args[0].value, (cst.List, cst.Tuple)):
        found.extend(e.value for e in args[0].value.elements if isinstance(e, cst.Element))
    elif qualified == "torch.einsum" and args and isinstance(args[0].value, (cst.SimpleString, cst.FormattedString)):
        found.extend(arg.value for arg in args[1:] if not arg.star)
    elif qualified in _TENSOR_OPERAND_OPS or (qualified.startswith("torch.nn.functional.")
                                              and qualified.rsplit(".", 1)[-1] in _FUNCTIONAL_ON_INPUT):
        found.extend(arg.value for arg in args[:_TENSOR_OPERAND_OPS.get(qualified, 1)] if not arg.star)
    elif qualified.startswith("torch_scatter."):
        found.extend(arg.value for arg in args[:2] if not arg.star)  # `scatter(src, index, ...)`
    if qualified.startswith("torch.nn."):
        found.extend(arg.value for arg in call.args if arg.keyword is not None
                     and arg.keyword.value in _TENSOR_KEYWORDS)
    return found


def input_tensor_operand(qualified: str, call: cst.Call) -> Optional[cst.BaseExpression]:
    """The `input` of a torch op that takes nothing else (`torch.where(mask)`, `torch.exp(x)`)."""
    if qualified not in _INPUT_TENSOR_OPS and qualified not in _TENSOR_OPERAND_OPS \
            and not (qualified.startswith(("torch.linalg.", "torch.fft.", "torch.special."))
                     and qualified.rsplit(".", 1)[-1][:1].islower()):
        return None  # (`torch.linalg.eigh(M)`, `torch.fft.rfft(x)`: their input is a tensor)
    args = positional_args(call)
    return args[0].value if args and not args[0].star else None


def operand_root(node: cst.CSTNode) -> Optional[str]:
    """The name an operand that must be a tensor is computed from, where that makes the name
    a tensor too: `x` of `x > 0`, `~x`, `-x`, `x.sum(dim=1)`, `x[:, 0]` (a list or a number has
    no such result, a NumPy array's is no tensor). Not `xs[0]`: an item of a list of tensors."""
    while True:
        if isinstance(node, cst.Name):
            return node.value
        if isinstance(node, cst.Comparison) and len(node.comparisons) == 1 \
                and not isinstance(node.comparisons[0].operator, (cst.In, cst.NotIn, cst.Is, cst.IsNot)):
            node = node.left
        elif isinstance(node, cst.UnaryOperation) and not isinstance(node.operator, cst.Not):
            node = node.expression
        elif isinstance(node, cst.Subscript) and is_array_index(node):
            node = node.value
        elif isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) \
                and node.func.attr.value in _SAME_KIND_METHODS:
            node = node.func.value
        else:
            return None


# Methods that tensors and arrays share, whose result is an array where the receiver is one
# (no list, dict, number or module has them).
_SAME_KIND_METHODS = frozenset({"sum", "mean", "abs", "max", "min", "float", "double", "long", "int", "bool",
                                "squeeze", "unsqueeze", "reshape", "view", "flatten", "transpose", "clone",
                                "detach", "contiguous", "cumsum", "prod", "std", "any", "all"})


# Calls that give a Python number: `float(x)`, `len(xs)`, `x.item()`.
_NUMBER_BUILTINS = frozenset({"float", "int", "len", "sum", "max", "min", "abs", "round", "pow", "bool", "complex"})
_NUMBER_METHODS = frozenset({"item", "sum", "mean", "max", "min", "std", "prod", "count", "index", "get"})

_LOADER_RE = re.compile(r"(?<!down)loader(s)?(_?\d+)?(_(train|training|test|val|valid|validation|eval|dev))?$"
                        r"|(^|_)dl$|^batches$|(^|_)dataset(_(train|test|val|valid|eval))?$",
                        re.I)  # (`data_loader_train`: scvi-tools; iterating a dataset gives its samples)
# An iterator over a loader, as `next()` reads it: `loader_iter`, `self.train_iter`, `data_iterator`.
_LOADER_ITERATOR_RE = re.compile(r"(loader|dl)_?iter(ator)?$|^(train|val|valid|test|eval|data)_?iter(ator)?$",
                                 re.I)
# Annotated containers whose items are tensors: `Tuple[torch.Tensor, ...]`, `List[Tensor]`.
_TENSOR_CONTAINERS = frozenset({"Tuple", "List", "Sequence", "Iterable", "Iterator", "tuple", "list"})
# Generic types whose first argument is not the annotated value's own type.
_TYPING_GENERICS = _TENSOR_CONTAINERS | {"Dict", "dict", "Mapping", "MutableMapping", "Union", "Callable", "Type",
                                         "type", "Set", "set", "FrozenSet", "frozenset", "Generator", "Awaitable",
                                         "Optional", "Literal", "DefaultDict", "OrderedDict", "Deque", "Counter"}
# Names of shapes (`img_shape`, `sizes`): `torch.tensor(...)` of one has dimensions. (Not ids or
# indices: mmtracking's `torch.tensor(self.confirmed_ids)[inds]` is indexed with NumPy's matches.)
_SEQUENCE_NAME_RE = re.compile(r"(^|_)(shape|shapes|sizes|dims)$", re.I)
# A parameter with this name is a batch of a data loader (`def training_step(self, batch, i)`).
_BATCH_PARAMETERS = frozenset({"batch"})

# Names that say a model (which may carry a `dtype`, as transformers' do), not a tensor.
_MODEL_NAME_RE = re.compile(r"(^|_)(model|net|network|module|encoder|decoder|generator|discriminator|"
                            r"backbone|classifier|critic|actor|policy|teacher|student)s?"
                            # (not what makes, configures or feeds one: `policy_creator`, `model_cfg`,
                            # `generator_optimizer`, `model_path`)
                            r"(?!\w*_(?:creator|factory|builder|maker|optimizer|optim|opt|config|cfg|conf|"
                            r"name|path|dir|file|kwargs|args|params|type|class|cls|fn|func|loss|lr|"
                            r"scheduler|ckpt|checkpoint|url|id|spec)s?$)($|_|\d)", re.I)


def _moved_name(node: cst.CSTNode) -> Optional[str]:
    """`x` of `x.cuda()` or `x.to(...)`."""
    if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value in ("cuda", "to") \
            and isinstance(node.func.value, cst.Name):
        return node.func.value.value
    return None


def _is_a_shape(value: cst.BaseExpression) -> bool:
    """`x.shape`, `x.size()`, `x.shape[:2]`: a tuple of numbers."""
    if isinstance(value, cst.Subscript) and len(value.slice) == 1 and isinstance(value.slice[0].slice, cst.Slice):
        value = value.value
    if isinstance(value, cst.Attribute):
        return value.attr.value == "shape"
    return isinstance(value, cst.Call) and not value.args and isinstance(value.func, cst.Attribute) \
        and value.func.attr.value == "size"


def names_a_model(node: cst.CSTNode) -> bool:
    """`model`, `self.encoder`, `policy_net`: a name that says it holds a network."""
    return isinstance(node, (cst.Name, cst.Attribute)) and bool(_MODEL_NAME_RE.search(last_identifier(node) or ""))


# Wrappers a loop iterates through, handing out what they are given (`tqdm(loader)`).
LOOP_WRAPPERS = frozenset({"enumerate", "tqdm", "iter", "progress_bar", "track"})
# ... of which those that yield the batches themselves (not `(i, batch)` pairs)
_BATCH_ITERATORS = LOOP_WRAPPERS - {"enumerate"}


def _is_builtin_call(node: cst.CSTNode, name: str) -> bool:
    """`name(arg, ...)` with the builtin's plain name (`next(it)`, `iter(loader)`)."""
    return isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value == name \
        and bool(node.args) and node.args[0].star == ""


def _may_narrow(test: cst.BaseExpression) -> bool:
    """`isinstance(...)` or `....is_tensor(...)`, alone or in an `and`."""
    if isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.And):
        return _may_narrow(test.left) or _may_narrow(test.right)
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        return _may_narrow(test.expression)  # `if not torch.is_tensor(w):`: not a tensor there
    return isinstance(test, cst.Call) and (
        (isinstance(test.func, cst.Name) and test.func.value == "isinstance")
        or (isinstance(test.func, cst.Attribute) and test.func.attr.value == "is_tensor"))


# What an object's own move returns: the object, moved (`signal = signal.to("cpu")`).
_OBJECT_MOVES = frozenset({"to", "cpu", "cuda", "float", "half", "double"})


@dataclass
class ScopeKinds:
    """One function's (or the module's) kinds, in statement order."""

    names: Dict[str, Optional[str]] = field(default_factory=dict)  # name or dotted name -> kind
    tensor_uses: Set[str] = field(default_factory=set)  # names used with a tensor-only method
    batches: Set[str] = field(default_factory=set)  # `batch` of `for batch in loader:`
    # the parts a batch was unpacked into (`inputs, targets = batch`), themselves unpacked again
    # into tensors (`src, trg, _ = inputs` of a batch of tuples)
    batch_parts: Set[str] = field(default_factory=set)
    fixed: Set[str] = field(default_factory=set)  # names bound to a fixed-device tensor
    made: Set[str] = field(default_factory=set)  # names bound to a tensor made here, on any device
    buffers: Set[str] = field(default_factory=set)  # `self.<name>` registered as a buffer here
    loaders: Set[str] = field(default_factory=set)  # names bound from `DataLoader(...)`
    # names bound to a loader's numbered batches: `pbar = enumerate(train_loader)`, `pbar = tqdm(pbar)`
    enumerated: Set[str] = field(default_factory=set)
    tensor_loaders: Set[str] = field(default_factory=set)  # ... whose `collate_fn` returns a tensor
    pieces: Set[str] = field(default_factory=set)  # `batches = torch.split(x, n)`: tensors to iterate
    tensor_dicts: Set[str] = field(default_factory=set)  # `enc = tokenizer(..., return_tensors="pt")`
    sliced: Set[str] = field(default_factory=set)  # names indexed like an array: `x[i, :]`
    # names used in arithmetic (`v[1:] * not_dones`) or bound from a method that arrays and
    # tensors share (`m = v.data.repeat(n)`): numbers, arrays or tensors; of these, only a tensor
    # has `.to()` (modules, batches and PyG graphs do no arithmetic and have no such methods)
    array_like: Set[str] = field(default_factory=set)
    module_inputs: Set[str] = field(default_factory=set)  # names passed to a known module: `model(x)`
    # name -> the name its value was computed from the way `operand_root` reads (`s = x.sum(2) > 1`):
    # when torch takes the value only as a tensor, that name held one too
    computed_from: Dict[str, str] = field(default_factory=dict)
    # how many times each name has been bound so far (its binding's number), and the numbers of
    # the bindings a tensor-only method of their own value rebound (`x = x.permute(1, 0, 2)`):
    # what the name held under those was a tensor
    bindings: Dict[str, int] = field(default_factory=dict)
    were_tensors: Dict[str, Set[int]] = field(default_factory=dict)
    # names bound to a tensor in one arm of an `if` and to a value of unknown kind in the other
    # (`if isinstance(data, Tensor): x = data` / `else: x = extract(data)`): a tensor on one path
    tensor_arms: Dict[str, Tuple[Tuple[int, bool], ...]] = field(default_factory=dict)  # where last bound one
    tensor_on_another_arm: Set[str] = field(default_factory=set)
    # names used as a module: `model.eval()`, `model.parameters()` (not `.train()`: trainers have one)
    module_uses: Set[str] = field(default_factory=set)
    # names called (`model(x)`) and names moved (`model.cuda()`): a tensor is never called, so
    # a name that is both is a module (or a pipeline, whose `.to()` also works in place)
    called: Set[str] = field(default_factory=set)
    moved: Set[str] = field(default_factory=set)
    itemized: Set[str] = field(default_factory=set)  # names with an item kind in `names`: `d["k"]`
    keyed_by: Dict[str, Set[str]] = field(default_factory=dict)  # `key` -> the items `d[key]` in `names`
    # name -> the class it was built from: `stopper = EarlyStopping(...)` -> `EarlyStopping`
    instances: Dict[str, cst.BaseExpression] = field(default_factory=dict)
    # `transform = T.Compose([T.Resize(256), T.ToTensor()])`: calling it makes a tensor
    tensor_transforms: Set[str] = field(default_factory=set)


class ValueKinds:
    """Kept by the `Analyzer` during its walk; rules ask `kind_of(expr)`."""

    def __init__(self, analyzer: KindsContext) -> None:
        self.ctx = analyzer
        # (class, attribute) -> the kinds `self.<attribute> = ...` in the class's `__init__` assigned
        self.attributes: Dict[Tuple[str, str], List[Optional[str]]] = {}
        self._module_annotations: Dict[int, bool] = {}  # id(annotation) -> names a module class of the project
        # (class, attribute) -> is every `__init__` assignment a torch layer that outputs one tensor
        self.tensor_layers: Dict[Tuple[str, str], bool] = {}
        self._run_time = False  # `is_fixed_at_run_time`: no method counts as construction time
        self._narrowing = 0  # enclosing `if` tests that may narrow a name to a tensor
        self._type_tested: Dict[int, FrozenSet[str]] = {}  # id of a function -> `_type_tested_names`

    # ------------------------------------------------------------ queries

    def facts(self, scope: Optional["Scope"] = None) -> ScopeKinds:
        """The kinds of the innermost function (or module) scope."""
        return (scope or self.ctx.function_scope()).note("kinds", ScopeKinds)

    def is_tensor(self, node: cst.CSTNode) -> bool:
        return self.kind_of(node) == TENSOR

    def is_module(self, node: cst.CSTNode) -> bool:
        return self.kind_of(node) == MODULE

    def kind_of(self, node: cst.CSTNode) -> Optional[str]:
        if isinstance(node, cst.Name):
            return self._name_kind(node.value) or (TENSOR if self._narrowed_to_tensor(node.value) else None)
        if isinstance(node, cst.Attribute):
            attr = node.attr.value
            dotted = dotted_name(node)
            if dotted is not None:
                kind = self.facts().names.get(dotted)
                if kind is not None:
                    return kind
            if attr in TENSOR_ATTRIBUTES and self.kind_of(node.value) == TENSOR:
                return TENSOR
            if is_device_name(attr):
                return DEVICE
            return TENSOR if dotted is not None and self._narrowed_to_tensor(dotted) else None
        if isinstance(node, cst.Subscript):
            return self._subscript_kind(node)
        if isinstance(node, cst.BinaryOperation):
            kinds = (self.kind_of(node.left), self.kind_of(node.right))
            return TENSOR if TENSOR in kinds and MODULE not in kinds else None
        if isinstance(node, cst.UnaryOperation):
            return TENSOR if self.kind_of(node.expression) == TENSOR else None
        if isinstance(node, cst.Comparison) and len(node.comparisons) == 1 and not isinstance(
                node.comparisons[0].operator, (cst.In, cst.NotIn, cst.Is, cst.IsNot)):
            # `torch.rand(n) < p`: a comparison of a tensor is a mask, where the tensor is
            kinds = (self.kind_of(node.left), self.kind_of(node.comparisons[0].comparator))
            return TENSOR if TENSOR in kinds and MODULE not in kinds else None
        if isinstance(node, cst.Call):
            return self._call_kind(node)
        if isinstance(node, cst.IfExp):
            # `y if f is None else torch.cat([f, y])`: both arms hold the same kind of thing
            kinds = (self.kind_of(node.body), self.kind_of(node.orelse))
            return TENSOR if TENSOR in kinds and MODULE not in kinds else None
        return None

    def _narrowed_to_tensor(self, dotted: str) -> bool:
        """Inside `if torch.is_tensor(x):` or `if isinstance(x, torch.Tensor):` (also one
        operand of an `and`), in this function: `x` holds a tensor there."""
        if not self._narrowing:
            return False  # most code: no such test around, no walk up the stack
        return any(isinstance(node, cst.If) and in_body and self._tests_tensor(test, dotted)
                   for node, test, in_body in self.ctx.enclosing_tests())

    def _type_tested_names(self) -> FrozenSet[str]:
        """The names the current function tests with `torch.is_tensor(x)` or `isinstance(x, ...)`."""
        function = self.ctx.current_function
        if function is None:
            return frozenset()
        found = self._type_tested.get(id(function))
        if found is None:
            found = self._type_tested[id(function)] = frozenset(
                node.args[0].value.value for node in descendants(function)
                if isinstance(node, cst.Call) and node.args and isinstance(node.args[0].value, cst.Name)
                and self._is_tensor_test(node))
        return found

    def _narrowed_away_from_tensor(self, dotted: str) -> bool:
        """In the body of `if not torch.is_tensor(x):` or the `else` of `if torch.is_tensor(x):`."""
        for node, test, in_body in self.ctx.enclosing_tests():
            if not isinstance(node, cst.If):
                continue
            if in_body and isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not) \
                    and self._tests_tensor(test.expression, dotted):
                return True
            if not in_body and isinstance(test, cst.Call) and self._tests_tensor(test, dotted):
                return True
        return False

    def visit_If(self, node: cst.If) -> None:
        self._narrowing += _may_narrow(node.test)

    def leave_If(self, node: cst.If) -> None:
        self._narrowing -= _may_narrow(node.test)

    def _tests_tensor(self, test: cst.BaseExpression, dotted: str) -> bool:
        return any(dotted_name(call.args[0].value) == dotted for call in self._tensor_tests(test))

    def leave_Assert(self, node: cst.Assert) -> None:
        # `assert isinstance(d["tokens"], torch.Tensor)`: a tensor from here on
        for call in self._tensor_tests(node.test):
            target = call.args[0].value
            if isinstance(target, cst.Name) or (isinstance(target, cst.Subscript) and subscript_key(target)):
                self.bind(target, TENSOR)

    def _tensor_tests(self, test: cst.BaseExpression) -> List[cst.Call]:
        """The calls of `test` (alone or in an `and`) that say their first argument is a
        tensor: `torch.is_tensor(x)`, `isinstance(x, torch.Tensor)`."""
        if isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.And):
            return self._tensor_tests(test.left) + self._tensor_tests(test.right)
        return [test] if isinstance(test, cst.Call) and self._is_tensor_test(test) else []

    def _is_tensor_test(self, test: cst.Call) -> bool:
        if not test.args:
            return False
        callee = self.ctx.resolve(test.func)
        if callee == "torch.is_tensor":
            return len(test.args) == 1
        if isinstance(test.func, cst.Name) and test.func.value == "isinstance" and len(test.args) == 2:
            types = test.args[1].value
            elements = [e.value for e in types.elements] if isinstance(types, cst.Tuple) else [types]
            return bool(elements) and all(self.ctx.resolve(e) in ("torch.Tensor", "torch.nn.Parameter")
                                          for e in elements)
        return False

    def _subscript_kind(self, node: cst.Subscript) -> Optional[str]:
        """`t[0]` of a tensor; `batch["x"]`, `batch[0]` of a data-loader batch; `enc["input_ids"]`
        of `tokenizer(..., return_tensors="pt")`; an item assigned a tensor (`d["k"] = t`); and
        anything indexed like an array with a slice among several indices (`x[:, -n:]`)."""
        if self.kind_of(node.value) == TENSOR:
            return TENSOR
        key = subscript_key(node)
        if key is not None:
            scope = self._binding_scope(re.split(r"[.\[]", key)[0])
            for kinds in (self.facts(), scope.notes.get("kinds") if scope is not None else None):
                if kinds is not None and kinds.names.get(key) is not None:
                    return kinds.names[key]
        if isinstance(node.value, cst.Name) and (self.is_batch(node.value.value)
                                                  or self._in_set(node.value.value, "tensor_dicts")):
            return TENSOR
        if is_array_index(node):
            return TENSOR
        return None

    def _in_set(self, name: str, which: str) -> bool:
        scope = self._binding_scope(name)
        kinds = scope.notes.get("kinds") if scope is not None else None
        return kinds is not None and name in getattr(kinds, which)

    def class_of(self, node: cst.CSTNode) -> Optional[cst.BaseExpression]:
        """The class expression a name was built from (`EarlyStopping` for `stopper` after
        `stopper = EarlyStopping(...)`), when that is all that is known of it."""
        if not isinstance(node, cst.Name):
            return None
        scope = self._binding_scope(node.value)
        kinds = scope.notes.get("kinds") if scope is not None else None
        return kinds.instances.get(node.value) if kinds is not None else None

    def is_batch(self, name: str) -> bool:
        """A whole batch of a data loader: `batch` of `for batch in loader:`, or a parameter
        called `batch` (Lightning's `training_step(self, batch, batch_idx)`)."""
        scope = self._binding_scope(name)
        if scope is None:
            return False
        kinds = scope.notes.get("kinds")
        if kinds is not None and name in kinds.batches:
            return True
        return name in _BATCH_PARAMETERS and name in scope.params and isinstance(scope.node, cst.FunctionDef) \
            and (kinds is None or name not in kinds.names)

    # ------------------------------------------------------------ results of the file's functions, attributes

    def attribute_kind(self, class_name: str, attribute: str) -> Optional[str]:
        """The kind of `self.<attribute>` when every assignment of it in `__init__` agrees.
        Only `__init__` counts: the fast path keeps it beside any kept method, and other
        methods may be left out of the parse."""
        kinds = set(self.attributes.get((class_name, attribute), [None]))
        return kinds.pop() if len(kinds) == 1 else None

    def is_stored_callable(self, node: cst.CSTNode) -> bool:
        """`self.add_noise` of `self.add_noise = NoiseInjection(n)` in `__init__`: called, an
        attribute the constructor stored is an object (a sub-module), whatever its name says,
        not a method of the class."""
        attribute = self.self_attribute(node)
        return attribute is not None and attribute in self.attributes

    def self_attribute(self, node: cst.CSTNode) -> Optional[Tuple[str, str]]:
        """(class, attribute) for `self.<attribute>` inside a method."""
        info = self.ctx.current_class
        if info is not None and isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name) \
                and node.value.value == "self":
            return info.name, node.attr.value
        return None

    def _call_kind(self, call: cst.Call) -> Optional[str]:
        if self._is_dynamic_torch_function(call):
            return TENSOR
        attribute = self.self_attribute(call.func)
        if attribute is not None and self.tensor_layers.get(attribute):
            return TENSOR  # `self.fc(x)` of `self.fc = nn.Linear(3, 4)`
        qualified = self.ctx.resolve(call.func)
        if qualified is not None:
            if qualified == "torch.device":
                return DEVICE
            head, _, last = qualified.rpartition(".")
            if head == "torch" and (last in LEGACY_TENSOR_TYPES or returns_tensor(last)):
                return TENSOR  # also `torch.max(a, b)`, `torch.diagonal(x)`: torch's functions compute tensors
            if qualified in VARIABLE and call.args:
                return TENSOR  # `Variable(t)` is t, and it takes nothing but a tensor
            if head == "torch.nn.functional" or LIBRARY_TENSORS.get(qualified, ()) is None:
                return TENSOR
            if torch_nn_class(qualified) is not None:
                return TENSOR if last in NN_NON_MODULES else MODULE
            if qualified.startswith("torchvision.models.") and last[:1].islower():
                return MODULE
            return self._project_call_kind(call)
        if isinstance(call.func, cst.Attribute):
            method = call.func.attr.value
            receiver = self.kind_of(call.func.value)
            if receiver == TENSOR:
                return None if method in NOT_TENSOR_METHODS else TENSOR
            if method in _TENSOR_CONVERTERS:
                return TENSOR  # `self._data.to_tensor()`: what the method says it returns
            if receiver == MODULE:
                return MODULE if method in MODULE_METHODS else None
            if method not in NOT_TENSOR_METHODS and (method in TENSOR_ONLY_METHODS or self._value_method(call)
                                                     or _views_a_size(call) or (
                    _takes_dim(call) and not isinstance(call.func.value, (cst.Name, cst.Attribute)))):
                return TENSOR  # `(x ** 2).cumsum(dim=1)`: numpy says axis=
            return self._project_call_kind(call)  # `self._make_mask(n)`, `models.Net()`
        if isinstance(call.func, cst.Name) and call.func.value in self.ctx.module_classes:
            return MODULE
        if self._makes_tensors(call.func) or (isinstance(call.func, cst.Name)
                                              and self._in_set(call.func.value, "tensor_transforms")):
            return TENSOR  # `transform(image)`
        return self._project_call_kind(call)

    def _makes_tensors(self, transform: cst.BaseExpression) -> bool:
        """`T.ToTensor()`, or a `T.Compose([...])` holding one: torchvision's transforms that
        turn an image into a tensor."""
        if not isinstance(transform, cst.Call):
            return False
        qualified = self.ctx.resolve(transform.func) or ""
        if qualified.startswith("torchvision.transforms.") and qualified.endswith(("ToTensor", "PILToTensor")):
            return True
        args = positional_args(transform)
        return qualified.startswith("torchvision.transforms.") and qualified.endswith(".Compose") and bool(args) \
            and isinstance(args[0].value, (cst.List, cst.Tuple)) \
            and any(self._makes_tensors(element.value) for element in args[0].value.elements)

    def _project_call_kind(self, call: cst.Call) -> Optional[str]:
        """`Net(...)` or `make_mask(...)` imported from another file of the project, or a
        function or method of this file (`self._make_mask(n)`) whose returns agree."""
        if self.ctx.project_says(call.func, "is_module_class"):
            return MODULE
        returned = self.ctx.project_says(call.func, "returns")
        return returned if returned in (TENSOR, MODULE) else None

    def _binding_scope(self, name: str) -> Optional["Scope"]:
        """The innermost function (or module) scope that binds `name`."""
        for scope in reversed(self.ctx.scopes):
            if scope.kind != "class" and name in scope.bindings:  # class bodies do not enclose methods
                return scope
        return None

    def _name_kind(self, name: str) -> Optional[str]:
        scope = self._binding_scope(name)
        if scope is None:
            return None
        kinds = scope.notes.get("kinds")
        if kinds is not None:
            kind = kinds.names.get(name)
            if kind == TENSOR and self._narrowing and self._narrowed_away_from_tensor(name):
                return None  # `w = aweights` of a `Tensor | None`, in `if not torch.is_tensor(w):`
            if kind is not None:
                return kind
            if name in kinds.tensor_uses and name not in kinds.instances:
                # (not an object of a class that mimics tensors: audiotools' `AudioSignal(path)`
                # has `.stft()`, `.numpy()` and an in-place `.cpu()`)
                return TENSOR
        if name in scope.params and isinstance(scope.node, cst.FunctionDef):
            kind = annotation_kind(scope.node, name, self.ctx.resolve)
            if kind is None and self._annotated_with_a_module_class(scope.node, name):
                return MODULE  # `code_generator: CodeGenerator`, a module class of the project
            if kind == TENSOR and self._narrowing and self._narrowed_away_from_tensor(name):
                return None  # `w: Tensor | None` in `if not torch.is_tensor(w):` is a list or an array
            return kind
        return None

    def _annotated_with_a_module_class(self, function: cst.FunctionDef, name: str) -> bool:
        params = function.params
        annotation = next((param.annotation.annotation for param in (*params.posonly_params, *params.params,
                                                                     *params.kwonly_params)
                           if param.name.value == name and param.annotation is not None), None)
        if not isinstance(annotation, (cst.Name, cst.Attribute)):
            return False
        if isinstance(annotation, cst.Name) and annotation.value in self.ctx.module_classes:
            return True  # a module class of this file, defined above
        known = self._module_annotations.get(id(annotation))
        if known is None:  # (asked for every read of the parameter: the index is asked once)
            known = bool(self.ctx.project_says(annotation, "is_module_class"))
            self._module_annotations[id(annotation)] = known
        return known

    # ------------------------------------------------------------ fixed-device tensors

    def is_fixed_tensor(self, node: cst.CSTNode, any_device: bool = False) -> bool:
        """A tensor whose device was fixed where it was made rather than taken from an
        input or a run-time device: a factory without `device=` (`torch.ones(3)`,
        `torch.tensor([...])`, `torch.from_numpy(a)`, `torch.FloatTensor(n)`), what
        tensor ops, method chains and arithmetic make of such tensors only
        (`torch.triu(torch.ones(n, n))`, `torch.arange(n).float()[None]`), also after
        `.cuda()` or `.to("cuda")` (still one fixed device), or after `.to(device)` while
        a module is built, and lists or dicts of them. Not: `device=` given,
        `.to(device)` at run time, `.type_as(x)`, `x.new_zeros(...)`, 0-dim
        `torch.tensor(2.0)`.

        `any_device=True` asks instead whether the tensor is *made* here, whatever device
        it was made on: a factory with `device=` or `**kwargs` counts too, and so does
        any move of such a tensor. While a module is built that is what matters: a plain
        attribute stays on the device it was made on when the module moves later."""
        # (by exact class: libcst's node classes are ABCs, and `isinstance` against one a node
        # is not goes through `abc`; this runs for every value bound or compared)
        kind = type(node)
        if kind is cst.Name:
            scope = self._binding_scope(node.value)
            kinds = scope.notes.get("kinds") if scope is not None else None
            return kinds is not None and node.value in (kinds.made if any_device else kinds.fixed)
        if kind is cst.Attribute:
            if node.attr.value in TENSOR_ATTRIBUTES:
                return self.is_fixed_tensor(node.value, any_device)
            # `self.P_hat` set earlier in this method (`self.batch = self.P_hat.repeat(b, 1, 1)`)
            if self.self_attribute(node) is None:
                return False
            kinds = self.ctx.function_scope().notes.get("kinds")
            return kinds is not None and f"self.{node.attr.value}" in (kinds.made if any_device else kinds.fixed)
        if kind is cst.Subscript:
            if any_device and _indexes_one_element(node) and self._is_buffer(node.value):
                return False  # `self.target_ids[0]`: a 0-dim element, which mixes with any device
            return self.is_fixed_tensor(node.value, any_device)
        if kind is cst.UnaryOperation:
            return self.is_fixed_tensor(node.expression, any_device)
        if kind is cst.IfExp:
            return self.is_fixed_tensor(node.body, any_device) or self.is_fixed_tensor(node.orelse, any_device)
        if kind is cst.BooleanOperation:  # `thresholds or torch.linspace(0, 1, 51)`: the default is one
            return self.is_fixed_tensor(node.left, any_device) or self.is_fixed_tensor(node.right, any_device)
        if kind is cst.BinaryOperation:
            return self._only_fixed_tensors([node.left, node.right], any_device)
        if kind is cst.Comparison:  # `torch.rand(n) > p`: a mask on the same device
            return self._only_fixed_tensors([node.left, *(c.comparator for c in node.comparisons)], any_device)
        if kind in (cst.List, cst.Tuple, cst.Set):
            return any(self.is_fixed_tensor(e.value, any_device) for e in node.elements)
        if kind is cst.Dict:
            return any(isinstance(e, cst.DictElement) and self.is_fixed_tensor(e.value, any_device)
                       for e in node.elements)
        if kind in (cst.ListComp, cst.SetComp):
            return self.is_fixed_tensor(node.elt, any_device)
        if kind is cst.DictComp:
            return self.is_fixed_tensor(node.value, any_device)
        if kind is cst.Call:
            return self._call_is_fixed(node, any_device)
        return False

    def _is_buffer(self, node: cst.CSTNode) -> bool:
        """`self.<name>` registered as a buffer earlier in this method."""
        kinds = self.ctx.function_scope().notes.get("kinds")
        return kinds is not None and self.self_attribute(node) is not None \
            and f"self.{node.attr.value}" in kinds.buffers  # type: ignore[attr-defined]

    def is_fixed_at_run_time(self, node: cst.CSTNode) -> bool:
        """`is_fixed_tensor` as if the code ran after the module was built, whatever the
        enclosing method is called: what a helper returns to `forward` (`_make_mask`
        reads like a builder, but a `.to(device)` in it follows its caller's device)."""
        self._run_time = True
        try:
            return self.is_fixed_tensor(node)
        finally:
            self._run_time = False

    def _only_fixed_tensors(self, operands, any_device: bool = False) -> bool:
        """Some operand is a fixed-device tensor and none is a tensor from elsewhere."""
        values = []
        for operand in operands:
            if isinstance(operand, (cst.List, cst.Tuple)):
                values.extend(element.value for element in operand.elements)
            else:
                values.append(operand)
        fixed = [self.is_fixed_tensor(value, any_device) for value in values]
        return any(fixed) and not any(not f and self.kind_of(v) == TENSOR for v, f in zip(values, fixed))

    def _joins_parameters(self, call: cst.Call) -> bool:
        """`torch.cat([p.flatten() for p in m.parameters()])`: copies of a module's parameters
        (or buffers) joined into one new tensor."""
        sequence = call.args[0].value if call.args else None
        return isinstance(sequence, (cst.ListComp, cst.GeneratorExp)) and any(
            parameter_loop_targets(clause.target, clause.iter) for clause in comprehension_clauses(sequence.for_in))

    def _is_dynamic_torch_function(self, call: cst.Call) -> bool:
        """`getattr(torch, window)(n)`: a function of torch's namespace picked by name
        (`torch.hann_window`); called like that it makes a tensor."""
        inner = call.func
        return (isinstance(inner, cst.Call) and isinstance(inner.func, cst.Name) and inner.func.value == "getattr"
                and len(inner.args) >= 2 and self.ctx.resolve(inner.args[0].value) == "torch")

    def _call_is_fixed(self, call: cst.Call, any_device: bool = False) -> bool:
        if self._is_dynamic_torch_function(call):
            return any_device or (keyword(call, "device") is None and not has_star_kwargs(call))
        qualified = self.ctx.resolve(call.func)
        if qualified in VARIABLE:
            if any_device and self._in_construction() and positional_args(call):
                # `self.priors = Variable(self.priorbox.forward())` while the module is built:
                # whatever it wraps, a tensor kept where it was then (ssd.pytorch; not an empty
                # placeholder, `Variable(requires_grad=True)`)
                return True
            return bool(call.args) and self.is_fixed_tensor(call.args[0].value, any_device)  # `Variable(t)` is t
        if any_device and self._in_construction() and not (qualified or "").startswith("torch.") \
                and self.self_attribute(call.func) is None and self.ctx.project_says(call.func, "returns") == TENSOR:
            # `self.beta = linear_schedule(n)`, a function of the project that returns a tensor (what
            # the class's own methods return is `ClassInfo.method_returns`'s to judge)
            return True
        if qualified is not None:
            head, _, last = qualified.rpartition(".")
            if head != "torch" and head != "torch.nn.functional":
                return False
            if not any_device and (keyword(call, "device") is not None or has_star_kwargs(call)):
                return False
            if last in FACTORIES:
                if any_device and _on_a_chosen_device(call):
                    # `torch.tensor(eps, device=d)`: a 0-dim tensor mixes with other devices only
                    # from the CPU; on a GPU it stays a tensor of that one device
                    return True
                # construction-time arguments are Python data; elsewhere a parameter may be a
                # tensor, unless its annotation says it is data (`cost: Optional[List[float]]`)
                construction = self._in_construction()
                maybe_tensors = () if construction else self._maybe_tensor_params()
                return not self.is_scalar_factory(last, call, maybe_tensors, calls_are_data=construction and any_device)
            if head == "torch" and last in ("from_numpy", "frombuffer"):
                return True
            if head == "torch" and last in LEGACY_TENSOR_TYPES:
                return bool(call.args)  # `torch.Tensor()`: an empty placeholder, no data of its own
            if last.endswith("_like"):
                # made here whatever its model is: `zeros_like(self.weight)` while the module is
                # built is a new plain tensor on the weight's device of that moment
                return bool(call.args) and (self.is_fixed_tensor(call.args[0].value, any_device) or (
                    any_device and self._in_construction() and self.kind_of(call.args[0].value) == TENSOR))
            if any_device and qualified in _SEQUENCE_OPS and self._in_construction() and self._joins_parameters(call):
                # `torch.cat([p.flatten() for p in self.net.parameters()])` while the module is
                # built: a new tensor, where the parameters were then
                return True
            if head == "torch.nn.functional" or last in TENSOR_FUNCTIONS or (head == "torch" and returns_tensor(last)):
                # `torch.pow(x - w / 2, 2)` of a fixed tensor: computed where its operands are
                return self._only_fixed_tensors([a.value for a in call.args if a.keyword is None], any_device)
            return False
        if not isinstance(call.func, cst.Attribute):
            return False
        method, receiver = call.func.attr.value, call.func.value
        if method.startswith("new_"):
            # `signal.new_zeros(n, 1)`: on the device of a tensor made here, so made here too
            return any_device and method not in NOT_TENSOR_METHODS and self.is_fixed_tensor(receiver, True)
        if method in NOT_TENSOR_METHODS:
            return False
        if any_device:
            if method in ("to", "cuda", "clone", "detach") and self._in_construction() \
                    and self.kind_of(receiver) == TENSOR:
                # `self.mask = self._make_mask(n).to("cuda")`: placed while the module is built;
                # `self.phase = self.weight.detach().clone()`: a plain copy of a parameter
                return True
            return self.is_fixed_tensor(receiver, True)  # moved or not, made here
        if method == "type_as":
            return False
        if method == "to":
            target = call.args[0].value if positional_args(call) else None
            device = keyword(call, "device")
            if device is not None:
                target = device.value
            if target is not None and not is_dtype(target, self.ctx.resolve) \
                    and not (string_value(target) or "").startswith("cuda") \
                    and (not self._in_construction() or self.kind_of(target) == TENSOR):
                # .to(device), .to(x): follows a run-time device; but moved once while the
                # module is built, it stays on that device when the module moves
                return False
        return self.is_fixed_tensor(receiver)

    def _maybe_tensor_params(self) -> Container[str]:
        params = self.ctx.function_scope().params
        function = self.ctx.current_function
        if function is None or not params:
            return params
        annotated = [p for p in (*function.params.posonly_params, *function.params.params,
                                 *function.params.kwonly_params) if p.annotation is not None]
        data = {p.name.value for p in annotated if annotates_python_data(p.annotation.annotation)}
        return params - data if data else params

    def _in_construction(self) -> bool:
        """In `__init__` or a method that builds the module: arguments are Python data."""
        function, info = self.ctx.current_function, self.ctx.current_class
        if function is None or info is None or self._run_time:
            return False
        return info.is_init_time(function.name.value)

    def is_scalar_factory(self, factory: str, call: cst.Call, maybe_tensors: Container[str] = (),
                          calls_are_data: bool = False) -> bool:
        """Calls whose result is not a CPU tensor that can meet the model's tensors:
        `torch.tensor(0.5)` (0-dim, mixes with any device), `torch.as_tensor(t)` of a
        tensor (keeps t's device), `torch.empty(0)` (a placeholder). `maybe_tensors`:
        names that may hold a tensor although their kind is unknown (parameters)."""
        args = positional_args(call)
        if not args:
            return False
        requires_grad = keyword(call, "requires_grad")
        if requires_grad is not None and not (isinstance(requires_grad.value, cst.Name)
                                              and requires_grad.value.value == "False"):
            return False  # made to be trained: a model's tensor, not a constant
        value = args[0].value
        if factory not in ("tensor", "as_tensor"):
            # `torch.empty(0)`, `torch.empty([0])`: no elements, a placeholder; and
            # `torch.full((), v)`: of an empty size, a 0-dim tensor
            return (number_value(value) == 0 and len(args) == 1) or (
                isinstance(value, (cst.Tuple, cst.List)) and (not value.elements or (
                    len(value.elements) == 1 and number_value(value.elements[0].value) == 0)))
        if _is_sequence(value):
            return False  # literal data: certainly a new CPU tensor
        if isinstance(value, cst.Call) and self._returns_array(value):
            return False  # `torch.tensor(np.stack(...))`, `torch.tensor(self._build_grid(n))`
        if calls_are_data and isinstance(value, cst.Call) and not self._returns_number(value):
            # while a module is built, `torch.tensor(get_kernel_window(k, ks))` is a table (a 0-dim
            # number comes from `float(...)`, `math.log(...)`, `x.item()`)
            return False
        if isinstance(value, (cst.Name, cst.Attribute)) and _SEQUENCE_NAME_RE.search(last_identifier(value) or ""):
            return False  # `torch.tensor(self.img_shape)`: a shape, never one number
        if factory == "tensor" and isinstance(value, cst.Name):
            # torch.tensor(values): a Python list, unless we know it is a number or a tensor
            return self.kind_of(value) in (NUMBER, TENSOR) or value.value in maybe_tensors
        if isinstance(value, cst.Subscript) and isinstance(value.value, cst.Call) and keeps_dimensions(value) \
                and self._returns_array(value.value):
            return False  # `torch.tensor(hadamard(n)[:k])`: a slice of an array
        if factory == "tensor" and isinstance(value, cst.Subscript) and isinstance(value.value, cst.Name) \
                and keeps_dimensions(value):
            # torch.tensor(logits[None, :, :]): a slice of an array is an array, never a number
            return self.kind_of(value.value) == TENSOR or value.value.value in maybe_tensors
        return True  # numbers, arithmetic on numbers, as_tensor(t) of a tensor

    def _value_method(self, call: cst.Call) -> bool:
        """`r.matmul(x)`, `d.diag()`: a method only tensors have, called on a value rather than
        a module (`np.matmul(a, b)`, `math.exp(x)`, `torch.tril(m)` resolve to functions)."""
        func = call.func
        return isinstance(func, cst.Attribute) and func.attr.value in TENSOR_METHODS_ALSO_FUNCTIONS \
            and self.ctx.resolve(func) is None

    def _returns_number(self, call: cst.Call) -> bool:
        """`float(x)`, `len(xs)`, `math.sqrt(d)`, `np.log(2)`, `x.item()`, `max(a, b)`: a number
        (NumPy's functions of a number give one; its array builders are `_returns_array`'s)."""
        if isinstance(call.func, cst.Attribute) and (call.func.attr.value in _NUMBER_METHODS
                                                     or self.self_attribute(call.func) is not None):
            return True  # (a method of the class, `self._count()`, may well give a number: unsure)
        module = (self.ctx.resolve(call.func) or "").rpartition(".")[0]
        return module in ("math", "numpy", "cmath", "random", "statistics") \
            or (isinstance(call.func, cst.Name) and call.func.value in _NUMBER_BUILTINS)

    def _returns_array(self, call: cst.Call) -> bool:
        """A NumPy call that makes an array, a method that reshapes or converts one
        (`denoised.transpose(2, 0, 1)`, `x.astype(np.float32)`, `t.numpy()`), or a function
        of the project whose every return is one."""
        if isinstance(call.func, cst.Attribute) and call.func.attr.value in _ARRAY_DATA_METHODS:
            return True
        qualified = self.ctx.resolve(call.func) or ""
        module, _, last = qualified.rpartition(".")
        if module in ("numpy", "numpy.linalg"):
            return last in ARRAY_CALLS
        if module == "scipy.linalg" and last not in ("det", "norm"):
            return True  # `scipy.linalg.hadamard(n)`, `expm(a)`: matrices
        if module.startswith(("numpy.random", "scipy.")) and (
                keyword(call, "size") is not None  # `stats.beta.rvs(1, 1, size=n)`: n draws
                or (last in ("rand", "randn", "permutation") and call.args)):
            return True
        return self.ctx.project_says(call.func, "returns") == ARRAY

    # ------------------------------------------------------------ the walk

    def bind(self, target: cst.CSTNode, kind: Optional[str], fixed: bool = False, made: bool = False) -> None:
        facts = self.facts()
        if isinstance(target, cst.Name):
            self._note_tensor_arms(facts, target.value, kind)
            facts.names[target.value] = kind
            info = self.ctx.current_class
            if info is not None and self.ctx.scopes and self.ctx.scopes[-1].kind == "class":
                # `eps: torch.Tensor = torch.tensor([1e-8])` in the class body: what `self.eps`
                # reads where no instance attribute shadows it
                self.attributes.setdefault((info.name, target.value), []).append(kind)
            facts.bindings[target.value] = facts.bindings.get(target.value, 0) + 1
            facts.batches.discard(target.value)
            facts.batch_parts.discard(target.value)
            facts.instances.pop(target.value, None)
            for other in (facts.loaders, facts.enumerated, facts.tensor_loaders, facts.pieces, facts.tensor_dicts,
                          facts.sliced,
                          facts.module_inputs,
                          facts.module_uses,
                          facts.array_like):
                other.discard(target.value)
            for key in facts.keyed_by.pop(target.value, ()):
                facts.names.pop(key, None)  # `d[key]` is another item once `key` is bound again
            if target.value in facts.itemized:  # a rebound name forgets its items' kinds
                facts.itemized.discard(target.value)
                prefix = target.value + "["
                for key in [key for key in facts.names if key.startswith(prefix)]:
                    del facts.names[key]
            if fixed:
                facts.fixed.add(target.value)
            else:
                facts.fixed.discard(target.value)
            if made or fixed:
                facts.made.add(target.value)
            else:
                facts.made.discard(target.value)
            if kind == MODULE:
                facts.tensor_uses.discard(target.value)
        elif isinstance(target, cst.Attribute):
            dotted = dotted_name(target)
            if dotted is not None:
                facts.names[dotted] = kind
                if dotted.startswith("self."):
                    (facts.fixed.add if fixed else facts.fixed.discard)(dotted)
                    (facts.made.add if made or fixed else facts.made.discard)(dotted)
            attribute = self.self_attribute(target)
            function = self.ctx.current_function
            if attribute is not None and function is not None and function.name.value == "__init__":
                self.attributes.setdefault(attribute, []).append(kind)
        elif isinstance(target, cst.Subscript):
            key = subscript_key(target)
            if key is not None:
                facts.names[key] = kind
                facts.itemized.add(re.split(r"[.\[]", key)[0])
                index = target.slice[0].slice
                if isinstance(index, cst.Index) and isinstance(index.value, cst.Name):
                    facts.keyed_by.setdefault(index.value.value, set()).add(key)
        elif isinstance(target, (cst.Tuple, cst.List)):
            for element in target.elements:
                self.bind(element.value, kind)
        elif isinstance(target, cst.StarredElement):
            self.bind(target.value, None)

    def _note_tensor_arms(self, facts: ScopeKinds, name: str, kind: Optional[str]) -> None:
        """Before `name` is bound to a value of `kind`: was it a tensor in an arm of an `if`
        that excludes this one?"""
        was_tensor = facts.names.get(name) == TENSOR
        if kind != TENSOR and not was_tensor:
            facts.tensor_on_another_arm.discard(name)
            return
        here = tuple((id(node), in_body) for node, _, in_body in self.ctx.enclosing_tests())
        if kind is None and was_tensor and exclusive_arms(facts.tensor_arms.get(name, ()), here):
            facts.tensor_on_another_arm.add(name)
        else:
            facts.tensor_on_another_arm.discard(name)
        if kind == TENSOR:
            facts.tensor_arms[name] = here

    def _bind_value(self, target: cst.CSTNode, value: cst.CSTNode) -> None:
        kind = self._assigned_kind(target, value)
        fixed = made = False
        if isinstance(target, cst.Name) or self.self_attribute(target) is not None:
            fixed = self.is_fixed_tensor(value)
            # made on some device: only methods of classes ask (what a module keeps)
            made = fixed or (self.ctx.current_class is not None and self.is_fixed_tensor(value, True))
        if isinstance(target, cst.Name) and isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) \
                and value.func.attr.value in TENSOR_ONLY_METHODS and value.func.attr.value not in NOT_TENSOR_METHODS \
                and isinstance(value.func.value, cst.Name) and value.func.value.value == target.value:
            facts = self.facts()
            facts.were_tensors.setdefault(target.value, set()).add(facts.bindings.get(target.value, 0))
        # (asked before the binding: `pbar = tqdm(pbar)` wraps what `pbar` held)
        enumerated = isinstance(target, cst.Name) and self._enumerates_a_loader(value)
        # `signal = signal.to("cpu")` of `signal = AudioSignal(path)`: the object moved itself
        moved_object = self.class_of(value.func.value) if isinstance(target, cst.Name) \
            and isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) \
            and value.func.attr.value in _OBJECT_MOVES and isinstance(value.func.value, cst.Name) else None
        attribute = self.self_attribute(target)
        function = self.ctx.current_function
        if attribute is not None and function is not None and function.name.value == "__init__":
            # `self.fc = nn.Linear(3, 4)`: a layer of torch whose output is one tensor
            layer = torch_nn_class(self.ctx.resolve(value.func) or "") if isinstance(value, cst.Call) else None
            self.tensor_layers[attribute] = self.tensor_layers.get(attribute, True) and layer is not None \
                and layer not in _NOT_ONE_TENSOR_LAYERS and keyword(value, "return_indices") is None
        self.bind(target, kind, fixed, made)
        if isinstance(target, cst.Name):
            root = operand_root(value)
            if root is not None and root != target.value:
                self.facts().computed_from[target.value] = root
            else:
                self.facts().computed_from.pop(target.value, None)
        if moved_object is not None and kind is None:
            self.facts().instances[target.value] = moved_object  # type: ignore[attr-defined]
        if isinstance(target, cst.Name) and self._splits_a_tensor(value):
            self.facts().pieces.add(target.value)
        if enumerated:
            self.facts().enumerated.add(target.value)  # type: ignore[attr-defined]
        if not isinstance(value, cst.Call) or kind is not None:
            return
        facts = self.facts()
        name = target.value if isinstance(target, cst.Name) else None
        if name is not None and (last_identifier(value.func) or "")[:1].isupper():
            facts.instances[name] = value.func
            if self._makes_tensors(value):
                facts.tensor_transforms.add(name)
        if name is not None and (last_identifier(value.func) == "DataLoader" or (
                last_identifier(value.func) in _BATCH_ITERATORS and value.args and not value.args[0].keyword
                and self._is_loader(value.args[0].value))):
            # `it = iter(loader)`, `pbar = tqdm(train_loader)` yield the loader's batches too
            facts.loaders.add(name)
            if self._collates_tensors(value):
                facts.tensor_loaders.add(name)
        if name is not None and self._is_next_batch(value):
            facts.batches.add(name)
        if name is not None and isinstance(value.func, cst.Attribute) and value.func.attr.value in _ARRAY_METHODS:
            facts.array_like.add(name)
        if name is not None and string_value(getattr(keyword(value, "return_tensors"), "value", None)) == "pt":
            facts.tensor_dicts.add(name)  # a tokenizer's BatchEncoding: its items are tensors

    def _assigned_kind(self, target: cst.CSTNode, value: cst.CSTNode) -> Optional[str]:
        if number_value(value) is not None:
            return NUMBER
        kind = self.kind_of(value)
        if kind is None and isinstance(value, cst.Call) and isinstance(target, (cst.Name, cst.Attribute)):
            # `model = Net(...)`: a model-like name bound from a constructor
            callee = last_identifier(value.func) or ""
            if callee[:1].isupper() and _MODEL_NAME_RE.search(last_identifier(target) or ""):
                return MODULE
        return kind

    def leave_AugAssign(self, node: cst.AugAssign) -> None:
        if isinstance(node.target, cst.Name):
            self.facts().computed_from.pop(node.target.value, None)  # `r = p; r += torch.rand(n)`: r no longer p

    def leave_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            target_node = target.target
            pairs = unpacked_pairs(target_node, node.value)
            if pairs is not None:
                for name, value in pairs:
                    self._bind_value(name, value)
            elif isinstance(target_node, (cst.Tuple, cst.List)) and self.is_fixed_tensor(node.value, True):
                # `U, S, V = torch.randn(n, n).svd()`: each part made here as the whole was
                fixed = self.is_fixed_tensor(node.value)
                for element in target_node.elements:
                    if isinstance(element.value, cst.Name) or self.self_attribute(element.value) is not None:
                        self.bind(element.value, TENSOR, fixed, made=True)
                    else:
                        self.bind(element.value, None)
            elif isinstance(target_node, (cst.Tuple, cst.List)) and _is_a_shape(node.value):
                # `batch, dim, h, w = fmap.shape`: numbers (`torch.tensor(dim)` is 0-dim)
                for element in target_node.elements:
                    self.bind(element.value, NUMBER if isinstance(element.value, cst.Name) else None)
            elif isinstance(target_node, (cst.Tuple, cst.List)) and isinstance(node.value, cst.Call) \
                    and (positions := LIBRARY_TENSORS.get(self.ctx.resolve(node.value.func) or "")):
                # `wav, sr = torchaudio.load(path)`: the parts a library function returns as tensors
                for index, element in enumerate(target_node.elements):
                    self.bind(element.value, TENSOR if index in positions else None)
            elif isinstance(target_node, (cst.Tuple, cst.List)) and isinstance(node.value, cst.Call) \
                    and (parts := self.ctx.project_says(node.value.func, "tuple_kinds")) \
                    and len(parts) == len(target_node.elements):  # type: ignore[arg-type]
                # `edges, edge_attr = get_edges_batch(n, b)` of a project function returning
                # `edges, torch.ones(m, 1)`: what each part is
                for kind, element in zip(parts, target_node.elements):  # type: ignore[call-overload]
                    self.bind(element.value, kind)
            elif isinstance(target_node, (cst.Tuple, cst.List)):
                # `x, y = batch` of a loader batch, `logits, aux = model(x)` of a module (what
                # has `.to()` among the parts of a model's output is a tensor): tensors;
                # anything else unknown
                value = node.value
                of_a_batch = self._is_loader_batch(value) or (isinstance(value, cst.Name)
                                                               and self._in_set(value.value, "batch_parts"))
                self.bind(target_node, TENSOR if of_a_batch or (
                    isinstance(value, cst.Call) and self.is_known_module(value.func)) else None)
                if of_a_batch:
                    self.facts().batch_parts.update(
                        e.value.value for e in target_node.elements if isinstance(e.value, cst.Name))
            else:
                self._bind_value(target_node, node.value)

    def leave_AnnAssign(self, node: cst.AnnAssign) -> None:
        if node.value is not None:
            self._bind_value(node.target, node.value)
        annotation = node.annotation.annotation
        if isinstance(node.target, cst.Name) and isinstance(annotation, (cst.Name, cst.Attribute)) \
                and (last_identifier(annotation) or "")[:1].isupper() and not is_tensor_type(annotation, self.ctx.resolve) \
                and not (self.ctx.resolve(annotation) or "").startswith(("torch.", "typing.")):
            # `pair: EncodedPromptPair = self.pairs[i]`: an object of a class the annotation names
            # (whose own `to()` may work in place), whatever the value looked like
            self.bind(node.target, None)
            self.facts().instances[node.target.value] = annotation

    def leave_NamedExpr(self, node: cst.NamedExpr) -> None:
        self.bind(node.target, self.kind_of(node.value))

    def visit_WithItem(self, node: cst.WithItem) -> None:
        if node.asname is not None:
            self.bind(node.asname.name, None)

    def visit_For(self, node: cst.For) -> None:
        self._bind_loop_targets(node)
        for item, _ in parameter_loop_targets(node.target, node.iter):
            self.bind(item, TENSOR)  # `for g, p in zip(grads, model.parameters()):`

    def visit_ListComp(self, node: cst.ListComp) -> None:
        # `[p.flatten() for p in self.vf.parameters()]`: bound before the element is visited
        for clause in comprehension_clauses(node.for_in):
            for item, _ in parameter_loop_targets(clause.target, clause.iter):
                self.bind(item, TENSOR)

    visit_SetComp = visit_GeneratorExp = visit_DictComp = visit_ListComp  # type: ignore[assignment]

    def _bind_loop_targets(self, node: cst.For) -> None:
        # bound before the body runs; `for x, y in loader:` unpacks a batch of tensors
        target, iterable = node.target, node.iter
        while isinstance(iterable, cst.Call) and last_identifier(iterable.func) in LOOP_WRAPPERS \
                and iterable.args:
            if last_identifier(iterable.func) == "enumerate":
                if not (isinstance(target, cst.Tuple) and len(target.elements) == 2):
                    self.bind(target, None)
                    return
                self.bind(target.elements[0].value, None)
                target = target.elements[1].value
            iterable = iterable.args[0].value
        if isinstance(iterable, cst.Name) and self._in_set(iterable.value, "enumerated"):
            # `for i, (imgs, targets) in pbar:` where `pbar = tqdm(enumerate(train_loader))`
            if isinstance(target, cst.Tuple) and len(target.elements) == 2:
                self.bind(target.elements[0].value, None)
                self._bind_batch(target.elements[1].value)
            else:
                self.bind(target, None)
            return
        if _is_builtin_call(iterable, "zip") and isinstance(target, (cst.Tuple, cst.List)) \
                and len(target.elements) == len(iterable.args) \
                and all(not arg.star and not arg.keyword and self._is_loader(arg.value) for arg in iterable.args):
            # `for (xs, ys), (xt, _) in zip(source_loader, target_loader):` a batch of each
            for element in target.elements:
                self._bind_batch(element.value)
            return
        batch = self._is_loader(iterable)
        items = method_call(iterable, "items")
        if isinstance(items, cst.Name) and self.is_batch(items.value) and isinstance(target, cst.Tuple) \
                and len(target.elements) == 2:
            # `for k, v in batch.items():` the items of a batch, as `batch[k]` (SLM-Lab's batch_to_device)
            self.bind(target.elements[0].value, None)
            self.bind(target.elements[1].value, TENSOR)
            return
        if isinstance(target, cst.Name) and self._holds_tensors(iterable):
            self.bind(target, TENSOR)  # `for t in (a, b):` of tensors, `for x in xs:` of `xs: List[Tensor]`
        elif isinstance(target, cst.Name) and (
                (isinstance(iterable, cst.Name) and self._in_set(iterable.value, "tensor_loaders"))
                or (isinstance(iterable, cst.Call) and last_identifier(iterable.func) == "DataLoader"
                    and self._collates_tensors(iterable))):
            self.bind(target, TENSOR)  # a loader whose `collate_fn` returns a tensor
        elif batch:
            self._bind_batch(target)
        else:
            self.bind(target, None)

    def _bind_batch(self, target: cst.CSTNode) -> None:
        """`target` takes a batch of a data loader. A whole batch is unknown: batch objects
        (PyG `Data`, `BatchEncoding`) move in place with `.to()`. Unpacked (`x, y = batch`),
        its parts are tensors."""
        if isinstance(target, (cst.Tuple, cst.List)):
            self.bind(target, TENSOR)
            self.facts().batch_parts.update(e.value.value for e in target.elements if isinstance(e.value, cst.Name))
            return
        self.bind(target, None)
        if isinstance(target, cst.Name):
            self.facts().batches.add(target.value)

    def _splits_a_tensor(self, value: cst.CSTNode) -> bool:
        """`torch.split(x, n)`, `x.chunk(k)`, `torch.unbind(x)`: a tuple of tensors (not the
        rows of a tensor iterated whole, which may be 0-dim numbers)."""
        if not isinstance(value, cst.Call):
            return False
        if (self.ctx.resolve(value.func) or "") in _SPLITTING_FUNCTIONS:
            return True
        return isinstance(value.func, cst.Attribute) and value.func.attr.value in _SPLITTING_METHODS \
            and self.kind_of(value.func.value) == TENSOR

    def _holds_tensors(self, iterable: cst.CSTNode) -> bool:
        if self._splits_a_tensor(iterable) or (isinstance(iterable, cst.Name) and self._in_set(iterable.value, "pieces")):
            return True  # `for batch in torch.split(x, n):` the pieces
        if isinstance(iterable, (cst.Tuple, cst.List)):
            return bool(iterable.elements) and all(
                not isinstance(e, cst.StarredElement) and self.kind_of(e.value) == TENSOR for e in iterable.elements)
        if not isinstance(iterable, cst.Name):
            return False
        scope = self._binding_scope(iterable.value)
        if scope is None or iterable.value not in scope.params or not isinstance(scope.node, cst.FunctionDef):
            return False
        kinds = scope.notes.get("kinds")
        if kinds is not None and iterable.value in kinds.names:
            return False  # rebound since
        return container_annotation_kind(scope.node, iterable.value, self.ctx.resolve) == TENSOR

    def _enumerates_a_loader(self, value: cst.CSTNode) -> bool:
        """`enumerate(train_loader)`, also wrapped (`tqdm(enumerate(loader))`), or a wrapper of
        a name bound to one (`tqdm(pbar, total=nb)`): it yields `(i, batch)`."""
        if not isinstance(value, cst.Call) or not value.args or value.args[0].keyword or value.args[0].star:
            return False
        callee, first = last_identifier(value.func), value.args[0].value
        if callee == "enumerate":
            return self._is_loader(first) or (isinstance(first, cst.Call) and last_identifier(first.func)
                                              in _BATCH_ITERATORS and bool(first.args)
                                              and self._is_loader(first.args[0].value))
        if callee in _BATCH_ITERATORS:
            return (isinstance(first, cst.Name) and self._in_set(first.value, "enumerated")) \
                or self._enumerates_a_loader(first)
        return False

    def _is_loader(self, node: cst.CSTNode) -> bool:
        """A data loader, by its name or by where the name was bound; or one of a
        collection of loaders (`dataloaders[phase]`, `self.loaders["train"]`)."""
        if isinstance(node, cst.Subscript):  # (a plural: `dataset[i]` is one sample, not a loader)
            collection = last_identifier(node.value) or ""
            if not (collection.endswith("s") and _LOADER_RE.search(collection)):
                return False
            node = node.value
        return isinstance(node, (cst.Name, cst.Attribute)) and (
            _LOADER_RE.search(last_identifier(node) or "") is not None
            or (isinstance(node, cst.Name) and self._in_set(node.value, "loaders")))

    def _collates_tensors(self, loader: cst.Call) -> bool:
        """`DataLoader(ds, collate_fn=collate)` with a `collate` of the project that returns a
        tensor: each batch is one tensor (GPT2-chitchat's padded token ids)."""
        collate = keyword(loader, "collate_fn")
        return collate is not None and isinstance(collate.value, (cst.Name, cst.Attribute)) \
            and self.ctx.project_says(collate.value, "returns") == TENSOR

    def _is_next_batch(self, value: cst.CSTNode) -> bool:
        """`next(iter(loader))`, `next(loader_iter)`: one batch of a data loader."""
        if not _is_builtin_call(value, "next"):
            return False
        source = value.args[0].value
        if _is_builtin_call(source, "iter"):
            return self._is_loader(source.args[0].value)
        return self._is_loader(source) or (isinstance(source, (cst.Name, cst.Attribute))
                                           and _LOADER_ITERATOR_RE.search(last_identifier(source) or "") is not None)

    def _is_loader_batch(self, value: cst.CSTNode) -> bool:
        """A batch of a data loader, or a part of one (`x, y = batch["train"]`), to unpack."""
        if isinstance(value, cst.Subscript) and isinstance(value.value, cst.Name):
            return self.is_batch(value.value.value)
        return (isinstance(value, cst.Name) and value.value in self.facts().batches) or self._is_next_batch(value)

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        moved = _moved_name(node)
        called = func.value if isinstance(func, cst.Name) else None
        if moved is not None or called is not None:
            facts = self.facts()
            (facts.moved if moved is not None else facts.called).add(moved or called)  # type: ignore[arg-type]
            name = moved or called
            if name in facts.moved and name in facts.called and name not in ("self", "cls"):
                facts.module_uses.add(name)  # type: ignore[arg-type]
        if isinstance(func, cst.Attribute) and func.attr.value == "register_buffer" and len(node.args) > 1 \
                and self.self_attribute(func) is not None \
                and not (isinstance(node.args[1].value, cst.Name) and node.args[1].value.value == "None"):
            # a buffer registered here: what is computed from it while the module is built
            # (`self.mm = torch.sin(math.pi - self.margins)`) or kept as it is (`self.box =
            # self.bbox`) is a plain tensor made here, which `module.to()` does not move
            name = string_value(node.args[0].value)
            if name is not None:
                self.facts().made.add(f"self.{name}")
                self.facts().buffers.add(f"self.{name}")
        if (isinstance(func, cst.Attribute) and (func.attr.value in TENSOR_ONLY_METHODS or _takes_dim(node)
                                                 or self._value_method(node))
                and isinstance(func.value, cst.Name) and func.value.value not in ("self", "cls")):
            self.facts().tensor_uses.add(func.value.value)  # (`self.norm(...)` calls a module's method)
        elif isinstance(func, cst.Attribute) and func.attr.value in _MODULE_ONLY_METHODS and not node.args \
                and isinstance(func.value, cst.Name) and func.value.value not in ("self", "cls"):
            self.facts().module_uses.add(func.value.value)
        elif isinstance(func, cst.Attribute) and func.attr.value in _MODULE_ONLY_METHODS and not node.args \
                and self.self_attribute(func.value) is not None:
            self.facts().module_uses.add(dotted_name(func.value) or "")  # `self._model.eval()` in this method
        qualified = self.ctx.resolve(func) or ""
        if qualified.startswith("torch.") and qualified.rsplit(".", 1)[-1] in FACTORIES:
            # `torch.zeros(*x.shape)`: sized like x, an array
            for arg in node.args:
                if arg.star == "*" and isinstance(arg.value, cst.Attribute) and arg.value.attr.value == "shape" \
                        and isinstance(arg.value.value, cst.Name):
                    self.facts().tensor_uses.add(arg.value.value.value)
                # `torch.rand(n, dtype=inputs.dtype)`: torch takes no numpy dtype, `inputs` is a tensor
                # (not `dtype=model.dtype` of a module that says its dtype, transformers' models)
                if arg.keyword is not None and arg.keyword.value == "dtype" and isinstance(arg.value, cst.Attribute) \
                        and arg.value.attr.value == "dtype" and isinstance(arg.value.value, cst.Name) \
                        and self.kind_of(arg.value.value) != MODULE and not _MODEL_NAME_RE.search(arg.value.value.value):
                    self.facts().tensor_uses.add(arg.value.value.value)
        if qualified.startswith("torch."):
            # `torch.cat([pad, value])`, `torch.einsum("ij,jk", a, b)`, `F.pad(x, ...)`
            # (also `dataset.data.x` of `torch.cat([dataset.data.x, enc], 1)`, not a module's `self.w`)
            self.facts().tensor_uses.update(
                dotted for dotted in (dotted_name(operand) for operand in tensor_operands(qualified, node)
                                      if isinstance(operand, (cst.Name, cst.Attribute)))
                if dotted is not None and not dotted.startswith(("self.", "cls.")))
            # `torch.where(x > 0)`, `torch.exp(-x)`: what torch takes only as a tensor is one, and
            # so is what it was computed from (`s = x.sum(2) >= 1` ... `torch.logical_not(s)`)
            operand = input_tensor_operand(qualified, node)
            root = operand_root(operand) if operand is not None else None
            facts = self.facts()
            tested = self._type_tested_names() if root is not None else frozenset()
            for _ in range(4):
                # (not a name now bound to a tensor made here, nor one the function tests for being
                # one: after `if not torch.is_tensor(w): w = torch.tensor(w)`, `torch.sum(w)` says
                # nothing of what `w` held before)
                if root is None or root in ("self", "cls") or facts.names.get(root) == TENSOR or root in tested:
                    break
                facts.tensor_uses.add(root)
                root = facts.computed_from.get(root)
        args = positional_args(node)
        if not args:
            return
        if qualified.startswith("torch.") and qualified.endswith("_like") and isinstance(args[0].value, cst.Name):
            self.facts().tensor_uses.add(args[0].value.value)  # `torch.zeros_like(x)` takes only a tensor
        elif qualified.startswith("torch."):
            return
        elif self.is_known_module(func):
            # `model(x, y)` of a module: its inputs are tensors, unless a whole batch object
            # (PyG's `Data` goes to the model whole and moves in place)
            for arg in args:
                # (also `model(x.cuda())`: what is moved on its way in)
                name = _moved_name(arg.value) or (arg.value.value if isinstance(arg.value, cst.Name) else None)
                if name is not None and arg.star == "" and not self.is_batch(name):
                    self.facts().module_inputs.add(name)

    def is_known_module(self, func: cst.CSTNode) -> bool:
        """A module by its kind, or by what this function does with it (`model.eval()`)."""
        if self.kind_of(func) == MODULE or (isinstance(func, cst.Name) and self._in_set(func.value, "module_uses")):
            return True
        attribute = self.self_attribute(func)
        return attribute is not None and (self.attribute_kind(*attribute) == MODULE
                                          or dotted_name(func) in self.facts().module_uses)

    def visit_Subscript(self, node: cst.Subscript) -> None:
        if isinstance(node.value, cst.Name) and is_array_index(node):
            self.facts().sliced.add(node.value.value)
        elif isinstance(node.value, cst.Attribute) and node.value.attr.value == "shape" \
                and isinstance(node.value.value, cst.Name):
            self.facts().array_like.add(node.value.value.value)  # `x.shape[1]`: an array or a tensor

    def visit_BinaryOperation(self, node: cst.BinaryOperation) -> None:
        if isinstance(node.operator, cst.Modulo):
            return  # `"%s" % model` formats a string
        for operand in (node.left, node.right):
            while isinstance(operand, cst.Subscript):
                operand = operand.value  # `v_preds[1:] * not_dones`
            if isinstance(operand, cst.Name):
                self.facts().array_like.add(operand.value)


def subscript_key(node: cst.Subscript) -> Optional[str]:
    """`d["k"]`, `self.d[0]` or `d[key]`: an item of a name, as text; None for anything else."""
    name = dotted_name(node.value)
    if name is None or len(node.slice) != 1 or not isinstance(node.slice[0].slice, cst.Index):
        return None
    index = node.slice[0].slice.value
    if isinstance(index, cst.SimpleString) and string_value(index) is not None:
        return f"{name}[{string_value(index)!r}]"
    if isinstance(index, cst.Integer):
        return f"{name}[{index.value}]"
    if isinstance(index, cst.Name):
        return f"{name}[{index.value}]"  # `d[key]`: as long as `key` is not bound again (`ValueKinds.bind`)
    return None


_SEQUENCE_BUILTINS = frozenset({"range", "list", "tuple", "sorted", "reversed"})


def _on_a_chosen_device(call: cst.Call) -> bool:
    """`device=` names a device other than the CPU (`device=d`, `device="cuda"`)."""
    device = keyword(call, "device")
    return device is not None and not (string_value(device.value) or "").startswith("cpu") \
        and not (isinstance(device.value, cst.Name) and device.value.value == "None")


def _is_sequence(value: cst.BaseExpression) -> bool:
    """`[...]`, `(a, b)`, `[f(v) for v in vs]`, `range(a, b)`, `list(xs)`, and lists repeated or
    joined: `[x] * n`, `[0] + rest`."""
    if isinstance(value, (cst.List, cst.Tuple, cst.ListComp, cst.GeneratorExp)):
        return True
    if isinstance(value, cst.Call) and isinstance(value.func, cst.Name) and value.func.value in _SEQUENCE_BUILTINS:
        return True
    return isinstance(value, cst.BinaryOperation) and isinstance(value.operator, (cst.Multiply, cst.Add)) \
        and (_is_sequence(value.left) or _is_sequence(value.right))


def keeps_dimensions(node: cst.Subscript) -> bool:
    """`a[None, :]`, `a[1:]`, `a[None, 0]`: an index with a slice or a `None` leaves at least
    one dimension, so the result is never a number (`a[..., 0]` of a vector is one)."""
    return any(isinstance(element.slice, cst.Slice) or (
        isinstance(element.slice, cst.Index) and isinstance(element.slice.value, cst.Name)
        and element.slice.value.value == "None") for element in node.slice)


def is_array_index(node: cst.Subscript) -> bool:
    """`x[i, :]`, `x[:, -n:]`: several indices, a slice among them (tensors and arrays only)."""
    return len(node.slice) > 1 and any(isinstance(element.slice, cst.Slice) for element in node.slice)


def container_annotation_kind(function: cst.FunctionDef, name: str, resolve) -> Optional[str]:
    """The kind of the items of a parameter annotated `Tuple[torch.Tensor, ...]`,
    `List[Tensor]`, `Optional[Sequence[Tensor]]`."""
    params = function.params
    for param in (*params.posonly_params, *params.params, *params.kwonly_params):
        if param.name.value != name or param.annotation is None:
            continue
        annotation = param.annotation.annotation
        if isinstance(annotation, cst.Subscript) and last_identifier(annotation.value) == "Optional" \
                and len(annotation.slice) == 1 and isinstance(annotation.slice[0].slice, cst.Index):
            annotation = annotation.slice[0].slice.value
        if not (isinstance(annotation, cst.Subscript) and last_identifier(annotation.value) in _TENSOR_CONTAINERS):
            return None
        items = [e.slice.value for e in annotation.slice if isinstance(e.slice, cst.Index)
                 and not (isinstance(e.slice.value, cst.Ellipsis))]
        if items and all(is_tensor_type(item, resolve) for item in items):
            return TENSOR
    return None


def is_tensor_type(annotation: cst.CSTNode, resolve) -> bool:
    """`torch.Tensor`, `torch.FloatTensor`, however imported (old code's `from torch.tensor
    import Tensor` too)."""
    head, _, last = (resolve(annotation) or "").rpartition(".")
    return (head == "torch" and last in LEGACY_TENSOR_TYPES) or (head in ("torch.tensor", "torch._tensor")
                                                                 and last == "Tensor")


_PYTHON_DATA_TYPES = frozenset({"int", "float", "bool", "str", "list", "tuple", "List", "Tuple", "Sequence",
                                "Iterable"})


def annotates_python_data(annotation: cst.BaseExpression) -> bool:
    """`cost: Optional[List[float]]`, `n: int`, `sizes: Sequence[int]`: no tensor (nor one
    inside: not `List[Tensor]`)."""
    if isinstance(annotation, cst.Subscript) and last_identifier(annotation.value) == "Optional" \
            and len(annotation.slice) == 1 and isinstance(annotation.slice[0].slice, cst.Index):
        annotation = annotation.slice[0].slice.value
    outer = annotation.value if isinstance(annotation, cst.Subscript) else annotation
    return last_identifier(outer) in _PYTHON_DATA_TYPES and "Tensor" not in cst.Module([]).code_for_node(annotation)


def _union_members(annotation: cst.BaseExpression) -> List[cst.BaseExpression]:
    """The types of `Union[A, B]` or `A | B | None`, without None; [] for any other annotation."""
    if isinstance(annotation, cst.Subscript) and last_identifier(annotation.value) == "Union":
        members = [e.slice.value for e in annotation.slice if isinstance(e.slice, cst.Index)]
    elif isinstance(annotation, cst.BinaryOperation) and isinstance(annotation.operator, cst.BitOr):
        members = [*(_union_members(annotation.left) or [annotation.left]),
                   *(_union_members(annotation.right) or [annotation.right])]
    else:
        return []
    return [m for m in members if not (isinstance(m, cst.Name) and m.value == "None")]


def annotation_kind(function: cst.FunctionDef, name: str, resolve) -> Optional[str]:
    """The kind a parameter's annotation says: `x: torch.Tensor`, `m: nn.Module`."""
    params = function.params
    for param in (*params.posonly_params, *params.params, *params.kwonly_params):
        if param.name.value != name:
            continue
        if param.default is not None and number_value(param.default) is not None:
            return NUMBER
        if param.annotation is None:
            continue
        annotation = param.annotation.annotation
        if last_identifier(annotation) in ("int", "float", "bool"):
            return NUMBER
        if isinstance(annotation, cst.Subscript) and last_identifier(annotation.value) == "Optional" \
                and len(annotation.slice) == 1 and isinstance(annotation.slice[0].slice, cst.Index):
            annotation = annotation.slice[0].slice.value
        members = _union_members(annotation)
        if members and all(is_tensor_type(member, resolve) for member in members):
            # `Tensor | None`, `Union[FloatTensor, LongTensor]` (not `Union[Parameter, Tensor]`:
            # a parameter handed in registers itself, and a buffer of its name would refuse it)
            return TENSOR
        if isinstance(annotation, cst.Subscript) and annotation.slice \
                and last_identifier(annotation.value) not in _TYPING_GENERICS \
                and isinstance(annotation.slice[0].slice, cst.Index) \
                and is_tensor_type(annotation.slice[0].slice.value, resolve):
            return TENSOR  # jaxtyping's `Float[Tensor, "b n"]`, `Long[torch.LongTensor, "n"]`
        if is_tensor_type(annotation, resolve):
            return TENSOR
        qualified = resolve(annotation) or ""
        if qualified in TORCH_MODULE:
            return MODULE
    return None


def is_dtype(node: cst.CSTNode, resolve) -> bool:
    """`torch.float32`, `x.dtype`, `dtype`: `.to(...)` of one only changes the dtype."""
    qualified = resolve(node) or ""
    if qualified.startswith("torch.") and qualified[6:] in DTYPE_NAMES:
        return True
    return (last_identifier(node) or "").endswith("dtype")


def changes_dtype_only(call: cst.Call, resolve) -> bool:
    """`t.to(torch.float32)`, `t.to(x.dtype)`, `t.to(dtype=...)`, `t.type(torch.long)`: no move."""
    if not (isinstance(call.func, cst.Attribute) and call.func.attr.value in ("to", "type")):
        return False
    if keyword(call, "device") is not None:
        return False
    args = positional_args(call)
    if args:
        return is_dtype(args[0].value, resolve)
    return keyword(call, "dtype") is not None


def _indexes_one_element(node: cst.Subscript) -> bool:
    """`t[0]`, `t[-1]`: a number as the only index."""
    return len(node.slice) == 1 and isinstance(node.slice[0].slice, cst.Index) \
        and number_value(node.slice[0].slice.value) is not None
