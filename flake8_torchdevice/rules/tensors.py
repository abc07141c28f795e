"""Family 2: tensors that end up on a different device from the rest of the model."""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from typing import AbstractSet, Callable, Dict, FrozenSet, Iterator, List, Optional, Sequence, Set, Tuple

import libcst as cst

from ..analysis import (
    children,
    dotted_name,
    has_star_kwargs,
    keyword,
    last_identifier,
    method_call,
    number_value,
    parameter_names,
    positional_args,
    root_name,
    string_value,
)
from ..analysis.classes import (REGISTERING_CONSTRUCTORS, STATE_MAKER_RE, AttributeAssignment, ClassInfo,
                                follows_own_device, remakes_state)
from ..analysis.devices import is_device_move, is_device_name, move_target, moves_to_cpu, names_the_cpu
from ..analysis.origins import (NEUTRAL_CALLEES, SAME_TENSOR_ATTRIBUTES, SIZE_ATTRIBUTES, FunctionOrigins,
                                is_data_pipeline_name, is_tensor_op, names_read, tensor_expression_root)
from ..analysis.project import SAME_KIND_METHODS, returns_tensor
from ..analysis.syntax import (assigned_values, ast_definitions, ast_dotted_name, ast_statements, defaults_to_none,
                               descendants, exclusive_arms, first_argument, flag_test, function_statements,
                               is_static_or_class_method, self_attribute_key, tests_exclude, walk_ast)
from ..analysis.kinds import (FACTORIES, LEGACY_TENSOR_TYPES, LOOP_WRAPPERS, MODULE, NOT_TENSOR_METHODS, NUMBER,
                              TENSOR, TENSOR_FUNCTIONS, TENSOR_ONLY_METHODS, TENSOR_OPERAND_NAMES, TO_PYTHON, VARIABLE, changes_dtype_only,
                              input_tensor_operand, names_a_model, subscript_key, tensor_operands)
from .base import CallTrigger, Fix, Rule, device_for_fix, is_tensor_parameter, trigger_union

FACTORY_NAMES = {f"torch.{name}": name for name in FACTORIES}
# The legacy constructors (`torch.Tensor([0.5])`, `torch.LongTensor(n)`) make CPU tensors too,
# and take no CUDA device: `device="cuda"` raises, the fix moves their result instead.
LEGACY_CONSTRUCTORS = {f"torch.{name}": name for name in LEGACY_TENSOR_TYPES}
# Factories with an `x.new_<name>(...)` twin that inherits x's device and dtype.
NEW_TWINS = {"zeros", "ones", "empty", "full", "tensor"}

# Methods that move a tensor (or say explicitly where it lives).
MOVERS = {"to", "cuda", "type_as", "cpu", "pin_memory"}
# Tensor methods that take a tensor from any device: copies across devices.
_CROSS_DEVICE_METHODS = {"copy_", "set_", "new_tensor", "to", "type_as",
                         # their arguments are sizes, also as 0-dim tensors (`t.repeat(1, k)` of a traced k)
                         "repeat", "view", "reshape", "expand", "tile", "unflatten", "narrow"}
# Methods of a list (a tensor has none of them).
_LIST_METHODS = frozenset({"append", "extend", "insert"})
# Builtins that give a Python value of what they are handed, never a tensor where it was.
_HOST_FUNCTIONS = frozenset({"float", "int", "bool", "len", "str", "round", "abs", "max", "min", "sum", "repr"})
# Tensor bounds of these must be on the input's device, even 0-dim ones.
_BOUNDED_CALLS = {"clamp", "clamp_", "clip", "clip_"}
# (`ctx`: what a custom autograd op's forward and backward get first)
# `torch.cat([p.flatten() for p in self.vf.parameters()])`
_JOIN_WORDS = re.compile(r"\b(?:cat|concat|concatenate|[hvd]?stack)\(")
_PARAMETER_WORDS = re.compile(r"\.(?:named_)?(?:parameters|buffers)\(")
_NOT_A_TENSOR_RE = re.compile(r"model|net|module|args|opt|cfg|config|loader|batches|dataset|criterion|optim|^ctx$",
                              re.I)

# Callables that compare their tensor arguments elementwise: `criterion(out, target)`.
_LOSS_CALLEE_RE = re.compile(r"loss|criterion|cross_?entropy|(^|_)(nll|mse|bce|kl_div|huber|focal|dice|triplet)(_|$)",
                             re.I)

# Where a factory's value is used, seen from the factory outwards.
MOVED, NEUTRAL, BAD = "moved", "neutral", "bad"


@dataclass
class _ClassFrame:
    node: Optional[cst.ClassDef]  # None: the module's own functions, judged the same way
    findings: List[Tuple[str, cst.Call, str, Optional[Fix]]] = field(default_factory=list)
    methods: Set[str] = field(default_factory=set)  # the methods the class defines
    # A CPU tensor a helper method returns (`_prepare_input` returning `node_mask` made by
    # `torch.zeros`) is judged where the class's methods use it: (method, position in the
    # returned tuple or None) -> the factory, its message and fix
    returned: Dict[Tuple[str, Optional[int]], List[Tuple[cst.Call, str, Optional[Fix]]]] = field(default_factory=dict)
    # ... of which those returned beside a tensor computed from the method's inputs (`return
    # hidden, torch.zeros(1, n, h)`): wrong for any caller, also one outside the class
    bundled: Set[Tuple[str, Optional[int]]] = field(default_factory=set)
    # (method, position) -> where the class's methods combine that result with a device tensor, or move it
    met: Set[Tuple[str, Optional[int]]] = field(default_factory=set)
    moved: Set[Tuple[str, Optional[int]]] = field(default_factory=set)
    # (method, the module's functions, function result) met in a method: counted unless the
    # method only runs while the object is built
    met_outside: List[Tuple[str, "_ClassFrame", Tuple[str, Optional[int]]]] = field(default_factory=list)
    # A class that is no module (a trainer, an agent): the CPU tensors its `__init__` leaves
    # on `self` ("self.mask" -> the factory), and those a later method combines with a device
    # tensor before setting them again (-> the device tensor), judged when the class ends
    init_tensors: Dict[str, cst.Call] = field(default_factory=dict)
    init_tensors_met: Dict[str, cst.CSTNode] = field(default_factory=dict)


