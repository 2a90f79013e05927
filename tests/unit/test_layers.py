"""The package's layers, as its imports draw them (function-level imports included)."""

from __future__ import annotations

import argparse
import ast
import importlib
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "langchain_agentmem"


def _module(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def import_graph(typing: bool = True) -> dict[str, set[str]]:
    """Every package module and the package modules it imports, anywhere in its body
    (``typing=False``: leaving out what is imported under ``TYPE_CHECKING``)."""
    modules = {_module(p): p for p in PACKAGE.rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        typing_only = {
            id(inner)
            for node in ast.walk(tree)
            if not typing and isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)
            for inner in ast.walk(node)
        }
        found: set[str] = set()
        for node in ast.walk(tree):
            targets: list[str] = []
            if id(node) in typing_only:
                continue
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                targets = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
            found.update(t for t in targets if t in modules and t != name)
        graph[name] = found
    return graph


def _under(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def test_policies_import_nothing_from_rl() -> None:
    graph = import_graph()
    bad = {
        (m, t)
        for m, ts in graph.items()
        if _under(m, "langchain_agentmem.policies")
        for t in ts
        if _under(t, "langchain_agentmem.rl")
    }
    assert not bad, f"policies reach up into rl/: {sorted(bad)}"


def test_rl_imports_nothing_from_bench() -> None:
    graph = import_graph()
    bad = {
        (m, t)
        for m, ts in graph.items()
        if _under(m, "langchain_agentmem.rl")
        for t in ts
        if _under(t, "langchain_agentmem.bench")
    }
    assert not bad, f"rl/ reaches up into bench/: {sorted(bad)}"


ROOMS = {
    "errors": 0,
    "types": 0,
    "collector": 0,
    "models": 0,
    "files": 1,
    "validation": 1,
    "filters": 1,
    "text": 2,
    "annotation": 3,
    "embedding": 3,
    "backends": 4,
    "index": 4,
    "policies": 4,
    "locomo": 4,
    "ranking": 5,
    "namespace": 6,
    "memory": 7,
    "integrations": 8,
    "rl": 9,
    "bench": 10,
    "cli": 11,
}
"""Every room (a folder, or a module at the root) and its floor: a module imports only from
its own floor or below (``docs/architecture.md`` draws them)."""

ROOT_FILES = 10
"""At most this many modules at the package root: the rest live in rooms."""


def _floor(module: str) -> int | None:
    parts = module.split(".")
    return ROOMS[parts[1]] if len(parts) > 1 else None


def test_every_module_lives_in_a_named_room() -> None:
    rooms = {p.stem for p in PACKAGE.glob("*.py") if p.stem != "__init__"}
    rooms |= {p.name for p in PACKAGE.iterdir() if (p / "__init__.py").is_file()}
    assert rooms == set(ROOMS), (
        f"rooms without a floor, or floors without a room: {rooms ^ set(ROOMS)}"
    )
    assert len(list(PACKAGE.glob("*.py"))) <= ROOT_FILES, sorted(
        p.name for p in PACKAGE.glob("*.py")
    )


def test_imports_run_down_the_floors() -> None:
    graph = import_graph()
    floors = {m: _floor(m) for m in graph}
    up = sorted(
        (m, t)
        for m, ts in graph.items()
        for t in ts
        if (low := floors[m]) is not None and (high := floors[t]) is not None and high > low
    )
    assert not up, f"imports running up a floor: {up}"


def test_no_import_circle_in_the_package() -> None:
    graph = import_graph(typing=False)
    del graph["langchain_agentmem"]  # its names load lazily, by name
    cycle = find_cycle(graph)
    assert cycle is None, f"import circle: {' -> '.join(cycle or [])}"


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle of ``graph``, or ``None`` (depth-first search)."""
    state: dict[str, int] = {}

    def visit(m: str, path: list[str]) -> list[str] | None:
        state[m] = 1
        for t in sorted(graph.get(m, ())):
            if state.get(t) == 1:
                return [*path[path.index(t) :], t]
            if t not in state:
                found = visit(t, [*path, t])
                if found:
                    return found
        state[m] = 2
        return None

    for m in sorted(graph):
        if m not in state:
            found = visit(m, [m])
            if found:
                return found
    return None


def test_find_cycle_finds_one() -> None:
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": set()}) is None


def test_no_import_cycle_in_rl_policies_index_or_ranking() -> None:
    graph = import_graph()
    for package in (
        "langchain_agentmem.rl",
        "langchain_agentmem.policies",
        "langchain_agentmem.index",
        "langchain_agentmem.ranking",
    ):
        inside = {
            m: {t for t in ts if _under(t, package) and t != package}
            for m, ts in graph.items()
            if _under(m, package) and m != package
        }
        cycle = find_cycle(inside)
        assert cycle is None, f"import cycle: {' -> '.join(cycle or [])}"


def _reaches_past(path: Path) -> list[str]:
    """Where a module reads a private member of an ``AgentMemory`` or its ``backend``."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not isinstance(node, ast.Attribute):
            continue
        owner = node.value
        name = owner.attr if isinstance(owner, ast.Attribute) else getattr(owner, "id", "")
        if name == "memory" and (node.attr.startswith("_") or node.attr == "backend"):
            found.append(f"{path.name}:{node.lineno} memory.{node.attr}")
    return found


def test_integrations_use_the_public_api() -> None:
    graph = import_graph()
    bad = sorted(
        (m, t)
        for m, ts in graph.items()
        if _under(m, "langchain_agentmem.integrations")
        for t in ts
        if _under(t, "langchain_agentmem.backends")
        or _under(t, "langchain_agentmem.namespace.cache")
    )
    assert not bad, f"integrations reach into the store or the cache: {bad}"
    reached = [hit for p in (PACKAGE / "integrations").rglob("*.py") for hit in _reaches_past(p)]
    assert not reached, f"integrations use AgentMemory's private parts: {reached}"


def test_nothing_outside_the_memory_room_reaches_a_memory_s_private_parts() -> None:
    outside = [p for p in PACKAGE.rglob("*.py") if (PACKAGE / "memory") not in p.parents]
    reached = [hit for p in outside for hit in _reaches_past(p)]
    assert not reached, f"a memory's backend or private member used outside memory/: {reached}"


def _private_reaches(path: Path) -> list[str]:
    """Where a module reads a private member of anything but ``self`` or ``cls``."""
    return [
        f"{path.name}:{node.lineno} {ast.unparse(node)}"
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.Attribute)
        and node.attr.startswith("_")
        and not node.attr.startswith("__")
        and not (isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"))
    ]


def test_agent_memory_is_made_of_parts_not_bases() -> None:
    """``AgentMemory`` inherits no class of the package: it owns its parts, each constructed
    with what it needs, and inside its room each part reaches the others through their
    public surface (``NamespaceAccess``: ``batch``, ``live_view``, ``lock`` ...)."""
    memory = importlib.import_module("langchain_agentmem.memory")
    ours = [
        base.__qualname__
        for base in memory.AgentMemory.__mro__[1:]
        if base.__module__.startswith("langchain_agentmem")
    ]
    assert not ours, f"AgentMemory inherits {ours}"
    parts = [p for p in (PACKAGE / "memory").glob("*.py") if p.name != "__init__.py"]
    reached = [hit for p in parts for hit in _private_reaches(p)]
    assert not reached, f"a part of the memory reaches a private member: {reached}"


def test_the_part_rule_sees_a_private_reach(tmp_path: Path) -> None:
    sample = tmp_path / "part.py"
    sample.write_text("def f(self, memory):\n    return memory._batch('x'), self._own\n")
    assert _private_reaches(sample) == ["part.py:2 memory._batch"]


def test_the_public_api_rule_sees_a_private_call(tmp_path: Path) -> None:
    sample = tmp_path / "adapter.py"
    sample.write_text("def f(self):\n    return self.memory._store_namespaces('x')\n")
    assert _reaches_past(sample) == ["adapter.py:2 memory._store_namespaces"]


def test_bottom_modules_import_no_other_layer() -> None:
    graph = import_graph()
    bottoms = (
        "langchain_agentmem.text.controls",
        "langchain_agentmem.text.sentences",
        "langchain_agentmem.text.replies",
        "langchain_agentmem.types",
        "langchain_agentmem.text.words",
    )
    for bottom in bottoms:
        # Bottom modules may use errors and the bottom modules listed before them.
        allowed = {"langchain_agentmem.errors", *bottoms[: bottoms.index(bottom)]}
        above = {t for t in graph[bottom] if t not in allowed}
        assert not above, f"{bottom} imports {sorted(above)}"


MCP = ("langchain_agentmem.integrations.mcp.server", "langchain_agentmem.integrations.mcp.http")
"""The MCP server: an adapter on the integrations floor, over the optional ``mcp`` SDK."""


def _sdk_importers() -> set[str]:
    """Package modules importing the ``mcp`` extra's packages (anywhere in their body)."""
    extra = ("mcp", "starlette", "uvicorn")
    found = set()
    for path in PACKAGE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names = [node.module]
            if any(n.split(".")[0] in extra for n in names):
                found.add(_module(path))
    return found


def test_mcp_server_reaches_storage_only_through_agent_memory() -> None:
    graph = import_graph()
    lower = ("backends", "index", "namespace", "memory.items", "memory.access", "policies", "rl")
    bad = [
        (m, t)
        for m in MCP
        for t in graph[m]
        for low in lower
        if _under(t, f"langchain_agentmem.{low}")
    ]
    assert not bad, f"the MCP server reaches below AgentMemory: {sorted(bad)}"


def test_only_the_cli_loads_the_mcp_server_and_its_sdk() -> None:
    graph = import_graph()
    users = {m for m, ts in graph.items() if set(MCP) & ts and m not in MCP}
    assert users <= {"langchain_agentmem.cli.mcp"}, f"the optional server is imported by {users}"
    assert _sdk_importers() <= set(MCP), "only the MCP modules import the mcp extra"


def test_stop_word_lists_live_in_words() -> None:
    # One home for the lists of words that say nothing (BM25, names, questions, features).
    readers = {
        _module(p)
        for p in PACKAGE.rglob("*.py")
        if "STOPWORDS_EN" in p.read_text(encoding="utf-8")
        or "frozenset(_STOP" in p.read_text(encoding="utf-8")
    }
    assert readers == {"langchain_agentmem.text.words"}, sorted(readers)


CLI = "langchain_agentmem.cli"
"""The ``agentmem`` command line: it imports the package; nothing in the package imports it."""


def test_nothing_in_the_package_imports_the_command_line() -> None:
    graph = import_graph()
    bad = sorted(
        (m, t) for m, ts in graph.items() if not _under(m, CLI) for t in ts if _under(t, CLI)
    )
    assert not bad, f"the package reaches up into cli/: {bad}"


def test_the_command_line_and_the_two_families_live_in_their_folders() -> None:
    root = {p.stem for p in PACKAGE.glob("*.py")}
    loose = {m for m in root if m.startswith(("cli", "chat")) or m in ("demo", "pipes")}
    assert not loose, f"command-line modules at the package root: {sorted(loose)}"
    adapters = {p.stem for p in (PACKAGE / "integrations").glob("*.py")}
    flat = {m for m in adapters if m.startswith(("store", "mcp"))}
    assert not flat, f"store or MCP modules outside integrations/store/, integrations/mcp/: {flat}"
    for folder in ("cli", "cli/chat", "integrations/store", "integrations/mcp"):
        assert (PACKAGE / folder / "__init__.py").is_file(), folder


def _calls(path: Path, name: str) -> int:
    """How many calls of a function or method ``name`` a module makes."""
    return sum(
        1
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.Call)
        and (getattr(node.func, "id", None) == name or getattr(node.func, "attr", None) == name)
    )


def test_one_place_adds_every_command_group() -> None:
    callers = {_module(p) for p in PACKAGE.rglob("*.py") if _calls(p, "add_parsers")}
    assert callers == {CLI}, f"command groups are added from {sorted(callers)}"
    defining = {_module(p) for p in PACKAGE.rglob("*.py") if _calls(p, "add_command")}
    assert all(_under(m, CLI) for m in defining), f"commands defined outside cli/: {defining}"
    groups = [
        _module(p)
        for p in sorted((PACKAGE / "cli").rglob("*.py"))
        if "def add_parsers(" in p.read_text(encoding="utf-8")
    ]
    added: set[str] = set()
    for group in groups:
        sub = argparse.ArgumentParser().add_subparsers()
        importlib.import_module(group).add_parsers(sub)
        added |= set(sub.choices)
    from langchain_agentmem.cli import build_parser

    (every,) = [a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction)]
    assert set(every.choices) == added, f"left out: {added - set(every.choices)}"


