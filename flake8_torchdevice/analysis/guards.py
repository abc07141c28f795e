"""The CUDA-guard model (the spec's "CUDA guard"): which tests mean "CUDA is present".

`GuardModel.cuda_polarity(test)` says what a test being true means: +1 CUDA is
present, -1 CUDA is absent, 0 nothing about CUDA. The walker uses it to decide which
blocks only run with CUDA (`Analyzer.guarded`) or only without it
(`Analyzer.cpu_only`). Flags are recognised however programs store them: names and
attributes (`use_cuda`, `args.cuda`, `self.opt.use_gpu`), subscripts and lookups
(`opt["cuda"]`, `cfg.get("use_gpu")`), and locals bound from a CUDA test whatever
their name (`have_accel = torch.cuda.is_available()`).

A module can be CUDA-only on purpose (`is_cuda_only_path`, `makes_module_cuda_only`):
a CUDA backend file (`accelerators/cuda.py`), or one whose import raises without CUDA.
All of its code counts as guarded: the rules that say "this needs CUDA" (TDV1xx,
TDV301, TDV501's literal device type) do not report there; the others still do.
"""

from __future__ import annotations

import re
from typing import Callable, Iterable, Optional

import libcst as cst

from .devices import is_device_name
from .syntax import (block_statements, comprehension_clauses, dotted_name, last_identifier, method_call, number_value,
                     string_value)

_NEGATIVE_FLAG_RE = re.compile(r"(^|_)(no|not|disable|disabled|without|skip|unavailable|missing|absent)(_|$)"
                               r"|nocuda|nogpu|cpu", re.I)
_CUDA_FLAG_RE = re.compile(r"cuda|gpu", re.I)
_DEVICE_ID_RE = re.compile(r"^(device_ids?|gpu_ids?|gpus?|cuda_device)$", re.I)
_EXIT_CALLS = {"exit", "_exit", "quit", "skip", "skipTest", "fail", "abort"}
# Calls whose result tells whether CUDA is there (truthy: present).
_CUDA_TESTS = {"torch.cuda.is_available", "torch.cuda.device_count", "torch.cuda.is_initialized",
               "torch.backends.cudnn.is_available"}


def is_cuda_only_path(filename: Optional[str]) -> bool:
    """A file whose path says it is the CUDA backend: `cuda.py`, `*_cuda.py`,
    `cuda_*.py`, or any file under a folder named `cuda` (`ops/cuda/kernels.py`)."""
    if not filename:
        return False
    parts = [part for part in re.split(r"[\\/]", filename.lower()) if part]
    if not parts:
        return False
    stem = parts[-1].rsplit(".", 1)[0] if "." in parts[-1] else parts[-1]
    return stem == "cuda" or stem.endswith("_cuda") or stem.startswith("cuda_") or "cuda" in parts[:-1]


def _counts_gpus(node: cst.BaseExpression) -> bool:
    """`num_gpus`, `cfg.NUM_GPUS`, `args.n_gpu`: a number of GPUs asked for, which may be zero."""
    return isinstance(node, (cst.Name, cst.Attribute)) and bool(_CUDA_FLAG_RE.search(last_identifier(node) or ""))


def is_exit_statement(statement: cst.CSTNode) -> bool:
    """`return`, `raise`, `continue`, `break`, `sys.exit()`, `pytest.skip()`, ..."""
    if isinstance(statement, cst.SimpleStatementLine):
        return any(is_exit_statement(small) for small in statement.body)
    if isinstance(statement, (cst.Return, cst.Raise, cst.Continue, cst.Break)):
        return True
    if isinstance(statement, cst.Expr) and isinstance(statement.value, cst.Call):
        return last_identifier(statement.value.func) in _EXIT_CALLS
    return False


def _name_polarity(identifier: str) -> int:
    """What a flag's name says: `use_cuda` +1, `no_cuda`/`cpu_only` -1, `verbose` 0."""
    if _NEGATIVE_FLAG_RE.search(identifier):
        return -1 if _CUDA_FLAG_RE.search(identifier) or "cpu" in identifier.lower() else 0
    return 1 if _CUDA_FLAG_RE.search(identifier) or identifier == "is_cuda" else 0


