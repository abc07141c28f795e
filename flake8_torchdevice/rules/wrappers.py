"""Family 4: multi-device wrappers that capture a module before it is on its device."""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from typing import List, Optional, Sequence, Set, Tuple

import libcst as cst

from ..analysis import (Scope, dotted_name, first_argument, is_device_move, keyword, last_identifier, method_call,
                        move_target, moves_to_cpu, parameter_names, positional_args, string_value)
from ..analysis.syntax import exclusive_arms, tests_exclude, walk_ast
from ..analysis.kinds import MODULE
from ..analysis.project import DEVICE_WORD_RE, READS_MODEL_RE
from .base import Fix, Rule, names_read, trigger_union

DATA_PARALLEL = {"torch.nn.DataParallel", "torch.nn.parallel.DataParallel",
                 "torch.nn.parallel.data_parallel.DataParallel"}
DATA_PARALLEL_NAME = "torch.nn.DataParallel"
# (DataParallel takes no rank: a parameter that tells a DataParallel builder its device)
_DEVICE_PARAMETER_RE = re.compile(r"device|gpu|cuda", re.I)
# Library functions that build a model on the CPU and move it nowhere: torchvision's
# `models.resnet50(weights=...)`, timm's `create_model(name)`.
_LIBRARY_BUILDER_RE = re.compile(r"torchvision\.models\.(\w+\.)*[a-z]\w*|timm(\.models)?\.create_model"
                                 # `ResNetModel.from_pretrained(path)`, `AutoModelForCausalLM.from_pretrained(...)`
                                 r"|(transformers|diffusers)\.(\w+\.)*\w*(Model|For[A-Z]\w*)\.from_pretrained")
_WRAPPER_NAMES = frozenset({"DataParallel", "DistributedDataParallel", "MMDistributedDataParallel"})
DISTRIBUTED = {"torch.nn.parallel.DistributedDataParallel",
               "torch.nn.parallel.distributed.DistributedDataParallel",
               # OpenMMLab's subclasses: the same checks when they are built
               "mmcv.parallel.MMDistributedDataParallel", "mmcv.parallel.distributed.MMDistributedDataParallel",
               "mmengine.model.MMDistributedDataParallel",
               "mmengine.model.wrappers.MMDistributedDataParallel"}


