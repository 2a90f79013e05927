"""A chat model annotates stored statements off the write path: what each is about, and
which earlier statement of its speaker it makes out of date.

The model here is scripted (what it answers is given per statement): these tests check the
machinery, what is stored, searched, logged, exported and erased; what a real small model
answers is measured in ``benchmarks/annotations.py``.
"""

from __future__ import annotations

import asyncio
import io
import json
import logging
import threading
import time
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from pydantic import Field

from langchain_agentmem import AgentMemory, InvalidInputError, InvalidTypeError, OpKind
from langchain_agentmem.annotation.annotations import ANNOTATION, current_annotation
from langchain_agentmem.annotation.annotator import AnnotationWait
from langchain_agentmem.integrations.prompt import format_memories
from langchain_agentmem.integrations.recall import recall
from tests.openai_server import facts_judge, judged_pair

T0 = datetime(2026, 12, 1, tzinfo=timezone.utc)

LYON = "Hi, I'm Priya. I live in Lyon and I'm vegetarian."
MOREAU = "My dentist is Dr. Moreau."
PORTO = "I moved to Porto last month."
LINDQVIST = "My new dentist is Dr. Lindqvist."

ANSWERS = {
    LYON: {"about": ["home city", "diet"], "facts": {"home city": "Lyon", "diet": "vegetarian"}},
    MOREAU: {"about": ["doctor", "dentist"], "facts": {"dentist": "Dr. Moreau"}},
    PORTO: {"about": ["home city", "location"], "facts": {"home city": "Porto"}},
    LINDQVIST: {"about": ["doctor", "dentist"], "facts": {"dentist": "Dr. Lindqvist"}},
}


class ScriptedModel(BaseChatModel):
    """Answers each statement as ``answers`` says (the last message's text), and each
    judging request by ``judge`` (default: one attribute, two values); can fail, be held,
    or answer with words no annotation can be read from."""

    answers: dict[str, Any] = Field(default_factory=dict)
    judge: Any = None
    """``(earlier, later) -> bool`` (``None``: :func:`facts_judge` of ``answers``)."""
    judged: list[tuple[str, str]] = Field(default_factory=list)
    fail: bool = False
    garble: bool = False
    gate: Any = None
    """A ``threading.Event`` each call waits for (``None``: answer at once)."""
    asked: list[str] = Field(default_factory=list)

    @property
    def _llm_type(self) -> str:
        return "scripted"

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        text = str(messages[-1].content)
        self.asked.append(text)
        if self.gate is not None:
            self.gate.wait(30)
        if self.fail:
            raise ConnectionError("the model server is down")
        pair = judged_pair(text)
        if pair is not None:
            self.judged.append(pair)
            judge = self.judge or facts_judge(self.answers)
            answer = json.dumps({"replaced": judge(*pair)})
        else:
            answer = json.dumps(self.answers[text])
        if self.garble:
            answer = "I'd say it is about life."
        return ChatResult(generations=[ChatGeneration(message=AIMessage(answer))])


def _model(**kwargs: Any) -> ScriptedModel:
    return ScriptedModel(answers=ANSWERS, asked=[], **kwargs)


def _tell(memory: AgentMemory, texts: list[str], start: int = 0) -> list[str]:
    ids = []
    for i, text in enumerate(texts, start):
        (op,) = memory.add(
            text,
            namespace="priya",
            thread=f"t{i // 2}",
            metadata={"role": "human"},
            timestamp=T0 + timedelta(days=i),
        )
        ids.append(op.record_ids[0])
    return ids


@pytest.fixture
def memory(tmp_path: Path) -> Iterator[AgentMemory]:
    with AgentMemory(f"sqlite:///{tmp_path / 'm.db'}", model=_model()) as m:
        yield m


