"""What a chat model notes about a stored statement, and what follows from it (pure).

The model never rewrites what was said: a record keeps its text, and its metadata gains an
``annotation`` (:data:`ANNOTATION`): a few short labels of what the statement gives facts
about (``about``), the facts themselves as attribute -> value (``facts``), and the ids of
earlier statements of the same speaker it makes out of date (``replaces``, with a reason
each). Prompts, parsing and matching live here; the calls are made by
:mod:`langchain_agentmem.annotation.annotator`.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from langchain_agentmem.text.replies import MEMORY_SHAPE, only_asks
from langchain_agentmem.text.words import STOP_WORDS

ANNOTATION = "annotation"
"""Metadata key of a record's annotation."""

ANNOTATOR = "annotator"
"""Policy name logged for a model's annotation of a record."""

MAX_LABELS = 4
"""Most labels kept of one answer."""
MAX_FACTS = 4
"""Most facts kept of one answer."""
MAX_PART_CHARS = 60
"""Longest label, attribute or value kept (a longer one is cut at a word)."""

SYSTEM = (
    "You annotate one statement a person made about their life. Answer with one JSON "
    'object: "about": 1 to 3 short lowercase labels of what the statement gives facts '
    'about; "facts": an object mapping each attribute of the person the statement sets '
    "to its value now. No other text."
)
"""The instruction of a labelling request."""

EXAMPLES: tuple[tuple[str, dict[str, Any]], ...] = (
    (
        "I live in Lyon and I'm vegetarian.",
        {"about": ["home city", "diet"], "facts": {"home city": "Lyon", "diet": "vegetarian"}},
    ),
    (
        "Started at Deloitte on Monday.",
        {"about": ["job", "employer"], "facts": {"employer": "Deloitte"}},
    ),
    (
        "We adopted a rescue greyhound called Bolt.",
        {"about": ["pet", "dog"], "facts": {"pet": "greyhound called Bolt"}},
    ),
)
"""The worked examples shown before each statement (a small model needs them)."""

SAME_ATTRIBUTE = 0.8
"""Least cosine between two attribute names ("home city", "city of residence") for a
model's facts to be of one attribute (measured in ``benchmarks/results/annotations.txt``)."""

MIN_WORDS = 3
"""Fewest words of a statement worth annotating ("ok thanks" is not)."""

_SMALL_TALK = re.compile(
    r"^\W*(hi|hey|hello|thanks|thank you|ok|okay|cool|great|nice|lol|haha|bye|good night|"
    r"sounds good|see you)\b",
    re.IGNORECASE,
)


def worth_annotating(text: str, metadata: Mapping[str, Any] | None) -> bool:
    """Whether a stored record is a statement worth a model call: said by a person (not an
    assistant or tool), stating something (not only asking), not small talk, and not
    annotated already."""
    return not current_annotation(metadata, text) and is_statement(text, metadata)


def is_statement(text: str, metadata: Mapping[str, Any] | None) -> bool:
    """Whether a record states something of a person: said by a person (not an assistant
    or tool), not only asking, not small talk, not shaped like a memory line."""
    meta = metadata or {}
    role = meta.get("role")
    if isinstance(role, str) and role.lower() in ("ai", "assistant", "tool", "system"):
        return False
    if meta.get("source") == "assistant":
        return False
    words = text.split()
    if len(words) < MIN_WORDS or only_asks(text) or MEMORY_SHAPE.search(text):
        return False
    return not (_SMALL_TALK.match(text) and len(words) < 2 * MIN_WORDS)


def _few_shot(
    system: str, examples: Iterable[tuple[str, object]], asked: str
) -> list[dict[str, str]]:
    """Chat messages (OpenAI roles): an instruction, worked examples (each asked, then
    answered as JSON), and what is asked now."""
    messages = [{"role": "system", "content": system}]
    for said, answer in examples:
        messages.append({"role": "user", "content": said})
        messages.append({"role": "assistant", "content": json.dumps(answer)})
    messages.append({"role": "user", "content": asked})
    return messages


def request(text: str) -> list[dict[str, str]]:
    """The chat messages of the labelling request for ``text`` (OpenAI roles)."""
    return _few_shot(SYSTEM, EXAMPLES, text)