class WrapBeforeMove(Rule):
    """`DataParallel` / `DistributedDataParallel` wrapping a module that is not on its device yet.

    ## What it does
    Reports `nn.DataParallel(m)` and `DistributedDataParallel(m, device_ids=...)`
    (however they were imported; OpenMMLab's `MMDistributedDataParallel` too) when
    `m` is not on its device in time:
    - `DistributedDataParallel` settles devices when it is built, so `m` must be
      moved before the wrap: an earlier `m.to(...)` or `m.cuda()` statement or
      assignment in the enclosing function or module, or the argument itself being
      `m.to(...)`. Reported when `m` was built in this scope by calling a class
      (`model = Net(...)`, `DDP(Net(), ...)`, `self.m` in `__init__`) or a library's
      model builder that moves nothing (`torchvision.models.resnet50(...)`,
      `timm.create_model(name)`, a transformers or diffusers model's
      `from_pretrained(path)`, unless keywords may carry a device: `device_map=`), or by a
      function of the project that moves nothing and is told no device (also unpacked:
      `model, tokenizer = load_model(name)`), and not moved
      first, or when this scope moves `m` only after the wrap. A module another helper
      returned (`model = build_detector(cfg)`) may be moved already; it is reported
      when the wrapper is moved right after (`DDP(model).cuda()`, or `ddp = DDP(model)`
      then `ddp.to(device)`), which says it was not. A module moved to the CPU just
      before the wrap (`model.to("cpu")`) is not on its device either: moving the
      wrapper to the device after it comes too late.
    - `DataParallel` checks devices at its first forward, so moving the module
      before the wrap or the wrapper after it (`nn.DataParallel(m).to(device)`,
      `model = nn.DataParallel(model)` then `model.cuda()`) are both correct. It is
      reported when `m` was built in this scope and neither the module before the
      wrap nor the wrapper after it is moved in the scope, and when the wrapper (or
      the module in it) is moved to the CPU (`.cpu()`, `.to("cpu")`, or `.to(self.device)`
      where the scope set `self.device = "cpu"` on a path a user's choice takes, not
      only where CUDA is absent) and then run,
      returned, stored or passed on: DataParallel still runs on every visible GPU.
    - A sub-module wrapped in `__init__` of a model (`self.enc =
      nn.DataParallel(Enc())`) is reported when this file, or another file of the
      project that imports the model, builds the model and runs it (`model = Net()`
      ... `model(x)`) without moving it first. Likewise a wrapper of a module built
      in a function and returned (`return nn.DataParallel(Net())`), when a caller in
      the file or the project runs the result unmoved (`net = make()` ... `net(x)`),
      or when the function is told the device (a parameter named like one:
      `def get_detector(path, device)`) and moves the module nowhere. A property
      (`@cached_property def model(self)`) that returns the wrapper is reported when the
      file runs `self.model(x)` and never moves `self.model` nor hands it to a call that
      might (saving or loading a checkpoint does not).

    "Moved before the wrap" holds per path: a move on one arm of an `if` only
    (`if args.cuda: model.cuda()`, then an unconditional wrap) leaves the other arm's
    module on the CPU, and a user's flag can be false on a machine with a GPU. A move
    on every arm that falls through counts, and so does a move skipped only where CUDA
    is certainly absent (`if torch.cuda.is_available(): model.cuda()`): there
    `DataParallel` runs the module as it is. The same holds for the arms of a conditional
    expression (`net = Net().cuda(rank) if torch.cuda.is_available() else Net().to(device)`). A module built again and moved on one arm
    only (`if args.resume: model = Net().to(device)`) leaves the other arm's module where
    it was built; `model.eval()`, `nn.SyncBatchNorm.convert_sync_batchnorm(model)` and a
    copy (`net = model`) are the same module, built (or handed in) as before, and
    `student, teacher = student.cuda(), teacher.cuda()` moves both. A module handed in (or returned by a
    helper) that the scope moves to a device on its other paths (`if len(gpus) > 1:
    model = nn.DataParallel(model)` / `else: model = model.to(device)`, or an earlier
    arm that returns `model.to(device)`) is the scope's to place: the `DataParallel`
    path that leaves it unmoved is reported, even when it returns the wrapper; so is a
    `DistributedDataParallel(model, device_ids=...)` on a path that leaves unmoved a module
    the scope moves on another (`if ddp: model = build(n); model = DDP(model, ...)` / `else:
    model = build(n).to(device)`: the builder returns it on the CPU). Two `if`
    statements that test one name against different constants exclude each other: a
    move under `if kind == "sharded":` does not reach a wrap under `if kind == "ddp" or
    kind == "oss":` (nor does a rebinding there, `model = sharded`); so do two that test
    one flag's truth oppositely: a wrap under `if self.parallel:` and a move under `if not
    self.parallel:` leave the wrapped module on the CPU.

    CUDA guards do not silence this rule: wrapping before moving breaks on GPU
    machines, exactly where a guard such as `if torch.cuda.device_count() > 1:` is
    true. A move made earlier under a guard still counts as a move.

    ## Why is this bad
    `DistributedDataParallel` given `device_ids` for a module still on the CPU
    raises `ValueError: DistributedDataParallel device_ids and output_device
    arguments only work with single-device/multiple-device GPU modules or CPU
    modules, but got device_ids [0], output_device None, and module parameters
    {device(type='cpu')}.` `DataParallel` checks at its first forward that every
    parameter and buffer is on `device_ids[0]`, and raises `RuntimeError: module
    must have its parameters and buffers on device cuda:0 (device_ids[0]) but found
    one of them on device: cpu` when it is not. On a machine without CUDA,
    `DataParallel` just runs the module, and with a single GPU it moves the module
    to `cuda:0` itself, so only a machine with two or more GPUs shows the bug.

    ## Example
    ```python
    model = Net()
    ddp = DistributedDataParallel(model, device_ids=[rank])

    model = Net()
    if torch.cuda.device_count() > 1:
        model = nn.DataParallel(model)   # nothing ever moves it
    ```

    ## Use instead
    ```python
    model = Net().to(rank)
    ddp = DistributedDataParallel(model, device_ids=[rank])

    model = Net().to(device)
    if torch.cuda.device_count() > 1:
        model = nn.DataParallel(model)
    ```

    ## When it is not reported
    - The module was moved earlier in the same scope on every path to the wrap, or
      the argument is the move itself
      (`DistributedDataParallel(model.to(rank), device_ids=[rank])`).
    - The module was built by a function that returns it moved (`return
      model.cuda()`, in this file or imported from the project) or by a class that
      moves itself while it is built (`self.to(device)` in `__init__`).
    - `DataParallel` whose wrapper is moved to a device later in the scope.
    - `DataParallel` given one device (`device_ids=[args.gpu]`): it moves the module to
      that device itself while it is built. (With the default `device_ids`, every
      visible GPU, a one-GPU machine hides the bug the same way; two GPUs show it.)
    - `DistributedDataParallel` without `device_ids` or `output_device`, unless the
      module is moved after the wrap (also in the same expression:
      `DDP(model).to(device)`): a CPU module there is plain CPU training.
    - A module handed in from outside (a parameter, `self.model` outside
      `__init__` or bound from a parameter in it) or returned by a helper
      (`model = build(cfg)`) that this scope moves on no path: it may have been
      moved already. A move on another path counts only when it is to a device, not
      `.cpu()`. (Not when the helper is a function of the project whose every
      return is a module it built and never moved: `m = SSD300(...); ...; return m`,
      nor when it moves nothing at all and is told no device: no move, no call as a
      statement but prints and logs, no device parameter, as a registry dispatch
      `return MODELS[arch](**cfg)`.)
    - A `DataParallel` wrapper handed out of the scope (returned, passed to a call,
      put in a list or dict, stored on another object: `nets.fan = fan`): whoever gets
      it may move it before its first forward (unless a caller is seen running it
      unmoved, above). Nor one moved to the CPU and then only
      saved (`torch.save(model.state_dict(), path)`), or moved back to its device.
    - A sub-module wrapped in `__init__` of a model that this file never builds, moves
      before running, or hands to something else (`train(model)`); or of a model that
      moves itself while it is built.
    - An argument that is not a name or a class-like (capitalised) call
      (`DataParallel(build())`).
    - A module whose class, defined earlier in the file, moves itself or its layers to
      a device while it is built (`self.fc = nn.Linear(2, 2).cuda(rank)` or
      `self.to(device)` in `__init__` or a method it calls).
    - Code that only runs where CUDA is certainly absent (the `else:` of
      `if torch.cuda.is_available():`), where `DataParallel` is a no-op; not an arm a
      user flag chose (`if ctx == "cpu":`): the GPUs are still there.

    ## Fix
    `flake8-torchdevice fix` moves the move before the wrap of a
    `DistributedDataParallel`: when the wrap is a statement of its own
    (`ddp = DDP(model, ...)`) and a later statement of the same block moves the module
    or the wrapper (`model.to(device)`, `ddp = ddp.to(device)`), that statement becomes
    a move of the module right before the wrap (`model.to(device)`), with its trailing
    comment; a module built in place gets the move inside (`DDP(Net().to(device), ...)`).
    Not fixed when a statement between them uses a name the move uses, when the move
    has a comment above it, or when it is in another block: there the order may
    matter. A `DataParallel` finding has no later move to bring forward (that would
    have been correct), so it has no fix.

    ## How to silence it
    - One line: `model = nn.DataParallel(model)  # noqa: TDV401`.
    - A whole project: `extend-ignore = TDV401` in the `[flake8]` section.
    """

    code = "TDV401"
    name = "wrap-before-move"
    message = ("{name} wraps a module that is not on its device yet; move it first, "
               "e.g. {short}(model.to(device){extra})")
    cpu_message = ("DataParallel moved to the CPU still runs on every visible GPU and fails there; "
                   "move it to its device instead, e.g. nn.DataParallel(model).to(device)")
    # The moves too: a class whose `__init__` moves its layers builds modules that are
    # not on the CPU, so that `__init__` must be kept by the fast path (`matches_function`).
    trigger_parts = ((("DataParallel",), r"\b(?:DataParallel|(?:MM)?DistributedDataParallel)\b"),
                     ((".to", ".cuda"), r"\.(?:to|cuda)\b"))
    triggers, trigger_words = trigger_union(trigger_parts)

    VALID = [
        "import torch.nn as nn\nmodel = Net()\nmodel.to(device)\nmodel = nn.DataParallel(model)\n",
        "from torch.nn.parallel import DistributedDataParallel as DDP\nddp = DDP(Net().to(rank), device_ids=[rank])\n",
        "import torch.nn as nn\nmodel = nn.DataParallel(Net()).to(device)\n",
        "import torch\nmodel = Net()\nif torch.cuda.device_count() > 1:\n    model = torch.nn.DataParallel(model)\n"
        "model = model.to(device)\n",
    ]
    INVALID = [
        "import torch.nn as nn\nmodel = Net()\nmodel = nn.DataParallel(model)  # expect: TDV401\n",
        "from torch.nn.parallel import DistributedDataParallel as DDP\nmodel = Net()\nddp = DDP(model, device_ids=[rank])  # expect: TDV401\n",
        "import torch\nif torch.cuda.is_available():\n    net = Net()\n"
        "    net = torch.nn.parallel.DistributedDataParallel(net, device_ids=[0])  # expect: TDV401\n    net.to(0)\n",
    ]

    @staticmethod
    def matches_function(node: ast.AST) -> bool:
        """Fast path: the function names a wrapper, or moves its `self` or a part of it
        (`self.fc = nn.Linear(2, 2).cuda(rank)`, `self.to(device)`): class facts read it."""
        params = getattr(node, "args", None)
        first = params.args[0].arg if params is not None and params.args else None

        def is_move(sub: ast.AST) -> bool:
            return isinstance(sub, ast.Call) and isinstance(sub.func, ast.Attribute) and sub.func.attr in ("to", "cuda")

        def is_own(target: ast.AST) -> bool:
            return isinstance(target, ast.Name) and target.id == first

        for sub in walk_ast(node):
            if isinstance(sub, ast.Name) and sub.id in _WRAPPER_NAMES:
                return True
            if isinstance(sub, ast.Attribute) and sub.attr in _WRAPPER_NAMES:
                return True
            if isinstance(sub, ast.alias) and sub.name.rsplit(".", 1)[-1] in _WRAPPER_NAMES:
                return True  # imported inside the function
            if first is None:
                continue
            if is_move(sub) and is_own(sub.func.value):  # type: ignore[attr-defined]
                return True  # self.to(device)
            if isinstance(sub, (ast.Assign, ast.AnnAssign)) and sub.value is not None \
                    and any(isinstance(t, ast.Attribute) and is_own(t.value)
                            for t in (sub.targets if isinstance(sub, ast.Assign) else [sub.target])) \
                    and any(is_move(c) for c in walk_ast(sub.value)):
                return True  # self.fc = nn.Linear(2, 2).cuda(rank)
        return False

    def visit_Call(self, node: cst.Call) -> None:
        target = move_target(node)
        if target is not None or moves_to_cpu(node):
            self._on_move(node, target or dotted_name(method_call(node, "to", "cpu")))
            return
        qualified = self.ctx.resolve(node.func)
        if qualified not in DATA_PARALLEL and qualified not in DISTRIBUTED:
            return
        if self._runs_without_cuda():
            return  # without CUDA, DataParallel calls the module directly
        module = first_argument(node, "module")
        if module is None:
            return
        distributed = qualified in DISTRIBUTED
        if not distributed and _one_device(node):
            return  # DataParallel(m, device_ids=[gpu]) moves m to that one device itself
        if is_device_move(module):
            if not distributed:  # moved in place; still to be followed to a later CPU move
                self._wrap_data_parallel(node, move_target(module), False, moved=True)
            return
        scope = self.ctx.function_scope()
        key = dotted_name(module)
        # placement per path: moved on every path that reaches the wrap
        # (a module moved to the CPU last is not on a GPU: nekRS-ML's XPU workaround moves it
        # to the CPU for the wrap and back to its device after it, too late for DDP)
        # (a part of a module moved before is moved: `self.model.to(d)`, then `DataParallel(self.model.features)`)
        moved_before = key is not None and any(
            (moved in scope.moved or self._moved_under_the_same_tests(moved))
            and moved not in scope.notes.get("on the cpu", ()) and not self._moved_only_elsewhere(moved)
            for moved in _this_or_its_owners(key))
        if distributed and moved_before:
            return
        built_here = not moved_before and (
            (isinstance(module, cst.Call) and self._builds_on_cpu(module))
            or (key is not None and self._built_here(key, scope)))
        if not distributed:
            self._wrap_data_parallel(node, key, built_here, moved=moved_before)
            return
        # DDP without device_ids on a CPU module is plain CPU training: nothing to move.
        gpu_intended = _wants_gpus(node)
        message = self._message(qualified)
        fix = _move_before_wrap(self.ctx.stack, key, node, module)
        # A module a helper returned may have been moved there; moving the wrapper right
        # after says it was not (`MMDistributedDataParallel(build_detector(cfg)).cuda()`).
        from_helper = not moved_before and key is not None and (
            key in scope.note("returned by a call", set) or self._rebound_only_elsewhere(key))
        if (gpu_intended and built_here) or (self._moved_as_wrapped(node) and (built_here or from_helper)):
            # `DDP(model).to(device)` (pytorch-lightning's RL example): the move comes too late
            self.report(node, message, fix=fix)
        elif key is not None:
            wrapper = self._assigned_to(node) if built_here or from_helper else None
            scope.note("wraps waiting", list).append(_Wait(node, message, key, wrapper, report_on_move=True,
                                                           fix=fix, arms=self.ctx.arms(), tests=self.ctx.tests()))

    def _rebound_only_elsewhere(self, key: str) -> bool:
        """Was `key`, returned by a call, bound again only on a path that excludes the wrap?"""
        rebound = self.ctx.function_scope().notes.get("rebound after a call", {}).get(key)
        if rebound is None:
            return False
        arms, tests = rebound
        return exclusive_arms(arms, self.ctx.arms()) or tests_exclude(tests, self.ctx.tests())

    def _moved_under_the_same_tests(self, key: str) -> bool:
        """Was `key` moved in an `if` whose flags the wrap's `if`s test the same way
        (`if not cfg["no_dis"]: netD = netD.to(d)`, later `if not cfg["no_dis"]: DDP(netD)`,
        ProPainter's trainer): every path to the wrap went through the move."""
        here = set(self.ctx.tests())
        return any(target == key and tests and all(
            isinstance(value, bool) and (name, value) in here for name, value in tests)
            for target, tests in self.ctx.function_scope().notes.get("device move tests", ()))

    def _moved_only_elsewhere(self, key: str) -> bool:
        """Was `key` moved only in `if` arms that exclude where the wrap is, by the value of
        one name (`if kind == "sdp": model.cuda()` then `if kind == "ddp": DDP(model)`)?"""
        here = self.ctx.tests()
        moves = [tests for target, tests in self.ctx.function_scope().notes.get("device move tests", ())
                 if target == key]
        return bool(moves) and all(tests_exclude(tests, here) for tests in moves)

    def _runs_without_cuda(self) -> bool:
        """In an arm that only runs where CUDA is certainly absent (the `else:` of
        `torch.cuda.is_available()`), not one a user flag chose (`if ctx == "cpu":`, EduNLP's
        `set_device`): with GPUs present, DataParallel still uses them."""
        return any(self.ctx.guards.cuda_absent(test, in_body) for _, test, in_body in self.ctx.enclosing_tests())

    def _assigned_to(self, node: cst.Call) -> Optional[str]:
        """`ddp = DDP(model)`: the name the wrapper is bound to."""
        statement = self.ctx.parent()
        if isinstance(statement, cst.Assign) and statement.value is node and len(statement.targets) == 1:
            return dotted_name(statement.targets[0].target)
        return None

    def _moved_as_wrapped(self, node: cst.Call) -> bool:
        """`DDP(model).to(device)`, `DDP(model).cuda()`: the wrapper moved in the same expression."""
        attribute, call = self.ctx.parent(), self.ctx.parent(2)
        return isinstance(attribute, cst.Attribute) and attribute.value is node and isinstance(call, cst.Call) \
            and call.func is attribute and is_device_move(call)

    def _wrap_data_parallel(self, node: cst.Call, key: Optional[str], built_here: bool, moved: bool = False) -> None:
        """DataParallel needs the module on its device by the first forward: a move of
        the wrapper after the wrap is fine, a move to the CPU is not."""
        # nn.DataParallel(m).to(device), .cuda(), also through `.eval()` and other links
        # that return the same module: the wrapper is moved before its first forward.
        depth = 1
        while isinstance(self.ctx.parent(depth), cst.Attribute):
            link = self.ctx.parent(depth + 1)
            if not (isinstance(link, cst.Call) and link.func is self.ctx.parent(depth)):
                break
            if moves_to_cpu(link) or self._to_a_chosen_cpu(link):
                self.report(node, self.cpu_message)
                return
            if is_device_move(link):
                return
            if method_call(link, *_SAME_MODULE) is None:
                break
            depth += 2
        wrapper = None
        statement = self.ctx.parent(depth)
        returned = isinstance(statement, cst.Return)
        if _hands_out(statement) and not returned:
            return  # `nets.g = nn.DataParallel(Net())`: whoever gets it may move it
        if isinstance(statement, cst.Assign) and len(statement.targets) == 1:
            wrapper = dotted_name(statement.targets[0].target)
        scope = self.ctx.function_scope()
        arms = self.ctx.arms()
        tests = self.ctx.tests()
        # moved to a device before, on a path that does not reach the wrap (the other arm of
        # an `if` around the wrap, an arm of an earlier `if` that returns, or an `if` whose
        # test excludes the wrap's: `if not self.parallel: model.cuda()`)
        elsewhere = not moved and any(
            target == key and (exclusive_arms(arms, where) or bool(returning - {node_id for node_id, _ in arms})
                               or tests_exclude(tests, where_tests))
            for (target, where, returning), (_, where_tests) in zip(scope.notes.get("device moves", ()),
                                                                    scope.notes.get("device move tests", ())))
        # `return nn.DataParallel(model)` of a module handed in: the caller may move it, unless
        # this scope moves it on its other paths (judged at the end of the scope)
        gone = returned and not built_here
        scope.note("wraps waiting", list).append(
            _Wait(node, self._message(DATA_PARALLEL_NAME), key, wrapper, report_on_move=False,
                  built_here=built_here, returned=returned and built_here, arms=arms, tests=tests,
                  elsewhere=elsewhere, gone=gone, placed=moved))

    def visit_Name(self, node: cst.Name) -> None:
        self._on_use(node, node.value)

    def visit_Attribute(self, node: cst.Attribute) -> None:
        if isinstance(node.value, cst.Name) and node.value.value == "self" \
                and self.ctx.function_scope().notes.get("wraps waiting"):
            self._on_use(node, f"self.{node.attr.value}")

    def _on_use(self, node: cst.BaseExpression, name: Optional[str]) -> None:
        """A DataParallel wrapper handed out (`return net`, `train(net)`, `{"g": net}`)
        may be moved by whoever gets it; one moved to the CPU and then run, handed out
        or stored fails at its forward on a machine with a GPU."""
        waiting = self.ctx.function_scope().notes.get("wraps waiting")
        if not waiting or name is None:
            return
        parent = self.ctx.parent()
        handed_out = _hands_out(parent) and not self._read_by_call(parent)
        runs = _runs_or_keeps(node, parent, self.ctx)
        if not handed_out and not runs:
            return
        for wait in [w for w in waiting if not w.report_on_move and name in (w.wrapper, w.module)]:
            if wait.gone or any(outer is wait.node for outer in self.ctx.stack):
                continue  # returned already, or `m = DP(m)` itself
            if wait.on_cpu and runs and name == wait.wrapper:
                waiting.remove(wait)
                self.report(wait.node, self.cpu_message)
            elif isinstance(parent, cst.Return) and name == wait.wrapper and wait.built_here:
                wait.returned = True  # judged by the callers that run it
            elif handed_out and name == wait.wrapper and not wait.on_cpu and not wait.kept:
                if _returned(parent, self.ctx) and (wait.elsewhere or self.ctx.arms() == wait.arms):
                    wait.gone = True  # later moves are on other paths: kept to judge by them
                elif wait.elsewhere:
                    wait.kept = True  # the scope places the module itself: whoever gets it does not
                else:
                    waiting.remove(wait)

    def leave_AnnAssign(self, node: cst.AnnAssign) -> None:
        if node.value is not None:  # `agent: PPOAgent = PPOAgent(envs)`
            self._bound([node.target], node.value)

    def leave_Assign(self, node: cst.Assign) -> None:
        self._bound([target.target for target in node.targets], node.value)
        if isinstance(node.value, cst.Call) and not self._builds_on_cpu(node.value):
            # `model, loader, loss_fn = get_problem(rank)`: each part came from the call
            from_call = self.ctx.function_scope().note("returned by a call", set)
            for target in node.targets:
                if isinstance(target.target, (cst.Tuple, cst.List)):
                    from_call.update(filter(None, (dotted_name(e.value) for e in target.target.elements)))

    def _read_by_call(self, parent: Optional[cst.CSTNode]) -> bool:
        """Is the use an argument of a call that saves, loads or logs the module, told no
        device (`model = load_chkpt(model, path)`): it stays where it is?"""
        call = self.ctx.parent(2)
        return isinstance(parent, cst.Arg) and isinstance(call, cst.Call) \
            and READS_MODEL_RE.search(last_identifier(call.func) or "") is not None \
            and not any(DEVICE_WORD_RE.search(cst.Module([]).code_for_node(arg.value)) for arg in call.args)

    def _to_a_chosen_cpu(self, move: cst.Call) -> bool:
        """`.to(self.device)` where this scope set `self.device = "cpu"` on a path a user's
        choice takes, CUDA present or not (HugsVision's `force_cpu`)."""
        argument = first_argument(move, "device")
        key = dotted_name(argument) if argument is not None else None
        return key is not None and key in self.ctx.function_scope().notes.get("chosen cpu", {})

    def _bound(self, targets: Sequence[cst.BaseExpression], value: cst.BaseExpression) -> None:
        # `model = Net()` builds a module on the CPU; `model = build(cfg)` or
        # `self.model = model` may have been moved already.
        scope = self.ctx.function_scope()
        # (`AddLossModule(self.model, criterion)` around the caller's model, maybe moved: handed in;
        # so is an attribute a base class's `__init__` set; `build_engine(cfg, aot_model=self.model)`
        # around a model moved here holds it where it is)
        built = isinstance(value, cst.Call) and self._builds_on_cpu(value) and not any(
            (self.ctx.kinds.is_module(arg.value) or _ENDS_LIKE_A_MODEL_RE.search(name)) and (
                name in scope.note("handed in", set)
                or (name.startswith("self.") and name not in scope.note("constructed", set))
                or any(owner in scope.moved for owner in _this_or_its_owners(name)))
            for arg in value.args for name in (dotted_name(arg.value),) if name)
        chosen_cpu = scope.note("chosen cpu", dict)  # name -> where it was set to "cpu" (`_arms`)
        cpu = (string_value(value) or "").lower() == "cpu" and not self._runs_without_cuda()
        for key in filter(None, map(dotted_name, targets)):
            if cpu:
                # `if force_cpu: self.device = "cpu"`: a CPU device chosen where GPUs may be present
                chosen_cpu[key] = self.ctx.arms()
            elif key in chosen_cpu and not exclusive_arms(chosen_cpu[key], self.ctx.arms()):
                del chosen_cpu[key]  # set again on the same path
        constructed, handed_in = scope.note("constructed", set), scope.note("handed in", set)
        from_call = scope.note("returned by a call", set)
        on_cpu = scope.notes.get("on the cpu", set())
        # `model = model.eval()`, `model = nn.SyncBatchNorm.convert_sync_batchnorm(net)`: the same
        # module, built here or handed in as before
        same = self._same_module_as(value)
        for target in targets:
            key = dotted_name(target)
            if key is None:
                if built and isinstance(target, (cst.Tuple, cst.List)):
                    # `model, tokenizer = load_model(name)`: a function of the project that moves
                    # nothing (or a class) made what it returns on the CPU
                    for element in filter(None, (dotted_name(e.value) for e in target.elements)):
                        constructed.add(element)
                        handed_in.discard(element)
                        from_call.discard(element)
                        on_cpu.discard(element)
                continue
            if not is_device_move(value) and same != key:
                # a new module: the moves of the one this name held before say nothing of it
                moves = scope.notes.get("device move tests")
                if moves:
                    moves[:] = [move for move in moves if move[0] != key]
            if not moves_to_cpu(value):
                on_cpu.discard(key)  # a new module, or this one moved (`model = model.cuda()`)
            if same is not None and any(same in note for note in (constructed, handed_in, from_call)):
                for note in (constructed, handed_in, from_call):
                    (note.add if same in note else note.discard)(key)
                continue
            if is_device_move(value) and not moves_to_cpu(value):
                # `model = Net().to(device)` on one arm of an `if`: placement per path
                # (`scope.moved`) says whether it is on its device at the wrap; the module
                # the other arms hold is still the one built (or handed in) before
                if move_target(value) is None:
                    self._built_moved_elsewhere(key)
                continue
            if isinstance(value, cst.Call) and not built and move_target(value) is None:
                from_call.add(key)  # `model = build_detector(cfg)`
            elif key in from_call:
                from_call.discard(key)
                # (where: a path that excludes a later wrap still wraps what the call returned)
                scope.note("rebound after a call", dict)[key] = (self.ctx.arms(), self.ctx.tests())
            if built:
                constructed.add(key)
                handed_in.discard(key)
            else:
                constructed.discard(key)
                handed_in.add(key)

    def _built_moved_elsewhere(self, key: str) -> None:
        """`model = build(n).to(device)` on the other arm of the `if` whose first arm wrapped
        `model = build(n)` in `DistributedDataParallel(model, device_ids=...)`: this scope
        moves what the builder returns, so the wrapped module was still on the CPU."""
        waiting = self.ctx.function_scope().notes.get("wraps waiting") or []
        arms = self.ctx.arms()
        for wait in [w for w in waiting if _left_behind(w, key) and exclusive_arms(w.arms, arms)]:
            waiting.remove(wait)
            self.report(wait.node, wait.message, fix=wait.fix)

    def _same_module_as(self, value: cst.BaseExpression) -> Optional[str]:
        """The dotted name of the module `value` returns unmoved: `model`, `model.eval()`,
        `model.float().train()`, `nn.SyncBatchNorm.convert_sync_batchnorm(model)`."""
        if isinstance(value, (cst.Name, cst.Attribute)):
            return dotted_name(value)  # `net = model`
        if isinstance(value, cst.Call) and self.ctx.resolve(value.func) in _SAME_MODULE_FUNCTIONS:
            module = first_argument(value, "module")
            return dotted_name(module) if module is not None else None
        receiver = method_call(_uncast(value), *_SAME_MODULE) if isinstance(value, cst.Call) else None
        return dotted_name(receiver) if receiver is not None else None

    def _builds_on_cpu(self, call: cst.Call) -> bool:
        """`Net(...)`: a class called by its (capitalised) name, unless the class, defined
        earlier in this file, moves itself or its layers to a device while it is built
        (`self.fc = nn.Linear(2, 2).cuda(rank)` in `__init__`)."""
        constructor = _constructor(call)
        if constructor is None:
            # `model = create_model(cfg)`: a function of the project whose every return is
            # a module it built and never moved (`m = SSD300(...); ...; return m`)
            if not isinstance(call.func, (cst.Name, cst.Attribute)) or self.ctx.builds_moved(call):
                return False
            built = _uncast(call)
            if _LIBRARY_BUILDER_RE.fullmatch(self.ctx.resolve(built.func) or ""):
                # (unless its keywords may carry a device to the model: `**cfg`, `device=d`)
                return not any(arg.star == "**" or DEVICE_WORD_RE.search(cst.Module([]).code_for_node(arg))
                               for arg in built.args)
            # or one that moves nothing, told no device (`model = get_model(config)`)
            return self.ctx.project_says(call.func, "returns") == MODULE or (
                self.ctx.project_says(call.func, "never_moves")
                and not any(DEVICE_WORD_RE.search(cst.Module([]).code_for_node(arg.value)) for arg in call.args))
        if self.ctx.builds_moved(constructor):
            return False
        info = self.ctx.class_facts.by_name.get(last_identifier(constructor.func) or "")
        return info is None or not info.moves_itself_when_built()

    def _built_here(self, key: str, scope: Scope) -> bool:
        """Was `key` constructed in this scope, on the CPU (not handed in, where the
        caller may have moved it, nor returned by a helper that may move it)?"""
        if key in scope.note("constructed", set):
            return True
        if key in scope.note("handed in", set):
            return False  # `self.model = model`: the caller's module, maybe moved
        function = self.ctx.current_function
        return key.startswith("self.") and function is not None and function.name.value == "__init__"

    def _on_move(self, call: cst.Call, target: Optional[str]) -> None:
        if target is None:
            return
        scope = self.ctx.function_scope()
        to_cpu = moves_to_cpu(call)
        arms = self.ctx.arms()
        tests = self.ctx.tests()
        on_cpu = scope.note("on the cpu", set)  # last moved to the CPU, in statement order
        if to_cpu:
            on_cpu.add(target)
        else:
            on_cpu.discard(target)
            scope.note("device moves", list).append((target, arms, _returning_arms(self.ctx)))
            scope.note("device move tests", list).append((target, tests))
        waiting = scope.notes.get("wraps waiting")
        if not waiting:
            return
        for wait in [w for w in waiting if target in (w.module, w.wrapper)
                     or (not w.report_on_move and _inside(w.module, target))]:
            if wait.gone or exclusive_arms(wait.arms, arms) or tests_exclude(wait.tests, tests):
                # a path that does not go through the wrap: this scope places the module itself
                if not to_cpu and _left_behind(wait, target):
                    waiting.remove(wait)  # (and DDP's path forgot to)
                    self.report(wait.node, wait.message, fix=wait.fix)
                    continue
                wait.elsewhere = wait.elsewhere or (not to_cpu and target in (wait.module, wait.wrapper))
                continue
            if wait.report_on_move:  # DDP: moved after the wrap, too late
                waiting.remove(wait)
                if not to_cpu:
                    self.report(wait.node, wait.message, fix=wait.fix)
                continue
            # DataParallel: moved to its device in time, or to the CPU, where its next
            # forward (or whoever gets it next) fails on a machine with a GPU
            wait.built_here = False
            wait.placed = not to_cpu
            wait.on_cpu = to_cpu
            if to_cpu and target == wait.wrapper and _hands_out(self.ctx.parent()):
                # `return net.cpu()` (EduNLP's set_device): handed out on the CPU
                waiting.remove(wait)
                self.report(wait.node, self.cpu_message)

    def leave_scope(self, scope: Scope) -> None:
        # DataParallel wraps that nothing moved before the end of the scope.
        owner = self._module_being_built(scope)
        for wait in scope.notes.get("wraps waiting", ()):
            if wait.report_on_move:
                continue
            if wait.elsewhere and not wait.placed and not wait.on_cpu:
                # `if n > 1: model = DataParallel(model)` / `else: model = model.to(device)`:
                # the scope moves the module on its other paths, not on this one
                self.report(wait.node, wait.message)
                continue
            if not wait.built_here:
                continue
            if wait.returned:
                # `return nn.DataParallel(Net())`: wrong only if a caller runs it unmoved, or if
                # the caller told the function the device and it never moves the module
                if not (self._told_device_never_moved(scope, wait) or self._returned_and_run_unmoved(scope)
                        or self._property_run_unmoved(scope)):
                    continue
                self.report(wait.node, wait.message)
                continue
            if owner is not None and (wait.wrapper or "").startswith("self."):
                # a sub-module of a model: wrong only if the code that builds the model
                # runs it without moving it first
                if owner.moves_itself_when_built() or not self._built_and_run_unmoved(owner.name):
                    continue
            self.report(wait.node, wait.message)

    def _told_device_never_moved(self, scope: Scope, wait: "_Wait") -> bool:
        """`def get_detector(path, device)` that builds the module, wraps it and returns it
        without moving it anywhere: the caller said where it belongs (EasyOCR's detector)."""
        node = scope.node
        if scope.kind != "function" or not isinstance(node, cst.FunctionDef):
            return False
        if not any(_DEVICE_PARAMETER_RE.search(name) for name in parameter_names(node)):
            return False
        return not any(target in (wait.module, wait.wrapper) for target, _, _ in scope.notes.get("device moves", ()))

    def _module_being_built(self, scope: Scope):
        """The `nn.Module` class whose `__init__` `scope` is, else None."""
        node = scope.node
        info = self.ctx.current_class
        if scope.kind != "function" or not isinstance(node, cst.FunctionDef) or node.name.value != "__init__" \
                or info is None or not info.is_module:
            return None
        return info

    def _returned_and_run_unmoved(self, scope: Scope) -> bool:
        """Is `scope` a module-level function whose result this file, or another file of
        the project, runs before moving it (`net = make()` ... `net(x)`)?"""
        node = scope.node
        if scope.kind != "function" or not isinstance(node, cst.FunctionDef) or self.ctx.current_class is not None \
                or len(self.ctx.functions) != 1:
            return False
        return self._built_and_run_unmoved(node.name.value)

    def _property_run_unmoved(self, scope: Scope) -> bool:
        """Is `scope` a property of a class (`@cached_property def model(self)`) whose
        value the file runs as `self.model(x)` and never moves (neutorch's trainer)?"""
        node, info, project = scope.node, self.ctx.current_class, self.ctx.project
        if scope.kind != "function" or not isinstance(node, cst.FunctionDef) or info is None or project is None \
                or len(self.ctx.functions) != 1:
            return False
        if not any(last_identifier(d.decorator) in ("property", "cached_property") for d in node.decorators):
            return False
        return project.runs_unmoved_here(f"self.{node.name.value}")

    def _built_and_run_unmoved(self, class_name: str) -> bool:
        """Does this file, or another file of the project that imports the class, build
        it and run the instance (`model = Net()` ... `model(x)`) without moving it
        first? Read from the whole files (project.py)."""
        project = self.ctx.project
        return project is not None and (project.runs_unmoved_here(class_name)
                                        or project.runs_unmoved_in_project(class_name))

    @staticmethod
    def _message(qualified: str) -> str:
        short = qualified.rsplit(".", 1)[-1]
        extra = ", device_ids=[rank]" if qualified in DISTRIBUTED else ""
        return WrapBeforeMove.message.format(name=short, short=short, extra=extra)


