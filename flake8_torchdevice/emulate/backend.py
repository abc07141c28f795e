"""The emulated device itself: PyTorch's PrivateUse1 backend, registered from Python as
`emucuda`, and `EmulatedTensor`, a wrapper tensor on it that holds a CPU tensor.

Every operator that reaches an `EmulatedTensor` goes through `__torch_dispatch__`:
the devices of its tensor arguments are checked as CUDA's kernels check them
(`check_devices`), then the operator runs on the held CPU tensors and its results are
wrapped again. PyTorch's C++ side (autograd, `Module._apply`, the optimizers) sees a
real second device; Python code sees `cuda` (`device`, `is_cuda`, `type()`).
"""

from __future__ import annotations

import copy
import warnings
from typing import Any, Dict, List, Optional, Sequence

import torch

from .kernels import GPU_ONLY

BACKEND = "emucuda"  # the PrivateUse1 backend's name; Python code sees "cuda"

aten = torch.ops.aten


class _State:
    """What the program may ask of the device: how many there are, which is current, and
    whether `torch.set_default_device("cuda")` made it the default."""

    devices = 1
    current = 0
    default: Optional[torch.device] = None


state = _State()

# Storages written by the current torch.save (data pointer -> device index): an emulated
# tensor pickles as the CPU tensor it holds, and `serialization` tags these `cuda:N`.
saved_storages: Dict[int, int] = {}


# ---------------------------------------------------------------- registration


class _DeviceModule:
    """`torch.emucuda`: what PyTorch asks a backend's module (random seeds, counts)."""

    @staticmethod
    def is_available() -> bool:
        return True

    @staticmethod
    def is_initialized() -> bool:
        return True

    @staticmethod
    def device_count() -> int:
        return state.devices

    @staticmethod
    def current_device() -> int:
        return state.current

    @staticmethod
    def _is_in_bad_fork() -> bool:
        return False

    @staticmethod
    def manual_seed_all(seed: int) -> None:
        return None  # emulated tensors draw from the CPU generator

    @staticmethod
    def get_amp_supported_dtype() -> List[torch.dtype]:
        return [torch.float16, torch.bfloat16]


class _Hooks(torch._C._acc.PrivateUse1Hooks):
    def is_available(self) -> bool:
        return True

    def has_primary_context(self, device_index: int) -> bool:
        return True

    def is_built(self) -> bool:
        return True


class _Guard(torch._C._acc.DeviceGuard):
    def type_(self):
        return torch._C._autograd.DeviceType.PrivateUse1


_registered = False
_library: Optional[torch.library.Library] = None


def register() -> None:
    """Registers the backend once per process (PyTorch allows one PrivateUse1 name)."""
    global _registered, _library
    if _registered:
        return
    name = torch._C._get_privateuse1_backend_name()
    if name not in ("privateuseone", BACKEND):
        raise RuntimeError(f"cannot emulate CUDA: the PrivateUse1 backend is already used by {name!r}")
    if name == "privateuseone":
        torch.utils.rename_privateuse1_backend(BACKEND)
        torch._register_device_module(BACKEND, _DeviceModule())
        torch._C._acc.register_python_privateuseone_hook(_Hooks())
        torch._C._acc.register_python_privateuseone_device_guard(_Guard())
    # PyTorch's own composite kernels (`_to_copy`, `zeros`, autograd's zero gradients)
    # allocate on the device through these two; everything else reaches __torch_dispatch__.
    # The same two for the CUDA key, which a CPU build has but fills with no kernel: a
    # factory given device="cuda" where the session's mode does not see it (inside a
    # Python-level torch function such as F.embedding_bag, or on another thread) reaches them.
    _library = torch.library.Library("aten", "IMPL")
    with warnings.catch_warnings():
        # A CUDA build's own CUDA kernels are replaced, with a warning that is no news: the
        # session refuses to run where a GPU is visible, so they could only fail.
        warnings.filterwarnings("ignore", message=r"(?s).*Overriding a previously registered kernel")
        for key in ("PrivateUse1", "CUDA"):
            _library.impl("empty.memory_format", _empty, key)
            _library.impl("empty_strided", _empty_strided, key)
    # PyTorch calls these below the Python key (`x.new_tensor(data)`, `torch.tensor([gpu_scalar])`).
    _library.impl("_copy_from", _copy_from, "PrivateUse1")
    _library.impl("_local_scalar_dense", _local_scalar_dense, "PrivateUse1")
    _registered = True


