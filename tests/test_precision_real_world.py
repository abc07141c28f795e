"""Idioms met while reading every finding on timm 1.0.31 and PyTorch's own sources
(docs/precision.md). Each case is the shape of real code, in our own words: the
negatives were false positives once, the positives are the real bugs found there."""

from conftest import lint


def test_device_default_built_with_torch_device_is_a_parameter_default():
    # timm's prefetch loader: `device: torch.device = torch.device('cuda')`
    code = """
    import torch
    class Prefetcher:
        def __init__(self, loader, device: torch.device = torch.device("cuda")):
            self.device = device
    """
    assert lint(code) == []
    assert lint(code, check_param_defaults=True) == [(4, 67, "TDV102")]


def test_module_method_without_tensor_inputs_is_not_device_sensitive():
    # example-input helpers of test models build CPU inputs on purpose
    code = """
    import torch
    class Net(torch.nn.Module):
        def get_example_inputs(self):
            return (torch.rand(1, 5),)
    """
    assert lint(code) == []


def test_loss_builder_is_not_a_loss_function():
    code = """
    import torch
    def create_loss(loss_type, class_weight=None):
        return BinaryCrossEntropy(weight=torch.as_tensor(class_weight, dtype=torch.float32))
    """
    assert lint(code) == []


def test_forward_returning_cpu_statistics_is_reported():
    # a forward that always returns CPU tensors, whatever device x is on
    code = """
    import torch
    class Stats(torch.nn.Module):
        def forward(self, x):
            mean = torch.zeros([3, 64])
            for i in range(3):
                mean[i] = x[:, i].mean(0)
            return mean, x
    """
    assert lint(code) == [(5, 15, "TDV201")]


def test_scalar_tensor_from_a_number_variable_is_0_dim():
    code = """
    import torch
    class M(torch.nn.Module):
        def forward(self, x):
            eps = 3.14
            half = 2
            return cond(x.sum() > 0, f, g, [x, torch.tensor(eps), torch.tensor(-half / 2)])
    """
    assert lint(code) == []


def test_device_of_the_cpu_tensor_itself_is_not_device_aware():
    code = """
    import torch
    def bucket(a, boundaries):
        a = a if isinstance(a, torch.Tensor) else torch.tensor(a)
        start = torch.zeros(a.shape, device=a.device)
        return start + a
    """
    assert lint(code) == []


def test_rpc_call_is_not_a_tensor_op():
    code = """
    import torch
    import torch.distributed.rpc as rpc
    def run(dst, device):
        rets = rpc.rpc_sync(dst, add, args=(torch.zeros(2), torch.ones(2)))
        return rets[0] + torch.ones(2).to(device)
    """
    assert lint(code) == []


def test_save_then_load_in_the_same_function_is_a_round_trip():
    code = """
    import io
    import torch
    def check(model):
        buffer = io.BytesIO()
        torch.save(model.state_dict(), buffer)
        buffer.seek(0)
        return torch.load(buffer)
    def check_file(model, tmp):
        torch.save(model, tmp.name)
        return torch.load(tmp.name)
    def restore(path):
        return torch.load(path)
    """
    assert lint(code) == [(13, 11, "TDV301")]


def test_ddp_of_a_module_returned_by_a_helper_is_not_reported():
    # the helper may have moved it (model_class.init(..., DEVICE_BEFORE))
    code = """
    from torch.nn.parallel import DistributedDataParallel as DDP
    def parity(model_class, rank):
        model = model_class.init(rank)
        return DDP(model, device_ids=[rank])
    def loop(models, rank):
        for model in models:
            ddp = DDP(model, device_ids=[rank])
    """
    assert lint(code) == []


def test_ddp_of_a_module_constructed_here_is_reported():
    code = """
    import torch.nn as nn
    def setup(rank):
        model = nn.Sequential(nn.Linear(3, 3))
        return nn.parallel.DistributedDataParallel(model, device_ids=[rank])
    """
    assert lint(code) == [(5, 11, "TDV401")]


def test_cuda_tests_and_the_move_method_are_cuda_only_code():
    code = """
    import torch
    class TestGPUKernels:
        def test_add(self):
            x = torch.ones(2, device="cuda")
    class RpcCudaTest:
        def run(self):
            return torch.ones(2).cuda()
    def test_cuda_stream():
        torch.cuda.synchronize()
    class Storage:
        def cuda(self, device=None):
            return self.untyped().cuda(device)
    def to_cpu_or_cuda(batch):
        return batch
    """
    assert lint(code) == []


def test_helpers_named_for_cuda_are_no_guard():
    """Whisper's dtw_cuda, DALLE2's one_unet_in_gpu, Stable Diffusion's CUDACallback: the
    name says what the helper does, not that CUDA is there when it is called."""
    code = """
    import torch
    def to_cuda(batch):
        return batch.cuda()
    def dtw_cuda(x):
        cost = torch.ones(3, 3)
        return cost.cuda()
    class CUDACallback:
        def on_train_epoch_start(self, trainer):
            torch.cuda.synchronize(trainer.root_gpu)
    """
    assert lint(code) == [(4, 17, "TDV101"), (7, 16, "TDV101"), (10, 8, "TDV103")]