def _left_behind(wait: _Wait, moved: str) -> bool:
    """Is `wait` a `DistributedDataParallel(moved, device_ids=...)` that the scope's move of
    `moved` on another path shows was given a module not on its device?"""
    return wait.report_on_move and wait.module == moved and _wants_gpus(wait.node)


def _wants_gpus(node: cst.Call) -> bool:
    """`DistributedDataParallel(m, device_ids=[rank])`: told its devices (without them, a CPU
    module is plain CPU training)."""
    return any(keyword(node, name) is not None for name in ("device_ids", "output_device"))


# A name that ends like a network's: `self.model`, `net`, `policy_net2` (not `self.model_output`).
_ENDS_LIKE_A_MODEL_RE = re.compile(r"(?:^|[._])(?:model|net|network|module|backbone|encoder|decoder)s?\d*$", re.I)


def _this_or_its_owners(key: str) -> List[str]:
    """`self.model.features` -> [`self.model.features`, `self.model`, `self`]."""
    parts = key.split(".")
    return [".".join(parts[:end]) for end in range(len(parts), 0, -1)]


def _one_device(node: cst.Call) -> bool:
    """`device_ids=[gpu]`: a one-element literal list or tuple."""
    argument = keyword(node, "device_ids")
    if argument is None:
        positional = positional_args(node)
        argument = positional[1] if len(positional) > 1 else None
    value = argument.value if argument is not None else None
    return isinstance(value, (cst.List, cst.Tuple)) and len(value.elements) == 1 \
        and isinstance(value.elements[0], cst.Element)


