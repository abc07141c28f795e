"""Conformance table of the emulated CUDA GPU (`flake8_torchdevice.emulate`).

One test per row. Each row names a program that a real CUDA machine either refuses
(STRICT: the emulator must raise PyTorch's own exception type and message) or runs
(LENIENT: the emulator must run it, and its numbers must equal a plain-CPU computation
of the same values). Docs point at rows by test name (`test_strict_cat`, ...).

ROWS
  STRICT  (CUDA raises; the emulator raises the same type and message)
    test_strict_elementwise[*]        emulated op non-scalar CPU tensor: "Expected all tensors to be on the same device"
    test_strict_cat                   torch.cat([emulated, cpu])
    test_strict_linear_cpu_input      matmul / nn.Linear on the emulated device fed a CPU input
    test_strict_cross_entropy_cpu_target  F.cross_entropy(emulated logits, CPU target)
    test_strict_batchnorm_cpu_running_stats  F.batch_norm with CPU running_mean / running_var
    test_strict_conv_cpu_input[*]     conv1d/conv2d(CPU input, emulated weight): "Expected all tensors to be on
                                      the same device, but got weight is on cuda:0, ... _slow_conv2d_forward)"
    test_strict_conv2d_cpu_weight     conv2d(emulated input, CPU weight):
                                      "Input type (torch.cuda.FloatTensor) and weight type (torch.FloatTensor) ..."
    test_strict_numpy                 emulated.numpy(): TypeError "can't convert cuda:0 device type tensor to numpy"
    test_strict_index_select_cpu_index     torch.index_select(emulated, 0, CPU index)
    test_strict_embedding_cpu_indices      nn.Embedding on the device fed CPU indices
    test_strict_index_cpu_tensor_with_emulated_indices  cpu[emulated idx] (read):
                                      "indices should be either on cpu or on the same device ..."
    test_strict_two_devices           cuda:0 + cuda:1 with 2 emulated devices (in-process)
    test_strict_two_devices_cli       the same under `python -m flake8_torchdevice.emulate --devices 2`
    test_strict_invalid_ordinal[*]    "cuda:1" with one device: "CUDA error: invalid device ordinal"
    test_strict_checkpoint_plain_cpu_load  emulated checkpoint, plain CPU process, no map_location
    test_strict_data_parallel_module_on_cpu[*]  DataParallel whose module is not on device_ids[0]
    test_strict_ddp_device_ids_cpu_module     DDP(cpu module, device_ids=[0]) (one-process gloo group)
    test_strict_inplace_into_cpu_scalar       `total = torch.tensor(0.); total += gpu_loss` (CPU 0-dim *output*)
    test_strict_index_select_cpu_0dim_index   index_select(emulated, 0, CPU 0-dim index)
    -- not met yet (xfail strict; see each reason):
    test_strict_clamp_cpu_0dim_bounds[*]      torch.clamp(emulated, min=CPU 0-dim tensor[, max=...])
    test_strict_masked_fill_cpu_mask          CPU mask: "expected self and mask to be on the same device ..."
    test_strict_index_put_cpu_values[*]       x[idx] = non-scalar CPU values; index_put_(accumulate=True)
  LENIENT (CUDA accepts; the emulator accepts with the same numbers)
    test_lenient_cpu_scalars[*]       CPU 0-dim tensors / Python scalars in arithmetic, where, masked_fill, pow;
                                      Python-number clamp bounds (a CPU *tensor* bound is a STRICT row)
    test_lenient_advanced_indexing_read[*] / _write[*]  CPU long / bool index tensors
    test_lenient_write_cpu_tensor_through_emulated_indices[*]  cpu[emulated idx] = v, index_put_
    test_lenient_item / test_lenient_tolist
    test_lenient_formatting[*]        print / repr / str / f-string of emulated tensors
    test_lenient_copy_across_devices  copy_ host->device and device->host
    test_lenient_to_cpu[*]            .cpu(), .to("cpu"), .to(torch.device("cpu"))
    test_lenient_save_load_roundtrip[*]  torch.save/torch.load of a state_dict, map_location variants
    test_lenient_dataloader_pin_memory[0|2]  pin_memory=True then .to("cuda", non_blocking=True)
    test_lenient_training_step[SGD|Adam|AdamW]  backward + optimizer steps equal plain CPU
    test_lenient_no_grad / test_lenient_inplace_ops
    test_lenient_autocast_gradscaler  torch.autocast("cuda") + torch.amp.GradScaler("cuda") steps run
    test_lenient_deepcopy_model
    test_lenient_module_dtype_after_move[*]  Module.half()/.double()/.to(dtype) after .cuda()
    test_lenient_data_assignment      t.data = other (shape and values follow)
    test_lenient_optimizer_built_before_move  optimizer built before model.cuda() still trains it
    test_lenient_optimizer_built_before_move_again_and_again  ... also while old graphs await the collector
    test_lenient_conjugate_and_negative_views  a * torch.conj(b) on the device
    test_lenient_cuda_initial_seed
    test_lenient_module_moves[*]      Module.cuda() / .to("cuda") / .to(torch.device("cuda")) + is_cuda checks
    test_lenient_cuda_queries         torch.cuda.device_count/current_device/set_device/... queries
    test_lenient_cuda_event_timing
    test_lenient_legacy_types         torch.cuda.FloatTensor(2, 3), .type(torch.cuda.FloatTensor)
    test_lenient_new_and_like         x.new_zeros, torch.zeros_like
    test_lenient_factories[*]         device="cuda", device=0, requires_grad=True
    test_lenient_module_factory_device  nn.Linear(..., device="cuda")
    test_lenient_recurrent_layers[*]  GRU / LSTM .cuda() trains (cuDNN said no to, as in a CUDA build)
    test_lenient_device_of            with torch.cuda.device_of(x): x's device is current
    test_lenient_data_parallel_one_device  DataParallel(cpu module) on one GPU: moved, CPU batch scattered
    test_lenient_ddp_on_emulated_module DDP(emulated module, device_ids=[0]) trains
    test_lenient_new_tensor[*]        x.new_tensor(data), x.new(data)
    test_lenient_tensor_of_emulated_scalars  torch.tensor([gpu 0-dim, ...])
    test_lenient_cuda_generator       torch.Generator(device="cuda") (a CPU generator underneath)
    test_lenient_cuda_rng_state       torch.cuda.get_rng_state / set_rng_state
    -- not met yet (xfail strict; see its reason):
    test_lenient_autocast_dtype       Linear under torch.autocast("cuda") computes in float16
  SESSION
    test_session_nested_raises / test_session_refuses_a_visible_real_gpu / test_session_exit_restores_cpu_only

On a machine with a real NVIDIA GPU, `TDV_CONFORMANCE=gpu pytest tests/test_emulate_conformance.py`
runs the same rows on the GPU instead of the emulator: that checks the table itself (every STRICT
message is the one CUDA really raises, every LENIENT program really runs, and the xfail rows pass
there). Rows about the emulator alone (its command line, its session) skip; rows that need two
devices skip on a one-GPU machine; numbers compare with float tolerances, since a GPU's kernels
round differently from the CPU's.
"""

