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
from .errors import TheonNotImplementedError

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
    from .gof.graph import Apply
    if isinstance(obj, (Function, FunctionGraph)):
        obj = obj._fn
    if isinstance(obj, Apply):  # a node (MonitorMode's callbacks get one): its outputs' graph
        obj = obj.outputs
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
    for key, value in (("done", done), ("used_ids", used_ids)):
        if value is not None:  # Theano's memo shared between calls: each call here numbers its own ids
            raise TheonNotImplementedError(f"debugprint({key}=...) is not available: each call prints with its "
                                           "own ids")
    if print_storage or print_clients:
        raise TheonNotImplementedError(f"debugprint(print_storage={print_storage!r}, print_clients="
                                       f"{print_clients!r}) is not available: the compiled program's storage and "
                                       "clients are shown by f.explain()")
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


# ---- the pretty printer (Theano's pp / pprint and its printer classes) ----
#
# A PPrinter holds printers with the condition each applies under: an op (``node.op ==``, a
# theon.gof.graph.Op) or a function ``condition(pstate, variable)``; the most recently assigned
# matching one prints a variable, and printers print a node's inputs through the PPrinter again
# (pstate.pprinter), so a graph prints as one nested expression. ``pstate.memo`` keeps what each
# variable printed as, so a subgraph used twice is walked once.

VALID_ASSOC = {"left", "right", "either"}

use_ascii = True
special = dict(middle_dot="\\dot", big_sigma="\\Sigma")
greek = dict(alpha="\\alpha", beta="\\beta", gamma="\\gamma", delta="\\delta", epsilon="\\epsilon")


class PrinterState:
    """What printers share while printing one expression: ``pprinter``, ``memo`` (variable ->
    text), ``precedence`` (of the operator around the variable being printed) and any keyword
    given. ``clone(**changes)`` is a copy with some changed."""

    def __init__(self, props=None, **more_props):
        if isinstance(props, PrinterState):
            self.__dict__.update(props.__dict__)
        elif props:
            self.__dict__.update(props)
        self.__dict__.update(more_props)
        self.__dict__.setdefault("memo", {})

    def clone(self, props=None, **more_props):
        state = PrinterState(self)
        state.__dict__.update(props or {})
        state.__dict__.update(more_props)
        return state


def _inputs_printed(pstate, inputs, precedences):
    """Each input printed through pstate.pprinter with its precedence (the state's own restored)."""
    old = getattr(pstate, "precedence", None)
    try:
        texts = []
        for var, precedence in zip(inputs, precedences):
            pstate.precedence = precedence
            texts.append(pstate.pprinter.process(var, pstate))
        return texts
    finally:
        pstate.precedence = old


def _node_of(output, what):
    node = output.owner
    if node is None:
        raise TypeError(f"{what} cannot print {output}: it is not the result of an operation")
    return node


class OperatorPrinter:
    """An infix (two or more inputs) or prefix (one input) operator, always parenthesized as in
    Theano: ``(x + y)``, ``-x``. ``assoc`` ('left', 'right', 'either') nudges the inputs'
    precedence as Theano does."""

    def __init__(self, operator, precedence, assoc="left"):
        if assoc not in VALID_ASSOC:
            raise ValueError(f"OperatorPrinter: assoc must be one of {sorted(VALID_ASSOC)}, got {assoc!r}")
        self.operator, self.precedence, self.assoc = operator, precedence, assoc

    def process(self, output, pstate):
        if output in pstate.memo:
            return pstate.memo[output]
        node = _node_of(output, f"operator {self.operator}")
        last = len(node.inputs) - 1
        precedences = [self.precedence + (1e-6 if (self.assoc == "left" and i != 0) or
                                          (self.assoc == "right" and i != last) else 0.0)
                       for i in range(len(node.inputs))]
        texts = _inputs_printed(pstate, node.inputs, precedences)
        text = self.operator + texts[0] if len(texts) == 1 else f" {self.operator} ".join(texts)
        pstate.memo[output] = r = f"({text})"
        return r