@dataclass
class _Wait:
    """A wrap whose verdict depends on moves later in the scope."""

    node: cst.Call
    message: str
    module: Optional[str]  # the wrapped module's dotted name
    wrapper: Optional[str]  # the name the wrapper was assigned to
    report_on_move: bool  # DDP: a later move of the module proves the wrap came too early
    built_here: bool = False  # DataParallel: report at the end of the scope if nothing moved
    fix: Optional[Fix] = None
    on_cpu: bool = False  # DataParallel: its module was moved to the CPU after the wrap
    returned: bool = False  # DataParallel built here and returned: its callers decide
    # DataParallel: the `if` arms around the wrap (`_arms`); whether the scope moves the
    # module to a device on a path that does not reach the wrap (then it is the scope's job
    # to move it, and this path forgot); whether a move on the wrap's path came in time;
    # whether the wrapper left the scope by a `return` (any later move is on another path)
    arms: Tuple[Tuple[int, bool], ...] = ()
    tests: Sequence[Tuple[str, object]] = ()  # `Analyzer.tests()` at the wrap
    elsewhere: bool = False
    placed: bool = False
    gone: bool = False
    kept: bool = False  # handed out when `elsewhere` was known: still judged at the end of the scope


def _returning_arms(ctx) -> Set[int]:
    """The `if` statements around the node being visited whose arm that holds it ends
    with `return` or `raise`: code after such an `if` is on another path."""
    ended = set()
    for node, _, in_body in ctx.enclosing_tests():
        arm = node.body if in_body else node.orelse
        if isinstance(node, cst.If) and isinstance(arm, (cst.IndentedBlock, cst.Else)):
            block = arm.body if isinstance(arm, cst.Else) else arm
            last = block.body[-1] if block.body else None
            if isinstance(last, cst.SimpleStatementLine) and isinstance(last.body[-1], (cst.Return, cst.Raise)):
                ended.add(id(node))
    return ended