def test_explicit_device_id_is_a_guard():
    code = """
    import torch
    def build(size, device_id=None):
        if device_id is None:
            return torch.empty(size)
        else:
            return torch.empty(size).cuda(device_id)
    def build2(size, device_id=None):
        if device_id is not None:
            return torch.empty(size).cuda(device_id)
        return torch.empty(size).cuda()
    """
    assert lint(code) == [(11, 29, "TDV101")]


def test_as_tensor_of_a_tensor_keeps_its_device():
    code = """
    import torch
    class Block(torch.nn.Module):
        def forward(self, x):
            y = torch.as_tensor(self.project(x))
            z = torch.as_tensor(x, dtype=torch.complex64)
            return y + z + torch.tensor(x)
    """
    assert lint(code) == []


def test_literal_data_in_forward_is_reported():
    code = """
    import torch
    class Block(torch.nn.Module):
        def forward(self, x):
            return x * torch.tensor([0.5, 2.0])
    """
    assert lint(code) == [(5, 19, "TDV201")]


def test_empty_placeholder_and_helper_returns_are_not_reported():
    code = """
    import torch
    class Net(torch.nn.Module):
        def forward(self, x):
            acc = torch.empty(0)
            for block in self.blocks:
                acc = block(x)
            return acc
        def _masking(self, x):
            keep = torch.multinomial(torch.ones(x.shape[0], x.shape[1]), 4)
            return x[:, keep], keep
    """
    assert lint(code) == []


def test_loop_over_gpu_count_is_guarded():
    code = """
    import torch
    devices = [torch.device(f"cuda:{i}") for i in range(torch.cuda.device_count())]
    for i in range(torch.cuda.device_count()):
        torch.zeros(1).cuda(i)
    """
    assert lint(code) == []


def test_device_keyword_of_a_predicate_is_not_a_placement():
    # inductor: check_device(mat1, mat2, device="cuda") compares, it does not place
    code = """
    import torch
    def should_decompose(mat1, mat2):
        return check_device(mat1, mat2, device="cuda") or is_on(mat1, device="cuda:0")
    x = make_tensor(3, device="cuda")
    """
    assert lint(code) == [(5, 26, "TDV102")]


def test_cpu_input_to_a_module_moved_by_a_statement_is_reported():
    code = """
    import torch
    def run(device):
        model = Net()
        model.to(device)
        batch = torch.randn(4, 10)
        return model(batch)
    """
    assert lint(code) == [(6, 12, "TDV201")]


def test_cpu_input_to_a_ddp_wrapper_is_scattered_by_it():
    # DDP(device_ids=[rank]) moves its inputs to the device itself
    code = """
    import torch
    def run(rank):
        model = Net().cuda(rank)
        model = torch.nn.parallel.DistributedDataParallel(model, device_ids=[rank])
        return model(torch.randn(10, 100))
    """
    assert [c for c in lint(code) if c[2] == "TDV201"] == []


def test_device_handed_to_a_lookup_is_not_a_placement():
    # c10d: pg._get_backend(torch.device("cuda")); test utils: partial(skipDeviceIf, device="cuda")
    code = """
    import functools
    import torch
    backend = pg._get_backend(torch.device("cuda"))
    skipCUDAIf = functools.partial(skipDeviceIf, device="cuda")
    model.to(torch.device("cuda"))
    """
    assert lint(code) == [(6, 22, "TDV102")]


def test_factory_inside_a_device_context_gets_that_device():
    code = """
    import torch
    from torch import nn
    class Head(nn.Module):
        def forward(self, x):
            with torch.device(x.device):
                bias = torch.zeros(x.shape[-1])
            return x + bias
    """
    assert lint(code) == []


def test_remedy_names_a_tensor_parameter_not_the_model():
    from flake8_torchdevice.engine import lint_source
    code = (
        "import torch\n"
        "def diffusion_loss(model, x0, num_steps=100):\n"
        "    noise = torch.randn(x0.shape)\n"
        "    return ((model(x0 + noise) - noise) ** 2).mean()\n"
    )
    [finding] = lint_source(code)
    assert (finding.line, finding.col, finding.code) == (3, 12, "TDV201")
    assert finding.message.endswith("pass device=x0.device")


def test_save_then_load_of_the_same_literal_path_is_a_round_trip():
    # a tutorial script saves a model to 'model.ckpt' and loads it back two lines later
    code = """
    import torch
    torch.save(net, "model.ckpt")
    copy = torch.load("model.ckpt")
    torch.save(net.state_dict(), 'params.ckpt')
    net.load_state_dict(torch.load('params.ckpt'))
    other = torch.load("other.ckpt")
    def resume():
        return torch.load("model.ckpt")
    """
    assert lint(code) == [(7, 8, "TDV301"), (9, 11, "TDV301")]
