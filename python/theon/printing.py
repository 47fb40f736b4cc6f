"""theon.printing: debugprint (Theano's theano.printing.debugprint)."""
import sys

from . import _core
from ._variable import TensorVariable, _v


def _text(obj):
    from .compile import Function
    if isinstance(obj, Function):
        return _core.debugprint_function(obj._fn)
    if isinstance(obj, _core.Function):
        return _core.debugprint_function(obj)
    if isinstance(obj, (list, tuple)):
        return _core.debugprint_vars([_v(o) for o in obj])
    if isinstance(obj, TensorVariable):
        return _core.debugprint_vars([obj._v])
    raise TypeError(f"debugprint: expected a variable, a list of variables or a function, got {type(obj).__name__}")


def debugprint(obj, depth=-1, print_type=False, file=None, ids="CHAR", stop_on_name=False, done=None,
               print_storage=False, print_clients=False, used_ids=None):
    """Prints the graph of a variable, a list of variables or a compiled function as a tree.
    file=None prints to stdout; file='str' returns the text; else writes to the file."""
    text = _text(obj)
    if not text.endswith("\n"):
        text += "\n"
    if file == "str":
        return text
    out = sys.stdout if file is None else file
    out.write(text)
    return out


def pprint(obj):
    """A one-graph text form (Theon prints debugprint's tree)."""
    return _text(obj)


pp = pprint