def _returned(parent: Optional[cst.CSTNode], ctx) -> bool:
    """`return model`, `return model, device`."""
    if isinstance(parent, cst.Element) and isinstance(ctx.parent(2), cst.Tuple):
        parent = ctx.parent(3)
    return isinstance(parent, cst.Return)


def _inside(module: Optional[str], moved: str) -> bool:
    """`model.cuda()` moves `model.features` too."""
    return module is not None and module.startswith(moved + ".")


# Calls that take a module without running it (saving it, printing it).
_KEEPS_IDLE = frozenset({"torch.save", "print", "len", "id", "isinstance", "type", "str", "repr", "hasattr",
                         "getattr", "setattr"})


def _runs_or_keeps(node: cst.BaseExpression, parent: Optional[cst.CSTNode], ctx) -> bool:
    """Is `node` run (`net(x)`), handed out (returned, put in a container), stored
    (`self.net = net`, `nets["g"] = net`), or passed to a call that may run it (not
    `torch.save(net, path)` nor `print(net)`)?"""
    if isinstance(parent, cst.Call) and parent.func is node:
        return True
    if isinstance(parent, (cst.Return, cst.Yield, cst.Element, cst.DictElement)):
        return True
    if isinstance(parent, cst.Assign) and parent.value is node:
        return any(isinstance(t.target, (cst.Attribute, cst.Subscript)) for t in parent.targets)
    if isinstance(parent, cst.Arg):
        call = ctx.parent(2)
        if isinstance(call, cst.Call):
            callee = ctx.resolve(call.func) or (call.func.value if isinstance(call.func, cst.Name) else None)
            return callee not in _KEEPS_IDLE
    return False