class PatternPrinter:
    """One %-pattern per output naming the inputs by position: ``PatternPrinter('%(0)s[%(1)s]')``;
    a pattern may be given as (pattern, precedence of input 0, ...)."""

    def __init__(self, *patterns):
        self.patterns = [(p, ()) if isinstance(p, str) else (p[0], tuple(p[1:])) for p in patterns]

    def process(self, output, pstate):
        if output in pstate.memo:
            return pstate.memo[output]
        node = _node_of(output, f"pattern {self.patterns}")
        pattern, precedences = self.patterns[node.outputs.index(output)]
        precedences = tuple(precedences) + (1000,) * len(node.inputs)
        texts = _inputs_printed(pstate, node.inputs, precedences)
        pstate.memo[output] = r = pattern % {str(i): t for i, t in enumerate(texts)}
        return r


class FunctionPrinter:
    """``name(input, ...)``, one name per output of the node."""

    def __init__(self, *names):
        self.names = names

    def process(self, output, pstate):
        if output in pstate.memo:
            return pstate.memo[output]
        node = _node_of(output, f"function {self.names}")
        name = self.names[node.outputs.index(output)]
        texts = _inputs_printed(pstate, node.inputs, [-1000] * len(node.inputs))
        pstate.memo[output] = r = f"{name}({', '.join(texts)})"
        return r


class MemberPrinter:
    """``input.name``: an attribute of the node's first input (``x.T``)."""

    def __init__(self, *names):
        self.names = names

    def process(self, output, pstate):
        if output in pstate.memo:
            return pstate.memo[output]
        node = _node_of(output, f"member {self.names}")
        name = self.names[node.outputs.index(output)]
        pstate.memo[output] = r = f"{_inputs_printed(pstate, node.inputs[:1], [1000])[0]}.{name}"
        return r


class IgnorePrinter:
    """Prints the node's first input in its place (for ops that do not change the value's meaning)."""

    def process(self, output, pstate):
        if output in pstate.memo:
            return pstate.memo[output]
        node = _node_of(output, "IgnorePrinter")
        pstate.memo[output] = r = pstate.pprinter.process(node.inputs[0], pstate)
        return r


class LeafPrinter:
    """A variable by its name (a Greek letter's name as its symbol), a constant as
    ``TensorConstant{value}``, anything else as str()."""

    def process(self, output, pstate):
        if output in pstate.memo:
            return pstate.memo[output]
        if output.name is not None:
            r = greek.get(output.name, output.name)
        elif _core.var_role(output._v) == "constant":
            value = _core.constant_value(output._v)
            r = f"TensorConstant{{{value.item() if value.size == 1 else value.tolist()}}}"
        else:
            r = str(output)
        pstate.memo[output] = r
        return r


leaf_printer = LeafPrinter()


class DefaultPrinter:
    """``op(input, ...)`` with the op as it prints; a leaf by leaf_printer."""

    def process(self, output, pstate):
        if output in pstate.memo:
            return pstate.memo[output]
        node = output.owner
        if node is None:
            return leaf_printer.process(output, pstate)
        texts = _inputs_printed(pstate, node.inputs, [-1000] * len(node.inputs))
        suffix = f"[{node.outputs.index(output)}]" if len(node.outputs) > 1 else ""
        pstate.memo[output] = r = f"{node.op}({', '.join(texts)}){suffix}"
        return r


default_printer = DefaultPrinter()