def _index(device: Any) -> int:
    index = torch.device(device).index if device is not None else None
    return state.current if index is None else index


def _empty(size, dtype=None, layout=None, device=None, pin_memory=None, memory_format=None):
    data = torch.empty(size, dtype=dtype, memory_format=memory_format or torch.contiguous_format)
    return EmulatedTensor(data, _index(device))


def _empty_strided(size, stride, dtype=None, layout=None, device=None, pin_memory=None):
    return EmulatedTensor(torch.empty_strided(size, stride, dtype=dtype), _index(device))


def _copy_from(source, destination, non_blocking=False):
    _unwrap(destination).copy_(_unwrap(source))
    return destination


def _local_scalar_dense(tensor):
    return _unwrap(tensor).item()


# ---------------------------------------------------------------- the tensor


# The legacy tensor types: torch.float32 is `torch.FloatTensor` / `torch.cuda.FloatTensor`.
LEGACY_TYPES = {
    torch.float32: "Float", torch.float64: "Double", torch.float16: "Half", torch.bfloat16: "BFloat16",
    torch.int64: "Long", torch.int32: "Int", torch.int16: "Short", torch.int8: "Char", torch.uint8: "Byte",
    torch.bool: "Bool",
}


def legacy_type_name(dtype: torch.dtype, cuda: bool) -> str:
    """`torch.cuda.FloatTensor`, as `Tensor.type()` names a tensor's type."""
    return ("torch.cuda." if cuda else "torch.") + LEGACY_TYPES.get(dtype, "Float") + "Tensor"


# The wrapper's own storage holds no memory; it is declared large so that the wrapper's
# shape can follow its data when an operator resizes or restrides it in place (`out=`,
# `transpose_`): PyTorch checks a new shape against the storage's size.
_WRAPPER_STORAGE = 2 ** 48
_WITHOUT_PYTHON = torch._C.DispatchKeySet(torch._C.DispatchKey.Python)
_TENSOR_DATA = torch._C.TensorBase.data