class FactoryWithoutDevice(Rule):
    """A tensor factory without `device=` in device-sensitive code.

    ## What it does
    Reports `torch.zeros`, `ones`, `empty`, `full`, `rand`, `randn`, `randint`,
    `randperm`, `arange`, `linspace`, `logspace`, `eye`, `tensor` and `as_tensor`, and the
    signal windows (`torch.hann_window(n)` handed to `torch.stft`, `hamming_window`,
    `blackman_window`, `bartlett_window`, `kaiser_window`)
    called without `device=`, and the legacy constructors (`torch.Tensor([1e-6])`,
    `torch.FloatTensor(n, 1)`, `torch.LongTensor(...)`), which make CPU tensors too,
    when the CPU tensor they make meets tensors that live on the model's device:
    - in device-sensitive code, i.e. code that receives tensors and computes on
      them: methods of an `nn.Module` subclass (`forward` above all), the static
      `forward` and `backward` of a custom `torch.autograd.Function`, methods of
      classes named like a loss, metric or criterion, methods of a
      `torch.distributions` subclass (on the tensors its `__init__` was handed:
      `self.loc` of `self.loc = loc`) or of a class of the project named for a distribution
      (`DiagGaussianDistribution`: its `mean`, `std`, `logits`...), and functions named like a
      loss, metric, accuracy or sampling step (not tests: `test_loss_is_finite`; nor a tokenizer's
      `tokenize_with_loss_mask`, whose mask is data made on the host), when
      they have parameters that may hold tensors. There the tensor is reported when it
      is combined with a tensor argument (`x + torch.ones(3)`, `torch.cat([x, pad])`), passed to a function
      outside `torch` or to a part of the module (`self.LSTM_outer(h)`), added into
      something with `+=`, or returned from `forward`
      or a loss, or its device handed to a move (`p = ... if pt else torch.zeros(1)`, then
      `x.to(p.device)`: the CPU decides where the input goes); functions nested in
      `forward` close over its tensors and count too;
    - in an optimizer's state for a parameter (`state = self.state[p]`, then
      `state["exp_avg_sq_row"] = torch.zeros(grad.shape[:-1])`, also
      `self.state[p][...]`): updated with the parameter's gradient at every step, it must
      be made on `p.device` (not a counter of literal size, `torch.zeros(1)`, nor
      `pin_memory=True` state kept on the CPU on purpose);
    - in any plain function, method (also class or static method) of a class that is
      not a module (its dunders such as a transform's `__call__` aside, unless the
      `__call__` backpropagates, as GradCam's does), or static
      method of a module (`_reparam(mu, logvar)`), whatever its name, that receives a
      tensor (a parameter annotated `torch.Tensor` or used as one: `x.size(0)`,
      `x.unsqueeze(1)`): when the new tensor is combined with it or with what is
      computed from it (`spot[..., 1:] * unit.diff().abs() * c`) (arithmetic,
      comparison, `torch.cat`/`stack`/`where`/`maximum`, an argument of one of its
      methods: `x.index_select(0, torch.arange(n))`, or the other way round:
      `torch.arange(n).remainder(x)`), or indexes with a mask computed from it
      (`table[x > 0]`), or takes an index or mask computed from it
      (`torch.zeros(n, k).scatter_(1, labels.view(-1, 1), 1)`): that use shows it is a
      tensor;
    - in both: what the function computes from its tensor inputs counts as they do
      (`x_cov = torch.cov(x.T)`, then `x_cov + torch.eye(n)`; `y = batch["y"].unsqueeze(-1)`
      in `forward`, then `torch.cat([y, pad])`), unless it reads only their size
      (`x.shape[0]`), a host copy (`x.cpu()`), or a tensor the function made itself;
    - in a plain function receiving a tensor: when it is kept as an attribute of that
      tensor (`param.grad_sample = torch.zeros(...)`);
    - in both: when it is filled with what is computed from the inputs and returned
      (`out = torch.zeros(x.shape)`, `out[i] = x[i] / 2`, `return out`): the results come
      back on the CPU wherever the inputs were (filled with numbers, `.item()`, or values
      moved to the CPU first, it is host-side work), also when a function given the
      inputs' tensors computes the values (`acc[i] = ndcg(preds[i], labels[i])`);
    - in a method of an `nn.Module` that runs after it was built (not `__init__` nor what
      only it calls: a method that `__init__` runs for a dry pass and `forward` calls too
      runs on the moved module; a lazy module's `initialize_parameters(self, x)` runs at
      the first forward): when it is stored in place of one of the module's buffers
      (`self.v = torch.zeros(n)` in `reset_`) or registered as a buffer by a reset or a
      state's maker (`self.register_buffer(name, torch.zeros(shape))` in
      `init_state_with_shape`): `module.to(device)` had moved the buffer, the new one is
      on the CPU; a method with no tensor input that runs one of the module's networks
      (`generate(self, texts: List[str])` feeding `self.transformer`) is device-sensitive
      like `forward`;
      when it meets one of the module's parameters or buffers (`self.decay ** torch.arange(n)`),
      which sit wherever the module was moved, with tensor inputs or without; when it is
      kept as `self.h` in device-sensitive code and then meets the inputs (a cache built
      once, `if self.mask is None:`, is also TDV202's: with `device=x.device` it still
      keeps the first call's device);
    - in a helper method of an `nn.Module` that returns it (`return feats, mask`): when a
      method of the class combines what the helper returned with a device tensor
      (`feats, mask = self._prepare(x)`, then `out * mask`) and does not move it; and when
      the class never calls the method itself, so that its callers are outside: when it is
      returned beside what the method computed from its inputs (`return hidden,
      torch.zeros(1, n, h)`, also in a record `Output(...)` or a dict), or returned by an
      entry point (`predict`, `sample`, `generate`, `act`, `*_inference`, ...) or by a
      recurrent state's maker (`init_hidden(self, batch_size)`, `initial_state`,
      `zero_state`: named like setup, run per batch unless `__init__` calls it); a 0-dim
      stand-in (`torch.tensor(0.)`) and an index the method used stay silent;
    - in a function with a parameter named like a device that it never reads
      (`def get_scale_mat(self, m, device)`): when it is returned. The caller said
      where the tensor belongs;
    - anywhere: when it is combined with a tensor known to be on a device chosen at
      run time (`x.to(device)`, `torch.zeros(n, device=device)`, `x.cuda()`,
      `x.type(Tensor)` or `Tensor(...)` for `Tensor = torch.cuda.FloatTensor if cuda else
      torch.FloatTensor`, and what is computed from one: `model(x)`, `logits.argmax(1)`,
      `pred == y`), also as an accumulator (`correct = torch.zeros(1)`, then
      `correct += (pred == y).sum()`, also into a part of it: `conf[:k, :k] += batch_conf`; and
      a 0-dim `loss = torch.tensor(0.)` that a loss of the inputs is added into in place,
      `loss += w * partial_loss(y_pred[i], y_true[i])`, which a CPU tensor refuses),
      as the seed gradient of such outputs
      (`autograd.grad(d_out, x, torch.ones(n, 1))`), or handed with one to a loss
      (`criterion(preds, torch.ones(n))`, a project's `cross_entropy(logits, targets)`);
    - in `__init__` of a class that is no module (a trainer, an agent): when it is kept on
      `self` (`self.mask = torch.ones(n)`) and another method of the class, before it sets
      that attribute itself, combines it with a tensor known to be on a device
      (`self.state * self.mask`, where `self.state` was made with `device=self.device`),
      and no method moves the attribute or sets it to anything but a CPU factory's tensor.
      A device made on `self` (`torch.zeros(n, device=self.device)`) is on that device in
      the class's other methods;
    - in a method of a class that keeps the device it was told and uses it (`self.device =
      device` or `self._device = get_device(cfg)` in a method of the class or of a base class
      of the project, read elsewhere as `x.to(self.device)` or `device=self._device`; not a
      device kept and never read, nor a CPU one, nor a data pipeline's): such an object (an RL
      agent, an environment, a solver, an attack) computes on that device, and its methods are
      device-sensitive code like a module's. A method that moves some of its parameters
      itself (`batch_x = batch_x.to(self.device)`) takes them on the CPU, and the ones it
      leaves stay there (Informer's `_process_one_batch`).

    Also: `torch.equal(alpha, torch.ones(alpha.shape))` with a tensor the function was
    handed (it takes only tensors, on one device); a CPU tensor written into an input
    through a mask or an index tensor (`inputs[mask] = random_words[mask]`: `index_put_`
    wants one device, while `x[i] = t` copies across); `torch.zeros(())` given dimensions
    (`.expand(n)`), a 0-dim number until then; a CPU tensor added in place into a tensor
    computed from the inputs (`buckets += n * torch.eye(m)`), or held by a number it was
    added to (`r = keep_prob; r += torch.rand(b, 1)`, then `x * r`); the example input of
    `torch.jit.trace(model, torch.zeros(...))` (or `torch.onnx.export`) for a moved model;
    a dummy input run through a network as its first input (`model(torch.randn(1, 3, 224,
    224))`, `writer.add_graph(model, dummy)`) when the network was moved here to a run-time
    device, was handed in (a parameter known to be a module or named for one, also kept as
    `self._model = model` in that method: a summary, a search for a layer, a hook; not a test's,
    whose parameters are pytest's fixtures, nor one whose results the function reads with
    `.numpy()` and no `.cpu()`, which runs it on the host), or is the
    module itself run after it was built (`self.forward(x)` in a method other than
    `__init__`), but not a probe of its output's size (`model(dummy).shape`, or `out =
    module(dummy)` read only as `out.size(-1)`, which models run while they are built) nor for
    a model the function takes to the CPU (`model.cpu()`);
    a CPU tensor compared with `torch.allclose` (which checks devices); one appended to a
    local list (`tokens.append(torch.zeros(b, d))`) is followed as that list (then
    `torch.cat(tokens + [x[:, t]])`), and appended to a list holding the inputs' tensors it
    is reported there; a CPU tensor handed to a callable named for a network (`model(ids,
    labels=torch.zeros(1, 1))`) beside an argument on a device; one put in a dict that a
    network is handed (`kwargs = {"x": x, "label": torch.zeros(n, 16)}`, then
    `self.encoder(**kwargs)`) in a module's method, or beside a tensor moved to a run-time
    device there (not a dict a logger or a DataParallel wrapper gets). A tensor whose device the
    code takes as its device (`device = grads.device`) is on that device, and so is what is
    computed from it. A plain function named like a maker (`make_*`, `create_*`, `get_*`)
    is a helper when it calls a tensor's method on its argument (`logits.sigmoid()`), and so
    is such a method of a plain class (`get_positions(self, input_ids: Tensor)`); a module's
    method named like a builder that takes data and that `__init__` does not call
    (`create_bases(self, disp)`) runs per input. An attribute of an input of device-sensitive
    code is its data (`motion.field`; not a count: `graph.num_nodes`), and so is one of a
    helper's input that its use shows is a tensor (`torch.cat((state.features, t))`, where the
    remedy names `state.features.device`); `torch.cat` refuses an empty CPU tensor
    (`torch.zeros(0)`) beside the inputs' tensors; a tensor of a range or a list
    (`torch.tensor(range(a, b))`) is data, never a 0-dim number; a sub-module of the
    class computing on the inputs (`self.emb(item_ids)`) gives a tensor where they are; the
    `out=` buffer of a torch function (`torch.arange(n, out=torch.LongTensor(n))`) is its
    result; a function that returns a CPU tensor on one path and, on another, one it made on a
    parameter's device (`torch.zeros(n, n, device=g.device)`) hands its caller two devices,
    unless that path tests the parameter or a device. RLlib's `torch, nn = try_import_torch()`
    imports torch. A plain class's `__call__` with a parameter annotated as a tensor is a
    helper (a diffusion scheduler's `__call__(self, x: Tensor, noise: Tensor, step)`), unless
    its file, a folder above it (`transforms/`), its name or a base says it is a transform; a
    module class with no `__init__` in a lineage read whole runs its builder-named methods per
    input (a filter's `create_filter(self, ramp)`, called by its base's `forward`); a buffer
    registered through the class's own helper (`register_buffer_or_parameter("particles",
    t)`) is a buffer, and filling one registered empty (`None`, `UninitializedBuffer`) is its
    initialisation, not a replacement; in the `else` of an `if` whose body bound an input to
    a new CPU tensor, the input is the caller's; a trainer's loss module handed what one of
    its networks computed (`self.criterion(disc_logits, torch.full(...))`) compares them. A
    NumPy or SciPy draw of a size (`stats.beta.rvs(1, 1, size=n)`) is an array, not a
    number, and `lens.view(-1, 1)` is a tensor's (NumPy's `view` takes a dtype). A
    builder-named method that `__init__` does not call and that runs a network the object
    keeps (`create_fake(self, batch_size)`: `self.generator(z)`) runs per batch. A CPU tensor
    fed to a network (`q = self.network(torch.FloatTensor(states))`) is reported when what the
    network gives meets a tensor the function moved to a run-time device (`torch.gather(q, 1,
    actions)` of `actions = ....to(self.device)`): the network or its input is on the wrong
    device; never through `DataParallel`/`DistributedDataParallel`, which move their inputs.
    A factory that is a parameter's default (`def gate(x, q=torch.ones(1))`) is what the
    parameter holds when the caller gives none: made once, where the function is defined,
    so the remedy is a `None` default and the tensor made in the body (no fix). Both arms
    of a conditional expression (`torch.rand(n) if r else torch.zeros(n)`) are reported.
    `Variable(t)`, `nn.Parameter(t)` kept in a local of a plain function, and einops'
    functions (`einops.repeat(t, "n -> b n", b=k)`) are `t` where it is. In a module's
    `forward`, a CPU tensor handed to one of its sub-modules
    (`self.code_generator(x)`, also through a dict the method built: `x = {...}` or
    `x: dict[str, Tensor] = {}`, `x["spkr"] = torch.tensor([[s]])`, each CPU item of it) is
    reported whatever the method's parameters are
    (a vocoder's `forward(self, code: List[int])`); a sub-module is one whatever its name
    (`self.add_noise = NoiseInjection(n)` is called, not stored into); a parameter annotated
    with a module class of the project holds a module. The seed of `out.backward(t)` must be
    where `out` is. A function named like a maker or setup (`get_node_features`,
    `_init_precision`) that hands its parameters to torch (`torch.diagonal(omega)`), or a plain
    class's `__call__` that does (PyLaia's `CTCGreedyDecoder`: a decoder of a model's outputs,
    not a data pipeline's), computes on the caller's tensors. An attribute that a base class
    in the file places on a run-time device (`self.q = torch.zeros(..., device=self.device)`)
    is there in a subclass's methods. A 0-dim tensor stays silent, but the CPU tensors with
    dimensions it was combined with (`torch.arange(n) * -torch.log(torch.tensor(b))`) are
    reported; every name of a chained assignment (`V_mask = h_V = torch.zeros(...)`) holds the
    tensor. A loop reads, from its second turn on, what its body binds last (`current =
    torch.FloatTensor(values)` at the end of a `while` that starts with `self.forward(current)`).
    What a callable a helper was handed computes from its inputs (`sim_fn(x, x)`) is where they
    are, and so is what `pad_sequence` pads; a function of the project whose every result is on
    its first argument's device (`hat(v)`, which builds on `v.device`; `pad_to_multiple(x, n)`)
    gives a CPU tensor handed to it back on the CPU; one that computes on two of its arguments
    together (`radius_graph_pbc(r, n, pos, cell, n_atoms)` subtracts what it derives from
    `n_atoms` from an `arange` made on `pos.device`) meets there the input handed beside the
    CPU tensor (`torch.tensor([len(pos)])`). A helper that hands back the CPU default of
    a tensor argument (`if mask is None: mask = torch.ones(n)`, then `return x, mask`) returns
    two devices. A reset that `__init__` calls (`clear_z`, `reset_state`; not
    `reset_parameters`) also runs once the module was moved. An input indexed by a CPU index
    made here (`data.aux_ind[inds]`) is still the input's; a sub-module first set to `None` and
    built by a helper (`self.embeddings = nn.Embedding(n, d)`) is a sub-module. Not the
    caller's: a tensor of a list the function built (`torch.as_tensor(gt_boxes)` of boxes
    read from JSON), and a new CPU tensor a helper of the project makes of its own (`m =
    torch.eye(n)` filled and returned, also as a part of a tuple); a helper that moves its
    argument when told a device (`if device: x = x.to(device)`, `return x`) moves it.

    Not reported in a test function (`test_*` in a test module) on its parameters, which are
    pytest's fixtures, the suite's own data, unless a device is handed in too (`def
    test_grouped_mm(x, device)`).
    Not reported for a name that another arm of an `if` binds to a move to the CPU
    (`scores = torch.stack(scores).cpu()` / `else: scores = torch.tensor([])`): the code wants
    that value on the host.
    Not reported in a function that applies Python callables to a tensor it was handed
    (`preds.apply_(f)`, like `.numpy()` without `.cpu()`, raises for a GPU tensor: it runs on
    the CPU); nor after a move to a device named for the host (`host = torch.device("cpu")`,
    `kp.to(host)`); nor where two `if`s test one flag (`if essential:` ... `else:` twice) and
    the tensor is bound in one arm of the first and used in the other arm of the second.
    Not reported in a helper that moves some of its own parameters (`x = x.to(device)`):
    its inputs arrive on the CPU, and those it leaves alone stay there. Nor sequence
    lengths handed to a module or a loss (`model(x, input_lengths, y)`: `pack_padded_sequence`
    wants them on the CPU), nor what an entry point returns after taking its results to
    the host (`torch.tensor([p.tolist() for p in preds])`: CPU tokens for the caller), nor
    one element of a table made inline (`torch.Tensor(anchors)[a, 0]`, 0-dim), nor a module
    whose `forward` takes a PIL image (`img: Image.Image`: a transform of the data pipeline).
    A sub-module's weight (`self.emb.weight`) is on the module's device at run time; a
    method named like a recurrent state's maker or an entry point is judged as above;
    `__init__` of a plain class computes on what it is given (`Kmeans(data)`).

    Two CPU tensors joined into one name (`y = y_ + torch.eye(k)`) are both reported
    where it meets the device. The tensor is followed through names (also tuple targets:
    `w, h = torch.meshgrid(...)`;
    bound in one arm of an `if` and something else in the other, it may be either after it,
    and bound to a CPU tensor in each arm, both are reported where it meets the device;
    a default that only some arms replace, `y = torch.zeros(1)` then `if seq: y = ...`, is
    still there on the other way through), views, in-place methods that return it
    (`torch.ones(n, n).triu_(1).bool()`), arithmetic with numbers, torch ops and
    `.to(dtype)`, which is no move. A module's own parameters are tensors on its device
    (`for g, p in zip(grads, self.parameters()): p.grad = torch.zeros(g.shape)`), and so is
    an attribute that another method of the class moves (a trainer's `self.model.to(device)`
    in `build`, then `self.model(torch.zeros(n, 3))` in `predict`). A value called with
    `dim=`/`keepdim=` (numpy says `axis=`) is a tensor; so is the second operand of torch's
    binary ops (`torch.heaviside(x, torch.tensor([1.0]))`), and so is what torch takes only as
    a tensor (`torch.where(x > 0)`, `torch.exp(-x)`, `torch.logical_not(x[:, 0])`,
    `torch.linalg.eigh(M)`) and what that was computed from (`s = x.sum(axis=2) >= 1`, then
    `torch.where(s)`: `x` is a tensor). A class's arithmetic dunders
    (`__add__`) compute on its data; a module's methods do whatever they are called
    (`get_td_error`); a parameter named as a size or shape (`size`, `out_shape`) holds none
    of the caller's tensors. Sizes handed to `repeat`/`view`/`expand` do not mix devices.
    What a function computes from its inputs is followed the same way, through tuple
    unpacking, the items of a loop over them, and torch ops (`values, idx = torch.unique(x, return_inverse=True)`), and a
    function nested in another closes over its tensors. In device-sensitive code the
    names an input is unpacked into (`log_pi, mu, sigma = x` in a loss) are the caller's
    tensors, as the input is; a comparison with a tensor is a tensor where it is
    (`torch.sigmoid(gate.data) < threshold`), `x.data` and `x.T` are `x`, and
    `torch.max(a, b)`/`torch.min(a, b)` of two tensors compare them elementwise (Python's
    `max` of numbers is no use). Parameters annotated the
    jaxtyping way (`x: Float[Tensor, "b n"]`) are tensors; `torch.tensor(v)` of a
    parameter `v` that may be a tensor keeps its device, unless `v`'s annotation says it
    is Python data (`cost: Optional[List[float]]`).

    `t.type(x.type())` is no move to `x`'s device: it goes to the *current* CUDA device.

    The message names a device-aware value in scope for the fix (`device=x.device`,
    `x.new_zeros(...)`).

    ## Why is this bad
    The factory makes its tensor on the CPU. On a CPU-only machine the model is on
    the CPU too, so the code works and its tests pass; on a GPU the first operation
    that mixes the two raises `RuntimeError: Expected all tensors to be on the same
    device, but found at least two devices, cuda:0 and cpu!` (the wording varies with
    the operation). The project's emulated GPU (`flake8-torchdevice emulate`,
    `pytest --emulate-cuda`) raises the same error on a CPU-only machine.

    ## Example
    ```python
    class Head(nn.Module):
        def forward(self, x):
            mask = torch.ones(x.shape[0])
            return x * mask[:, None]
    ```

    ## Use instead
    ```python
    class Head(nn.Module):
        def forward(self, x):
            mask = torch.ones(x.shape[0], device=x.device)  # or x.new_ones(x.shape[0])
            return x * mask[:, None]
    ```

    ## When it is not reported
    - `device=` is given, `**kwargs` are passed that may carry it, or the call is
      inside a `with torch.device(d):` block.
    - The tensor is moved before it is used: `torch.ones(n).to(x.device)`,
      `mask = torch.ones(n)` followed by `mask = mask.to(x.device)` in the same
      function, `.cuda()`, `.type_as(x)`, `.type(Tensor)` of a CUDA type chosen where CUDA
      is there (also inside `Variable(...)`, which is its tensor); or handed to a helper that returns its
      first argument moved (`try_gpu(torch.zeros(3))`, `to_device(torch.arange(n), device)`):
      a function of the file or a method of the class whose return is `t.to(...)` or
      `t.cuda()` of that argument (also beside `return t` under a CUDA test), or such a
      function imported from the project's other files.
    - `torch.zeros_like(x)` and `x.new_zeros(...)`: they follow `x`'s device.
    - A tensor filled on the CPU and then moved before the function returns it
      (`mask = torch.ones(n, k)`, filled by helpers, then `mask = mask.to(x.device)`);
      padding amounts and sizes read as Python numbers (`F.pad(y, [d // 2, ...])` of
      `d = torch.tensor([a.size(3) - y.size(3)])`; what `get_image_size(img)` returns).
    - Test files (`tests/`, `test_*.py`, `*_test.py`, `conftest.py`) whose text never
      names a device (`cuda`, `device`, `mps`, `xpu`, a GPU, `.to(x)` other than a cast):
      everything they make and run stays on the CPU. Also TDV202's.
    - Uses PyTorch accepts across devices: a 0-dim `torch.tensor(2.0)` (also
      `torch.tensor(True)`, `torch.tensor(-width / 2)`, `torch.tensor(n)` of a
      number) in arithmetic (but not as a bound of `clamp`/`clip`, which must be on
      the input's device, nor once given a dimension, `torch.tensor(token_id).unsqueeze(0)`,
      or joined by `torch.stack`), an index tensor used only to index (`x[torch.arange(n)]`),
      `x.copy_(t)`, and `torch.broadcast_tensors`, which leaves each tensor where it is.
    - CPU work among CPU tensors: a helper method of the class handed only tensors made here
      (`self.iou(gt_box, anchor_shapes)`, both new), a private torch op of the new tensor
      (`float(torch._sample_dirichlet(torch.tensor([a, a]))[0])`), a partner made by a legacy
      constructor (`torch.FloatTensor(anchors)` copies to the CPU), and a parameter compared
      with a number in an `if` (`if keep_rate == 1.0:`), which holds a number, not a tensor.
    - Calls that make no new data tensor: `torch.as_tensor(t)` of anything but
      literal data (a tensor keeps its device), placeholders such as `torch.empty(0)` or
      `torch.empty([0])` (or `torch.Tensor()`), unless joined to a device tensor by
      `torch.cat`/`torch.stack` and their kin, which check every tensor's device, and
      factories writing into `out=` (the output's device decides).
    - Code after `if x.is_cuda: ... return` (or `if use_cuda:` ending in `return`,
      `continue`, `raise`): it runs only without CUDA, as an `else:` arm does.
    - A tensor handed to a function that draws, shows or writes it (`draw_rectangle(image,
      boxes)`, `save_image(t, path)`, `plot_*`): it reads the tensor on the host.
    - A tensor handed to a moved storage object that copies it in
      (`rollouts.insert(obs, value, masks)`: `insert`, `append`, `push`, `put`,
      `store`, `extend`, `record`, `add` of what is not known to be a tensor), or
      yielded beside a device tensor by a batch generator (`yield indices,
      target.to(rank)`: each part goes to its own consumer).
    - A plain function that turns the tensors it was given (or what it computed from
      them, or what a hook kept on `self`) into NumPy arrays without `.cpu()`
      (`self.gradients.data.numpy()`): it runs on the CPU by design, as `.numpy()`
      of a GPU tensor raises.
    - A CPU tensor written into a slice of a device tensor (`gain[2:6] = torch.tensor(shape)`):
      the copy crosses devices.
    - Values turned into Python data or only read (`.item()`, `.tolist()`,
      `.shape`, `len(...)`, the test of an `if`), and tensors handed to
      `register_buffer`, `nn.Parameter` or a class of your own
      (`FocalLoss(weight=torch.ones(3))`), which usually registers them.
    - What a helper method other than `forward` returns: it is judged where it is
      used, which the rule does not follow.
    - Code that runs before the model is moved: `__init__`, methods whose name says
      they build or reset it (`reset_parameters`, `_init_weights`, `build_*`,
      `make_*`, `create_*`, `get_*`), methods `__init__` calls, static and class
      methods; and functions without parameters that may hold tensors.
    - Code that only runs without CUDA (the `else:` arm of `if torch.cuda.is_available():`
      or of `if self.gpu_mode:`): every tensor there is on the CPU.
    - `x.new_tensor(torch.rand(n))`: `new_tensor` copies its argument to `x`'s device.
    - A file that sets the default device for new tensors at its top level (also under
      `if __name__ == "__main__":`): `torch.set_default_device(d)`, or
      `torch.set_default_tensor_type("torch.cuda.FloatTensor")` (nerf-pytorch).
    - A plain function that copies its tensor input into a CPU tensor it made
      (`buf.narrow(1, 0, n).copy_(img)`): host-side work on purpose, like `.numpy()`.
    - Code that is CPU by design and meets no device tensor: data pipelines
      (`Dataset.__getitem__`, `collate_fn`, transforms, functions named like
      `transform`, `collate`, `preprocess`, `load_*`, plain functions of a file named
      like one: `naflex_transforms.py`, `datasets.py`), scripts, utilities; plain
      functions whose parameters are not known to be tensors.

    CUDA guards do not matter here: the mismatch happens exactly when CUDA is present.

    ## Fix
    A legacy constructor takes no CUDA device (`torch.Tensor([1.0], device="cuda")`
    raises): `fix` appends `.to(<x>.device)` to it instead of `device=`.
    Otherwise `fix` adds `device=<x>.device`, where `x` is the tensor parameter the new tensor
    meets (`x * torch.ones(n)` -> `x * torch.ones(n, device=x.device)`), else in
    `forward` or a loss the device of the first parameter known to be a tensor (the
    input is on the model's device; not `n` of `sample(self, n)`), else in a method of
    a module with parameters `next(self.parameters()).device`, else a device variable
    bound where the factory stands (a `device` parameter, `self.device` set in
    `__init__`, `device = args.device` above it). Nothing else is certain to exist
    there (a local tensor may be computed after it, a moved argument is not on the
    device yet, a tensor parameter of a plain function may be anywhere), so otherwise
    there is no fix, also with `--add-device`. The message names the likeliest device when
    there is no fix, never a parameter the code around says is None there (`if position is
    None: position = torch.arange(n)`).

    ## How to silence it
    - One line: `mask = torch.ones(n)  # noqa: TDV201`.
    - A whole project: `extend-ignore = TDV201` in the `[flake8]` section.
    """

    code = "TDV201"
    name = "factory-without-device"
    message = "{call}() without device= makes a CPU tensor in device-sensitive code; {remedy}"
    # (a legacy constructor only when called: `Tensor` alone fills annotations)
    triggers = (rf"(?=[{''.join(sorted({name[0] for name in FACTORIES + tuple(LEGACY_TENSOR_TYPES)}))}])\b"
                rf"(?:(?:{'|'.join(FACTORIES)})\b|(?:{'|'.join(sorted(LEGACY_TENSOR_TYPES))})\()")
    trigger_words = ("zeros", "ones", "empty", "full", "rand", "arange", "linspace", "logspace", "eye", "tensor",
                     "_window", "Tensor(")
    call_trigger = CallTrigger(frozenset(FACTORIES) | LEGACY_TENSOR_TYPES, frozenset({"device", None}))
    uses_origins = True
    needs_a_device_in_tests = True

    @staticmethod
    def keeps_class(node: ast.ClassDef, aliases: FrozenSet[str] = frozenset(),
                    text_of: Callable[[ast.AST], str] = ast.unparse,
                    makes_tensor: Optional[Callable[[str], bool]] = None) -> bool:
        """Fast path: a state maker (`init_hidden`) stores its state on `self`, which forward
        reads: forward is kept whole, though it names no factory (`_state_forward_reads`); a
        `unittest.TestCase` with a `setUp`, which may move what each test uses (`_fresh_in_each_test`)."""
        if any(isinstance(base, (ast.Name, ast.Attribute)) and (ast_dotted_name(base) or "").endswith("TestCase")
               for base in node.bases) and any(isinstance(m, ast.FunctionDef) and m.name in ("setUp", "setup_method")
                                               for m in node.body):
            return True
        makers = [m for m in node.body if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef))
                  and STATE_MAKER_RE.match(m.name) and "self." in text_of(m)]
        if not makers:
            return False
        stored = {target.attr for maker in makers for statement in walk_ast(maker) if isinstance(statement, ast.Assign)
                  for target in statement.targets if isinstance(target, ast.Attribute)
                  and isinstance(target.value, ast.Name) and target.value.id == "self"}
        return bool(stored) and any(
            isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef)) and m.name in ("forward", "__call__")
            and any(f"self.{name}" in text_of(m) for name in stored) for m in node.body)

    VALID = [
        "import torch\nclass M(torch.nn.Module):\n    def forward(self, x):\n"
        "        return x + torch.zeros(3, device=x.device)\n",
        "import torch\nclass M(torch.nn.Module):\n    def forward(self, x):\n"
        "        return x[torch.arange(x.shape[0])]\n",
        "import torch\nclass M(torch.nn.Module):\n    def forward(self, x):\n"
        "        mask = torch.ones(x.shape[0])\n        mask = mask.to(x.device)\n        return x * mask\n",
        "import torch\nclass M(torch.nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self.register_buffer('scale', torch.ones(3))\n",
        "import torch\nclass D(torch.utils.data.Dataset):\n    def __getitem__(self, i):\n"
        "        return torch.zeros(3)\n",
    ]
    INVALID = [
        "import torch\nclass M(torch.nn.Module):\n    def forward(self, x):\n"
        "        return x + torch.zeros(3)  # expect: TDV201\n",
        "import torch\ndef loss_fn(pred, target):\n    weight = torch.ones(pred.shape[1])  # expect: TDV201\n"
        "    return (weight * (pred - target) ** 2).mean()\n",
    ]

    def __init__(self, *args) -> None:
        super().__init__(*args)
        self._classes: List[_ClassFrame] = []
        self._partner: Optional[cst.CSTNode] = None  # what the reported tensor met
        self._model_partners: Set[int] = set()  # ids of partners that are networks run on the tensor
        self._stacks: Dict[int, Tuple[cst.CSTNode, ...]] = {}  # factory -> the nodes from the module down to it
        self._bound_before: Dict[int, FrozenSet[str]] = {}  # factory -> the names its function had bound
        # (id of the function's node, name) -> a value computed from the inputs written into the CPU tensor
        # `name` holds (`out[i] = x[i] / 2`): returned, it brings the inputs' results to the CPU
        self._filled: Dict[Tuple[int, str], cst.CSTNode] = {}
        # tensors filled with numbers taken to the host (`.item()`): a summary kept there on purpose
        self._host_filled: Set[Tuple[int, str]] = set()
        self._host_numbers_of: Dict[int, Set[str]] = {}  # function -> its locals of host numbers
        self._host_loops_of: Dict[int, Set[str]] = {}  # function -> the names its loops take from the host
        # (function, name) of the dicts a function built that hold a CPU tensor (`x["spkr"] = t`):
        # filled with other values, a dict is no tensor filled with results
        self._dicts: Set[Tuple[int, str]] = set()
        # factory -> the other CPU factories whose tensors its own was combined with into one
        # name (`y = y_ + torch.eye(k)`): reported with it, where that name meets the device
        self._companions: Dict[int, List[cst.Call]] = {}
        # id of a function's node -> name -> (helper method of its class or function of the module,
        # position in its result, the frame that judges it)
        self._helper_results: Dict[int, Dict[str, Tuple[str, Optional[int], _ClassFrame, tuple]]] = {}
        # What the module's functions return: `noise = get_noise(shape)` in forward meets the device
        self._module_functions = _ClassFrame(None)
        self._passed_on: Set[str] = set()  # names the statement being left binds to such a result
        # id of a helper function's node -> the results it met the device with, kept unless it works on the host
        self._deferred_met: Dict[int, List[Tuple[_ClassFrame, Tuple[str, Optional[int]]]]] = {}
        self._returned_at: Optional[Tuple[str, Optional[int]]] = None  # set by `_fate`, read by `_follow`
        self._bundled = False  # ... returned beside a tensor computed from the inputs
        self._reported: Set[int] = set()  # ids of the factories reported
        self._indexes: Set[Tuple[int, str]] = set()  # (function, local): CPU tensors used as an index
        self._lists: Set[Tuple[int, str]] = set()  # (function, local): lists a CPU tensor was appended to
        # (function, local): what a network computed from a CPU tensor (`q = self.network(states)`)
        self._network_results: Set[Tuple[int, str]] = set()
        self._via_network = False
        self._gathered: Set[Tuple[int, str]] = set()  # ... or what was joined from one (`torch.stack(lst)`)
        # (function, local): a dict that holds a CPU tensor beside the inputs (`kwargs = {"x": x,
        # "label": torch.zeros(n)}`) -> the input tensor it holds, met if a network is handed the dict
        self._batches: Dict[Tuple[int, str], Optional[cst.CSTNode]] = {}
        self._factory: Optional[cst.Call] = None  # the factory `_fate` is following
        self._cached_once: Set[int] = set()  # factories kept as a cache built once: no fix
        self._rebound: Dict[int, Set[str]] = {}  # id of a function's node -> `self.<name>` it has set so far
        # id of a plain function's node -> its findings, reported when it ends unless it turned
        # the tensors it was given into NumPy arrays without `.cpu()` (`_host_bound`)
        self._deferred: Dict[int, List[Tuple[cst.Call, str, Optional[Fix]]]] = {}
        self._host_bound: Set[int] = set()
        # (method, position) of results of a module's methods that take no tensor: met only beside a device tensor
        self._partner_needed: Set[Tuple[str, Optional[int]]] = set()
        self._met_beside: Set[Tuple[str, Optional[int]]] = set()  # helper results met beside a device tensor
        self._to_host: Set[int] = set()  # ids of the functions that took tensors' values to the host
        self._placeholders: Set[int] = set()  # `torch.empty(0)` factories: only a join with a device tensor fails
        self._defaults: Set[int] = set()  # factories that are a parameter's default value
        self._scalars: Set[int] = set()  # 0-dim `torch.tensor(2.0)` factories: a join or a new dimension fails
        self._dimmed: Set[int] = set()  # ... of which one was given a dimension (`.unsqueeze(0)`, `.view(1)`)
        self._joined: Optional[str] = None  # set by `_fate`: the op that joined it to a device tensor (`cat`)
        # the loops being walked, each with the names its body binds last to a CPU factory's
        # tensor (`cur = torch.FloatTensor(values)` at the end of a `while`): read before that
        # statement, in the next turn, they hold it
        self._loops: List[Dict[str, cst.Assign]] = []
        self._carriers: Dict[int, cst.Assign] = {}  # id of such a factory -> the statement binding it
        self._carried_bad: Dict[int, Optional[cst.CSTNode]] = {}  # id of that statement -> partner met
        self._passed: Set[int] = set()  # ids of the loops' carrying statements walked so far

    # ------------------------------------------------------------ frames

    def visit_Module(self, node: cst.Module) -> None:
        self._module_functions.methods = {statement.name.value for statement in node.body
                                          if isinstance(statement, cst.FunctionDef)}

    def leave_Module(self, node: cst.Module) -> None:
        # a new CPU tensor a function of the module returns (`def get_noise(shape): return
        # torch.randn(*shape)`), where a caller in the file combines it with a device tensor
        frame = self._module_functions
        for key, made in frame.returned.items():
            if (key in frame.met or (key[0], None) in frame.met) and key not in frame.moved:
                self._report_returned(made)

    def _report_returned(self, made: List[Tuple[cst.Call, str, Optional[Fix]]]) -> None:
        """Report what a function returned, now that a caller combined it with a device tensor."""
        for call, message, fix in made:
            if id(call) not in self._reported:
                self._reported.add(id(call))
                self.report(call, message, fix=fix)

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        methods = {statement.name.value for statement in node.body.body if isinstance(statement, cst.FunctionDef)}
        self._classes.append(_ClassFrame(node, methods=methods))

    def leave_ClassDef(self, node: cst.ClassDef) -> None:
        frame = self._classes.pop()
        info = self.ctx.current_class
        # (a method forward also calls runs on the moved module, whatever __init__ calls)
        init_time = info.construction_only_methods() if info is not None else set()
        for key, partner in frame.init_tensors_met.items():
            if info is not None and self._stays_as_made(info, key[5:]):
                self._report(frame.init_tensors[key], partner)
        for method_name, call, message, fix in frame.findings:
            # Methods that __init__ uses run before the module is moved: CPU is right there.
            if method_name not in init_time:
                self.report(call, message, fix=fix)
        for method_name, judge, result in frame.met_outside:
            if method_name not in init_time:
                judge.met.add(result)
        # (a method the class never calls itself is called from outside: a bundle is wrong there)
        called_here = set().union(*info.references.values()) if info is not None else set()
        for key, made in frame.returned.items():
            # (a part of a result counts as met where the whole is: `self.lstm(x, self.init_hidden(n))`)
            used = key in frame.met or (key[0], None) in frame.met \
                or (key in frame.bundled and key[0] not in called_here)
            if key in self._partner_needed and key not in self._met_beside and (key[0], None) not in self._met_beside:
                # (what a method taking no tensor made meets a device tensor only beside one:
                # kornia's `self.get_children_by_indices(self.rand_selector(n))` picks children)
                used = False
            if used and key not in frame.moved and key[0] not in init_time:
                self._report_returned(made)

    def leave_FunctionDef(self, node: cst.FunctionDef) -> None:
        for call, message, fix in self._deferred.pop(id(node), ()):
            if id(node) not in self._host_bound:
                self.report(call, message, fix=fix)
        for judge, key in self._deferred_met.pop(id(node), ()):
            if id(node) not in self._host_bound:
                judge.met.add(key)
        info = self.ctx.current_class
        # (the walk has left the function's body: a method is now in no function)
        if node.name.value == "__init__" and self._classes and info is not None and not info.is_module \
                and not self.ctx.functions:
            # `self.mask = torch.ones(n)` in a trainer's __init__: followed into its other methods
            self._classes[-1].init_tensors.update(
                (key, factory) for key, (factory, _) in self._frame.new_tensors.items() if key.startswith("self."))

    def _plain_class_method(self) -> bool:
        """Is the function being walked a method of a class that is no `nn.Module`?"""
        info = self.ctx.current_class
        return bool(self._classes) and info is not None and not info.is_module and len(self.ctx.functions) == 1

    def _stays_as_made(self, info: ClassInfo, attribute: str) -> bool:
        """Does no method move `self.<attribute>` nor set it to anything but a CPU factory's tensor?"""
        project = self.ctx.project
        if project is not None and attribute in project.own.moved_attributes.get(info.name, ()):
            return False
        return all(assignment.method == "__init__" or self._cpu_factory(assignment.value) is not None
                   for assignment in info.assignments if assignment.name == attribute)

    def leave_Assign(self, node: cst.Assign) -> None:
        """`masks = self._prepare(x)`, `a, b = self._prepare(x)` in a module's method: the names
        hold what the helper returns (followed in `visit_Name`); other bindings forget that."""
        if self._classes and self._classes[-1].init_tensors:
            rebound = self._rebound.setdefault(id(self._frame.node), set())
            rebound.update(filter(None, (self_attribute_key(target.target) for target in node.targets)))
        results = self._helper_results.setdefault(id(self._frame.node), {})
        helper = node.value.func.attr.value if isinstance(node.value, cst.Call) \
            and self_attribute_key(node.value.func) is not None and self._classes and self._frame.sensitive \
            and node.value.func.attr.value in self._classes[-1].methods else None  # not `self.lin(x)`
        judge = self._classes[-1] if helper is not None else None
        if helper is None and isinstance(node.value, cst.Call) and isinstance(node.value.func, cst.Name) \
                and node.value.func.value in self._module_functions.methods \
                and self.ctx.resolve(node.value.func) is None:
            helper, judge = node.value.func.value, self._module_functions  # `noise = get_noise(shape)`
        for target in node.targets:
            elements = target.target.elements if isinstance(target.target, (cst.Tuple, cst.List)) else None
            for position, element in enumerate(elements if elements is not None else [target.target]):
                name = element.value if elements is not None else element
                if not isinstance(name, cst.Name):
                    continue
                if helper is not None and judge is not None:
                    results[name.value] = (helper, position if elements is not None else None, judge, self.ctx.arms())
                elif name.value not in self._passed_on:  # (`z = noise.repeat(n, 1)`: set by `visit_Name`)
                    # (`if a: noise = get_noise(n)` / `else: noise = torch.zeros(n)`: either may be read after)
                    prior = results.get(name.value)
                    if prior is None or not exclusive_arms(prior[3], self.ctx.arms()):
                        results.pop(name.value, None)
        self._passed_on.clear()

    @property
    def _frame(self) -> FunctionOrigins:
        return self.ctx.origins.current

    # ------------------------------------------------------------ events

    def _cpu_factory(self, node: cst.CSTNode) -> Optional[str]:
        """`zeros` of `torch.zeros(n)`, a factory call told no device; else None."""
        if not isinstance(node, cst.Call) or self._has_device(node):
            return None
        return self._factory_name(node)

    def _factory_name(self, call: cst.Call) -> Optional[str]:
        qualified = self.ctx.resolve(call.func) or ""
        if qualified in LEGACY_CONSTRUCTORS:
            # `torch.Tensor()`, `torch.Tensor(0)`: an empty placeholder, no data of its own
            return LEGACY_CONSTRUCTORS[qualified] if call.args and number_value(call.args[0].value) != 0 else None
        return FACTORY_NAMES.get(qualified)

    def visit_Call(self, node: cst.Call) -> None:
        if isinstance(node.func, cst.Attribute) and node.func.attr.value in ("numpy", "tolist", *_CPU_ONLY_METHODS):
            self._to_host.add(id(self._frame.node))
            if node.func.attr.value != "tolist" and self._is_host_bound(node):
                self._host_bound.add(id(self._frame.node))
        factory = self._cpu_factory(node)
        # in the `else:` arm of a CUDA test every tensor is on the CPU
        if factory is None or self.ctx.cpu_only or self._default_device_is_set():
            return
        if factory not in LEGACY_TENSOR_TYPES and self.ctx.kinds.is_scalar_factory(factory, node, self._frame.inputs) \
                and not self._is_bound():
            # a 0-dim tensor mixes with any device, except as a clamp bound, joined by
            # `torch.stack` or given a dimension (`torch.tensor(token_id).unsqueeze(0)`);
            # `torch.empty(0)`, an empty placeholder, is checked by `torch.cat` and its kin only
            if factory not in ("tensor", "as_tensor"):
                size = positional_args(node)[0].value
                if isinstance(size, (cst.Tuple, cst.List)) and not size.elements:
                    self._scalars.add(id(node))  # `torch.zeros(())`: 0-dim, until `.expand(n)` gives it dimensions
                else:
                    self._placeholders.add(id(node))
            elif self._is_number(positional_args(node)[0].value):
                self._scalars.add(id(node))
            else:
                return  # `torch.as_tensor(value)` of what may be a tensor keeps its device
        self._stacks[id(node)] = tuple(self.ctx.stack)  # where the fix's device must exist
        self._bound_before[id(node)] = frozenset(self.ctx.function_scope().bindings)
        generator = keyword(node, "generator")
        if generator is not None and self._generator_on_a_device(generator.value):
            # `torch.randn(shape, generator=g)` of `g = torch.Generator(device)`: torch refuses a
            # generator of another device than the tensor's
            self._report(node, generator.value)
            return
        self._follow(node, node)
        carrier = self._carriers.get(id(node))
        if carrier is not None:
            self._passed.add(id(carrier))
            if id(carrier) in self._carried_bad:
                self._report_with_companions(node, self._carried_bad.pop(id(carrier)))

    def _default_device_is_set(self) -> bool:
        """The file sets the default device (nerf-pytorch's
        `torch.set_default_tensor_type("torch.cuda.FloatTensor")`): factories follow it."""
        project = self.ctx.project
        return project is not None and project.own.sets_default_device

    def _is_bound(self) -> bool:
        """Is the call being visited (maybe through torch ops: `torch.log(t)`) a bound of
        `clamp`/`clip` (`min=`, `max=`, or after the input)?"""
        depth = 1
        while True:
            arg, call = self.ctx.parent(depth), self.ctx.parent(depth + 1)
            if isinstance(arg, cst.BinaryOperation):
                depth += 1
                continue
            if not (isinstance(arg, cst.Arg) and isinstance(call, cst.Call)):
                return False
            name = last_identifier(call.func) or ""
            if name in _BOUNDED_CALLS:
                method = isinstance(call.func, cst.Attribute) and not is_tensor_op(self.ctx.resolve(call.func))
                return method or arg.keyword is not None or call.args.index(arg) > 0
            if not is_tensor_op(self.ctx.resolve(call.func)):
                return False
            depth += 2

    def visit_For(self, node: cst.BaseCompoundStatement) -> None:
        carried: Dict[str, cst.Assign] = {}
        for statement in _statements_in_order(node.body):
            if isinstance(statement, cst.Assign) and len(statement.targets) == 1 \
                    and isinstance(statement.targets[0].target, cst.Name):
                name = statement.targets[0].target.value
                root = _chain_root_call(statement.value)
                carried.pop(name, None)  # the last binding is what the next turn reads
                if root is not None and self._cpu_factory(root) is not None:
                    carried[name] = statement
                    self._carriers[id(root)] = statement
        self._loops.append(carried)

    visit_While = visit_For

    def leave_For(self, node: cst.BaseCompoundStatement) -> None:
        self._loops.pop()

    leave_While = leave_For

    def _read_in_the_next_turn(self, node: cst.Name) -> None:
        """`out = self.forward(cur)` at the top of a loop whose body ends with `cur =
        torch.FloatTensor(values)`: from the second turn on, `cur` is that CPU tensor. What
        the read meets is noted, and reported when the factory is walked."""
        for carried in self._loops:
            statement = carried.get(node.value)
            if statement is None or id(statement) in self._passed or id(statement) in self._carried_bad \
                    or any(outer is statement for outer in self.ctx.stack):
                continue
            self._factory = None
            self._partner = None
            fate, _ = self._fate(node, None)
            if fate == BAD:
                self._carried_bad[id(statement)] = self._partner

    def visit_Name(self, node: cst.Name) -> None:
        if self._loops and self._is_load(node):
            self._read_in_the_next_turn(node)
        result = self._helper_results.get(id(self._frame.node), {}).get(node.value)
        if result is not None and self._is_load(node):
            self._factory = None
            self._partner = None
            fate, assigned = self._fate(node, None)
            helper, position, judge, _ = result
            frame = self._frame
            if fate == BAD and self._partner is not None:
                self._met_beside.add((helper, position))  # (see `_partner_needed`)
            if fate == BAD and frame.copies_input_to_host and not frame.any_mix_is_a_bug:
                pass  # CPU work on purpose, as for a factory of its own
            elif fate == BAD and not frame.any_mix_is_a_bug and isinstance(frame.node, cst.FunctionDef):
                # (as a factory of its own: a helper that takes its results to the host works there on purpose)
                self._deferred_met.setdefault(id(frame.node), []).append((judge, (helper, position)))
            elif fate == BAD and judge is self._module_functions and frame.method_name and self._classes:
                self._classes[-1].met_outside.append((frame.method_name, judge, (helper, position)))
            elif fate == BAD:
                judge.met.add((helper, position))
            elif fate == MOVED:
                judge.moved.add((helper, position))
            elif assigned is not None:  # `z = noise.repeat(n, 1)`: z holds it now
                results = self._helper_results.setdefault(id(self._frame.node), {})
                results.update((name, result) for name in assigned[0])
                self._passed_on.update(assigned[0])
        pending = self._pending(node.value)
        if pending is None or not self._is_load(node):
            return
        if any(outer is pending[1] for outer in self.ctx.stack):
            return  # `t = torch.tensor([t])`: the name read in the statement binding it is the old t
        self._with_alternatives(pending[0])
        self._follow(node, pending[0])

    def _with_alternatives(self, factory: cst.Call) -> None:
        """After an `if` whose arms each bound the name read to a CPU tensor, the others'
        meet the same fate: reported with this one."""
        merged = self._frame.merged.get(id(factory))
        if merged:
            companions = self._companions.setdefault(id(factory), [])
            companions.extend(made for made in merged if not any(made is c for c in companions))

    def _pending(self, name: str) -> Optional[Tuple[cst.Call, cst.CSTNode]]:
        """The CPU tensor `name` holds here: none in an arm that excludes the one that bound
        it (`if a: t = torch.eye(n)` / `else: t = x.clone(); t[-1]`)."""
        frame = self._frame
        pending = frame.new_tensors.get(name)
        if pending is not None and (exclusive_arms(frame.new_tensor_arms.get(name, ()), self.ctx.arms())
                                    or tests_exclude(frame.new_tensor_tests.get(name, ()), self.ctx.tests())):
            return None
        return pending

    def visit_Attribute(self, node: cst.Attribute) -> None:
        key = self_attribute_key(node)
        pending = self._pending(key) if key is not None else None
        if pending is None and key is not None and self._classes and key in self._classes[-1].init_tensors:
            self._follow_init_tensor(node, key)
            return
        if pending is None or not self._is_load(node) or any(outer is pending[1] for outer in self.ctx.stack):
            return
        self._follow(node, pending[0])  # `self.h = torch.zeros(b, n)` in forward, then `self.lstm(x, self.h)`

    def _follow_init_tensor(self, node: cst.Attribute, key: str) -> None:
        """`self.state * self.mask` in a trainer's method, where `__init__` left `self.mask` a
        CPU tensor and this method has not set it yet: met with a tensor on a device?"""
        frame = self._classes[-1]
        function = self.ctx.current_function
        if key in frame.init_tensors_met or function is None or function.name.value == "__init__" \
                or not self._plain_class_method() or key in self._rebound.get(id(self._frame.node), ()) \
                or not self._is_load(node):
            return
        self._partner, self._factory = None, None
        fate, _ = self._fate(node, key)
        if fate == BAD and self._partner is not None and self.ctx.origins.is_on_device(self._partner):
            frame.init_tensors_met[key] = self._partner

    def leave_AugAssign(self, node: cst.AugAssign) -> None:
        # an accumulator: `correct = torch.zeros(1)`, then `correct += (pred == y).sum()`
        # (also into a part of it: `conf[:k, :k] += batch_conf`)
        target = node.target
        while isinstance(target, cst.Subscript):
            target = target.value
        if isinstance(target, cst.Name) and target.value in self._frame.new_tensors \
                and (self.ctx.origins.involves_input(node.value) or self._loss_of_inputs(node.value)):
            self._report_with_companions(self._frame.new_tensors.pop(target.value)[0], node.value)

    def _loss_of_inputs(self, value: cst.CSTNode) -> bool:
        """`self.loss_track(sims, targets)`, `criterion(pred, y)`: a loss computed from the
        inputs, on their device (mmtracking's `loss_track += self.loss_track(...)`)."""
        if isinstance(value, cst.BinaryOperation):  # `weight * partial_loss(y_pred, y_true)`
            return self._loss_of_inputs(value.left) or self._loss_of_inputs(value.right)
        # (in device-sensitive code, also of an item of an input: `partial_loss(y_pred[i], y_true[i])`
        # of a module's lists of outputs and targets)
        frame = self._frame
        return isinstance(value, cst.Call) and bool(_LOSS_CALLEE_RE.search(last_identifier(value.func) or "")) \
            and any(self.ctx.origins.involves_input(arg.value)
                    or (frame.any_mix_is_a_bug and isinstance(arg.value, cst.Subscript)
                        and root_name(arg.value) in frame.inputs) for arg in value.args)

    # ------------------------------------------------------------ the factory's fate

    def _follow(self, expr: cst.CSTNode, factory: cst.Call) -> None:
        """Decide what happens to a CPU tensor made by `factory` from where `expr` is used."""
        self._partner = None
        frame = self._frame
        key = expr.value if isinstance(expr, cst.Name) else self_attribute_key(expr)
        self._returned_at = None
        self._bundled = False
        self._factory = factory
        self._joined = None
        self._via_network = key is not None and (id(frame.node), key) in self._network_results
        fate, assigned = self._fate(expr, key)
        if fate == BAD and self._partner is None and key is not None and self._moved_later(key):
            # `mask = torch.ones(n, k)`, filled by helpers (`self.action_dict.mask_shift(mask, b)`),
            # then `mask = mask.to(x.device)` before it is returned: CPU work on purpose
            fate = NEUTRAL
        if fate == BAD and self._via_network and not self._placed_here(self._partner):
            # (what a network computed from the CPU tensor is wrong only beside a tensor the code
            # moved to a run-time device: the network may run on the CPU)
            fate = NEUTRAL
        # (`acc = torch.empty(0)` replaced later, handed to a custom op; `x * torch.tensor(2.0)`;
        # `torch.cat` refuses a 0-dim tensor on any device)
        if (fate == BAD or self._bundled) and self._stands_in(factory):
            sized = [made for made in self._companions.pop(id(factory), ()) if not self._stands_in(made)]
            if fate == BAD and sized:
                # `inv = torch.exp(torch.arange(n) * -torch.log(torch.tensor(b)))`: what the 0-dim
                # tensor was combined with has dimensions; that CPU tensor is the one to report
                factory, self._companions[id(sized[0])] = sized[0], sized[1:]
            else:
                fate = NEUTRAL  # (`return action, torch.tensor(0.), mean`: a 0-dim stand-in goes anywhere)
                self._bundled, self._returned_at = False, None
        if fate in (BAD, MOVED) and key is not None:
            frame.new_tensors.pop(key, None)
        if fate == BAD:
            self._report_with_companions(factory, self._partner)
        elif self._returned_at is not None:
            for made in (factory, *self._companions.pop(id(factory), ())):
                self._report(made, self._partner if self._bundled else None, returned_at=self._returned_at)
            if self._bundled:
                self._classes[-1].bundled.add(self._returned_at)
        elif assigned is not None:
            for name in assigned[0]:
                if not isinstance(assigned[1], cst.Expr):
                    # `lst = torch.cat(lst)`: a tensor again, whose items are no elements
                    self._lists.discard((id(frame.node), name))
                if self._via_network:
                    self._network_results.add((id(frame.node), name))
                earlier = self._pending(name)
                if earlier is not None and earlier[0] is not factory and (
                        earlier[1] is assigned[1] or _stores_an_item_of(assigned[1], name)):
                    # a second factory of the statement binding `name`, or another item stored into
                    # the dict it holds (`cube["time"] = ...`, `cube["latlon"] = ...`): both CPU
                    # tensors meet what it meets
                    companions = self._companions.setdefault(id(factory), [])
                    companions.extend([earlier[0], *self._companions.get(id(earlier[0]), ())])
                self.ctx.origins.follow(name, factory, assigned[1])

    def _moved_later(self, name: str) -> bool:
        """Does a later statement of the function move `name` to a run-time device and bind it
        again (`mask = mask.to(x.device)`)?"""
        function = self._frame.node
        here = next((node for node in reversed(self.ctx.stack) if isinstance(node, cst.BaseSmallStatement)), None)
        if not isinstance(function, cst.FunctionDef) or here is None:
            return False
        after = False
        for statement in function_statements(function, in_order=True):
            if statement is here:
                after = True
            elif after and isinstance(statement, cst.Assign) and len(statement.targets) == 1 \
                    and isinstance(statement.targets[0].target, cst.Name) and statement.targets[0].target.value == name \
                    and move_target(statement.value) is not None and root_name(statement.value) == name:
                return True
        return False

    def _joining_call(self, arg: Optional[cst.CSTNode], call: Optional[cst.CSTNode]) -> Optional[str]:
        """"cat" when `arg` is the list or tuple argument of `torch.cat(...)` (or another
        joining op): it refuses an empty CPU tensor beside device ones."""
        if not (isinstance(arg, cst.Arg) and isinstance(call, cst.Call)):
            return None
        callee = last_identifier(call.func) or ""
        return callee if callee in _JOINING_OPS and is_tensor_op(self.ctx.resolve(call.func)) else None

    def _feeds_a_sub_module(self, call: cst.Call) -> bool:
        """Is `call` the module's own sub-module (`self.code_generator(x)`), in its `forward`? (Not
        in other methods: ComfyUI's `encode_adm` embeds its numbers on the CPU on purpose with a
        module that keeps no weights, and moves the rest there.)"""
        info = self.ctx.current_class
        attribute = self.ctx.kinds.self_attribute(call.func)
        function = self.ctx.current_function
        if attribute is None or info is None or not info.is_module or function is None \
                or function.name.value not in ("forward", "__call__") or not self.ctx.origins.current.module_runtime:
            return False
        # (not the class's own method, maybe defined further down: `self.forward(torch.zeros(...))`
        # is a dry pass while a model is built)
        defined = any(isinstance(statement, cst.FunctionDef) and statement.name.value == attribute[1]
                      for statement in info.node.body.body)
        return not defined and info.holds_a_module(attribute[1])

    def _parallel_wrapper(self, network: cst.CSTNode) -> bool:
        """`ddp_model` of `ddp_model = DDP(model, device_ids=[rank])`: DataParallel and
        DistributedDataParallel move their inputs to the devices themselves."""
        built_from = self.ctx.kinds.class_of(network)
        name = (last_identifier(built_from) if built_from is not None else None) or last_identifier(network) or ""
        return _PARALLEL_WRAPPER_RE.search(name) is not None

    def _placed_here(self, partner: Optional[cst.CSTNode]) -> bool:
        """`actions.unsqueeze(1)` of `actions = torch.tensor(actions).to(self.device)`: a tensor
        this function moved to a run-time device (not one merely computed from its inputs)."""
        if partner is None:
            return False
        if is_device_move(partner) and not moves_to_cpu(partner) and self.ctx.origins.is_on_device(partner):
            return True
        root = tensor_expression_root(partner, self.ctx.resolve)
        return root is not None and root.value in self._frame.placed

    def _stands_in(self, factory: cst.Call) -> bool:
        """Is what `factory` made a stand-in that mixes with any device where it is used now: a
        placeholder replaced later (`acc = torch.empty(0)`), or a 0-dim tensor in arithmetic
        (`x * torch.tensor(2.0)`; `torch.cat` refuses one on any device)?"""
        return (id(factory) in self._placeholders and self._joined is None) or (
            id(factory) in self._scalars and id(factory) not in self._dimmed
            and self._joined in (None, "cat", "concat", "concatenate"))

    def _report_with_companions(self, factory: cst.Call, partner: Optional[cst.CSTNode]) -> None:
        self._report(factory, partner)
        for companion in self._companions.pop(id(factory), ()):
            self._report(companion, partner)

    def _fate(self, expr: cst.CSTNode,
              key: Optional[str] = None) -> Tuple[str, Optional[Tuple[List[str], cst.CSTNode]]]:
        """Walk up from `expr` (the local `key`, if a name) through the expressions that
        keep its device (`.view()`, `* 2`, `[...]`) to the first place that decides."""
        # (in a method of an object told its device, its inputs are on that device, but only a
        # mix with them or with its device tensors counts: it keeps CPU work of its own)
        sensitive = self._frame.any_mix_is_a_bug
        child = expr
        depth = 1
        position: Optional[int] = None  # of `child` in the tuple a `return` gives
        bundled: List[cst.CSTNode] = []  # what is returned beside it (`return out, state`)
        if key is not None and (id(self._frame.node), key) in self._batches:
            return self._fate_of_a_batch(self._batches[(id(self._frame.node), key)]), None
        while True:
            parent = self.ctx.parent(depth)
            if parent is None:
                return NEUTRAL, None
            if isinstance(parent, cst.Attribute):
                if parent.value is not child:
                    return NEUTRAL, None
                call = self.ctx.parent(depth + 1)
                name = parent.attr.value
                if name in MOVERS and isinstance(call, cst.Call) and call.func is parent \
                        and not changes_dtype_only(call, self.ctx.resolve) \
                        and not (key is not None and call.args and root_name(call.args[0].value) == key):
                    return MOVED, None  # (not `fake = fake.type_as(fake)`: where it already is)
                if name == "type" and isinstance(call, cst.Call) and call.func is parent \
                        and self.ctx.origins.is_on_device(call):
                    return MOVED, None  # `.type(Tensor)` of a CUDA type chosen where CUDA is there
                if name == "device" and sensitive and self._device_is_used(depth + 1):
                    # `p = ... if pt else torch.zeros(1)`, then `imgs.to(p.device)`: the new
                    # tensor's device, the CPU, decides where the model's inputs go
                    return BAD, None
                if name in TO_PYTHON:
                    return NEUTRAL, None
                if isinstance(call, cst.Call) and call.func is parent:
                    # (a list the tensor was appended to takes in what is on a device, not
                    # whatever computes on the inputs: its items may be stacked and moved)
                    met = [a.value for a in call.args if name not in _CROSS_DEVICE_METHODS
                           and not name.endswith("_as") and (self.ctx.origins.is_on_device(a.value)
                                                             if name in _LIST_METHODS
                                                             else self._is_known_tensor(a.value))]
                    index = _index_argument(call, name)
                    if index is not None and self.ctx.origins.is_input_tensor(index, proven=True):
                        met.insert(0, index)  # one_hot.scatter_(1, labels.view(-1, 1), 1): the caller's labels
                    source = _source_argument(call, name)
                    if source is not None and self.ctx.origins.is_input_tensor(source, proven=True):
                        met.insert(0, source)  # grid.scatter_add_(0, idx, feat.reshape(-1)): the caller's values
                    if met:
                        self._partner = met[0]
                        return BAD, None  # cpu_t.remainder(x), cpu_t.add_(x): the method mixes devices
                    # x.view(...), x.float(), ...: same device; an in-place method returns the
                    # tensor itself (`torch.ones(t, n).triu_(1).bool()`)
                    if name in _DIMENSION_METHODS and self._factory is not None:
                        self._dimmed.add(id(self._factory))
                    child, depth = call, depth + 2
                    continue
                child, depth = parent, depth + 1  # x.T, x.mT
                continue
            if isinstance(parent, (cst.Index, cst.Slice, cst.SubscriptElement)):
                if key is not None:
                    self._indexes.add((id(self._frame.node), key))
                return NEUTRAL, None  # indexing with a CPU index tensor is allowed
            if isinstance(parent, cst.Subscript):
                if key is not None and (id(self._frame.node), key) in self._lists:
                    child, depth = parent, depth + 1  # `fatoms[x]`: an item of the list, this tensor
                    continue
                masks = [e.slice.value for e in parent.slice
                         if isinstance(e.slice, cst.Index) and self._is_index_from_input(e.slice.value)]
                if masks:
                    self._partner = masks[0]
                    return BAD, None  # cpu_t[mask] with a mask computed from a device tensor
                if key is None and self._factory is not None and _picks_an_element(parent):
                    # `torch.Tensor(anchors)[a, 0]`: one number of a table made for it, 0-dim
                    self._scalars.add(id(self._factory))
                if self._factory is not None and _one_dimensional(self._factory) and _one_plain_index(parent) \
                        and not self.ctx.kinds.is_tensor(parent.slice[0].slice.value):  # type: ignore[attr-defined]
                    # `coeffs[j]` of `coeffs = torch.tensor([0.003, 0.01, 0.03])`: one number, a
                    # 0-dim CPU tensor, which mixes with tensors on any device (convexAdam)
                    return NEUTRAL, None
                child, depth = parent, depth + 1  # torch.arange(n)[None]: still this tensor
                continue
            if isinstance(parent, (cst.UnaryOperation, cst.IfExp)):
                if isinstance(parent, cst.IfExp) and parent.test is child:
                    return NEUTRAL, None
                child, depth = parent, depth + 1
                continue
            if isinstance(parent, cst.BinaryOperation):
                other = parent.right if parent.left is child else parent.left
                # (`tokens + [x[:, t]]`: a list joined with a list holding the input's tensors)
                others = [e.value for e in other.elements] if isinstance(other, (cst.List, cst.Tuple)) else [other]
                met = [o for o in others if self.ctx.origins.is_input_tensor(o)]
                if met:
                    self._partner = met[0]
                    return BAD, None
                child, depth = parent, depth + 1  # arithmetic with numbers or unknowns
                continue
            if isinstance(parent, (cst.Comparison, cst.ComparisonTarget)):
                comparison = parent if isinstance(parent, cst.Comparison) else self.ctx.parent(depth + 1)
                if isinstance(comparison, cst.Comparison):
                    others = [comparison.left] + [target.comparator for target in comparison.comparisons]
                    met = [other for other in others if other is not child and self.ctx.origins.is_input_tensor(other)]
                    if met:
                        self._partner = met[0]
                        return BAD, None  # x == torch.arange(n): compared across devices
                child, depth = parent, depth + 1
                continue
            if isinstance(parent, (cst.If, cst.While, cst.Assert)):
                return NEUTRAL, None  # control flow only reads the value
            if self._factory is not None and child is self._factory and _one_dimensional(self._factory) \
                    and _iterated_by_a_loop(child, parent, self.ctx.parent(depth + 1), self.ctx.parent(depth + 2)):
                # `for alpha in torch.linspace(0, 1, n):` each item is one number, a 0-dim CPU
                # tensor, which mixes with tensors on any device
                return NEUTRAL, None
            if isinstance(parent, cst.Param) and parent.default is child and key is None:
                # `def gate(x, q=torch.ones(1))`: the parameter holds the CPU tensor unless given
                function = self._frame.node
                params = function.params if isinstance(function, cst.FunctionDef) else None
                if params is not None and any(p is parent for p in (*params.params, *params.kwonly_params)):
                    if self._factory is not None:
                        self._defaults.add(id(self._factory))
                    return NEUTRAL, ([parent.name.value], parent)
                return NEUTRAL, None
            if isinstance(parent, cst.Arg):
                call = self.ctx.parent(depth + 1)
                if not isinstance(call, cst.Call) or call.func is child:
                    return NEUTRAL, None
                if _is_record(call) and isinstance(self.ctx.parent(depth + 2), cst.Return):
                    # `return Output(logits, state, torch.zeros(n))`: a record of what is returned
                    bundled.extend(a.value for a in call.args if a is not parent)
                    child, depth = call, depth + 2
                    continue
                collected = self._collecting_list(call, parent, self.ctx.parent(depth + 2))
                if collected is not None:
                    if self.ctx.origins.is_input_tensor(cst.Name(collected)):
                        self._partner = cst.Name(collected)
                        return BAD, None  # `parts = [x]`, `parts.append(torch.ones(n))`: one list, two devices
                    # `tokens.append(torch.zeros(b, d))`: the list holds the CPU tensor now
                    return NEUTRAL, ([collected], self.ctx.parent(depth + 2))
                self._partner = None
                fate = self._fate_as_argument(call, parent, self.ctx.parent(depth + 2))
                if fate == BAD and self._partner is None and key is not None \
                        and (id(self._frame.node), key) in self._gathered:
                    # (parts gathered in a list, handed to a function that met no device tensor
                    # with them: `FeaturesDataset(features, labels)` keeps them for a loader)
                    return NEUTRAL, None
                if fate is not None:
                    return fate, None
                child, depth = call, depth + 2  # torch.cat([...]): a tensor derived from this one
                continue
            if isinstance(parent, (cst.Element, cst.StarredElement)):
                container = self.ctx.parent(depth + 1)
                if isinstance(container, cst.Tuple) and isinstance(self.ctx.parent(depth + 2), cst.Index):
                    return NEUTRAL, None  # `t[(rows, cols)]`: CPU index tensors index a tensor on any device
                if isinstance(container, cst.Tuple) and isinstance(self.ctx.parent(depth + 2), cst.Return):
                    position = container.elements.index(parent)
                    bundled.extend(e.value for e in container.elements if e is not parent)
                listed = key is not None and (id(self._frame.node), key) in self._gathered
                arg, call = self.ctx.parent(depth + 2), self.ctx.parent(depth + 3)
                placed = any(e is not parent and self.ctx.origins.is_on_device(e.value) for e in container.elements) \
                    if not sensitive and not listed and isinstance(container, (cst.List, cst.Tuple)) \
                    and not isinstance(arg, cst.Yield) \
                    and not (isinstance(arg, cst.Arg) and isinstance(call, cst.Call) and _logs(call)) else False
                if placed:
                    # (a batch generator's `yield indices, target.to(rank)` hands each part to
                    # its own consumer: placed one by one on purpose)
                    self._joined = self._joining_call(self.ctx.parent(depth + 2), self.ctx.parent(depth + 3))
                    return BAD, None
                child, depth = container, depth + 2
                continue
            if isinstance(parent, cst.DictElement) and parent.value is child:
                container = self.ctx.parent(depth + 1)
                others = [e.value for e in getattr(container, "elements", ())
                          if isinstance(e, cst.DictElement) and e is not parent]
                # (a dict that mixes devices is no bug by itself: tests of mixed inputs, state
                # dicts, sizes kept on the CPU; only what a module's method returns is judged)
                holder = self.ctx.parent(depth + 2)
                if isinstance(holder, cst.Return):
                    bundled.extend(others)  # `return {"out": out, "state": torch.zeros(n)}`
                    child, depth = container, depth + 2
                    continue
                # ... but a dict that a network is handed is its input: in a module's method, or
                # beside a tensor moved to a run-time device here
                placed = [o for o in others if self.ctx.origins.is_on_device(o)]
                if not (sensitive or placed):
                    return NEUTRAL, None
                partner = placed[0] if placed else None
                if isinstance(holder, cst.Arg) and holder.value is container:
                    return self._fate_of_a_batch(partner, holder, self.ctx.parent(depth + 3)), None
                if isinstance(holder, cst.Assign) and holder.value is container \
                        and len(holder.targets) == 1 and isinstance(holder.targets[0].target, cst.Name):
                    name = holder.targets[0].target.value  # `kwargs = {...}`, then `self.encoder(**kwargs)`
                    self._batches[(id(self._frame.node), name)] = partner
                    return NEUTRAL, ([name], holder)
                return NEUTRAL, None
            if isinstance(parent, (cst.List, cst.Tuple)):
                child, depth = parent, depth + 1
                continue
            if isinstance(parent, (cst.ListComp, cst.GeneratorExp)) and parent.elt is child \
                    and isinstance(self.ctx.parent(depth + 1), cst.Arg):
                # `torch.stack([torch.tensor([[1, 0, 0], [0, s, t]]) for s, t in zip(scale, shift)])`:
                # the list holds one such tensor per item, for the call to join
                child, depth = parent, depth + 1
                continue
            if isinstance(parent, cst.AssignTarget):
                assign = self.ctx.parent(depth + 1)
                if key is not None and isinstance(child, cst.Subscript) and isinstance(assign, cst.Assign) \
                        and self._indexes_by_tensor(child):
                    index = next(e.slice.value for e in child.slice if isinstance(e.slice, cst.Index))
                    if self._index_from_inputs_through_locals(index) and not self._is_new_cpu_tensor(index):
                        # `labels[matched] = gt[idx, 0]` with `matched = torch.nonzero(iou > t)` of the
                        # caller's boxes: CUDA indices into a CPU tensor raise (d2l's multibox_target)
                        self._partner = index
                        return BAD, None
                if key is not None and isinstance(child, cst.Subscript) and isinstance(assign, cst.Assign) \
                        and (id(self._frame.node), key) not in self._dicts \
                        and (sensitive or self._frame.helper) and not moves_to_cpu(assign.value) \
                        and (self.ctx.origins.involves_input(assign.value) or self._computed_from_inputs(assign.value)):
                    self._filled.setdefault((id(self._frame.node), key), assign.value)  # `out[i] = x[i] / 2`
                elif key is not None and isinstance(child, cst.Subscript) and isinstance(assign, cst.Assign) \
                        and self._host_number(assign.value):
                    self._host_filled.add((id(self._frame.node), key))  # `precision[i] = tp / (tp + fp)`
                return NEUTRAL, None
            if isinstance(parent, (cst.Assign, cst.AnnAssign)):
                targets = ([t.target for t in parent.targets] if isinstance(parent, cst.Assign)
                           else [parent.target])
                if child is not parent.value:
                    return NEUTRAL, None
                if len(targets) > 1:
                    # `V_mask = h_V = torch.zeros(b, n, d)`: each name holds this tensor
                    names = [t.value for t in targets if isinstance(t, cst.Name)]
                    return NEUTRAL, ((names, parent) if len(names) == len(targets) else None)
                target = targets[0]
                if isinstance(target, cst.Attribute) and self.ctx.origins.is_input_tensor(target.value) \
                        and self.ctx.kinds.is_tensor(target.value):
                    self._partner = target.value  # `param.grad = torch.zeros(...)`: kept beside the input
                    return BAD, None
                if isinstance(target, cst.Attribute) and self._replaces_buffer(target):
                    self._partner = target  # (whose device the new tensor should take)
                    return BAD, None  # `self.v = torch.zeros(n)` in `reset_`: the moved buffer becomes a CPU one
                if isinstance(target, cst.Attribute) and target.attr.value == "data" \
                        and isinstance(target.value, cst.Attribute) and self._replaces_buffer(target.value):
                    # `self.z.data = torch.randn(self.z.shape)`: the moved buffer's data becomes a CPU tensor
                    self._partner = target.value
                    return BAD, None
                if isinstance(target, cst.Subscript) and self._indexes_by_tensor(target) \
                        and self.ctx.origins.is_input_tensor(target.value) and self.ctx.kinds.is_tensor(target.value):
                    # `inputs[mask] = random_words[mask]`: written into the input by a mask or an index
                    # tensor (`index_put_`, one device); `x[i] = t` copies across devices
                    self._partner = target.value
                    return BAD, None
                if isinstance(target, (cst.Tuple, cst.List)):
                    # `w, h = torch.meshgrid(torch.arange(n), torch.arange(m))`: each part is this tensor
                    names = [e.value.value for e in target.elements if isinstance(e.value, cst.Name)]
                    return NEUTRAL, (names, parent)
                key = self_attribute_key(target)
                if key is not None and sensitive and self._state_forward_reads(target):
                    self._partner = None
                    return BAD, None  # `def init_hidden(self, b): self.hidden = (torch.zeros(...), ...)`
                if key is not None and (sensitive or self._plain_class_method()):
                    # `self.h = torch.zeros(...)` in forward: followed as a local (a cache built
                    # once, `if self.mask is None:`, is also TDV202's: with `device=x.device` it
                    # still keeps the first call's device, so `fix` does not half-fix it)
                    if self._factory is not None and self.ctx.class_facts.under_once_test(target.attr.value):
                        self._cached_once.add(id(self._factory))
                    return NEUTRAL, ([key], parent)
                parameter = self._optimizer_state_of(target)
                if parameter is not None and self._factory is not None \
                        and keyword(self._factory, "pin_memory") is None \
                        and any(next(names_read(arg.value), None) for arg in self._factory.args):
                    # `state["exp_avg_sq_row"] = torch.zeros(shape[:-1])` in an optimizer's step:
                    # its state is updated with the parameter's gradient at every step (not a
                    # counter of literal size, `state["step"] = torch.zeros(1)`, read with `.item()`)
                    self._partner = parameter
                    return BAD, None
                holder = self._filling_a_dict(target)
                if holder is not None:
                    return NEUTRAL, ([holder], parent)
                if not isinstance(target, cst.Name):
                    return NEUTRAL, None  # other attributes and subscripts: unsure
                return NEUTRAL, ([target.value], parent)
            if isinstance(parent, cst.AugAssign):
                if child is parent.value and not sensitive and self.ctx.origins.is_input_tensor(parent.target) \
                        and self.ctx.kinds.is_tensor(parent.target):
                    # `buckets += n * torch.eye(m).long()` with `buckets` computed from the input
                    self._partner = parent.target
                    return BAD, None
                if not sensitive and child is parent.value and isinstance(parent.target, cst.Name) \
                        and self._frame.helper:
                    # `r = keep_prob`, `r += torch.rand(b, 1, 1, 1)`: `r` now holds a CPU tensor
                    return NEUTRAL, ([parent.target.value], parent)
                return (BAD if sensitive and child is parent.value else NEUTRAL), None
            if isinstance(parent, (cst.Return, cst.Yield)) and not sensitive and key is not None \
                    and (id(self._frame.node), key) in self._gathered:
                return NEUTRAL, None  # a list of parts (or their stack) handed back: its consumer decides
            if isinstance(parent, cst.Return) and parent.value is child and key is None \
                    and self._returns_on_an_inputs_device_elsewhere(parent):
                # `if not paths: return torch.zeros(n, n)` / `a = torch.zeros(n, n, device=g.device)`
                # ... `return a`: one caller, two devices (OpenHGNN's HGOT)
                return BAD, None
            if isinstance(parent, (cst.Return, cst.Yield)):
                # What forward (or a loss) returns meets the caller's tensors, and so does
                # what a function told the device returns (`def grid(n, device): return
                # torch.arange(n)`); what a helper method returns is judged where forward
                # uses it, which we do not follow.
                told = self._frame.device_param is not None or (
                    isinstance(parent, cst.Return) and position is None
                    and self._told_a_device_to_use())
                # `return hidden, torch.zeros(1, n, h)` from a module's method: one result on
                # the inputs' device, the other on the CPU, for the same consumer
                # (not an index the function used: `return x[:, keep], keep`)
                self._partner = None if (id(self._frame.node), key) in self._indexes else next(
                    (other for other in bundled if self.ctx.origins.is_input_tensor(other, proven=True)), None)
                filled = self._filled.get((id(self._frame.node), key)) if key is not None else None
                if filled is not None:
                    # `out = torch.zeros(x.shape)`, `out[i] = f(x[i])`, `return out`: the results
                    # computed from the caller's tensors come back on the CPU
                    self._partner = filled
                    return BAD, None
                if sensitive and not self._frame.returns_to_caller and not told and self._frame.method_name \
                        and self._classes and (position is None or isinstance(child, cst.Tuple)):
                    self._returned_at = (self._frame.method_name, position)  # judged where it is used
                    # (what `predict`, `sample` or `initial_inference` returns goes to callers
                    # outside the class, with the inputs' device: wrong there unless moved)
                    # (not what an entry point built from values it took to the host:
                    # `torch.tensor([x.tolist() for x in preds])` hands the caller CPU tokens on purpose)
                    if self._partner is not None or id(self._frame.node) not in self._to_host and (
                            _ENTRY_POINT_RE.search(self._frame.method_name)
                            or STATE_MAKER_RE.match(self._frame.method_name)):
                        self._bundled = True
                    return NEUTRAL, None
                if self._partner is not None and sensitive and self._frame.method_name:
                    return BAD, None
                method = self.ctx.current_function
                info = self.ctx.current_class
                if not sensitive and self._frame.module_runtime and self._classes and method is not None \
                        and info is not None and info.methods.get(method.name.value) is method \
                        and not self.ctx.data_pipeline_module and not self.ctx.origins.in_a_pipeline_folder() \
                        and not method.name.value.startswith("__") and (position is None or isinstance(child, cst.Tuple)):
                    # `_get_rand_cells(self, frac)` of a module, taking no tensor: what it returns is
                    # judged where the class's methods use it (svox2 hands it to a CUDA kernel)
                    self._returned_at = (method.name.value, position)
                    self._partner_needed.add(self._returned_at)
                    return NEUTRAL, None
                if self._partner is not None and self._frame.helper and key in self._frame.params:
                    # `if mask is None: mask = torch.ones(n)` ... `return x, mask`: the default of a
                    # tensor the caller may give comes back on the CPU beside the caller's tensors
                    return BAD, None
                if key is not None and (id(self._frame.node), key) in self._host_filled and self._partner is None:
                    # `precision[i] = tp / (tp + fp)` of `tp = confusion[i, i].item()`: per-class
                    # figures computed on the host, handed back as a CPU summary on purpose
                    return NEUTRAL, None
                if (sensitive and self._frame.returns_to_caller) or told:
                    return BAD, None
                function = self.ctx.current_function
                if isinstance(parent, cst.Return) and not self._classes and len(self.ctx.functions) == 1 \
                        and function is not None \
                        and function.name.value in self._module_functions.methods \
                        and not self._rebinds_a_parameter(self._factory) and not self.ctx.data_pipeline_module \
                        and not is_data_pipeline_name(function.name.value) \
                        and (position is None or isinstance(child, cst.Tuple)):
                    # a function of the module returns a new CPU tensor: judged where the file's
                    # callers use it (`noise = get_noise(shape)`, then `torch.cat([h, noise])`); not
                    # one bound to a parameter, which other calls give on their device (`if
                    # isinstance(pos, int): pos = torch.arange(pos)`), a data pipeline's, or a yield
                    self._returned_at = (function.name.value, position)
                return NEUTRAL, None
            return NEUTRAL, None

    def _told_a_device_to_use(self) -> bool:
        """A function (not a data pipeline's) that takes a device parameter and passes it as
        `device=` somewhere (`torch.zeros(n, device=device)`), returning, outside any test of
        it, a tensor made without it: the caller asked for its result on that device
        (torch-fourier-slice's `dft_center`)."""
        function = self.ctx.current_function
        if function is None or self.ctx.data_pipeline_module or is_data_pipeline_name(function.name.value):
            return False
        told = [p for p in self._frame.params if is_device_name(p)]
        if not told:
            return False
        tested = {name for name, _ in self.ctx.tests()}
        return any(p not in tested and _passes_as_device(function, p) for p in told)

    def _rebinds_a_parameter(self, factory: Optional[cst.Call]) -> bool:
        """Is `factory`'s tensor bound to a parameter of its function (`if isinstance(pos, int):
        pos = torch.arange(pos)`), which on other calls holds the caller's tensor?"""
        if factory is None:
            return False
        statement = next((node for node in reversed(self._stacks.get(id(factory), ())) if isinstance(node, cst.Assign)),
                         None)
        return statement is not None and any(isinstance(target.target, cst.Name)
                                             and target.target.value in self._frame.params
                                             for target in statement.targets)

    def _returns_on_an_inputs_device_elsewhere(self, here: cst.Return) -> bool:
        """Does the function, in another `return`, hand back a tensor it made on the device of
        one of its parameters (`a = torch.zeros(n, device=g.device)` ... `return a`), while this
        `return` (under no test of a device) hands back a CPU one?"""
        function = self._frame.node
        if not isinstance(function, cst.FunctionDef):
            return False
        params = set(parameter_names(function))
        placed: Dict[str, str] = {}  # local -> the parameter whose device it was made on
        returned: List[cst.BaseExpression] = []
        tested: List[str] = []  # the tests of the function's `if`s
        for node in function_statements(function):
            if isinstance(node, cst.Assign) and len(node.targets) == 1 and isinstance(node.targets[0].target, cst.Name) \
                    and isinstance(node.value, cst.Call):
                owner = self._parameters_device(node.value, params)
                if owner is not None:
                    placed[node.targets[0].target.value] = owner
            elif isinstance(node, cst.Return) and node is not here and node.value is not None:
                returned.append(node.value)
            elif isinstance(node, cst.If):
                tested.append(cst.Module([]).code_for_node(node.test))
        owners = {placed[value.value] if isinstance(value, cst.Name) and value.value in placed
                  else self._parameters_device(value, params) if isinstance(value, cst.Call) else None
                  for value in returned} - {None}
        # (not where an `if` tests that parameter, or a device: `if like is None: return
        # torch.zeros(n)` is the caller's choice, and kornia's `if input.is_floating_point():`
        # keeps integer bounds on the CPU on purpose)
        tests = " ".join(tested)
        return bool(owners) and "device" not in tests \
            and not any(re.search(rf"\b{re.escape(owner)}\b", tests) for owner in owners)  # type: ignore[arg-type]

    @staticmethod
    def _parameters_device(call: cst.Call, params: Set[str]) -> Optional[str]:
        """`g` of `torch.zeros(n, device=g.device)`, for a parameter `g`."""
        device = keyword(call, "device")
        if device is not None and isinstance(device.value, cst.Attribute) and device.value.attr.value == "device" \
                and isinstance(device.value.value, cst.Name) and device.value.value.value in params:
            return device.value.value.value
        return None

    def _is_host_bound(self, call: cst.Call) -> bool:
        """`grads.data.numpy()`, `self.gradients.numpy()` (of what a hook kept) in a plain
        function: a tensor it was given, or computed from one, turned into an array without
        `.cpu()`, which raises for a GPU tensor (as `preds.apply_(f)` does). The function runs
        on the CPU by design."""
        frame = self._frame
        if frame.sensitive or not isinstance(frame.node, cst.FunctionDef):
            return False
        node: cst.CSTNode = call.func.value  # type: ignore[attr-defined]
        while True:
            if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute):
                if node.func.attr.value in MOVERS:
                    return False  # `x.cpu().numpy()`: host work that works anywhere
                node = node.func.value
            elif isinstance(node, cst.Attribute) and node.attr.value in ("data", "T", "mT"):
                node = node.value
            elif isinstance(node, cst.Subscript):
                node = node.value
            else:
                break
        if isinstance(node, cst.Name):
            return node.value in frame.inputs or node.value in frame.derived
        return self_attribute_key(node) is not None

    def _device_attribute_in(self, node: Optional[cst.CSTNode]) -> Optional[str]:
        """`self.scale` of `self.scale - 10` or `self.scale.exp()`, when it is on a device."""
        while isinstance(node, (cst.BinaryOperation, cst.Call, cst.Subscript)):
            if isinstance(node, cst.BinaryOperation):
                return self._device_attribute_in(node.left) or self._device_attribute_in(node.right)
            if isinstance(node, cst.Call) and not isinstance(node.func, cst.Attribute):
                return None
            node = node.func.value if isinstance(node, cst.Call) else node.value
        if isinstance(node, cst.Attribute) and self_attribute_key(node) is not None \
                and self.ctx.origins.is_on_device(node):
            return dotted_name(node)
        return None

    def _is_number(self, node: cst.CSTNode) -> bool:
        """`2.0`, `-width / 2`, `True`, `token_id` of `token_id: int`: what makes a 0-dim tensor."""
        if isinstance(node, cst.UnaryOperation):
            return self._is_number(node.expression)
        if isinstance(node, cst.BinaryOperation):
            return self._is_number(node.left) and self._is_number(node.right)
        return number_value(node) is not None or (isinstance(node, cst.Name) and node.value in ("True", "False")) \
            or self.ctx.kinds.kind_of(node) == NUMBER

    def _is_new_cpu_tensor(self, node: cst.CSTNode) -> bool:
        """`torch.zeros(n).view(a, b)`: a factory's CPU tensor, through methods that keep it there."""
        while self._cpu_factory(node) is None:
            if not (isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute)) \
                    or node.func.attr.value in MOVERS or node.func.attr.value in TO_PYTHON:
                return False
            node = node.func.value
        return True

    def _index_from_inputs_through_locals(self, index: cst.BaseExpression, depth: int = 3) -> bool:
        """`_is_index_from_input`, or a local computed (through at most `depth` bindings of this
        function) from the inputs or by a function given them: `m = match(label, anchors)`,
        `idx = torch.nonzero(m >= 0)`."""
        function = self._frame.node
        names = {node.value for node in descendants(index) if isinstance(node, cst.Name)}
        if isinstance(function, cst.FunctionDef) and names & self._host_loop_targets(function):
            return False  # `for sid in g.edata["sid"].cpu().numpy():` ... `p[table[sid]] = 0`
        if self._is_index_from_input(index):
            return True
        if depth == 0 or not isinstance(function, cst.FunctionDef):
            return False
        for value in assigned_values(function, names):
            if self._taken_to_the_host(value):
                continue  # `order = np.argsort(scores.cpu().numpy())`: host data, whatever it came from
            if self._computed_from_inputs(value) or self._index_from_inputs_through_locals(value, depth - 1):
                return True
        return False

    def _host_loop_targets(self, function: cst.FunctionDef) -> Set[str]:
        """The names loops of `function` take from data on the host (`for sid in ids.cpu().numpy():`);
        asked once per function."""
        found = self._host_loops_of.get(id(function))
        if found is None:
            found = self._host_loops_of[id(function)] = {
                node.value for statement in function_statements(function)
                if isinstance(statement, cst.For) and self._taken_to_the_host(statement.iter)
                for node in descendants(statement.target) if isinstance(node, cst.Name)}
        return found

    def _taken_to_the_host(self, value: cst.BaseExpression) -> bool:
        """Does computing `value` take a tensor to the host (`.cpu()`, `.numpy()`, `.tolist()`,
        `.item()`) or compute with NumPy?"""
        return any(isinstance(node, cst.Call) and (
            method_call(node, "cpu", "numpy", "tolist", "item") is not None
            or (self.ctx.resolve(node.func) or "").startswith("numpy.")) for node in descendants(value))

    def _is_index_from_input(self, index: cst.BaseExpression) -> bool:
        """A mask or index computed from the inputs (`x > 0`, `idx`), not arithmetic on
        numbers that may be parameters (`buf[i * bw, 2]` of a brush width `bw`)."""
        if isinstance(index, cst.BinaryOperation):
            return any(self.ctx.origins.is_on_device(side) or (self.ctx.kinds.is_tensor(side)
                                                                and self._is_index_from_input(side))
                       for side in (index.left, index.right))
        return self.ctx.origins.involves_input(index)

    def _indexes_by_tensor(self, target: cst.Subscript) -> bool:
        """`x[mask]`, `x[:, idx]`: one index that is a tensor (or a comparison making a mask),
        the others slices. (Not `t[b, a, j, i, 2]` with `a = best[k]`, an element: a 0-dim
        value goes anywhere.)"""
        indexes = [e.slice.value for e in target.slice if isinstance(e.slice, cst.Index)]
        return len(indexes) == 1 and not isinstance(indexes[0], cst.Subscript) \
            and (isinstance(indexes[0], cst.Comparison) or self.ctx.kinds.is_tensor(indexes[0]))

    def _replaces_buffer(self, target: cst.Attribute) -> bool:
        """`self.<name> = t` for a buffer of the module, after it was built (`reset_`,
        `forward`): `nn.Module.__setattr__` puts `t` in place of the buffer that
        `module.to(device)` had moved (bindsnet's neuron `reset_`)."""
        info, function = self.ctx.current_class, self.ctx.current_function
        if info is None or function is None or not info.is_module or not isinstance(target.value, cst.Name):
            return False
        params = parameter_names(function)
        # (not a placeholder registered empty: filling it is its initialisation, before any move)
        return bool(params) and target.value.value == params[0] and info.is_registered(target.attr.value) \
            and not info.is_placeholder(target.attr.value) and info.runs_once_built(function.name.value)

    def _state_forward_reads(self, target: cst.Attribute) -> bool:
        """`self.hidden = (h, c)` in a module's state maker (`init_hidden(self, batch_size)`), read
        by forward (`self.lstm(x, self.hidden)`): a per-batch state the moved layers get with the
        inputs, as the state makers that return it do."""
        info, method = self.ctx.current_class, self._frame.method_name
        return info is not None and info.is_module and method is not None \
            and STATE_MAKER_RE.match(method) is not None and not info.is_init_time(method) \
            and any(_reads_self_attribute(method, target.attr.value)
                    for method in info.node.body.body  # (forward may come later: not yet in `methods`)
                    if isinstance(method, cst.FunctionDef) and method.name.value in ("forward", "__call__"))

    def _host_number(self, value: cst.CSTNode, names: Optional[Set[str]] = None) -> bool:
        """`tp / (tp + fp) if tp + fp else 0` of `tp = m[i, i].item()`: Python numbers only, at
        least one of them taken from a tensor to the host (`.item()`, or a local every binding of
        which is such a number)."""
        if names is None:
            names = self._host_number_names()
        taken = False
        stack = [value]
        while stack:
            node = stack.pop()
            if isinstance(node, (cst.Integer, cst.Float)):
                continue
            if isinstance(node, cst.BinaryOperation):
                stack += [node.left, node.right]
            elif isinstance(node, cst.UnaryOperation):
                stack.append(node.expression)
            elif isinstance(node, cst.IfExp):
                stack += [node.body, node.orelse]  # (the test is only read)
            elif isinstance(node, cst.Call) and not node.args and method_call(node, "item") is not None:
                taken = True
            elif isinstance(node, cst.Name) and node.value in names:
                taken = True
            elif isinstance(node, cst.Subscript) and isinstance(node.value, cst.Name) \
                    and (id(self._frame.node), node.value.value) in self._host_filled:
                taken = True  # `2 * precision[i] * recall[i]`: an item of a summary filled so
            else:
                return False
        return taken

    def _host_number_names(self) -> Set[str]:
        """The function's locals that only ever hold host numbers (`tp = m[i, i].item()`,
        `fp = m[:, i].sum().item() - tp`), in source order; asked once per function."""
        function = self._frame.node
        found = self._host_numbers_of.get(id(function))
        if found is None:
            found, other = set(), set()
            if isinstance(function, cst.FunctionDef):
                for statement in function_statements(function, in_order=True):
                    for node in (statement.body if isinstance(statement, cst.SimpleStatementLine) else ()):
                        if isinstance(node, (cst.Assign, cst.AugAssign, cst.AnnAssign)):
                            targets = [t.target for t in node.targets] if isinstance(node, cst.Assign) \
                                else [node.target]
                            host = node.value is not None and self._host_number(node.value, found)
                            for target in targets:
                                if isinstance(target, cst.Name):
                                    (found if host and target.value not in other else other).add(target.value)
                                    if not host:
                                        found.discard(target.value)
            self._host_numbers_of[id(function)] = found
        return found

    def _computed_from_inputs(self, value: cst.CSTNode) -> bool:
        """`ndcg(prediction=predictions[i], label=labels[i])`: a function (not a method, nor a
        conversion to Python) given the caller's tensors computes where they are."""
        if not isinstance(value, cst.Call) or not isinstance(value.func, (cst.Name, cst.Attribute)) \
                or (isinstance(value.func, cst.Attribute) and not isinstance(value.func.value, cst.Name)):
            return False
        callee = last_identifier(value.func) or ""
        if callee in TO_PYTHON or callee in _HOST_FUNCTIONS or self.ctx.kinds.kind_of(value.func) is not None:
            return False
        if isinstance(value.func, cst.Attribute) and self.ctx.kinds.kind_of(value.func.value) is not None:
            return False  # a method of a value of known kind (`model.score(x)`, `x.sum()`)
        return any(self.ctx.origins.is_input_tensor(arg.value, proven=True) and self.ctx.kinds.is_tensor(arg.value)
                   for arg in value.args if not arg.star)

    def _generator_on_a_device(self, value: cst.BaseExpression) -> bool:
        """`g` of `g = torch.Generator(device)` in this function, or `self._gen` of
        `self._gen = torch.Generator(self._device)` in the class: a generator made for a device
        chosen at run time (not the default CPU one, nor `torch.Generator("cpu")`)."""
        key = dotted_name(value)
        if key is None:
            return False
        made: List[cst.BaseExpression] = []
        if key.startswith("self.") and self.ctx.current_class is not None:
            made = [a.value for a in self.ctx.current_class.assignments if f"self.{a.name}" == key]
        elif isinstance(self._frame.node, cst.FunctionDef):
            made = assigned_values(self._frame.node, {key})
        return bool(made) and all(
            isinstance(v, cst.Call) and self.ctx.resolve(v.func) == "torch.Generator"
            and (device := first_argument(v, "device")) is not None and not names_the_cpu(device)
            for v in made)

    def _buffer_moved_after(self, call: cst.Call) -> bool:
        """`self.register_buffer("size", torch.zeros(n))`, then `self.size = self.size.to(device)`
        in the same method (openmixup's `reset_cluster_size(self, device)`)."""
        name = string_value(call.args[0].value) if call.args else None
        function = self._frame.node
        if name is None or not isinstance(function, cst.FunctionDef):
            return False
        key = f"self.{name}"
        return any(is_device_move(value) and not moves_to_cpu(value) and move_target(value) == key
                   for value in assigned_values(function, {key}))

    def _registers_once_built(self, call: cst.Call) -> bool:
        """`self.register_buffer(...)` in a method of a module that runs after it was built,
        maybe moved (`init_state(self, shape)`): the buffer takes the tensor's device, not the
        module's."""
        info, function = self.ctx.current_class, self.ctx.current_function
        if info is None or function is None or not info.is_module or not isinstance(call.func, cst.Attribute):
            return False
        params, name = parameter_names(function), function.name.value
        # (a reset or a state's maker, which run on the module in use: not a setter such as
        # `set_bounds(self, lo, hi)` that may run before the module is moved, nor forward's
        # lazy first registration)
        return bool(params) and isinstance(call.func.value, cst.Name) and call.func.value.value == params[0] \
            and not is_static_or_class_method(function) and info.runs_once_built(name) and remakes_state(name)

    def _device_is_used(self, depth: int) -> bool:
        """Is the `.device` read at `parent(depth - 1)` handed to a move (`x.to(p.device)`,
        `torch.zeros(n, device=p.device)`), not compared or printed?"""
        arg, call = self.ctx.parent(depth), self.ctx.parent(depth + 1)
        return isinstance(arg, cst.Arg) and isinstance(call, cst.Call) and (
            (arg.keyword is not None and arg.keyword.value == "device")
            or method_call(call, "to", "cuda") is not None)

    def _collecting_list(self, call: cst.Call, arg: cst.Arg, around: Optional[cst.CSTNode]) -> Optional[str]:
        """`tokens.append(t)` as a statement, where the code computes on the inputs and `tokens`
        is a local: the name of the list that now holds `t` (what it meets later decides)."""
        frame = self._frame
        if not (frame.sensitive or frame.helper) or not isinstance(around, cst.Expr) or arg.keyword is not None \
                or call.args[0] is not arg or len(call.args) != 1:
            return None
        receiver = method_call(call, "append")
        if not isinstance(receiver, cst.Name) or receiver.value not in self.ctx.function_scope().bindings:
            return None
        self._lists.add((id(frame.node), receiver.value))
        self._gathered.add((id(frame.node), receiver.value))
        return receiver.value

    def _optimizer_state_of(self, target: cst.BaseAssignTargetExpression) -> Optional[cst.Name]:
        """`p` when `target` is an entry of an optimizer's state for the parameter `p`:
        `self.state[p]["k"]`, or `state["k"]` after `state = self.state[p]` in this function."""
        if not isinstance(target, cst.Subscript) or len(target.slice) != 1 \
                or not isinstance(target.slice[0].slice, cst.Index):
            return None  # (any key: `state[f"accumulator_{i}"]`)
        holder = target.value
        if isinstance(holder, cst.Name) and isinstance(self._frame.node, cst.FunctionDef):
            holder = next((node.value for node in function_statements(self._frame.node)
                           if isinstance(node, cst.Assign) and len(node.targets) == 1
                           and isinstance(node.targets[0].target, cst.Name)
                           and node.targets[0].target.value == holder.value), None)
        if isinstance(holder, cst.Subscript) and dotted_name(holder.value) == "self.state" \
                and len(holder.slice) == 1 and isinstance(holder.slice[0].slice, cst.Index) \
                and isinstance(holder.slice[0].slice.value, cst.Name):
            return holder.slice[0].slice.value
        return None

    def _filling_a_dict(self, target: cst.BaseAssignTargetExpression) -> Optional[str]:
        """`x["spkr"] = t` in device-sensitive code or a module's method that runs once it is built
        (a vocoder's forward), with `x` a dict the function built: the name of the dict, which now
        holds `t` (what it meets later decides: `self.code_generator(x)`). (Not in a helper:
        timm's checkpoint filters fill CPU state dicts on purpose.)"""
        frame = self._frame
        if not (frame.sensitive or frame.module_runtime) or not isinstance(target, cst.Subscript) \
                or not isinstance(target.value, cst.Name) or len(target.slice) != 1 \
                or not isinstance(target.slice[0].slice, cst.Index) \
                or not isinstance(target.slice[0].slice.value, cst.SimpleString) \
                or not isinstance(frame.node, cst.FunctionDef):
            return None
        name = target.value.value
        # (a dict the function built, `x = {"code": code}`: not kornia's `params` of random draws,
        # handed in or made by a method, which stay on the CPU by design and only index)
        # (also annotated: `cube: dict[str, Tensor] = {}`)
        built = any(((isinstance(node, cst.Assign) and len(node.targets) == 1
                      and isinstance(node.targets[0].target, cst.Name) and node.targets[0].target.value == name)
                     or (isinstance(node, cst.AnnAssign) and isinstance(node.target, cst.Name)
                         and node.target.value == name and node.value is not None))
                    and (isinstance(node.value, cst.Dict) or (isinstance(node.value, cst.Call)
                                                             and dotted_name(node.value.func) == "dict"))
                    for node in function_statements(frame.node))
        if not built:
            return None
        self._dicts.add((id(frame.node), name))
        return name

    def _fate_of_a_batch(self, partner: Optional[cst.CSTNode], arg: Optional[cst.CSTNode] = None,
                         call: Optional[cst.CSTNode] = None) -> str:
        """A dict holding the CPU tensor (beside `partner`, a tensor on a device, if known), used
        where `arg` stands (the dict's name, where it is read): BAD where a network gets it
        (`self.encoder(**kwargs)`, `self.score_network(batch)`); else NEUTRAL."""
        if arg is None:
            arg, call = self.ctx.parent(1), self.ctx.parent(2)
        if not (isinstance(arg, cst.Arg) and isinstance(call, cst.Call) and call.func is not arg):
            return NEUTRAL  # (`kwargs["x"]`, `kwargs.update(...)`: the dict's own business)
        network = call.func
        if _LOSS_CALLEE_RE.search(last_identifier(network) or "") or self._parallel_wrapper(network) \
                or not (self.ctx.kinds.is_module(network) or names_a_model(network)
                        or self.ctx.origins.is_on_device(network)):
            return NEUTRAL  # (DataParallel scatters a dict's tensors to its devices itself)
        self._partner = partner
        return BAD

    def _fate_as_argument(self, call: cst.Call, arg: cst.Arg, around: Optional[cst.CSTNode]) -> Optional[str]:
        """The fate of a tensor passed to `call` (which stands in `around`); None when the
        call returns a tensor derived from it (`torch.cat`, `torch.stack`, `F.pad`) whose fate decides."""
        callee = last_identifier(call.func) or ""
        qualified = self.ctx.resolve(call.func)  # (asked once: this runs for every argument a factory meets)
        if arg.keyword is None and not arg.star and positional_args(call)[:1] == [arg] \
                and self.ctx.project_says(call.func, "moves_argument"):
            return MOVED  # `try_gpu(torch.zeros(3))`: a helper of the project that returns its argument moved
        if arg.keyword is None and not arg.star and positional_args(call)[:1] == [arg] \
                and self.ctx.project_says(call.func, "follows_argument"):
            return None  # `hat(torch.randn(3))`: what a helper of the project gives for it is where it is
        positional = positional_args(call)
        if qualified in _SIZES_READ_AS_NUMBERS and (arg in positional[1:] or (
                arg.keyword is not None and arg.keyword.value in _SIZES_READ_AS_NUMBERS[qualified])):
            # `F.pad(y, [diffX // 2, ...])` of `diffX = torch.tensor([a.size(3) - y.size(3)])`:
            # the amounts are read as Python numbers (an old U-Net's padding)
            return NEUTRAL
        if arg in positional:
            position = positional.index(arg)
            shared = self.ctx.project_says(call.func, "shares_devices")
            if shared and position in shared:
                # `radius_graph_pbc(r, n, pos, cell, torch.tensor([len(pos)]))`: the function computes
                # on this tensor and on another argument, an input here
                met = [positional[i].value for i in sorted(shared[position])
                       if i < len(positional) and self.ctx.origins.is_input_tensor(positional[i].value)]
                if met:
                    self._partner = met[0]
                    return BAD
        if callee == "register_buffer" and positional[1:2] == [arg] and self._registers_once_built(call) \
                and not self._buffer_moved_after(call):
            return BAD  # `self.register_buffer(name, torch.zeros(shape))` in a reset: a CPU buffer now
        if qualified in VARIABLE or (
                (qualified or "").startswith("torch.nn.init.") and positional_args(call)[:1] == [arg]):
            return None  # `Variable(t)` is t, and so is `nn.init.normal_(t)`, which fills t in place
        if qualified in ("torch.nn.Parameter", "torch.nn.parameter.Parameter") \
                and positional_args(call)[:1] == [arg] \
                and self.ctx.current_class is None and isinstance(around, cst.Assign) \
                and [type(t.target) for t in around.targets] == [cst.Name]:
            # `k = nn.Parameter(torch.ones(c, 1, 2, 2) / 4)` in a function: nothing registers it,
            # it is the same CPU tensor, used as `F.conv2d(x, k)` (old code's fixed kernels)
            return None
        if isinstance(call.func, cst.Attribute) and self._is_new_cpu_tensor(call.func.value):
            # `torch.Tensor(anchors).index_select(1, torch.LongTensor([0]))`: a method of another
            # CPU tensor made here; what it returns decides
            return None
        if qualified in _TRACERS and arg.keyword is None and not arg.star:
            # `torch.jit.trace(model, torch.zeros(1, 1, 28, 28))` of a moved model: the example
            # input runs through it
            model = positional_args(call)[:1]
            if model and model[0] is not arg and self.ctx.origins.is_on_device(model[0].value):
                self._partner = model[0].value
                return BAD
        if (positional[:1] == [arg] and self._model_where_it_sits(call.func) and not (
                isinstance(around, cst.Attribute) and around.attr.value in SIZE_ATTRIBUTES)
                and not self._only_sized(next((n for n in reversed(self.ctx.stack)
                                               if isinstance(n, cst.BaseSmallStatement)), None))) or (
                callee == "add_graph" and positional[1:2] == [arg]
            and self._model_where_it_sits(positional[0].value, surely_a_model=True)):
            # `model(torch.randn(1, 3, 224, 224))` of a model moved here or handed in (a summary,
            # a search for a layer, `writer.add_graph(model, dummy)`): the dummy input runs
            # through its layers, where their parameters are (its first input: not the lengths
            # of `encoder(x, torch.LongTensor(lengths))`, which packing wants on the CPU; nor a
            # probe of the output's size, `self.forward(torch.zeros(1, 3, h, w)).shape`, which
            # a model runs while it is built)
            self._partner = call.func if positional[:1] == [arg] else positional[0].value
            self._model_partners.add(id(self._partner))
            return BAD
        if _is_grad_outputs(qualified, call, arg):
            # `autograd.grad(d_out, x, torch.ones(n, 1))`: the seed gradient must be where the outputs are
            outputs = first_argument(call, "outputs")
            # (`outputs=[y[:, i].unsqueeze(-1)]`: a list of them)
            met = [o for o in (e.value for e in outputs.elements) if self.ctx.origins.is_input_tensor(o)] \
                if isinstance(outputs, (cst.List, cst.Tuple)) else \
                [outputs] if outputs is not None and self.ctx.origins.is_input_tensor(outputs) else []
            if met:
                self._partner = met[0]
                return BAD
        seeded = method_call(call, "backward")
        if seeded is not None and (arg.keyword is None or arg.keyword.value == "gradient") \
                and positional_args(call)[:1] in ([arg], []) and self.ctx.origins.is_on_device(seeded):
            # `out.backward(torch.tensor(g))` of an output on the device: the seed must be there too
            self._partner = seeded
            return BAD
        if arg.keyword is not None and arg.keyword.value == "out" and (qualified or "").startswith("torch."):
            return None  # `torch.arange(n, out=torch.LongTensor(n))`: the result is this tensor
        if ((callee in NEUTRAL_CALLEES and not (callee in ("max", "min") and is_tensor_op(qualified)))
                or callee in FACTORIES) and not (callee[:1].isupper() and root_name(call.func) == "self"):
            # (not a GAN's `self.Generator(z)`, a network, whatever torch's `Generator` is)
            return NEUTRAL  # (Python's `max(a, b)`; `torch.max(t, x - eps)` compares elementwise)
        if keyword(call, "device") is not None and (qualified or "").startswith("torch."):
            return MOVED  # `torch.sparse_csr_tensor(crow, col, values, device=device)` puts its parts there
        if callee[:1].isupper() and not isinstance(call.func, cst.Call) and not qualified \
                and root_name(call.func) != "self":
            # SomeLoss(weight=t): a constructor that usually registers t (not `Loss()(t)`, nor
            # `self.LSTM_outer(t)`, a part of the object)
            return NEUTRAL
        if method_call(call, *MOVERS, "new_tensor") is not None:
            return NEUTRAL  # y.to(t) / y.type_as(t): t only donates its device or dtype; x.new_tensor(t) copies it
        if _logs(call) and not is_tensor_op(qualified):
            # `draw_rectangle(image, boxes)`, `save_image(t, path)`, pytracking's
            # `self.visdom.register((losses, torch.arange(n)), 'lineplot')`: read on the host
            return NEUTRAL
        if arg.keyword is not None and arg.keyword.value == "out":
            # `scatter_mean(alpha, row, dim=0, out=torch.zeros(n, c))`: the output buffer of a
            # computation on tensors of the caller, which must be where they are
            met = [a.value for a in positional if self.ctx.origins.is_input_tensor(a.value)
                   or self.ctx.origins.is_on_device(a.value)]
            if met:
                self._partner = met[0]
                return BAD
            return NEUTRAL
        generator = keyword(call, "generator")
        if generator is not None and arg is not generator and arg in positional[:1] \
                and self._generator_on_a_device(generator.value):
            # `torch.normal(torch.zeros(n, d), generator=self._generator)` of a generator made
            # for a device: the mean is on the CPU (hypernet_morl's weight sampler)
            self._partner = generator.value
            return BAD
        if arg.keyword is not None and arg.keyword.value in ("generator", "dtype", "size"):
            return NEUTRAL
        if _names_lengths(arg) and (self.ctx.kinds.is_module(call.func) or self.ctx.origins.is_on_device(call.func)
                                    or _LOSS_CALLEE_RE.search(callee) or names_a_model(call.func)):
            # `model(x, input_lengths, y)`, `ctc_loss(lp, y, input_lengths, target_lengths)`: sequence
            # lengths go to `pack_padded_sequence`, which wants them on the CPU, or are read as sizes
            return NEUTRAL
        if self.ctx.origins.is_on_device(call.func) and not (
                self.ctx.current_function is not None and self._fresh_in_each_test(call.func, self.ctx.current_function)):
            return BAD  # a module already on the device gets a CPU input: net(torch.tensor([...]))
        # (`model(input_ids=ids, labels=torch.zeros(1, 1))` of a parameter named for a network: its
        # other inputs, on the device, say where it runs)
        if _LOSS_CALLEE_RE.search(callee) or self.ctx.kinds.is_module(call.func) or names_a_model(call.func) or (
                isinstance(call.func, cst.Attribute) and callee not in _CROSS_DEVICE_METHODS
                and self.ctx.origins.is_on_device(call.func.value)
                # (a moved storage's `rollouts.insert(obs, value, masks)` copies what it is given in)
                and not (_STORING_METHOD_RE.match(callee) and not self.ctx.kinds.is_tensor(call.func.value))):
            # (`model.rnn(out, hidden)` of a moved model: a part of it, or its method, computes
            # on what it is given)
            # `self.bce_loss(preds, torch.ones(n))` with `preds` on the device (or, in a helper, what
            # a network it keeps computed from its inputs: pix2pix's `disc_logits`): compared elementwise
            met = [a.value for a in call.args if a is not arg and (
                self.ctx.origins.is_on_device(a.value) or (
                    _LOSS_CALLEE_RE.search(callee) is not None and isinstance(a.value, cst.Name)
                    and a.value.value in self._frame.network_outputs and self.ctx.origins.is_input_tensor(a.value)))]
            if met:
                self._partner = met[0]
                return BAD
        if not self._frame.sensitive and self._feeds_a_sub_module(call):
            # a vocoder's `forward(self, code: List[int])` builds its input: the sub-module sits
            # where the module was moved
            return BAD
        if not self._frame.any_mix_is_a_bug and arg.keyword is None and not arg.star \
                and not _LOSS_CALLEE_RE.search(callee) \
                and (self.ctx.kinds.is_module(call.func) or names_a_model(call.func)) \
                and not self._parallel_wrapper(call.func):
            # `q = self.network(torch.FloatTensor(states))`: what the network gives is where the
            # network is; if that meets a tensor on a run-time device, the network or this input
            # was on the CPU (EquivariantDQN's replay update)
            self._via_network = True
            return None
        tensor_op = is_tensor_op(qualified)
        if not tensor_op and isinstance(call.func, cst.Attribute) and _STORING_METHOD_RE.match(callee) \
                and not self.ctx.kinds.is_tensor(call.func.value) and not self.ctx.kinds.is_stored_callable(call.func):
            return NEUTRAL  # a storage's `buffer.add_data(examples=x, labels=y)` keeps each where it stores it
        if tensor_op or self._frame.sensitive:
            # torch.cat([x, t]): mixing with a tensor on the model's device fails here
            others = [a.value for a in call.args if a is not arg]
            if isinstance(arg.value, (cst.List, cst.Tuple)):
                others.append(arg.value)  # torch.cat([t, x]): its neighbours in the list
            if isinstance(call.func, cst.Attribute):
                others.append(call.func.value)
            # what torch takes only as a tensor (`torch.cat`'s items) is one
            operands = {id(operand) for operand in (*tensor_operands(qualified, call),
                                                    input_tensor_operand(qualified, call))} if qualified else set()
            if qualified == "torch.equal":
                # `torch.equal(alpha, torch.ones(alpha.shape))`: a tensor the function was handed (not
                # whatever it computed, `state_dict[key]` of a checkpoint it read on the host)
                operands |= {id(a.value) for a in call.args if isinstance(a.value, cst.Name)
                             and a.value.value in self._frame.inputs}
            for other in others:
                elements = other.elements if isinstance(other, (cst.List, cst.Tuple)) else [other]
                values = [e.value if isinstance(e, (cst.Element, cst.StarredElement)) else e for e in elements]
                met = [value for value in values
                       if self.ctx.origins.is_input_tensor(value, proven=id(value) in operands)]
                if met:
                    self._partner = met[0]
                    self._joined = callee if tensor_op and callee in _JOINING_OPS else None
                    return BAD
        if tensor_op:
            return None
        receiver = call.func.value if isinstance(call.func, cst.Attribute) else None
        if receiver is not None and _index_argument(call, callee) is arg.value \
                and self.ctx.origins.is_on_device(receiver):
            # q.gather(1, torch.tensor(actions)): the index must be where q is, and
            # `gather` shows that q is a tensor
            self._partner = receiver
            return BAD
        if receiver is not None and callee not in _CROSS_DEVICE_METHODS and self.ctx.kinds.is_tensor(receiver) \
                and self.ctx.origins.is_input_tensor(receiver):
            # x.index_select(0, torch.arange(n)), x.masked_fill(mask, v): a method of a tensor
            # on the model's device takes its tensor arguments on that device
            self._partner = receiver
            return BAD
        if self._frame.any_mix_is_a_bug and (qualified or "").startswith("torch.") and not any(
                self.ctx.origins.is_input_tensor(other.value) for other in call.args if other is not arg):
            return None  # `torch._sample_dirichlet(torch.tensor([a, a]))`: computed where it is, then followed
        if self._frame.any_mix_is_a_bug and self._own_method_given_no_input(call, arg):
            # `self.calculate_iou(gt_box, anchor_shapes)` of two CPU tensors made here: the helper
            # computes on what it is given, where it is
            return NEUTRAL
        if self._frame.any_mix_is_a_bug and not tensor_op and self._beside_a_sub_module(call, arg):
            # `prune_linear_layer(self.query, index)`: a function handed a layer and a tensor
            # may well put the tensor where the layer is (transformers' does); unknown, so silent
            return NEUTRAL
        # (an object told its device hands its CPU tensors to helpers on purpose too: ultralytics'
        # validator merges JSON boxes with `torch.tensor(bbox)`; only a mix with its tensors counts)
        return BAD if self._frame.any_mix_is_a_bug else NEUTRAL

    def _beside_a_sub_module(self, call: cst.Call, arg: cst.Arg) -> bool:
        """Is another argument of `call` a sub-module the class keeps (`self.query`), or a part
        of it that the call's result replaces (`self.attention.query = prune(self.attention.query, i)`)?"""
        info = self.ctx.current_class
        if info is None or not info.is_module:
            return False
        stack = self.ctx.stack
        where = next((i for i in range(len(stack) - 1, 0, -1) if stack[i] is call), None)
        statement = stack[where - 1] if where is not None else None
        rewired = statement.targets[0].target if isinstance(statement, cst.Assign) and len(statement.targets) == 1 \
            and statement.value is call else None
        for other in call.args:
            if other is arg:
                continue
            attribute = self.ctx.kinds.self_attribute(other.value)
            if attribute is not None and info.holds_a_module(attribute[1]):
                return True
            if rewired is not None and root_name(other.value) == "self" and isinstance(other.value, cst.Attribute) \
                    and other.value.deep_equals(rewired) and not self.ctx.kinds.is_tensor(other.value):
                return True
        return False

    def _model_where_it_sits(self, func: cst.CSTNode, surely_a_model: bool = False) -> bool:
        """A network whose parameters are on a device the code here does not choose: moved here
        to a run-time device, handed in (a parameter of the function known to be a module,
        `def summary(model):` ... `model.eval()`, or kept from one, `self._model = model`), or the
        module itself run in a method that is not its construction (`self.forward(x)`, `self(x)`).
        `surely_a_model`: the API says it is one (`writer.add_graph(model, x)`)."""
        kinds, function = self.ctx.kinds, self.ctx.current_function
        if function is None or self._frame.copies_input_to_host or not isinstance(func, (cst.Name, cst.Attribute)):
            return False
        if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value == "self" \
                and func.attr.value in ("forward", "__call__"):
            info = self.ctx.current_class
            return info is not None and info.is_module and function.name.value != "__init__"
        if self._parallel_wrapper(func) or kinds.kind_of(func) not in (MODULE, None):
            return False
        if self._fresh_in_each_test(func, function):
            return False
        a_model = surely_a_model or kinds.is_known_module(func)
        if a_model and self.ctx.origins.is_on_device(func):
            return True
        # (not a test's: pytest hands it a fixture, a model of the test's own making)
        handed_in = None if self.ctx.in_test_file or function.name.value.startswith("test") \
            else _handed_in_here(function, func)
        # (not one whose results the function reads with `.numpy()` and no `.cpu()`: it runs the
        # model on the CPU, face.evoLVe's `run_first_stage`)
        return handed_in is not None and not _reads_arrays_on_the_host(function) and (a_model or names_a_model(func)) and not _moved_to_cpu_in(function, handed_in)

    def _fresh_in_each_test(self, func: cst.CSTNode, function: cst.FunctionDef) -> bool:
        """`self.model` in a test method of a `unittest.TestCase`, which runs each test on a new
        instance: another test's `self.model.cuda()` moved another instance's model
        (PyTorch-VAE's tests, blind sample of set 29). Unless this test or `setUp` moves it."""
        info, key = self.ctx.current_class, self_attribute_key(func)
        if info is None or key is None or not function.name.value.startswith("test") \
                or not any((last_identifier(base.value) or "").endswith("TestCase") for base in info.node.bases):
            return False
        placing = [function] + [m for m in info.node.body.body
                                if isinstance(m, cst.FunctionDef) and m.name.value in ("setUp", "setup_method")]
        return not any((isinstance(node, cst.Call) and move_target(node) == key) or (
            isinstance(node, cst.Assign) and is_device_move(node.value) and not moves_to_cpu(node.value)
            and any(dotted_name(t.target) == key for t in node.targets))  # `self.model = Net().cuda()`
            for method in placing for node in descendants(method))

    def _own_method_given_no_input(self, call: cst.Call, arg: cst.Arg) -> bool:
        """`self.<method>(...)` of a method the class (or a base in the file) defines, none of
        whose other arguments is an input's tensor or one on a device."""
        info, func = self.ctx.current_class, call.func
        if info is None or not isinstance(func, cst.Attribute) or not isinstance(func.value, cst.Name) \
                or func.value.value != "self":
            return False
        method = next((statement for cls in info.lineage() for statement in cls.node.body.body
                       if isinstance(statement, cst.FunctionDef) and statement.name.value == func.attr.value), None)
        # (a helper that reads the object's state, `icdf(self, q)` of a distribution's parameters,
        # computes with tensors where those are)
        methods = {statement.name.value for cls in info.lineage() for statement in cls.node.body.body
                   if isinstance(statement, cst.FunctionDef)}
        return method is not None and not _reads_own_state(method, methods) and not any(
            self.ctx.origins.is_input_tensor(other.value) for other in call.args if other is not arg)

    # ------------------------------------------------------------ value kinds

    def _has_device(self, call: cst.Call) -> bool:
        """device= given, maybe through **kwargs, or a `with torch.device(d):` block around it;
        or `out=` (`torch.arange(n, out=buf)` writes into `buf`, on `buf`'s device)."""
        return keyword(call, "device") is not None or keyword(call, "out") is not None or has_star_kwargs(call) \
            or self.ctx.origins.in_device_block

    def _is_known_tensor(self, node: cst.CSTNode) -> bool:
        """A tensor operand that is certainly a tensor, not just a parameter of forward
        that may hold one (`.view(h, 1)` of a size `h`)."""
        return self.ctx.origins.is_on_device(node) or (self.ctx.origins.is_input_tensor(node) and self.ctx.kinds.is_tensor(node))

    def _is_load(self, node: cst.CSTNode) -> bool:
        parent = self.ctx.parent()
        if isinstance(parent, (cst.Attribute, cst.Arg, cst.AugAssign, cst.AnnAssign)):
            return parent.value is node
        if isinstance(parent, (cst.For, cst.CompFor)):
            return parent.iter is node
        if isinstance(parent, cst.WithItem):
            return parent.item is node
        return not isinstance(parent, (cst.AssignTarget, cst.Param, cst.FunctionDef, cst.ClassDef,
                                       cst.ImportAlias, cst.AsName, cst.NameItem, cst.Decorator))

    # ------------------------------------------------------------ reporting

    def _report(self, call: cst.Call, partner: Optional[cst.CSTNode] = None,
                returned_at: Optional[Tuple[str, Optional[int]]] = None) -> None:
        if id(call) in self._reported:
            return  # (`a, b = torch.ones(n), torch.zeros(n)`: b meets what a meets, and its own partner)
        if returned_at is None:  # (one judged where its function's result is used may still meet the device here)
            self._reported.add(id(call))
        name = dotted_name(call.func) or "torch.factory"
        factory = self._factory_name(call) or ""
        if id(call) in self._defaults:
            # (made once, where the function is defined: no input's device exists there)
            found, device = None, self._remedy_device(call, partner, None)[0]
            remedy = f"default the parameter to None and make the tensor in the body with device={device or '<tensor>.device'}"
        else:
            found = self._device_for_fix(call, partner)
            remedy = self._remedy(factory, call, partner, found)
            if returned_at is not None and not self._classes and found is None:
                # (`get_noise(shape)` of the module, whose caller combines it with a device tensor)
                remedy = f"give {returned_at[0]}() a device parameter and pass device=device (a caller " \
                         f"combines what it returns with a tensor on a device)"
        message = self.message.format(call=name, remedy=remedy)
        fix = None
        if found and id(call) not in self._cached_once:
            fix = Fix().replace(call, cst.Call(func=cst.Attribute(value=call, attr=cst.Name("to")),
                                               args=[cst.Arg(cst.parse_expression(found[0]))])) \
                if factory in LEGACY_TENSOR_TYPES else Fix().add_keyword(call, "device", found[0])
        frame = self._frame
        if frame.copies_input_to_host and not frame.any_mix_is_a_bug:
            return  # CPU work on purpose
        if self._host_side_name(call):
            return  # `scores = torch.tensor([])` where another arm binds `scores = torch.stack(s).cpu()`
        project = self.ctx.project
        if project is not None and project.default_device_set_in_project():
            return  # another file of the project makes every factory's tensor on its device
        if returned_at is not None:  # reported if the class's methods combine it with a device tensor
            judge = self._classes[-1] if self._classes else self._module_functions
            judge.returned.setdefault(returned_at, []).append((call, message, fix))
        elif frame.method_name is not None and self._classes and not frame.told_device:
            self._classes[-1].findings.append((frame.method_name, call, message, fix))
        elif not frame.any_mix_is_a_bug and isinstance(frame.node, cst.FunctionDef):
            # (an object told its device is there from the start, `__init__` included; a
            # method that takes its results to the host works there on purpose)
            self._deferred.setdefault(id(frame.node), []).append((call, message, fix))
        else:
            self.report(call, message, fix=fix)

    def _only_sized(self, statement: Optional[cst.CSTNode]) -> bool:
        """`output = module(x)` (also through torch ops: `flat = torch.flatten(cnn(x), 1)`) whose
        name the function then reads only for its size (`return output.size(-1)`): a probe of a
        network's output size (torchrec, Pearl)."""
        function = self._frame.node
        if not (isinstance(statement, cst.Assign) and len(statement.targets) == 1
                and isinstance(statement.targets[0].target, cst.Name) and isinstance(function, cst.FunctionDef)):
            return False
        name = statement.targets[0].target.value
        sized = read = 0
        for node in descendants(function.body):
            if isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name) and node.value.value == name:
                sized += node.attr.value in SIZE_ATTRIBUTES
            elif isinstance(node, cst.Name) and node.value == name:
                read += 1
        # (each sized read is also a read of the name; one more read is the binding itself)
        return sized > 0 and read == sized + 1

    def _host_side_name(self, call: cst.Call) -> bool:
        """Is `call` bound to a name (`scores = torch.tensor([])`) that the function elsewhere
        binds to a move to the CPU (`scores = torch.stack(scores).cpu()`)? Then the CPU is where
        the code wants that value (Pointcept's instance results, returned on the host)."""
        stack = self._stacks.get(id(call)) or ()
        statement = stack[-2] if len(stack) > 1 else None
        function = self._frame.node
        if not (isinstance(statement, cst.Assign) and statement.value is call and len(statement.targets) == 1
                and isinstance(statement.targets[0].target, cst.Name) and isinstance(function, cst.FunctionDef)):
            return False
        name = statement.targets[0].target.value
        to_host = [node for node in function_statements(function)
                   if isinstance(node, cst.Assign) and node is not statement and moves_to_cpu(node.value)
                   and any(isinstance(t.target, cst.Name) and t.target.value == name for t in node.targets)]
        if not to_host:
            return False
        # (on another arm of an `if`: not `host = x.cpu()` then `host = torch.tensor([...])`)
        for node in descendants(function.body):
            if isinstance(node, cst.If) and isinstance(node.orelse, (cst.Else, cst.If)):
                body, orelse = set(map(id, descendants(node.body))), set(map(id, descendants(node.orelse)))
                if any((id(statement) in body and id(other) in orelse) or (id(statement) in orelse and id(other) in body)
                       for other in to_host):
                    return True
        return False

    def _device_for_fix(self, call: cst.Call, partner: Optional[cst.CSTNode]) -> Optional[Tuple[str, bool]]:
        """The device `fix` gives the factory (`base.device_for_fix`, which asks the
        model): `x.device` of the tensor parameter the new tensor meets; in forward or a
        loss the first tensor parameter's device (the input, which is on the model's
        device); in a method of a module with parameters their device; a device
        variable in scope where the factory stands. Parameters exist wherever the
        factory stands in the function, a local may be bound after it; a tensor
        parameter of a plain function is not known to be on the model's device. No
        device is added: None when none is known."""
        frame = self._frame
        met = self._tensor_parameter_in(partner) if partner is not None else None
        if met is not None and "." not in met and not frame.returns_to_caller \
                and isinstance(frame.node, cst.FunctionDef) and not is_tensor_parameter(self.ctx, frame.node, met):
            met = None  # (not `in_w` of `scale / in_w` in a helper method: a size, whatever forward's inputs are)
        inputs = [p for p in frame.params if p in frame.inputs and not _NOT_A_TENSOR_RE.search(p)]
        # (an object told its device: the remedy names that device, as people fixed it by hand)
        return device_for_fix(self.ctx, call, stack=self._stacks.get(id(call)), met=met,
                              inputs=inputs if frame.any_mix_is_a_bug else (), add=False,
                              tensor_parameters=False)

    def _tensor_parameter_in(self, node: cst.CSTNode) -> Optional[str]:
        """The first tensor parameter read in `node` (`x` in `x`, `x > 0`, `(pred == x).sum()`)."""
        frame = self._frame
        if isinstance(node, cst.Name):
            usable = node.value in frame.inputs and node.value not in frame.new_tensors \
                and not defaults_to_none(frame.node, node.value)  # `mask=None` may not be there
            return node.value if usable else None
        if isinstance(node, cst.Attribute):
            found = self._tensor_parameter_in(node.value)
            if found is not None and isinstance(node.value, cst.Name) and not self.ctx.kinds.is_tensor(node.value) \
                    and node.attr.value not in SAME_TENSOR_ATTRIBUTES and node.attr.value not in TO_PYTHON:
                return f"{found}.{node.attr.value}"  # `state.features` of an observation: the tensor is its part
            return found
        if isinstance(node, (cst.Lambda, cst.ListComp, cst.GeneratorExp, cst.SetComp, cst.DictComp)):
            return None  # names there may be the comprehension's own
        if method_call(node, *MOVERS) is not None:
            return None  # `labels.to(device)`: labels itself is elsewhere
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute):
            # `x.sum()`: what the method is called on (`x`, not a part named `sum`)
            found = self._tensor_parameter_in(node.func.value)
            if found is not None:
                return found
            node = node.with_changes(func=cst.Name("_"))
        for child in children(node):
            if isinstance(child, cst.Arg):
                child = child.value
            found = self._tensor_parameter_in(child)
            if found is not None:
                return found
        return None

    def _remedy(self, factory: str, call: cst.Call, partner: Optional[cst.CSTNode] = None,
                found: Optional[Tuple[str, bool]] = None) -> str:
        """Name a device-aware value that is in scope: the one `fix` writes when it
        knows one (the message and the fix agree), else the likeliest."""
        device, twin_of = self._remedy_device(call, partner, found)
        if factory in LEGACY_TENSOR_TYPES:  # (they take no CUDA device)
            return f"move it: .to({device or '<tensor>.device'})"
        twin = f" or use {twin_of}.new_{factory}(...)" if twin_of and factory in NEW_TWINS else ""
        return f"pass device={device}{twin}" if device else \
            "pass device=<tensor>.device of a tensor already on the right device"

    def _remedy_device(self, call: cst.Call, partner: Optional[cst.CSTNode],
                       found: Optional[Tuple[str, bool]]) -> Tuple[Optional[str], Optional[str]]:
        """The device the remedy names, and the tensor whose `new_*` twin would do."""
        frame = self._frame
        if found is not None:
            # `x.new_ones(...)` only for a tensor parameter's device, not `self.device` or `args.device`
            tensor = found[0][:-len(".device")] if found[0].endswith(".device") else ""
            usable = tensor in frame.inputs and tensor != "self" and not _NOT_A_TENSOR_RE.search(tensor)
            return found[0], tensor if usable else None
        if frame.device_names:
            return frame.device_names[-1], None
        if isinstance(partner, (cst.Name, cst.Attribute)) and id(partner) in self._model_partners:
            # a network's input goes where its parameters are (`self.forward` is the module's)
            model = "self" if isinstance(partner, cst.Attribute) and partner.attr.value in ("forward", "__call__") \
                else dotted_name(partner)
            return f"next({model}.parameters()).device", None
        attribute = self._device_attribute_in(partner)
        if attribute is not None:
            return f"{attribute}.device", None  # `self.loc` of a distribution, `self.weight`
        # The first parameter that can be a tensor: not `model`, `args`, `loader`, ..., nor one
        # the code around says is None here (`if position is None: position = torch.arange(n)`)
        absent = self._none_at(self._stacks.get(id(call)))
        tensors = [p for p in frame.params if p in frame.inputs and not _NOT_A_TENSOR_RE.search(p) and p not in absent]
        # the tensor it meets first (`X` of `X * torch.rand(n)`, not a module `D` listed before it)
        root = tensor_expression_root(partner, self.ctx.resolve) if partner is not None else None
        # (a local the tensor meets later, bound after the factory, is no device for it)
        # (forward's and a loss's inputs are tensors on the model's device; elsewhere only a
        # parameter the function shows to be a tensor: not `height` of a module's
        # `make_grid(self, height, width)`, an int)
        shown = tensors if frame.returns_to_caller else [
            p for p in tensors if isinstance(frame.node, cst.FunctionDef) and is_tensor_parameter(self.ctx, frame.node, p)]
        if root is not None and (root.value in shown or (self.ctx.origins.is_on_device(root)
                                                         and root.value in self._bound_before.get(id(call), ()))):
            return f"{root.value}.device", root.value
        # else only a parameter the code shows to be a tensor (not pytest's `tmp_path`, a
        # hypothesis-drawn `seq_len`)
        return (f"{shown[0]}.device", shown[0]) if shown else (None, None)

    def _none_at(self, stack: Optional[Sequence[cst.CSTNode]]) -> Set[str]:
        """The names the `if` arms around the factory (`stack`, where it stands) say are None:
        the body of `if x is None:` or `if not x:`, the `else` of `if x is not None:`."""
        found: Set[str] = set()
        for _, test, in_body in self.ctx.enclosing_tests(stack):
            flag = flag_test(test)
            if in_body and flag is not None and flag[1] is False and "." not in flag[0]:
                found.add(flag[0])  # `if not x:` (and `if not not not x:`)
            elif isinstance(test, cst.Comparison) and len(test.comparisons) == 1 and isinstance(test.left, cst.Name) \
                    and isinstance(test.comparisons[0].comparator, cst.Name) \
                    and test.comparisons[0].comparator.value == "None":
                operator = test.comparisons[0].operator
                if (isinstance(operator, cst.Is) and in_body) or (isinstance(operator, cst.IsNot) and not in_body):
                    found.add(test.left.value)
        return found