def test_the_write_path_runs_downward() -> None:
    """The writer and the stores below it call nothing above them: they import no part of
    ``AgentMemory``, the cache or a view, and take no function to call back (the loop in
    ``access.NamespaceAccess.batch`` calls the decision, then the writer, then the view)."""
    import inspect
    import typing

    graph = import_graph()
    above = ("memory", "namespace.cache", "namespace.view", "integrations")
    below = ["langchain_agentmem.namespace.ops"] + [
        m for m in graph if _under(m, "langchain_agentmem.backends")
    ]
    bad = {
        (m, t)
        for m in below
        for t in graph[m]
        if any(_under(t, f"langchain_agentmem.{up}") for up in above)
    }
    assert not bad, f"the writer or a store reaches up: {sorted(bad)}"
    callbacks = []
    interface = (
        "namespace.ops",
        "backends.base",
        "backends.sql_transaction",
    )  # what the loop calls
    for name in (f"langchain_agentmem.{m}" for m in interface):
        module = importlib.import_module(name)
        for _, member in inspect.getmembers(module):
            if getattr(member, "__module__", None) != name:
                continue
            functions = [member] if inspect.isfunction(member) else []
            if inspect.isclass(member):
                functions = [f for _, f in inspect.getmembers(member, inspect.isfunction)]
            for fn in functions:
                try:
                    hints = {k: str(v) for k, v in typing.get_type_hints(fn).items()}
                except NameError:  # a name imported for type checking only
                    hints = {k: str(v) for k, v in fn.__annotations__.items()}
                callbacks += [
                    f"{name}.{fn.__qualname__}({param})"
                    for param, hint in hints.items()
                    if param != "return" and "Callable" in hint
                ]
    assert not callbacks, f"the writer or a store takes a callback: {callbacks}"
    # Every method and its async twin read top to bottom (check, embed, the store): no
    # driver resumes a generator of theirs from below.
    memory = importlib.import_module("langchain_agentmem.memory").AgentMemory
    generators = [n for n, _ in inspect.getmembers(memory, inspect.isgeneratorfunction)]
    assert not generators, f"AgentMemory's methods written as generators: {generators}"


