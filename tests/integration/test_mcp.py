"""``agentmem mcp`` checked from outside: the SDK's clients over stdio and HTTP, raw
JSON-RPC, langchain-mcp-adapters in a ``create_agent`` agent, and a SIGKILLed server."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from langchain.agents import create_agent
from langchain_core.messages import AIMessage
from langchain_mcp_adapters.client import MultiServerMCPClient
from mcp import types
from starlette.testclient import TestClient

from langchain_agentmem import AgentMemory, SentenceTransformerEmbeddings, memory_tools
from langchain_agentmem.integrations.mcp.http import http_app
from tests.fakes import RecordingChatModel
from tests.integration.test_annotations import ANSWERS, LYON, PORTO
from tests.mcp_servers import HttpServer, http_session, jsonrpc, stdio_session
from tests.openai_server import ScriptedOpenAIServer, scripted_notes

ALICE = "alice-token-" + "a" * 24
BOB = "bob-token-" + "b2" * 12
ADDED = re.compile(r"ADD ([0-9a-f]+): ")
BIG = "x" * 2_000_000


def text(result: types.CallToolResult) -> str:
    (block,) = result.content
    assert isinstance(block, types.TextContent)
    return block.text


def added_id(result: types.CallToolResult) -> str:
    assert not result.isError, text(result)
    match = ADDED.match(text(result))
    assert match, text(result)
    return match.group(1)


def stored(url: str, embeddings: SentenceTransformerEmbeddings, user: str) -> list[str]:
    """The texts ``user`` has in the store, read beside the server (no index touched)."""
    with AgentMemory(url, embeddings=embeddings, persist_indexes=False) as memory:
        return [r.text for r in memory.records(user)]


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> str:
    return f"sqlite:///{tmp_path_factory.mktemp('mcp') / 'memory.db'}"


@pytest.fixture(scope="module")
def http(store: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[HttpServer]:
    """One HTTP server for the module: alice's and bob's tokens."""
    home = tmp_path_factory.mktemp("mcp-home")
    with HttpServer(store, tokens={ALICE: "alice", BOB: "bob"}, home=home) as server:
        yield server
    assert server.stdout() == ""  # logs go to stderr only
    assert "Traceback" not in server.stderr()


# -- stdio ------------------------------------------------------------------------------------
async def test_stdio_client_lists_saves_searches_forgets_and_refuses_bad_input(
    tmp_path: Path, embeddings: SentenceTransformerEmbeddings
) -> None:
    url = f"sqlite:///{tmp_path / 'stdio.db'}"
    with (tmp_path / "stderr.txt").open("w") as errlog:
        async with stdio_session(url, "alice", tmp_path, errlog) as session:
            listed = (await session.list_tools()).tools
            agent_tools = memory_tools(AgentMemory(":memory:", embeddings=embeddings))
            assert [(t.name, t.description) for t in listed] == [
                (t.name, t.description) for t in agent_tools
            ]
            for mcp_tool, agent_tool in zip(listed, agent_tools, strict=True):
                assert mcp_tool.inputSchema == agent_tool.tool_call_schema.model_json_schema()

            record_id = added_id(
                await session.call_tool("save_memory", {"text": "I am allergic to nuts."})
            )
            found = text(await session.call_tool("search_memory", {"query": "allergies"}))
            assert found.startswith("<recalled_memories>")
            assert f'- (id "{record_id}") [' in found and '"I am allergic to nuts."' in found

            for bad, said in [(BIG, "2,000,000 characters"), ("nuts\x00", "NUL")]:
                refused = await session.call_tool("save_memory", {"text": bad})
                assert refused.isError and said in text(refused)
                assert "nothing was changed" in text(refused)
            missing = await session.call_tool("forget_memory", {"memory_id": "no-such-id"})
            assert missing.isError and "No memory 'no-such-id'" in text(missing)
            no_query = await session.call_tool("search_memory", {})
            assert no_query.isError and "'query' is a required property" in text(no_query)

            forgot = await session.call_tool("forget_memory", {"memory_id": record_id})
            assert not forgot.isError and text(forgot).startswith(f"DELETE {record_id}")
            after = await session.call_tool("search_memory", {"query": "allergies"})
            assert text(after) == "No memories found."
    assert stored(url, embeddings, "alice") == []
    log = (tmp_path / "stderr.txt").read_text()
    assert "serving 'alice'" in log and "Traceback" not in log


async def test_stdio_with_annotate_marks_what_a_later_statement_replaces(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = f"sqlite:///{tmp_path / 'annotated.db'}"
    with ScriptedOpenAIServer(annotate=scripted_notes(ANSWERS)) as model:
        monkeypatch.setenv("OPENAI_BASE_URL", model.url)
        monkeypatch.setenv("OPENAI_API_KEY", "local")
        with (tmp_path / "stderr.txt").open("w") as errlog:
            async with stdio_session(url, "priya", tmp_path, errlog, "--annotate") as session:
                added_id(await session.call_tool("save_memory", {"text": LYON}))
                added_id(await session.call_tool("save_memory", {"text": PORTO}))
                deadline = asyncio.get_running_loop().time() + 60
                while True:  # annotation runs off the tool call, in the server process
                    asked = {"query": "Where do I live?"}
                    found = text(await session.call_tool("search_memory", asked))
                    if "(since replaced)" in found or asyncio.get_running_loop().time() > deadline:
                        break
                    await asyncio.sleep(0.2)
    assert found.index(PORTO) < found.index(LYON), found
    assert f'(since replaced): "{LYON}"' in found
    assert len(model.annotations) == 3  # two statements labelled, one pair judged
    log = (tmp_path / "stderr.txt").read_text()
    assert "Traceback" not in log


async def test_stdio_refuses_a_bad_k_at_start(tmp_path: Path) -> None:
    with (tmp_path / "stderr.txt").open("w") as errlog, pytest.raises(Exception):  # noqa: B017
        async with stdio_session(
            f"sqlite:///{tmp_path / 'k.db'}", "alice", tmp_path, errlog, "--k", "0"
        ):
            pass
    assert (
        "argument --k: expected a whole number >= 1, got '0'"
        in (tmp_path / "stderr.txt").read_text()
    )
    assert not (tmp_path / "k.db").exists()


# -- HTTP, raw JSON-RPC -----------------------------------------------------------------------
def call(server: HttpServer, token: str | None, name: str, **args: str) -> dict[str, object]:
    response = jsonrpc(server.url, "tools/call", {"name": name, "arguments": args}, token=token)
    assert response.status_code == 200, response.text
    result: dict[str, object] = response.json()["result"]
    return result


def result_text(result: dict[str, object]) -> str:
    content = result["content"]
    assert isinstance(content, list)
    return str(content[0]["text"])


def test_raw_jsonrpc_over_http(http: HttpServer, embeddings: SentenceTransformerEmbeddings) -> None:
    listed = jsonrpc(http.url, "tools/list", token=ALICE).json()["result"]["tools"]
    assert [t["name"] for t in listed] == ["search_memory", "save_memory", "forget_memory"]

    saved = call(http, ALICE, "save_memory", text="My cat is called Miso.")
    assert saved["isError"] is False
    match = ADDED.match(result_text(saved))
    assert match
    record_id = match.group(1)
    found = call(http, ALICE, "search_memory", query="cat's name")
    assert f'- (id "{record_id}")' in result_text(found) and "Miso" in result_text(found)

    big = call(http, ALICE, "save_memory", text=BIG)
    assert big["isError"] is True and "max_text_chars" in result_text(big)

    forgot = call(http, ALICE, "forget_memory", memory_id=record_id)
    assert result_text(forgot).startswith(f"DELETE {record_id}")
    assert "Miso" not in result_text(call(http, ALICE, "search_memory", query="cat's name"))
    assert "Miso" not in " ".join(stored(http_store(http), embeddings, "alice"))
    assert BIG not in stored(http_store(http), embeddings, "alice")


def http_store(server: HttpServer) -> str:
    return server.args[server.args.index("--store") + 1]


@pytest.mark.parametrize("token", [None, "wrong-token-" + "c" * 24, f"{ALICE}x"])
def test_no_or_wrong_token_gets_401_and_stores_nothing(
    http: HttpServer, embeddings: SentenceTransformerEmbeddings, token: str | None
) -> None:
    secret = f"The safe code is 4711 ({token})."
    response = jsonrpc(
        http.url, "tools/call", {"name": "save_memory", "arguments": {"text": secret}}, token=token
    )
    assert response.status_code == 401
    assert response.headers["www-authenticate"].startswith("Bearer")
    assert "Miso" not in response.text and "result" not in response.json()
    for user in ("alice", "bob"):
        assert secret not in stored(http_store(http), embeddings, user)


# -- HTTP, the SDK's client -------------------------------------------------------------------
async def test_two_tokens_reach_two_users(http: HttpServer) -> None:
    async with http_session(http.url, ALICE) as alice, http_session(http.url, BOB) as bob:
        record_id = added_id(
            await alice.call_tool("save_memory", {"text": "My sister is called Maria."})
        )
        assert "Maria" in text(await alice.call_tool("search_memory", {"query": "sister"}))
        assert "Maria" not in text(await bob.call_tool("search_memory", {"query": "sister"}))
        stolen = await bob.call_tool("forget_memory", {"memory_id": record_id})
        assert stolen.isError and "No memory" in text(stolen)
        assert "Maria" in text(await alice.call_tool("search_memory", {"query": "sister"}))


async def test_the_sdk_client_without_a_token_is_refused(http: HttpServer) -> None:
    with pytest.raises(Exception) as raised:  # the SDK wraps the 401
        async with http_session(http.url, None):
            pass
    assert "401" in repr(raised.value) or "Unauthorized" in repr(raised.value)


async def test_concurrent_clients(http: HttpServer) -> None:
    async def client(token: str, n: int) -> list[str]:
        async with http_session(http.url, token) as session:
            for i in range(2):
                added_id(await session.call_tool("save_memory", {"text": f"Client {n} fact {i}."}))
            found = await session.call_tool("search_memory", {"query": f"Client {n} fact"})
            return re.findall(rf"Client {n} fact \d", text(found))

    tokens = [ALICE, BOB] * 3
    results = await asyncio.gather(*(client(t, 100 + n) for n, t in enumerate(tokens)))
    assert [sorted(r) for r in results] == [
        [f"Client {100 + n} fact 0", f"Client {100 + n} fact 1"] for n in range(len(tokens))
    ]
    async with http_session(http.url, BOB) as bob:
        seen = text(await bob.call_tool("search_memory", {"query": "Client 100 fact"}))
    assert "Client 100 fact" not in seen  # client 100 was alice


# -- langchain-mcp-adapters in create_agent ---------------------------------------------------
def _tool_call(name: str, call_id: str, **args: str) -> AIMessage:
    return AIMessage("", tool_calls=[{"name": name, "args": args, "id": call_id}])


async def test_langchain_mcp_adapters_give_the_tools_to_create_agent(http: HttpServer) -> None:
    client = MultiServerMCPClient(
        {
            "memory": {
                "transport": "streamable_http",
                "url": http.url,
                "headers": {"Authorization": f"Bearer {ALICE}"},
            }
        }
    )
    tools = await client.get_tools()
    assert sorted(t.name for t in tools) == ["forget_memory", "save_memory", "search_memory"]
    llm = RecordingChatModel.replying(
        _tool_call("save_memory", "c1", text="I am learning the cello."),
        "Saved.",
        _tool_call("search_memory", "c2", query="which instrument"),
        "The cello.",
    )
    agent = create_agent(llm, tools=tools)
    await agent.ainvoke({"messages": [("user", "Remember that I am learning the cello.")]})
    out = await agent.ainvoke({"messages": [("user", "Which instrument do I play?")]})
    answer = out["messages"][-2]
    assert answer.type == "tool" and answer.name == "search_memory"
    assert '"I am learning the cello."' in str(answer.content)
    assert out["messages"][-1].content == "The cello."


# -- durability -------------------------------------------------------------------------------
@pytest.mark.slow
async def test_a_killed_server_loses_no_acknowledged_save(
    tmp_path: Path, embeddings: SentenceTransformerEmbeddings
) -> None:
    url = f"sqlite:///{tmp_path / 'kill.db'}"
    server = HttpServer(url, tokens={ALICE: "alice"}, home=tmp_path).start()
    try:
        texts = [f"Fact number {i} about my garden." for i in range(5)]
        async with http_session(server.url, ALICE) as session:
            for t in texts:
                added_id(await session.call_tool("save_memory", {"text": t}))
            server.kill()  # SIGKILL right after the last acknowledgement
    except BaseException:
        server.kill()
        raise
    finally:
        server.stop()
    assert sorted(stored(url, embeddings, "alice")) == sorted(texts)
    with HttpServer(url, tokens={ALICE: "alice"}, home=tmp_path / "again") as again:
        async with http_session(again.url, ALICE) as session:
            found = text(await session.call_tool("search_memory", {"query": "Fact number 4"}))
    assert "Fact number 4 about my garden." in found


# -- the HTTP app in process: one user on loopback, the Host header -------------------------
def _post(client: TestClient, host: str, token: str | None = None) -> httpx.Response:
    headers = {"Accept": "application/json, text/event-stream", "Host": host}
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call"}
    body["params"] = {"name": "save_memory", "arguments": {"text": f"Seen through {host}."}}
    return client.post("/mcp", json=body, headers=headers)


def test_one_user_without_tokens_answers_loopback_hosts_only(memory: AgentMemory) -> None:
    with TestClient(http_app(memory, user="alice"), base_url="http://127.0.0.1") as client:
        assert _post(client, "127.0.0.1:8000").json()["result"]["isError"] is False
        assert _post(client, "evil.example:8000").status_code == 421  # DNS rebinding
    assert [r.text for r in memory.records("alice")] == ["Seen through 127.0.0.1:8000."]


def test_with_tokens_a_proxys_host_is_served(memory: AgentMemory) -> None:
    app = http_app(memory, tokens={ALICE: "alice"})
    with TestClient(app, base_url="http://127.0.0.1") as client:
        assert _post(client, "memory.example.com", ALICE).json()["result"]["isError"] is False
        assert _post(client, "memory.example.com").status_code == 401
    assert [r.text for r in memory.records("alice")] == ["Seen through memory.example.com."]
