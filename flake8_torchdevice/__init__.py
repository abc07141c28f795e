"""flake8-torchdevice: find PyTorch code that only works on a machine with CUDA."""

__version__ = "0.1.0"