def test_the_annotator_is_handed_its_store() -> None:
    """The annotator imports no part of ``AgentMemory``: it is handed an ``AnnotationStore``,
    which ``judging`` builds over a memory (what the model judges), for ``memory`` alone."""
    graph = import_graph()
    parts = {m for m in graph if _under(m, "langchain_agentmem.memory")}
    assert not graph["langchain_agentmem.annotation.annotator"] & parts, (
        "the annotator reaches the memory"
    )
    users = {m for m, ts in graph.items() if "langchain_agentmem.memory.judging" in ts}
    assert users == {"langchain_agentmem.memory"}, f"judging is imported by {sorted(users)}"


DEFERRED = 3
"""At most this many imports of the package's own modules inside function bodies outside
``cli/``, ``rl/`` and ``bench/`` (which defer what a command does not need at start-up)."""


def deferred_imports() -> list[str]:
    """``module:line target`` for each import of a package module inside a function body."""
    found = []
    for path in PACKAGE.rglob("*.py"):
        name = _module(path)
        if any(_under(name, f"langchain_agentmem.{room}") for room in ("cli", "rl", "bench")):
            continue
        for fn in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            for node in ast.walk(fn):
                target = ""
                if isinstance(node, ast.ImportFrom) and node.level == 0:
                    target = node.module or ""
                elif isinstance(node, ast.Import):
                    target = node.names[0].name
                if _under(target, "langchain_agentmem"):
                    found.append(f"{name}:{node.lineno} {target}")
    return sorted(set(found))