from __future__ import annotations

import contextlib
import copy
import os
import re
import subprocess
import sys
import textwrap

import pytest

torch = pytest.importorskip("torch")
nn = torch.nn
F = torch.nn.functional

from flake8_torchdevice import emulate  # noqa: E402
from flake8_torchdevice.emulate import emulate_cuda  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ON_GPU = os.environ.get("TDV_CONFORMANCE") == "gpu"  # rows run on the machine's real GPU
# The emulator computes on the CPU, so its numbers are the CPU's exactly; a GPU's are close.
CLOSE = dict(rtol=1e-5, atol=1e-6) if ON_GPU else dict(rtol=0, atol=0)
SAME_DEVICE = r"Expected all tensors to be on the same device"
CUDA_AND_CPU = SAME_DEVICE + r".*(cuda:0.*cpu|cpu.*cuda:0)"


@contextlib.contextmanager
def cuda_devices(count: int = 1):
    """`count` CUDA devices for a row: emulated, or the real GPUs under TDV_CONFORMANCE=gpu."""
    if ON_GPU:
        if not torch.cuda.is_available():
            pytest.fail("TDV_CONFORMANCE=gpu, but PyTorch sees no GPU")
        if torch.cuda.device_count() < count:
            pytest.skip(f"needs {count} GPUs; this machine has {torch.cuda.device_count()}")
        yield None
        return
    if emulate.active():
        pytest.skip("the session-wide emulator (--emulate-cuda) is active")
    with emulate_cuda(devices=count) as session:
        yield session


def emulator_only(reason: str):
    """A row about the emulator itself, which a real GPU cannot check."""
    return pytest.mark.skipif(ON_GPU, reason=f"emulator only: {reason}")


def emulator_gap(reason: str, **kwargs):
    """A row the emulator does not meet yet (strict xfail); on a real GPU it must pass."""
    return pytest.mark.xfail(not ON_GPU, strict=True, reason=f"emulator gap: {reason}", **kwargs)


@pytest.fixture
def emu():
    """One CUDA device for the test (these rows drive the emulator themselves)."""
    with cuda_devices(1) as session:
        yield session


@pytest.fixture
def emu2():
    with cuda_devices(2) as session:
        yield session


def on_emulated(t: "torch.Tensor", index: int = 0) -> bool:
    """True for a tensor on the (emulated) CUDA device `index`, as CUDA code checks it."""
    return t.is_cuda and t.device.type == "cuda" and t.device == torch.device("cuda", index)


def same(emulated: "torch.Tensor", expected: "torch.Tensor") -> None:
    """`emulated` is on the (emulated) device and holds `expected`'s values (exactly, when emulated)."""
    assert on_emulated(emulated), emulated.device
    assert emulated.dtype == expected.dtype
    torch.testing.assert_close(emulated.cpu(), expected, **CLOSE)


def run_python(code: str, *args: str, emulated: bool = False, cwd: str = ROOT) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    env["CUDA_VISIBLE_DEVICES"] = ""  # a plain CPU-only process, also on a machine with a GPU
    script = os.path.join(cwd, "script.py")
    with open(script, "w") as f:
        f.write(textwrap.dedent(code))
    prefix = ["-m", "flake8_torchdevice.emulate", *args] if emulated else []
    return subprocess.run([sys.executable, *prefix, script], capture_output=True, text=True, env=env,
                          cwd=cwd, timeout=120)


# ====================================================================== STRICT


@pytest.mark.parametrize("op", ["add", "rmul", "sub_inplace", "where_other", "maximum"])
def test_strict_elementwise(emu, op):
    """Elementwise op mixing an emulated tensor and a non-scalar CPU tensor: RuntimeError
    "Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!"."""
    a = torch.ones(3, device="cuda")
    b = torch.ones(3)
    call = {
        "add": lambda: a + b,
        "rmul": lambda: b * a,
        "sub_inplace": lambda: a.sub_(b),
        "where_other": lambda: torch.where(a > 0, a, b),
        "maximum": lambda: torch.maximum(a, b),
    }[op]
    with pytest.raises(RuntimeError, match=CUDA_AND_CPU):
        call()


def test_strict_cat(emu):
    """torch.cat of an emulated and a CPU tensor."""
    with pytest.raises(RuntimeError, match=CUDA_AND_CPU):
        torch.cat([torch.ones(2, device="cuda"), torch.ones(2)])


@pytest.mark.parametrize("kind", ["matmul", "linear_module"])
def test_strict_linear_cpu_input(emu, kind):
    """matmul / nn.Linear on the emulated device with a CPU input."""
    x = torch.randn(4, 3)
    with pytest.raises(RuntimeError, match=CUDA_AND_CPU):
        if kind == "matmul":
            x @ torch.randn(3, 2, device="cuda")
        else:
            nn.Linear(3, 2).cuda()(x)


def test_strict_cross_entropy_cpu_target(emu):
    """F.cross_entropy(emulated logits, CPU target)."""
    logits = torch.randn(4, 5, device="cuda")
    with pytest.raises(RuntimeError, match=CUDA_AND_CPU):
        F.cross_entropy(logits, torch.tensor([0, 1, 2, 3]))


def test_strict_batchnorm_cpu_running_stats(emu):
    """batch_norm of an emulated input with CPU running statistics."""
    bn = nn.BatchNorm1d(3).cuda()
    x = torch.randn(4, 3, device="cuda")
    with pytest.raises(RuntimeError, match=CUDA_AND_CPU):
        F.batch_norm(x, torch.zeros(3), torch.ones(3), bn.weight, bn.bias, training=True)
    bn.running_mean = torch.zeros(3)  # a buffer replaced by a CPU tensor after .cuda()
    with pytest.raises(RuntimeError, match=CUDA_AND_CPU):
        bn(x)


@pytest.mark.parametrize("conv", ["conv1d", "conv2d"])
def test_strict_conv_cpu_input(emu, conv):
    """A convolution with a CPU input and an emulated weight: the CPU algorithm's CUDA kernel
    names the weight (seen on an H200, torch 2.11.0+cu130)."""
    layer = nn.Conv1d(1, 2, 3).cuda() if conv == "conv1d" else nn.Conv2d(1, 2, 3).cuda()
    x = torch.randn(1, 1, 5) if conv == "conv1d" else torch.randn(1, 1, 5, 5)
    message = ("Expected all tensors to be on the same device, but got weight is on cuda:0, different from "
               "other tensors on cpu (when checking argument in method wrapper_CUDA___slow_conv2d_forward)")
    with pytest.raises(RuntimeError, match=re.escape(message)):
        layer(x)


def test_strict_conv2d_cpu_weight(emu):
    """conv2d with an emulated input and a CPU weight (a model left on the CPU): cuDNN's check
    (seen on an H200, torch 2.11.0+cu130)."""
    conv = nn.Conv2d(1, 2, 3)
    message = "Input type (torch.cuda.FloatTensor) and weight type (torch.FloatTensor) should be the same"
    with pytest.raises(RuntimeError, match=re.escape(message) + "$"):
        conv(torch.randn(1, 1, 5, 5, device="cuda"))


