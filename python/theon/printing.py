"""theon.printing: debugprint (Theano's theano.printing.debugprint).

``debugprint`` prints in Theano's layout: one line per variable, the op (or the input's name)
first, then its id; an op's inputs are indented under it, and a subgraph met again is only
referred to by its id. A compiled function's lines end with the node's index in the order
the function runs them::

    >>> f = theano.function([x], T.exp(x) * 2)
    >>> theano.printing.debugprint(f)
    Composite{mul(exp(i0),i1)} [id A] ''   0
     |x [id B]
     |TensorConstant{2.0} [id C]

The graph comes from the C++ core (``theon::debugprint``, whose own layout adds each
variable's type); this module re-lays it out.
"""
import re
import sys

from . import _core
from ._variable import TensorType, TensorVariable, _v

# One line of theon::debugprint: "<' |' per level><label> [id X][ 'name'][ (shared)]  <type>".
_LINE = re.compile(r"^(?P<indent>(?: \|)*)(?P<label>.*?) \[id (?P<id>[A-Z]+)\](?P<name> '.*')?"
                   r"(?P<shared> \(shared\))?  (?P<type>\S+ \([^()]*\))(?: @\S+)?$")
_UNNAMED = re.compile(r"^<\S+ \S+ #\d+>$")  # an unnamed input: "<float64 vector #12>"


class _Node:
    __slots__ = ("key", "children", "is_apply", "op")

    def __init__(self, key):
        self.key, self.children, self.is_apply, self.op = key, [], False, None


class _Line:
    """A variable as the C++ text shows it: its node (an Apply's outputs share one), label, name, type."""
    __slots__ = ("node", "label", "name", "type")

    def __init__(self, node, label, name, type_):
        self.node, self.label, self.name, self.type = node, label, name, type_


def _theano_type(text):
    """'float64 (?, 1)' -> TensorType(float64, col)."""
    dtype, dims = text.split(" ", 1)
    dims = [d.strip() for d in dims.strip("()").split(",") if d.strip()]
    return TensorType(dtype, shape=[-1 if d == "?" else int(d) for d in dims])


def _parse(text):
    """The C++ text as a graph: the top-level lines, each a _Line whose node lists its inputs."""
    nodes, tops, stack = {}, [], []  # stack[d]: the line at depth d whose inputs follow
    for raw in text.splitlines():
        m = _LINE.match(raw)
        if m is None:
            raise ValueError(f"debugprint: cannot read the line {raw!r}")
        depth = len(m.group("indent")) // 2
        node = nodes.setdefault(m.group("id"), _Node(m.group("id")))
        name = m.group("name")
        line = _Line(node, m.group("label"), name[2:-1] if name else "", m.group("type"))
        del stack[depth:]
        if depth == 0:
            tops.append(line)
        else:
            parent = stack[depth - 1].node
            parent.is_apply = True
            parent.children.append(line)
        stack.append(line)
    for line in _walk(tops):  # an Apply's outputs: "Op.N" when it has several
        if line.node.is_apply and line.node.op is None:
            line.node.op = line.label
    return tops


def _walk(tops):
    seen, todo = set(), list(reversed(tops))
    while todo:
        line = todo.pop()
        yield line
        if id(line.node) not in seen:
            seen.add(id(line.node))
            todo.extend(reversed(line.node.children))


def _order(tops, fn_nodes):
    """node key -> its index in the compiled program (NodeInfo list), matched by op and inputs."""
    applies = []
    for line in _walk(tops):
        if line.node.is_apply and line.node not in applies:
            applies.append(line.node)
    order = {}
    for k, info in enumerate(fn_nodes):
        cands = []
        for node in applies:
            if node.key in order:
                continue
            base = re.sub(r"\.\d+$", "", node.op)
            if info.op not in (node.op, base):
                continue
            if any(c.node.is_apply and c.node.key not in order for c in node.children):
                continue
            cands.append(node)
        if len(cands) > 1:  # several equal ops ready: prefer the one whose named inputs agree
            named = [n for n in cands if [c.label for c in n.children if not c.node.is_apply] ==
                     [i for i in info.inputs if any(i == c.label for c in n.children)]]
            cands = named or cands
        if cands:
            order[cands[0].key] = k
    return order