class EmulatedTensor(torch.Tensor):
    """A tensor on the emulated device: its data is the CPU tensor `_data`."""

    _data: torch.Tensor
    _index: int

    @staticmethod
    def __new__(cls, data: torch.Tensor, index: int = 0) -> "EmulatedTensor":
        self = torch.Tensor._make_wrapper_subclass(
            cls, data.size(), strides=data.stride(), storage_offset=data.storage_offset(),
            dtype=data.dtype, layout=data.layout, device=torch.device(BACKEND, index),
            requires_grad=False, storage_size=_WRAPPER_STORAGE)
        self._data = data
        self._index = index
        return self

    # Operators reach __torch_dispatch__; the Python API needs no second hook.
    __torch_function__ = torch._C._disabled_torch_function_impl

    @property
    def device(self) -> torch.device:  # type: ignore[override]
        return torch.device("cuda", self._index)

    @property
    def is_cuda(self) -> bool:  # type: ignore[override]
        return True

    @property
    def data(self) -> torch.Tensor:  # type: ignore[override]
        return _TENSOR_DATA.__get__(self)

    @data.setter
    def data(self, value: torch.Tensor) -> None:
        # `param.data = new` (Module.half(), .double(), .to(dtype)) swaps the tensor's
        # contents in C++; the CPU tensor it holds must be swapped with them.
        _TENSOR_DATA.__set__(self, value)
        if isinstance(value, EmulatedTensor):
            self._data, self._index = value._data, value._index

    def numpy(self, *, force: bool = False):  # type: ignore[override]
        raise TypeError(f"can't convert cuda:{self._index} device type tensor to numpy. "
                        "Use Tensor.cpu() to copy the tensor to host memory first.")

    def __array__(self, dtype=None, copy=None):
        return self.numpy()

    def tolist(self):  # type: ignore[override]
        return self._data.tolist()

    def data_ptr(self) -> int:  # type: ignore[override]
        return self._data.data_ptr()

    def __format__(self, format_spec: str) -> str:
        if self.dim() == 0:
            return self.item().__format__(format_spec)
        return object.__format__(self, format_spec)

    def __repr__(self, *, tensor_contents: Any = None) -> str:  # type: ignore[override]
        text = repr(self._data.detach())
        extra = f"device='cuda:{self._index}'"
        cut = text.find(", dtype=")
        cut = len(text) - 1 if cut == -1 else cut
        text = f"{text[:cut]}, {extra}{text[cut:]}"
        if self.grad_fn is not None:
            text = f"{text[:-1]}, grad_fn=<{type(self.grad_fn).__name__}>)"
        elif self.requires_grad:
            text = f"{text[:-1]}, requires_grad=True)"
        return ("Parameter containing:\n" + text) if getattr(self, "_is_param", False) else text

    def __deepcopy__(self, memo: Dict[int, Any]) -> "EmulatedTensor":
        if id(self) in memo:
            return memo[id(self)]
        copied = EmulatedTensor(self._data.detach().clone(), self._index)
        copied.requires_grad_(self.requires_grad)
        if getattr(self, "_is_param", False):
            copied._is_param = True
        if self.grad is not None:
            copied.grad = copy.deepcopy(self.grad, memo)
        memo[id(self)] = copied
        return copied

    def __reduce_ex__(self, protocol: int):
        # Pickled as the CPU tensor it holds, so that a checkpoint is a plain PyTorch
        # checkpoint; its storage is tagged `cuda:N` as a GPU's would be (`serialization`).
        data = self._data.detach()
        saved_storages[data.untyped_storage().data_ptr()] = self._index
        if getattr(self, "_is_param", False):
            return torch._utils._rebuild_parameter, (data, self.requires_grad, {})
        reducer, arguments = data.__reduce_ex__(protocol)[:2]
        if reducer is torch._utils._rebuild_tensor_v2 and self.requires_grad:
            arguments = arguments[:4] + (True,) + arguments[5:]
        return reducer, arguments

    @classmethod
    def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        flat = _tensors(args) + _tensors(tuple(kwargs.values()))
        check_devices(func, args, flat)
        held = {id(t._data): t for t in flat if isinstance(t, EmulatedTensor)}
        index = next(iter(held.values()))._index
        target = kwargs.get("device")
        if target is not None:
            target = torch.device(target)
            kwargs = dict(kwargs, device=torch.device("cpu"))
            if target.type == BACKEND:
                index = _index(target)
            elif target.type == "cpu":
                index = None  # a copy to the host (`.cpu()`, `.to("cpu")`): stays there
        if kwargs.get("pin_memory"):
            kwargs = dict(kwargs, pin_memory=False)
        arguments = _unwrap(args)
        if _writes_first_argument(func):  # its target must stay the held tensor itself
            arguments = arguments[:1] + _resolved(arguments[1:])
        else:
            arguments = _resolved(arguments)
        result = GPU_ONLY.get(func, func)(*arguments, **{k: _resolved(_unwrap(v)) for k, v in kwargs.items()})
        plain = {id(t) for t in flat if not isinstance(t, EmulatedTensor)}

        def wrap(value: Any) -> Any:
            if isinstance(value, (tuple, list)):
                return type(value)(wrap(v) for v in value)
            if not isinstance(value, torch.Tensor):
                return value
            if id(value) in held:  # an in-place op or out= returns its argument
                return _follow(held[id(value)])
            if index is None or id(value) in plain or isinstance(value, EmulatedTensor):
                return value  # ...or a CPU argument (`cpu.copy_(emulated)`), or a host copy
            return EmulatedTensor(value, index)

        return wrap(result)