class PPrinter:
    """Theano's pretty printer: ``pp(variable)`` is one expression; ``pp(inputs, outputs,
    updates)`` (process_graph) a small program, one line per named result, update and output.
    ``assign(condition, printer)``: ``condition`` is an op (theon.gof.graph.Op, as
    ``var.owner.op``) or a function ``(pstate, variable) -> bool``."""

    def __init__(self):
        self.printers = []       # (condition, printer), the most recent first
        self.printers_dict = {}  # op -> printer

    def assign(self, condition, printer):
        from .gof.graph import Op
        if isinstance(condition, Op):
            self.printers_dict[condition] = printer
        elif callable(condition):
            self.printers.insert(0, (condition, printer))
        else:
            raise TypeError(f"PPrinter.assign: the condition must be an op (var.owner.op) or a function "
                            f"(pstate, variable) -> bool, got {condition!r}")

    def process(self, r, pstate=None):
        r = _as_printable(r)
        if pstate is None:
            pstate = PrinterState(pprinter=self, target=r)
        elif isinstance(pstate, dict):
            pstate = PrinterState(pprinter=self, **pstate)
        node = r.owner
        if node is not None and node.op in self.printers_dict:
            return self.printers_dict[node.op].process(r, pstate)
        for condition, printer in self.printers:
            if condition(pstate, r):
                return printer.process(r, pstate)
        raise TypeError(f"PPrinter: no printer applies to {r}")

    def clone(self):
        cp = PPrinter()
        cp.printers, cp.printers_dict = list(self.printers), dict(self.printers_dict)
        return cp

    def clone_assign(self, condition, printer):
        cp = self.clone()
        cp.assign(condition, printer)
        return cp

    def process_graph(self, inputs, outputs, updates=None, display_inputs=False):
        from .gof.graph import io_toposort
        inputs = list(inputs) if isinstance(inputs, (list, tuple)) else [inputs]
        outputs = [_as_printable(o) for o in (outputs if isinstance(outputs, (list, tuple)) else [outputs])]
        updates = list(updates.items() if hasattr(updates, "items") else (updates or []))
        lines = [(0, "inputs: " + ", ".join(str(v) for v in inputs + [s for s, _ in updates]))] \
            if display_inputs else []
        current = [None]  # the result being printed in full; other named results print by name
        printer = self.clone_assign(lambda pstate, r: r.name is not None and r is not current[0], leaf_printer)
        updated = {_as_printable(v): s for s, v in updates}
        k = 1
        for node in io_toposort(inputs + [s for s, _ in updates], outputs + list(updated)):
            for out in node.outputs:
                if out in updated:
                    lines.append((k + 1000, f"{updated[out]} <- {printer.process(out)}"))
                    k += 1
                if out.name is not None or out in outputs:
                    current[0] = out
                    pos = 2000 + outputs.index(out) if out in outputs else k
                    if len(outputs) == 1 and outputs[0] is out:
                        lines.append((pos, f"return {printer.process(out)}"))
                    else:
                        name = out.name if out.name is not None else f"out[{outputs.index(out)}]"
                        lines.append((pos, f"{name} = {printer.process(out)}"))
                    k += 1
        lines.sort(key=lambda line: line[0])
        return "\n".join(text for _, text in lines)

    def __call__(self, *args):
        if len(args) == 1:
            obj = args[0]
            from .compile import Function
            if isinstance(obj, Function):
                obj = obj.maker.outputs
            if isinstance(obj, (list, tuple)):
                return "\n".join(self.process(o) for o in obj)
            return self.process(obj)
        if len(args) == 2 and isinstance(args[1], (PrinterState, dict)):
            return self.process(*args)
        if len(args) > 2:
            return self.process_graph(*args)
        raise TypeError("pprint: give a variable (or a list, or a function), a variable and a "
                        "PrinterState, or inputs, outputs and updates")


def _as_printable(var):
    from .gof.graph import wrap
    return var if isinstance(var, TensorVariable) else wrap(_v(var))


def _elemwise_scalar(r):
    """The scalar op's name of an Elemwise node's output r ('add', 'exp', ...), else None."""
    node = r.owner
    if node is None or node.op.kind != "Elemwise" or not node.op.props:
        return None
    return node.op.props[0][1]


class _ElemwiseFunctionPrinter:
    """An elementwise op as a function of its scalar op's name (``exp(x)``); a cast as
    ``convert_to_<dtype>(x)``."""

    def process(self, output, pstate):
        props = output.owner.op.props
        name = "convert_to_" + props[1][1] if props[0][1] == "cast" and len(props) > 1 else props[0][1]
        return FunctionPrinter(name).process(output, pstate)


class DimShufflePrinter:
    """Theano's: new broadcastable dims in front are not shown, the identity shows its input,
    a full transpose ``x.T``, any other order ``DimShuffle{order}(x)``."""

    def process(self, output, pstate):
        if output in pstate.memo:
            return pstate.memo[output]
        node = _node_of(output, "DimShufflePrinter")
        order = [o.strip() for o in node.op.props[0][1].strip("()").split(",") if o.strip()]
        while order and order[0] == "x":
            order = order[1:]
        ndim = node.inputs[0].ndim
        inner = _inputs_printed(pstate, node.inputs[:1], [1000])[0]
        if order == [str(d) for d in range(ndim)]:
            r = inner
        elif ndim > 1 and order == [str(d) for d in reversed(range(ndim))]:
            r = f"{inner}.T"
        else:
            r = f"DimShuffle{{{', '.join(order)}}}({inner})"
        pstate.memo[output] = r
        return r


