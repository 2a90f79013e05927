"""The notebooks in ``notebooks/`` run as they are, offline, and show what they claim.

Each notebook is executed by nbclient on the ``python3`` kernel of this interpreter, in a
temporary working directory, with no chat model configured (so the notebooks take their
scripted fake path); the store, the embedding model and the search are real. The committed
notebooks must carry no outputs.
"""

from __future__ import annotations

import importlib.util
import os
import sys
import tempfile
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from tests.openai_server import ScriptedOpenAIServer, message_text

REPO = Path(__file__).resolve().parents[2]
NOTEBOOKS = REPO / "notebooks"
NAMES = sorted(p.name for p in NOTEBOOKS.glob("*.ipynb"))


def locomo_data() -> Path | None:
    """The LoCoMo file to give notebook 3: ``$AGENTMEM_LOCOMO``, else the shared dev data
    next to the repository; ``None`` when neither is there (the notebook then makes its
    own seeded synthetic conversations)."""
    named = os.environ.get("AGENTMEM_LOCOMO")
    if named:
        return Path(named)
    shared = REPO.parent / "shared" / "datasets" / "locomo" / "locomo_dev.json"
    return shared if shared.exists() else None


def in_ci() -> bool:
    """Whether the suite runs in CI (``CI=1`` / ``true`` / ``yes``, as the store fixtures do)."""
    return os.environ.get("CI", "").strip().lower() in ("1", "true", "yes")


CELL_TIMEOUT_S = 240
"""Per-cell limit; a cell that needs longer is stuck, not slow."""

PROBE = "import sys; print('kernel prefix:', sys.prefix)"


def cell_text(cell: nbformat.NotebookNode) -> str:
    """What a code cell printed or displayed as text."""
    parts = []
    for output in cell.get("outputs", []):
        if output.output_type == "stream":
            parts.append(output.text)
        elif output.output_type in ("execute_result", "display_data"):
            parts.append(output.get("data", {}).get("text/plain", "") + "\n")
        elif output.output_type == "error":
            parts.append(f"{output.ename}: {output.evalue}\n")
    return "".join(parts)


def run_notebook(
    name: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    *,
    dotenv: str | None = None,
    **env: str,
) -> tuple[nbformat.NotebookNode, str]:
    """Execute a notebook offline; returns it (with outputs) and all its text output.

    Without ``dotenv`` no chat model is configured (the notebook must take its labelled
    scripted fake path); with it, that text is the ``.env`` of the working directory.
    """
    for key in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_MODEL"):
        if dotenv is None:
            monkeypatch.setenv(key, "")  # set (empty) values win over any .env
        else:
            monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("TRANSFORMERS_OFFLINE", "1")
    # The kernel is this interpreter's, whatever kernels the user has installed elsewhere.
    monkeypatch.setenv("JUPYTER_PATH", str(Path(sys.prefix) / "share" / "jupyter"))
    monkeypatch.setenv("AGENTMEM_HOME", str(tmp_path / "outside-home"))
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    nb = nbformat.read(NOTEBOOKS / name, as_version=4)
    nb.cells.append(nbformat.v4.new_code_cell(PROBE))
    work = tmp_path / "cwd"
    work.mkdir()
    if dotenv is not None:
        (work / ".env").write_text(dotenv)
    client = NotebookClient(
        nb,
        timeout=CELL_TIMEOUT_S,
        kernel_name="python3",
        resources={"metadata": {"path": str(work)}},
    )
    client.execute()
    errors = [
        cell_text(c)
        for c in nb.cells
        if c.cell_type == "code" and any(o.output_type == "error" for o in c.outputs)
    ]
    assert not errors, errors
    text = "\n".join(cell_text(c) for c in nb.cells if c.cell_type == "code")
    assert f"kernel prefix: {sys.prefix}" in text, "the kernel is not this interpreter's"
    # The notebook wrote only under its own temporary folder, and removed it at the end:
    # nothing in the working directory, nothing in the AGENTMEM_HOME it was started with.
    folder = Path(line_with(text, "working folder: ").split(": ", 1)[1])
    assert folder.parent == Path(tempfile.gettempdir()) and not folder.exists()
    assert f"removed {folder}" in text
    assert [p.name for p in work.iterdir()] == ([] if dotenv is None else [".env"])
    assert not (tmp_path / "outside-home").exists()
    return nb, text