# Functions that draw, show or write what they are given: they read it on the host.
# Names of sequence lengths: `lengths`, `input_lengths`, `src_lens`, `seq_len`.
_LENGTHS_RE = re.compile(r"(?:^|_)(?:lengths?|lens|seq_?lens?)$", re.I)


def _statements_in_order(block: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """The small statements under `block` in the order they run, not those of nested
    functions or classes."""
    for child in children(block):
        if isinstance(child, (cst.FunctionDef, cst.ClassDef, cst.BaseExpression)):
            continue
        if isinstance(child, cst.BaseSmallStatement):
            yield child
        else:
            yield from _statements_in_order(child)


def _chain_root_call(value: cst.BaseExpression) -> Optional[cst.Call]:
    """The call at the root of `torch.FloatTensor(v).unsqueeze(0).float()`, through methods
    that keep the tensor where it is (not a move)."""
    while isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) \
            and isinstance(value.func.value, cst.Call) and value.func.attr.value not in MOVERS \
            and value.func.attr.value not in TO_PYTHON:
        value = value.func.value
    return value if isinstance(value, cst.Call) else None


def _one_dimensional(factory: cst.Call) -> bool:
    """`torch.tensor([0.1, 0.3])` of a flat list of numbers, `torch.arange(n)`, `torch.linspace(a, b, n)`:
    a vector, whose item is one number."""
    name = last_identifier(factory.func) or ""
    if name in ("arange", "linspace", "logspace", "randperm"):
        return True
    args = positional_args(factory)
    if name in ("rand", "randn", "zeros", "ones", "empty") and len(args) == 1 \
            and isinstance(args[0].value, cst.Integer) and keyword(factory, "size") is None:
        return True  # `torch.rand(1)`: one literal length
    return name in ("tensor", "Tensor", "FloatTensor", "LongTensor", "as_tensor") and bool(args) \
        and isinstance(args[0].value, (cst.List, cst.Tuple)) and bool(args[0].value.elements) \
        and all(number_value(e.value) is not None for e in args[0].value.elements)


