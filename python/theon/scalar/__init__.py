"""theon.scalar: Theano's ``theano.scalar`` names that programs use for dtypes.

``upcast(dtype, *dtypes)`` is the dtype of a result combining values of those dtypes (NumPy's
promotion of arrays, as Theano's), with ``'floatX'`` meaning ``config.floatX``. Theon has no
separate scalar type: ``theon.scalar.float32`` and its siblings are 0-d tensor types, so
``theon.scalar.float64('x')`` is a 0-d float64 variable (Theano's is a Scalar variable that
tensor ops wrap; the values computed are the same).
"""
from .. import _core
from .._variable import TensorType, dtype_name

__all__ = ["upcast", "bool", "int8", "int16", "int32", "int64", "uint8", "float16", "float32", "float64",
           "all_types", "int_types", "uint_types", "float_types", "discrete_types", "continuous_types",
           "integer_types", "complex_types", "ScalarType", "get_scalar_type"]


def upcast(dtype, *dtypes):
    """The dtype (a string) of values of ``dtype`` and ``dtypes`` combined: ``upcast('int8',
    'float32') == 'float32'``, ``upcast('int32', 'int64') == 'int64'``."""
    out = dtype_name(dtype)
    for d in dtypes:
        out = _core.promote_types(out, dtype_name(d))
    return out


def ScalarType(dtype):
    """The 0-d tensor type of ``dtype`` (Theano's Scalar(dtype))."""
    return TensorType(dtype_name(dtype), shape=())


get_scalar_type = ScalarType

bool = ScalarType("bool")  # noqa: A001  (Theano's name)
int8 = ScalarType("int8")
int16 = ScalarType("int16")
int32 = ScalarType("int32")
int64 = ScalarType("int64")
uint8 = ScalarType("uint8")
float16 = ScalarType("float16")
float32 = ScalarType("float32")
float64 = ScalarType("float64")

# Theano's dtype groups, with the dtypes Theon has (no uint16/32/64, no complex).
int_types = (int8, int16, int32, int64)
uint_types = (uint8,)
integer_types = int_types + uint_types
float_types = (float16, float32, float64)
complex_types = ()
discrete_types = (bool,) + integer_types
continuous_types = float_types + complex_types
all_types = discrete_types + continuous_types