def line_with(text: str, start: str) -> str:
    """The first output line starting with ``start``."""
    for line in text.splitlines():
        if line.startswith(start):
            return line
    raise AssertionError(f"no output line starts with {start!r}")


# -- the committed files ---------------------------------------------------------------------
def test_the_three_notebooks_are_there() -> None:
    assert NAMES == [
        "01_langchain_memories.ipynb",
        "02_langgraph_agent.ipynb",
        "03_memory_policy.ipynb",
    ]


@pytest.mark.parametrize("name", NAMES)
def test_committed_notebooks_carry_no_outputs(name: str) -> None:
    nb = nbformat.read(NOTEBOOKS / name, as_version=4)
    nbformat.validate(nb)
    assert nb.metadata["kernelspec"]["name"] == "python3"
    for cell in nb.cells:
        if cell.cell_type == "code":
            assert cell.outputs == [] and cell.execution_count is None, cell.source[:60]


def test_committed_notebooks_match_their_generator() -> None:
    spec = importlib.util.spec_from_file_location(
        "build_notebooks", NOTEBOOKS / "build_notebooks.py"
    )
    assert spec is not None and spec.loader is not None
    generator = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(generator)
    assert sorted(generator.NOTEBOOKS) == NAMES
    for name, cells in generator.NOTEBOOKS.items():
        committed = nbformat.read(NOTEBOOKS / name, as_version=4)
        built = generator.build(cells)
        assert [(c.cell_type, c.source) for c in committed.cells] == [
            (c.cell_type, c.source) for c in built.cells
        ], f"{name} differs from notebooks/build_notebooks.py; run it to rewrite the notebook"


