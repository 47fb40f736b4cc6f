"""The Theano API coverage table (docs/THEANO_API.md) cannot go stale.

docs/theano_api/theano_1_0_5_names.txt lists the public names of Theano 1.0.5's modules
(extracted from Theano's sources by scripts/theano_api_names.py); docs/theano_api/annotations.txt
says, for some of them, how Theon's name differs or why it is missing. This test imports each
module's Theon counterpart (theano -> theon, theano.tensor -> theon.tensor, ...), looks every
name up, renders the table and fails when the checked-in docs/THEANO_API.md differs:

    THEON_UPDATE_API_MD=1 python -m pytest tests/python/test_theano_api.py

rewrites it. A name present in Theon is "present" unless annotated "different"; an annotation
that no longer holds (a "missing" name that is now present, a name Theano does not have) fails.
"""
import fnmatch
import importlib
import os

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
NAMES = os.path.join(ROOT, "docs", "theano_api", "theano_1_0_5_names.txt")
NOTES = os.path.join(ROOT, "docs", "theano_api", "annotations.txt")
TABLE = os.path.join(ROOT, "docs", "THEANO_API.md")
ACTED_ON = os.path.join(ROOT, "docs", "theano_api", "acted_on.md")
UPDATE = "THEON_UPDATE_API_MD=1 python -m pytest tests/python/test_theano_api.py"


def theon_module(theano_module):
    return "theon" + theano_module[len("theano"):]


def read_names():
    """{theano module: [names]} in the file's order."""
    out, mod = {}, None
    with open(NAMES, encoding="utf-8") as f:
        for line in f:
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            if line.startswith("[") and line.endswith("]"):
                mod = line[1:-1]
                out[mod] = []
            else:
                out[mod].append(line)
    return out


def read_annotations():
    """[(module, name pattern, status, note, line number)]: lines 'module:name status: note'."""
    notes = []
    with open(NOTES, encoding="utf-8") as f:
        for k, line in enumerate(f, 1):
            line = line.rstrip("\n")
            if not line.strip() or line.startswith("#"):
                continue
            key, _, rest = line.partition(" ")
            status, _, note = rest.strip().partition(":")
            mod, _, pattern = key.partition(":")
            if not pattern or status not in ("present", "different", "missing") or not note.strip():
                raise AssertionError(f"{NOTES}:{k}: expected 'module:name present|different|missing: note', "
                                     f"got {line!r}")
            notes.append((mod, pattern, status, note.strip(), k))
    return notes


def annotation_for(notes, mod, name):
    """The exact annotation of mod:name, else the first pattern that matches it."""
    for n in notes:
        if n[0] == mod and n[1] == name:
            return n
    for n in notes:
        if n[0] == mod and any(c in n[1] for c in "*?[") and fnmatch.fnmatchcase(name, n[1]):
            return n
    return None


def survey():
    """(rows per module: [(name, status, note)], module import errors, stale annotation messages)."""
    names, notes = read_names(), read_annotations()
    rows, import_errors, stale = {}, {}, []
    used = set()
    for mod, mod_names in names.items():
        try:
            module = importlib.import_module(theon_module(mod))
        except ImportError as e:
            module = None
            import_errors[mod] = f"{theon_module(mod)} is not importable ({e.__class__.__name__})"
        rows[mod] = []
        for name in mod_names:
            note = annotation_for(notes, mod, name)
            present = module is not None and hasattr(module, name)
            if note is not None:
                used.add(note[4])
            if present:
                if note is not None and note[2] in ("different", "present"):
                    rows[mod].append((name, note[2], note[3]))
                else:
                    if note is not None and note[1] == name:  # an exact 'missing' note for a present name
                        stale.append(f"annotations.txt:{note[4]}: {mod}:{name} is annotated missing but "
                                     f"{theon_module(mod)}.{name} exists: remove the line (or say how it differs)")
                    rows[mod].append((name, "present", ""))
            else:
                why = note[3] if note is not None and note[2] == "missing" else ""
                if note is not None and note[2] in ("different", "present") and note[1] == name:
                    stale.append(f"annotations.txt:{note[4]}: {mod}:{name} is annotated {note[2]} but "
                                 f"{theon_module(mod)}.{name} does not exist")
                if not why and module is None:
                    why = import_errors[mod]
                rows[mod].append((name, "missing", why))
    for n in notes:
        if n[4] not in used:
            stale.append(f"annotations.txt:{n[4]}: {n[0]}:{n[1]} matches no name of {n[0]} in theano_1_0_5_names.txt")
    return rows, import_errors, stale