def _hands_out(parent: Optional[cst.CSTNode]) -> bool:
    """Is a value whose parent is `parent` handed out of the scope: returned, yielded,
    passed to a call, put in a container, or stored on another object (`nets.fan = fan`,
    `nets["fan"] = fan`; `self.fan = fan` stays with the module being built)?"""
    if isinstance(parent, cst.Assign):
        return any(isinstance(t.target, (cst.Attribute, cst.Subscript))
                   and (dotted_name(t.target) or "").split(".")[0] != "self" for t in parent.targets)
    return isinstance(parent, (cst.Return, cst.Yield, cst.Arg, cst.Element, cst.DictElement))


def _constructor(call: cst.Call) -> Optional[cst.Call]:
    """In `Net(...)`, `nn.Sequential(...)`, `Net().float()` (a class called by its
    capitalised name, maybe followed by casts that do not move it): the class call."""
    call = _uncast(call)
    name = last_identifier(call.func) or ""
    return call if name[:1].isupper() else None  # Net, MLP, nn.Sequential


def _uncast(call: cst.Call) -> cst.Call:
    """`make()` of `make().float().eval()`: the call before casts that do not move a module."""
    inner = method_call(call, *_SAME_MODULE)
    return _uncast(inner) if isinstance(inner, cst.Call) else call