def test_the_current_fact_comes_first_once_annotated(memory: AgentMemory) -> None:
    lyon, moreau, porto, lindqvist = _tell(memory, [LYON, MOREAU, PORTO, LINDQVIST])
    memory.add("Where do I live?", namespace="priya", thread="t3", metadata={"role": "human"})
    assert memory.wait_annotated(timeout=30)
    home = memory.get(porto, namespace="priya").metadata[ANNOTATION]
    assert home["about"] == ["home city", "location"]
    assert home["replaces"] == [{"id": lyon, "why": "home city: now Porto"}]
    assert memory.get(lyon, namespace="priya").text == LYON  # the words stay the user's
    found = memory.search("Where do I live?", namespace="priya", k=3)
    assert found[0].text == PORTO
    assert [r.text for r in found].index(LYON) > 0
    assert memory.search("Who is my dentist?", namespace="priya", k=2)[0].id == lindqvist
    before = [r.id for r in memory.search("Who was my dentist before?", namespace="priya", k=3)]
    assert moreau in before
    logged = [d for d in memory.decisions("priya") if d.policy == "annotator"]
    assert len(logged) == 4 and all(d.kind is OpKind.UPDATE for d in logged)
    assert any(f"it replaces {moreau} (dentist: now Dr. Lindqvist)" in d.reason for d in logged)


def test_forgetting_a_replaced_statement_leaves_no_word_of_it_in_links(
    memory: AgentMemory,
) -> None:
    lyon, _, porto, _ = _tell(memory, [LYON, MOREAU, PORTO, LINDQVIST])
    assert memory.wait_annotated(timeout=30)
    assert memory.get(porto, namespace="priya").metadata[ANNOTATION]["replaces"]
    memory.delete(lyon, namespace="priya")
    note = memory.get(porto, namespace="priya").metadata[ANNOTATION]
    assert "replaces" not in note  # the only link named the forgotten record
    said = " ".join(
        f"{d.reason} {d.text or ''}" for d in memory.decisions("priya") if lyon in d.record_ids
    )
    everything = str([(d.reason, d.text) for d in memory.decisions("priya")])
    assert "Lyon" not in everything and "Lyon" not in said
    out = io.StringIO()
    memory.export_namespace("priya", out)
    assert "Lyon" not in out.getvalue()


def test_a_link_written_before_keeps_no_word_of_a_record_forgotten(memory: AgentMemory) -> None:
    """Links and log reasons of an older release held the earlier value."""
    memory.add("My bank PIN is 4711.", namespace="priya", record_id="old")
    note = {"about": ["bank pin"], "facts": {}, "by": "m", "of": "x",
            "replaces": [{"id": "old", "why": "bank pin: 4711 -> 9999"}]}  # fmt: skip
    memory.add("My bank PIN is now 9999.", namespace="priya", record_id="new",
               metadata={ANNOTATION: note})  # fmt: skip
    memory.update("old", "My bank PIN is secret.", namespace="priya")
    link = memory.get("new", namespace="priya").metadata[ANNOTATION]["replaces"]
    assert link == [{"id": "old", "why": "bank pin"}]  # its text changed: the words go
    memory.delete("old", namespace="priya")
    assert "replaces" not in memory.get("new", namespace="priya").metadata[ANNOTATION]
    assert "4711" not in str(memory.records("priya"))


def test_questions_and_small_talk_are_not_sent(memory: AgentMemory) -> None:
    memory.add("Where do I live?", namespace="priya", metadata={"role": "human"})
    memory.add("haha ok", namespace="priya", metadata={"role": "human"})
    memory.add("Lyon is lovely in spring, you should visit.", namespace="priya",
               metadata={"role": "ai"})  # fmt: skip
    assert memory.wait_annotated(timeout=10)
    model = memory.annotator.model if memory.annotator else None
    assert isinstance(model, ScriptedModel) and model.asked == []