class _ConstantSubtensorPrinter:
    """``x[1:3, 0]`` for basic indexing whose indices are all constants (Theano's SubtensorPrinter)."""

    def process(self, output, pstate):
        if output in pstate.memo:
            return pstate.memo[output]
        node = output.owner
        inner = _inputs_printed(pstate, node.inputs[:1], [1000])[0]
        pstate.memo[output] = r = f"{inner}[{node.op.props[0][1]}]"
        return r


def _scalar_is(name):
    return lambda pstate, r: _elemwise_scalar(r) == name


_OPERATORS = [("add", "+", -2, "either"), ("mul", "*", -1, "either"), ("sub", "-", -2, "left"),
              ("neg", "-", 0, "either"), ("true_div", "/", -1, "left"), ("int_div", "//", -1, "left"),
              ("floor_div", "//", -1, "left"), ("mod", "%", -1, "left"), ("pow", "**", 1, "right"),
              ("lt", "<", -3, "left"), ("gt", ">", -3, "left"), ("le", "<=", -3, "left"),
              ("ge", ">=", -3, "left"), ("eq", "==", -3, "left"), ("neq", "!=", -3, "left"),
              ("and_", "&", -4, "either"), ("or_", "|", -4, "either"), ("xor", "^", -4, "either"),
              ("invert", "~", 0, "either")]

pprint = PPrinter()
pprint.assign(lambda pstate, r: True, default_printer)
# Theano's tensor module names each elementwise op by its function (exp(x), cast to a dtype by
# its dtype's name), and gives arithmetic and comparisons their operators.
pprint.assign(lambda pstate, r: _elemwise_scalar(r) is not None, _ElemwiseFunctionPrinter())
for _scalar, _symbol, _precedence, _assoc in _OPERATORS:
    pprint.assign(_scalar_is(_scalar), OperatorPrinter(_symbol, _precedence, _assoc))
pprint.assign(lambda pstate, r: r.owner is not None and r.owner.op.kind == "DimShuffle", DimShufflePrinter())
pprint.assign(lambda pstate, r: r.owner is not None and r.owner.op.kind == "Subtensor" and len(r.owner.inputs) == 1,
              _ConstantSubtensorPrinter())
pprint.assign(lambda pstate, r: r.owner is not None and r.owner.op.kind == "Dot",
              OperatorPrinter(special["middle_dot"], -1, "left"))
# A named variable other than the one being printed prints by its name.
pprint.assign(lambda pstate, r: r.name is not None and r is not getattr(pstate, "target", None), leaf_printer)
pp = pprint


# ---- Print: values shown as a function runs ----

def _print_fn(op, xin):
    for attr in op.attrs:
        temp = getattr(xin, attr)
        pmsg = temp() if callable(temp) else temp
        print(op.message, attr, "=", pmsg)


class Print:
    """Theano's ``theano.printing.Print(message, attrs=('__str__',), global_fn=...)``: ``Print(
    'x')(x)`` is x, and each time a function computes it, it prints ``message attr = value``
    for each attribute of the value's NumPy array (``'__str__'``, ``'shape'``, ``'mean'``,
    ``'min'``...: called when callable), or calls ``global_fn(op, value)`` instead. It runs as
    the graph does: before the nodes that read it, so a call that fails later has printed what
    it reached. Gradients pass through it; the optimizer keeps it. On a GPU the value is copied
    to the host."""

    def __init__(self, message="", attrs=("__str__",), global_fn=_print_fn):
        self.message = message
        self.attrs = tuple(attrs)
        self.global_fn = global_fn

    def __call__(self, x):
        x = x if isinstance(x, TensorVariable) else TensorVariable(_v(x))
        key = len(_PRINT_OPS)
        _PRINT_OPS.append(self)
        return TensorVariable(_core.print_(x._v, str(self.message), key))

    def __str__(self):
        return f"Print{{message={self.message!r}, attrs={self.attrs}}}"

    __repr__ = __str__

    def __eq__(self, other):
        return isinstance(other, Print) and (self.message, self.attrs, self.global_fn) == \
            (other.message, other.attrs, other.global_fn)

    def __hash__(self):
        return hash((self.message, self.attrs))