def _device_text_polarity(text: str) -> Optional[int]:
    """`"cuda:0"` +1, `"cpu"` -1, other device strings (`"mps"`) None."""
    text = text.strip().lower()
    if text.startswith(("cuda", "gpu")) or text in ("nccl", "smddp"):
        return 1  # (NCCL and SageMaker's smddp, distributed backends, run only on CUDA GPUs)
    if text.startswith("torch.cuda.") and text.endswith("tensor"):
        return 1  # a CUDA tensor's type: `x.type() == "torch.cuda.FloatTensor"`
    if text == "cpu":
        return -1
    return None


def _is_cuda_constant(node: cst.BaseExpression) -> bool:
    """`RNGType.CUDA`, `DeviceType.cuda`, `self.Backend.CUDA`: a named constant or enum
    member whose own name is CUDA (not `CUDA_HOME`, not a bare name `cuda`)."""
    return isinstance(node, cst.Attribute) and node.attr.value in ("CUDA", "cuda", "NCCL")  # (`Backend.NCCL`)


def _constant_comparison_polarity(left: cst.BaseExpression, right: cst.BaseExpression) -> int:
    """+1 when one side of an equality is a CUDA constant and the other a value read at
    run time (`rng_type == RNGType.CUDA`); 0 otherwise. A literal on the other side
    (`args.cuda == False`, `args.cuda == 0`) makes the comparison a flag test instead."""
    for constant, other in ((right, left), (left, right)):
        if _is_cuda_constant(constant) and isinstance(other, (cst.Name, cst.Attribute, cst.Subscript, cst.Call)) \
                and not (isinstance(other, cst.Name) and other.value in ("True", "False", "None")) \
                and not _is_cuda_constant(other):
            return 1
    return 0


