"""Origins: where each tensor of a function comes from, and what the function is for.

`TensorOrigins` follows the walk like `ValueKinds` (before the rules on the way down,
after them on the way up) and keeps one `FunctionOrigins` per function being walked
(and one for the module), in statement order:

- the function's *role*: device-sensitive code (`sensitive`: methods of an `nn.Module`
  that run after it is built, `forward`/`backward` of a `torch.autograd.Function`,
  methods of loss/metric classes, methods of `torch.distributions` subclasses, whose
  `self.<attr>` handed to `__init__` are on the caller's device, functions named like a
  loss, metric or sampling step, functions nested in one of them) or a plain *helper*
  that receives tensors (any other function or method of a class that is not a module
  or a data pipeline); builders, `__init__`-time methods and data pipelines are
  neither: their tensors stay on the CPU on purpose;
- *inputs*: the parameters that may hold the caller's tensors, as long as they are not
  rebound to something else;
- *derived*: locals computed from the inputs (`x_cov = torch.cov(x.T)`,
  `y = batch["y"]`), other than for a size or on the host (`x.shape[0]`, `x.cpu()`):
  a tensor among them lives where the inputs live;
- *input_parts*: in device-sensitive code, the names an input is unpacked into
  (`log_pi, mu, sigma = x`): the caller's tensors, as the input is;
- *made_here*: locals computed from tensors the function made itself;
- *carried*: derived locals that hold an input as a whole become something else (`out =
  utils.repeat(inputs, n)`, `x[idx]`, an item of an input iterated), not a number read from
  one (`location.width / n`, an `enumerate` counter, `h // 2`): in device-sensitive code they are
  tensors where the inputs are; *network_outputs*: in a helper, what a network the object keeps
  computes from the inputs (`action = self.targ_policy(x)`);
- *on_device*: names known to hold a tensor (or module, moved in place) on a device
  chosen at run time: `x.to(device)`, `torch.zeros(n, device=d)`, `x.cuda()`, and what is
  computed from one (`model(x)`, `logits.argmax(1)`);
- *device_names*: device-aware values bound so far (`device` parameters,
  `d = x.device`, `torch.device(name)`); *device_param*: the function's own parameter
  named like a device when the function never reads it (told where its tensors belong,
  and ignoring it);
- *new_tensors*: locals that hold a CPU tensor made here by a factory without
  `device=`, whose fate is still open (a rule that follows a factory's value to its
  uses says so through `follow`; rebinding the name forgets it); *merged*: after an `if`
  whose arms each bound the name to a factory, the others it may hold;
- *copies_input_to_host*: the function copies its tensor input into a CPU tensor it
  made (`buf.narrow(1, 0, n).copy_(img)`): host-side work on purpose.

Queries: `current`, `is_on_device(expr)`, `is_input_tensor(expr)`, `involves_input(expr)`,
`is_device_value(expr)`, `in_device_block`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, Iterator, List, Optional, Protocol, Set, Tuple

import libcst as cst

from .classes import STATE_MAKER_RE, is_init_time_name
from .scopes import Scope

from .devices import is_device_move, is_device_name, move_target, moves_to_cpu
from .project import returns_tensor
from .kinds import (FACTORIES, LEGACY_TENSOR_TYPES, NOT_TENSOR_METHODS, TENSOR, TENSOR_ATTRIBUTES, TENSOR_ONLY_METHODS, TO_PYTHON,
                    VARIABLE, KindsContext,
                    ValueKinds, annotates_python_data, annotation_kind, changes_dtype_only, is_dtype)
from .syntax import (children, comprehension_clauses, decorator_names, descendants, dotted_name, exclusive_arms, first_argument,
                     function_statements, is_cuda_literal, is_static_or_class_method, keyword, last_identifier,
                     method_call, number_value, parameter_loop_targets, parameter_names, positional_args, root_name,
                     self_attribute_key, unpacked_pairs)

# Calls whose result is not a tensor computed on its arguments' device, or that accept
# tensors from any device.
NEUTRAL_CALLEES = frozenset({
    "register_buffer", "Parameter", "Buffer", "int", "float", "bool", "len", "list", "tuple", "str", "print",
    "range", "enumerate", "isinstance", "repr", "format", "manual_seed", "set_rng_state", "Generator", "sorted",
    "max", "min", "sum", "zip", "append", "extend", "warn", "info", "debug", "setattr", "assert_close",
    # torch functions that treat each tensor on its own device
    "broadcast_tensors", "atleast_1d", "atleast_2d", "atleast_3d", "is_tensor", "result_type", "numel",
    "is_floating_point", "is_complex",
    # CPU-only ops: their tensors must be on the CPU (`torch.histogram(x, bins=torch.tensor([...]))`)
    "histogram", "histogramdd"})

# Attributes named as counts or sizes (`graph.num_nodes`, `batch.batch_size`): numbers.
_COUNT_ATTRIBUTE_RE = re.compile(r"^(num|n|max|min)_|_(size|num|count|len|length|dim|steps?)s?$"
                                 r"|^(size|shape|dim|ndim|len|length|count|step|epoch|training)s?$", re.I)
# Names of indices (`row_idx`, `token_id`, `i`).
_INDEX_NAME_RE = re.compile(r"(^|_)(idx|index|indices|id|ids)$|^[ijkn]$", re.I)
# Functions named as getters of a size or shape (`get_image_size(img)`, `_get_hw(x)`): numbers.
_SIZE_GETTER_RE = re.compile(r"_*(?:get|compute|calc|infer|read)_\w*(?:size|shape|hw|wh|dims?)s?$"
                             r"|_*(?:image|img|input|output|feature|feat)_(?:size|shape)s?$")
# Parameters named as sizes or shapes.
_SIZE_PARAMETER_RE = re.compile(r"^(size|shape)s?$|_(size|shape)s?$")
# `__add__`, `__rmul__`, `__iadd__`...: a class's arithmetic computes on its data.
_ARITHMETIC = frozenset({"add", "sub", "mul", "matmul", "truediv", "floordiv", "mod", "pow", "neg", "and", "or",
                         "xor"})

# What a function's name says it is for.
_LOSS_FUNCTION_RE = re.compile(r"loss|metric|criterion|accuracy|(^|_)(sample|sampling)($|_(step|loop|fn))", re.I)
# Functions that build things rather than compute on tensors: `create_loss`, `build_metric`.
_BUILDER_RE = re.compile(r"^_*(create|build|make|get|init)_", re.I)
# ... of which a getter or maker may compute on its tensor arguments instead
# (`get_pbc_distances(pos, cell)`, `make_logits_ordinal(logits)`: `logits.sigmoid()`); a
# `build_*` stays a builder (YOLOv2's `build_targets` fills CPU targets)
_COMPUTING_BUILDER_RE = re.compile(r"^_*(?:get|make|create)_", re.I)
_LOSS_CLASS_RE = re.compile(r"loss|metric|criterion", re.I)
# Plain functions of data pipelines, CPU by design: `collate_fn`, `transform`, `load_image`
# (a transformer is a network, not a transform: `DecisionTransformer`, `vision_transformer.py`).
_DATA_PIPELINE_RE = re.compile(r"collate|transform(?!er)|augment|preprocess|prepare|dataset|load|read|decode|"
                               r"getitem|to_tensor|numpy|plot|show|save|visuali[sz]e", re.I)
# ... and classes so named (`ImageDataset`, `RandomTransform`); not a `Decoder`, which turns a
# model's outputs into results where they are (PyLaia's `CTCGreedyDecoder`)
_PIPELINE_CLASS_RE = re.compile(_DATA_PIPELINE_RE.pattern.replace("decode|", "decode(?!r)|"), re.I)
# Files of a data pipeline (`naflex_transforms.py`, `datasets/coco.py`, `collate.py`): their
# plain functions work on the CPU by design.
_DATA_PIPELINE_FILE_RE = re.compile(r"transform(?!er)|augment|collate|dataset|dataloader|preprocess", re.I)
_COLLATE_RE = re.compile(r"collat", re.I)
# Classes named like a transform of a sample (detr's `Normalize`, `RandomCrop`, `ToTensor`).
_TRANSFORM_CLASS_RE = re.compile(r"normali[sz]|resiz|crop|flip|rotat|jitter|compos|blur|^pad|eras|to_?tensor"
                                 r"|^random|transform(?!er)|augment", re.I)


# What `nn.Module` gives every module (`self.parameters()`, `self.register_buffer(...)`): no network it keeps
_OWN_MODULE_API = frozenset({
    "parameters", "named_parameters", "buffers", "named_buffers", "modules", "named_modules", "children",
    "named_children", "state_dict", "load_state_dict", "register_buffer", "register_parameter", "add_module",
    "register_module", "apply", "to", "cuda", "cpu", "float", "half", "double", "train", "eval", "zero_grad",
    "requires_grad_", "get_submodule", "get_parameter", "get_buffer", "extra_repr", "type"})


def _runs_a_sub_module(function: cst.FunctionDef, info: Any) -> bool:
    """Does `function` call an attribute of the object that is none of its class's methods
    (`self.generator(z)`): it runs a network, which no builder does while the object is built
    (a dry pass `__init__` calls is init-time all the same). (Read from the function alone,
    so that the fast path, which stubs the methods that assign it, agrees.)"""
    # (from the class bodies, not `ClassInfo.methods`, which holds only the methods walked so far)
    methods = {statement.name.value for cls in info.lineage() for statement in cls.node.body.body
               if isinstance(statement, cst.FunctionDef)}
    params = parameter_names(function)
    return bool(params) and any(
        isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute)
        and isinstance(node.func.value, cst.Name) and node.func.value.value == params[0]
        and node.func.attr.value not in methods and node.func.attr.value not in _OWN_MODULE_API
        for node in descendants(function.body))


def _tested_as_numbers(function: cst.FunctionDef) -> Set[str]:
    """Names an `if`, `elif` or `while` of the function compares with a number
    (`if keep_rate == 1.0:`): Python numbers; a tensor of more than one element there would
    raise (`Boolean value of Tensor with more than one value is ambiguous`)."""
    found: Set[str] = set()
    for statement in function_statements(function):
        test = statement.test if isinstance(statement, (cst.If, cst.While)) else None
        if not isinstance(test, cst.Comparison) or len(test.comparisons) != 1 \
                or not isinstance(test.comparisons[0].operator, (cst.Equal, cst.NotEqual, cst.LessThan,
                                                                  cst.LessThanEqual, cst.GreaterThan,
                                                                  cst.GreaterThanEqual)):
            continue
        left, right = test.left, test.comparisons[0].comparator
        for name, other in ((left, right), (right, left)):
            if isinstance(name, cst.Name) and number_value(other) is not None:
                found.add(name.value)
    return found


def _takes_any_arguments(function: cst.FunctionDef) -> bool:
    """`*args` or `**kwargs`: what comes in is not known (`encode_adm(self, **kwargs)`)."""
    params = function.params
    return isinstance(params.star_arg, cst.Param) or params.star_kwarg is not None


def _runs_a_network(function: cst.FunctionDef, info: Any) -> bool:
    """Does `function` call a sub-module the class assigns (`self.transformer(ids)`,
    `self.transformer.forward_with_cond_scale(ids)`) or the module itself (`self(ids)`)?
    Not a helper a base class may define (`self._export_interpolation()`), nor an
    attribute not known to hold a module."""
    params = parameter_names(function)
    if not params:
        return False
    owner = params[0]
    for node in descendants(function.body):
        if isinstance(node, cst.Call):
            func = node.func
            if isinstance(func, cst.Name) and func.value == owner:
                return True  # `self(x)`
            if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Attribute):
                func = func.value  # `self.transformer.forward_with_cond_scale(...)`
            if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value == owner \
                    and info.assigns_a_module(func.attr.value):
                return True
    return False


def is_data_pipeline_name(name: str) -> bool:
    """A function named for data-pipeline work (`collate`, `load_...`, `preprocess`, `plot_...`)."""
    return _DATA_PIPELINE_RE.search(name) is not None


def is_data_pipeline_path(filename: Optional[str]) -> bool:
    """A file whose name says it belongs to a data pipeline (not a folder: `data/` also holds models)."""
    if not filename:
        return False
    stem = re.split(r"[\\/]", filename)[-1].rsplit(".", 1)[0]
    return _DATA_PIPELINE_FILE_RE.search(stem) is not None



# What reads a tensor's size, never its values (also a probe of a network's output size).
SIZE_ATTRIBUTES = frozenset({"shape", "size", "dim", "ndim", "numel"})
_SIZE_OR_HOST = SIZE_ATTRIBUTES | {"cpu", "numpy", "tolist", "item", "__len__"}
_HOST = frozenset({"cpu", "numpy", "tolist"})
# Namespaces of functions that compute on the tensors they are given, where those are.
# A class of the project that is a distribution by its name or its base's: `DiagGaussianDistribution`.
_DISTRIBUTION_CLASS_RE = re.compile(r"Distribution$")
_DISTRIBUTION_PARAMETER_RE = re.compile(r"(?:mean|mu|loc|std|sigma|scale|log_?(?:std|sigma|var|scale)|logits|probs|var)s?$")
_OP_MODULES = ("torch.nn.functional.", "torch.linalg.", "torch.fft.", "torch.special.", "torchvision.ops.",
               # PyG's companions: scatter/segment reductions and sparse products of tensors on one device
               "torch_scatter.", "torch_sparse.")
# ops outside those modules that compute where their tensors are (not the rest of
# torch.nn.utils.rnn: `pack_padded_sequence` takes its lengths on the CPU)
_OP_FUNCTIONS = frozenset({"torch.nn.utils.rnn.pad_sequence"})
_FACTORY_NAMES = frozenset(f"torch.{name}" for name in FACTORIES)


@dataclass
class FunctionOrigins:
    """One function being walked (or the module)."""

    node: cst.CSTNode
    sensitive: bool = False  # device-sensitive code: any use that mixes devices is a bug
    # a plain function receiving tensors: mixing a new CPU tensor with a parameter known to
    # be a tensor (annotated, or used with a tensor-only method) is a bug
    helper: bool = False
    method_name: Optional[str] = None  # the module's method this code runs in
    # a method of an `nn.Module` run after it is built, inputs or not: its parameters and
    # buffers (`self.decay`) sit wherever the module was moved
    module_runtime: bool = False
    returns_to_caller: bool = False  # forward / loss: the return value leaves the module
    params: List[str] = field(default_factory=list)
    inputs: Set[str] = field(default_factory=set)  # parameters that may hold the caller's tensors
    derived: Set[str] = field(default_factory=set)
    input_parts: Set[str] = field(default_factory=set)  # unpacked from an input in sensitive code
    made_here: Set[str] = field(default_factory=set)
    lists: Set[str] = field(default_factory=set)  # locals bound to a list or tuple display or comprehension
    # in a helper method, locals a network the object holds computed from the inputs
    # (`action = self.targ_policy(x)`): tensors, where the inputs are
    network_outputs: Set[str] = field(default_factory=set)
    # locals holding what an input becomes as a whole: a call's result given the input
    # (`out = utils.repeat(inputs, n)`), an item of an input iterated (`for s, t in zip(sims, ts)`)
    carried: Set[str] = field(default_factory=set)
    on_device: Set[str] = field(default_factory=set)
    placed: Set[str] = field(default_factory=set)  # bound to a move to a run-time device
    device_names: List[str] = field(default_factory=list)
    # the function's own parameter named like a device, which it never reads (captum's
    # `get_scale_mat(self, m, device, dtype)`): told where its tensors belong, and ignoring it
    device_param: Optional[str] = None
    # name -> (factory call, the Assign that bound it): a CPU tensor whose fate is open
    new_tensors: Dict[str, Tuple[cst.Call, cst.CSTNode]] = field(default_factory=dict)
    # id of the factory a name holds -> the factories the other arms of an `if` bound it to
    merged: Dict[int, List[cst.Call]] = field(default_factory=dict)
    new_tensor_arms: Dict[str, Tuple[Tuple[int, bool], ...]] = field(default_factory=dict)  # where bound
    new_tensor_tests: Dict[str, List[Tuple[str, object]]] = field(default_factory=dict)  # ... and under which tests
    # id(If) -> name -> (its `new_tensors` entry, where it was bound, the arms that bound the
    # name again): a CPU tensor set aside while an arm of that `if` holds something else
    set_aside: Dict[int, Dict[str, tuple]] = field(default_factory=dict)
    # id(If) -> inputs bound to something else in its arms -> (None, (), those arms)
    inputs_set_aside: Dict[int, Dict[str, tuple]] = field(default_factory=dict)
    # id(If) -> CPU tensors its body made, kept out of its `else` -> (entry, where bound)
    body_tensors: Dict[int, Dict[str, tuple]] = field(default_factory=dict)
    copies_input_to_host: bool = False
    # a helper that moves some of its parameters itself (`x = x.float().to(self.device)`):
    # its inputs arrive on the CPU, and those it does not move stay there
    moves_inputs: bool = False
    told_device: bool = False  # a method of an object told its device (`_told_its_device`)

    @property
    def any_mix_is_a_bug(self) -> bool:
        """Device-sensitive code where any use of a CPU tensor beside the inputs is a bug (a
        module's method, a loss), not a method of an object told its device, where only a mix
        with its inputs or device tensors counts."""
        return self.sensitive and not self.told_device


class OriginsContext(KindsContext, Protocol):
    """What `TensorOrigins` reads from the walk (the `Analyzer`)."""

    kinds: ValueKinds

    @property
    def in_test_file(self) -> bool: ...

    def arms(self) -> Tuple[Tuple[int, bool], ...]: ...

    def tests(self) -> List[Tuple[str, object]]: ...

    @property
    def scope(self) -> "Scope": ...


class TensorOrigins:
    """Kept by the `Analyzer` during its walk; rules read `current` and the queries."""

    def __init__(self, analyzer: OriginsContext) -> None:
        self.ctx = analyzer
        self._frames: List[FunctionOrigins] = []
        # id of a comprehension -> (name, derived, carried) of the targets it hides while walked
        self._hidden_by_comprehension: Dict[int, List[Tuple[str, bool, bool]]] = {}
        # ids of builder-named methods that run per input (a module's `create_bases(self, disp)`,
        # a trainer's `create_fake(self, batch_size)` that runs its generator)
        self.per_input_methods: Set[int] = set()
        self._device_blocks = 0  # depth of `with torch.device(...):` blocks
        self._device_withs: Set[int] = set()
        # names bound to a CUDA tensor type where CUDA is there: PyTorch-GAN's
        # `Tensor = torch.cuda.FloatTensor if cuda else torch.FloatTensor`
        self._cuda_types: Set[str] = set()
        # (class name, method) -> is every value it returns on a run-time device (`predict`
        # returning `self.online_q(state.to(self.device))`), as far as the walk has seen
        self._device_returns: Dict[Tuple[str, str], bool] = {}
        # (class name, method, position or keyword) -> did every call of `self.<method>(...)`
        # seen so far hand it a tensor on a run-time device (EEG-GAN's trainer moves the batch,
        # then calls `self.batch_train(data, data_labels)`)
        self._placed_by_callers: Dict[Tuple[str, str, object], bool] = {}

    @property
    def current(self) -> FunctionOrigins:
        return self._frames[-1]

    @property
    def in_device_block(self) -> bool:
        """Inside `with torch.device(d):`: new tensors are made on d."""
        return self._device_blocks > 0

    def follow(self, name: str, factory: cst.Call, statement: cst.CSTNode) -> None:
        """`name`, bound by `statement`, holds the CPU tensor `factory` made."""
        held = self.current.new_tensors.get(name)
        if held is not None and held[1] is statement and held[0] is not factory:
            # `s = torch.rand(n) if r else torch.zeros(n)`: either, one fate for both
            self.current.merged.setdefault(id(factory), []).extend([held[0], *self.current.merged.get(id(held[0]), ())])
        self.current.new_tensors[name] = (factory, statement)
        self.current.new_tensor_arms[name] = self.ctx.arms()
        self.current.new_tensor_tests[name] = self.ctx.tests()

    def _forget(self, name: str, statement: cst.CSTNode) -> None:
        """`name` is bound again by `statement`: it no longer holds the CPU tensor, unless
        the two bindings are on arms of one `if` that exclude each other (`t = torch.eye(n)`
        in the body, `t = torch.ones_like(x)` in the `else`: after the `if`, either)."""
        frame = self.current
        if frame.set_aside:  # bound again in another arm of an `if` that set it aside
            _count_rebinding(frame.set_aside, name, self.ctx.arms())
        entry = frame.new_tensors.get(name)
        if entry is None or entry[1] is statement:
            return
        here = self.ctx.arms()
        bound_at = frame.new_tensor_arms.get(name, ())
        if exclusive_arms(bound_at, here):
            return
        del frame.new_tensors[name]
        # Bound again in an arm of an `if` that the tensor was made outside of (`y =
        # torch.zeros(1)`, then `if seq: y = torch.stack(seq)`): the other way through the
        # `if` still holds it. Not when the new value is computed from it (`if x.is_cuda:
        # y = y.cuda()`), and not in a loop (`for` targets).
        outside = dict(bound_at)
        arm = next((place for place in reversed(here) if place[0] not in outside), None)
        if arm is None or not isinstance(statement, cst.Assign) or name in names_read(statement.value):
            return
        held = frame.set_aside.setdefault(arm[0], {})
        if name in held:
            held[name][2].add(arm[1])
        else:
            held[name] = (entry, bound_at, {arm[1]})

    def visit_Else(self, node: cst.Else) -> None:
        self._enter_other_arm(self.ctx.parent())

    def visit_If(self, node: cst.If) -> None:
        branch = self.ctx.parent()
        if isinstance(branch, cst.If) and branch.orelse is node:
            self._enter_other_arm(branch)  # an `elif`

    def _enter_other_arm(self, branch: Optional[cst.CSTNode]) -> None:
        """The `else` (or `elif`) of an `if` whose body bound an input to something else (`if
        not torch.is_tensor(idx): idx = torch.LongTensor([idx])`): here it is the caller's again."""
        if not isinstance(branch, cst.If):
            return
        frame = self.current
        held = frame.inputs_set_aside.get(id(branch), {})
        back = {name for name, (_, _, arms) in held.items() if arms == {True}}
        if back:
            frame.inputs = frame.inputs | back
        # a CPU tensor the body made (`idx = torch.LongTensor([idx])`) is not what the `else`
        # reads; set aside until the `if` ends, where the body's way through still holds it
        for name in [n for n, arms in frame.new_tensor_arms.items()
                     if n in frame.new_tensors and (id(branch), True) in arms]:
            frame.body_tensors.setdefault(id(branch), {})[name] = (frame.new_tensors.pop(name),
                                                                  frame.new_tensor_arms[name])

    def leave_If(self, node: cst.If) -> None:
        """After the `if`: a tensor set aside in its arms is back, and so is an input bound
        to something else there, unless every way through bound the name again (the
        body and an `else`)."""
        frame = self.current
        for name, (entry, bound_at, arms) in frame.set_aside.pop(id(node), {}).items():
            if name in frame.new_tensors or (isinstance(node.orelse, cst.Else) and arms == {True, False}):
                continue
            frame.new_tensors[name] = entry
            frame.new_tensor_arms[name] = bound_at
        for name, (entry, bound_at) in frame.body_tensors.pop(id(node), {}).items():
            if name not in frame.new_tensors:
                frame.new_tensors[name] = entry
                frame.new_tensor_arms[name] = bound_at
            elif frame.new_tensors[name][0] is not entry[0]:
                # `if c: m = torch.ones(n)` / `else: m = torch.zeros(n)`: from here on, either
                frame.merged.setdefault(id(frame.new_tensors[name][0]), []).extend(
                    [entry[0], *frame.merged.get(id(entry[0]), ())])
        for name, (_, _, arms) in frame.inputs_set_aside.pop(id(node), {}).items():
            if not (isinstance(node.orelse, cst.Else) and arms == {True, False}):
                frame.inputs = frame.inputs | {name}  # `if not isinstance(other, Tensor): other = ...`

    # ------------------------------------------------------------ the walk

    def visit_Module(self, node: cst.Module) -> None:
        self._frames.append(FunctionOrigins(node))

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        name = node.name.value
        info = self.ctx.current_class if self.ctx.scope.kind == "class" else None
        params = parameter_names(node)
        device_names = [p for p in params if is_device_name(p)]
        inputs = {p for p in maybe_tensor_params(node) if p not in device_names}
        if inputs and not device_names and name.startswith("test") and self.ctx.in_test_file:
            # a test's parameters are pytest's fixtures, the suite's own CPU data unless it
            # hands the test a device too (`def test_mm(x, device)`)
            inputs = set()
        if inputs:
            inputs -= _tested_as_numbers(node)
        sensitive, method_name, told_device = False, None, False
        handed_in = self._handed_to_a_distribution(info, name, node)
        # (a module's `create_bases(self, disp)` that `__init__` does not call runs per input)
        per_input = info is not None and not is_static_or_class_method(node) \
            and info.builds_per_input(name, node) \
            and ((info.is_module and any(not _COUNT_ATTRIBUTE_RE.search(p) and not _INDEX_NAME_RE.search(p)
                                         for p in inputs))
                 or (bool(is_init_time_name(name, info) or _BUILDER_RE.search(name)) and _runs_a_sub_module(node, info)))
        # (not DeepRobust's `make_spmat(self, n_rows, n_cols, row_idx, col_idx)`: numbers; but
        # `create_fake(self, batch_size)` that runs the generator it keeps samples per batch)
        if per_input:
            self.per_input_methods.add(id(node))
        if handed_in is not None:
            # `rsample(self)` of a `Distribution`: it computes on the tensors `__init__` was given
            sensitive, method_name = True, name
        elif info is not None and info.is_module and STATE_MAKER_RE.match(name) \
                and not is_static_or_class_method(node) and not info.is_init_time(name):
            sensitive, method_name = True, name  # `init_hidden(self, batch_size)`: made per batch, for the inputs
        elif not inputs and info is not None and info.is_module and not is_static_or_class_method(node) \
                and not info.is_init_time(name) and not _takes_any_arguments(node) and _runs_a_network(node, info):
            # `generate(self, texts: List[str], steps=18)`: no tensor comes in, but the module's
            # networks compute on what it makes, where the module was moved
            sensitive, method_name = True, name
        elif (not inputs and not per_input) or (is_init_time_name(name, info) and not per_input) or (
                _BUILDER_RE.search(name) and not (info is not None and info.is_module)):
            pass  # (a module's `get_td_error(self, data)` runs on its inputs, as forward does)
        elif info is not None and name in _AUTOGRAD_METHODS and self._is_autograd_function(info):
            sensitive, method_name = True, name  # a custom op's forward and backward compute on their inputs
        elif info is not None and name != "__init__" and not is_static_or_class_method(node):
            if info.is_module and not self._takes_a_pil_image(node) and not _COLLATE_RE.search(info.node.name.value):
                # (a module whose forward takes a PIL image is a transform of the data pipeline:
                # lightly's `RandomResizedCropAndFlip`; one named a collate function batches samples
                # in the loader's workers: so-vits-svc's `TextAudioCollate(nn.Module)`)
                sensitive, method_name = True, name
            elif _LOSS_CLASS_RE.search(info.node.name.value) and not _is_a_test_case(info.node):
                sensitive = True
            elif self._told_its_device(name, info):
                # a method of an object told its device (`self.device = device`): an agent's
                # `update(self, batch)`, a solver's `step(self, u)` compute where that device is
                sensitive, method_name, told_device = True, name, True
        elif info is None and _LOSS_FUNCTION_RE.search(name) and not name.startswith("test") \
                and not re.search(r"tokeni[sz]e(?!r)", name, re.I):
            # (not `test_ilql_loss_doesnt_crash`: a test, on whatever device it sets up; nor
            # `tokenize_with_loss_mask`: a tokenizer's CPU tensors, named for what they are for)
            sensitive = True
        outer = self._frames[-1] if self._frames else None
        nested = info is None and outer is not None and isinstance(outer.node, cst.FunctionDef)
        if nested and outer.sensitive:
            # a function nested in forward closes over forward's tensors
            sensitive, method_name = True, outer.method_name
        if nested and (outer.sensitive or outer.helper):
            inputs = inputs | ((outer.inputs | outer.derived) - set(params))
            device_names = outer.device_names + device_names
        frame = FunctionOrigins(node, sensitive=sensitive, method_name=method_name, params=params,
                                inputs=inputs, device_names=device_names)
        frame.on_device.update(handed_in or ())
        if info is not None and not is_static_or_class_method(node):
            frame.on_device.update(self._handed_placed(info, node))
        # (a trainer's `_process_one_batch(self, batch_x, batch_y)` that moves `batch_x` itself:
        # its inputs arrive on the CPU, and those it leaves stay there)
        frame.told_device = told_device
        frame.moves_inputs = told_device and self._moves_a_parameter(node, set(params))
        frame.module_runtime = info is not None and info.is_module and (per_input or not info.is_init_time(name)) \
            and not is_static_or_class_method(node)
        frame.device_param = next((p for p in params if is_device_name(p) and not _reads_name(node.body, p)), None)
        frame.returns_to_caller = sensitive and not told_device and (
            method_name is None or name in ("forward", "__call__") or name in _AUTOGRAD_METHODS)
        # (a function without inputs, like the fast path's stubs, is no helper: not asked further)
        frame.helper = bool(inputs) and not sensitive and self._is_helper(node, name, info, inputs)
        self._frames.append(frame)

    def _takes_a_pil_image(self, node: cst.FunctionDef) -> bool:
        """A parameter annotated `Image.Image` (PIL's): host-side image work."""
        params = node.params
        return any(param.annotation is not None
                   and (self.ctx.resolve(param.annotation.annotation) or "").startswith("PIL.")
                   for param in (*params.posonly_params, *params.params, *params.kwonly_params))

    def _to_another_inputs_device(self, move: cst.CSTNode, name: str) -> bool:
        """`neighbors.to(cell.device)`, `x.to(y)`: a parameter sent where another parameter
        is. The function follows its inputs' device; it does not expect them on the CPU."""
        if not isinstance(move, cst.Call) or method_call(move, "to") is None:
            return False
        destination = first_argument(move, "device")
        root = root_name(destination) if destination is not None else None
        return root is not None and root != name and root in self.current.inputs and not is_device_name(root)

    def _handed_to_a_distribution(self, info: Any, name: str, node: cst.FunctionDef) -> Optional[Set[str]]:
        """In a method of a distribution other than `__init__` (a `torch.distributions` subclass,
        TanhNormal, VonMisesFisher, or a class of the project named so: PARL's
        `DiagGaussianDistribution`): the `self.<attr>` that `__init__` set to what it was handed
        (`self.loc = loc`, or a part of it: `mean, logstd = logits`), which are on the caller's
        device. None elsewhere."""
        if info is None or name == "__init__" or is_static_or_class_method(node):
            return None
        torchs = any((self.ctx.resolve(base.value) or "").startswith("torch.distributions.") for base in info.node.bases)
        if not torchs and not any(_DISTRIBUTION_CLASS_RE.search(class_name or "") for class_name in
                                  (info.node.name.value, *(last_identifier(base.value) for base in info.node.bases))):
            return None
        init = info.methods.get("__init__")
        if init is None:
            return set() if torchs else None
        given = set(parameter_names(init)[1:])
        for statement in init.body.body if isinstance(init.body, cst.IndentedBlock) else ():
            for small in statement.body if isinstance(statement, cst.SimpleStatementLine) else ():
                if isinstance(small, cst.Assign) and isinstance(small.value, cst.Name) and small.value.value in given:
                    for target in small.targets:
                        if isinstance(target.target, (cst.Tuple, cst.List)):
                            given.update(_target_names(target.target))  # `mean, logstd = logits`
        # (of a class of the project, only what names a distribution's parameter: a sampler's
        # `UniformDistribution(low, high)` may be handed numbers)
        handed = {f"self.{a.name}" for a in info.assignments
                  if a.method == "__init__" and isinstance(a.value, cst.Name) and a.value.value in given
                  and (torchs or _DISTRIBUTION_PARAMETER_RE.match(a.name))}
        return handed if handed or torchs else None

    def _is_autograd_function(self, info: Any) -> bool:
        """`class Limiter(torch.autograd.Function)`: a custom op, however `Function` was imported."""
        return any(self.ctx.resolve(base.value) in _AUTOGRAD_FUNCTIONS for base in info.node.bases)

    def _is_helper(self, node: cst.FunctionDef, name: str, info: Any, inputs: Set[str]) -> bool:
        """Is a function with inputs, not device-sensitive, a helper receiving tensors?"""
        # a plain function, or a method of a class that is neither a module nor a data
        # pipeline (torchrl's `TensorSpec.is_in(self, val)`), not its dunders (`__call__`
        # of a transform class, `__getitem__` of a dataset)
        # A module's static method (`VAE._reparam(mu, logvar)`, called from forward) is a
        # plain function kept in the class; its class methods build it (`from_config(cls, c)`).
        # Other classes' static and class methods too (liegroups' `SE2.left_jacobian(cls, xi)`).
        pipeline_file = getattr(self.ctx, "data_pipeline_module", False)
        plain = info is None or (info.is_module and "staticmethod" in decorator_names(node)) or (
            not info.is_module
            and not (name.startswith("__") and name.endswith("__") and name != "__init__"
                     and name.strip("_").lstrip("ri") not in _ARITHMETIC
                     # (not a transform: GradCam's `__call__` runs the model and backpropagates,
                     # a diffusion scheduler's `__call__(self, x: Tensor, noise: Tensor, step)` steps
                     # the model's latents)
                     and not (name == "__call__" and (_backpropagates(node) or (
                         (any(annotation_kind(node, p, self.ctx.resolve) == TENSOR for p in inputs)
                          or self._hands_to_torch(node, inputs))  # (PyLaia's CTC decoder: `F.log_softmax(x)`)
                         and not self._in_a_pipeline(info)))))
            and not _PIPELINE_CLASS_RE.search(info.node.name.value)
            and not _PIPELINE_CLASS_RE.search(" ".join(dotted_name(b.value) or "" for b in info.node.bases))
            # (nor a class of a data pipeline's folder: ROMP's `datasets/image_base_relative.py`;
            # a class merely named like a transform may work on the GPU: a `BatchRotation` of SSL)
            and not self.in_a_pipeline_folder())
        # (a method named like a builder runs while its object is built; a plain function so
        # named is a helper when a parameter is annotated as a tensor: `_create_or_accumulate(
        # param: torch.Tensor, ...)`, not `get_sparse_data(pattern)` of a test suite)
        # (`__init__` of a plain class computes on what it is given: `Kmeans(data)` clusters `data`)
        # (a method of a plain class too: DPR's `get_positions(self, input_ids: T, tensorizer)`)
        builder = name != "__init__" and bool(is_init_time_name(name, info) or _BUILDER_RE.search(name)) and (
            (info is not None and info.is_module)
            or not (any(annotation_kind(node, p, self.ctx.resolve) == TENSOR for p in inputs)
                    or (_COMPUTING_BUILDER_RE.search(name) and _calls_tensor_methods_on(node, inputs))
                    or self._hands_to_torch(node, inputs)))
        pipeline = info is None and pipeline_file  # `patchify_image`
        return plain and not builder and not pipeline and not _DATA_PIPELINE_RE.search(name)

    def _hands_to_torch(self, function: cst.FunctionDef, params: Set[str]) -> bool:
        """Does `function` hand one of `params` to a torch function that computes on a tensor
        (`torch.diagonal(omega, offset=1)`, `torch.sum(x)`), not one that makes or converts
        (`torch.zeros(n)`, `torch.as_tensor(data)`)? Then a `get_node_features(omega, ...)`
        computes on the caller's tensors, as a tensor method would show."""
        def computing(call: cst.Call) -> bool:
            args = positional_args(call)
            if not args or root_name(args[0].value) not in params:
                return False
            qualified = self.ctx.resolve(call.func) or ""
            head, _, last = qualified.rpartition(".")
            return head in _COMPUTING_NAMESPACES and returns_tensor(last) and last not in _MAKING_FUNCTIONS
        return _calls(function, computing)

    def _told_its_device(self, name: str, info: Any) -> bool:
        """A method (not a dunder but `__call__`) of a class that keeps the device it was told
        (`ProjectIndex.holds_a_device_here`), neither a data pipeline's nor a test case's."""
        project = self.ctx.project
        return project is not None and not (name.startswith("__") and name.endswith("__") and name != "__call__") \
            and not _DATA_PIPELINE_RE.search(name) and not _PIPELINE_CLASS_RE.search(info.node.name.value) \
            and not _is_a_test_case(info.node) and project.holds_a_device_here(info.name) \
            and not self._in_a_pipeline(info)

    def _moves_a_parameter(self, function: cst.FunctionDef, params: Set[str]) -> bool:
        """Does `function` move one of `params` to a device itself (`x = x.to(self.device)`,
        `self.model(x.cuda())`)?"""
        return _calls(function, lambda call: is_device_move(call) and not moves_to_cpu(call)
                      and not changes_dtype_only(call, self.ctx.resolve)
                      and root_name(method_call(call, "to", "cuda")) in params)

    def in_a_pipeline_folder(self) -> bool:
        """A file of a data pipeline by its name or its folders (`monai/transforms/spatial/array.py`)."""
        path = getattr(self.ctx, "filename", None) or ""
        return any(_DATA_PIPELINE_FILE_RE.search(part) for part in re.split(r"[\\/]", path))

    def _in_a_pipeline(self, info: Any) -> bool:
        """A class of a data pipeline by its file, its folders (`monai/transforms/spatial/
        array.py`) or its bases in the file (`SpatialResample(InvertibleTransform)`)."""
        return self.in_a_pipeline_folder() \
            or _TRANSFORM_CLASS_RE.search(info.name) is not None or any(
                _DATA_PIPELINE_RE.search(dotted_name(base.value) or "") for cls in info.lineage() for base in cls.node.bases)

    def leave_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._frames.pop()

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if not (isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value == "self"):
            return
        info = self.ctx.current_class
        if info is None or self.ctx.current_function is None:
            return
        if func.attr.value not in info.defined_methods:  # (methods the walk reaches later count too)
            return
        position = 0
        for arg in node.args:
            if arg.star:
                return  # (`self.step(*batch)`: which parameter gets what is unknown)
            key: object = arg.keyword.value if arg.keyword is not None else position
            if arg.keyword is None:
                position += 1
            slot = (info.name, func.attr.value, key)
            self._placed_by_callers[slot] = self._placed_by_callers.get(slot, True) and self._placed_here(arg.value)

    def _placed_here(self, value: cst.BaseExpression) -> bool:
        """A value this function moved to a run-time device itself: `x.to(self.device)`, or a
        name bound to such a move (not whatever else the walk takes to be on a device: what
        these facts give a caller or a callee must be certain)."""
        if isinstance(value, cst.Name):
            return value.value in self.current.placed
        if isinstance(value, cst.Attribute):  # `self.online_q` moved where the object was built
            return self_attribute_key(value) is not None and self._moved_by_a_method(value)
        return is_device_move(value) and not moves_to_cpu(value) and self.is_on_device(value)

    def _handed_placed(self, info: Any, node: cst.FunctionDef) -> Set[str]:
        """The parameters of method `node` that every call of it in the class walked so far
        gave a tensor on a run-time device."""
        params = parameter_names(node)[1:]  # (after `self`)
        placed = set()
        for index, param in enumerate(params):
            answers = [self._placed_by_callers.get((info.name, node.name.value, key)) for key in (index, param)]
            if any(answers) and False not in answers:
                placed.add(param)
        return placed

    def leave_Return(self, node: cst.Return) -> None:
        info, function = self.ctx.current_class, self.ctx.current_function
        if info is None or function is None or info.methods.get(function.name.value) is not function \
                or node.value is None or (isinstance(node.value, cst.Name) and node.value.value == "None"):
            return
        key = (info.name, function.name.value)
        self._device_returns[key] = self._device_returns.get(key, True) and self.is_on_device(node.value) \
            and any(self._placed_here(read) for read in _reads_of(node.value))

    def _returns_on_device(self, call: cst.Call) -> bool:
        """`self.predict(s)` of a method of the class (defined above) whose every return is
        on a run-time device."""
        info, func = self.ctx.current_class, call.func
        return info is not None and isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) \
            and func.value.value == "self" and self._device_returns.get((info.name, func.attr.value), False)

    def visit_With(self, node: cst.With) -> None:
        if any(isinstance(item.item, cst.Call) and self.ctx.resolve(item.item.func) == "torch.device"
               for item in node.items):
            self._device_blocks += 1
            self._device_withs.add(id(node))

    def leave_With(self, node: cst.With) -> None:
        if id(node) in self._device_withs:
            self._device_withs.discard(id(node))
            self._device_blocks -= 1

    def leave_Assign(self, node: cst.Assign) -> None:
        fresh = self.ctx.project_says(node.value.func, "fresh_parts") \
            if isinstance(node.value, cst.Call) and (self.current.sensitive or self.current.helper) else None
        for target in node.targets:
            pairs = unpacked_pairs(target.target, node.value)
            if pairs is not None:
                for name, value in pairs:
                    self._bind(name, value, node)  # x, y = x.to(d), y.to(d)
            elif isinstance(target.target, (cst.Tuple, cst.List)):
                # `values, idx = torch.unique(x, return_inverse=True)`: each part as the whole
                for index, element in enumerate(target.target.elements):
                    self._bind(element.value, node.value, node)
                    if fresh and len(fresh) == len(target.target.elements) and fresh[index]:  # type: ignore[arg-type]
                        self._made_by_a_helper(element.value)
                frame = self.current
                if frame.sensitive and isinstance(node.value, cst.Name) and node.value.value in frame.inputs:
                    # `log_pi, mu, sigma = x` in a loss: the parts of the caller's input, as it is
                    frame.input_parts.update(e.value.value for e in target.target.elements
                                             if isinstance(e.value, cst.Name))
            else:
                self._bind(target.target, node.value, node)
                if fresh == (True,):
                    self._made_by_a_helper(target.target)

    def _made_by_a_helper(self, target: cst.CSTNode) -> None:
        """`m = _offset_matrix(image)` of a project function whose result is a new CPU tensor
        of its own (`torch.eye(n)` filled there): not computed from the inputs. (Not made here
        either: what combines it with an input, `x @ m`, is still the input's.)"""
        if isinstance(target, cst.Name):
            frame = self.current
            frame.derived.discard(target.value)
            frame.network_outputs.discard(target.value)
            frame.carried.discard(target.value)
            frame.on_device.discard(target.value)

    def visit_For(self, node: cst.For) -> None:
        # `for topology, n in zip(system.topologies, system.n_copies):` what the loop walks
        # over is computed from the inputs, and so is each item
        frame = self.current
        if frame.sensitive or frame.helper:
            derived = self._reads_inputs(list(names_read(node.iter)))
            # (`for i, m in enumerate(masks)`: `i` counts, it is no item of the input)
            counter = node.target.elements[0].value if isinstance(node.iter, cst.Call) \
                and last_identifier(node.iter.func) == "enumerate" and isinstance(node.target, cst.Tuple) \
                and node.target.elements else None
            for target in _target_names(node.target):
                (frame.derived.add if derived else frame.derived.discard)(target)
                carried = derived and not (isinstance(counter, cst.Name) and counter.value == target)
                (frame.carried.add if carried else frame.carried.discard)(target)
                self._forget(target, node)
        for item, module in parameter_loop_targets(node.target, node.iter):
            # the parameters of a module sit where it was moved: of `self` in its methods
            # that run after it is built, of a model moved here
            if (frame.module_runtime and isinstance(module, cst.Name) and module.value == "self") \
                    or self.is_on_device(module):
                frame.on_device.add(item.value)

    def _bind_comprehension_items(self, node: cst.BaseComp) -> None:
        # `[torch.cat([n, pad]) for n in nbrs]` with `nbrs` computed from the inputs: each item
        # is the inputs' as a loop's is. Bound before the element is visited (it comes first in
        # the tree). A target that holds something else here (`for i in range(n)`) is that,
        # inside the comprehension only: what the name held outside comes back after it.
        frame = self.current
        if not (frame.sensitive or frame.helper):
            return
        hidden: List[Tuple[str, bool, bool]] = []
        for clause in comprehension_clauses(node.for_in):
            iterable, target_node = clause.iter, clause.target
            if isinstance(iterable, cst.Call) and last_identifier(iterable.func) == "enumerate" and iterable.args \
                    and isinstance(target_node, cst.Tuple) and len(target_node.elements) == 2:
                # `for i, t in enumerate(targets)`: `t` is an item, `i` a number
                for target in _target_names(target_node.elements[0].value):
                    hidden.append((target, target in frame.derived, target in frame.carried))
                iterable, target_node = iterable.args[0].value, target_node.elements[1].value
            if self._reads_inputs(list(names_read(iterable))) and not (
                    isinstance(iterable, cst.Call) and last_identifier(iterable.func) in ("enumerate", "range")):
                for target in _target_names(target_node):
                    if target not in frame.new_tensors:
                        frame.derived.add(target)
                        frame.carried.add(target)
            else:
                for target in _target_names(target_node):
                    hidden.append((target, target in frame.derived, target in frame.carried))
        for target, _, _ in hidden:
            frame.derived.discard(target)
            frame.carried.discard(target)
        self._hidden_by_comprehension[id(node)] = hidden

    def _unbind_comprehension_items(self, node: cst.BaseComp) -> None:
        for target, derived, carried in self._hidden_by_comprehension.pop(id(node), ()):
            if derived:
                self.current.derived.add(target)
            if carried:
                self.current.carried.add(target)

    visit_ListComp = visit_SetComp = visit_GeneratorExp = visit_DictComp = _bind_comprehension_items
    leave_ListComp = leave_SetComp = leave_GeneratorExp = leave_DictComp = _unbind_comprehension_items

    def leave_Expr(self, node: cst.Expr) -> None:
        frame = self.current
        # `model.to(device)` as a statement moves a module in place; `model(t)` then meets t there
        target = move_target(node.value)
        if target is not None:
            frame.on_device.add(target)
        collected = method_call(node.value, "append")
        if isinstance(collected, cst.Name) and len(node.value.args) == 1 and not node.value.args[0].keyword:
            # `preds.append(model(x))`, then `torch.cat(preds)`: a list of tensors sits where they do
            item = node.value.args[0].value
            if self.is_on_device(item):
                frame.on_device.add(collected.value)
            elif (frame.sensitive or frame.helper) and self._reads_inputs(list(names_read(item))) \
                    and self._computes_a_tensor(item):
                frame.derived.add(collected.value)
                if self._carries_an_input(item):
                    frame.carried.add(collected.value)  # `parts.append(x[idx])`: the input's parts
        copied = method_call(node.value, "copy_")
        if copied is not None and node.value.args and frame.helper and root_name(copied) in frame.made_here \
                and self._reads_inputs(list(names_read(node.value.args[0].value))):
            frame.copies_input_to_host = True

    def _bind(self, target: cst.CSTNode, value: cst.CSTNode, statement: cst.Assign) -> None:
        key = self_attribute_key(target)
        if key is not None:
            self._forget(key, statement)  # `self.h = new_h`
            # `self.labels = torch.arange(n, device=x.device)`, read later in the method
            (self.current.on_device.add if self.is_on_device(value) else self.current.on_device.discard)(key)
        if not isinstance(target, cst.Name):
            return
        frame, name = self.current, target.value
        frame.input_parts.discard(name)
        arms = [value.body, value.orelse] if isinstance(value, cst.IfExp) else [value]
        if any(self._is_cuda_type(arm) for arm in arms):
            self._cuda_types.add(name)
        else:
            self._cuda_types.discard(name)
        self._forget(name, statement)
        derived = False
        if frame.sensitive or frame.helper:  # where inputs are tensors: what is made here, what follows them
            read = list(names_read(value))
            # (`x[idx]` of an input indexed by a CPU tensor made here is the input's, where it is)
            made = (any(n in frame.new_tensors or n in frame.made_here for n in read)  # (the cheap walk first)
                    and any(n in frame.new_tensors or n in frame.made_here for n in _names_read_outside_indexes(value))) \
                or self.ctx.kinds.is_fixed_tensor(value, True) or self._tensor_of_a_list(value)
            (frame.made_here.add if made else frame.made_here.discard)(name)
            derived = not made and self._reads_inputs(read)
            (frame.derived.add if derived else frame.derived.discard)(name)
            (frame.network_outputs.add if derived and self._calls_a_held_network(value)
             else frame.network_outputs.discard)(name)
            (frame.carried.add if derived and self._carries_an_input(value)
             else frame.carried.discard)(name)
            if not derived and not made and frame.inputs_set_aside:
                _count_rebinding(frame.inputs_set_aside, name, self.ctx.arms())
            if name in frame.inputs and not derived and not made:
                # `y = y.type(torch.LongTensor)`: a parameter rebound to something that is not
                # computed from the inputs is no longer the caller's tensor; in an arm of an
                # `if`, only until the `if` ends, unless every way through rebinds it
                frame.inputs = frame.inputs - {name}
                arms = self.ctx.arms()
                if arms:
                    held = frame.inputs_set_aside.setdefault(arms[-1][0], {}).setdefault(name, (None, (), set()))
                    held[2].add(arms[-1][1])
        # (after `made` was decided: `boxes = torch.as_tensor(boxes)` reads the list it rebinds)
        (frame.lists.add if isinstance(value, (cst.List, cst.Tuple, cst.ListComp)) else frame.lists.discard)(name)
        if name in frame.params and is_device_move(value) and name in names_read(value) \
                and not changes_dtype_only(value, self.ctx.resolve) \
                and not self._to_another_inputs_device(value, name):  # (not `coords.to(torch.int64)`)
            frame.moves_inputs = True
        if self.is_on_device(value) or (derived and self._computes_a_tensor(value)):
            frame.on_device.add(name)
        else:
            frame.on_device.discard(name)
        # placed here: `a = torch.tensor(a).to(self.device)`, not just computed from the inputs
        (frame.placed.add if is_device_move(value) and not moves_to_cpu(value) and self.is_on_device(value)
         else frame.placed.discard)(name)
        if self.is_device_value(value) and not is_device_move(value):
            frame.device_names.append(name)
            # `device = grads.device`: the code takes `grads` to be where its tensors go (not a
            # tensor made here on a fixed device, whose `.device` is the CPU)
            owner = value.value if isinstance(value, cst.Attribute) and value.attr.value == "device" else None
            if isinstance(owner, cst.Name) and owner.value != "self" and owner.value not in frame.made_here \
                    and not self.ctx.kinds.is_fixed_tensor(owner, True):
                frame.on_device.add(owner.value)

    def _tensor_of_a_list(self, value: cst.CSTNode) -> bool:
        """`torch.as_tensor(gt_boxes).reshape(-1, 4)` of a list the function built (detectron2's
        boxes read from JSON annotations): a CPU tensor of its own, whatever the list was
        computed from."""
        while isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) \
                and isinstance(value.func.value, cst.Call):
            value = value.func.value
        if not (isinstance(value, cst.Call) and value.args and isinstance(value.args[0].value, cst.Name)
                and value.args[0].value.value in self.current.lists):
            return False
        return self.ctx.resolve(value.func) in ("torch.as_tensor", "torch.tensor", "torch.asarray")

    def _carries_an_input(self, value: cst.CSTNode) -> bool:
        """Is `value` what an input (or a local carrying one) becomes as a whole: handed to a
        call (`utils.repeat_by_expand_at(inputs, n)`), a method of it (`x.index_select(0, i)`),
        a part of it (`x[0]`), arithmetic on it; not a number read from one of its attributes
        (`location.width / n`)."""
        frame = self.current
        if isinstance(value, cst.Name):
            return value.value in frame.inputs or value.value in frame.carried
        if isinstance(value, cst.Call):
            if (last_identifier(value.func) or "") in NEUTRAL_CALLEES or method_call(value, *TO_PYTHON) is not None:
                return False  # `float(x)`, `len(xs)`, `x.item()`: Python data
            receiver = value.func.value if isinstance(value.func, cst.Attribute) else None
            return (receiver is not None and self._carries_an_input(receiver)) or any(
                self._carries_an_input(arg.value) for arg in value.args)
        if isinstance(value, cst.Subscript):
            return self._carries_an_input(value.value)
        if isinstance(value, cst.Attribute):
            return value.attr.value in TENSOR_ATTRIBUTES and self._carries_an_input(value.value)
        if isinstance(value, cst.BinaryOperation):
            if isinstance(value.operator, (cst.FloorDivide, cst.Modulo)):
                return False  # `grid_h // merge`: a size or an index (Comfy's qwen_vl windows)
            return self._carries_an_input(value.left) or self._carries_an_input(value.right)
        if isinstance(value, cst.UnaryOperation):
            return self._carries_an_input(value.expression)
        return False

    def _calls_a_held_network(self, value: cst.CSTNode) -> bool:
        """`self.targ_policy(x)`: a callable the object keeps, not one of its class's methods
        (a network, or a loss), called on what the method was given; in a helper, a callable
        it was handed (`kernel(x, y)`, `loss_fn(pred, target)`): what it computes from the
        inputs is where they are."""
        if isinstance(value, cst.Call) and isinstance(value.func, cst.Name) and self.current.helper \
                and value.func.value in self.current.params:
            return True
        info = self.ctx.current_class
        if not (isinstance(value, cst.Call) and self_attribute_key(value.func) is not None and info is not None):
            return False
        name = value.func.attr.value  # type: ignore[attr-defined]
        return not any(isinstance(s, cst.FunctionDef) and s.name.value == name for s in info.node.body.body)

    def _computes_a_tensor(self, value: cst.CSTNode) -> bool:
        """A tensor by the model's kinds, or the result of a torch op (`torch.cov(x.T)`)."""
        if isinstance(value, cst.Call) and is_tensor_op(self.ctx.resolve(value.func)):
            return returns_tensor((self.ctx.resolve(value.func) or "").rsplit(".", 1)[-1])
        return self.ctx.kinds.is_tensor(value)

    def _reads_inputs(self, read: List[str]) -> bool:
        """Do the names a value reads (`names_read`) compute it from the function's
        inputs or a local derived from them (not only their size: `x.view(x.size(0), -1)`
        is derived from x, `x.shape[0] * 2` is not), other than on the host?"""
        frame = self.current
        if any(isinstance(name, _SizeOrHost) and name in _HOST for name in read):
            return False  # `x.cpu()`, `x.numpy()`: host-side work on purpose
        return any(name in frame.inputs or name in frame.derived for name in read
                   if not isinstance(name, _SizeOrHost))

    # ------------------------------------------------------------ queries

    def is_device_value(self, node: cst.CSTNode) -> bool:
        """A device chosen at run time: `x.device`, `device`, `torch.device(name)`."""
        if isinstance(node, cst.Attribute) and node.attr.value == "device":
            # ... unless it is the device of a CPU tensor made here: torch.zeros(n, device=t.device)
            return not (isinstance(node.value, cst.Name) and node.value.value in self.current.new_tensors)
        identifier = last_identifier(node) if isinstance(node, (cst.Name, cst.Attribute)) else None
        if identifier is not None and is_device_name(identifier):
            return True
        if isinstance(node, cst.Call) and self.ctx.resolve(node.func) == "torch.device":
            name = node.args[0].value if node.args else None
            # (not `torch.device("cpu")`: yolov5's export loads its model there on purpose)
            return name is not None and not is_cuda_literal(name) and not (
                isinstance(name, cst.SimpleString) and str(name.evaluated_value).startswith("cpu"))
        return False

    def _is_cuda_type(self, node: cst.CSTNode) -> bool:
        """`torch.cuda.FloatTensor`, or a name bound to one where CUDA is there."""
        if isinstance(node, cst.Name) and node.value in self._cuda_types:
            return True
        qualified = self.ctx.resolve(node) or ""
        return qualified.startswith("torch.cuda.") and qualified.endswith("Tensor")

    def _moves_with_module(self, node: cst.CSTNode) -> bool:
        """`self.decay` of a parameter or buffer, or `self.emb.weight` of a sub-module's,
        read in a method that runs after the module is built: it sits wherever the module
        was moved."""
        info = self.ctx.current_class
        if not self.current.module_runtime or info is None or not isinstance(node, cst.Attribute):
            return False
        if self_attribute_key(node) is not None:
            return info.moves_with_module(node.attr.value)
        return node.attr.value in _SUB_MODULE_PARAMETERS and self_attribute_key(node.value) is not None \
            and info.holds_a_module(node.value.attr.value)  # type: ignore[attr-defined]

    def _moved_by_a_method(self, node: cst.CSTNode) -> bool:
        """`self.model` of a class one of whose methods (or its base class's in the file) moves it
        (`self.model.to(self.device)`), read in another method that runs once the object is built."""
        info, function, project = self.ctx.current_class, self.ctx.current_function, self.ctx.project
        if info is None or function is None or project is None or self_attribute_key(node) is None \
                or (info.is_init_time(function.name.value) and id(function) not in self.per_input_methods):
            return False
        moved = project.own.moved_attributes  # type: ignore[attr-defined]
        return any(node.attr.value in moved.get(cls.name, ()) for cls in info.lineage())

    def is_on_device(self, node: cst.CSTNode) -> bool:
        """A tensor known to sit on a run-time device: `x.to(device)`, `x.cuda()`,
        `torch.zeros(n, device=device)`, `x.type(Tensor)` and `Tensor(...)` of a CUDA type
        chosen where CUDA is there, or a local name bound to one."""
        node = _same_tensor(node)
        if moves_to_cpu(node):
            return False  # `mask.cpu()`: host-side work on purpose
        if isinstance(node, cst.Call) and node.args:
            if self._is_cuda_type(node.func) or (method_call(node, "type") is not None
                                                 and self._is_cuda_type(node.args[0].value)):
                return True  # `Tensor(np.random.normal(...))`, `imgs.type(Tensor)`
            if self.ctx.resolve(node.func) in VARIABLE:
                return self.is_on_device(node.args[0].value)  # `Variable(t)` is t
        if isinstance(node, (cst.Name, cst.Attribute)):
            return dotted_name(node) in self.current.on_device or self._moves_with_module(node) \
                or self._moved_by_a_method(node)
        if is_device_move(node):
            receiver = method_call(node, "to", "cuda")
            assert isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute)
            if node.func.attr.value == "to" and keyword(node, "device") is None \
                    and is_dtype(node.args[0].value, self.ctx.resolve):
                return self.is_on_device(receiver)  # values.to(torch.float32) changes the dtype only
            return not (isinstance(receiver, cst.Name) and receiver.value == "self")
        if isinstance(node, cst.Call) and (self.ctx.resolve(node.func) in _FACTORY_NAMES
                                           or keyword(node, "device") is not None):
            # (also any function told the device: gflownet's `tlong(states, device=self.device)`)
            device = keyword(node, "device")
            return device is not None and (self.is_device_value(device.value) or is_cuda_literal(device.value))
        if isinstance(node, cst.BinaryOperation):
            return self.is_on_device(node.left) or self.is_on_device(node.right)
        if isinstance(node, cst.Comparison):
            return self.is_on_device(node.left) or any(self.is_on_device(t.comparator) for t in node.comparisons)
        if isinstance(node, cst.Subscript):
            return self.is_on_device(node.value)
        if isinstance(node, cst.Call):
            if self._returns_on_device(node):
                return True
            # computed from a device tensor: `logits.argmax(1)`, `model(images)` of moved images
            if isinstance(node.func, cst.Attribute) and node.func.attr.value not in TO_PYTHON \
                    and self.is_on_device(node.func.value):
                return True
            if isinstance(node.func, cst.Name) and node.func.value in self.current.on_device \
                    and self.ctx.kinds.is_module(node.func):
                # `pos, neg = model(u, seq)` of a moved model: what it computes is there (not
                # what a moved pipeline returns: diffusers' images are arrays)
                return True
            callee = last_identifier(node.func) or ""
            qualified = self.ctx.resolve(node.func)
            if callee in NEUTRAL_CALLEES and not is_tensor_op(qualified):
                return False  # (Python's `max(a, b)`, not `torch.max(x, 1)`)
            if qualified is not None and not (is_tensor_op(qualified) and callee not in FACTORIES
                                              and returns_tensor(callee)):
                return False  # only torch's ops compute where their tensors are: `torch.stack([a, b])`
            values: List[cst.BaseExpression] = []
            for arg in node.args:
                if arg.keyword is not None:
                    continue
                if qualified is not None and isinstance(arg.value, (cst.List, cst.Tuple)):
                    values.extend(element.value for element in arg.value.elements)  # `torch.cat([a, b])`
                else:
                    values.append(arg.value)
            return any(self.is_on_device(value) for value in values)
        return False

    def is_input_tensor(self, node: cst.CSTNode, proven: bool = False) -> bool:
        """Known to be a tensor where the model's tensors are: on a run-time device, in
        device-sensitive code also an input (`x` of `forward(self, x)`), and in a helper an
        input known to be a tensor (`x: Tensor`, `x.size(0)`). `proven`: where `node` is
        used says it is a tensor (the index of `t.scatter_(1, labels.view(-1, 1), 1)`)."""
        node = _same_tensor(node)
        if self.is_on_device(node):
            return True
        if isinstance(node, cst.Comparison):
            # `torch.sigmoid(gate) < threshold`: a tensor where a compared tensor is
            return self.is_input_tensor(node.left, proven) \
                or any(self.is_input_tensor(target.comparator, proven) for target in node.comparisons)
        if isinstance(node, cst.UnaryOperation) and not isinstance(node.operator, cst.Not):
            return self.is_input_tensor(node.expression, proven)  # `~mask`, `-x`: where the tensor is
        if isinstance(node, cst.BinaryOperation) and not isinstance(node.operator, _NOT_ELEMENTWISE):
            # `(1 - eps) * F.one_hot(labels, n)`: a tensor where either operand is one, whatever
            # the other (a number); the left operand alone shows nothing (`eps`, `stride`)
            return self.is_input_tensor(node.left, proven) or self.is_input_tensor(node.right, proven)
        if isinstance(node, cst.Call) and self._sub_module_output(node):
            return True
        if isinstance(node, (cst.Subscript, cst.BinaryOperation, cst.Call)):
            # `spot[..., 1:]`, `unit.diff(dim=-1).abs()`, `spot * unit`: computed from an input
            # known to be a tensor, where it is
            root = tensor_expression_root(node, self.ctx.resolve)
            if root is None:
                return False
            # (`x.unsqueeze(1)`, `x[None, :, :]`: the expression shows that x is a tensor; a
            # product shows nothing of its factors: `torch.arange(n) * stride`)
            shown = self.ctx.kinds.is_tensor(root) or (
                not isinstance(node, cst.BinaryOperation) and (proven or self.ctx.kinds.is_tensor(node)))
            return shown and self.is_input_tensor(root, proven=True)
        frame = self.current
        if isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name) \
                and node.value.value in frame.inputs and node.value.value not in frame.new_tensors \
                and node.attr.value not in TO_PYTHON and not _COUNT_ATTRIBUTE_RE.search(node.attr.value) \
                and ((frame.sensitive and not (frame.told_device and frame.moves_inputs))
                     or (frame.helper and proven and not frame.moves_inputs)):
            # `motion.field`, `data.pos` of forward's input: its data, where it is; in a helper,
            # where its use shows a tensor (`torch.cat((state.features, t))`)
            return True
        if not isinstance(node, cst.Name) or node.value in frame.new_tensors:
            return False  # a parameter rebound to a new CPU tensor is no longer the caller's
        # a local computed from the inputs, known to be a tensor, is where they are
        network_output = node.value in frame.network_outputs
        # (in device-sensitive code, what a call computes from an input is where the input is:
        # `out = utils.repeat(inputs, n)`, then `out + noise`; not `location.width / n`)
        if node.value not in frame.inputs and node.value not in frame.input_parts and not (
                node.value in frame.derived and (proven or network_output or self.ctx.kinds.is_tensor(node)
                                                 or (frame.sensitive and node.value in frame.carried))):
            return False
        return (frame.sensitive and not (frame.told_device and frame.moves_inputs)) \
            or (frame.helper and not frame.moves_inputs
                and (proven or network_output or self.ctx.kinds.is_tensor(node)))

    def _sub_module_output(self, call: cst.Call) -> bool:
        """`self.eag(ie, response)` in a module's run-time method: a sub-module computing on
        the inputs, where the module (and the inputs) are."""
        info = self.ctx.current_class
        key = self_attribute_key(call.func)
        if not self.current.module_runtime or info is None or key is None:
            return False
        # (assigned a module in the class: not any `self.count(...)` a base class may define)
        if not info.assigns_a_module(call.func.attr.value):  # type: ignore[attr-defined]
            return False
        return any(self._reads_inputs(list(names_read(arg.value))) for arg in call.args)

    def involves_input(self, node: cst.CSTNode) -> bool:
        """`is_input_tensor`, or a value computed from one (`x > 0`, `(pred == y).sum()`)."""
        if self.is_input_tensor(node):
            return True
        if isinstance(node, cst.Comparison):
            return self.involves_input(node.left) or any(self.involves_input(t.comparator) for t in node.comparisons)
        if isinstance(node, cst.BinaryOperation):
            return self.involves_input(node.left) or self.involves_input(node.right)
        if isinstance(node, cst.UnaryOperation):
            return self.involves_input(node.expression)
        if isinstance(node, cst.IfExp):  # `out.unsqueeze(1) if ... else out`
            return self.involves_input(node.body) or self.involves_input(node.orelse)
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value not in TO_PYTHON:
            return self.involves_input(node.func.value)
        return False