def _reads_self_attribute(function: cst.FunctionDef, name: str) -> bool:
    """Does `function` read `self.<name>` (not only assign it: `x, self.h = self.rnn(x)`)?"""
    stored: Set[int] = set()
    for node in descendants(function):
        if isinstance(node, cst.Assign):  # (visited before its targets)
            for target in node.targets:
                elements = target.target.elements if isinstance(target.target, (cst.Tuple, cst.List)) else ()
                stored.update(id(e.value) for e in elements)
                stored.add(id(target.target))
        elif isinstance(node, cst.Attribute) and node.attr.value == name and id(node) not in stored \
                and isinstance(node.value, cst.Name) and node.value.value == "self":
            return True
    return False


# Wrappers a loop iterates through that hand out the items they are given.
_ITEM_WRAPPERS = LOOP_WRAPPERS | {"reversed", "list"}


def _iterated_by_a_loop(node: cst.CSTNode, parent: Optional[cst.CSTNode], grandparent: Optional[cst.CSTNode],
                        above: Optional[cst.CSTNode]) -> bool:
    """`for t in node:`, `for t in tqdm(node, desc=...)`, `[f(t) for t in node]`: a loop takes its items."""
    if isinstance(parent, (cst.For, cst.CompFor)):
        return parent.iter is node
    return isinstance(parent, cst.Arg) and parent.keyword is None and parent.value is node \
        and isinstance(grandparent, cst.Call) and positional_args(grandparent)[:1] == [parent] \
        and (last_identifier(grandparent.func) or "") in _ITEM_WRAPPERS \
        and isinstance(above, (cst.For, cst.CompFor)) and above.iter is grandparent


