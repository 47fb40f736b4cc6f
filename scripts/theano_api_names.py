#!/usr/bin/env python3
"""Lists the public names of Theano 1.0.5's modules that Theon mirrors, from Theano's sources.

Theano does not import under NumPy 2 (and CI has no network), so the list is made once from
the sources and checked in (docs/theano_api/theano_1_0_5_names.txt); tests/python/test_theano_api.py
reads it. To redo it (Python >= 3.9, no Theano import needed):

    pip download theano==1.0.5 --no-deps --no-binary :all: -d /tmp/theano_sdist
    tar xzf /tmp/theano_sdist/Theano-1.0.5.tar.gz -C /tmp/theano_sdist
    python scripts/theano_api_names.py /tmp/theano_sdist/Theano-1.0.5 > docs/theano_api/theano_1_0_5_names.txt

The public names of a module are what ``from module import *`` gives: its ``__all__`` when it
has one, else every name bound at its top level (also inside top-level if/try/with blocks)
that does not start with '_', with ``from X import *`` expanded the same way for Theano's own
modules. Names imported from modules outside Theano (os, sys, numpy, six, logging, warnings,
collections, ...) are left out. For a package, its submodules that its ``__init__`` imports
(``from .nnet import ...``, ``from theano.tensor import opt``) are attributes too, as at run time.
The list is static: names a module makes at run time (setattr, globals() updates) are missed.
"""
import ast
import hashlib
import os
import sys

MODULES = ["theano", "theano.tensor", "theano.tensor.nnet", "theano.tensor.signal", "theano.tensor.signal.pool",
           "theano.sandbox.rng_mrg", "theano.printing", "theano.gradient", "theano.compile",
           "theano.compile.monitormode", "theano.gof.graph"]


class Source:
    def __init__(self, root):
        self.root = root
        self.cache = {}

    def path(self, mod):
        base = os.path.join(self.root, *mod.split("."))
        if os.path.isdir(base):
            return os.path.join(base, "__init__.py"), True
        if os.path.exists(base + ".py"):
            return base + ".py", False
        return None, False

    def resolve(self, current, is_pkg, node):
        """The absolute module name of an ImportFrom node."""
        if not node.level:
            return node.module
        parts = current.split(".")
        if not is_pkg:
            parts = parts[:-1]
        parts = parts[:len(parts) - (node.level - 1)]
        return ".".join(parts + ([node.module] if node.module else []))

    def names(self, mod, stack=()):
        if mod in self.cache:
            return self.cache[mod]
        if mod in stack:
            return []
        path, is_pkg = self.path(mod)
        if path is None:
            raise SystemExit(f"theano_api_names: no source for {mod} under {self.root}")
        with open(path, encoding="utf-8") as f:
            tree = ast.parse(f.read(), path)
        explicit = None
        bound = []

        def bind(name):
            if name not in bound:
                bound.append(name)

        def targets(t):
            if isinstance(t, ast.Name):
                bind(t.id)
            elif isinstance(t, (ast.Tuple, ast.List)):
                for e in t.elts:
                    targets(e)

        def walk(body):
            nonlocal explicit
            for node in body:
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    bind(node.name)
                elif isinstance(node, ast.Assign):
                    for t in node.targets:
                        if isinstance(t, ast.Name) and t.id == "__all__":
                            explicit = [ast.literal_eval(e) for e in node.value.elts]
                        targets(t)
                elif isinstance(node, ast.AugAssign):
                    if isinstance(node.target, ast.Name) and node.target.id == "__all__" and explicit is not None:
                        explicit += [ast.literal_eval(e) for e in node.value.elts]
                    targets(node.target)
                elif isinstance(node, ast.AnnAssign):
                    targets(node.target)
                elif isinstance(node, ast.Import):
                    for a in node.names:
                        if a.name.split(".")[0] == "theano":
                            bind(a.asname or a.name.split(".")[0])
                elif isinstance(node, ast.ImportFrom):
                    src = self.resolve(mod, is_pkg, node)
                    if not src or src.split(".")[0] != "theano":
                        continue  # outside Theano: stdlib, numpy, six, ...
                    if is_pkg and src.startswith(mod + ".") and src.count(".") == mod.count(".") + 1:
                        bind(src.rsplit(".", 1)[1])  # the submodule becomes an attribute of the package
                    for a in node.names:
                        if a.name == "*":
                            for n in self.names(src, stack + (mod,)):
                                bind(n)
                        else:
                            bind(a.asname or a.name)
                elif isinstance(node, ast.Delete):
                    for t in node.targets:
                        if isinstance(t, ast.Name) and t.id in bound:
                            bound.remove(t.id)
                elif isinstance(node, (ast.For, ast.AsyncFor)):
                    targets(node.target)
                    walk(node.body)
                    walk(node.orelse)
                elif isinstance(node, ast.If):
                    walk(node.body)
                    walk(node.orelse)
                elif isinstance(node, ast.Try):
                    walk(node.body)
                    for h in node.handlers:
                        walk(h.body)
                    walk(node.orelse)
                    walk(node.finalbody)
                elif isinstance(node, (ast.With, ast.AsyncWith)):
                    walk(node.body)

        walk(tree.body)
        out = explicit if explicit is not None else [n for n in bound if not n.startswith("_")]
        self.cache[mod] = out
        return out


def main():
    if len(sys.argv) != 2:
        raise SystemExit("usage: theano_api_names.py <Theano-1.0.5 source folder>")
    root = sys.argv[1]
    src = Source(root)
    digest = hashlib.sha256()
    for mod in MODULES:
        path, _ = src.path(mod)
        with open(path, "rb") as f:
            digest.update(f.read())
    print("# Public names of Theano 1.0.5 modules, one section per module ([module], then one name a line).")
    print("# Source: the Theano 1.0.5 release (PyPI sdist Theano-1.0.5.tar.gz), its theano/ sources read")
    print("# statically by scripts/theano_api_names.py (that file says how to redo this list and the rules:")
    print("# __all__ if present, else top-level names without a leading '_', names imported from outside")
    print("# Theano left out). Do not edit by hand.")
    print(f"# sha256 of the {len(MODULES)} module files read, concatenated: {digest.hexdigest()}")
    for mod in MODULES:
        print()
        print(f"[{mod}]")
        for n in sorted(set(src.names(mod)), key=lambda s: (s.lower(), s)):
            print(n)


if __name__ == "__main__":
    main()