# ---------------------------------------------------------------- the fix

_CASTS = ("to", "cuda", "float", "half", "double", "train", "eval")
# Methods of a module that return the module itself.
_SAME_MODULE = ("eval", "train", "float", "half", "double", "bfloat16", "requires_grad_", "share_memory")
# Functions that return the module handed to them, its layers where they were.
_SAME_MODULE_FUNCTIONS = frozenset({"torch.nn.SyncBatchNorm.convert_sync_batchnorm",
                                    "torch.nn.modules.batchnorm.SyncBatchNorm.convert_sync_batchnorm"})


def _move_before_wrap(stack: Sequence[cst.CSTNode], key: Optional[str], wrap: cst.Call,
                      module: cst.BaseExpression) -> Optional[Fix]:
    """The fix: the first later statement of the wrap's block that moves the module
    (`model.to(device)`) or the wrapper (`ddp.to(device)`, which moves the module
    inside) goes before the wrap, as a move of the module (`model.to(device)`; for a
    module built in place, `DDP(Net().to(device))`). Only when the wrap is a statement
    of its own and no statement between them uses a name the move uses."""
    index = len(stack) - 1
    while index > 0 and not isinstance(stack[index], cst.SimpleStatementLine):
        index -= 1
    statement, block = stack[index], stack[index - 1]
    if (not isinstance(statement, cst.SimpleStatementLine) or len(statement.body) != 1
            or not isinstance(block, (cst.Module, cst.IndentedBlock))):
        return None
    small = statement.body[0]
    if not (isinstance(small, (cst.Assign, cst.AnnAssign, cst.Expr)) and small.value is wrap):
        return None
    targets = {dotted_name(t.target) for t in small.targets} if isinstance(small, cst.Assign) else (
        {dotted_name(small.target)} if isinstance(small, cst.AnnAssign) else set())
    wrappers = {t for t in targets if t is not None and t != key}
    following = list(block.body)
    between: List[cst.CSTNode] = []
    for later in following[following.index(statement) + 1:]:
        move = _move_statement(later, wrappers | ({key} if key else set()))
        if move is None:
            between.append(later)
            continue
        call, target = move
        used = names_read(later)
        if (any(line.comment is not None for line in later.leading_lines)  # would be left behind
                or any(used & names_read(other) for other in between)
                or any(names_read(arg) & wrappers for arg in call.args)):
            return None
        if key is not None:
            return Fix().move_statement_before(later, statement,  # type: ignore[arg-type]
                                               moved=_retarget(later, target, key))
        if later.trailing_whitespace.comment is not None or method_call(call, "to", "cuda") is None:
            return None
        # built in place: `DDP(Net(), ...)` + `ddp.to(d)` -> `DDP(Net().to(d), ...)`
        return Fix().replace(module, call.with_changes(func=call.func.with_changes(value=module))).replace(
            later, cst.RemoveFromParent())
    return None