# What a sub-module keeps of its own parameters: `self.emb.weight`.
_SUB_MODULE_PARAMETERS = frozenset({"weight", "bias"})

# Operators whose result need not be computed on their operands' device: `%` of strings.
_NOT_ELEMENTWISE = (cst.Modulo,)

# Methods whose result's device is not the receiver's (`x.cpu()`: host-side work on purpose).
_PLACING_METHODS = frozenset({"cpu", "to", "cuda", "type", "type_as", "new_tensor"})


def _count_rebinding(set_aside: Dict[int, Dict[str, tuple]], name: str, here: Tuple[Tuple[int, bool], ...]) -> None:
    """`name` is bound again at `here` (`Analyzer.arms()`): in each `if` that set it aside,
    this arm binds it too (the third item of its entry: the arms that did)."""
    for place, in_body in here:
        held = set_aside.get(place, {}).get(name)
        if held is not None:
            held[2].add(in_body)


def tensor_expression_root(node: cst.CSTNode, resolve) -> Optional[cst.Name]:
    """The name a tensor expression is computed from: `x` of `x[..., 1:]`, `x.diff().abs()`,
    `torch.unsqueeze(x, -1)`, `x * y`; None where the result may be no tensor (`x.size(0)`,
    `x.shape[0]`)."""
    while True:
        if isinstance(node, cst.Name):
            return node
        if isinstance(node, cst.Subscript):
            node = node.value
        elif isinstance(node, cst.Call) and node.args and not node.args[0].keyword \
                and (resolve(node.func) or "").startswith("torch.") and is_tensor_op(resolve(node.func)):
            if resolve(node.func) in _FACTORY_NAMES or resolve(node.func)[len("torch."):] in LEGACY_TENSOR_TYPES:
                # `torch.arange(w)`: made from a size, not computed from w; `torch.FloatTensor(anchors)`
                # copies data to the CPU (and refuses a GPU tensor)
                return None
            node = node.args[0].value  # `torch.unsqueeze(x, -1)`: where x is
        elif isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) \
                and node.func.attr.value not in TO_PYTHON and node.func.attr.value not in NOT_TENSOR_METHODS \
                and (node.func.attr.value not in _PLACING_METHODS or changes_dtype_only(node, resolve)):
            node = node.func.value  # (`labels.type(torch.long)` stays where labels are)
        elif isinstance(node, cst.BinaryOperation):
            return tensor_expression_root(node.left, resolve) or tensor_expression_root(node.right, resolve)
        elif isinstance(node, cst.Attribute) and node.attr.value in SAME_TENSOR_ATTRIBUTES:
            node = node.value  # `gate.data`, `w.T`
        else:
            return None


