"""The core install: what runs without the extras, and what says which extra it needs.

The extras' packages are installed in the test environment, so each check runs in a
subprocess where they cannot be imported (a meta-path finder answers as pip would when
they are not installed): the core flows must not touch them, and each feature that needs
one names its extra.
"""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import tomllib

ROOT = Path(__file__).resolve().parents[2]

EXTRAS = {
    "rl": ("stable_baselines3", "gymnasium", "matplotlib"),
    "postgres": ("psycopg", "psycopg_pool"),
    "classic": ("langchain_classic",),
    "mcp": ("mcp", "uvicorn", "starlette"),
    "bench": ("nltk",),
    "onnx": ("onnxruntime", "onnx"),
}
"""Each extra and the top-level modules of its packages (the bench extra's matplotlib is
the rl extra's too, listed there)."""

BROUGHT = ("pandas",)
"""Packages only the extras bring (stable-baselines3 needs pandas): absent from the core."""

IMPORTERS = {
    "rl": {"rl.env", "rl.train", "rl.report", "cli.bench", "bench.summary", "bench.answers"},
    "postgres": {"backends.postgres"},
    "classic": {"integrations.classic"},
    "mcp": {"integrations.mcp.server", "integrations.mcp.http"},
    "bench": {"bench.answer_scores"},
    "onnx": {"embedding.quantized"},
}
"""The package's modules that may import each extra's packages."""

_BLOCK = """
import importlib.abc, importlib.util, sys
from pathlib import Path

BLOCKED = {blocked!r}
PACKAGE = str(Path(importlib.util.find_spec("langchain_agentmem").origin).parent)
ASKED = []  # (module, where) for each import of a blocked module by the package itself


def _caller():
    frame = sys._getframe(2)
    while frame and any(s in frame.f_code.co_filename for s in ("importlib", "<frozen")):
        frame = frame.f_back
    return f"{{frame.f_code.co_filename}}:{{frame.f_lineno}}" if frame else "?"


class NotInstalled(importlib.abc.MetaPathFinder):
    # Wraps each finder: a blocked module is not found, nor its distribution, as when the
    # package is not installed (find_spec answers None, import raises ModuleNotFoundError).
    def __init__(self, finder):
        self.finder = finder

    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in BLOCKED:
            where = _caller()
            if where.startswith(PACKAGE):
                ASKED.append((name, where))
            return None
        find = getattr(self.finder, "find_spec", None)
        return find(name, path, target) if find else None

    def find_distributions(self, *args, **kwargs):
        find = getattr(self.finder, "find_distributions", None)
        found = find(*args, **kwargs) if find else ()
        return [d for d in found
                if (d.metadata["Name"] or "").lower().replace("-", "_") not in BLOCKED]

    def invalidate_caches(self):
        getattr(self.finder, "invalidate_caches", lambda: None)()


sys.meta_path[:] = [NotInstalled(f) for f in sys.meta_path]
"""

_CORE = """
import json, sys
from langchain_agentmem import (
    AgentMemory, AgentMemoryMiddleware, AgentMemoryRetriever, AgentMemoryStore,
    AgentMemoryVectorStore, BufferChatMessageHistory, memory_tools, recall_node,
)
import langchain_agentmem.cli

with AgentMemory("sqlite:///memory.db", capacity=50) as memory:  # the learned policy
    memory.add("I live in Lyon and I am vegetarian.", namespace="alice")
    found = memory.search("Where do I live?", namespace="alice", k=1)[0].text
    AgentMemoryMiddleware(memory, tools=True)
    docs = AgentMemoryRetriever(memory=memory, namespace="alice").invoke("Lyon")
    AgentMemoryVectorStore(memory, namespace="alice").similarity_search("Lyon", k=1)
    store = AgentMemoryStore(memory)
    store.put(("memories", "bob"), "diet", {"content": "Bob eats fish."})
    history = BufferChatMessageHistory(memory, namespace="alice", thread="t1")
    history.add_user_message("hello")
    tools = [t.name for t in memory_tools(memory)]
    recall_node(memory)
    policy = memory.policy.name
loaded = sorted(m for m in sys.modules if m.split(".")[0] in BLOCKED)
print(json.dumps({"found": found, "docs": len(docs), "tools": tools, "policy": policy,
                  "loaded": loaded, "asked": ASKED}))
"""