def _one_plain_index(subscript: cst.Subscript) -> bool:
    """`v[j]`, `v[0]`: one index, no slice, `None`, mask or tuple."""
    elements = subscript.slice
    return len(elements) == 1 and isinstance(elements[0].slice, cst.Index) \
        and isinstance(elements[0].slice.value, (cst.Name, cst.Integer, cst.UnaryOperation)) \
        and not (isinstance(elements[0].slice.value, cst.Name) and elements[0].slice.value.value == "None")


def _picks_an_element(subscript: cst.Subscript) -> bool:
    """`table[i, 0]`, `table[a, b]`: two or more plain indexes, no slice, `None` or mask (a
    table's element, 0-dim; one index alone may pick a row)."""
    elements = subscript.slice
    return len(elements) >= 2 and all(
        isinstance(e.slice, cst.Index) and not isinstance(e.slice.value, (cst.Comparison, cst.Ellipsis))
        and not (isinstance(e.slice.value, cst.Name) and e.slice.value.value == "None") for e in elements)


def _names_lengths(arg: cst.Arg) -> bool:
    """Is `arg` a name (or keyword) of sequence lengths?"""
    if arg.keyword is not None and _LENGTHS_RE.search(arg.keyword.value):
        return True
    return isinstance(arg.value, cst.Name) and _LENGTHS_RE.search(arg.value.value) is not None