def _render(tops, depth, print_type, ids, stop_on_name, order):
    out, names = [], {}

    def id_of(node):
        if node.key not in names:
            n = len(names)
            if ids == "CHAR":
                s = ""
                while True:
                    s = chr(ord("A") + n % 26) + s
                    n //= 26
                    if not n:
                        break
                names[node.key] = f"[id {s}]"
            elif ids in ("int", "id"):
                names[node.key] = f"[id {n}]"
            else:
                names[node.key] = ""
        return names[node.key]

    done = set()
    # Iterative (graphs can be very deep): (line, prefix, prefix for its inputs, depth left).
    todo = [(t, "", "", depth) for t in reversed(tops)]
    while todo:
        line, prefix, child_prefix, left = todo.pop()
        if left == 0:
            continue
        node = line.node
        type_str = f" <{_theano_type(line.type)}>" if print_type else ""
        first = node.key not in done and node.key not in names
        if node.is_apply:
            o = str(order[node.key]) if node.key in order else ""
            out.append(f"{prefix}{line.label} {id_of(node)}{type_str} '{line.name}'   {o}")
            done.add(node.key)
            if first and not (stop_on_name and line.name):
                kids = node.children
                for k in range(len(kids) - 1, -1, -1):
                    last = k == len(kids) - 1
                    todo.append((kids[k], child_prefix + " |", child_prefix + ("  " if last else " |"), left - 1))
        else:
            label = line.label
            if _UNNAMED.match(label):
                label = f"<{_theano_type(line.type)}>"
            out.append(f"{prefix}{label} {id_of(node)}{type_str}")
    return "".join(s + "\n" for s in out)


def _source(obj):
    """(C++ debugprint text, the compiled program's nodes or None) for what debugprint takes."""
    from .compile import Function, FunctionGraph
    if isinstance(obj, (Function, FunctionGraph)):
        obj = obj._fn
    if isinstance(obj, _core.Function):
        return _core.debugprint_function(obj), obj.nodes()
    if isinstance(obj, (list, tuple)):
        return _core.debugprint_vars([_v(o) for o in obj]), None
    if isinstance(obj, TensorVariable):
        return _core.debugprint_vars([obj._v]), None
    raise TypeError(f"debugprint: expected a variable, a list of variables or a function, got {type(obj).__name__}")


def debugprint(obj, depth=-1, print_type=False, file=None, ids="CHAR", stop_on_name=False, done=None,
               print_storage=False, print_clients=False, used_ids=None):
    """Prints the graph of a variable, a list of variables or a compiled function (its optimized
    graph, each node followed by its index in the order the function runs them), in Theano's
    layout. `depth` limits the levels printed (-1: all); `print_type` adds each variable's type;
    `ids` is 'CHAR' ([id A]), 'int' ([id 0]) or '' (none); `stop_on_name` does not expand the
    inputs of a named variable.

    Returns None after printing to stdout (file=None), the text for file='str', or `file`
    itself after writing to it, as Theano does."""
    if ids not in ("CHAR", "int", "id", ""):
        raise ValueError(f"debugprint: ids must be 'CHAR', 'int', 'id' or '', got {ids!r}")
    text, fn_nodes = _source(obj)
    tops = _parse(text)
    order = _order(tops, fn_nodes) if fn_nodes is not None else {}
    text = _render(tops, depth, print_type, ids, stop_on_name, order)
    if file == "str":
        return text
    if file is None:
        sys.stdout.write(text)
        sys.stdout.flush()
        return None
    file.write(text)
    return file


def pprint(obj):
    """A one-graph text form (Theon gives debugprint's tree)."""
    return debugprint(obj, file="str")


pp = pprint