# The Print of each key the graph's Print ops carry (the C++ op calls _dispatch with it).
_PRINT_OPS = []


def _dispatch(key, value):
    op = _PRINT_OPS[key]
    op.global_fn(op, value)


# ---- pydotprint: the graph as a picture (Graphviz's dot) ----

def _dot_quote(text):
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


# Theano's default colours: by op class name for Apply boxes, and 'Input', 'Constant', 'Output'
# for the variables. Theon's Transfer (a copy between devices) takes GpuFromHost's red.
default_colorCodes = {"GpuFromHost": "red", "HostFromGpu": "red", "Transfer": "red", "Scan": "yellow",
                      "Shape": "brown", "IfElse": "magenta", "Elemwise": "#FFAABB", "Subtensor": "#FFAAFF",
                      "Alloc": "#FFAA22", "Output": "blue", "Input": "green", "Constant": "grey"}


def _dot_source(obj, with_ids=False, max_label_size=70, compact=True, high_contrast=True, colorCodes=None,
                var_with_name_simple=False):
    """The graph of a function (its optimized program), of a variable or of a list of them as
    Graphviz text, in Theano's pydot style: a box per node (its op), an ellipse per input,
    constant and output, and (compact=False) per intermediate variable, or (compact=True) per
    named one only; edges labelled by input position. Colours from ``colorCodes`` (op class
    name, or 'Input', 'Constant', 'Output'): filled with ``high_contrast``, else outlined."""
    text, _ = _source(obj)
    tops = _parse(text)
    colors = default_colorCodes if colorCodes is None else colorCodes
    lines = ["digraph theano {", "  rankdir=TB;", "  node [fontname=\"Helvetica\"];"]
    ids = {}

    def new_id(key):
        if key not in ids:
            ids[key] = f"n{len(ids)}"
        return ids[key]

    def cut(s):
        return s if len(s) <= max_label_size else s[:max_label_size - 3] + "..."

    def style(color):
        if not color:
            return ""
        return f", style=filled, fillcolor={_dot_quote(color)}" if high_contrast else f", color={_dot_quote(color)}"

    def var_label(line, fallback_type=True):
        if line.name:
            return line.name if var_with_name_simple else f"{line.name} {_theano_type(line.type)}"
        return str(_theano_type(line.type)) if fallback_type else ""

    def var_node(line, key, role):
        vid = new_id(key)
        if key not in drawn:
            drawn.add(key)
            lines.append(f"  {vid} [shape=ellipse{style(colors.get(role))}, label={_dot_quote(cut(var_label(line)))}];")
        return vid

    drawn = set()
    for line in _walk(tops):
        node = line.node
        if node.key in drawn:
            continue
        drawn.add(node.key)
        nid = new_id(node.key)
        if node.is_apply:
            label = line.label + (f" id={node.key}" if with_ids else "")
            op_class = re.split(r"[{.]", line.label, maxsplit=1)[0]
            lines.append(f"  {nid} [shape=box{style(colors.get(op_class))}, label={_dot_quote(cut(label))}];")
            for k, child in enumerate(node.children):
                src = new_id(child.node.key)
                if child.node.is_apply and (not compact or child.name):  # the intermediate variable itself
                    src_var = var_node(child, ("var", child.node.key, child.label), None)
                    if ("edge", src, src_var) not in drawn:
                        drawn.add(("edge", src, src_var))
                        lines.append(f"  {src} -> {src_var};")
                    src = src_var
                edge = f" [label={_dot_quote(str(k))}]" if len(node.children) > 1 else ""
                lines.append(f"  {src} -> {nid}{edge};")
        else:
            const = line.label.startswith("TensorConstant") or re.match(r"^-?[0-9.]", line.label)
            if const or _UNNAMED.match(line.label):
                label = line.label if const else f"<{_theano_type(line.type)}>"
            else:
                label = line.label if var_with_name_simple else f"{line.label} {_theano_type(line.type)}"
            label += f" id={node.key}" if with_ids else ""
            role = "Constant" if const else "Input"
            lines.append(f"  {nid} [shape=ellipse{style(colors.get(role))}, label={_dot_quote(cut(label))}];")
    for k, top in enumerate(tops):
        out = f"out{k}"
        name = top.name or f"output {k}"
        label = name if (var_with_name_simple and top.name) else f"{name} {_theano_type(top.type)}"
        lines.append(f"  {out} [shape=ellipse{style(colors.get('Output'))}, label={_dot_quote(cut(label))}];")
        lines.append(f"  {new_id(top.node.key)} -> {out};")
    lines.append("}")
    return "\n".join(lines) + "\n"


