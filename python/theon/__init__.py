"""Theon: a symbolic tensor compiler (Theano rebuilt). ``import theon as theano`` runs
Theano programs: theon.tensor, theon.function, theon.shared, theon.grad, theon.config.
"""
__version__ = "0.1.0"

from . import _core
from .configparser import change_flags, config
from . import errors
from . import _variable
from ._variable import SharedVariable, TensorVariable, shared
from ._contexts import context
from . import tensor
from .compile import Function, In, Out, function
from . import gradient
from .gradient import grad
from . import printing
from . import gof
from . import cache
from .printing import debugprint, pp
from ._dlpack import from_dlpack
from ._device import CudaStatus, DeviceArray, cuda_status, empty_cache, memory_stats, to_device

Variable = _variable.Variable

# Graph and gradient names of Theano's top level (issue 17): clone, Rop/Lop, pprint; the
# scalar, sandbox.cuda and compile.monitormode module paths.
from .gof.graph import Apply, Constant, clone_replace as clone
from .tensor import dot
from .gradient import Lop, Rop
from .printing import pprint
from . import scalar
from . import sandbox
from .sandbox import cuda as _sandbox_cuda  # noqa: F401  (theano.sandbox.cuda after `import theano`)

__all__ = ["from_dlpack", "cuda_status", "CudaStatus", "memory_stats", "empty_cache", "to_device", "DeviceArray",
           "config", "change_flags", "errors", "shared", "tensor", "function", "In", "Out", "grad", "gradient",
           "printing", "gof", "cache", "debugprint", "pp", "SharedVariable", "TensorVariable", "Variable", "Function",
           "clone", "Lop", "Rop", "pprint", "scalar", "sandbox", "Apply", "Constant", "dot"]