def test_strict_numpy(emu):
    """.numpy() (and np.asarray) of an emulated tensor."""
    np = pytest.importorskip("numpy")
    x = torch.ones(2, device="cuda")
    message = ("can't convert cuda:0 device type tensor to numpy. "
               "Use Tensor.cpu() to copy the tensor to host memory first.")
    with pytest.raises(TypeError, match=re.escape(message)):
        x.numpy()
    with pytest.raises(TypeError, match=re.escape(message)):
        np.asarray(x)
    assert (x.cpu().numpy() == np.ones(2, dtype=np.float32)).all()


def test_strict_index_select_cpu_index(emu):
    """torch.index_select(emulated, 0, CPU index)."""
    x = torch.randn(5, 3, device="cuda")
    with pytest.raises(RuntimeError, match=CUDA_AND_CPU):
        torch.index_select(x, 0, torch.tensor([0, 2]))


def test_strict_embedding_cpu_indices(emu):
    """nn.Embedding on the emulated device called with CPU indices."""
    embedding = nn.Embedding(10, 4).cuda()
    with pytest.raises(RuntimeError, match=CUDA_AND_CPU):
        embedding(torch.tensor([[1, 2, 3]]))


def test_strict_index_cpu_tensor_with_emulated_indices(emu):
    """Reading a CPU tensor through emulated indices: "indices should be either on cpu or on
    the same device as the indexed tensor (cpu)". (Writing through them is a LENIENT row.)"""
    x = torch.arange(5.0)
    idx = torch.tensor([0, 2], device="cuda")
    message = "indices should be either on cpu or on the same device as the indexed tensor (cpu)"
    with pytest.raises(RuntimeError, match=re.escape(message)):
        x[idx]


def test_strict_two_devices(emu2):
    """cuda:0 + cuda:1 with two emulated devices."""
    a = torch.ones(2, device="cuda:0")
    b = torch.ones(2, device="cuda:1")
    assert (a.device, b.device) == (torch.device("cuda", 0), torch.device("cuda", 1))
    assert torch.cuda.device_count() == 2
    with pytest.raises(RuntimeError, match=SAME_DEVICE + r".*(cuda:0.*cuda:1|cuda:1.*cuda:0)"):
        a + b
    same(a + b.to("cuda:0"), torch.full((2,), 2.0))
    assert on_emulated(b * 3, 1)


@emulator_only("its command line")
def test_strict_two_devices_cli(tmp_path):
    """The same mix under `python -m flake8_torchdevice.emulate --devices 2 script.py`:
    exit status 1 and PyTorch's message on stderr."""
    result = run_python("""
        import torch
        assert torch.cuda.device_count() == 2
        a = torch.ones(2, device="cuda:0")
        b = torch.ones(2).to("cuda:1")
        print("devices", a.device, b.device)
        a + b
    """, "--devices", "2", emulated=True, cwd=str(tmp_path))
    assert result.returncode == 1, result.stderr
    assert "devices cuda:0 cuda:1" in result.stdout
    assert re.search(r"RuntimeError: " + SAME_DEVICE + r".*cuda:0.*cuda:1", result.stderr), result.stderr


@pytest.mark.parametrize("call", ["factory", "to", "cuda_method", "set_device", "device_context"])
def test_strict_invalid_ordinal(emu, call):
    """cuda:1 when one GPU is present: "CUDA error: invalid device ordinal"."""
    x = torch.ones(2)
    action = {
        "factory": lambda: torch.zeros(2, device="cuda:1"),
        "to": lambda: x.to("cuda:1"),
        "cuda_method": lambda: x.cuda(1),
        "set_device": lambda: torch.cuda.set_device(1),
        "device_context": lambda: torch.cuda.device(1).__enter__(),
    }[call]
    with pytest.raises(RuntimeError, match="CUDA error: invalid device ordinal"):
        action()
    assert torch.cuda.current_device() == 0


def test_strict_checkpoint_plain_cpu_load(emu, tmp_path):
    """A checkpoint saved under the emulator, loaded by a plain CPU process without
    map_location: PyTorch's "Attempting to deserialize object on a CUDA device" error;
    with map_location="cpu" it loads the same numbers."""
    torch.manual_seed(0)
    model = nn.Linear(3, 2).cuda()
    path = tmp_path / "ckpt.pt"
    torch.save(model.state_dict(), path)
    expected = {k: v.cpu() for k, v in model.state_dict().items()}
    torch.save(expected, tmp_path / "expected.pt")
    result = run_python(f"""
        import sys, torch
        assert not torch.cuda.is_available()
        expected = torch.load({str(tmp_path / "expected.pt")!r})
        state = torch.load({str(path)!r}, map_location="cpu")
        assert all(torch.equal(state[k], expected[k]) for k in expected), "values differ"
        try:
            torch.load({str(path)!r})
        except RuntimeError as error:
            print("ERROR", error)
            sys.exit(3)
    """, cwd=str(tmp_path))
    assert result.returncode == 3, result.stdout + result.stderr
    assert re.search(r"ERROR Attempting to deserialize object on a CUDA device but "
                     r"torch.cuda.is_available\(\) is False", result.stdout), result.stdout


@pytest.mark.parametrize("case", ["moved_back_to_cpu", "two_devices_cpu_module", "two_devices_on_cuda1"])
def test_strict_data_parallel_module_on_cpu(case):
    """nn.DataParallel whose module is not on device_ids[0]: "module must have its parameters
    and buffers on device cuda:0 (device_ids[0]) but found one of them on device: cpu".
    (With one device, DataParallel.__init__ itself moves the module to cuda:0, so the
    error needs the module moved back, or two device_ids.)"""
    with cuda_devices(1 if case == "moved_back_to_cpu" else 2):
        x = torch.randn(4, 3, device="cuda")
        if case == "moved_back_to_cpu":
            dp = nn.DataParallel(nn.Linear(3, 2))
            dp.module.cpu()
            found = "cpu"
        elif case == "two_devices_cpu_module":
            dp = nn.DataParallel(nn.Linear(3, 2), device_ids=[0, 1])
            found = "cpu"
        else:
            dp = nn.DataParallel(nn.Linear(3, 2).to("cuda:1"), device_ids=[0, 1])
            found = "cuda:1"
        message = ("module must have its parameters and buffers on device cuda:0 (device_ids[0]) "
                   f"but found one of them on device: {found}")
        with pytest.raises(RuntimeError, match=re.escape(message)):
            dp(x)


def test_lenient_data_parallel_one_device(emu):
    """nn.DataParallel(cpu module) with one GPU: moved to cuda:0 by DataParallel itself; a
    CPU batch is scattered to the device, the output comes back on cuda:0."""
    torch.manual_seed(0)
    cpu_model = nn.Linear(3, 2)
    dp = nn.DataParallel(copy.deepcopy(cpu_model))
    assert all(on_emulated(p) for p in dp.module.parameters())
    x = torch.randn(4, 3)
    same(dp(x).detach(), cpu_model(x).detach())
    same(dp(x.cuda()).detach(), cpu_model(x).detach())