# Attributes of a tensor that are a tensor on its device: `x.data`, `w.T`.
SAME_TENSOR_ATTRIBUTES = frozenset({"data", "T", "mT", "H", "mH", "real", "imag"})


def _same_tensor(node: cst.CSTNode) -> cst.CSTNode:
    """`x` of `x.data`, `x.T.data`: what decides where the tensor is."""
    while isinstance(node, cst.Attribute) and node.attr.value in SAME_TENSOR_ATTRIBUTES:
        node = node.value
    return node


class _SizeOrHost(str):
    """A marker `names_read` yields for `.cpu()`, `.numpy()`, `.shape`, `len(...)`."""


def _target_names(target: cst.CSTNode) -> Iterator[str]:
    """The names a `for` target binds (`i, (x, y)`)."""
    if isinstance(target, cst.Name):
        yield target.value
    elif isinstance(target, (cst.Tuple, cst.List)):
        for element in target.elements:
            yield from _target_names(element.value)


def _is_a_test_case(node: cst.ClassDef) -> bool:
    """`class TestIndoorMetric(unittest.TestCase)`: tests of a metric, not a metric."""
    return node.name.value.startswith("Test") or any(
        (last_identifier(base.value) or "").endswith("TestCase") for base in node.bases)


def _names_read_outside_indexes(node: cst.CSTNode) -> Iterator[str]:
    """`names_read`, less the names read inside the brackets of a subscript."""
    kind = type(node)
    if kind is cst.Subscript:
        yield from _names_read_outside_indexes(node.value)
    elif kind is cst.Attribute and node.attr.value not in _SIZE_OR_HOST:
        yield from _names_read_outside_indexes(node.value)
    elif kind is cst.Call and not (type(node.func) is cst.Name and node.func.value in ("len", "int", "float")) \
            and not moves_to_cpu(node) and not _casts_to_cpu_type(node):
        for child in children(node):
            yield from _names_read_outside_indexes(child)
    elif kind in (cst.BinaryOperation, cst.UnaryOperation, cst.Comparison, cst.ComparisonTarget, cst.Arg,
                  cst.Tuple, cst.List, cst.Element, cst.IfExp):
        for child in children(node):
            yield from _names_read_outside_indexes(child)
    else:
        yield from names_read(node)


