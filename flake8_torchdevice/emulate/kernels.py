"""Operators PyTorch runs only on GPUs, written with CPU operators.

Some composite operators choose a fused kernel when their input is not on the CPU
(`gru_cell` and `lstm_cell` pick `_thnn_fused_*_cell` for CUDA and PrivateUse1 inputs),
and those kernels exist only for GPUs. Each forward keeps what its own backward needs
in the workspace it returns; the layouts are this module's own.
"""

from __future__ import annotations

from typing import Optional, Tuple

import torch

aten = torch.ops.aten
Tensor = torch.Tensor


def gru_cell(input_gates: Tensor, hidden_gates: Tensor, hx: Tensor, input_bias: Optional[Tensor] = None,
             hidden_bias: Optional[Tensor] = None) -> Tuple[Tensor, Tensor]:
    if input_bias is not None:
        input_gates = input_gates + input_bias
    if hidden_bias is not None:
        hidden_gates = hidden_gates + hidden_bias
    input_reset, input_update, input_new = input_gates.chunk(3, 1)
    hidden_reset, hidden_update, hidden_new = hidden_gates.chunk(3, 1)
    reset = torch.sigmoid(input_reset + hidden_reset)
    update = torch.sigmoid(input_update + hidden_update)
    new = torch.tanh(input_new + reset * hidden_new)
    hy = new + update * (hx - new)
    return hy, torch.cat([reset, update, new, hx, hidden_new], 1)


def gru_cell_backward(grad_hy: Tensor, workspace: Tensor, has_bias: bool):
    reset, update, new, hx, hidden_new = workspace.chunk(5, 1)
    grad_new = grad_hy * (1 - update) * (1 - new * new)
    grad_update = grad_hy * (hx - new) * update * (1 - update)
    grad_reset = grad_new * hidden_new * reset * (1 - reset)
    grad_input_gates = torch.cat([grad_reset, grad_update, grad_new], 1)
    grad_hidden_gates = torch.cat([grad_reset, grad_update, grad_new * reset], 1)
    grad_hx = grad_hy * update
    if not has_bias:
        return grad_input_gates, grad_hidden_gates, grad_hx, None, None
    return grad_input_gates, grad_hidden_gates, grad_hx, grad_input_gates.sum(0), grad_hidden_gates.sum(0)


def lstm_cell(input_gates: Tensor, hidden_gates: Tensor, cx: Tensor, input_bias: Optional[Tensor] = None,
              hidden_bias: Optional[Tensor] = None) -> Tuple[Tensor, Tensor, Tensor]:
    gates = input_gates + hidden_gates
    if input_bias is not None:
        gates = gates + input_bias
    if hidden_bias is not None:
        gates = gates + hidden_bias
    in_gate, forget_gate, cell_gate, out_gate = gates.chunk(4, 1)
    in_gate, forget_gate, out_gate = torch.sigmoid(in_gate), torch.sigmoid(forget_gate), torch.sigmoid(out_gate)
    cell_gate = torch.tanh(cell_gate)
    cy = forget_gate * cx + in_gate * cell_gate
    hy = out_gate * torch.tanh(cy)
    return hy, cy, torch.cat([in_gate, forget_gate, cell_gate, out_gate], 1)


def lstm_cell_backward(grad_hy: Optional[Tensor], grad_cy: Optional[Tensor], cx: Tensor, cy: Tensor,
                       workspace: Tensor, has_bias: bool):
    in_gate, forget_gate, cell_gate, out_gate = workspace.chunk(4, 1)
    tanh_cy = torch.tanh(cy)
    grad_hy = torch.zeros_like(cy) if grad_hy is None else grad_hy
    grad_c = (torch.zeros_like(cy) if grad_cy is None else grad_cy) + grad_hy * out_gate * (1 - tanh_cy * tanh_cy)
    grad_gates = torch.cat([
        grad_c * cell_gate * in_gate * (1 - in_gate),
        grad_c * cx * forget_gate * (1 - forget_gate),
        grad_c * in_gate * (1 - cell_gate * cell_gate),
        grad_hy * tanh_cy * out_gate * (1 - out_gate),
    ], 1)
    return grad_gates, grad_c * forget_gate, grad_gates.sum(0) if has_bias else None


# aten operator -> its CPU implementation (called with the held CPU tensors).
GPU_ONLY = {
    aten._thnn_fused_gru_cell.default: gru_cell,
    aten._thnn_fused_gru_cell_backward.default: gru_cell_backward,
    aten._thnn_fused_lstm_cell.default: lstm_cell,
    aten._thnn_fused_lstm_cell_backward_impl.default: lstm_cell_backward,
}