@pytest.fixture
def gloo_group():
    dist = pytest.importorskip("torch.distributed")
    if not dist.is_available() or not dist.is_gloo_available():
        pytest.skip("torch.distributed with gloo is not available")
    dist.init_process_group("gloo", init_method="tcp://127.0.0.1:0", rank=0, world_size=1)
    try:
        yield dist
    finally:
        dist.destroy_process_group()


def test_strict_ddp_device_ids_cpu_module(emu, gloo_group):
    """DistributedDataParallel(cpu module, device_ids=[0])."""
    from torch.nn.parallel import DistributedDataParallel as DDP

    with pytest.raises(ValueError, match=re.escape(
            "DistributedDataParallel device_ids and output_device arguments only work with "
            "single-device/multiple-device GPU modules or CPU modules, but got device_ids [0], "
            "output_device None, and module parameters {device(type='cpu')}.")):
        DDP(nn.Linear(3, 2), device_ids=[0])


# ---- STRICT rows the emulator does not meet yet (xfail, strict: a fix turns them into failures to flip)


def test_strict_inplace_into_cpu_scalar(emu):
    """`total = torch.tensor(0.); total += loss` with `loss` on the GPU: the output is a CPU
    tensor, which TensorIterator never exempts: "... cuda:0 and cpu!"."""
    total = torch.tensor(0.0)
    loss = torch.tensor([1.0, 2.0], device="cuda").sum()
    with pytest.raises(RuntimeError, match=CUDA_AND_CPU):
        total += loss


def test_strict_index_select_cpu_0dim_index(emu):
    """torch.index_select(emulated, 0, CPU 0-dim index)."""
    x = torch.randn(5, 3, device="cuda")
    with pytest.raises(RuntimeError, match=CUDA_AND_CPU):
        torch.index_select(x, 0, torch.tensor(1))


@emulator_gap("clamp's TensorIterator does not allow CPU scalars "
              "(no allow_cpu_scalars in its meta function), and at most one CPU "
              "scalar is ever allowed; the emulator accepts both")
@pytest.mark.parametrize("bounds", ["min_only", "min_and_max"])
def test_strict_clamp_cpu_0dim_bounds(emu, bounds):
    """torch.clamp(emulated, min=CPU 0-dim tensor [, max=CPU 0-dim tensor])."""
    x = torch.randn(4, device="cuda")
    with pytest.raises(RuntimeError, match=CUDA_AND_CPU + "|Trying to pass too many CPU scalars"):
        if bounds == "min_only":
            torch.clamp(x, min=torch.tensor(0.0))
        else:
            torch.clamp(x, min=torch.tensor(-0.5), max=torch.tensor(0.5))


@emulator_gap("right type, generic message; masked_fill__cuda raises "
              "'expected self and mask to be on the same device, but got mask on cpu "
              "and self on cuda:0'")
def test_strict_masked_fill_cpu_mask(emu):
    """masked_fill of an emulated tensor with a CPU (non-0-dim) mask."""
    x = torch.randn(2, 3, device="cuda")
    with pytest.raises(RuntimeError, match=re.escape(
            "expected self and mask to be on the same device, but got mask on cpu and self on cuda:0")):
        x.masked_fill(torch.ones(2, 3, dtype=torch.bool), 0.0)


@emulator_gap("index_put_'s non-scalar CPU values are accepted; CUDA "
              "moves only a 0-dim value (accumulate: 'expected device cuda:0 but got "
              "device cpu for value tensor'; else TensorIterator's same-device check)")
@pytest.mark.parametrize("accumulate", [False, True])
def test_strict_index_put_cpu_values(emu, accumulate):
    """x[idx] = CPU values / index_put_(..., CPU values, accumulate=True) with non-scalar values."""
    x = torch.zeros(5, device="cuda")
    idx = torch.tensor([0, 2])
    message = "expected device cuda:0 but got device cpu for value tensor" if accumulate else CUDA_AND_CPU
    with pytest.raises(RuntimeError, match=message):
        if accumulate:
            x.index_put_((idx,), torch.tensor([1.0, 2.0]), accumulate=True)
        else:
            x[idx] = torch.tensor([1.0, 2.0])


# ====================================================================== LENIENT


@pytest.mark.parametrize("op", ["add_0dim", "rsub_0dim", "mul_scalar", "div_0dim_inplace", "where_0dim",
                                "where_scalar", "masked_fill_0dim", "masked_fill_scalar", "clamp_scalar",
                                "clamp_min_scalar", "pow_0dim", "mul_0dim_emulated_0dim"])
def test_lenient_cpu_scalars(emu, op):
    """CPU 0-dim tensors and Python scalars mix with emulated tensors, as on CUDA (at most one
    CPU 0-dim input per TensorIterator op; torch.where moves its CPU scalars itself)."""
    base = torch.tensor([-2.0, -0.5, 0.5, 2.0])
    s = torch.tensor(0.25)  # a CPU 0-dim tensor
    ops = {
        "add_0dim": lambda x: x + s,
        "rsub_0dim": lambda x: s - x,
        "mul_scalar": lambda x: x * 3 + 1.5,
        "div_0dim_inplace": lambda x: x.clone().div_(s),
        "where_0dim": lambda x: torch.where(x > 0, x, s),
        "where_scalar": lambda x: torch.where(x > 0, x, 0.0),
        "masked_fill_0dim": lambda x: x.masked_fill(x < 0, s),
        "masked_fill_scalar": lambda x: x.masked_fill(x < 0, -1.0),
        "clamp_scalar": lambda x: x.clamp(-1, 1),
        "clamp_min_scalar": lambda x: torch.clamp(x, min=0.1),
        "pow_0dim": lambda x: x.abs() ** torch.tensor(2.0),
        "mul_0dim_emulated_0dim": lambda x: x.sum() * s,
    }
    same(ops[op](base.cuda()), ops[op](base))


@pytest.mark.parametrize("index", ["long", "bool", "tuple_long", "slice_and_long"])
def test_lenient_advanced_indexing_read(emu, index):
    """Reading an emulated tensor with CPU index / mask tensors."""
    base = torch.arange(20.0).reshape(4, 5)
    pick = {
        "long": lambda x: x[torch.tensor([0, 2, 3])],
        "bool": lambda x: x[x.cpu() > 7] if x.is_cuda else x[x > 7],
        "tuple_long": lambda x: x[torch.tensor([0, 1]), torch.tensor([4, 2])],
        "slice_and_long": lambda x: x[:, torch.tensor([1, 3])],
    }[index]
    same(pick(base.cuda()), pick(base))


@pytest.mark.parametrize("index", ["long_scalar", "bool_scalar", "long_emulated_values", "index_put_"])
def test_lenient_advanced_indexing_write(emu, index):
    """Writing an emulated tensor through CPU index / mask tensors."""
    base = torch.arange(20.0).reshape(4, 5)

    def write(x):
        x = x.clone()
        cuda = x.is_cuda
        idx, mask = torch.tensor([0, 3]), (torch.arange(20.0).reshape(4, 5) % 3 == 0)
        if index == "long_scalar":
            x[idx] = -1.0
        elif index == "bool_scalar":
            x[mask] = 7.0
        elif index == "long_emulated_values":
            x[idx] = torch.full((2, 5), 9.0, device="cuda" if cuda else "cpu")
        else:  # a CPU 0-dim value is moved to the device even with accumulate=True
            x.index_put_((idx, torch.tensor([1, 1])), torch.tensor(5.0), accumulate=True)
        return x

    same(write(base.cuda()), write(base))