def _move_statement(statement: cst.CSTNode, names: Set[str]):
    """For `x.to(d)` or `x = x.to(d)` alone on its line, with `x` in `names`: (the call, x)."""
    if not isinstance(statement, cst.SimpleStatementLine) or len(statement.body) != 1:
        return None
    small = statement.body[0]
    if isinstance(small, cst.Assign) and len(small.targets) == 1:
        if dotted_name(small.targets[0].target) not in names:
            return None
        call = small.value
    elif isinstance(small, cst.Expr):
        call = small.value
    else:
        return None
    target = move_target(call)
    if target not in names or (isinstance(small, cst.Assign) and dotted_name(small.targets[0].target) != target):
        return None
    return call, target


def _retarget(statement: cst.SimpleStatementLine, old: str, new: str) -> cst.SimpleStatementLine:
    """The move statement moving `new` instead of `old` (`ddp.to(d)` -> `model.to(d)`)."""
    if old == new:
        return statement
    replacement = cst.parse_expression(new)

    def receiver_replaced(call: cst.BaseExpression) -> cst.BaseExpression:
        receiver = method_call(call, *_CASTS)
        if receiver is None:
            return call
        inner = replacement if dotted_name(receiver) == old else receiver_replaced(receiver)
        return call.with_changes(func=call.func.with_changes(value=inner))  # type: ignore[attr-defined]

    small = statement.body[0]
    if isinstance(small, cst.Assign):
        small = small.with_changes(targets=[small.targets[0].with_changes(target=replacement)],
                                   value=receiver_replaced(small.value))
    else:
        small = small.with_changes(value=receiver_replaced(small.value))  # type: ignore[attr-defined]
    return statement.with_changes(body=[small])