def _logs(call: cst.Call) -> bool:
    """A call that draws, saves or logs what it is given on the host: `save_image(t, path)`,
    `self.visdom.register((losses, steps), 'lineplot')`, `writer.add_scalar(...)`."""
    return _HOST_SINK_RE.search(last_identifier(call.func) or "") is not None or (
        isinstance(call.func, cst.Attribute) and _LOGGER_RE.search(last_identifier(call.func.value) or "") is not None)


# Objects that log or plot what they are given (`self.visdom`, `writer`, `self.logger`, `wandb`).
_LOGGER_RE = re.compile(r"^_*(visdom|vis|viz|writer|summary_writer|tb_writer|tb|logger|wandb|tensorboard)$", re.I)
_HOST_SINK_RE = re.compile(r"^_*(draw|plot|show|imshow|save|visuali[sz]e|render|print|write)(_|$)", re.I)
# Methods that give a tensor dimensions: a 0-dim CPU tensor is one no more.
_DIMENSION_METHODS = frozenset({"unsqueeze", "unsqueeze_", "view", "reshape", "expand", "repeat", "flatten",
                                "expand_as", "view_as", "reshape_as", "tile", "unflatten", "atleast_1d"})
# torch ops that join their tensors into one: an empty one on the CPU among them fails too.
_JOINING_OPS = frozenset({"cat", "concat", "concatenate", "stack", "hstack", "vstack", "dstack", "column_stack",
                          "row_stack"})
# Methods of a storage object (a rollout buffer, a replay memory) that copy what they are given.
_STORING_METHODS = frozenset({"insert", "append", "push", "put", "store", "extend", "record", "add"})
# ... also with what they store: `buffer.add_data(examples=x, labels=y)`, `memory.push_transition(...)`
_STORING_METHOD_RE = re.compile(r"^(?:" + "|".join(sorted(_STORING_METHODS)) + r")(?:_|$)")


# Calls with an argument that seeds the gradient of their first (the outputs): its position, its keyword.
_GRADIENT_SEEDS = {"torch.autograd.grad": (2, "grad_outputs"), "torch.autograd.backward": (1, "grad_tensors")}


# Tensor methods whose index or mask argument (at this position) must be a tensor on the
# receiver's device: `t.scatter_(dim, index, src)`, `t.masked_fill(mask, value)`.
_INDEX_ARGUMENT = {**{name: (1, "index") for name in (
    "scatter", "scatter_", "scatter_add", "scatter_add_", "scatter_reduce", "scatter_reduce_", "gather",
    "index_select", "index_add", "index_add_", "index_copy", "index_copy_", "index_fill", "index_fill_")},
    **{name: (0, "mask") for name in ("masked_fill", "masked_fill_", "masked_scatter", "masked_scatter_",
                                      "masked_select")}}


# Methods of a module that callers outside the class run on their inputs, as they run forward.
_ENTRY_POINT_RE = re.compile(r"(?:^|_)(?:predict|infer|inference|generate|sample|decode|encode|act|score)(?:_|$)")


def _reads_own_state(method: cst.FunctionDef, methods: AbstractSet[str]) -> bool:
    """Does the method read an attribute of its object (`self.bin_edges`), other than one of
    its `methods`? (The fast path's stub of a method that does reads `self.__dict__`: see
    `engine._stub_unmatched_functions`.)"""
    params = parameter_names(method)
    return bool(params) and any(
        isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name) and node.value.value == params[0]
        and node.attr.value not in methods for node in descendants(method.body))


def _is_record(call: cst.Call) -> bool:
    """`Output(logits, state)`: a class called by its own name (a namedtuple, a dataclass),
    not a method of an object (`self.Head(x)`) nor a call's result."""
    return isinstance(call.func, cst.Name) and call.func.value[:1].isupper()


# Functions that run a module on example inputs: `torch.jit.trace(model, example)`.
_TRACERS = frozenset({"torch.jit.trace", "torch.onnx.export", "torch.export.export"})


# Tensor methods whose source argument (position, keyword) must be a tensor: `scatter_add_(dim,
# index, src)`, `index_add_(dim, index, source)`, `masked_scatter_(mask, source)`.
_SOURCE_ARGUMENT = {**{name: (2, "src") for name in ("scatter_add", "scatter_add_")},
                    **{name: (2, "source") for name in ("index_add", "index_add_", "index_copy", "index_copy_")},
                    **{name: (1, "source") for name in ("masked_scatter", "masked_scatter_")}}


def _source_argument(call: cst.Call, method: str) -> Optional[cst.BaseExpression]:
    """The source tensor handed to the tensor method `method` called by `call`."""
    return _argument_at(call, _SOURCE_ARGUMENT.get(method))


def _index_argument(call: cst.Call, method: str) -> Optional[cst.BaseExpression]:
    """The index (or mask) tensor handed to the tensor method `method` called by `call`."""
    return _argument_at(call, _INDEX_ARGUMENT.get(method))


def _argument_at(call: cst.Call, where: Optional[Tuple[int, str]]) -> Optional[cst.BaseExpression]:
    """The argument given at (position, keyword) `where`, if any."""
    if where is None:
        return None
    position, name = where
    given = keyword(call, name)
    if given is not None:
        return given.value
    args = positional_args(call)
    return args[position].value if len(args) > position and not args[position].star else None


def _is_grad_outputs(qualified: Optional[str], call: cst.Call, arg: cst.Arg) -> bool:
    """Is `arg` the seed gradient of `torch.autograd.grad(outputs, inputs, grad_outputs)`?"""
    seed = _GRADIENT_SEEDS.get(qualified or "")
    if seed is None:
        return False
    if arg.keyword is not None:
        return arg.keyword.value == seed[1]
    positional = positional_args(call)
    return arg in positional and positional.index(arg) == seed[0]


# `self.x = arg.norm(2, dim=1)`, `self.m = arg.float().unsqueeze(0)`: an attribute computed from a name
# with a method only tensors have (the file and class triggers of TDV202; the tree decides)
_DERIVED_ARGUMENT = (r"\bself\.\w+\s*=\s*\w+(?:\.\w+)?(?:\.\w+\([^()]*\))*\.(?:"
                     + "|".join(sorted(TENSOR_ONLY_METHODS - NOT_TENSOR_METHODS)) + r")\(")
# `F.nll_loss(..., weight=self.weight)`, `torch.einsum("hi,bij->bhj", self.gso, x)`: what the
# class keeps there is a tensor
# (written so that no part scans back and forth: it runs over the text of every class)
_SEQUENCE_NAMES = ("cat", "concat", "concatenate", "stack", "hstack", "vstack", "dstack")
_TENSOR_USE = (r"\b(?:pos_)?weight\s*=\s*self\.\w"
               r"|\b(?:" + "|".join(sorted(TENSOR_OPERAND_NAMES - {"einsum", *_SEQUENCE_NAMES})) + r")\(\s*self\.\w"
               r"|\b(?:mm|bmm|matmul)\([^(),]*,\s*self\.\w"
               r"|\b(?:" + "|".join(_SEQUENCE_NAMES) + r")\(\s*[\[(][^\])]*\bself\.\w"
               r"|\beinsum\([^()]*\bself\.\w")


class UnregisteredTensorAttribute(Rule):
    """A tensor stored on an `nn.Module` as a plain attribute, not a buffer or parameter.

    ## What it does
    Reports `self.<name> = <tensor>` in a method of an `nn.Module` subclass (found
    through its base classes, also those defined earlier in the file, `nn.Module`,
    `nn.Sequential`, `pl.LightningModule`, transformers' `RobertaPreTrainedModel`,
    diffusers' `ModelMixin`, a torchmetrics `Metric`, gpytorch, pyro, torchvision and
    timm models, a generic base written `Operator[Tensor]`, ...; of a base the linter cannot
    see, nuplan's `TorchModuleWrapper`, when the class defines `forward` and builds a
    torch.nn layer on `self` in `__init__`) when `<name>` is neither a registered
    buffer nor a parameter and the tensor is:
    - made in `__init__` or a method of the class that `__init__` calls on `self`
      (`self._init_tables()`), whatever `device=` it was made with: `device=device` or
      `.to(device)` while the module is built puts it there once, and a later
      `module.to(...)` leaves it behind; also what such a method returns
      (`self.t = self._build(n)` where `_build` returns `torch.arange(n)`), what is
      computed there from such an attribute (`self.batch = self.grid.repeat(b, 1, 1)`,
      also by a method of the class: `self.alpha_bar = self._cumulate(self.alpha)` where
      `_cumulate` returns `torch.cumprod(alpha, dim=0)`),
      and a tensor argument of `__init__` kept as it is (`self.bounds = bounds` for
      `bounds: Optional[Tensor]`, `Tensor | None`: the caller's tensor stays where it was; not
      `Union[Parameter, Tensor]`, which may register itself), computed by arithmetic
      (`self.mask = (groups > 0) + 0.0` for `groups: Tensor`) or by its methods (`self.radii = r.norm(2, dim=1)`, where a method only tensors have
      shows `r` is one) or by torch's ops (`self.L = torch.linalg.cholesky(cov)`), a copy
      of a parameter (`self.prev = torch.zeros_like(self.weight)`), a module's parameters
      joined into one new tensor (`torch.cat([p.flatten() for p in self.net.parameters()])`,
      torchdyn's), what an attribute
      annotated as a tensor is given from an object the caller handed in
      (`self.alphas_hat: torch.FloatTensor = self.scheduler.get_alpha_hat()`), a part of a made
      tensor (`U, _, _ = torch.randn(n, n).svd()`), a default (`thresholds or
      torch.linspace(0, 1, 51)`), a tensor placed there (`self.mask =
      self._mask(n).to("cuda")`), or an argument the class hands to torch where only a tensor
      goes (`self.weight = weight` read as `F.nll_loss(y, t, weight=self.weight)`,
      `self.gso = gso` read as `torch.einsum("hi,btij->bthj", self.gso, x)`);
    - made on a fixed device in any other method (no `device=`, or `.cuda()`), such as
      caches set in `forward` (`if self.mask is None: self.mask = torch.triu(torch.ones(n, n))`,
      or `self.mask = self._make_mask(n)` where `_make_mask` makes it without a device);
      methods only named like builders (`_build_anchors`) count here too, and a
      builder-named method that takes data and that no `__init__` calls
      (`build_P_prime(self, batch_C_prime)`) reads at run time;
    - a public attribute made while the module is built that the class itself never
      reads (`self.centers = torch.zeros(n, d)`, also one `__init__` fills element by
      element, `self.table[g, i] = v`): its users read it (`model.centers`), after the model
      was moved;
    - a cache that an override of `train(self, mode)` sets for eval from the module's
      tensors (`self.ab = self.attention_biases[:, self.idx]`, LeViT's): `model.eval()`
      then `model.to("cuda")` leaves it where the module was, unless another method sets
      it anew (`self.ab = self.ab.to(x.device)` in `forward`);
    - a cache that `forward` builds once (under `if self.mask is None:`, `if not
      hasattr(self, "mask"):`), or rebuilds only when a key of the last call changes
      (`if batch_size != self.last_batch_size:`, `if n > self.max_len:`, or after `if
      self.pe is not None and self.pe.shape == x.shape: return self.pe`), from code that
      makes it without a device, as the catalog says (not `x.new_ones(n)`, `device=x.device`,
      also of a function forward hands it to, `build_rope_cache(n, device=x.device)`, a tensor
      moved to the input's device as it is set, `self._mask(n).to(x.device)`, or through the
      local it is computed from, `emb = torch.cat(...).to(x.device)`, nor a sub-module's
      output); and one that a method forward calls builds once with a `device=`
      its caller told it (openfold's `_init_residue_constants(dtype, device)`): it keeps the
      device of the first call, and a model run once on the CPU (a dry run, a summary) and
      then moved keeps a CPU mask. (A test against a literal, `if self.mode == "train":`, is
      a switch, not a key.)

    A read inside a lambda that `__init__` keeps (`self.clamp = lambda x: self.lo + x`) is a
    run-time read; buffers registered under names from a dict the class was handed
    (`for name, t in graph.items(): self.register_buffer(name, t)`) are not its own names,
    while other computed names leave the class unjudged.

    The value is followed: tensor factories (`torch.ones`, `torch.tensor([...])`,
    `torch.tensor(values)`, `torch.tensor(get_kernel_window(k))` of a function that gives
    no number (`float(...)`, `math.log(...)`, `.item()` and the class's own methods may),
    a 0-dim `torch.tensor(1.5, requires_grad=True)` made to be
    trained; `torch.tensor(logit[None, :])` of a slice, never a number; `torch.tensor([d] * n)`),
    torch functions picked by name (`getattr(torch, window)(n)`), a function of the file
    or of the project whose every return is a tensor (`self.beta = linear_schedule(n)`,
    `self.filter = geometry.gaussian2d(7)`), a detached copy of a tensor
    (`self.phase = self.weight.detach().clone()`),
    `torch.from_numpy(...)`, legacy constructors
    (`torch.Tensor([...])`, `torch.FloatTensor(n)`), what ops, arithmetic and method
    chains make of them (`torch.cat([a, a])`, `a * b`, `torch.arange(n).float()[None]`,
    padded with `t.new_zeros(...)` of such a tensor), a slice of a SciPy matrix
    (`torch.tensor(hadamard(n)[:k])`),
    through locals (`w = torch.randn(3); self.w = w`, `self.a, self.b = a, b`), through
    the class's own methods that return them (also through each other), and lists or
    dicts of such tensors.

    A tensor made a parameter on some paths only (`self.k = torch.ones(n)`, then
    `if trainable: self.k = nn.Parameter(self.k)`) is a plain attribute on the others;
    no fix is offered there, since a buffer of that name would refuse the Parameter.

    The finding is at the assignment's target (`self.<name>`), once per attribute, at
    its first such assignment in the class.

    ## Why is this bad
    `module.to(device)`, `.cuda()`, `.half()`, `DataParallel` replicas and
    `state_dict()` see only parameters, buffers and sub-modules. A plain tensor
    attribute stays where it was made: on a CPU-only machine everything is on the CPU
    and the code works, on a GPU `forward` fails with `RuntimeError: Expected all
    tensors to be on the same device, but found at least two devices, cuda:0 and cpu!`.

    ## Example
    ```python
    class PositionalEncoding(nn.Module):
        def __init__(self, n, d):
            super().__init__()
            self.pe = torch.zeros(n, d)

        def forward(self, x):
            return x + self.pe[: x.shape[1]]
    ```

    ## Use instead
    ```python
    class PositionalEncoding(nn.Module):
        def __init__(self, n, d):
            super().__init__()
            self.register_buffer("pe", torch.zeros(n, d), persistent=False)

        def forward(self, x):
            return x + self.pe[: x.shape[1]]
    ```
    `persistent=False` keeps it out of `state_dict()` (as a plain attribute was); use
    `nn.Parameter(...)` if it should be trained.

    ## When it is not reported
    - Classes that are not `nn.Module`s, and modules that move their own tensors
      (they override `_apply` or `to`; overriding only `cuda()`/`cpu()` moves nothing
      for `module.to(device)`, which never calls them: torecsys' embeddings). An override
      that only moves attributes it names (`self.scale = self.scale.to(device)`, then
      `return super().to(device)`) moves those alone: the others are still reported
      (soft-actor-critic's `noise`).
    - `nn.Module.__setattr__` registers it: the name is a buffer
      (`register_buffer("name", ...)` anywhere in the class or a base class in the
      file, also through the class's own helper, `register_buffer_or_parameter("name", t)`,
      `self._buffers["name"] = ...`) or a parameter (`self.w = nn.Parameter(...)`,
      `register_parameter`); assigning a tensor to a buffer's name updates the buffer.
    - The tensor follows a run-time device, outside `__init__` and what it calls:
      `device=x.device` in a cache made at every call or rebuilt when it does not fit
      (`if self.mask is None or self.mask.device != x.device:`), `**kwargs`,
      `.to(x.device)` or `.to(x)` in `forward`, `.type_as(x)`, `x.new_zeros(...)`,
      `torch.zeros_like(x)`, a tensor computed from the input; also what a method returns
      to `forward` that way, even one named like a builder (`self._make_grid(x)`).
      (`device=` and `.to(device)` while the module is built do not count: the tensor
      stays on that device when the module is moved, and DataParallel replicas do not
      copy it.)
    - The attribute is moved where it is used (`self.pe.to(x.device)`,
      `torch.as_tensor(self.anchors, device=d)`, `[a.to(d) for a in self.anchors]`), or
      refreshed at run time with a tensor that is not fixed (also element by element:
      `self.grids[i] = grid` in `forward`). A setter that `forward` does not call, which
      only stores what it is given (`def set_values(self, phi): self.phi = phi`),
      refreshes nothing: the caller's tensor stays on one device too; nor does an
      assignment under an `if` without `else` (it may not run; but under `if self.w is not
      None:` the path that skips it holds None, on no device) or one that takes the
      attribute's own device (`torch.zeros_like(x, device=self.mem.device)` keeps a
      stale device).
    - Test files that never name a device (see TDV201): their modules are never moved.
    - Empty placeholders: `torch.Tensor()`, `torch.empty(0)`.
    - Placeholder slots: one tensor repeated, `self.heads = [torch.zeros(1)] * n`
      (whatever fills the slots later decides their device).
    - The attribute is never read outside construction time (`__init__` and the methods
      it calls or that say they build: `_build_*`, `reset_parameters`, ...) or outside
      methods that save, load or show it (`save_weights`, `export`, `__repr__`), or is
      read only as Python data (`if self.table[i]:`, `self.t.item()`, `self.t.shape`,
      `assert self.t is not None`)
      or only as an index (`x[:, self.idx]`: a CPU index tensor indexes a tensor on any
      device), so its device never meets the input. (An attribute the class never uses at
      all is reported when it is public and only construction sets it, see above; not a
      private one, nor one a loader sets too, like darknet's weight-file `header`.)
    - Values that are not tensors, or that mix with any device: numbers, 0-dim
      `torch.tensor(2.0)` or `torch.full((), 2.0)` (unless made with `requires_grad=True`,
      or on a chosen device, `torch.tensor(eps, device=d)`: only a CPU 0-dim tensor mixes
      with other devices),
      `torch.Size`, dtypes, generators.
    - Lightning's `self.example_input_array`, which Lightning moves to the module's device
      itself.
    - `setattr(self, name, t)` and `register_buffer(name, ...)` with computed names
      (for a class that registers computed names nothing is reported).
    - Not followed: methods defined in a base class (only the class's own `__init__`
      helpers and returning methods count), `x.new_zeros(...)`/`torch.zeros_like(...)`
      in `__init__`, and a helper's result kept in a local before it is stored.

    CUDA guards do not matter here: the mismatch happens exactly when CUDA is present.

    ## Fix
    `fix` turns the assignment into a registration where it stands:
    `self.pe = torch.zeros(n, d)` becomes
    `self.register_buffer("pe", torch.zeros(n, d), persistent=False)` (kept out of
    `state_dict()`, as the plain attribute was; later assignments then update the
    buffer). It is offered only at construction time (`__init__` and its helpers) and
    for the first assignment of the name in the class (`register_buffer` refuses a name
    that is already an attribute). Not fixed: caches built in `forward` (register them as
    `self.register_buffer("mask", None, persistent=False)` in `__init__`), and lists or
    dicts of tensors (stack them, or register each).

    ## How to silence it
    - One line: `self.pe = torch.zeros(n, d)  # noqa: TDV202`.
    - A whole project: `extend-ignore = TDV202` in the `[flake8]` section.
    """

    code = "TDV202"
    name = "unregistered-tensor-attribute"
    needs_a_device_in_tests = True
    message = ("self.{name} holds {what} that module.to(device) leaves behind; {remedy}")
    trigger_parts = (
        ((), r"\b(?:" + "|".join(FACTORIES + ("from_numpy", "frombuffer")) + r"|[A-Z][a-z]*Tensor)\b|\bTensor\("
             r"|\bVariable\("  # `self.priors = Variable(self.priorbox.forward())`
             r"|\bself\.\w+ is None|\b(?:has|get)attr\(self\b|\bgetattr\(\s*torch\s*,"
             r"|\b__init__\([^)]*\bTensor\b"  # `def __init__(self, points: Tensor)`
             r"|" + _DERIVED_ARGUMENT  # `self.radii = r.norm(2, dim=1)`
             + r"|" + _TENSOR_USE),  # `F.nll_loss(y, t, weight=self.weight)`
        # `torch.cat([p.flatten() for p in m.parameters()])`: searched only where a module's
        # parameters are (training scripts name them far more often than they join them)
        (("parameters(", "buffers("),
         r"=\s*(?:\w+\.)?(?:cat|concat|concatenate|[hvd]?stack)\([^=]*?\.(?:named_)?(?:parameters|buffers)\("),
    )
    triggers, trigger_words = trigger_union(trigger_parts)

    VALID = [
        "import torch\nimport torch.nn as nn\nclass M(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self.register_buffer('pe', torch.zeros(10, 4), persistent=False)\n"
        "        self.w = nn.Parameter(torch.ones(4))\n"
        "    def forward(self, x):\n        return x * self.w + self.pe[: x.shape[0]]\n",
        "import torch\nimport torch.nn as nn\nclass M(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self.mask = None\n"
        "    def forward(self, x):\n        if self.mask is None or self.mask.device != x.device:\n"
        "            self.mask = torch.ones(x.shape[0], device=x.device)\n        return x * self.mask\n",
        "import torch\nclass Sampler:\n    def __init__(self):\n        self.weights = torch.ones(10)\n"
        "    def sample(self, n):\n        return torch.multinomial(self.weights, n)\n",
        "import torch\nimport torch.nn as nn\nclass M(nn.Module):\n    def __init__(self, n):\n        super().__init__()\n"
        "        self.order = torch.randperm(n)\n"
        "    def forward(self, x):\n        pos = torch.arange(x.shape[1], device=x.device)\n"
        "        self.pos = pos\n        return x[:, self.order] + self.pos\n",
    ]
    INVALID = [
        "import torch\nimport torch.nn as nn\nclass M(nn.Module):\n    def __init__(self, n, d):\n"
        "        super().__init__()\n        self.pe = torch.zeros(n, d)  # expect: TDV202\n"
        "    def forward(self, x):\n        return x + self.pe[: x.shape[1]]\n",
        "import torch\nimport torch.nn as nn\nclass M(nn.Module):\n    def forward(self, x):\n"
        "        n = x.shape[0]\n        if getattr(self, 'mask', None) is None:\n"
        "            self.mask = torch.triu(torch.ones(n, n))  # expect: TDV201, TDV202\n        return x @ self.mask\n",
        "import torch\nimport torch.nn as nn\nclass M(nn.Module):\n    def __init__(self, n, device):\n"
        "        super().__init__()\n        self.scale = torch.full((n,), 0.5, device=device)  # expect: TDV202\n"
        "        self.table = self._make_table(n)  # expect: TDV202\n"
        "    def _make_table(self, n):\n        table = torch.arange(n)\n        return table.float() / n\n"
        "    def forward(self, x):\n        return x * self.scale + self.table\n",
    ]

    @staticmethod
    def keeps_class(node: ast.ClassDef, aliases: FrozenSet[str] = frozenset(),
                    text_of: Callable[[ast.AST], str] = ast.unparse,
                    makes_tensor: Optional[Callable[[str], bool]] = None) -> bool:
        """Fast path: can this class hold a finding? A method assigns `self.<name>` a value
        made (maybe through locals, or by a method it calls that returns one) from a
        tensor factory that is not handed straight to `nn.Parameter(...)`/`register_buffer(...)`
        (timm's `nn.Parameter(torch.zeros(...))`) nor only iterated (`[x.item() for x in
        torch.linspace(...)]`): without `device=` anywhere, with any `device=` in
        `__init__` and the methods it calls; or a method (forward, or one it may call) builds a
        cache once (`if self.mask is None: self.mask = ...`). A superset of what the rule reports:
        fast == full.

        `text_of(node)` is a definition's source text: a method whose text names no
        factory (nor `is`, `hasattr`, `getattr` for a cache) is not walked. `makes_tensor`:
        does a function of the project (`make_grid`, `geometry.gaussian2d`) return a
        tensor (the project index's `makes_tensor`); what `__init__` stores of one counts."""
        if all(isinstance(base, ast.Name) and base.id == "object" for base in node.bases):
            return False  # `class Loader:` is no module, whatever its methods store
        methods = {method.name: method for method in node.body
                   if isinstance(method, (ast.FunctionDef, ast.AsyncFunctionDef))}
        cached = [name for name, method in methods.items()
                  if (name in ("forward", "__call__") or "device" in text_of(method))
                  and _CACHE_WORDS.search(text_of(method))]
        # forward, or a method forward calls that is told a device, builds a cache once
        builders = [name for name in cached if _builds_cache_once(methods[name])]
        if any(name in ("forward", "__call__") for name in builders) or (
                builders and set(builders) & _ast_reachable(methods, ["forward", "__call__"], text_of)):
            return True
        text = text_of(node)
        factory_words = _class_trigger_words(aliases)
        uses: List[Set[str]] = []

        def used_as_tensor(attribute: str) -> bool:  # read once, when a method keeps an argument
            if not uses:
                uses.append(_ast_tensor_uses(node) if _TENSOR_USE_WORDS.search(text) else set())
            return attribute in uses[0]

        moves = _MOVE_WORDS.search(text) is not None
        built = _ast_called_from_init(methods, text_of)
        if "train" in methods and any(isinstance(statement, ast.Assign)
                                      and any(map(_stores_attribute, statement.targets))
                                      for statement in ast_statements(methods["train"])):
            return True  # a cache `train(self, mode)` sets for eval
        if makes_tensor is not None and any(_ast_stores_a_call_of(methods[name], makes_tensor) for name in built):
            return True
        if _JOIN_WORDS.search(text) and _PARAMETER_WORDS.search(text) \
                and any(_ast_stores_joined_parameters(method) for method in methods.values()):
            return True
        if not factory_words.search(text):
            # `def __init__(self, points: Tensor)` ... `self.points = points`
            arguments = bool(_TENSOR_ARGUMENT_WORDS.search(text) or _TENSOR_USE_WORDS.search(text))
            if not arguments and not moves:
                return False
            return any((arguments and _ast_stores_tensor_argument(methods[name], used_as_tensor))
                       or (moves and _ast_stores_a_move(methods[name])) for name in built)
        if any(_ast_stores_tensor_argument(methods[name], used_as_tensor)
               or (moves and _ast_stores_a_move(methods[name])) for name in built):
            return True
        if "register_buffer" in text and _ast_stores_from_a_buffer([methods[name] for name in built]):
            return True
        names_factory: Dict[int, bool] = {}  # asked of a method twice: the search is the cost

        def has_factory_word(function: ast.AST) -> bool:
            found = names_factory.get(id(function))
            if found is None:
                found = names_factory[id(function)] = factory_words.search(text_of(function)) is not None
            return found

        scans: Dict[int, _FunctionScan] = {}

        def scan(function: ast.AST) -> _FunctionScan:
            found = scans.get(id(function))
            if found is None:
                found = scans[id(function)] = _FunctionScan(function)
            return found

        # methods that return a tensor they make (on any device), also through each other
        helpers: Set[str] = set()
        candidates = [m for m in methods.values() if has_factory_word(m)]
        while candidates:
            found = [m for m in candidates if _new_tensor_uses(scan(m), aliases, True, helpers)[1]]
            helpers.update(m.name for m in found)
            if not found:
                break
            words = re.compile(r"\.(?:" + "|".join(map(re.escape, sorted(helpers))) + r")\b")
            candidates = [m for m in methods.values() if m.name not in helpers and words.search(text_of(m))]
        words = re.compile(r"\.(?:" + "|".join(map(re.escape, sorted(helpers))) + r")\b") if helpers else None
        return any(isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef))
                   and (has_factory_word(function) or (words and words.search(text_of(function))))
                   and _new_tensor_uses(scan(function), aliases, function.name in built, helpers)[0]
                   for function in ast_definitions(node))

    def leave_ClassDef(self, node: cst.ClassDef) -> None:
        info = self.ctx.current_class
        if info is None or not info.is_module or info.moves_its_tensors():
            return
        lineage = info.lineage()
        if any(cls.registers_computed_names for cls in lineage):
            return
        left_stale = self._left_stale(lineage)
        reported: Dict[str, List[AttributeAssignment]] = {}
        own_init_time = info.init_time_methods()
        # what __init__ runs: a tensor made there stays on its device, `device=` or not
        built = info.called_from_init()
        with_input = info.run_with_input()  # forward and the methods it calls
        for assignment in info.assignments:
            name = assignment.name
            if assignment.element or name not in left_stale or name in _MOVED_BY_FRAMEWORKS:
                continue
            if name in reported and not all(_exclusive(assignment, other) for other in reported[name]):
                continue  # (each arm of an `if` that sets it needs the fix)
            # a cache from the input's device goes stale only when forward (or a method it
            # calls: openfold's `_init_residue_constants`) builds it once (not a one-off such
            # as RepVGG's reparameterisation helpers)
            stale = _is_fixed(info, assignment) or (assignment.method in built and (
                _is_made(info, assignment) or _is_tensor_argument(info, assignment))) or (
                assignment.built_once and (
                    # a cache forward builds once from code that makes it without a device (as
                    # the catalog says: not a sub-module's output, `x.new_ones(3)`, `device=x.device`,
                    # nor a tensor moved on its way in, `self._make_masks(n).to(att_ws.device)`)
                    (assignment.method in ("forward", "__call__") and _is_made(info, assignment)
                     and not _placed_on_its_way(assignment.value, info.methods.get(assignment.method))) or (
                        # (in a method forward calls, one told its device: `device=device` of the
                        # first call's input, openfold's `_init_residue_constants`; SPADE's
                        # `self.Tensor(1)` label caches follow the tensor type the user picked;
                        # not forward's own cache made with the input's device, which the catalog
                        # exempts: a rotary table keyed on the length, `build_rope_cache(n, device=x.device)`)
                        assignment.method in with_input and assignment.method not in ("forward", "__call__")
                        and isinstance(assignment.value, cst.Call)
                        and keyword(assignment.value, "device") is not None
                        and (assignment.kind == TENSOR or _is_made(info, assignment))))) or (
                # `def train(self, mode)`: `self.ab = self.biases[:, self.idx]` for eval, on the
                # device the module had then (LeViT's and TinyViT's attention-bias cache), unless
                # another method sets it anew (ultralytics' `self.ab = self.ab.to(...)` in forward)
                assignment.method == "train" and assignment.kind == TENSOR
                and all(other.method == "train" for other in info.assignments if other.name == name))
            if not stale or info.is_registered_at(assignment) or _is_repeated_placeholder(assignment.value) \
                    or info.moves_its_tensors(name) or any(name in cls.host_only for cls in lineage):
                continue  # (also one the class reads with `.numpy()`: on the CPU on purpose)
            reported.setdefault(name, []).append(assignment)
            self.report(assignment.target, self._message(name, assignment.value),
                        fix=self._fix(info, assignment, own_init_time))

    @staticmethod
    def _left_stale(lineage: List[ClassInfo]) -> Set[str]:
        """The attributes some run-time read may find as they were made: a read that is
        not moved where it happens (`self.pe.to(x.device)`) nor preceded, in its method,
        by a new run-time value (`self.pe = self.pe.to(x.device)` then `self.pe[:n]`).
        A run-time method that sets a new value without reading the old one (a
        `reset_state` making `self.h = x.new_zeros(...)`) is taken to run first.
        Not stale: wenet's `position_encoding` reads the table that only `forward`
        moves; xLSTM's `forward` reads its state before it sets the next one."""
        reads: Dict[str, List[Tuple[str, bool, int]]] = {}
        refreshes: Dict[Tuple[str, str], int] = {}  # (name, method) -> first run-time refresh
        init_in_lineage = set().union(*(cls.called_from_init() for cls in lineage))
        for cls in lineage:
            init_time = cls.construction_only_methods(init_in_lineage)
            for attribute, entries in cls.reads.items():
                reads.setdefault(attribute, []).extend(e for e in entries if e[0] not in init_time)
            with_input = cls.run_with_input()
            for a in cls.assignments:
                # (not a refresh: one that may not run, or that takes the device the attribute had)
                if a.method not in init_time and not _is_fixed(cls, a) and not a.built_once \
                        and not a.conditional and not _is_constant(a.value) \
                        and not _keeps_callers_value(cls, a, with_input) \
                        and not follows_own_device(a.value, cst.Module([]).code_for_node(a.target)):
                    key = (a.name, a.method)
                    refreshes[key] = min(refreshes.get(key, a.order), a.order)
        stale: Set[str] = set()
        # A public attribute set only while the module is built and never used by the class
        # itself is there for its users (`model.centers` in the training script), who read
        # it after the model was moved. (Not: one a loader or a run-time method sets too,
        # like darknet's `header` of weight files.)
        for cls in lineage:
            for a in cls.assignments:
                name = a.name
                setters = {b.method for other in lineage for b in other.assignments if b.name == name}
                if name.startswith("_") or not setters <= init_in_lineage or any(name in o.reads for o in lineage) \
                        or any(b.element and b.method not in init_in_lineage
                               for other in lineage for b in other.assignments if b.name == name):
                    continue
                if not any(name in refs for other in lineage for method, refs in other.references.items()
                           if method not in setters):
                    stale.add(name)
        for name, entries in reads.items():
            resets = [(method, order) for (refreshed, method), order in refreshes.items() if refreshed == name
                      and not any(m == method and o < order for m, _, o in entries)]
            if resets:
                continue  # a run-time method sets it afresh (assumed to run first)
            if any(not moved and order < refreshes.get((name, method), order + 1)
                   for method, moved, order in entries):
                stale.add(name)
        return stale

    @staticmethod
    def _fix(info: ClassInfo, assignment: AttributeAssignment, init_time: Set[str]) -> Optional[Fix]:
        """`self.x = t` -> `self.register_buffer("x", t, persistent=False)`, where it is.

        Only at construction time (a buffer made in forward is made on the CPU all the
        same), for a plain `self.x = <tensor>` that is the first assignment of the name in
        the class (register_buffer raises if the attribute exists already)."""
        statement = assignment.statement
        if (assignment.method not in init_time or not isinstance(statement, cst.Assign)
                or len(statement.targets) != 1 or statement.targets[0].target is not assignment.target
                or _is_container(assignment.value)):
            return None
        if next(a for a in info.assignments if a.name == assignment.name) is not assignment:
            return None
        if any(a.name == assignment.name and isinstance(a.value, cst.Call)
               and last_identifier(a.value.func) in REGISTERING_CONSTRUCTORS for a in info.assignments):
            return None  # `if trainable: self.t = nn.Parameter(self.t)`: a buffer of that name would refuse it
        receiver = method_call(assignment.value, "to", "cuda")
        if isinstance(receiver, cst.Call) and last_identifier(receiver.func) in REGISTERING_CONSTRUCTORS:
            return None  # `nn.Parameter(t).to(d)` was meant to be trained: move `t` inside, by hand
        register = cst.Call(
            func=cst.Attribute(value=assignment.target.value, attr=cst.Name("register_buffer")),
            args=[cst.Arg(cst.SimpleString(f'"{assignment.name}"')), cst.Arg(assignment.value),
                  cst.Arg(cst.Name("False"), keyword=cst.Name("persistent"),
                          equal=cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace("")))])
        return Fix().replace(statement, cst.Expr(register))

    def _message(self, name: str, value: cst.CSTNode) -> str:
        if _is_container(value):
            return self.message.format(name=name, what="tensors in a container", remedy=(
                f'stack them into one buffer (self.register_buffer("{name}", torch.stack(...), persistent=False)) '
                "or register each one"))
        return self.message.format(name=name, what="a tensor", remedy=(
            f'use self.register_buffer("{name}", t, persistent=False) or nn.Parameter(t)'))