def _run(blocked: tuple[str, ...], code: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "AGENTMEM_HOME": str(tmp_path / "home")}
    return subprocess.run(
        [sys.executable, "-c", _BLOCK.format(blocked=set(blocked)) + code],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def _all_blocked() -> tuple[str, ...]:
    return (*(m for modules in EXTRAS.values() for m in modules), *BROUGHT)


def test_the_core_dependencies_leave_the_extras_out() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    core = " ".join(project["dependencies"]).lower()
    extras = project["optional-dependencies"]
    for extra, modules in EXTRAS.items():
        listed = " ".join(extras[extra]).lower().replace("-", "_")
        for module in modules:
            assert module.replace("_", "-") not in core and module not in core, module
            assert module in listed or module.replace("_", "") in listed, (extra, module)
    assert extras["all"] == ["langchain-agentmem[rl,postgres,classic,mcp,bench,onnx]"]


def _imports(path: Path) -> set[str]:
    """The top-level names of every module ``path`` imports, anywhere in its body."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module.split(".")[0])
    return found


def test_only_the_modules_of_a_feature_import_its_extra() -> None:
    package = ROOT / "langchain_agentmem"
    for path in sorted(package.rglob("*.py")):
        module = ".".join(path.relative_to(package).with_suffix("").parts)
        imported = _imports(path)
        for extra, modules in EXTRAS.items():
            if imported & set(modules):
                assert module in IMPORTERS[extra], f"{module} imports the {extra!r} extra"
        assert not imported & set(BROUGHT), f"{module} imports {imported & set(BROUGHT)}"


def test_the_core_runs_without_any_extra(tmp_path: Path) -> None:
    done = _run(_all_blocked(), _CORE, tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen["found"] == "I live in Lyon and I am vegetarian."
    assert seen["docs"] == 1
    assert seen["tools"] == ["search_memory", "save_memory", "forget_memory"]
    assert seen["policy"] == "learned"
    assert seen["loaded"] == []
    assert seen["asked"] == []  # the package did not even try to import them


@pytest.mark.parametrize(
    ("extra", "code"),
    [
        ("postgres", "AgentMemory('postgresql://postgres@127.0.0.1:5432/test')"),
        ("classic", "from langchain_agentmem import AgentMemoryRecall"),
        ("classic", "import langchain_agentmem.integrations.classic"),
        ("mcp", "import langchain_agentmem.integrations.mcp.server"),
        ("mcp", "import langchain_agentmem.integrations.mcp.http"),
        ("rl", "import langchain_agentmem.rl.env"),
        ("rl", "from langchain_agentmem.bench.summary import plot_recall as p; p({}, 'x.png')"),
        ("bench", "from langchain_agentmem.bench.answer_scores import token_f1 as f; f('a', 'b')"),
        ("onnx", "from langchain_agentmem import QuantizedEmbeddings; QuantizedEmbeddings()"),
    ],
)
def test_a_feature_without_its_extra_names_it(extra: str, code: str, tmp_path: Path) -> None:
    probe = f"""
from langchain_agentmem import AgentMemory
from langchain_agentmem.errors import MissingExtraError
try:
    {code}
except MissingExtraError as exc:
    assert isinstance(exc, ImportError)
    print(exc)
else:
    raise SystemExit("no error")
"""
    done = _run(EXTRAS[extra], probe, tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    said = done.stdout.strip()
    assert f"needs the {extra!r} extra" in said
    assert f"pip install 'langchain-agentmem[{extra}]'" in said
    assert f"pip install '.[{extra}]'" in said


@pytest.mark.parametrize(
    ("extra", "argv"),
    [
        ("rl", ["train", "--data", "convs.json", "--out", "policy"]),
        ("mcp", ["mcp", "--user", "alice"]),
        ("rl", ["bench", "locomo", "--data", "convs.json", "--out", "r.json", "--plot", "r.png"]),
        ("bench", ["bench", "locomo", "--data", "convs.json", "--out", "r.json", "--answers"]),
        (
            "postgres",
            [
                "export",
                "--store",
                "postgresql://postgres@127.0.0.1/test",
                "--user",
                "a",
                "--out",
                "a.jsonl",
            ],
        ),
    ],
)
def test_a_command_without_its_extra_says_so_in_one_line(
    extra: str, argv: list[str], tmp_path: Path
) -> None:
    (tmp_path / "convs.json").write_text("[]", encoding="utf-8")
    probe = f"import sys\nfrom langchain_agentmem.cli import main\nsys.exit(main({argv!r}))\n"
    done = _run(EXTRAS[extra], probe, tmp_path)
    assert done.returncode == 1, done.stderr[-3000:]
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith(f"agentmem {argv[0]}: ")
    assert f"needs the {extra!r} extra" in lines[0]