class GuardModel:
    """Reads tests. `resolve` gives an expression's qualified import name;
    `local_flag(name)` the polarity of the test a local name was bound from (0: none)."""

    def __init__(self, resolve: Callable[[cst.CSTNode], Optional[str]], local_flag: Callable[[str], int],
                 guard_names: Iterable[str] = (),
                 local_absence: Callable[[str], frozenset] = lambda name: frozenset(),
                 pinned_flag: Callable[[str], bool] = lambda name: False) -> None:
        self.resolve = resolve
        self.local_flag = local_flag
        self.pinned_flag = pinned_flag  # a parameter `flag=True` that no call of its function sets
        self.local_absence = local_absence
        self.guard_names = {name.lower() for name in guard_names}

    def cuda_polarity(self, test: cst.BaseExpression) -> int:
        """+1 when `test` being true means CUDA is present, -1 when it means CUDA is
        absent, 0 when it says nothing about CUDA."""
        if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
            return -self.cuda_polarity(test.expression)
        if isinstance(test, cst.BooleanOperation):
            left, right = self.cuda_polarity(test.left), self.cuda_polarity(test.right)
            if isinstance(test.operator, cst.And):
                # the body runs only if every operand is true
                if left > 0 or right > 0:
                    return 1
                return -1 if left < 0 and right < 0 else 0
            # `or`: the else arm runs only if every operand is false
            if left < 0 or right < 0:
                return -1
            return 1 if left > 0 and right > 0 else 0
        if isinstance(test, cst.Comparison):
            return self._comparison_polarity(test)
        if isinstance(test, cst.Call):
            return self._call_polarity(test)
        if isinstance(test, cst.Name):
            polarity = self.local_flag(test.value) or self._flag_polarity(test)
            return 0 if polarity and self.pinned_flag(test.value) else polarity
        if isinstance(test, cst.Attribute):
            return self._flag_polarity(test)
        if isinstance(test, cst.Subscript):
            return self._key_polarity(test)
        return 0

    def cuda_absent(self, test: cst.BaseExpression, outcome: bool) -> bool:
        """Is CUDA certainly absent when `test` evaluates to `outcome`? Stricter than
        the polarity: only a real availability test says so (`torch.cuda.is_available()`,
        `torch.cuda.device_count() > 0`, a local bound from one, combinations of them);
        a flag such as `args.cuda` may be false on a machine with a GPU, and
        `device_count() > 1` false on one with a single GPU."""
        if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
            return self.cuda_absent(test.expression, not outcome)
        if isinstance(test, cst.BooleanOperation):
            left, right = self.cuda_absent(test.left, outcome), self.cuda_absent(test.right, outcome)
            # `a and b` true / `a or b` false: both operands took `outcome`; otherwise one of them did
            both = isinstance(test.operator, cst.And) == outcome
            return (left or right) if both else (left and right)
        if isinstance(test, cst.Call):
            return not outcome and self._is_cuda_test_call(test) and last_identifier(test.func) == "is_available"
        if isinstance(test, cst.Name):
            return outcome in self.local_absence(test.value)
        if isinstance(test, cst.Comparison) and len(test.comparisons) == 1:
            left, target = test.left, test.comparisons[0]
            number = number_value(target.comparator)
            if not (isinstance(left, cst.Call) and self._is_cuda_test_call(left)
                    and last_identifier(left.func) == "device_count") or number is None:
                return False
            op = target.operator
            some = ((isinstance(op, cst.GreaterThan) and number == 0)
                    or (isinstance(op, cst.GreaterThanEqual) and number == 1)
                    or (isinstance(op, cst.NotEqual) and number == 0))
            none = ((isinstance(op, cst.Equal) and number == 0) or (isinstance(op, cst.LessThan) and number == 1)
                    or (isinstance(op, cst.LessThanEqual) and number == 0))
            return (some and not outcome) or (none and outcome)
        return False

    def absence_of_binding(self, value: cst.BaseExpression) -> frozenset:
        """The outcomes of `value` under which CUDA is certainly absent, for a local bound
        to it (`have_gpu = torch.cuda.is_available()`: {False})."""
        return frozenset(outcome for outcome in (True, False) if self.cuda_absent(value, outcome))

    def bound_flag_polarity(self, value: cst.BaseExpression) -> int:
        """The polarity a local takes when bound to `value`: only real tests and
        flags count (`torch.cuda.is_available()`, `args.cuda and n > 1`,
        `opt["gpu"]`), not any call that happens to say "cuda" (`net.cuda()`)."""
        if isinstance(value, cst.Call) and not self._is_cuda_test_call(value) and last_identifier(value.func) != "get":
            return 0
        return self.cuda_polarity(value)

    def _is_cuda_test_call(self, call: cst.Call) -> bool:
        qualified = self.resolve(call.func)
        if qualified in _CUDA_TESTS:
            return True
        name = last_identifier(call.func)
        if name in ("is_available", "device_count") and qualified is None and isinstance(call.func, cst.Attribute):
            return last_identifier(call.func.value) == "cuda"  # `cuda.is_available()` after `from torch import cuda`
        return False

    def _call_polarity(self, test: cst.Call) -> int:
        if self._is_cuda_test_call(test):
            return 1
        receiver = method_call(test, "startswith")
        if receiver is not None and test.args:
            prefix = string_value(test.args[0].value)
            if prefix is not None and prefix.rstrip(".") == "torch.cuda" and method_call(receiver, "type") is not None:
                return 1  # `x.type().startswith("torch.cuda")`
            if prefix is not None:
                return _device_text_polarity(prefix) or 0
        name = last_identifier(test.func)
        if name == "isinstance" and len(test.args) == 2 and self._is_cuda_tensor_type(test.args[1].value):
            return 1  # `isinstance(x.data, torch.cuda.FloatTensor)`: x is on a GPU already
        if name in ("len", "bool", "any", "all") and test.args:
            return self.cuda_polarity(test.args[0].value)
        if name == "get" and isinstance(test.func, cst.Attribute) and test.args:
            key = string_value(test.args[0].value)  # `cfg.get("use_gpu")`
            return _name_polarity(key) if key else 0
        return self._flag_polarity(test.func)

    def _is_cuda_tensor_type(self, node: cst.BaseExpression) -> bool:
        """`torch.cuda.FloatTensor` (a legacy CUDA tensor type, however imported), or a
        tuple of only such types."""
        if isinstance(node, cst.Tuple):
            return bool(node.elements) and all(self._is_cuda_tensor_type(el.value) for el in node.elements)
        qualified = self.resolve(node) or dotted_name(node) or ""
        return qualified.startswith("torch.cuda.") and qualified.endswith("Tensor")

    def _key_polarity(self, test: cst.Subscript) -> int:
        """`opt["cuda"]`, `config["gpus"]`: a flag stored under a key that says CUDA."""
        if len(test.slice) != 1 or not isinstance(test.slice[0].slice, cst.Index):
            return 0
        key = string_value(test.slice[0].slice.value)
        return _name_polarity(key) if key else 0

    def _flag_polarity(self, node: cst.BaseExpression) -> int:
        """A flag whose name says CUDA/GPU: `use_cuda`, `args.cuda`, `opt.gpu_ids`."""
        identifier = last_identifier(node)
        if identifier is None:
            return 0
        if identifier.lower() in self.guard_names or (dotted_name(node) or "").lower() in self.guard_names:
            return 1
        if identifier == "is_available":
            return 0  # `torch.cuda.is_available` without a call is always true: a bug, not a guard
        return _name_polarity(identifier)

    def _literal_device_polarity(self, literal: cst.BaseExpression) -> Optional[int]:
        """The polarity of a device literal in a comparison, None when it is not one."""
        text = string_value(literal)
        if text is None and isinstance(literal, cst.Call) and literal.args and self.resolve(literal.func) == "torch.device":
            text = string_value(literal.args[0].value)  # `x.device == torch.device("cuda")`
        if text is not None:
            return _device_text_polarity(text) or 0
        if isinstance(literal, (cst.Tuple, cst.List, cst.Set)) and literal.elements:
            # `device.type in ("cuda", "cpu")` admits a CPU: no guard. Only all-CUDA sets are.
            signs = [_device_text_polarity(string_value(el.value) or "") for el in literal.elements]
            if all(sign == 1 for sign in signs):
                return 1
            if all(sign == -1 for sign in signs):
                return -1
            return 0 if any(string_value(el.value) is not None for el in literal.elements) else None
        return None

    def _comparison_polarity(self, test: cst.Comparison) -> int:
        if len(test.comparisons) != 1:
            return 0
        target = test.comparisons[0]
        op, left, right = target.operator, test.left, target.comparator
        # A device literal on either side: `device.type == "cuda"`, `"cuda" in str(d)`.
        for literal in (right, left):
            sign = self._literal_device_polarity(literal)
            if sign is None:
                continue
            if isinstance(op, (cst.Equal, cst.In, cst.Is)):
                return sign
            if isinstance(op, (cst.NotEqual, cst.NotIn, cst.IsNot)):
                return -sign
            return 0
        # `device_id is not None`: a device was asked for explicitly.
        if isinstance(right, cst.Name) and right.value == "None" and isinstance(op, (cst.Is, cst.IsNot)):
            identifier = last_identifier(left) or ""
            if is_device_name(identifier) or _DEVICE_ID_RE.match(identifier):
                return 1 if isinstance(op, cst.IsNot) else -1
            return 0
        # `use_cuda == True`, `args.gpu is False`: the flag itself, or its negation.
        if isinstance(right, cst.Name) and right.value in ("True", "False") \
                and isinstance(op, (cst.Equal, cst.Is, cst.NotEqual, cst.IsNot)):
            sign = self.cuda_polarity(left)
            return sign if (right.value == "True") == isinstance(op, (cst.Equal, cst.Is)) else -sign
        # A named constant or enum member: `rng_type == RNGType.CUDA`, `backend is Backend.cuda`.
        sign = _constant_comparison_polarity(left, right)
        if sign:
            if isinstance(op, (cst.Equal, cst.Is)):
                return sign
            if isinstance(op, (cst.NotEqual, cst.IsNot)):
                return -sign
            return 0
        # Number on the right: `torch.cuda.device_count() > 1`, `len(gpu_ids) == 0`.
        number = number_value(right)
        if number is None:
            # `device_count() > local_rank`, `n_gpu >= world_size`: a count above an index
            # or a size (never negative in practice) means at least one GPU.
            # Not at least a count of GPUs asked for (`device_count() >= cfg.NUM_GPUS`): zero asks for
            # none, the configuration that runs on the CPU.
            if isinstance(op, cst.GreaterThan) or isinstance(op, cst.GreaterThanEqual) \
                    and not _counts_gpus(right):
                if isinstance(right, (cst.Name, cst.Attribute)):
                    return max(self.cuda_polarity(left), 0)
            if isinstance(op, cst.LessThan) or isinstance(op, cst.LessThanEqual) and not _counts_gpus(left):
                if isinstance(left, (cst.Name, cst.Attribute)):
                    return max(self.cuda_polarity(right), 0)
            return 0
        sign = self.cuda_polarity(left)
        if sign == 0:
            return 0
        if isinstance(op, (cst.GreaterThan, cst.GreaterThanEqual)):
            return sign
        if isinstance(op, cst.NotEqual):
            return sign if number == 0 else 0
        if isinstance(op, cst.Equal):
            return -sign if number == 0 else sign
        if isinstance(op, (cst.LessThan, cst.LessThanEqual)):
            return -sign
        return 0

    def case_polarity(self, subject: cst.BaseExpression, pattern: cst.MatchPattern) -> int:
        """`match device.type: case "cuda":` reads as `device.type == "cuda"` (+1);
        `case "cuda" | "cuda:0":` too, `case DeviceType.CUDA:` as the enum comparison;
        `case "cpu":` -1; other patterns (`case _:`, captures, mixed alternatives) 0."""
        if isinstance(pattern, cst.MatchAs):
            return self.case_polarity(subject, pattern.pattern) if pattern.pattern is not None else 0
        if isinstance(pattern, cst.MatchOr):
            signs = {self.case_polarity(subject, element.pattern) for element in pattern.patterns}
            return signs.pop() if len(signs) == 1 else 0
        if isinstance(pattern, cst.MatchValue):
            return self.cuda_polarity(cst.Comparison(
                left=subject, comparisons=[cst.ComparisonTarget(cst.Equal(), pattern.value)]))
        return 0

    def loops_over_gpus(self, iterable: cst.BaseExpression) -> bool:
        """`for i in range(torch.cuda.device_count())`: the body never runs without CUDA."""
        return (isinstance(iterable, cst.Call) and last_identifier(iterable.func) == "range"
                and len(iterable.args) == 1 and self.cuda_polarity(iterable.args[0].value) > 0)

    def filters_guard(self, comp_for: Optional[cst.CompFor]) -> bool:
        """`[x.cuda() for x in xs if torch.cuda.is_available()]`: the element runs only if every `if` holds."""
        return any(self.cuda_polarity(cond.test) > 0 for clause in comprehension_clauses(comp_for)
                   for cond in clause.ifs)

    def is_guard_decorator(self, decorator: cst.BaseExpression) -> bool:
        """`@skipIf(not torch.cuda.is_available(), ...)`, `@requires_cuda`, ..."""
        if isinstance(decorator, cst.Call):
            name = last_identifier(decorator.func)
            if name in ("skipIf", "skipif") and decorator.args:
                # (`skipIf(*gpu_unavailable)`: a (condition, reason) pair named for its condition)
                return self.cuda_polarity(decorator.args[0].value) < 0
            if name == "skipUnless" and decorator.args:
                return self.cuda_polarity(decorator.args[0].value) > 0
            decorator = decorator.func
        full = (dotted_name(decorator) or "").lower()
        if not full:
            return False
        if full in self.guard_names or full.rsplit(".", 1)[-1] in self.guard_names:
            return True
        return bool(_CUDA_FLAG_RE.search(full))

    def is_named_for_cuda(self, node: cst.Name) -> bool:
        """Code whose own name says it exists for CUDA: a test of CUDA (`class
        TestGPUKernels`, `def test_cuda_stream`, `class RpcCudaTest`), or the move
        method itself (`def cuda(self)` of a tensor-like class). A helper named for CUDA
        (`def to_cuda(x)`, `def dtw_cuda(x)`, `class CUDACallback`) is no guard: it is
        called from code that may run anywhere."""
        name = node.value
        if name.lstrip("_").lower() == "cuda":
            return True
        is_test = name.lower().startswith("test") or name.endswith(("Test", "Tests", "TestCase"))
        return is_test and self._flag_polarity(node) > 0

    def is_early_exit_guard(self, statement: cst.CSTNode) -> bool:
        """`if not torch.cuda.is_available(): return` and `assert torch.cuda.is_available()`;
        also `if x.is_cuda: device = "cuda"` / `else: raise NotImplementedError(...)`."""
        if isinstance(statement, cst.If):
            if isinstance(statement.orelse, cst.Else):
                return self.cuda_polarity(statement.test) > 0 \
                    and any(is_exit_statement(s) for s in block_statements(statement.orelse.body))
            return (
                statement.orelse is None
                and self.cuda_polarity(statement.test) < 0
                and any(is_exit_statement(s) for s in block_statements(statement.body))
            )
        if isinstance(statement, cst.SimpleStatementLine):
            return any(isinstance(small, cst.Assert) and self.cuda_polarity(small.test) > 0
                       for small in statement.body)
        return False

    def is_early_cuda_exit(self, statement: cst.If) -> bool:
        """`if x.is_cuda: return kernel(x)`, `if use_cuda: ...; return`: what follows in the
        block only runs without CUDA (the mirror of `is_early_exit_guard`)."""
        statements = block_statements(statement.body)
        return statement.orelse is None and self.cuda_polarity(statement.test) > 0 \
            and bool(statements) and is_exit_statement(statements[-1])

    def makes_module_cuda_only(self, statement: cst.CSTNode) -> bool:
        """A statement at the top of a module (before its first function or class) that
        stops the import without CUDA: `if not torch.cuda.is_available(): raise ...`,
        `assert torch.cuda.is_available()`. The module is then CUDA-only on purpose,
        as is one whose path says so (`is_cuda_only_path`): see `Analyzer.guarded`."""
        return self.is_early_exit_guard(statement)

    def skips_the_module(self, statement: cst.CSTNode) -> bool:
        """`if not torch.cuda.is_available(): pytest.skip(..., allow_module_level=True)` (or
        `raise unittest.SkipTest(...)`): an early exit that skips a whole test module."""
        if not (isinstance(statement, cst.If) and self.is_early_exit_guard(statement)):
            return False
        for line in block_statements(statement.body):
            for small in (line.body if isinstance(line, cst.SimpleStatementLine) else (line,)):
                value = small.value if isinstance(small, cst.Expr) else small.exc if isinstance(small, cst.Raise) else None
                if isinstance(value, cst.Call) and (
                        (last_identifier(value.func) == "skip" and any(
                            arg.keyword is not None and arg.keyword.value == "allow_module_level"
                            and isinstance(arg.value, cst.Name) and arg.value.value == "True" for arg in value.args))
                        or last_identifier(value.func) == "SkipTest"):
                    return True
        return False

    def is_module_mark_guard(self, statement: cst.CSTNode) -> bool:
        """`pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), ...)`: every
        test of the module needs CUDA."""
        if not isinstance(statement, cst.SimpleStatementLine):
            return False
        return any(isinstance(small, cst.Assign)
                   and any(dotted_name(t.target) == "pytestmark" for t in small.targets)
                   and self._marks_guard(small.value) for small in statement.body)

    def _marks_guard(self, value: cst.BaseExpression) -> bool:
        if isinstance(value, (cst.List, cst.Tuple)):
            return any(self._marks_guard(el.value) for el in value.elements)
        return self.is_guard_decorator(value)