# Where torch's ops are (as the file writes them: `torch.linalg.inv(x)`).
_TORCH_OP_NAMESPACES = frozenset({"torch", "torch.linalg", "torch.fft", "torch.special"})
# Fast path of TDV202: calls that can make a fixed-device tensor, and calls that register one.
_CLASS_TRIGGER_CALLS = frozenset(FACTORIES) | {"from_numpy", "frombuffer", "Variable"} | LEGACY_TENSOR_TYPES
# `torch.zeros_like(self.weight)` in `__init__`: a new plain tensor, on any device
_LIKE_FACTORIES = frozenset(name for name in TENSOR_FUNCTIONS if name.endswith("_like"))
REGISTERING_CALLS = frozenset({"Parameter", "Buffer", "register_buffer", "register_parameter"})
# torch functions of an argument that are no op computing on it: factories (`torch.tensor(n)`
# may make a 0-dim number) and registration (`nn.Parameter(t)`)
_NOT_OPS = _CLASS_TRIGGER_CALLS | _LIKE_FACTORIES | REGISTERING_CALLS
# Text without which a method cannot hold what `keeps_class` looks for: `is` or
# `(has|get)attr` in a cache's test; a callee's name followed by its call's `(` (after
# spaces, closing parentheses, or maybe a comment or a `\` line break), so the
# `Tensor` of `x: torch.Tensor` annotations, in most of timm's methods, does not count.
# Runs over the text of every method (and the factory words below over every class): a
# lookahead on the characters its words may start with lets `re` skip the other positions
# (two to four times as fast)
_CACHE_WORDS = re.compile(r"(?=[ihgs!=<>])(?:\bis\b|\b(?:has|get)attr\b|\bself\.[\w.]+(?:\[[^\]]*\]|\([^)]*\))?\s*(?:[!=]=|[<>])"
                          r"|(?:[!=]=|[<>])=?\s*self\.)")  # (a comparison, not an assignment)
# as the file trigger; `(?=_)` first: `re` then tries `\b` only where a `_` is (twice as fast)
_TENSOR_ARGUMENT_WORDS = re.compile(r"(?=_)\b__init__\([^)]*\bTensor\b|(?=s)" + _DERIVED_ARGUMENT
                                    # `self.alphas: torch.FloatTensor = ...`
                                    + r"|(?=s)\bself\.\w+: *(?:torch\.)?[A-Z]\w*Tensor\b")
_TENSOR_USE_WORDS = re.compile(_TENSOR_USE)
_MOVE_WORDS = re.compile(r"\.(?:to|cuda)\(")  # `self.mask = self._mask(n).to("cuda")` needs one
_FACTORY_WORDS: Dict[FrozenSet[str], "re.Pattern[str]"] = {}


def _class_trigger_words(aliases: FrozenSet[str]) -> "re.Pattern[str]":
    pattern = _FACTORY_WORDS.get(aliases)
    if pattern is None:
        names = sorted(_CLASS_TRIGGER_CALLS | _LIKE_FACTORIES | aliases)
        first = re.escape("".join(sorted({name[0] for name in names} | {"g"})))
        pattern = _FACTORY_WORDS[aliases] = re.compile(
            rf"(?=[{first}])(?:\b(?:" + "|".join(map(re.escape, names)) + r")(?=[\s)]*[(#\\])"
            r"|\bgetattr\(\s*torch\s*,)")
    return pattern


def _ast_tensor_uses(node: ast.AST) -> Set[str]:
    """Fast path of `ClassInfo.tensor_uses` (a superset): the `w` of `weight=self.w`, and of
    `self.w` handed to a call named like a torch function that takes only tensors
    (`einsum`, `matmul`, `cat`, `pad`, ...), directly or in a list."""
    found: Set[str] = set()
    for sub in walk_ast(node):
        if isinstance(sub, ast.keyword) and sub.arg in ("weight", "pos_weight") \
                and isinstance(sub.value, ast.Attribute):
            found.add(sub.value.attr)
        elif isinstance(sub, ast.Call) and _ast_callee(sub) in TENSOR_OPERAND_NAMES:
            for arg in sub.args:
                for item in (arg.elts if isinstance(arg, (ast.List, ast.Tuple)) else [arg]):
                    if isinstance(item, ast.Attribute):
                        found.add(item.attr)
    return found


def _ast_stores_tensor_argument(method: ast.AST, used_as_tensor: Callable[[str], bool] = lambda name: False) -> bool:
    """Fast path of `_is_tensor_argument`: `self.x = x` for a parameter annotated with a tensor
    type or one torch takes as a tensor (`weight=self.x`: `used_as_tensor`), or
    `self.x = x.norm(...)`, a method chain on a parameter with a method only tensors have."""
    args = method.args  # type: ignore[attr-defined]
    parameters = [a for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)]
    annotated = {a.arg for a in parameters if a.annotation is not None and _names_tensor_type(a.annotation)}
    names = {a.arg for a in parameters} - {"self", "cls"}  # `self.norm(...)` is a method, not a tensor's
    for statement in ast_statements(method):  # an assignment is a statement
        if isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Attribute) \
                and statement.value is not None and _names_tensor_type(statement.annotation):
            return True  # `self.alphas: torch.FloatTensor = self.scheduler.get_alphas()`
        if not (isinstance(statement, ast.Assign) and any(isinstance(t, ast.Attribute) for t in statement.targets)):
            continue
        root, called = _ast_chain(statement.value)
        if root in annotated or _ast_arithmetic_root(statement.value) in annotated or (root in names and (called & TENSOR_ONLY_METHODS or TORCH_OP_CALL in called)):
            return True
        if root == "self" and called & (TENSOR_ONLY_METHODS - NOT_TENSOR_METHODS):
            return True  # `self.Graph = self.dataset.getSparseGraph().coalesce()`, if `dataset` was handed in
        if root in names and isinstance(statement.value, ast.Name) and any(
                isinstance(t, ast.Attribute) and used_as_tensor(t.attr) for t in statement.targets):
            return True
    return False


def _ast_chain(value: ast.AST) -> Tuple[Optional[str], Set[str]]:
    """(root name, methods called) of `x.a(...).b(...)[i]`, also inside a torch op
    (`torch.linalg.inv(x)` calls `inv` on `x`: a tensor's only); (None, ...) for anything else."""
    called: Set[str] = set()
    while True:
        if isinstance(value, ast.Name):
            return value.id, called
        if isinstance(value, ast.Subscript):
            value = value.value
        elif isinstance(value, ast.Call) and value.args and not isinstance(value.args[0], ast.Starred) and (
                isinstance(value.func, ast.Attribute) and ast_dotted_name(value.func.value) in _TORCH_OP_NAMESPACES
                and returns_tensor(value.func.attr) and value.func.attr not in _NOT_OPS):
            called.add(TORCH_OP_CALL)
            value = value.args[0]
        elif isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute):
            called.add(value.func.attr)
            value = value.func.value
        elif isinstance(value, ast.Attribute) and called:
            value = value.value  # `self.dataset` of `self.dataset.graph()`
        else:
            return None, called


TORCH_OP_CALL = "<torch op>"  # `_ast_chain`'s mark of a torch op around the root




def _ast_stores_joined_parameters(method: ast.AST) -> bool:
    """Fast path of `ValueKinds._joins_parameters`: `self.x = torch.cat(...)` whose first
    argument reads a module's parameters or buffers (a superset)."""
    for statement in ast_statements(method):
        if isinstance(statement, ast.Assign) and isinstance(statement.value, ast.Call) \
                and any(_stores_attribute(t) for t in statement.targets) and statement.value.args \
                and (ast_dotted_name(statement.value.func) or "").rpartition(".")[2] in _JOIN_NAMES:
            for node in walk_ast(statement.value.args[0]):
                if isinstance(node, ast.Attribute) and node.attr in _PARAMETER_ATTRIBUTES:
                    return True
    return False


_JOIN_NAMES = frozenset({"cat", "concat", "concatenate", "stack", "hstack", "vstack", "dstack"})
_PARAMETER_ATTRIBUTES = frozenset({"parameters", "buffers", "named_parameters", "named_buffers"})


def _ast_stores_a_move(method: ast.AST) -> bool:
    """Fast path of a tensor placed while the module is built: `self.x = <call>.to(...)` or
    `.cuda(...)` of what a function or method returns (`self._mask(n)`, `make_anchors(cfg)`,
    `torch.linalg.inv(w)`; its kind the full walk decides), not of a class built there
    (`nn.Linear(n, n).cuda()`) nor of a name (`model.to(device)`)."""
    for statement in ast_statements(method):
        if not (isinstance(statement, ast.Assign) and isinstance(statement.value, ast.Call)
                and isinstance(statement.value.func, ast.Attribute) and statement.value.func.attr in ("to", "cuda")
                and any(_stores_attribute(t) for t in statement.targets)):
            continue
        receiver = statement.value.func.value
        while isinstance(receiver, ast.Call) and isinstance(receiver.func, ast.Attribute) \
                and receiver.func.attr in ("to", "cuda", "float", "half", "double", "long", "int", "bool"):
            receiver = receiver.func.value
        if isinstance(receiver, ast.Subscript):
            receiver = receiver.value
        callee = receiver.func if isinstance(receiver, ast.Call) else None
        name = callee.attr if isinstance(callee, ast.Attribute) else callee.id if isinstance(callee, ast.Name) else ""
        if _names_a_function(name):
            return True
    return False


def _ast_stores_from_a_buffer(methods: List[ast.AST]) -> bool:
    """Fast path of `self.register_buffer("m", <call>)` then `self.x = <expr reading self.m>`
    while the module is built (mmpretrain's `self.mm = torch.sin(math.pi - self.margins)`):
    the full walk decides whether the value is a tensor made from the buffer."""
    buffers: Set[str] = set()
    stores: List[ast.AST] = []
    for method in methods:
        for statement in ast_statements(method):
            call = statement.value if isinstance(statement, ast.Expr) else None
            if isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) \
                    and call.func.attr == "register_buffer" and len(call.args) > 1 \
                    and isinstance(call.args[0], ast.Constant) \
                    and not (isinstance(call.args[1], ast.Constant) and call.args[1].value is None):
                buffers.add(str(call.args[0].value))
            elif isinstance(statement, ast.Assign) and any(_stores_attribute(t) for t in statement.targets):
                stores.append(statement.value)
    return bool(buffers) and any(isinstance(node, ast.Attribute) and node.attr in buffers
                                 and isinstance(node.value, ast.Name) and node.value.id == "self"
                                 for value in stores for node in walk_ast(value))


def _ast_stores_a_call_of(method: ast.AST, makes_tensor: Callable[[str], bool]) -> bool:
    """Fast path of `self.x = make_grid(n)` (or of what is computed from it, `.float()`),
    where `makes_tensor("make_grid")` says the function returns a tensor."""
    for statement in ast_statements(method):
        if not (isinstance(statement, ast.Assign) and isinstance(statement.value, ast.Call)
                and any(_stores_attribute(t) for t in statement.targets)):
            continue
        call = statement.value
        while isinstance(call.func, ast.Attribute) and isinstance(call.func.value, ast.Call):
            call = call.func.value  # `make_grid(n).float().to(d)`
        callee = ast_dotted_name(call.func)
        # a function (`make_grid`, `geometry.gaussian2d`), not a class (`nn.Linear`, `Block`)
        if callee and _names_a_function(callee.rpartition(".")[2]) and makes_tensor(callee):
            return True
    return False


def _exclusive(one: AttributeAssignment, other: AttributeAssignment) -> bool:
    """Are two assignments in arms of one `if` of the same method that never both run?"""
    return one.method == other.method and exclusive_arms(one.arms, other.arms)


# torch functions whose arguments after the input are sizes read as Python numbers, with their keywords
_SIZES_READ_AS_NUMBERS = {
    "torch.nn.functional.pad": ("pad",),
    "torch.nn.functional.interpolate": ("size", "scale_factor"),
    "torch.nn.functional.upsample": ("size", "scale_factor"),
}


def _names_a_function(name: str) -> bool:
    """`make_anchors`, `_mask`: named like a function, not a class (`nn.Linear`, `Block`)."""
    return name[:1].islower() or name[:1] == "_"


def _names_tensor_type(annotation: ast.AST) -> bool:
    """`Tensor`, `torch.Tensor`, `torch.FloatTensor`, `Optional[Tensor]`, `"torch.Tensor"`."""
    return any((isinstance(n, ast.Name) and n.id.endswith("Tensor"))
               or (isinstance(n, ast.Attribute) and n.attr.endswith("Tensor"))
               or (isinstance(n, ast.Constant) and isinstance(n.value, str) and "Tensor" in n.value)
               for n in ast.walk(annotation))


def _builds_cache_once(function: ast.AST) -> bool:
    """`if self.x is None: ... self.x = ...` (or `hasattr(self, "x")`) somewhere in `function`;
    or a test keyed on what a call left on `self` (`if n > self.max_len:`) around an attribute's
    assignment, or `if self.x is not None ...: return ...` before one (a superset of
    `ClassFacts._under_once_test`)."""
    branches = [node for node in ast_statements(function) if isinstance(node, ast.If)]  # statements only
    if not branches:
        return False
    stores_attribute: List[bool] = []  # does `function` assign an attribute anywhere (asked once)

    def assigned_attributes(node: ast.AST) -> Set[str]:
        return {t.attr for sub in ast_statements(node) if isinstance(sub, (ast.Assign, ast.AnnAssign))
                for t in _ast_targets(sub) if isinstance(t, ast.Attribute)}

    for branch in branches:
        test = list(walk_ast(branch.test))
        compares = [sub for sub in test if isinstance(sub, ast.Compare)]
        tested = {sub.left.attr for sub in compares
                  if isinstance(sub.left, ast.Attribute) and isinstance(sub.ops[0], ast.Is)}
        tested |= {sub.args[1].value for sub in test if isinstance(sub, ast.Call)
                   and _ast_callee(sub) in ("hasattr", "getattr") and len(sub.args) > 1
                   and isinstance(sub.args[1], ast.Constant)}
        keyed = any(not any(isinstance(o, ast.Constant) for o in (c.left, *c.comparators))
                    and any(isinstance(r, ast.Attribute) for o in (c.left, *c.comparators) for r in walk_ast(o))
                    for c in compares)
        returns_first = any(isinstance(c.ops[0], ast.IsNot) for c in compares) and any(
            isinstance(sub, ast.Return) for sub in branch.body)
        if not (keyed or returns_first or tested):
            continue
        if returns_first:
            if not stores_attribute:
                stores_attribute.append(bool(assigned_attributes(function)))
            if stores_attribute[0]:
                return True  # returns the cache first
        assigned = assigned_attributes(branch)
        if (keyed and assigned) or not tested.isdisjoint(assigned):
            return True  # keyed on the last call, or on the attribute it sets
    return False


def _ast_called_from_init(methods: Dict[str, ast.AST], text_of: Callable[[ast.AST], str]) -> Set[str]:
    """`__init__` and the methods of the class it uses on `self`, transitively (as
    `ClassInfo.called_from_init`, for the fast path)."""
    return _ast_reachable(methods, ["__init__"], text_of)


def _ast_reachable(methods: Dict[str, ast.AST], roots: List[str], text_of: Callable[[ast.AST], str]) -> Set[str]:
    """`roots` and the methods of the class they name on `self` (in their text: a superset
    of their uses), transitively."""
    done: Set[str] = set()
    todo = list(roots)
    while todo:
        name = todo.pop()
        method = methods.get(name)
        if name in done or method is None:
            continue
        done.add(name)
        params = method.args.posonlyargs + method.args.args  # type: ignore[attr-defined]
        if not params:
            continue
        named = re.findall(rf"\b{re.escape(params[0].arg)}\b\)?\s*\.\s*(\w+)", text_of(method))
        todo.extend(attribute for attribute in named if attribute in methods)
    return done


class _FunctionScan:
    """What `_new_tensor_uses` reads of a function, whatever it asks: walked once."""

    def __init__(self, function: ast.AST) -> None:
        nodes = list(walk_ast(function))
        self.assigns = [sub for sub in nodes if isinstance(sub, (ast.Assign, ast.AnnAssign)) and sub.value is not None]
        self.returns = [sub.value for sub in nodes if isinstance(sub, ast.Return) and sub.value is not None]
        self.stores = any(_stores_attribute(t) for sub in self.assigns for t in _ast_targets(sub))
        self.calls = [sub for sub in nodes if isinstance(sub, ast.Call)]
        # arguments of registration (`nn.Parameter(scale * torch.ones(d))` too), and iterables
        # of comprehensions, never end up on self as a new tensor
        # (not `nn.Parameter(torch.ones(1)).to(device)`: a moved copy is a plain tensor again)
        moved = {id(call.func.value) for call in self.calls
                 if isinstance(call.func, ast.Attribute) and call.func.attr in ("to", "cuda")}
        self.excluded = {id(sub) for call in self.calls if _ast_callee(call) in REGISTERING_CALLS
                         and id(call) not in moved for arg in call.args for sub in walk_ast(arg)}
        self.excluded |= {id(sub.iter) for sub in nodes if isinstance(sub, ast.comprehension)}
        self._reads: Dict[int, Tuple[Set[int], Set[str]]] = {}

    def reads(self, value: ast.AST) -> Tuple[Set[int], Set[str]]:
        """The ids of the nodes in `value` and the names it reads."""
        found = self._reads.get(id(value))
        if found is None:
            subs = list(walk_ast(value))
            found = self._reads[id(value)] = ({id(sub) for sub in subs},
                                              {sub.id for sub in subs if isinstance(sub, ast.Name)})
        return found


def _new_tensor_uses(scan: _FunctionScan, aliases: FrozenSet[str], any_device: bool,
                     helpers: Set[str]) -> Tuple[bool, bool]:
    """Does the function `scan` read (1) assign an attribute, (2) return a value built from
    a factory call (without `device=`, unless `any_device`) or from a call of one of
    `helpers` (`self._make_mask(n)`), directly or through local names?"""
    if not scan.stores and not scan.returns:
        return False, False
    factories = {id(call) for call in scan.calls if id(call) not in scan.excluded and (
        ((_ast_callee(call) in _CLASS_TRIGGER_CALLS or _ast_callee(call) in aliases or _ast_is_dynamic_torch(call))
         and (any_device or not any(k.arg in ("device", None) for k in call.keywords)))
        or (any_device and _ast_callee(call) in _LIKE_FACTORIES)
        or (isinstance(call.func, ast.Attribute) and call.func.attr in helpers))}
    if not factories:
        return False, False
    tainted: Set[str] = set()

    def made_from_factory(value: ast.AST) -> bool:
        ids, names = scan.reads(value)
        return not factories.isdisjoint(ids) or not tainted.isdisjoint(names)

    bound = [({t.id for target in _ast_targets(sub) for t in walk_ast(target) if isinstance(t, ast.Name)}, sub)
             for sub in scan.assigns]
    changed = True
    while changed:  # locals built from factories, through other locals
        changed = False
        for names, sub in bound:
            if names - tainted and made_from_factory(sub.value):
                tainted |= names
                changed = True
    stored = scan.stores and any(_stores_attribute(t) and made_from_factory(sub.value)
                                 for sub in scan.assigns for t in _ast_targets(sub))
    return stored, any(made_from_factory(value) for value in scan.returns)


def _ast_is_dynamic_torch(call: ast.Call) -> bool:
    """`getattr(torch, window)(n)` (see `ValueKinds._is_dynamic_torch_function`)."""
    inner = call.func
    return (isinstance(inner, ast.Call) and isinstance(inner.func, ast.Name) and inner.func.id == "getattr"
            and len(inner.args) >= 2 and isinstance(inner.args[0], ast.Name) and inner.args[0].id == "torch")


def _stores_attribute(target: ast.AST) -> bool:
    """`self.x = ...`, `self.x, y = ...`: a target that sets an attribute (`x, y = ...`
    sets none: the names it binds count only once stored, through `tainted`)."""
    if isinstance(target, (ast.Tuple, ast.List)):
        return any(_stores_attribute(element) for element in target.elts)
    return isinstance(target, ast.Attribute) or (isinstance(target, ast.Starred) and _stores_attribute(target.value))


def _ast_targets(statement: ast.AST) -> list:
    return statement.targets if isinstance(statement, ast.Assign) else [statement.target]


def _ast_callee(call: ast.Call) -> Optional[str]:
    func = call.func
    return func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)


def _is_fixed(info: ClassInfo, assignment: AttributeAssignment) -> bool:
    """A tensor on the device fixed where it was made: the value itself, or what the
    method it calls on `self` returns (`self.mask = self._make_mask(n)`)."""
    return assignment.fixed_tensor or (assignment.helper is not None and info.returns_tensor(assignment.helper))


def _is_made(info: ClassInfo, assignment: AttributeAssignment, seen: FrozenSet[str] = frozenset()) -> bool:
    """A tensor made there (or by the method it calls on `self`), on any device; also what
    such a method computes with a torch op from a tensor made for the module
    (`self.alpha_bar = self._cumulate(self.alpha)`, `return torch.cumprod(alpha, dim=0)`)."""
    return assignment.made_tensor or (assignment.helper is not None and (
        info.returns_tensor(assignment.helper, any_device=True)
        or _computed_from_a_made_attribute(info, assignment, seen | {assignment.name})))


def _computed_from_a_made_attribute(info: ClassInfo, assignment: AttributeAssignment, seen: FrozenSet[str]) -> bool:
    """`self.x = self.<helper>(self.y)`, each return of the helper a torch op on the
    parameter that takes `self.y`, and `self.y` a tensor made for the module."""
    helper, call = info.methods.get(assignment.helper or ""), assignment.value
    returns = [r.value for r in info.method_returns(assignment.helper or "")]
    if helper is None or not isinstance(call, cst.Call) or not returns:
        return False
    params = parameter_names(helper)[1:]
    for value in returns:
        operand = _torch_op_argument(value)
        if not isinstance(operand, cst.Name) or operand.value not in params:
            return False
        position = params.index(operand.value)
        if position >= len(call.args) or call.args[position].keyword is not None or call.args[position].star:
            return False
        name = self_attribute_key(call.args[position].value)
        attribute = name[len("self."):] if name is not None else None
        if attribute is None or attribute in seen or not any(
                a.name == attribute and _is_made(info, a, seen) for a in info.assignments):
            return False
    return True