# Operator arguments are tensors, numbers, and lists or tuples of them: no deeper
# structure, so these stand in for pytree, which costs more than the operators here.
def _tensors(values: Sequence[Any]) -> List[torch.Tensor]:
    found: List[torch.Tensor] = []
    for value in values:
        if isinstance(value, torch.Tensor):
            found.append(value)
        elif isinstance(value, (list, tuple)):
            found += _tensors(value)
    return found


def _resolved(value: Any) -> Any:
    """Conjugate and negative views made concrete: an operator called from here runs
    below the dispatcher's handling of those bits, so a CPU kernel would read the
    view's raw data (`a * torch.conj(b)` computing `a * b`)."""
    if isinstance(value, torch.Tensor):
        if value.is_conj():
            value = value.resolve_conj()
        return value.resolve_neg() if value.is_neg() else value
    if isinstance(value, (list, tuple)):
        return type(value)(_resolved(v) for v in value)
    return value


def _unwrap(value: Any) -> Any:
    if isinstance(value, EmulatedTensor):
        return value._data
    if isinstance(value, (list, tuple)):
        return type(value)(_unwrap(v) for v in value)
    return value


def _follow(wrapper: EmulatedTensor) -> EmulatedTensor:
    """The wrapper's shape follows its data's after an operator changed it in place
    (`x.transpose_(0, 1)`, `torch.cat(..., out=x)`, `arange`'s resized output)."""
    data = wrapper._data
    if (wrapper.shape, wrapper.stride(), wrapper.storage_offset()) != (data.shape, data.stride(),
                                                                       data.storage_offset()):
        with torch._C._ExcludeDispatchKeyGuard(_WITHOUT_PYTHON):
            aten.as_strided_.default(wrapper, data.shape, data.stride(), data.storage_offset())
    return wrapper


def to_emulated(tensor: torch.Tensor, index: Optional[int] = None) -> torch.Tensor:
    """`tensor` moved to the emulated device `index` (the current one by default)."""
    return tensor.to(torch.device(BACKEND, state.current if index is None else index))


# ---------------------------------------------------------------- device checks

# Operators that CUDA runs across devices on purpose: copies between host and device.
_CROSS_DEVICE = {
    aten.copy_.default, aten._to_copy.default, aten._copy_from.default,
    aten._copy_from_and_resize.default, aten.copy.default, aten.lift_fresh.default,
    aten.set_.source_Storage_storage_offset, aten.set_.source_Tensor,
    aten._has_same_storage_numel.default, aten.is_same_size.default,
}
# Advanced indexing: the indices may stay on the CPU (and so may index_put_'s values,
# which PyTorch moves or broadcasts). Reading a CPU tensor through an emulated index is
# refused; writing through one is not (index_put_ brings the indices to the CPU tensor,
# as a real GPU showed: tests/test_emulate_conformance.py, TDV_CONFORMANCE=gpu).
_INDEX_READS = {aten.index.Tensor, aten._unsafe_index.Tensor}
_INDEXING = _INDEX_READS | {
    aten.index_put_.default, aten.index_put.default, aten._index_put_impl_.default, aten._unsafe_index_put.default,
}
# Operators whose device check is the generated one, which excuses no CPU scalar
# (TensorIterator's elementwise and reduction kernels do).
_NO_SCALAR_EXEMPTION = {aten.index_select.default, aten.gather.default, aten.embedding.default}
_CONVOLUTIONS = {aten.convolution.default, aten._convolution.default, aten.conv2d.default,
                 aten.conv1d.default, aten.conv3d.default}


def device_name(tensor: torch.Tensor) -> str:
    if isinstance(tensor, EmulatedTensor):
        return f"cuda:{tensor._index}"
    return str(tensor.device)


def _type_string(tensor: torch.Tensor) -> str:
    """How PyTorch names a tensor's type in its convolution errors."""
    cuda = isinstance(tensor, EmulatedTensor)
    if tensor.dtype in LEGACY_TYPES and tensor.dtype != torch.bfloat16:
        return legacy_type_name(tensor.dtype, cuda)
    scalar = {torch.bfloat16: "BFloat16", torch.complex64: "ComplexFloat"}.get(tensor.dtype, str(tensor.dtype))
    return f"{'CUDA' if cuda else 'CPU'}{scalar}Type"