QUERY_SYSTEM = (
    "You label one question a person asks about themselves or someone. Answer with one JSON "
    'object: "about": 1 to 3 short lowercase labels of what the question asks about. No '
    "other text."
)
"""The instruction of a query's labelling request (``AgentMemory(label_queries=True)``)."""

QUERY_EXAMPLES: tuple[tuple[str, dict[str, Any]], ...] = (
    ("Where do I live?", {"about": ["home city", "address"]}),
    ("What phone do I use?", {"about": ["phone", "device"]}),
    ("Who is my dentist?", {"about": ["dentist", "doctor"]}),
)
"""The worked examples of a query's labelling request."""


def query_request(query: str) -> list[dict[str, str]]:
    """The chat messages asking what ``query`` is about (OpenAI roles)."""
    return _few_shot(QUERY_SYSTEM, QUERY_EXAMPLES, query)


def parse_query_labels(answer: str) -> tuple[str, ...]:
    """The labels of a query's labelling answer (none when it holds none)."""
    data = _json_object(answer or "")
    return _labels(data.get("about") if data is not None else None)[:MAX_LABELS]


def _labels(raw: object) -> tuple[str, ...]:
    """The cleaned, distinct labels of an answer's ``about`` (a list, or one label)."""
    found = raw if isinstance(raw, list) else [raw]
    return tuple(dict.fromkeys(a for a in (_clean(x).lower() for x in found) if a))


JUDGE_SYSTEM = (
    "A person made two statements, an earlier one and a later one. Answer with one JSON "
    'object: {"replaced": true} when the later statement gives a new value for the same '
    'fact about the person, so the earlier one is no longer true; {"replaced": false} when '
    "both can be true now. No other text."
)
"""The instruction of a judging request (one earlier statement, one later)."""

JUDGE_EXAMPLES: tuple[tuple[str, str, bool], ...] = (
    ("I live in Lyon and I'm vegetarian.", "I moved to Porto last month.", True),
    ("I go climbing on Saturdays.", "I've been learning the cello this winter.", False),
    ("My dentist is Dr. Moreau.", "Registered with Dr. Lindqvist round the corner.", True),
    ("Let's get lunch sometime soon.", "We should go to the coast when it's sunny.", False),
)
"""The worked examples of a judging request: two changes, two statements that both hold."""


def judge_request(earlier: str, later: str) -> list[dict[str, str]]:
    """The chat messages asking whether ``later`` makes ``earlier`` out of date (one pair a
    request)."""
    examples = [(_pair(old, new), {"replaced": verdict}) for old, new, verdict in JUDGE_EXAMPLES]
    return _few_shot(JUDGE_SYSTEM, examples, _pair(earlier, later))


def _pair(earlier: str, later: str) -> str:
    quoted = [json.dumps(text, ensure_ascii=False) for text in (earlier, later)]
    return f"Earlier: {quoted[0]}\nLater: {quoted[1]}"


def parse_judgement(answer: str) -> bool | None:
    """The verdict of a judging answer: whether the later statement replaces the earlier;
    ``None`` when the answer says neither."""
    data = _json_object(answer or "")
    verdict = data.get("replaced") if data is not None else None
    if isinstance(verdict, bool):
        return verdict
    if isinstance(verdict, str) and verdict.strip().lower() in ("true", "false"):
        return verdict.strip().lower() == "true"
    return None


@dataclass(frozen=True)
class Notes:
    """What the model said of one statement, cleaned."""

    about: tuple[str, ...]
    facts: dict[str, str] = field(default_factory=dict)


_JSON_START = re.compile(r"\{")
_CLOSERS = ("", "}", "}}", "]}", '"}}', '"]}')
"""What a small model's answer may lack at its end (it often stops before the last brace)."""