# -- running them ----------------------------------------------------------------------------
@pytest.mark.slow
def test_langchain_memories_notebook(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _, text = run_notebook("01_langchain_memories.ipynb", tmp_path, monkeypatch)
    assert "scripted fake model: no model configured" in text
    # Full buffer: the second prompt carries the first exchange; it survives a reopen.
    assert "the second prompt recalls 小明: True" in text
    assert "messages after reopening the store: 4" in text
    # Window of three exchanges: the name has left the fifth prompt, the store keeps all.
    assert "4th prompt holds the name Alice: True" in text
    assert "5th prompt holds the name Alice: False" in text
    assert "the chain sees 6 messages; the store keeps 10" in text
    # Long-term recall: the allergy is found for a question that shares no word with it.
    assert line_with(text, "0.").endswith("I am allergic to peanuts.")
    rag_prompt = text.split("AI: Please skip the satay")[1]
    assert "what you remember about the user:\nI am allergic to peanuts." in rag_prompt
    assert "My favourite sport is soccer" in line_with(text, "input: ")
    assert "I play the cello on Sundays." in line_with(text, "recalled: ")
    # Policy: FIFO with capacity 3 keeps the three newest, and the log says why.
    kept = line_with(text, "kept: ")
    assert "Bob moved to Porto in March." in kept and "Bob's cat" not in kept
    assert text.count("DELETE fifo  fifo: capacity 3 reached") == 2
    # Forgotten means forgotten in the log too: the text shows only where it was offered.
    assert text.count("Bob's cat is called Miso.") == 1
    assert text.count("(no text kept)") == 4  # two evicted ADDs and their DELETEs
    assert text.count("ADD    fifo  fifo: keep the newest 3") == 5


@pytest.mark.slow
def test_notebook_talks_to_the_model_named_in_dotenv(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with ScriptedOpenAIServer(default="Noted.") as server:
        dotenv = f"OPENAI_BASE_URL={server.url}\nOPENAI_MODEL=scripted-server\n"
        _, text = run_notebook("01_langchain_memories.ipynb", tmp_path, monkeypatch, dotenv=dotenv)
        requests = list(server.requests)
    assert "configured model: scripted-server" in text
    assert "scripted fake model" not in text
    assert requests and all(r["model"] == "scripted-server" for r in requests)
    # The real client sent the remembered first exchange with the second question.
    second = " ".join(message_text(m) for m in requests[1]["messages"])
    assert "你好，我叫小明" in second and "我刚才说我叫什么名字？" in second
    assert "the second prompt recalls 小明: True" in text


@pytest.mark.slow
def test_langgraph_agent_notebook(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _, text = run_notebook("02_langgraph_agent.ipynb", tmp_path, monkeypatch)
    assert "scripted fake model: no model configured" in text
    tuesday = text.split("[maya / tuesday] Human:")[1].split("[maya / tuesday] AI:")[0]
    assert "recalled" in tuesday and "vegetarian" in tuesday
    # Its checkpoint holds references to what was recalled, not the texts.
    refs = line_with(text, "tuesday's checkpoint, recalled:")
    assert "'id': " in refs and "'score': " in refs
    assert "vegetarian" not in refs and "Porto" not in refs
    assert "memories recalled for leo: 0" in text
    # After closing and reopening both files, a new thread recalls the user ...
    wednesday = text.split("[maya / wednesday] Human:")[1].split("[maya / wednesday] AI:")[0]
    assert "I'm Maya" in wednesday and "Porto" in wednesday
    # ... the old thread continues from its checkpoint, and another process sees the store.
    monday = text.split("monday's checkpoint after the restart:")[1]
    assert "human: I'm training for a half marathon in October." in monday
    assert "another process recalls: Hi, I'm Maya. I'm vegetarian and I live in Porto." in text
    # The middleware put Maya's memories into the create_agent system prompt.
    system = text.split("system prompt the model saw:")[1].split("AI:")[0]
    assert "You are a running coach." in system and "half marathon" in system
    assert "ADD    keep_all" in text


@pytest.mark.slow
def test_memory_policy_notebook(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    data = locomo_data()
    if data is None or not data.exists():
        message = f"no LoCoMo data (AGENTMEM_LOCOMO={os.environ.get('AGENTMEM_LOCOMO')!r})"
        if in_ci():
            pytest.fail(message + "; CI must run notebook 3 on LoCoMo", pytrace=False)
        pytest.skip(message + "; the synthetic path is tested on its own")
    nb, text = run_notebook(
        "03_memory_policy.ipynb", tmp_path, monkeypatch, AGENTMEM_LOCOMO=str(data)
    )
    assert f"data: LoCoMo-format file {data}" in text
    images = [
        o
        for c in nb.cells
        if c.cell_type == "code"
        for o in c.outputs
        if "image/png" in o.get("data", {})
    ]
    assert len(images) == 2, "expected the learning curve and the recall-vs-budget plot"
    assert line_with(text, "conversations: ").startswith("conversations: 6 (3435 turns")
    assert "learning curve points: 7" in text
    # At a 10% budget every policy is scored; none beats the oracle, and choosing what to
    # keep by content beats keeping the newest turns.
    recall = {
        line[len("budget 0.1  ") :].rsplit(" recall@10 ", 1)[0].strip(): float(line.split()[-1])
        for line in text.splitlines()
        if line.startswith("budget 0.1  ")
    }
    assert set(recall) == {
        "fifo",
        "random",
        "importance",
        "novelty",
        "learned (this notebook)",
        "learned (shipped, saw this conversation)",
        "oracle (knows the evidence)",
    }
    oracle = recall.pop("oracle (knows the evidence)")
    assert all(0.0 <= r <= oracle for r in recall.values()), recall
    assert recall["importance"] > recall["fifo"]
    # The trained network, saved and loaded as an AgentMemory policy, keeps 3 of 5 items.
    assert text.count("ADD    learned:") == 5 and text.count("DELETE learned: capacity 3") == 2
    kept = text.split("kept:\n")[-1].split("\n\n")[0].splitlines()
    assert len(kept) == 3


@pytest.mark.slow
def test_memory_policy_notebook_on_a_fresh_clone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without ``AGENTMEM_LOCOMO`` the notebook runs on seeded synthetic data and says so."""
    monkeypatch.delenv("AGENTMEM_LOCOMO", raising=False)
    nb, text = run_notebook("03_memory_policy.ipynb", tmp_path, monkeypatch)
    assert "data: AGENTMEM_LOCOMO is unset, so these are 4 seeded synthetic conversations" in text
    assert line_with(text, "conversations: ").startswith("conversations: 4 (600 turns")
    images = [
        o
        for c in nb.cells
        if c.cell_type == "code"
        for o in c.outputs
        if "image/png" in o.get("data", {})
    ]
    assert len(images) == 2
    recall = {
        line[len("budget 0.1  ") :].rsplit(" recall@10 ", 1)[0].strip(): float(line.split()[-1])
        for line in text.splitlines()
        if line.startswith("budget 0.1  ")
    }
    oracle = recall.pop("oracle (knows the evidence)")
    assert recall and all(0.0 <= r <= oracle for r in recall.values()), recall
    assert text.count("ADD    learned:") == 5