@pytest.mark.parametrize("write", ["scalar", "cpu_values", "accumulate"])
def test_lenient_write_cpu_tensor_through_emulated_indices(emu, write):
    """Writing a CPU tensor through emulated indices works: index_put_ brings the indices to
    the CPU tensor (seen on an H200, torch 2.11.0+cu130, where reading through them fails)."""
    x = torch.arange(5.0)
    expected = x.clone()
    idx = torch.tensor([0, 2])
    for target, index in ((x, idx.cuda()), (expected, idx)):
        if write == "scalar":
            target[index] = -1.0
        elif write == "cpu_values":
            target[index] = torch.tensor([7.0, 8.0])
        else:
            target.index_put_((index,), torch.tensor([1.0, 1.0]), accumulate=True)
    assert not x.is_cuda and torch.equal(x, expected)


def test_lenient_item(emu):
    """.item() of emulated 0-dim / one-element tensors gives Python numbers."""
    x = torch.tensor([1.5, 2.5], device="cuda")
    assert x.sum().item() == 4.0 and isinstance(x.sum().item(), float)
    assert torch.tensor([7], device="cuda").item() == 7
    assert float(x[0]) == 1.5 and int(x[1]) == 2 and bool(x[0] > 1)


def test_lenient_tolist(emu):
    x = torch.arange(6, device="cuda").reshape(2, 3)
    assert x.tolist() == [[0, 1, 2], [3, 4, 5]]
    assert torch.tensor(2.5, device="cuda").tolist() == 2.5


@pytest.mark.parametrize("kind", ["repr", "str", "print", "fstring_0dim", "fstring_tensor", "int_dtype",
                                  "grad_fn", "requires_grad", "parameter"])
def test_lenient_formatting(emu, kind, capsys):
    """print / repr / f-strings of emulated tensors read as a CUDA tensor's do."""
    x = torch.tensor([1.0, 2.5], device="cuda")
    if kind == "repr":
        assert repr(x) == "tensor([1.0000, 2.5000], device='cuda:0')"
    elif kind == "str":
        assert str(x) == "tensor([1.0000, 2.5000], device='cuda:0')"
    elif kind == "print":
        print(x)
        assert capsys.readouterr().out == "tensor([1.0000, 2.5000], device='cuda:0')\n"
    elif kind == "fstring_0dim":
        # A 0-dim tensor formats as its number (Tensor.__format__), on CUDA as on the CPU.
        assert f"{x.sum():.2f} {x[1]} {x[0]!r}" == "3.50 2.5 tensor(1., device='cuda:0')"
    elif kind == "fstring_tensor":
        assert f"loss={x}" == "loss=tensor([1.0000, 2.5000], device='cuda:0')"
    elif kind == "int_dtype":
        assert repr(torch.tensor([1, 2], dtype=torch.int32, device="cuda")) == \
            "tensor([1, 2], device='cuda:0', dtype=torch.int32)"
    elif kind == "grad_fn":
        y = torch.tensor([1.0], device="cuda", requires_grad=True) * 2
        assert repr(y) == "tensor([2.], device='cuda:0', grad_fn=<MulBackward0>)"
    elif kind == "requires_grad":
        y = torch.tensor([1.0], device="cuda", requires_grad=True)
        assert repr(y) == "tensor([1.], device='cuda:0', requires_grad=True)"
    else:
        p = nn.Parameter(torch.tensor([1.0])).cuda()
        layer = nn.Linear(1, 1, bias=False).cuda()
        with torch.no_grad():
            layer.weight.fill_(1.0)
        assert repr(layer.weight) == "Parameter containing:\ntensor([[1.]], device='cuda:0', requires_grad=True)"
        assert repr(p) == "tensor([1.], device='cuda:0', grad_fn=<ToCopyBackward0>)"


def test_lenient_copy_across_devices(emu):
    """copy_ host->device and device->host."""
    src = torch.arange(4.0)
    dst = torch.zeros(4, device="cuda")
    out = dst.copy_(src)
    assert out is dst
    same(dst, src)
    host = torch.empty(4)
    host.copy_(dst * 2)
    assert not host.is_cuda and torch.equal(host, src * 2)
    dst[1:3].copy_(torch.tensor([9.0, 9.0]))
    same(dst, torch.tensor([0.0, 9.0, 9.0, 3.0]))


@pytest.mark.parametrize("move", ["cpu", "to_str", "to_device", "to_dtype_and_device", "to_non_blocking"])
def test_lenient_to_cpu(emu, move):
    """Emulated -> host copies: `.cpu()`, `.to("cpu")`, ..."""
    x = torch.arange(4.0, device="cuda")
    y = {
        "cpu": lambda: x.cpu(),
        "to_str": lambda: x.to("cpu"),
        "to_device": lambda: x.to(torch.device("cpu")),
        "to_dtype_and_device": lambda: x.to("cpu", torch.float64),
        "to_non_blocking": lambda: x.to("cpu", non_blocking=True),
    }[move]()
    assert type(y) is torch.Tensor and y.device == torch.device("cpu") and not y.is_cuda
    assert torch.equal(y, torch.arange(4.0, dtype=y.dtype))
    assert (y + torch.ones(4)).device.type == "cpu"  # a plain CPU tensor again


@pytest.mark.parametrize("map_location", ["none", "cpu", "cuda", "device_cuda0", "lambda_host", "lambda_cuda",
                                          "dict_cuda0_cpu"])
def test_lenient_save_load_roundtrip(emu, tmp_path, map_location):
    """torch.save / torch.load of a state_dict under the emulator."""
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4)).cuda()
    model(torch.randn(5, 3, device="cuda"))  # updates the running stats
    expected = {k: v.detach().cpu().clone() for k, v in model.state_dict().items()}
    path = tmp_path / "ckpt.pt"
    torch.save(model.state_dict(), path)
    location, on_device = {
        "none": (None, True),
        "cpu": ("cpu", False),
        "cuda": ("cuda", True),
        "device_cuda0": (torch.device("cuda:0"), True),
        "lambda_host": (lambda storage, loc: storage, False),
        "lambda_cuda": (lambda storage, loc: storage.cuda(0), True),
        "dict_cuda0_cpu": ({"cuda:0": "cpu"}, False),
    }[map_location]
    state = torch.load(path, map_location=location) if map_location != "none" else torch.load(path)
    assert state.keys() == expected.keys()
    for key, value in state.items():
        assert value.is_cuda is on_device, (key, value.device)
        assert value.dtype == expected[key].dtype
        assert torch.equal(value.cpu(), expected[key]), key
    fresh = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4)).cuda()
    fresh.load_state_dict(state)
    assert all(p.is_cuda for p in fresh.state_dict().values())


