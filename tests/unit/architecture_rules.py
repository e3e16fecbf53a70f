"""The package's shape as pure checks over modules read with ``ast`` (nothing is imported).

Each check takes the modules (:func:`load_modules` of a folder) and returns its violations, one
line each naming the module, the line and the name, so ``test_architecture.py`` can assert an
empty list for ``zkconsumer`` and ``test_architecture_rules.py`` can plant a violation in a
package written to a temporary folder and see it reported.

An import counts wherever it is written: at the top, inside a function, under
``if TYPE_CHECKING:`` (a type-only import still ties two modules together), and as
``importlib.import_module("literal")``. An import whose module name is computed at run time
(``import_module(name)``, ``__import__``) is a violation of its own outside the allowed
modules: the graph cannot see it, and it once hid a cycle.

Private means a name starting with one underscore (dunders such as ``__version__`` are public).
A module named with an underscore (``assignors/_java.py``) is private to its package: its
siblings may import it and its public names, nothing outside may.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

# (layer name, top-level names in it), bottom up: a module imports from its own layer or below.
Layers = Sequence[tuple[str, Sequence[str]]]

# The call spellings of importlib's import by name (first argument: the module's name).
DYNAMIC_IMPORTS = {"importlib.import_module", "import_module", "__import__"}


@dataclass(frozen=True)
class Module:
    name: str
    path: Path
    tree: ast.Module
    is_package: bool


@dataclass(frozen=True)
class Import:
    line: int
    target: str  # the module named by the statement (``a.b`` in ``from a.b import c``)
    name: str | None  # the name imported from it (``c``), None for ``import a.b``


def load_modules(base: Path, prefix: str) -> dict[str, Module]:
    """Every ``*.py`` under the package folder ``base`` as ``prefix.sub.module``."""
    found: dict[str, Module] = {}
    for path in sorted(base.rglob("*.py")):
        parts = list(path.relative_to(base).with_suffix("").parts)
        is_package = parts[-1] == "__init__"
        if is_package:
            parts = parts[:-1]
        name = ".".join([prefix, *parts])
        found[name] = Module(name, path, ast.parse(path.read_text(), str(path)), is_package)
    return found


def is_private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def package_of(module: Module) -> str:
    return module.name if module.is_package else module.name.rpartition(".")[0]


def _resolve(module: Module, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    base = package_of(module).split(".")
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def _literal_first_arg(node: ast.Call) -> str | None:
    if node.args and isinstance(node.args[0], ast.Constant) \
            and isinstance(node.args[0].value, str):
        return node.args[0].value
    return None


def imports(module: Module) -> list[Import]:
    """Each import written anywhere in ``module`` (see the module docstring)."""
    out: list[Import] = []
    for node in ast.walk(module.tree):
        if isinstance(node, ast.Import):
            out.extend(Import(node.lineno, alias.name, None) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            target = _resolve(module, node)
            out.extend(Import(node.lineno, target, alias.name) for alias in node.names)
        elif isinstance(node, ast.Call) and ast.unparse(node.func) in DYNAMIC_IMPORTS:
            literal = _literal_first_arg(node)
            if literal is not None:
                out.append(Import(node.lineno, literal, None))
    return out


def computed_imports(modules: Mapping[str, Module], allowed: Iterable[str] = ()) -> list[str]:
    """Imports by a name computed at run time, outside the ``allowed`` modules."""
    allowed = set(allowed)
    found = []
    for module in modules.values():
        if module.name in allowed:
            continue
        for node in ast.walk(module.tree):
            if isinstance(node, ast.Call) and ast.unparse(node.func) in DYNAMIC_IMPORTS \
                    and (ast.unparse(node.func) == "__import__"
                         or _literal_first_arg(node) is None):
                found.append(f"{module.name}:{node.lineno}: {ast.unparse(node)}")
    return found


def import_graph(modules: Mapping[str, Module]) -> dict[str, set[str]]:
    """Module -> the modules of ``modules`` it imports (``from pkg import mod`` is ``pkg.mod``)."""
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for module in modules.values():
        for imp in imports(module):
            target = imp.target
            if imp.name is not None and f"{target}.{imp.name}" in modules:
                target = f"{target}.{imp.name}"
            if target in modules and target != module.name:
                graph[module.name].add(target)
    return graph


def without_package_inits(graph: Mapping[str, set[str]], modules: Mapping[str, Module]
                          ) -> dict[str, set[str]]:
    """The graph without edges into a package's ``__init__`` from its own submodules.

    Importing ``pkg.a.b`` runs ``pkg/a/__init__.py`` first, so an ``__init__`` that re-exports
    its submodules "imports" them and they "import" it. That is how a package facade works and
    not a cycle between two ideas; every other edge counts.
    """
    return {src: {dst for dst in dsts
                  if not (modules[dst].is_package and src.startswith(dst + "."))}
            for src, dsts in graph.items()}


def cycles(graph: Mapping[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph[node]):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def import_cycles(modules: Mapping[str, Module]) -> list[list[str]]:
    return cycles(without_package_inits(import_graph(modules), modules))


def layer_of(module: str, layers: Layers) -> int:
    """The rank of ``module``'s layer, from the name below the root package (``""``: the
    root package itself)."""
    top = module.split(".")[1] if "." in module else ""
    for rank, (_name, tops) in enumerate(layers):
        if top in tops:
            return rank
    raise AssertionError(f"{module} is in no layer: add its package to LAYERS and the doc")


def upward_imports(modules: Mapping[str, Module], layers: Layers) -> list[str]:
    """Imports of a module in a higher layer (every module must be in a layer)."""
    rank = {name: layer_of(name, layers) for name in modules}
    graph = without_package_inits(import_graph(modules), modules)
    return [f"{src} ({layers[rank[src]][0]}) imports {dst} ({layers[rank[dst]][0]})"
            for src, dsts in sorted(graph.items()) for dst in sorted(dsts)
            if rank[dst] > rank[src]]


def forbidden_imports(modules: Mapping[str, Module], packages: Iterable[str],
                      forbidden: Iterable[str]) -> list[str]:
    """Imports of a ``forbidden`` module (or anything below it) by a module of ``packages``."""
    packages, forbidden = tuple(packages), tuple(forbidden)

    def hit(name: str) -> str | None:
        return next((f for f in forbidden if name == f or name.startswith(f + ".")), None)

    found = []
    for module in modules.values():
        if not any(module.name == p or module.name.startswith(p + ".") for p in packages):
            continue
        for imp in imports(module):
            full = imp.target if imp.name is None else f"{imp.target}.{imp.name}"
            what = hit(imp.target) or hit(full)
            if what is not None:
                found.append(f"{module.name}:{imp.line}: imports {full} ({what})")
    return found


def _private_module_visible(importer: Module, target: str) -> bool:
    """A private module (``pkg/_x.py``) is visible from the modules of ``pkg`` only."""
    parts = target.split(".")
    for i, part in enumerate(parts):
        if is_private(part):
            owner = ".".join(parts[:i])
            return package_of(importer) == owner or importer.name.startswith(owner + ".") \
                and package_of(importer).startswith(owner)
    return True


def private_crossings(modules: Mapping[str, Module], root_package: str,
                      extensions: Iterable[str] = (),
                      external_underscore_api: Iterable[str] = ()) -> list[str]:
    """Private modules and names of ``root_package`` used outside their module.

    ``extensions`` are compiled modules (no source to read); ``external_underscore_api`` the
    objects of other libraries whose public names start with an underscore.
    """
    extensions, external = set(extensions), set(external_underscore_api)
    problems: list[str] = []
    for module in modules.values():
        for imp in imports(module):
            if not imp.target.startswith(root_package):
                continue
            if not _private_module_visible(module, imp.target):
                problems.append(f"{module.name}:{imp.line}: imports private module {imp.target}")
            if imp.name is None:
                continue
            full = f"{imp.target}.{imp.name}"
            if full in modules or full in extensions:
                if not _private_module_visible(module, full):
                    problems.append(f"{module.name}:{imp.line}: imports private module {full}")
            elif is_private(imp.name) and imp.target != module.name:
                problems.append(f"{module.name}:{imp.line}: imports private name {imp.name} "
                                f"from {imp.target}")
        problems.extend(_foreign_attributes(module, external))
    return problems


def _foreign_attributes(module: Module, external: set[str]) -> list[str]:
    """``x._name`` and ``getattr(x, "_name")`` where ``x`` is not this object or class.

    An object's private attributes belong to the module that defines its class: ``self`` and
    ``cls``, and the classes defined in the module itself, may touch them; anything else is a
    caller reaching into another module's internals (or a sibling object's, which hides a
    missing method).
    """
    own = {"self", "cls"} | {node.name for node in module.tree.body
                             if isinstance(node, ast.ClassDef)}
    problems: list[str] = []
    for node in ast.walk(module.tree):
        if isinstance(node, ast.Attribute) and is_private(node.attr):
            base = ast.unparse(node.value)
            if base not in own and base not in external:
                problems.append(f"{module.name}:{node.lineno}: reads {base}.{node.attr}")
        elif (isinstance(node, ast.Call) and ast.unparse(node.func) in {"getattr", "setattr",
                                                                         "hasattr"}
              and len(node.args) >= 2 and isinstance(node.args[1], ast.Constant)
              and isinstance(node.args[1].value, str) and is_private(node.args[1].value)
              and ast.unparse(node.args[0]) not in own):
            problems.append(f"{module.name}:{node.lineno}: {ast.unparse(node.func)}("
                            f"{ast.unparse(node.args[0])}, {node.args[1].value!r})")
    return problems


def long_modules(modules: Mapping[str, Module], max_lines: int) -> dict[str, int]:
    return {m.name: n for m in modules.values()
            if (n := len(m.path.read_text().splitlines())) > max_lines}


def concept_homes(modules: Mapping[str, Module], concepts: Iterable[str]) -> dict[str, set[str]]:
    """Per shared concept, the modules defining it at module level (even as ``_name``).

    A ``str.rsplit('-', 1)`` call counts as a definition of ``consumer_id_of`` (parsing a
    thread id by hand); a method delegating to the one home (``BrokerGroup._revoke``) does not.
    """
    concepts = set(concepts)
    homes: dict[str, set[str]] = {}
    for module in modules.values():
        for node in module.tree.body:
            if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
                name = node.name.lstrip("_")
                if name in concepts:
                    homes.setdefault(name, set()).add(module.name)
        for node in ast.walk(module.tree):
            if isinstance(node, ast.Call) and ast.unparse(node.func).endswith(".rsplit") \
                    and [ast.unparse(a) for a in node.args] == ["'-'", "1"]:
                homes.setdefault("consumer_id_of", set()).add(module.name)
    return homes