def names_read(node: cst.CSTNode) -> Iterator[str]:
    """The names an expression reads, in order; a `_SizeOrHost` marker where it reads a
    size or a host copy (`x.shape`, `x.size(0)`, `len(x)`, `x.cpu()`)."""
    # (by exact class: libcst's node classes are ABCs, and `isinstance` against one a node
    # is not goes through `abc`; this runs for every node of every value bound)
    kind = type(node)
    if kind is cst.Name:
        yield node.value
        return
    if kind is cst.Attribute:
        if node.attr.value in _SIZE_OR_HOST:
            yield _SizeOrHost(node.attr.value)
            return
        yield from names_read(node.value)
        return
    if kind is cst.Call and type(node.func) is cst.Name and node.func.value in ("len", "int", "float"):
        yield _SizeOrHost(node.func.value)
        return
    if kind is cst.Call and _SIZE_GETTER_RE.match(last_identifier(node.func) or ""):
        yield _SizeOrHost("size")  # `orig_w, orig_h = get_image_size(image)`: numbers
        return
    if kind is cst.Call and (moves_to_cpu(node) or _casts_to_cpu_type(node)):
        yield _SizeOrHost("cpu")  # `x.to("cpu")`, `x.type(torch.LongTensor)`
        return
    if kind is cst.Lambda:
        return  # names there may be the lambda's own
    if kind in (cst.ListComp, cst.GeneratorExp, cst.SetComp, cst.DictComp):
        # what the comprehension reads of the enclosing code (`[t["boxes"] for t in targets]`
        # reads `targets`), not its own loop names
        own: Set[str] = set()
        counted: List[cst.CSTNode] = []  # `range(...)` iterables: numbers, not data
        for clause in comprehension_clauses(node.for_in):
            own.update(_target_names(clause.target))
            if type(clause.iter) is cst.Call and type(clause.iter.func) is cst.Name and clause.iter.func.value == "range":
                counted.append(clause.iter)
        stack: List[cst.CSTNode] = list(children(node))
        while stack:
            child = stack.pop(0)
            if any(child is iterable for iterable in counted):
                continue
            if type(child) is cst.CompFor:
                stack[:0] = children(child)
                continue
            for name in names_read(child):
                if isinstance(name, _SizeOrHost) or name not in own:
                    yield name
        return
    for child in children(node):
        yield from names_read(child)