class _Squares(torch.utils.data.Dataset):
    def __len__(self):
        return 10

    def __getitem__(self, i):
        return torch.full((3,), float(i)), i


@pytest.mark.parametrize("workers", [0, 2])
def test_lenient_dataloader_pin_memory(emu, workers):
    """DataLoader(pin_memory=True) then .to("cuda", non_blocking=True)."""
    loader = torch.utils.data.DataLoader(_Squares(), batch_size=4, pin_memory=True, num_workers=workers)
    seen = []
    for x, y in loader:
        x, y = x.to("cuda", non_blocking=True), y.cuda(non_blocking=True)
        assert on_emulated(x) and on_emulated(y)
        seen.append((x * 2).sum().item())
        seen.append(y.tolist())
    assert seen == [36.0, [0, 1, 2, 3], 132.0, [4, 5, 6, 7], 102.0, [8, 9]]


def _train(device: str, optimizer_cls, steps: int = 3):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3)).to(device)
    optimizer = optimizer_cls(model.parameters(), lr=0.1)
    x = torch.randn(6, 4).to(device)
    y = torch.tensor([0, 1, 2, 0, 1, 2]).to(device)
    losses = []
    for _ in range(steps):
        optimizer.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses, [p.detach().cpu() for p in model.parameters()], model


@pytest.mark.parametrize("optimizer", ["SGD", "Adam", "AdamW"])
def test_lenient_training_step(emu, optimizer):
    """Autograd backward + optimizer steps give the plain-CPU numbers."""
    cls = getattr(torch.optim, optimizer)
    losses, params, model = _train("cuda", cls)
    assert all(p.is_cuda and p.grad.is_cuda for p in model.parameters())
    expected_losses, expected_params, _ = _train("cpu", cls)
    tolerance = dict(rtol=1e-4, atol=1e-5) if ON_GPU else dict(rtol=1e-6, atol=1e-7)
    assert losses == pytest.approx(expected_losses, rel=tolerance["rtol"], abs=tolerance["atol"])
    for got, want in zip(params, expected_params):
        torch.testing.assert_close(got, want, **tolerance)


def test_lenient_no_grad(emu):
    w = torch.ones(3, device="cuda", requires_grad=True)
    with torch.no_grad():
        y = w * 2
        w.add_(1.0)
    assert not y.requires_grad and on_emulated(y)
    same(w.detach(), torch.full((3,), 2.0))
    assert w.requires_grad


def test_lenient_inplace_ops(emu):
    """In-place ops keep the tensor's identity and device."""
    x = torch.arange(4.0, device="cuda")
    ref = torch.arange(4.0)
    for t in (x, ref):
        r = t.mul_(2).add_(1).clamp_(max=6).sqrt_()
        assert r is t
        t[0] += 10
        t.relu_()
    same(x, ref)


def _amp_steps(device: str, steps: int = 3):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2)).to(device)
    initial = [p.detach().cpu().clone() for p in model.parameters()]
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    scaler = torch.amp.GradScaler("cuda", enabled=device == "cuda")
    x = torch.randn(8, 4).to(device)
    y = torch.tensor([0, 1] * 4).to(device)
    dtypes = []
    for _ in range(steps):
        optimizer.zero_grad()
        with torch.autocast(device_type="cuda", enabled=device == "cuda"):
            out = model(x)
            dtypes.append(out.dtype)
            loss = F.cross_entropy(out.float(), y)
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
    return model, dtypes, scaler, initial


def test_lenient_autocast_gradscaler(emu):
    """torch.autocast("cuda") + torch.amp.GradScaler("cuda") training steps run, params
    stay on the device and change; GradScaler's scale stays finite."""
    model, dtypes, scaler, initial = _amp_steps("cuda")
    assert all(p.is_cuda for p in model.parameters())
    assert scaler.is_enabled() and scaler.get_scale() == 65536.0
    assert all(torch.isfinite(p).all().item() for p in model.parameters())
    assert all(not torch.equal(p.detach().cpu(), q) for p, q in zip(model.parameters(), initial))


def test_lenient_deepcopy_model(emu):
    """copy.deepcopy of a moved model: same values, same device, independent storage."""
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4)).cuda()
    twin = copy.deepcopy(model)
    for (name, a), (_, b) in zip(model.state_dict().items(), twin.state_dict().items()):
        assert on_emulated(b), name
        assert torch.equal(a.cpu(), b.cpu())
    assert all(isinstance(p, nn.Parameter) and p.is_leaf for p in twin.parameters())
    with torch.no_grad():
        twin[0].weight.add_(1.0)
    assert not torch.equal(model[0].weight.cpu(), twin[0].weight.cpu())
    x = torch.randn(5, 3, device="cuda")
    assert on_emulated(twin(x))


@pytest.mark.parametrize("convert", ["half", "double", "to_dtype"])
def test_lenient_module_dtype_after_move(emu, convert):
    """Module.half() / .double() / .to(dtype) after .cuda(): Module._apply assigns
    `param.data = ...`, and the module computes in the new dtype."""
    dtype = {"half": torch.float16, "double": torch.float64, "to_dtype": torch.float16}[convert]
    model = nn.Linear(3, 2).cuda()
    model = getattr(model, convert)() if convert != "to_dtype" else model.to(torch.float16)
    assert model.weight.dtype == dtype and on_emulated(model.weight)
    assert model.weight.cpu().dtype == dtype
    if dtype == torch.float64:
        assert model(torch.randn(4, 3, device="cuda", dtype=dtype)).dtype == dtype


def test_lenient_conjugate_and_negative_views(emu):
    """`a * torch.conj(b)` honours the conjugate view (found in kornia's fft_conv)."""
    a, b = torch.tensor([1 + 2j, 2 - 1j]), torch.tensor([3 + 4j, -1 + 1j])
    assert torch.equal((a.cuda() * torch.conj(b.cuda())).cpu(), a * torch.conj(b))
    assert torch.equal((a.cuda() + torch.conj(b.cuda()).imag).cpu(), a + torch.conj(b).imag)
    assert torch.equal((a.cuda() * b.cuda()._neg_view()).cpu(), a * b._neg_view())


def test_lenient_optimizer_built_before_move(emu):
    """An optimizer built before model.cuda() still steps the model's parameters: the move
    keeps the Parameter objects (found in pytorch/examples' mnist_forward_forward)."""
    torch.manual_seed(0)
    model = nn.Linear(3, 1)
    before = [id(p) for p in model.parameters()]
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    model.cuda()
    assert [id(p) for p in model.parameters()] == before
    assert all(isinstance(p, nn.Parameter) and on_emulated(p) for p in model.parameters())
    weight = model.weight.detach().cpu().clone()
    model(torch.ones(2, 3, device="cuda")).sum().backward()
    optimizer.step()
    assert not torch.equal(weight, model.weight.detach().cpu())
    model.cpu()
    assert [id(p) for p in model.parameters()] == before and model.weight.device.type == "cpu"