def _is_tensor_argument(info: ClassInfo, assignment: AttributeAssignment) -> bool:
    """`self.bounds = bounds` for a parameter annotated as a tensor (`bounds: Optional[Tensor]`),
    or a tensor computed from one by its methods (`self.radii = r.norm(2, dim=1)`, `r` known to
    be a tensor): the caller's tensor, or one made on its device, kept as a plain attribute,
    stays where it was when the module moves."""
    method = info.methods.get(assignment.method)
    value = assignment.value
    # `self.mask = (groups > 0) + 0.0` of `groups: Tensor`: arithmetic makes a tensor of it
    arithmetic = _arithmetic_root(value)
    if method is not None and arithmetic is not None and arithmetic in parameter_names(method) \
            and _annotated_as_tensor(method, arithmetic):
        return True
    # `self.L = torch.linalg.cholesky(cov)`: a torch op computes a new tensor from the argument
    computed = _torch_op_argument(value)
    root = root_name(computed if computed is not None else value)
    if method is not None and root == "self" and assignment.kind == TENSOR and isinstance(value, cst.Call):
        # `self.Graph = self.dataset.getSparseGraph().coalesce()`: computed from what the caller
        # handed in and kept (`self.dataset = dataset`), a tensor by the method that made it
        return _handed_in(info, _first_attribute(computed if computed is not None else value))
    if method is None or root in (None, "self", "cls") or root not in parameter_names(method):
        return False
    if computed is None and isinstance(value, cst.Subscript) and not _annotated_as_tensor(method, root):
        return False  # `self.t = table[:, :3]`: a slice of what may as well be an array (as the fast path reads it)
    # `self.weight = weight` that `F.nll_loss(..., weight=self.weight)` reads: a tensor
    return computed is not None or assignment.kind == TENSOR or (
        isinstance(value, cst.Name) and assignment.name in info.tensor_uses)


def _stores_an_item_of(statement: cst.CSTNode, name: str) -> bool:
    """`name[key] = value`: an item stored into what `name` holds, which keeps its other items."""
    return isinstance(statement, cst.Assign) and any(
        isinstance(t.target, cst.Subscript) and isinstance(t.target.value, cst.Name) and t.target.value.value == name
        for t in statement.targets)


def _handed_in_here(function: cst.FunctionDef, node: cst.CSTNode) -> Optional[str]:
    """The parameter of `function` that `node` is: `model` itself, or `self._model` kept from it
    (`self._model = model` in this function); None for anything else."""
    params = parameter_names(function)
    if isinstance(node, cst.Name):
        return node.value if node.value in params else None
    key = dotted_name(node)
    if key is None or not key.startswith("self."):
        return None
    for statement in descendants(function):
        if isinstance(statement, cst.Assign) and isinstance(statement.value, cst.Name) \
                and statement.value.value in params \
                and any(dotted_name(target.target) == key for target in statement.targets):
            return statement.value.value
    return None


def _reads_arrays_on_the_host(function: cst.FunctionDef) -> bool:
    """Does `function` call `.numpy()` on a tensor it did not take to the CPU (`out.data.numpy()`,
    not `out.cpu().numpy()`)? That raises for a GPU tensor: the function computes on the host."""
    for node in descendants(function):
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value == "numpy":
            receiver = node.func.value
            while isinstance(receiver, cst.Call) and isinstance(receiver.func, cst.Attribute) \
                    and receiver.func.attr.value in ("detach", "flatten", "squeeze", "float"):
                receiver = receiver.func.value
            if isinstance(receiver, cst.Attribute) and receiver.attr.value == "data":
                receiver = receiver.value
            if not (isinstance(receiver, cst.Call) and moves_to_cpu(receiver)):
                return True
    return False


def _moved_to_cpu_in(function: cst.FunctionDef, name: str) -> bool:
    """Does `function` move `name` to the CPU (`model.cpu()`, `model = model.to("cpu")`)?"""
    return any(isinstance(node, cst.Call) and moves_to_cpu(node) and isinstance(node.func, cst.Attribute)
               and isinstance(node.func.value, cst.Name) and node.func.value.value == name
               for node in descendants(function))


def _arithmetic_root(value: cst.CSTNode) -> Optional[str]:
    """`x` of `(x > 0) + 0.0`, `-x`, `x * 2`: arithmetic or a comparison of one name with numbers."""
    if not isinstance(value, (cst.BinaryOperation, cst.Comparison, cst.UnaryOperation)):
        return None
    while True:
        if isinstance(value, cst.Name):
            return value.value
        if isinstance(value, cst.Comparison) and len(value.comparisons) == 1 \
                and isinstance(value.comparisons[0].comparator, (cst.Integer, cst.Float)):
            value = value.left
        elif isinstance(value, cst.UnaryOperation) and not isinstance(value.operator, cst.Not):
            value = value.expression
        elif isinstance(value, cst.BinaryOperation) and isinstance(value.right, (cst.Integer, cst.Float)):
            value = value.left
        elif isinstance(value, cst.BinaryOperation) and isinstance(value.left, (cst.Integer, cst.Float)):
            value = value.right
        else:
            return None


def _ast_arithmetic_root(value: ast.AST) -> Optional[str]:
    """Fast path of `_arithmetic_root`."""
    if not isinstance(value, (ast.BinOp, ast.Compare, ast.UnaryOp)):
        return None
    number = (lambda node: isinstance(node, ast.Constant) and isinstance(node.value, (int, float)))
    while True:
        if isinstance(value, ast.Name):
            return value.id
        if isinstance(value, ast.Compare) and len(value.comparators) == 1 and number(value.comparators[0]):
            value = value.left
        elif isinstance(value, ast.UnaryOp) and not isinstance(value.op, ast.Not):
            value = value.operand
        elif isinstance(value, ast.BinOp) and number(value.right):
            value = value.left
        elif isinstance(value, ast.BinOp) and number(value.left):
            value = value.right
        else:
            return None


def _annotated_as_tensor(method: cst.FunctionDef, name: str) -> bool:
    """Is parameter `name` annotated with a tensor type (`x: Tensor`, `Optional[torch.FloatTensor]`,
    `"torch.Tensor"`)? The same test as the fast path's `_names_tensor_type`."""
    params = method.params
    for param in (*params.posonly_params, *params.params, *params.kwonly_params):
        if param.name.value == name and param.annotation is not None:
            stack: List[cst.CSTNode] = [param.annotation.annotation]
            while stack:
                node = stack.pop()
                if (isinstance(node, cst.Name) and node.value.endswith("Tensor")) \
                        or (isinstance(node, cst.Attribute) and node.attr.value.endswith("Tensor")) \
                        or (isinstance(node, cst.SimpleString) and "Tensor" in node.value):
                    return True
                stack.extend(children(node) if not isinstance(node, cst.Attribute) else [node.value])
    return False


def _first_attribute(node: cst.CSTNode) -> Optional[str]:
    """"dataset" of `self.dataset.getSparseGraph().coalesce()`."""
    while isinstance(node, (cst.Call, cst.Attribute, cst.Subscript)):
        inner = node.func if isinstance(node, cst.Call) else node.value
        if isinstance(node, cst.Attribute) and isinstance(inner, cst.Name) and inner.value == "self":
            return node.attr.value
        node = inner
    return None


def _handed_in(info: ClassInfo, name: Optional[str]) -> bool:
    """Is `self.<name>` only ever the caller's object as handed to a method (`self.dataset = dataset`)?"""
    assigned = [a for a in info.assignments if a.name == name]
    return bool(assigned) and all(
        isinstance(a.value, cst.Name) and a.value.value in parameter_names(info.methods[a.method])
        for a in assigned if a.method in info.methods)


def _torch_op_argument(value: cst.CSTNode) -> Optional[cst.BaseExpression]:
    """The first argument of `torch.<op>(x, ...)` (`torch.linalg.inv`, `torch.fft.rfft` too)
    for an op that returns a tensor computed from it; None for anything else."""
    if not isinstance(value, cst.Call) or not value.args or value.args[0].keyword is not None:
        return None
    name = dotted_name(value.func) or ""
    head, _, last = name.rpartition(".")
    if head not in _TORCH_OP_NAMESPACES or not returns_tensor(last) or last in _NOT_OPS:
        return None
    return value.args[0].value


def _keeps_callers_value(info: ClassInfo, assignment: AttributeAssignment, with_input: Set[str]) -> bool:
    """`def set_values(self, phi): self.phi = phi`, a setter that `forward` does not call: the
    caller's tensor, on one device, is no refresh that follows the module (PyPOTS' GMM layer,
    whose DataParallel replicas all read cuda:0's)."""
    method = info.methods.get(assignment.method)
    return method is not None and assignment.method not in with_input \
        and isinstance(assignment.value, cst.Name) and assignment.value.value in parameter_names(method) \
        and _only_stores(method)


def _only_stores(method: cst.FunctionDef) -> bool:
    """A setter: a method whose statements only store values on `self` (and check them),
    not a step that computes with what it is given (MONAI's PNDM `step_prk` keeps the
    current sample, on the device the sampling runs on)."""
    body = method.body.body if isinstance(method.body, cst.IndentedBlock) else [method.body]
    for line in body:
        if not isinstance(line, cst.SimpleStatementLine):
            return False
        for small in line.body:
            if isinstance(small, cst.Expr) and isinstance(small.value, (cst.SimpleString, cst.ConcatenatedString)):
                continue  # the docstring
            if not isinstance(small, (cst.Assign, cst.AnnAssign, cst.Assert, cst.Pass)):
                return False
    return True


def _is_container(node: cst.CSTNode) -> bool:
    """A list, tuple, set or dict of values (also `[t] * n`)."""
    if isinstance(node, cst.BinaryOperation):
        return _is_container(node.left)
    return isinstance(node, (cst.List, cst.Tuple, cst.ListComp, cst.Dict, cst.DictComp, cst.Set, cst.SetComp))


def _is_repeated_placeholder(node: cst.CSTNode) -> bool:
    """`[torch.zeros(1)] * n`: one tensor shared n times holds no data of its own; the
    slots are filled later (MONAI's DynUNet fills them from its sub-modules' forward)."""
    return (isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Multiply)
            and isinstance(node.left, (cst.List, cst.Tuple)) and len(node.left.elements) == 1)


def _is_constant(node: cst.CSTNode) -> bool:
    """`None`, `True`, a number or a string: what clears or resets a cache."""
    return (isinstance(node, cst.Name) and node.value in ("None", "True", "False")) or number_value(node) is not None \
        or isinstance(node, (cst.SimpleString, cst.ConcatenatedString))


class DiscardedTo(Rule):
    """A tensor's `.to(...)`, `.cuda()` or `.cpu()` as a statement of its own.

    ## What it does
    Reports `t.to(device)`, `t.cuda()` and `t.cpu()` written as a bare statement (also
    followed by a copy of the copy: `t.to(device).detach()`, or after an in-place method of
    the tensor: `noise.normal_(0, 1).to(device)`, and each move of a tuple
    statement: `speech.to(d), lengths.to(d)`, reported without a fix) when
    `t` is known to be a tensor: a value unpacked from a data-loader loop
    (`for x, y in loader:`, `for i, (x, y) in enumerate(train_loader):`, a name bound
    from `DataLoader(...)` or named like `trainloader`, `train_loader_1`,
    `data_loader_train`, a loader of a dict of loaders, `dataloaders[phase]`, a progress
    bar bound over one, `pbar = tqdm(train_loader)`, a name bound to one's enumeration,
    `pbar = tqdm(enumerate(train_loader))`, also in steps, each of several loaders zipped, or a
    dataset iterated for its samples, `self.dataset`) or taken from
    one with `next()` (`x, y = next(iter(loader))`, `next(self.train_iter)`), an item of
    a batch (`batch["x"]`, `batch[0]`, `v` of `for k, v in batch.items():`, also of a
    parameter called `batch`), an item of
    `tokenizer(..., return_tensors="pt")` (`enc["input_ids"]`), a tensor factory or
    tensor op (`t = torch.zeros(3)`, `torch.Tensor(...)`, `torch.from_numpy(...)`,
    `Variable(...)`, `t = a * b` of a tensor), what a method named for it returns
    (`t = self._data.to_tensor()`), the pieces of a split tensor (`for b in
    torch.split(x, n):`), the parts of a part of a batch unpacked
    again (`src, trg, _ = one2many` of `one2many, one2one = batch`), the output of a torch
    layer the class keeps (`h = self.fc(x)` of `self.fc = nn.Linear(3, 4)`; not an LSTM's
    tuple), the parts of a known
    module's output (`logits, aux = model(x)`; a name whose `.eval()`, `.parameters()` or
    `.named_modules()` is called is a module, and so is `self._model` in a method that calls
    `self._model.eval()`: not `.train()`, which trainers have), a parameter annotated `torch.Tensor` or the items of one
    annotated `Tuple[torch.Tensor, ...]`, a `self.<name>` that `__init__` assigns only
    tensors or that a module registers as a buffer or parameter (`self.inv_freq.to(x.device)`;
    `nn.Buffer(t)` is torch's, a project's `Buffer(size, "cpu")` is not), or a name used the
    way only tensors are, before or after the statement: a
    tensor-only method (`t.unsqueeze(0)`, `t.dim()`), `torch.zeros_like(t)`,
    array indexing (`t[:, 0]`), arithmetic (`t[1:] * mask`: of what has `.to()`, only a
    tensor does arithmetic), bound from a method arrays and tensors share
    (`m = v.data.repeat(n)`, `x.reshape(...)`: no array has `.to()`), or as an input of a
    known module (`model(t)`), an attribute chain torch takes as a tensor
    (`dataset.data.x` of `torch.cat([dataset.data.x, enc])`), a shape read (`n =
    t.shape[1]`: arrays and tensors have one, and of them only a tensor has `.to()`); inside
    `if torch.is_tensor(t):` or `if isinstance(t, torch.Tensor):` too, and after
    `assert isinstance(t, torch.Tensor)` (also of `d["x"]`); a name bound to a tensor in one
    arm of an `if` and to a value of unknown kind in the other (`if isinstance(data, Tensor):
    x = data` / `else: x = extract(data)`: the statement is a no-op on the tensor's way); a
    name that the next binding
    rebinds from a tensor-only method of its own value (`t.to("cpu")`, then
    `t = t.permute(1, 0, 2)`) held a tensor. Items of a batch
    under a loop's key (`for name in x.keys(): x[name].to(device)`) count like
    `batch["x"]`; so does an item assigned a tensor under a key variable
    (`d[key] = torch.tensor(d[key])`, until `key` is bound again). A whole batch is a
    tensor when the loader's `collate_fn` (a function of the project) returns one;
    otherwise it may be a batch object that moves in place (`BatchEncoding`, PyG's
    `Batch`), and is not reported. What torchvision's `ToTensor()` (or a `Compose` holding
    it) makes of an image is a tensor, and so is what a function of the project returns
    when its annotation says `-> torch.Tensor` (a dataset's classmethod too), or the part of
    the tuples it returns that is always one (`edges, edge_attr = get_edges_batch(n, b)` of
    a function returning `edges, torch.ones(m, 1)`), and what PyTorch's libraries load
    (`wav, sr = torchaudio.load(path)`: the waveform). An object of
    a project class whose own `to()` returns a new object (`return Batch(*moved)`, EGG's
    batches) is moved no more in place than a tensor: `batch = Batch(*batch)`, then
    `batch.to(device)`, is reported too. A CUDA guard around the statement changes nothing.

    ## Why is this bad
    Tensor moves are not in place: `t.to(device)` returns a copy on the device and
    leaves `t` where it was. The statement does nothing, `t` stays on the CPU, and the
    model on the GPU fails with `RuntimeError: Expected all tensors to be on the same
    device, but found at least two devices, cuda:0 and cpu!` (or, for
    `input.to(device)` before a layer, `Input type (torch.FloatTensor) and weight type
    (torch.cuda.FloatTensor) should be the same`). On a CPU-only machine nothing moves
    anyway, so the code works there and its tests pass.

    ## Example
    ```python
    for images, labels in train_loader:
        images.to(device)
        labels.to(device)
        loss = criterion(model(images), labels)
    ```

    ## Use instead
    ```python
    for images, labels in train_loader:
        images = images.to(device)
        labels = labels.to(device)
        loss = criterion(model(images), labels)
    ```

    ## When it is not reported
    - Modules: `model.to(device)` and `model.cuda()` move a module in place and are
      correct; so are names bound from `nn` constructors or the file's own modules.
    - Values of unknown kind: a whole batch (`for batch in loader: batch.to(device)`)
      may be a batch object whose `.to()` works in place (PyG's `Data`, Hugging Face's
      `BatchEncoding`, also when passed whole to a model), so may a tokenizer's result
      (`inputs = tokenizer(..., return_tensors="pt"); inputs.to(device)` is correct);
      an unannotated parameter may be a module; optimizers, lists, dicts and classes
      with their own `to` are not tensors.
    - The result is used: `x = x.to(device)`, `return x.cuda()`, `f(x.to(device))`.
    - The receiver is not a name or attribute (`torch.zeros(1).cuda(i)` warms up a GPU:
      there is nothing to assign back to).

    CUDA guards do not matter here: a discarded move is a bug on every machine.

    ## Fix
    `fix` assigns the result back to the same target: `x.to(device)` becomes
    `x = x.to(device)` (`self.t.cuda()` becomes `self.t = self.t.cuda()`), comments kept.
    A move of what the next statement deletes (`x.cpu()`, then `del x`: memory was to be
    freed) is dead code: the message says to remove the call, and `fix` leaves it.

    ## How to silence it
    - One line: `x.to(device)  # noqa: TDV203`.
    - A whole project: `extend-ignore = TDV203` in the `[flake8]` section.
    """

    code = "TDV203"
    name = "discarded-to"
    message = "{target}.{method}() returns a moved copy and leaves the tensor where it was; {remedy}"
    triggers = r"\.(?:to|cuda|cpu)\b"
    trigger_words = (".to", ".cuda", ".cpu")

    VALID = [
        "import torch\ndef train(model, loader, device):\n    model.to(device)\n    for x, y in loader:\n"
        "        x, y = x.to(device), y.to(device)\n        model(x).sum().backward()\n",
        "import torch\ndef step(batch, device):\n    batch.to(device)\n    return batch\n",
    ]
    INVALID = [
        "import torch\ndef train(model, loader, device):\n    for x, y in loader:\n"
        "        x.to(device)  # expect: TDV203\n        model(x, y)\n",
        "import torch\ndef pad(t: torch.Tensor, device):\n    t.cuda()  # expect: TDV101, TDV203\n    return t\n",
    ]

    @staticmethod
    def matches_function(node: ast.AST) -> bool:
        """Fast path: the function has a `.to(...)`/`.cuda()`/`.cpu()` call as a statement."""
        return any(isinstance(sub, ast.Expr) and any(
            isinstance(value, ast.Call) and _ast_discarded_move(value)
            for value in (sub.value.elts if isinstance(sub.value, ast.Tuple) else [sub.value]))
            for sub in walk_ast(node))

    def __init__(self, *args) -> None:
        super().__init__(*args)
        # bare moves of receivers of unknown kind, decided when the file ends: later lines
        # (`x.unsqueeze(0)`, `model(x)`) and an `__init__` defined later may tell
        self._deferred: List[Tuple[cst.Expr, cst.Call, Callable[[], bool], bool]] = []
        self._dead_moves: Set[cst.Call] = set()  # moves of what the next statement deletes

    def leave_Module(self, node: cst.Module) -> None:
        for statement, call, is_tensor, fixable in self._deferred:
            if is_tensor():
                self._report(statement, call, fixable)

    def visit_Expr(self, node: cst.Expr) -> None:
        if isinstance(node.value, cst.Tuple):
            # `speech.to(d), lengths.to(d)` as a statement: each copy discarded (no fix: one
            # statement of two assignments is the user's to write)
            for element in node.value.elements:
                self._check(node, element.value, fixable=False)
        else:
            self._check(node, node.value)

    def _deleted_next(self, statement: cst.Expr, receiver: cst.BaseExpression) -> bool:
        """`x.cpu()` then `del x`: the move is dead code (freeing memory was meant), not a
        copy to assign back."""
        line, block = self.ctx.parent(1), self.ctx.parent(2)
        if not isinstance(line, cst.SimpleStatementLine) or statement not in line.body:
            return False
        after = line.body[line.body.index(statement) + 1:]
        following = after[0] if after else None
        if following is None and isinstance(block, (cst.IndentedBlock, cst.Module)) and line in block.body:
            index = block.body.index(line) + 1
            nxt = block.body[index] if index < len(block.body) else None
            following = nxt.body[0] if isinstance(nxt, cst.SimpleStatementLine) else None
        if not isinstance(following, cst.Del):
            return False
        target = following.target
        deleted = [e.value for e in target.elements] if isinstance(target, cst.Tuple) else [target]
        return any(receiver.deep_equals(d) for d in deleted)

    def _check(self, node: cst.Expr, call: cst.BaseExpression, fixable: bool = True) -> None:
        # `x.to(device).detach()`: a copy of the moved copy (a method that keeps the kind), discarded too
        while isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute) \
                and call.func.attr.value in SAME_KIND_METHODS and isinstance(call.func.value, cst.Call):
            call = call.func.value
        if not (isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute)
                and call.func.attr.value in _DISCARDABLE):
            return
        receiver = call.func.value
        # `noise.normal_(0, 1).to(device)`: an in-place method returns its tensor, whose move is discarded
        while isinstance(receiver, cst.Call) and isinstance(receiver.func, cst.Attribute) \
                and _IN_PLACE_RE.match(receiver.func.attr.value) and receiver.func.attr.value not in _MODULE_IN_PLACE:
            receiver = receiver.func.value
        if dotted_name(receiver) is None and not (isinstance(receiver, cst.Subscript) and (
                subscript_key(receiver) or _is_keyed_by_name(receiver))):
            return  # `torch.zeros(1).cuda(i)`: a temporary made for its side effect, nothing to assign back to
        if self._deleted_next(node, receiver):
            self._dead_moves.add(call)
        kinds = self.ctx.kinds
        kind = kinds.kind_of(receiver)
        built_from = kinds.class_of(receiver)
        if built_from is not None and call.func.attr.value == "to" \
                and self.ctx.project_says(built_from, "copies_when_moved"):
            # `batch = Batch(*batch)`, `batch.to(device)`: the project's class returns a moved copy
            self._report(node, call, fixable, receiver)
        elif kind == TENSOR or (receiver is not call.func.value and kind is None):
            # (an in-place method with a trailing underscore is a tensor's: `normal_`, `uniform_`)
            self._report(node, call, fixable, receiver)
        elif kind is None:
            self._deferred.append((node, call, self._later_evidence(receiver), fixable))

    def _later_evidence(self, receiver: cst.CSTNode) -> Callable[[], bool]:
        """What may show, once the file is read, that `receiver` holds a tensor: a name used
        with a tensor-only method, indexed like an array (`x[:, 0]`), used in arithmetic
        (`v[1:] * mask`) or bound from an array method (`v.repeat(n)`) or passed to a known
        module (`model(x)`) anywhere in its function; `self.<name>` assigned only tensors
        in `__init__` (which may come later in the class)."""
        kinds = self.ctx.kinds
        facts = kinds.facts()
        attribute = kinds.self_attribute(receiver)
        local = dotted_name(receiver) in facts.names
        name = receiver.value if isinstance(receiver, cst.Name) else None
        dotted = dotted_name(receiver) if isinstance(receiver, cst.Attribute) and attribute is None else None
        binding = facts.bindings.get(name, 0) if name is not None else None  # the value moved here
        # (a tensor on one way through an `if`: the statement is a no-op on that way)
        tensor_on_a_path = name is not None and name in facts.tensor_on_another_arm
        info = self.ctx.current_class
        # (an object of a class that mimics tensors: `signal = AudioSignal(path)`, `signal.cpu()`)
        an_object = name is not None and name in facts.instances

        def is_tensor() -> bool:
            if attribute is not None and not local:
                # (a buffer or parameter of the class is a tensor: `self.inv_freq.to(x.device)`)
                return kinds.attribute_kind(*attribute) == TENSOR or (
                    info is not None and info.is_module and info.is_registered(attribute[1]))
            if dotted is not None:  # `dataset.data.x.to(d)` then `torch.cat([dataset.data.x, enc])`
                # (or set to a tensor later: `dataset.data.x = torch.cat([dataset.data.x, enc], 1)`)
                return facts.names.get(dotted) in (None, TENSOR) and dotted in facts.tensor_uses
            if name is not None and binding in facts.were_tensors.get(name, ()) or tensor_on_a_path:
                return True  # `atoks = atoks.permute(1, 0, 2)` next, no other binding between: a tensor
            return name is not None and facts.names.get(name) is None and not an_object and (
                name in facts.tensor_uses or name in facts.sliced or name in facts.module_inputs
                or name in facts.array_like)  # what has `.to()` and does arithmetic is a tensor
        return is_tensor

    def _report(self, statement: cst.Expr, call: cst.Call, fixable: bool = True,
                receiver: Optional[cst.BaseExpression] = None) -> None:
        assert isinstance(call.func, cst.Attribute)
        receiver = call.func.value if receiver is None else receiver
        target = cst.Module([]).code_for_node(receiver)
        method = call.func.attr.value
        text = cst.Module([]).code_for_node(statement.value if fixable else call)
        if len(text) > 40:
            text = f"{target}.{method}(...)"
        if call in self._dead_moves:  # (no fix: removing a line is the user's decision)
            self.report(call, self.message.format(target=target, method=method,
                                                  remedy=f"{target} is deleted next: remove the call"))
            return
        # x.to(device) -> x = x.to(device) (x.to(device).detach() -> x = x.to(device).detach())
        assign = cst.Assign(targets=[cst.AssignTarget(receiver)], value=statement.value)
        self.report(call, self.message.format(target=target, method=method,
                                              remedy=f"assign it: {target} = {text}"),
                    fix=Fix().replace(statement, assign) if fixable else None)


# Attributes a framework moves itself: Lightning sends `example_input_array` where the module is.
_MOVED_BY_FRAMEWORKS = frozenset({"example_input_array"})
# Tensor methods that raise for a GPU tensor: Python callables applied element by element.
_CPU_ONLY_METHODS = ("apply_", "map_", "map2_")
_DISCARDABLE = frozenset({"to", "cuda", "cpu"})
# DataParallel, DistributedDataParallel (`DDP`), and the names that say a model holds one
_PARALLEL_WRAPPER_RE = re.compile(r"DataParallel|^DDP$|(^|_)ddp(_|$)|parallel", re.I)
# A tensor's in-place methods (`normal_`, `fill_`, `mul_`): they return the tensor itself.
_IN_PLACE_RE = re.compile(r"^[a-z][a-z0-9_]*[a-z0-9]_$")
# ... which modules have too (`model.requires_grad_(False).to(device)` moves the module in place)
_MODULE_IN_PLACE = frozenset({"requires_grad_", "share_memory_"})


def _ast_discarded_move(call: ast.Call) -> bool:
    """`x.to(d)`, or a copy of it (`x.to(d).detach()`), as `visit_Expr` reads a statement."""
    while isinstance(call.func, ast.Attribute) and call.func.attr in SAME_KIND_METHODS \
            and isinstance(call.func.value, ast.Call):
        call = call.func.value
    return isinstance(call.func, ast.Attribute) and call.func.attr in _DISCARDABLE


def _is_keyed_by_name(node: cst.Subscript) -> bool:
    """`x[name]`: an item of a named container under a variable key (the loop's `name`)."""
    return dotted_name(node.value) is not None and len(node.slice) == 1 \
        and isinstance(node.slice[0].slice, cst.Index) and isinstance(node.slice[0].slice.value, cst.Name)


def _passes_as_device(function: cst.FunctionDef, name: str) -> bool:
    """Does `function` pass its parameter `name` as a `device=` keyword somewhere, and put
    nothing on the CPU on purpose (`device="cpu"`, `.cpu()`: torchao's expected values)?"""
    passes = False
    for node in descendants(function):
        if isinstance(node, cst.Arg) and node.keyword is not None and node.keyword.value == "device":
            if isinstance(node.value, cst.Name) and node.value.value == name:
                passes = True
            elif string_value(node.value) == "cpu":
                return False
        elif isinstance(node, cst.Call) and moves_to_cpu(node):
            return False
    return passes


def _placed_on_its_way(value: cst.BaseExpression, method: Optional[cst.FunctionDef] = None) -> bool:
    """`self._make_masks(n).to(att_ws.device).unsqueeze(1)`, `torch.zeros(n, device=x.device)`,
    `x.new_ones(3)`: a link of the chain puts it on a device (not the CPU); in `method`, also
    through a local every binding of which is placed so (`emb = torch.cat(...).to(x.device)`,
    then `self.sin_cached = emb.sin()`)."""
    node: cst.BaseExpression = value
    while isinstance(node, cst.Call):
        if keyword(node, "device") is not None or (is_device_move(node) and not moves_to_cpu(node)):
            return True
        if not isinstance(node.func, cst.Attribute):
            return False
        if node.func.attr.value.startswith("new_") or node.func.attr.value == "type_as":
            return True
        node = node.func.value
    if method is None or not isinstance(node, cst.Name) or node is value:
        return False
    bound = assigned_values(method, {node.value})
    return bool(bound) and all(_placed_on_its_way(v) for v in bound)