def _json_object(answer: str) -> dict[str, Any] | None:
    """The first JSON object of ``answer``, its missing closing brackets restored."""
    start = _JSON_START.search(answer)
    if start is None:
        return None
    text = answer[start.start() :].strip()
    end = text.rfind("}")
    candidates = [text[: end + 1]] if end >= 0 else []
    candidates += [text + closer for closer in _CLOSERS]
    for candidate in candidates:
        try:
            data = json.loads(candidate)
        except json.JSONDecodeError:
            continue
        if isinstance(data, dict):
            return data
    return None


def _clean(value: object) -> str:
    """A label, attribute or value: one line, lowercase, trimmed, at most
    :data:`MAX_PART_CHARS` (cut at a word); ``""`` when it holds no letter or digit."""
    if isinstance(value, bool) or value is None:
        return ""
    text = " ".join(str(value).split()).strip(" .,;:!?\"'")
    if len(text) > MAX_PART_CHARS:
        text = text[:MAX_PART_CHARS].rsplit(" ", 1)[0]
    return text if any(c.isalnum() for c in text) else ""


def parse(answer: str, text: str) -> Notes | None:
    """The labels and facts of a model's answer, or ``None`` when it holds no usable JSON
    object (a small model sometimes adds text around it, or stops before its last brace).

    A fact of the statement ``text`` is kept when its value is short (at most
    :data:`MAX_VALUE_WORDS` words) and names some of what the statement says, not all of
    it (:func:`grounded`): a value the model made up, or a reaction ("friend": "great to
    hear!"), sets no attribute.
    """
    data = _json_object(answer or "")
    if data is None:
        return None
    about = _labels(data.get("about"))
    facts: dict[str, str] = {}
    raw_facts = data.get("facts")
    if isinstance(raw_facts, dict):
        for key, value in raw_facts.items():
            name, said = _clean(key).lower(), _clean(value)
            if name and said and len(facts) < MAX_FACTS and grounded(said, text):
                facts[name] = said
    if not about and not facts:
        return None
    return Notes(about[:MAX_LABELS], facts)


MAX_VALUE_WORDS = 6
"""Most words of a fact's value ("greyhound called Bolt", "Dr. Lindqvist")."""


def grounded(value: str, text: str) -> bool:
    """Whether ``value`` is a part of what ``text`` says: short, every content word of it
    said in ``text``, and not two thirds or more of the text's content words (then it is
    the statement itself, a reaction, not a value)."""
    if len(value.split()) > MAX_VALUE_WORDS:
        return False
    said, told = set(_key(value).split()), set(_key(text).split())
    return bool(said) and said <= told and 3 * len(said) < 2 * len(told)


def label_words(labels: Iterable[str]) -> str:
    """The labels as words for the lexical index (stop words left to the tokenizer)."""
    return " ".join(labels)


def _key(text: str) -> str:
    return " ".join(w for w in re.findall(r"[a-z0-9]+", text.lower()) if w not in STOP_WORDS)


def same_value(a: str, b: str) -> bool:
    """Whether two values say the same ("Dr. Lindqvist" and "Lindqvist", "Porto" and
    "porto"): equal once lowercased without stop words, or one holds the other."""
    ka, kb = _key(a), _key(b)
    if not ka or not kb:
        return True  # nothing to compare: not a change
    return ka == kb or f" {ka} " in f" {kb} " or f" {kb} " in f" {ka} "


@dataclass(frozen=True)
class Earlier:
    """An earlier annotated statement of the same speaker, as replacement reads it."""

    record_id: str
    facts: Mapping[str, str]


def replaced(
    facts: Mapping[str, str],
    earlier: Sequence[Earlier],
    same_attribute: Any,
) -> list[tuple[str, str]]:
    """The earlier statements ``facts`` make out of date, each with its reason.

    An earlier statement is out of date when it set an attribute that ``same_attribute``
    (a callable of two attribute names) calls the same as one of ``facts`` to another
    value ("home city: Lyon" before "home city: Porto"); the reason names the attribute and
    the new value only ("home city: now Porto"), never the earlier statement's words.

    Returns:
        ``(record id, reason)`` pairs, in the order of ``earlier``.
    """
    out: list[tuple[str, str]] = []
    for old in earlier:
        for name, value in facts.items():
            match = next((k for k in old.facts if same_attribute(k, name)), None)
            if match is not None and not same_value(old.facts[match], value):
                # The newer statement's own words only: a link must not keep the words of
                # the record it replaces, which may be forgotten ("bank pin: now 9999").
                out.append((old.record_id, f"{name}: now {value}"))
                break
    return out