def test_lenient_optimizer_built_before_move_again_and_again(emu):
    """The same round trip five times over: after `backward()` an autograd graph may wait in a
    reference cycle, still holding the parameters, until the collector runs (the swap failed then
    and the move made new Parameter objects, which the optimizer no longer stepped)."""
    for _ in range(5):
        model = nn.Linear(3, 1)
        before = [id(p) for p in model.parameters()]
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        model.cuda()
        model(torch.ones(2, 3, device="cuda")).sum().backward()
        optimizer.step()
        model.cpu()
        assert [id(p) for p in model.parameters()] == before


def test_lenient_data_assignment(emu):
    """`t.data = other` swaps the tensor's contents, shape included."""
    t = torch.ones(2, device="cuda")
    t.data = torch.zeros(3, device="cuda")
    assert t.shape == (3,) and t.sum().item() == 0.0 and on_emulated(t)


def test_lenient_cuda_initial_seed(emu):
    assert isinstance(torch.cuda.initial_seed(), int)


@pytest.mark.parametrize("move", ["cuda", "cuda_0", "to_str", "to_device", "to_device_index"])
def test_lenient_module_moves(emu, move):
    """Module.cuda() / .to("cuda") / .to(torch.device("cuda")): CUDA checks are true."""
    torch.manual_seed(0)
    reference = nn.Linear(3, 2)
    model = copy.deepcopy(reference)
    moved = {
        "cuda": lambda: model.cuda(),
        "cuda_0": lambda: model.cuda(0),
        "to_str": lambda: model.to("cuda"),
        "to_device": lambda: model.to(torch.device("cuda")),
        "to_device_index": lambda: model.to(torch.device("cuda", 0)),
    }[move]()
    assert moved is model
    for p in model.parameters():
        assert p.is_cuda and p.device.type == "cuda" and str(p.device).startswith("cuda")
        assert p.device == torch.device("cuda:0") and p.get_device() == 0
        assert isinstance(p, nn.Parameter) and p.is_leaf and p.requires_grad
    assert next(model.parameters()).is_cuda
    x = torch.randn(4, 3)
    same(model(x.cuda()).detach(), reference(x).detach())


def test_lenient_cuda_queries(emu):
    """torch.cuda's questions get a one-GPU machine's answers."""
    assert torch.cuda.is_available()
    assert torch.cuda.device_count() == 1
    assert torch.cuda.current_device() == 0
    torch.cuda.set_device(0)
    torch.cuda.set_device("cuda:0")
    torch.cuda.set_device(torch.device("cuda", 0))
    assert isinstance(torch.cuda.get_device_name(), str) and torch.cuda.get_device_name(0)
    props = torch.cuda.get_device_properties(0)
    assert props.total_memory > 0 and isinstance(props.name, str)
    assert props.major >= 1 and props.multi_processor_count > 0
    assert torch.cuda.synchronize() is None
    torch.cuda.manual_seed_all(0)
    torch.cuda.manual_seed(0)
    torch.cuda.empty_cache()
    assert torch.cuda.memory_allocated() >= 0 and torch.cuda.max_memory_allocated() >= 0
    assert torch.cuda.memory_reserved() >= 0
    free, total = torch.cuda.mem_get_info()
    assert 0 <= free <= total and total > 0
    assert torch.cuda.is_initialized()
    assert torch.cuda.get_device_capability() == (props.major, props.minor)


def test_lenient_cuda_event_timing(emu):
    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    start.record()
    (torch.randn(64, 64, device="cuda") @ torch.randn(64, 64, device="cuda")).sum().item()
    end.record()
    torch.cuda.synchronize()
    elapsed = start.elapsed_time(end)
    assert isinstance(elapsed, float) and elapsed >= 0.0


def test_lenient_legacy_types(emu):
    """torch.cuda.FloatTensor(2, 3) and .type(torch.cuda.FloatTensor)."""
    x = torch.cuda.FloatTensor(2, 3)
    assert on_emulated(x) and x.shape == (2, 3) and x.dtype == torch.float32
    assert x.type() == "torch.cuda.FloatTensor"
    assert isinstance(x, torch.cuda.FloatTensor)
    same(torch.cuda.LongTensor([1, 2]), torch.tensor([1, 2]))
    y = torch.arange(3).type(torch.cuda.FloatTensor)
    same(y, torch.arange(3.0))
    assert y.type(torch.cuda.LongTensor).type() == "torch.cuda.LongTensor"
    back = y.type(torch.FloatTensor)
    assert not back.is_cuda and torch.equal(back, torch.arange(3.0))
    assert torch.arange(3).type("torch.cuda.DoubleTensor").type() == "torch.cuda.DoubleTensor"


def test_lenient_new_and_like(emu):
    x = torch.ones(2, 3, device="cuda", dtype=torch.float64)
    same(x.new_zeros(4), torch.zeros(4, dtype=torch.float64))
    same(x.new_ones((2, 2)), torch.ones(2, 2, dtype=torch.float64))
    same(x.new_full((2,), 3.0), torch.full((2,), 3.0, dtype=torch.float64))
    assert on_emulated(x.new_empty(5))
    same(torch.zeros_like(x), torch.zeros(2, 3, dtype=torch.float64))
    same(torch.ones_like(x, dtype=torch.int64), torch.ones(2, 3, dtype=torch.int64))
    same(torch.full_like(x, 7.0), torch.full((2, 3), 7.0, dtype=torch.float64))
    y = torch.empty_like(torch.ones(2), device="cuda")
    assert on_emulated(y)


@pytest.mark.parametrize("how", ["str", "str_index", "device_obj", "int", "requires_grad", "randn_seeded",
                                 "arange", "tensor", "eye"])
def test_lenient_factories(emu, how):
    """Factories with device="cuda", device=0, requires_grad=True."""
    make = {
        "str": lambda d: torch.zeros(2, 3, device=d),
        "str_index": lambda d: torch.ones(2, device=d if d == "cpu" else "cuda:0"),
        "device_obj": lambda d: torch.full((2,), 4.0, device=torch.device(d)),
        "int": lambda d: torch.arange(5, device=0 if d == "cuda" else "cpu"),
        "requires_grad": lambda d: torch.ones(3, device=d, requires_grad=True),
        "randn_seeded": lambda d: (torch.manual_seed(1), torch.randn(4, device=d))[1],
        "arange": lambda d: torch.arange(0, 1, 0.25, device=d),
        "tensor": lambda d: torch.tensor([[1, 2], [3, 4]], device=d),
        "eye": lambda d: torch.eye(3, device=d),
    }[how]
    got, want = make("cuda"), make("cpu")
    if ON_GPU and how == "randn_seeded":
        # A GPU draws from its own generator; the emulator draws the CPU's numbers.
        assert on_emulated(got) and got.shape == want.shape and got.dtype == want.dtype
    else:
        same(got.detach(), want.detach())
    assert got.requires_grad == want.requires_grad
    if how == "requires_grad":
        assert got.is_leaf
        (got * 2).sum().backward()
        same(got.grad, torch.full((3,), 2.0))