def render(rows, import_errors):
    every = [r for rs in rows.values() for r in rs]
    total = {s: sum(1 for _, st, _ in every if st == s) for s in ("present", "different", "missing")}
    out = ["# Theano 1.0.5 names in Theon", "",
           "Generated by `tests/python/test_theano_api.py` from `docs/theano_api/theano_1_0_5_names.txt` (every "
           "public name of these Theano modules, extracted from Theano 1.0.5's sources by "
           "`scripts/theano_api_names.py`) and the notes of `docs/theano_api/annotations.txt`; the test fails when "
           "this file is stale:", "", f"    {UPDATE}", "",
           "Each Theano module `theano.X` is looked up as `theon.X` (`import theon as theano`). **present**: the name "
           "exists in Theon with Theano's meaning; **different**: it exists but differs as the note says; "
           "**missing**: it does not exist (the note says why, where there is one).", "",
           f"In all: {total['present']} present, {total['different']} different, {total['missing']} missing, of "
           f"{sum(total.values())} names.", "",
           "| Theano module | Theon module | present | different | missing |", "|---|---|---|---|---|"]
    for mod, rs in rows.items():
        c = {s: sum(1 for _, st, _ in rs if st == s) for s in ("present", "different", "missing")}
        out.append(f"| [`{mod}`](#{mod.replace('.', '')}) | `{theon_module(mod)}` | {c['present']} | {c['different']} "
                   f"| {c['missing']} |")
    for mod, rs in rows.items():
        out += ["", f"## {mod}", ""]
        if mod in import_errors:
            out += [f"{import_errors[mod]}.", ""]
        out += ["| name | status | note |", "|---|---|---|"]
        for name, status, note in rs:
            out.append(f"| `{name}` | {status} | {note.replace('|', '/')} |")
    with open(ACTED_ON, encoding="utf-8") as f:  # the hand-written audit, after the generated tables
        out += ["", f.read().rstrip("\n")]
    return "\n".join(out) + "\n"


def test_theano_api_table_is_current():
    rows, import_errors, stale = survey()
    assert not stale, "stale annotations:\n" + "\n".join(stale)
    text = render(rows, import_errors)
    if os.environ.get("THEON_UPDATE_API_MD") == "1":
        with open(TABLE, "w", encoding="utf-8") as f:
            f.write(text)
        return
    with open(TABLE, encoding="utf-8") as f:
        current = f.read()
    if current != text:
        import difflib
        diff = "".join(list(difflib.unified_diff(current.splitlines(True), text.splitlines(True), "docs/THEANO_API.md",
                                                 "generated", n=0))[:60])
        pytest.fail(f"docs/THEANO_API.md is stale; regenerate it with\n    {UPDATE}\n{diff}")


def test_names_file_lists_every_module_the_table_covers():
    names = read_names()
    for mod in ("theano", "theano.tensor", "theano.tensor.nnet", "theano.tensor.signal", "theano.tensor.signal.pool",
                "theano.sandbox.rng_mrg", "theano.printing", "theano.gradient", "theano.compile"):
        assert mod in names, f"{mod} has no section in {NAMES}"
    assert "grad" in names["theano"] and "function" in names["theano"]
    assert "pydotprint" in names["theano.printing"] and "grad_clip" in names["theano.gradient"]


def test_annotation_lookup_prefers_exact_names():
    notes = [("theano", "C*", "missing", "pattern", 1), ("theano", "Constant", "different", "exact", 2)]
    assert annotation_for(notes, "theano", "Constant")[3] == "exact"
    assert annotation_for(notes, "theano", "CLinker")[3] == "pattern"
    assert annotation_for(notes, "theano", "grad") is None