def digest(text: str) -> str:
    """A short digest of the text an annotation was made of (a record whose text changed
    since is annotated again)."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def annotation(
    notes: Notes, model: str, text: str, replaces: Sequence[tuple[str, str]] = ()
) -> dict[str, Any]:
    """The ``annotation`` metadata of a record of ``text`` (JSON-ready)."""
    out: dict[str, Any] = {
        "about": list(notes.about),
        "facts": dict(notes.facts),
        "by": model,
        "of": digest(text),
    }
    if replaces:
        out["replaces"] = [{"id": rid, "why": why} for rid, why in replaces]
    return out


def current_annotation(metadata: Mapping[str, Any] | None, text: str) -> Mapping[str, Any]:
    """A record's annotation when it was made of the record's text as it is (else empty)."""
    note = metadata.get(ANNOTATION) if metadata else None
    if not isinstance(note, Mapping) or note.get("of") != digest(text):
        return {}
    return note


def labels_of(note: Mapping[str, Any]) -> tuple[str, ...]:
    """An annotation's labels (none when malformed)."""
    about = note.get("about")
    if not isinstance(about, list):
        return ()
    return tuple(a for a in about if isinstance(a, str) and a)


def facts_of(note: Mapping[str, Any]) -> dict[str, str]:
    """An annotation's facts (none when malformed)."""
    facts = note.get("facts")
    if not isinstance(facts, Mapping):
        return {}
    return {k: v for k, v in facts.items() if isinstance(k, str) and isinstance(v, str)}


def replaces_of(note: Mapping[str, Any]) -> tuple[str, ...]:
    """The ids of the records an annotation says its record replaces."""
    return tuple(record_id for record_id, _ in links_of(note))


def links_of(note: Mapping[str, Any]) -> tuple[tuple[str, str], ...]:
    """``(record id, attribute)`` of each record an annotation says its record replaces."""
    links = note.get("replaces")
    if not isinstance(links, list):
        return ()
    out = []
    for link in links:
        if isinstance(link, Mapping) and isinstance(link.get("id"), str):
            why = link.get("why")
            out.append((link["id"], attribute_of(why) if isinstance(why, str) else ""))
    return tuple(out)


def without_links(
    metadata: Mapping[str, Any], gone: Collection[str], *, dropped: bool
) -> dict[str, Any] | None:
    """``metadata`` with its annotation's links to ``gone`` records dropped (``dropped``: the
    records were forgotten) or their reasons cut to the attribute (their text changed), so no
    link keeps words of theirs; ``None`` when no link names one."""
    note = metadata.get(ANNOTATION)
    links = note.get("replaces") if isinstance(note, Mapping) else None
    if not isinstance(note, Mapping) or not isinstance(links, list):
        return None
    named = [x for x in links if isinstance(x, Mapping) and x.get("id") in gone]
    if not named:
        return None
    kept: list[Any] = []
    for link in links:
        if link not in named:
            kept.append(link)
        elif not dropped:
            why = link.get("why")
            kept.append(
                {"id": link["id"], "why": attribute_of(why) if isinstance(why, str) else ""}
            )
    changed = (
        {**note, "replaces": kept} if kept else {k: v for k, v in note.items() if k != "replaces"}
    )
    return {**metadata, ANNOTATION: changed}


def reason_without(reason: str, record_id: str) -> str:
    """An annotator's log reason with what it said of ``record_id`` cut to the attribute
    (``"... it replaces r1 (home city: Lyon -> Porto)"``: ``"... r1 (home city)"``)."""
    pattern = re.compile(rf"{re.escape(record_id)} \((.*?)\)(?=; |$)")
    return pattern.sub(lambda m: f"{record_id} ({attribute_of(m.group(1))})", reason)


def attribute_of(why: str) -> str:
    """The attribute a link's reason names (``"home city: now Porto"``: home city)."""
    return why.split(":", 1)[0].strip() if ":" in why else ""