def _backpropagates(function: cst.FunctionDef) -> bool:
    """Does `function` call `.backward(...)` (`loss.backward()`, `out.backward(gradient=g)`)?
    Autograd work on a model's outputs, never a data transform's."""
    return _calls_a_method(function, lambda name, receiver: name == "backward")


def _calls_tensor_methods_on(function: cst.FunctionDef, params: Set[str]) -> bool:
    """Does `function` call a method only tensors have, other than a query (`x.size(0)`), on one
    of `params` (`cell_offsets.float().view(-1, 1, 3).bmm(cell)`, `x.unsqueeze(1)`)? Then a
    `get_pbc_distances(pos, cell)` computes on the caller's tensors rather than getting something."""
    return _calls_a_method(function, lambda name, receiver: name in TENSOR_ONLY_METHODS
                           and name not in NOT_TENSOR_METHODS and root_name(receiver) in params)


def _calls_a_method(function: cst.FunctionDef, wanted: Callable[[str, cst.BaseExpression], bool]) -> bool:
    """Does `function` itself (not a function or class nested in it) call `receiver.name(...)`
    for a `wanted(name, receiver)`?"""
    return _calls(function, lambda call: isinstance(call.func, cst.Attribute)
                  and wanted(call.func.attr.value, call.func.value))


