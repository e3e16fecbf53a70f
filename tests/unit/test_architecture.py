"""The package's shape: no import cycle inside zkconsumer, no private name crossing modules.

Both rules are read from the source with ``ast`` (nothing is imported), so a violation anywhere
fails here with the module, the line and the name, before it shows up as an import-order bug or
a caller reaching into another module's internals.

Private means a name starting with one underscore (dunders such as ``__version__`` are public).
A module named with an underscore (``assignors/_java.py``, ``testing/_process.py``) is private
to its package: its siblings may import it and its public names, nothing outside may.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "zkconsumer"


@dataclass(frozen=True)
class Module:
    name: str
    path: Path
    tree: ast.Module
    is_package: bool


def _modules(base: Path, prefix: str) -> dict[str, Module]:
    found: dict[str, Module] = {}
    for path in sorted(base.rglob("*.py")):
        rel = path.relative_to(base.parent).with_suffix("")
        parts = list(rel.parts)
        is_package = parts[-1] == "__init__"
        if is_package:
            parts = parts[:-1]
        name = ".".join(parts) if prefix == parts[0] else ".".join([prefix, *parts])
        found[name] = Module(name, path, ast.parse(path.read_text(), str(path)), is_package)
    return found


MODULES = _modules(PACKAGE, "zkconsumer")
# C extensions are modules too (``datapath/_speedups.c`` builds ``zkconsumer.datapath._speedups``).
EXTENSIONS = {".".join(p.relative_to(ROOT).with_suffix("").parts) for p in PACKAGE.rglob("*.c")}

# Names other libraries spell with a leading underscore as part of their public API.
EXTERNAL_UNDERSCORE_API = {
    # confluent-kafka names the client-side error codes so (KafkaError._PARTITION_EOF, ...)
    "KafkaError",
    # os._exit is the documented way for a forked child to leave without running cleanups
    "os",
}


def _is_private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _package_of(module: Module) -> str:
    return module.name if module.is_package else module.name.rpartition(".")[0]


def _resolve(module: Module, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    base = _package_of(module).split(".")
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def _runtime_nodes(tree: ast.Module) -> list[ast.AST]:
    """Every node except those under ``if TYPE_CHECKING:`` (they never run)."""
    skipped: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            skipped.update(id(child) for stmt in node.body for child in ast.walk(stmt))
    return [node for node in ast.walk(tree) if id(node) not in skipped]


def _imports(module: Module, runtime_only: bool) -> list[tuple[int, str, str | None]]:
    """(line, imported module, imported name or None) for each import in ``module``."""
    nodes = _runtime_nodes(module.tree) if runtime_only else list(ast.walk(module.tree))
    out: list[tuple[int, str, str | None]] = []
    for node in nodes:
        if isinstance(node, ast.Import):
            out.extend((node.lineno, alias.name, None) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            target = _resolve(module, node)
            out.extend((node.lineno, target, alias.name) for alias in node.names)
        elif (isinstance(node, ast.Call) and ast.unparse(node.func) in _DYNAMIC_IMPORTS
              and node.args and isinstance(node.args[0], ast.Constant)
              and isinstance(node.args[0].value, str)):
            out.append((node.lineno, node.args[0].value, None))  # an import by another name
    return out


_DYNAMIC_IMPORTS = {"__import__", "importlib.import_module", "import_module"}


def _edges(runtime_only: bool) -> dict[str, set[str]]:
    """Module -> zkconsumer modules it imports (``from pkg import mod`` counts as ``pkg.mod``)."""
    graph: dict[str, set[str]] = {name: set() for name in MODULES}
    for module in MODULES.values():
        for _line, target, name in _imports(module, runtime_only):
            if name is not None and f"{target}.{name}" in MODULES:
                target = f"{target}.{name}"
            if target in MODULES and target != module.name:
                graph[module.name].add(target)
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
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


def _without_package_inits(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    """The graph without edges into a package's ``__init__`` from its own submodules.

    Importing ``zkconsumer.a.b`` runs ``zkconsumer/a/__init__.py`` first, so an ``__init__``
    that re-exports its submodules "imports" them and they "import" it. That is how a package
    facade works and not a cycle between two ideas; every other edge counts.
    """
    return {src: {dst for dst in dsts if not (MODULES[dst].is_package
                                              and src.startswith(dst + "."))}
            for src, dsts in graph.items()}


def test_no_import_cycle_inside_the_package() -> None:
    # Imports under TYPE_CHECKING count too: a type-only cycle is still two modules that
    # cannot be understood one without the other.
    cycles = _cycles(_without_package_inits(_edges(runtime_only=False)))
    assert cycles == [], "import cycles: " + "; ".join(" <-> ".join(c) for c in cycles)


def _private_module_visible(importer: Module, target: str) -> bool:
    """A private module (``pkg/_x.py``) is visible from the modules of ``pkg`` only."""
    parts = target.split(".")
    for i, part in enumerate(parts):
        if _is_private(part):
            owner = ".".join(parts[:i])
            return _package_of(importer) == owner or importer.name.startswith(owner + ".") \
                and _package_of(importer).startswith(owner)
    return True


def _private_crossings() -> list[str]:
    problems: list[str] = []
    for module in MODULES.values():
        where = module.path.relative_to(ROOT)
        imported_modules: set[str] = set()
        for line, target, name in _imports(module, runtime_only=False):
            if not target.startswith("zkconsumer"):
                continue
            if not _private_module_visible(module, target):
                problems.append(f"{where}:{line}: imports private module {target}")
            if name is None:
                imported_modules.add(target.rpartition(".")[2] if "." in target else target)
                continue
            full = f"{target}.{name}"
            if full in MODULES or full in EXTENSIONS:
                imported_modules.add(name)
                if not _private_module_visible(module, full):
                    problems.append(f"{where}:{line}: imports private module {full}")
            elif _is_private(name) and target != module.name:
                problems.append(f"{where}:{line}: imports private name {name} from {target}")
        problems.extend(_foreign_attributes(module, where))
    return problems


def _foreign_attributes(module: Module, where: Path) -> list[str]:
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
        if isinstance(node, ast.Attribute) and _is_private(node.attr):
            base = ast.unparse(node.value)
            if base not in own and base not in EXTERNAL_UNDERSCORE_API:
                problems.append(f"{where}:{node.lineno}: reads {base}.{node.attr}")
        elif (isinstance(node, ast.Call) and ast.unparse(node.func) in {"getattr", "setattr",
                                                                         "hasattr"}
              and len(node.args) >= 2 and isinstance(node.args[1], ast.Constant)
              and isinstance(node.args[1].value, str) and _is_private(node.args[1].value)
              and ast.unparse(node.args[0]) not in own):
            problems.append(f"{where}:{node.lineno}: {ast.unparse(node.func)}("
                            f"{ast.unparse(node.args[0])}, {node.args[1].value!r})")
    return problems


def test_no_private_name_crosses_a_module_boundary() -> None:
    problems = _private_crossings()
    assert problems == [], "private names used outside their module:\n" + "\n".join(problems)


def test_the_checks_see_the_whole_package() -> None:
    """The walk finds the connector, the data path and the lab (so an empty result means it)."""
    assert {"zkconsumer.connector", "zkconsumer.lab.herd", "zkconsumer.zk.paths"} <= set(MODULES)
    graph = _edges(runtime_only=False)
    assert "zkconsumer.zk.paths" in graph["zkconsumer.connector"] | {
        dst for dst in graph if "zkconsumer.zk" in dst}


MAX_MODULE_LINES = 450


def test_no_module_is_past_450_lines() -> None:
    long = {m.path.relative_to(ROOT).as_posix(): n for m in MODULES.values()
            if (n := len(m.path.read_text().splitlines())) > MAX_MODULE_LINES}
    assert long == {}


# Concepts with one home each: (name, the module defining it).
ONE_HOME = {
    "TopicPartition": "zkconsumer.identity",
    "java_string_hash": "zkconsumer.identity",
    "consumer_id_of": "zkconsumer.identity",
    "thread_id": "zkconsumer.identity",
    "thread_number": "zkconsumer.identity",
    "median": "zkconsumer.tables",
    "fmt": "zkconsumer.tables",
    "pyplot": "zkconsumer.results.plotting",
    "die_with_parent": "zkconsumer.orphans",
    "children_of": "zkconsumer.admin.tree",
    "run_matrix": "zkconsumer.lab.matrix",
    "revoke": "zkconsumer.sim.heartbeats",
    "portable_command": "zkconsumer.results.portable",
    "portable_path": "zkconsumer.results.portable",
}


def test_shared_concepts_are_defined_in_one_module_only() -> None:
    """A second module-level definition (even private, ``_median``) of a shared concept is a
    copy; a method delegating to the one home (``BrokerGroup._revoke``) is not."""
    homes: dict[str, set[str]] = {}
    for module in MODULES.values():
        for node in module.tree.body:
            if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
                name = node.name.lstrip("_")
                if name in ONE_HOME:
                    homes.setdefault(name, set()).add(module.name)
        for node in ast.walk(module.tree):
            if isinstance(node, ast.Call) and ast.unparse(node.func).endswith(".rsplit") \
                    and [ast.unparse(a) for a in node.args] == ["'-'", "1"]:
                homes.setdefault("consumer_id_of", set()).add(module.name)  # id parsing
    assert homes == {name: {home} for name, home in ONE_HOME.items()}


# The layers of docs/architecture.md, bottom up: a module imports from its own layer or below.
LAYERS = (
    ("shared", ("identity", "errors", "extras", "orphans", "tables", "events", "metrics")),
    ("zk plumbing", ("zk",)),
    ("connector core", ("config", "topic_filter", "jregex", "datapath", "offsets",
                        "kafka_offsets", "subscription", "assignors")),
    ("rebalance / coordination", ("rebalance", "coordination", "connector", "")),
    ("tools and servers", ("admin", "faults", "testing")),
    ("scenarios", ("scenarios",)),
    ("lab", ("lab", "results", "report")),
    ("spark / sim", ("spark", "sim", "calibration")),
    ("cli", ("cli", "__main__")),
)


def _layer(module: str) -> int:
    top = module.split(".")[1] if "." in module else ""
    for rank, (_name, tops) in enumerate(LAYERS):
        if top in tops:
            return rank
    raise AssertionError(f"{module} is in no layer: add its package to LAYERS and the doc")


def test_imports_only_go_down_the_layers() -> None:
    upward = [f"{src} ({LAYERS[_layer(src)][0]}) imports {dst} ({LAYERS[_layer(dst)][0]})"
              for src, dsts in _without_package_inits(_edges(runtime_only=False)).items()
              for dst in dsts if _layer(dst) > _layer(src)]
    assert upward == []