def test_the_package_imports_its_modules_at_the_top() -> None:
    deferred = deferred_imports()
    assert len(deferred) <= DEFERRED, f"imports inside function bodies: {deferred}"


LONGEST = 80
"""Lines a function of the package may take at most, its docstring included."""


def test_no_function_is_longer_than_a_screen() -> None:
    long = [
        f"{_module(path)}.{node.name} ({node.end_lineno - node.lineno + 1} lines)"
        for path in PACKAGE.rglob("*.py")
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
        and (node.end_lineno or node.lineno) - node.lineno + 1 > LONGEST
    ]
    assert not long, f"functions over {LONGEST} lines: {long}"


WRITE_LOOP = ("memory/access.py", "memory/writes.py", "memory/decisions.py")
"""The write loop and what it is handed: decisions are named objects, not closures."""


def test_the_write_loop_is_handed_decisions_not_closures() -> None:
    nested = []
    for name in WRITE_LOOP:
        tree = ast.parse((PACKAGE / name).read_text(encoding="utf-8"))
        for fn in ast.walk(tree):
            if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            nested += [
                f"{name}:{node.lineno}"
                for node in ast.walk(fn)
                if node is not fn
                and isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
            ]
    assert not nested, f"a nested function or lambda in the write loop: {nested}"
    decisions = importlib.import_module("langchain_agentmem.memory.decisions")
    deciders = [
        cls
        for cls in vars(decisions).values()
        if isinstance(cls, type)
        and cls.__module__ == decisions.__name__
        and cls.__name__ != "Decider"
    ]
    assert len(deciders) >= 6 and all(callable(getattr(c, "decide", None)) for c in deciders)