def _calls(function: cst.FunctionDef, wanted: Callable[[cst.Call], bool]) -> bool:
    """Does `function` itself (not a function or class nested in it) make a `wanted` call?"""
    stack: List[cst.CSTNode] = [function.body]
    while stack:
        node = stack.pop()
        if isinstance(node, cst.Call) and wanted(node):
            return True
        if not isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            stack.extend(children(node))
    return False


_COMPUTING_NAMESPACES = frozenset({"torch", "torch.nn.functional", "torch.linalg", "torch.fft", "torch.special"})
# torch's functions that make a tensor from sizes or data, or convert data: an argument of
# theirs need not be a tensor
_MAKING_FUNCTIONS = frozenset({*FACTORIES, "from_numpy", "frombuffer", "asarray", "broadcast_shapes"})


# A custom autograd op: its static `forward(ctx, x)` and `backward(ctx, grad)` get the
# caller's tensors (and the gradients, on their device) and must answer on that device.
_AUTOGRAD_FUNCTIONS = frozenset({"torch.autograd.Function", "torch.autograd.function.Function",
                                 "torch.autograd.function.InplaceFunction"})
_AUTOGRAD_METHODS = frozenset({"forward", "backward"})


def maybe_tensor_params(function: cst.FunctionDef) -> List[str]:
    """Parameters that may hold tensors: not self/cls, not annotated as Python data
    (numbers, strings, flags, lists of them) nor defaulted to a value other than `None`."""
    names = []
    params = function.params
    for param in (*params.posonly_params, *params.params, *params.kwonly_params):
        name = param.name.value
        if name in ("self", "cls"):
            continue
        annotation = param.annotation.annotation if param.annotation is not None else None
        if annotation is not None and annotates_python_data(annotation):
            continue  # `n: int`, `cost: Optional[List[float]]`
        if param.default is not None and not (isinstance(param.default, cst.Name) and param.default.value == "None"):
            continue
        if _SIZE_PARAMETER_RE.search(name):
            continue  # `random_sample(size=None)`: a shape, not the caller's tensor
        names.append(name)
    if isinstance(params.star_arg, cst.Param) and params.star_arg.annotation is None \
            and not _SIZE_PARAMETER_RE.search(params.star_arg.name.value):
        names.append(params.star_arg.name.value)  # `forward(self, *inputs)`: `x = inputs[0]`
    return names