def pydotprint(fct, outfile=None, compact=True, format="png", with_ids=False, high_contrast=True,
               cond_highlight=None, colorCodes=None, max_label_size=70, scan_graphs=False,
               var_with_name_simple=False, print_output_file=True, return_image=False):
    """Theano's pydotprint: draws the graph of a compiled function (its optimized program, as
    debugprint shows it), of a variable or of a list of variables with Graphviz's ``dot``
    program (Theano used pydot over it), in ``format`` (png, svg, pdf, dot, ...). Writes
    ``outfile`` (default: ``<compiledir>/theano.pydotprint.<device>.<format>``) and prints its
    name, or returns the image's bytes with ``return_image=True``. RuntimeError when ``dot``
    is not installed (Debian: ``apt-get install graphviz``).

    An Apply box per node and an ellipse per input, constant and output; ``compact=False`` draws
    every intermediate variable too (``compact=True``: the named ones). ``colorCodes`` maps op
    class names ('Elemwise', 'Transfer', ...) and 'Input', 'Constant', 'Output' to colours
    (default: ``default_colorCodes``); ``high_contrast`` fills the shapes, else outlines them;
    ``var_with_name_simple`` labels a named variable by its name only. ``cond_highlight`` and
    ``scan_graphs`` draw ifelse branches and scan inner graphs, which Theon does not have yet:
    they are refused."""
    import os
    import shutil
    import subprocess
    from .configparser import config
    if cond_highlight or scan_graphs:
        from .errors import not_available
        raise not_available("pydotprint(cond_highlight=..., scan_graphs=...)", "Theon has no ifelse or scan ops yet")
    if colorCodes is not None and not hasattr(colorCodes, "get"):
        raise TypeError(f"pydotprint: colorCodes must be a dict (op class name -> colour), got {colorCodes!r}")
    if not isinstance(format, str) or not re.match(r"^[a-z0-9_:]+$", format):
        raise ValueError(f"pydotprint: format must be a Graphviz output format name (png, svg, pdf...), got {format!r}")
    source = _dot_source(fct, with_ids=with_ids, max_label_size=max_label_size, compact=compact,
                         high_contrast=high_contrast, colorCodes=colorCodes, var_with_name_simple=var_with_name_simple)
    dot = shutil.which("dot")
    if dot is None:
        raise RuntimeError("pydotprint needs Graphviz's 'dot' program, which is not installed "
                           "(Debian: apt-get install graphviz; scripts/setup.sh installs it)")
    res = subprocess.run([dot, "-T" + format], input=source.encode(), capture_output=True, check=False)
    if res.returncode != 0:
        raise RuntimeError(f"pydotprint: dot -T{format} failed ({res.returncode}): {res.stderr.decode(errors='replace')}")
    if return_image:
        return res.stdout
    if outfile is None:
        outfile = os.path.join(config.compiledir, f"theano.pydotprint.{config.device}.{format}")
    with open(outfile, "wb") as f:
        f.write(res.stdout)
    if print_output_file:
        print("The output file is available at", outfile)


def __getattr__(name):
    # Theano's probes whether pydotprint can work (it needed pydot): here, whether Graphviz's
    # `dot` program is installed, looked up when read.
    if name in ("pydot_imported", "pydot_imported_msg"):
        import shutil
        ok = shutil.which("dot") is not None
        if name == "pydot_imported":
            return ok
        return "" if ok else "Graphviz's 'dot' program is not installed (Debian: apt-get install graphviz)"
    raise AttributeError(f"module 'theon.printing' has no attribute {name!r}")
