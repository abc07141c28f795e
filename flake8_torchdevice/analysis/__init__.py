"""What several rules need to know about the code around a node, in one place.

- `syntax`: context-free questions about expressions (names, literals, arguments);
- `devices`: device names and the calls that move something to a device;
- `scopes`: names, imports and statement-ordered facts per function/class/module;
- `guards`: the CUDA-guard model (which tests mean "CUDA is present");
- `kinds`: value kinds (is this a tensor, a module, a device, or unknown?);
- `classes`: class facts (is it an `nn.Module`, what its methods assign, register, read);
- `walker`: `Analyzer`, the one traversal that keeps this state and runs every rule.
"""

from .classes import ClassInfo, class_is_module
from .devices import is_device_move, is_device_name, move_target, moves_to_cpu
from .guards import GuardModel, is_exit_statement
from .kinds import DEVICE, FACTORIES, MODULE, NUMBER, TENSOR, ValueKinds
from .project import ProjectIndex, index_for
from .scopes import Scope
from .syntax import (block_statements, dotted_name, first_argument, has_star_kwargs, is_cuda_literal,
                     is_static_or_class_method, keyword, last_identifier, method_call, number_value,
                     parameter_names, positional_args, string_prefix, string_value)
from .walker import Analyzer

__all__ = [
    "DEVICE", "FACTORIES", "MODULE", "NUMBER", "TENSOR", "Analyzer", "ClassInfo", "GuardModel", "ProjectIndex", "Scope",
    "ValueKinds", "class_is_module", "block_statements", "dotted_name", "first_argument",
    "has_star_kwargs", "is_cuda_literal", "is_device_move", "is_device_name", "is_exit_statement",
    "is_static_or_class_method", "keyword", "last_identifier", "method_call", "move_target", "moves_to_cpu", "number_value",
    "index_for", "parameter_names", "positional_args", "string_prefix", "string_value",
]