def is_tensor_op(qualified: Optional[str]) -> bool:
    """`torch.cat`, `torch.where`, `torch.nn.functional.pad`, `torch.linalg.solve`,
    `torchvision.ops.batched_nms`: functions whose result lives where their tensor
    arguments live, and which need them on one device."""
    if not qualified or qualified.rsplit(".", 1)[-1].startswith("_"):
        return False  # private ops keep their own conventions (nested sizes live on the CPU)
    # (einops' functions too: `einops.repeat(t, "p -> b p", b=n)` is where `t` is)
    return qualified.count(".") == 1 and qualified.startswith(("torch.", "einops.")) \
        or qualified.startswith(_OP_MODULES) or qualified in _OP_FUNCTIONS


def _reads_name(node: cst.CSTNode, name: str) -> bool:
    """Does `name` occur as a name anywhere under `node`?"""
    if isinstance(node, cst.Name):
        return node.value == name
    return any(_reads_name(child, name) for child in children(node))


def _casts_to_cpu_type(call: cst.Call) -> bool:
    """`x.type(torch.LongTensor)`: a CPU tensor type moves the tensor to the CPU."""
    if not (isinstance(call.func, cst.Attribute) and call.func.attr.value == "type" and call.args):
        return False
    name = dotted_name(call.args[0].value) or ""
    return name.endswith("Tensor") and ".cuda." not in name and name.startswith(("torch.", "th."))


def _reads_of(value: cst.BaseExpression) -> List[cst.BaseExpression]:
    """The names and device moves inside `value` (`self.online_q(state)`: `state`)."""
    found: List[cst.BaseExpression] = []
    stack: List[cst.CSTNode] = [value]
    while stack:
        node = stack.pop()
        if isinstance(node, cst.Name) or (isinstance(node, cst.Attribute) and self_attribute_key(node) is not None):
            found.append(node)
        elif isinstance(node, cst.Call) and is_device_move(node):
            found.append(node)
        else:
            stack.extend(node.children)
    return found