def test_lenient_module_factory_device(emu):
    """nn.Linear(..., device="cuda") is made on the device (with the CPU's initial values
    when emulated: a GPU draws them from its own generator)."""
    torch.manual_seed(0)
    layer = nn.Linear(3, 2, device="cuda")
    torch.manual_seed(0)
    reference = nn.Linear(3, 2)
    if ON_GPU:
        reference.load_state_dict({k: v.cpu() for k, v in layer.state_dict().items()})
    for p, q in zip(layer.parameters(), reference.parameters()):
        same(p.detach(), q.detach())
        assert p.requires_grad
    x = torch.randn(4, 3)
    same(layer(x.cuda()).detach(), reference(x).detach())


@pytest.mark.parametrize("kind", ["GRU", "LSTM"])
def test_lenient_recurrent_layers(emu, monkeypatch, kind):
    """A GRU or LSTM moved to the device trains there. A CUDA build of PyTorch has cuDNN,
    and an RNN on a CUDA tensor asks cuDNN to flatten its weights under
    `torch.cuda.device_of`: the emulator must say no to cuDNN. Emulated, a CPU build is
    made to answer as a CUDA build does."""
    if ON_GPU:  # cuDNN's RNNs may compute in TF32
        monkeypatch.setattr(torch.backends.cudnn, "allow_tf32", False)
    else:  # torch.backends.cudnn is a wrapper: its functions read the module's globals
        cudnn_globals = torch.backends.cudnn.set_flags.__globals__
        monkeypatch.setitem(cudnn_globals, "is_available", lambda: True)
        monkeypatch.setitem(cudnn_globals, "_init", lambda: True)
    torch.manual_seed(0)
    reference = getattr(nn, kind)(4, 6, batch_first=True)
    rnn = copy.deepcopy(reference).cuda()
    x = torch.randn(2, 5, 4)
    out, _ = rnn(x.cuda())
    expected, _ = reference(x)
    assert on_emulated(out)
    # cuDNN's recurrent kernels round their own way, and the CPU's own LSTM (oneDNN) is not
    # the one that runs on the emulated device
    tolerance = dict(rtol=1e-3, atol=1e-4) if ON_GPU else dict(rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(out.detach().cpu(), expected.detach(), **tolerance)
    out.sum().backward()
    assert all(on_emulated(p.grad) for p in rnn.parameters())


def test_lenient_device_of(emu2):
    """`with torch.cuda.device_of(x):` makes x's device current; a CPU tensor changes nothing."""
    x = torch.zeros(2, device="cuda:1")
    with torch.cuda.device_of(x):
        assert torch.cuda.current_device() == 1
        assert torch.ones(1, device="cuda").device == torch.device("cuda", 1)
    assert torch.cuda.current_device() == 0
    with torch.cuda.device_of(torch.zeros(2)):
        assert torch.cuda.current_device() == 0


def test_lenient_ddp_on_emulated_module(emu, gloo_group):
    """DDP(emulated module, device_ids=[0]) in a one-process gloo group trains."""
    from torch.nn.parallel import DistributedDataParallel as DDP

    torch.manual_seed(0)
    reference = nn.Linear(3, 2)
    ddp = DDP(copy.deepcopy(reference).cuda(), device_ids=[0])
    x = torch.randn(4, 3)
    out = ddp(x.cuda())
    same(out.detach(), reference(x).detach())
    out.sum().backward()
    reference(x).sum().backward()
    for p, q in zip(ddp.module.parameters(), reference.parameters()):
        same(p.grad, q.grad)


# ---- LENIENT rows the emulator does not meet yet (xfail, strict)


@pytest.mark.parametrize("call", ["new_tensor", "new_list"])
def test_lenient_new_tensor(emu, call):
    """x.new_tensor(data) / x.new(data) of an emulated x: a tensor on x's device."""
    x = torch.ones(2, device="cuda", dtype=torch.float64)
    y = x.new_tensor([1.0, 2.0]) if call == "new_tensor" else x.new([1.0, 2.0])
    same(y, torch.tensor([1.0, 2.0], dtype=torch.float64))


def test_lenient_tensor_of_emulated_scalars(emu):
    """torch.tensor([loss1, loss2]) of GPU 0-dim tensors: a CPU tensor of their values."""
    losses = [torch.tensor(1.5, device="cuda"), torch.tensor(2.5, device="cuda")]
    y = torch.tensor(losses)
    assert not y.is_cuda and torch.equal(y, torch.tensor([1.5, 2.5]))


@emulator_gap("torch.autocast('cuda') does not reach emulated tensors (they carry AutocastPrivateUse1, "
              "not AutocastCUDA): nn.Linear's output stays float32 where CUDA gives float16", raises=AssertionError)
def test_lenient_autocast_dtype(emu):
    """Under torch.autocast("cuda"), a Linear on the GPU computes in float16."""
    layer = nn.Linear(4, 2).cuda()
    with torch.autocast("cuda"):
        out = layer(torch.randn(3, 4, device="cuda"))
    assert out.dtype == torch.float16


def test_lenient_cuda_generator(emu):
    """torch.Generator(device="cuda").manual_seed(0) and factories drawing from it."""
    generator = torch.Generator(device="cuda").manual_seed(0)
    x = torch.randn(3, device="cuda", generator=generator)
    assert on_emulated(x)


def test_lenient_cuda_rng_state(emu):
    """torch.cuda.get_rng_state() / set_rng_state() (checkpointing code saves and restores them)."""
    state = torch.cuda.get_rng_state()
    torch.cuda.set_rng_state(state)
    assert isinstance(state, torch.Tensor) and state.dtype == torch.uint8


# ====================================================================== SESSION


@emulator_only("its session")
def test_session_nested_raises(emu):
    with pytest.raises(RuntimeError, match="already active"):
        with emulate_cuda():
            pass  # pragma: no cover
    assert torch.cuda.is_available()  # the outer session is intact
    assert torch.zeros(1, device="cuda").is_cuda


@emulator_only("its session")
def test_session_refuses_a_visible_real_gpu(monkeypatch):
    """Where PyTorch sees a real GPU the emulator would replace its kernels: it refuses."""
    if emulate.active():
        pytest.skip("the session-wide emulator (--emulate-cuda) is active")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    with pytest.raises(RuntimeError, match=r"a real CUDA GPU is visible.*CUDA_VISIBLE_DEVICES="):
        with emulate_cuda():
            pass  # pragma: no cover
    monkeypatch.undo()
    assert not emulate.active() and not torch.cuda.is_available()


@emulator_only("its session")
def test_session_exit_restores_cpu_only():
    if emulate.active():
        pytest.skip("the session-wide emulator (--emulate-cuda) is active")
    with emulate_cuda():
        assert torch.cuda.is_available()
        kept = torch.ones(2, device="cuda")
    assert not torch.cuda.is_available()
    assert torch.cuda.device_count() == 0
    # A CPU build's message, or a CUDA build's with its GPUs hidden.
    cpu_only = "Torch not compiled with CUDA enabled|No CUDA GPUs are available"
    with pytest.raises((AssertionError, RuntimeError), match=cpu_only):
        torch.zeros(1, device="cuda")
    with pytest.raises((AssertionError, RuntimeError), match=cpu_only):
        torch.ones(1).cuda()
    assert kept.is_cuda  # tensors made inside keep their device