_WRITES_FIRST: Dict[Any, bool] = {}


def _writes_first_argument(func) -> bool:
    writes = _WRITES_FIRST.get(func)
    if writes is None:
        arguments = func._schema.arguments
        writes = _WRITES_FIRST[func] = bool(arguments) and arguments[0].alias_info is not None \
            and arguments[0].alias_info.is_write
    return writes


def _raise_mismatch(first: str, second: str) -> None:
    raise RuntimeError("Expected all tensors to be on the same device, but found at least two devices, "
                       f"{first} and {second}!")


def check_devices(func, args: Sequence[Any], flat: Sequence[Any]) -> None:
    """Raises PyTorch's error where a CUDA kernel would refuse this mix of devices."""
    if func in _CROSS_DEVICE:
        return
    receiver = args[0] if args else None
    if (isinstance(receiver, torch.Tensor) and not isinstance(receiver, EmulatedTensor)
            and receiver.device.type == "cpu" and func not in _INDEXING and _writes_first_argument(func)):
        # `total += loss`: a CPU scalar is excused as an input, never as the output.
        emulated = next(t for t in flat if isinstance(t, EmulatedTensor))
        _raise_mismatch(device_name(emulated), "cpu")
    if func in _NO_SCALAR_EXEMPTION:
        devices = list(dict.fromkeys(device_name(t) for t in flat if isinstance(t, torch.Tensor)))
        if len(devices) > 1:
            _raise_mismatch(devices[0], devices[1])
    if func in _INDEXING:
        receiver = args[0]
        indices = [t for t in _tensors(args[1:2]) if isinstance(t, EmulatedTensor)]
        if not isinstance(receiver, EmulatedTensor) and receiver.device.type == "cpu" and indices:
            if func not in _INDEX_READS:
                return
            raise RuntimeError(f"indices should be either on cpu or on the same device as the "
                               f"indexed tensor ({receiver.device})")
        flat = [receiver] + indices
    if func in _CONVOLUTIONS and len(args) >= 2:
        _check_convolution(args)
    seen: List[str] = []
    for value in flat:
        if not isinstance(value, torch.Tensor):
            continue
        if not isinstance(value, EmulatedTensor) and value.device.type == "cpu" and value.dim() == 0:
            continue  # a CPU scalar mixes with tensors of any device, as on CUDA
        name = device_name(value)
        if name not in seen:
            seen.append(name)
            if len(seen) == 2:
                _raise_mismatch(*seen)


def _check_convolution(args: Sequence[Any]) -> None:
    data, weight = args[0], args[1]
    bias = args[2] if len(args) > 2 and isinstance(args[2], torch.Tensor) else None
    if not isinstance(data, EmulatedTensor) and isinstance(weight, EmulatedTensor) and data.dim() < 5:
        # A CPU input picks PyTorch's CPU algorithm, whose CUDA kernel then checks devices
        # (seen on an H200, torch 2.11: the slow_conv2d wrapper names the weight).
        raise RuntimeError(f"Expected all tensors to be on the same device, but got weight is on "
                           f"{device_name(weight)}, different from other tensors on {data.device} (when "
                           "checking argument in method wrapper_CUDA___slow_conv2d_forward)")
    for name, parameter in (("weight", weight), ("bias", bias)):
        if isinstance(parameter, torch.Tensor) and device_name(parameter) != device_name(data):
            # A GPU input meets cuDNN's check, which stops at "the same" (seen on an H200);
            # a CPU input, the CPU algorithms' longer one.
            tail = "" if isinstance(data, EmulatedTensor) else \
                f" or input should be a MKLDNN tensor and {name} is a dense tensor"
            raise RuntimeError(f"Input type ({_type_string(data)}) and {name} type ({_type_string(parameter)}) "
                               f"should be the same{tail}")
