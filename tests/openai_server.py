"""A small local server speaking the OpenAI chat-completions protocol, for wiring tests.

It runs ``http.server`` in a thread on 127.0.0.1 (an ephemeral port), records the JSON
body of every request, and answers from a script: plain text, tool calls, or a function
of the request. ``"stream": true`` requests get server-sent events chunk by chunk, as
OpenAI sends them (``data: {...}`` lines, then ``data: [DONE]``).

Usage:
    .. code-block:: python

        from langchain_openai import ChatOpenAI
        from tests.openai_server import ScriptedOpenAIServer, tool_call

        with ScriptedOpenAIServer("Hello!", tool_call("search_memory", query="cat")) as server:
            llm = ChatOpenAI(model="scripted", base_url=server.url, api_key="test")
            llm.invoke("hi")
            assert server.requests[-1]["messages"][-1]["content"] == "hi"
"""

from __future__ import annotations

import itertools
import json
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from langchain_agentmem.annotation.annotations import JUDGE_SYSTEM, SYSTEM

Reply = str | dict[str, Any] | Callable[[dict[str, Any]], "str | dict[str, Any]"]
"""Text, ``{"content": ..., "tool_calls": [...]}``, an error (``{"status": 401,
"message": ...}``), or a function of the request body."""

_ids = itertools.count(1)


def tool_call(name: str, **args: Any) -> dict[str, Any]:
    """A scripted reply that calls one tool with ``args``."""
    return {"content": "", "tool_calls": [{"name": name, "args": args}]}


def error(status: int, message: str) -> dict[str, Any]:
    """A scripted reply that fails with an HTTP ``status`` and OpenAI's error body."""
    return {"status": status, "message": message}


def empty_stream() -> dict[str, Any]:
    """A streamed reply with no chunk at all (HTTP 200, then ``[DONE]``), as a local server
    sends when the request overflows its context."""
    return {"misbehave": "empty"}


def stream_error(message: str) -> dict[str, Any]:
    """HTTP 200 whose stream carries an error object instead of chunks."""
    return {"misbehave": "error", "message": message}


def dropped(text: str) -> dict[str, Any]:
    """A streamed reply whose connection drops after ``text``, before the body's end."""
    return {"misbehave": "drop", "content": text}


def _cap(body: dict[str, Any]) -> int | None:
    """The reply cap a request asks for (``max_completion_tokens`` or ``max_tokens``)."""
    for key in ("max_completion_tokens", "max_tokens"):
        if isinstance(body.get(key), int):
            return int(body[key])
    return None


def _normalise(reply: str | dict[str, Any]) -> tuple[str, list[dict[str, Any]]]:
    if isinstance(reply, str):
        return reply, []
    calls = [
        {
            "id": f"call_{next(_ids)}",
            "type": "function",
            "function": {"name": c["name"], "arguments": json.dumps(c.get("args", {}))},
        }
        for c in reply.get("tool_calls", [])
    ]
    return reply.get("content") or "", calls


def message_text(message: dict[str, Any]) -> str:
    """The text of one request message (string content or text parts)."""
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return ""


def is_annotation(body: dict[str, Any]) -> bool:
    """Whether a request asks for an annotation of a stored statement, or a judgement of
    two (``AgentMemory``'s model, off the turn), rather than a turn of the conversation."""
    messages = body.get("messages") or []
    return bool(messages) and message_text(messages[0]) in (SYSTEM, JUDGE_SYSTEM)


def judged_pair(text: str) -> tuple[str, str] | None:
    """The earlier and later statements of a judging request's last message (else None)."""
    head, sep, tail = text.partition("\nLater: ")
    if not sep or not head.startswith("Earlier: "):
        return None
    return json.loads(head.removeprefix("Earlier: ")), json.loads(tail)