def test_a_write_returns_before_the_model_answers(tmp_path: Path) -> None:
    gate = threading.Event()
    with AgentMemory(f"sqlite:///{tmp_path / 'm.db'}", model=_model(gate=gate)) as memory:
        (lyon,) = _tell(memory, [LYON])
        assert memory.search("Lyon", namespace="priya", k=1)[0].id == lyon  # searchable now
        assert ANNOTATION not in memory.get(lyon, namespace="priya").metadata
        waited = memory.wait_annotated(timeout=0.2)
        assert not waited and waited.left == 1 and waited.given_up == ()
        gate.set()
        assert memory.wait_annotated(timeout=30)
        assert ANNOTATION in memory.get(lyon, namespace="priya").metadata


def test_a_failing_model_fails_no_write_and_is_logged_once(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("langchain_agentmem.annotation.annotator.RETRY_WAITS", (0.05, 0.05))
    for broken in (_model(fail=True), _model(garble=True)):
        caplog.clear()
        with (
            caplog.at_level(logging.WARNING, "langchain_agentmem.annotation.annotator"),
            AgentMemory(f"sqlite:///{tmp_path / 'm.db'}", model=broken) as memory,
        ):
            ids = _tell(memory, [LYON])
            waited = memory.wait_annotated(timeout=30)
            assert waited and waited.left == 0  # nothing left to wait for ...
            assert waited.given_up == (("priya", ids[0]),)  # ... and what was given up on
            assert memory.annotator is not None and memory.annotator.failures == 3
            assert ANNOTATION not in memory.get(ids[0], namespace="priya").metadata
            warned = [r for r in caplog.records if "could not annotate" in r.getMessage()]
            assert len(warned) == 1
            memory.delete_namespace("priya")
            assert memory.wait_annotated(timeout=30).given_up == ()  # erased: not told again


def test_a_restart_resumes_what_was_left(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'm.db'}"
    gate = threading.Event()
    held = _model(gate=gate)
    memory = AgentMemory(url, model=held)
    lyon, porto = _tell(memory, [LYON, PORTO])
    gate.set()  # let the held call finish, then close before the rest is done
    memory.close()
    with AgentMemory(url, model=_model()) as again:
        again.search("home", namespace="priya")  # loads the namespace: waiting work found
        assert again.wait_annotated(timeout=30)
        for record in again.records("priya"):
            assert current_annotation(record.metadata, record.text), record.text
        note = again.get(porto, namespace="priya").metadata[ANNOTATION]
        assert note["replaces"][0]["id"] == lyon


def test_a_memory_closed_mid_call_lets_another_take_the_statement(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'm.db'}"
    gate = threading.Event()  # never set while the first memory is open: its call hangs
    try:
        memory = AgentMemory(url, model=_model(gate=gate))
        (lyon,) = _tell(memory, [LYON])
        waited = memory.wait_annotated(timeout=0.5)  # the call is out, the record claimed
        assert not waited and waited.left == 1
        memory.close()
        with AgentMemory(url, model=_model()) as again:
            again.search("home", namespace="priya")  # loads it: the claim was let go on close
            assert again.wait_annotated(timeout=10)
            assert ANNOTATION in again.get(lyon, namespace="priya").metadata
    finally:
        gate.set()


def test_annotations_travel_with_export_and_go_with_erasure(
    memory: AgentMemory, tmp_path: Path
) -> None:
    _tell(memory, [LYON, PORTO])
    assert memory.wait_annotated(timeout=30)
    out = tmp_path / "priya.jsonl"
    memory.export_namespace("priya", out)
    assert '"home city"' in out.read_text()
    memory.delete_namespace("priya")
    assert memory.records("priya") == []
    with AgentMemory(":memory:") as other:  # no model: the imported links still rank
        other.import_namespace(out, namespace="priya")
        assert other.search("Where do I live?", namespace="priya", k=1)[0].text == PORTO


def test_an_edited_statement_is_annotated_again(memory: AgentMemory) -> None:
    (lyon,) = _tell(memory, [LYON])
    assert memory.wait_annotated(timeout=30)
    memory.update(lyon, MOREAU, namespace="priya")
    assert memory.wait_annotated(timeout=30)
    note = memory.get(lyon, namespace="priya").metadata[ANNOTATION]
    assert note["about"] == ["doctor", "dentist"]


def test_the_model_argument_is_checked() -> None:
    with pytest.raises(InvalidTypeError, match="model must be a LangChain chat model"):
        AgentMemory(":memory:", model="gpt-4o")  # type: ignore[arg-type]
    with pytest.raises(InvalidInputError, match="model_calls_per_minute must be a number > 0"):
        AgentMemory(":memory:", model=_model(), model_calls_per_minute=0)
    waited = AgentMemory(":memory:").wait_annotated(timeout=0)
    assert waited and waited == AnnotationWait(left=0, given_up=())


def test_a_prompt_about_now_shows_the_current_fact_alone(memory: AgentMemory) -> None:
    lyon, _, porto, _ = _tell(memory, [LYON, MOREAU, PORTO, LINDQVIST])
    assert memory.wait_annotated(timeout=30)
    now = [r.id for r in recall(memory, "Where do I live?", namespace="priya", k=3)]
    assert now[0] == porto and lyon not in now
    then = recall(memory, "Where did I live before?", namespace="priya", k=4)
    assert lyon in [r.id for r in then]
    block = format_memories(then)
    assert "(since replaced): \"Hi, I'm Priya." in block
    assert memory.search("Where do I live?", namespace="priya", k=4)[1].id == lyon  # kept


def test_a_link_is_made_only_when_the_model_judges_it(tmp_path: Path) -> None:
    never = _model(judge=lambda earlier, later: False)
    with AgentMemory(f"sqlite:///{tmp_path / 'm.db'}", model=never) as memory:
        _tell(memory, [LYON])
        assert memory.wait_annotated(timeout=30)
        assert never.judged == []  # nothing earlier: no judging call
        (porto,) = _tell(memory, [PORTO], start=1)
        assert memory.wait_annotated(timeout=30)
        assert never.judged == [(LYON, PORTO)]  # one attribute, two values: asked, said no
        assert "replaces" not in memory.get(porto, namespace="priya").metadata[ANNOTATION]


TORONTO = "We rent a small flat in Toronto, near the lake."
KRAKOW = "Big news: we moved into a flat in Krakow last week!"
PETS = [f"My {pet} sleeps on the sofa all day." for pet in ("cat", "dog", "rabbit", "parrot")]
KITCHEN = "Our flat in Toronto has a tiny kitchen, so we cook simple meals."


def test_the_model_judges_a_change_its_facts_do_not_name(tmp_path: Path) -> None:
    answers = {
        TORONTO: {"about": ["housing"], "facts": {"flat": "small flat"}},
        KRAKOW: {"about": ["housing", "news"], "facts": {"news": "Krakow"}},
        KITCHEN: {"about": ["cooking", "kitchen"], "facts": {}},
        **{pet: {"about": ["pet"], "facts": {}} for pet in PETS},
    }
    model = ScriptedModel(answers=answers, judge=lambda earlier, later: earlier == TORONTO)
    with AgentMemory(f"sqlite:///{tmp_path / 'm.db'}", model=model) as memory:
        toronto, *_ = _tell(memory, [TORONTO, KITCHEN, *PETS])
        (krakow,) = _tell(memory, [KRAKOW], start=len(PETS) + 2)
        assert memory.wait_annotated(timeout=30)
        asked = [earlier for earlier, later in model.judged if later == KRAKOW]
        # The closest in meaning that shares a label: the kitchen line is as close, but about
        # something else, so the model is not asked about it.
        assert asked == [TORONTO]
        note = memory.get(krakow, namespace="priya").metadata[ANNOTATION]
        assert note["replaces"] == [
            {"id": toronto, "why": "news / housing: the model judged it replaced"}
        ]
        last = [d for d in memory.decisions("priya") if d.record_ids == (krakow,)][-1]
        assert f"it replaces {toronto}" in last.reason


BUS = "The bus pass arrived today, no more arriving soaked."
LATE = "Work was busy today, I stayed late at the office again."
COMMUTE = "How do I get to work these days?"


def test_the_model_may_label_the_query(tmp_path: Path) -> None:
    answers = {
        BUS: {"about": ["commute", "transport"], "facts": {}},
        LATE: {"about": ["job", "office"], "facts": {}},
        COMMUTE: {"about": ["commute"]},
    }
    scores = {}
    for label_queries in (False, True):
        model = ScriptedModel(answers=answers, judge=lambda earlier, later: False)
        url = f"sqlite:///{tmp_path / f'{label_queries}.db'}"
        with AgentMemory(url, model=model, label_queries=label_queries) as memory:
            _tell(memory, [BUS, LATE])
            assert memory.wait_annotated(timeout=30)
            for _ in range(2):
                found = memory.search(COMMUTE, namespace="priya", k=2)
            scores[label_queries] = {r.text: r.score for r in found}
            assert model.asked.count(COMMUTE) == int(label_queries)  # once a query, if at all
    assert scores[True][BUS] > scores[False][BUS]  # "commute" named by the model alone
    assert scores[True][LATE] == pytest.approx(scores[False][LATE])


def test_a_failing_query_label_call_only_logs(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with AgentMemory(f"sqlite:///{tmp_path / 'm.db'}", model=_model()) as memory:
        _tell(memory, [LYON, PORTO])
        assert memory.wait_annotated(timeout=30)
    broken = _model(fail=True)
    with (
        caplog.at_level(logging.WARNING, "langchain_agentmem.annotation.annotator"),
        AgentMemory(f"sqlite:///{tmp_path / 'm.db'}", model=broken, label_queries=True) as again,
    ):
        for _ in range(2):
            assert again.search("Where do I live?", namespace="priya", k=1)[0].text == PORTO
    assert len([r for r in caplog.records if "what a query is about" in r.getMessage()]) == 1
    with pytest.raises(InvalidInputError, match="True only with a model="):
        AgentMemory(":memory:", label_queries=True)


def test_a_turn_can_pause_annotation(tmp_path: Path) -> None:
    gate = threading.Event()
    model = _model(gate=gate)
    with AgentMemory(f"sqlite:///{tmp_path / 'm.db'}", model=model) as memory:
        _tell(memory, [LYON])
        deadline = time.monotonic() + 30
        while LYON not in model.asked and time.monotonic() < deadline:
            time.sleep(0.01)  # the call for LYON is in flight, held by the gate
        entered, leave = threading.Event(), threading.Event()

        def turn() -> None:
            with memory.annotation_paused():
                entered.set()
                leave.wait(30)

        threading.Thread(target=turn, daemon=True).start()
        assert not entered.wait(0.3)  # a turn waits for the call in flight to end
        gate.set()
        assert entered.wait(30)
        _tell(memory, [PORTO], start=1)
        waited = memory.wait_annotated(timeout=0.3)
        assert not waited and waited.left == 1
        assert PORTO not in model.asked  # nothing is sent during the turn
        leave.set()
        assert memory.wait_annotated(timeout=30)
        assert model.asked.count(PORTO) == 1
    with AgentMemory(":memory:") as bare, bare.annotation_paused():
        pass  # no model: nothing to pause


def test_an_async_turn_can_pause_annotation(tmp_path: Path) -> None:
    model = _model()

    async def turn(memory: AgentMemory) -> None:
        async with memory.aannotation_paused():
            _tell(memory, [LYON])
            waited = await memory.await_annotated(timeout=0.3)
            assert not waited and waited.left == 1
            assert model.asked == []
        assert await memory.await_annotated(timeout=30)

    with AgentMemory(f"sqlite:///{tmp_path / 'm.db'}", model=model) as memory:
        asyncio.run(turn(memory))
    assert model.asked == [LYON]


def test_imported_statements_are_annotated_like_any_write(
    memory: AgentMemory, tmp_path: Path
) -> None:
    with AgentMemory(":memory:") as plain:  # no model: the export carries no annotation
        _tell(plain, [LYON, PORTO])
        out = tmp_path / "priya.jsonl"
        plain.export_namespace("priya", out)
    _tell(memory, [MOREAU], start=5)  # the namespace is cached here already
    assert memory.wait_annotated(timeout=30)
    summary = memory.import_namespace(out, namespace="priya")
    assert summary.records == 2
    assert memory.wait_annotated(timeout=30)
    notes = {r.text: r.metadata.get(ANNOTATION) for r in memory.records("priya")}
    assert notes[LYON]["about"] == ["home city", "diet"]
    assert notes[PORTO]["facts"] == {"home city": "Porto"}
    # ... and indexed here at once: the imported statement is what the search finds.
    assert memory.search("Where do I live?", namespace="priya", k=1)[0].text == PORTO


def test_forgotten_words_are_nowhere_in_the_files(tmp_path: Path) -> None:
    """A record written each way the package writes (add, batch, put, import, a model's
    annotation and its links, a reply's copy), then forgotten: its words are in neither the
    database file, its write-ahead log, nor the saved index files."""
    from langchain_core.messages import AIMessage as Reply
    from langchain_core.messages import HumanMessage

    from langchain_agentmem import BufferChatMessageHistory

    secrets = ["4417ALPHA", "9902BRAVO", "5531CHARLIE", "7788DELTA", "Lyon", "6640ECHO"]
    path = tmp_path / "m.db"
    source = AgentMemory(f"sqlite:///{tmp_path / 'src.db'}")
    source.add("My safe code is 7788DELTA.", namespace="x", record_id="safe")
    export = io.StringIO()
    source.export_namespace("x", export)
    source.close()
    codes = {
        text: {"about": ["code"], "facts": {}}
        for text in (
            "My locker code is 4417ALPHA.",
            "My bike lock is 9902BRAVO.",
            "My gym PIN is 5531CHARLIE.",
            "My safe code is 7788DELTA.",
            "Can you keep my code 6640ECHO?",
        )
    }
    model = ScriptedModel(answers={**ANSWERS, **codes}, asked=[])
    with AgentMemory(f"sqlite:///{path}", model=model) as memory:
        (added,) = memory.add("My locker code is 4417ALPHA.", namespace="priya")
        ((batched,),) = memory.add_many(["My bike lock is 9902BRAVO."], namespace="priya")
        memory.put("pin", "My gym PIN is 5531CHARLIE.", namespace="priya")
        memory.import_namespace(io.StringIO(export.getvalue()), namespace="priya")
        lyon, porto = _tell(memory, [LYON, PORTO])
        history = BufferChatMessageHistory(
            memory, namespace="priya", thread="chat", remember=True, remember_roles=("human", "ai")
        )
        history.add_messages([HumanMessage("Can you keep my code 6640ECHO?"), Reply("No.")])
        assert memory.wait_annotated(timeout=30)
        assert memory.get(porto, namespace="priya").metadata[ANNOTATION]["replaces"]
        memory.search("code", namespace="priya", k=3)  # the view is open: close() saves it
        said = next(r for r in memory.records("priya") if "6640ECHO" in r.text)
        for record_id in (added.record_ids[0], batched.record_ids[0], "pin", "safe", lyon):
            memory.delete(record_id, namespace="priya")
        memory.delete(said.id, namespace="priya")
        memory.clear_messages(namespace="priya", thread="chat")  # its short-term copy
        left = {r.text for r in memory.records("priya")}
        assert left == {PORTO, "No."}
    files = [p for p in tmp_path.rglob("*") if p.is_file() and "src.db" not in p.name]
    assert any(p.suffix == ".faiss" for p in files)  # the saved index is among them
    found = {s: [p.name for p in files if s.encode() in p.read_bytes()] for s in secrets}
    assert found == {s: [] for s in secrets}