def facts_judge(facts: dict[str, dict[str, Any]]) -> Callable[[str, str], bool]:
    """A judge that calls a later statement a replacement when ``facts`` (statement ->
    annotation) gives both one attribute with two values."""

    def judge(earlier: str, later: str) -> bool:
        old = facts.get(earlier, {}).get("facts", {})
        new = facts.get(later, {}).get("facts", {})
        return any(name in old and old[name] != value for name, value in new.items())

    return judge


def scripted_notes(
    facts: dict[str, dict[str, Any]],
) -> Callable[[dict[str, Any]], str]:
    """Annotations from ``facts`` (statement -> annotation; else one label, no fact), and
    judgements by :func:`facts_judge`."""
    judge = facts_judge(facts)

    def answer(body: dict[str, Any]) -> str:
        said = message_text(body["messages"][-1])
        pair = judged_pair(said)
        if pair is not None:
            return json.dumps({"replaced": judge(*pair)})
        return json.dumps(facts.get(said, {"about": ["everyday life"], "facts": {}}))

    return answer


plain_notes = scripted_notes({})
"""Annotations that say little (one label, no fact); no statement replaces another."""


class ScriptedOpenAIServer:
    """An OpenAI-compatible ``/v1/chat/completions`` endpoint answering from a script.

    Annotation requests (:func:`is_annotation`) are answered by ``annotate`` and kept apart
    in ``annotations``: they come off the turn, at moments of their own, so they neither
    take a scripted reply nor show in ``requests``.

    Args:
        replies: Answers given in turn; when the script runs out, ``default`` is used.
        default: The answer once the script is spent.
        annotate: The answer to an annotation request (a function of its body).
    """

    def __init__(
        self,
        *replies: Reply,
        default: Reply = "OK.",
        annotate: Callable[[dict[str, Any]], str] = plain_notes,
    ) -> None:
        self.script: deque[Reply] = deque(replies)
        self.default = default
        self.annotate = annotate
        self.requests: list[dict[str, Any]] = []
        """Every request body received, oldest first (annotations apart)."""
        self.annotations: list[dict[str, Any]] = []
        """Every annotation request received, oldest first."""
        self.overlapping = 0
        """Requests received while one of the other kind (a turn's, an annotation's) was
        being composed: a local server that answers one request at a time would have mixed
        them up."""
        self._busy = {True: 0, False: 0}  # requests being answered: turns, annotations
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        """The ``base_url`` to give ``ChatOpenAI`` (``http://127.0.0.1:PORT/v1``)."""
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}/v1"

    def add(self, *replies: Reply) -> None:
        """Append answers to the script."""
        with self._lock:
            self.script.extend(replies)

    def prompt_text(self, index: int = -1) -> str:
        """All message texts of request ``index`` joined by newlines (system prompt too)."""
        return "\n".join(message_text(m) for m in self.requests[index]["messages"])

    def start(self) -> ScriptedOpenAIServer:
        """Start serving in a background thread."""
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and free the port."""
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> ScriptedOpenAIServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _answer(self, body: dict[str, Any]) -> str | dict[str, Any]:
        turn = not is_annotation(body)
        with self._lock:
            self.overlapping += self._busy[not turn] > 0
            self._busy[turn] += 1
        try:
            return self._compose(body)
        finally:
            with self._lock:
                self._busy[turn] -= 1

    def _compose(self, body: dict[str, Any]) -> str | dict[str, Any]:
        if is_annotation(body):
            with self._lock:
                self.annotations.append(body)
            return self.annotate(body)
        with self._lock:
            self.requests.append(body)
            reply = self.script.popleft() if self.script else self.default
        if callable(reply):
            reply = reply(body)
        return reply

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                """Quiet: tests read ``requests`` instead."""

            def _json(self, status: int, payload: dict[str, Any]) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_POST(self) -> None:
                if not self.path.rstrip("/").endswith("/chat/completions"):
                    self._json(404, {"error": {"message": f"no route {self.path}"}})
                    return
                length = int(self.headers.get("Content-Length", "0"))
                body = json.loads(self.rfile.read(length) or b"{}")
                reply = server._answer(body)
                if isinstance(reply, dict) and "status" in reply:
                    self._json(
                        int(reply["status"]),
                        {"error": {"message": reply["message"], "type": "scripted_error"}},
                    )
                    return
                if isinstance(reply, dict) and "misbehave" in reply:
                    self._misbehave(reply)
                    return
                content, calls = _normalise(reply)
                model = body.get("model", "scripted")
                created = int(time.time())
                cid = f"chatcmpl-{next(_ids)}"
                finish = "tool_calls" if calls else "stop"
                cap = _cap(body)
                if cap is not None and len(content.split(" ")) > cap:
                    # As servers do: a word a token, the reply cut at the cap.
                    content, finish = " ".join(content.split(" ")[:cap]), "length"
                usage = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
                if not body.get("stream"):
                    message: dict[str, Any] = {"role": "assistant", "content": content}
                    if calls:
                        message["tool_calls"] = calls
                    self._json(
                        200,
                        {
                            "id": cid,
                            "object": "chat.completion",
                            "created": created,
                            "model": model,
                            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
                            "usage": usage,
                        },
                    )
                    return
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Cache-Control", "no-cache")
                self.send_header("Connection", "close")
                self.end_headers()
                self.close_connection = True
                for delta, reason in self._deltas(content, calls, finish):
                    self._event(
                        {
                            "id": cid,
                            "object": "chat.completion.chunk",
                            "created": created,
                            "model": model,
                            "choices": [{"index": 0, "delta": delta, "finish_reason": reason}],
                        }
                    )
                if (body.get("stream_options") or {}).get("include_usage"):
                    self._event(
                        {
                            "id": cid,
                            "object": "chat.completion.chunk",
                            "created": created,
                            "model": model,
                            "choices": [],
                            "usage": usage,
                        }
                    )
                self.wfile.write(b"data: [DONE]\n\n")
                self.wfile.flush()

            @staticmethod
            def _deltas(
                content: str, calls: list[dict[str, Any]], finish: str
            ) -> Iterator[tuple[dict[str, Any], str | None]]:
                yield {"role": "assistant", "content": ""}, None
                words = content.split(" ")
                for i, word in enumerate(words):
                    if word or i:
                        yield {"content": word if i == 0 else f" {word}"}, None
                for n, call in enumerate(calls):
                    args = call["function"]["arguments"]
                    head = {
                        "index": n,
                        "id": call["id"],
                        "type": "function",
                        "function": {"name": call["function"]["name"], "arguments": ""},
                    }
                    yield {"tool_calls": [head]}, None
                    half = len(args) // 2
                    for part in (args[:half], args[half:]):
                        yield {"tool_calls": [{"index": n, "function": {"arguments": part}}]}, None
                yield {}, finish

            def _misbehave(self, reply: dict[str, Any]) -> None:
                how = reply["misbehave"]
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                if how == "drop":  # promise more than is sent, then hang up
                    self.send_header("Content-Length", "100000")
                else:
                    self.send_header("Connection", "close")
                self.end_headers()
                self.close_connection = True
                if how == "error":
                    self._event({"error": {"message": reply["message"], "code": 500}})
                elif how == "drop":
                    chunk = {"role": "assistant", "content": reply["content"]}
                    self._event(
                        {
                            "id": "chatcmpl-drop",
                            "object": "chat.completion.chunk",
                            "created": int(time.time()),
                            "model": "scripted",
                            "choices": [{"index": 0, "delta": chunk, "finish_reason": None}],
                        }
                    )
                    self.wfile.flush()
                    self.connection.shutdown(2)
                    return
                self.wfile.write(b"data: [DONE]\n\n")
                self.wfile.flush()

            def _event(self, payload: dict[str, Any]) -> None:
                self.wfile.write(f"data: {json.dumps(payload)}\n\n".encode())
                self.wfile.flush()

        return Handler
