"""Write the example notebooks of this folder (outputs stripped).

The notebooks are generated from the cells below so that they stay small, reviewable and
free of outputs in git. Edit the cells here, then run::

    python notebooks/build_notebooks.py

Each notebook runs offline on the embedded defaults (SQLite, the bundled embedding model).
When ``.env`` (or the environment) names a chat model through ``OPENAI_API_KEY`` /
``OPENAI_BASE_URL`` / ``OPENAI_MODEL``, the notebooks talk to it; otherwise they use a
scripted fake model and say so.
"""

from __future__ import annotations

import sys
from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

HERE = Path(__file__).resolve().parent

Cell = tuple[str, str]


def md(text: str) -> Cell:
    return ("markdown", text.strip("\n"))


def code(text: str) -> Cell:
    return ("code", text.strip("\n"))


# -- shared setup cells ------------------------------------------------------------------------
SETUP = code(
    """
import os
import tempfile
import warnings
from pathlib import Path

# Everything this notebook writes goes under a fresh temporary folder (never ~/.agentmem).
WORKDIR = Path(tempfile.mkdtemp(prefix="agentmem-notebook-"))
os.environ["AGENTMEM_HOME"] = str(WORKDIR)
# ConversationChain and the classic memories are deprecated in LangChain 1.x; they still run.
warnings.filterwarnings("ignore", message=".*was deprecated in LangChain")
warnings.filterwarnings("ignore", message="IProgress not found")
print("working folder:", WORKDIR)
"""
)

MODEL_MD = md(
    """
### The chat model

If a `.env` file (in this folder or one above it) or the environment sets `OPENAI_API_KEY`
or `OPENAI_BASE_URL` (any OpenAI-compatible server: OpenAI, llama.cpp, vLLM, Ollama; the
model name in `OPENAI_MODEL`), the notebook talks to that model. Otherwise it uses a
**scripted fake model**: its replies are written below, so they show how the memory is wired,
not what a model would say. Either way the memory, the embeddings and the search are real.
"""
)

MODEL = code(
    '''
from dotenv import find_dotenv
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import get_buffer_string

from langchain_agentmem.models import chat_model_from_env, load_env

load_env(find_dotenv(usecwd=True) or None)
CONFIGURED = chat_model_from_env()
if CONFIGURED is None:
    print("scripted fake model: no model configured (its replies are written in this notebook)")
else:
    print("configured model:", getattr(CONFIGURED, "model_name", type(CONFIGURED).__name__))


def chat_model(*scripted_replies):
    """The configured model, or a scripted fake answering with these replies in turn."""
    if CONFIGURED is not None:
        return CONFIGURED
    return GenericFakeChatModel(messages=iter(scripted_replies))


class PromptLog(BaseCallbackHandler):
    """Keeps the text of every prompt sent to the model, to see what memory put there."""

    def __init__(self):
        self.prompts = []

    def on_chat_model_start(self, serialized, messages, **kwargs):
        self.prompts.append(get_buffer_string(messages[0]))
'''
)


# -- 01: the classic LangChain examples ----------------------------------------------------------
NB1: list[Cell] = [
    md(
        """
# LangChain memories on `AgentMemory`

The classic LangChain memory examples, with memories that are durable (one SQLite file),
searchable (embeddings and BM25, offline) and managed by a policy with an audit log:

1. `ConversationChain` with a full buffer: the chain remembers 小明's name.
2. A window of the last `k=3` exchanges: older turns leave the prompt, but stay in the store.
3. Long-term recall, RAG style: `AgentMemory.search`, `AgentMemoryRetriever` in an LCEL chain,
   `AgentMemoryVectorStore` under LangChain's `VectorStoreRetrieverMemory`, and
   `AgentMemoryRecall` bringing one thread's facts into another.
4. A policy-managed memory with a capacity: what it kept, what it forgot, and why.

`ConversationChain` and the `langchain_classic` memories are deprecated in LangChain 1.x (they
still run); the LangGraph notebook shows the path LangChain recommends now. They need the
`classic` extra: `pip install ".[classic]"` in a checkout of the repository.
"""
    ),
    SETUP,
    MODEL_MD,
    MODEL,
    md(
        """
## 1. `ConversationChain` with a full buffer

`BufferChatMessageHistory` keeps every message of a thread in the store;
`ConversationBufferMemory` puts them all into the prompt.
"""
    ),
    code(
        """
from langchain_classic.chains import ConversationChain
from langchain_classic.memory import ConversationBufferMemory

from langchain_agentmem import AgentMemory, BufferChatMessageHistory

STORE = f"sqlite:///{WORKDIR / 'memory.db'}"
memory = AgentMemory(STORE)

history = BufferChatMessageHistory(memory, namespace="xiaoming", thread="chat-1")
chain = ConversationChain(
    llm=chat_model("你好，小明！我会记住你的名字。", "你说你叫小明。"),
    memory=ConversationBufferMemory(chat_memory=history),
)
log = PromptLog()
for question in ["你好，我叫小明，以后请记住我的名字。", "我刚才说我叫什么名字？"]:
    answer = chain.invoke({"input": question}, config={"callbacks": [log]})["response"]
    print("Human:", question)
    print("AI:   ", answer)
"""
    ),
    md("The second prompt carries the first exchange, so the model can answer with the name:"),
    code(
        """
print(log.prompts[1])
print()
print("the second prompt recalls 小明:", "小明" in log.prompts[1])
"""
    ),
    md(
        """
The thread lives in the SQLite file, so it survives closing the store (or restarting
the kernel):
"""
    ),
    code(
        """
memory.close()
memory = AgentMemory(STORE)
history = BufferChatMessageHistory(memory, namespace="xiaoming", thread="chat-1")
for message in history.messages:
    print(f"{message.type:>5}: {message.text}")
print("messages after reopening the store:", len(history.messages))
"""
    ),
    md(
        """
## 2. A window of the last three exchanges

`WindowChatMessageHistory(k=3)` shows the chain only the last three exchanges. By the fifth
question the introduction has left the window, so the model no longer sees the name; every
message is still kept in the store (`all_messages`).
"""
    ),
    code(
        """
from langchain_agentmem import WindowChatMessageHistory

window = WindowChatMessageHistory(memory, namespace="alice", thread="chat-1", k=3)
chain = ConversationChain(
    llm=chat_model(
        "Nice to meet you, Alice!",
        "Stardew Valley is a lovely farming game.",
        "Mosquitoes are the worst.",
        "You hate mosquitoes.",
        "I'm sorry, I don't know your name.",
    ),
    memory=ConversationBufferMemory(chat_memory=window),
)
log = PromptLog()
questions = [
    "Hi, my name is Alice.",
    "I love playing Stardew Valley.",
    "I really hate mosquitoes.",
    "What do I hate?",
    "What is my name?",
]
for question in questions:
    answer = chain.invoke({"input": question}, config={"callbacks": [log]})["response"]
    print(f"Human: {question}\\nAI:    {answer}")
"""
    ),
    code(
        """
print("4th prompt holds the name Alice:", "Alice" in log.prompts[3])
print("5th prompt holds the name Alice:", "Alice" in log.prompts[4])
print("the chain sees", len(window.messages), "messages; the store keeps", len(window.all_messages))
"""
    ),
    md(
        """
## 3. Long-term recall (vector memory, RAG style)

Long-term memory holds items (facts, turns) per user (namespace); search is hybrid by default
(dense embeddings fused with BM25) and never crosses into another user's namespace.
"""
    ),
    code(
        """
facts = [
    "I live in Lyon.",
    "My sister Emma is a nurse.",
    "I am allergic to peanuts.",
    "I play the cello on Sundays.",
    "My favourite film is Spirited Away.",
]
for fact in facts:
    memory.add(fact, namespace="alice", thread="profile")

for record in memory.search("What food must I avoid?", namespace="alice", k=2):
    print(f"{record.score:.2f}  {record.text}")
"""
    ),
    md("`AgentMemoryRetriever` is a LangChain retriever, so it slots into an LCEL RAG chain:"),
    code(
        """
from langchain_core.output_parsers import StrOutputParser
from langchain_core.prompts import ChatPromptTemplate
from langchain_core.runnables import RunnablePassthrough

from langchain_agentmem import AgentMemoryRetriever

retriever = AgentMemoryRetriever(memory, namespace="alice", k=2)
prompt = ChatPromptTemplate.from_messages(
    [
        ("system", "Answer with what you remember about the user:\\n{context}"),
        ("human", "{question}"),
    ]
)
rag = (
    {
        "context": retriever | (lambda docs: "\\n".join(d.page_content for d in docs)),
        "question": RunnablePassthrough(),
    }
    | prompt
    | chat_model("Please skip the satay: you are allergic to peanuts.")
    | StrOutputParser()
)
log = PromptLog()
print("AI:", rag.invoke("Can I eat the satay at the party?", config={"callbacks": [log]}))
print()
print(log.prompts[-1])
"""
    ),
    md(
        """
`AgentMemoryVectorStore` is a LangChain `VectorStore`; here it backs the classic
`VectorStoreRetrieverMemory` example:
"""
    ),
    code(
        """
from langchain_classic.memory import VectorStoreRetrieverMemory

from langchain_agentmem import AgentMemoryVectorStore

store = AgentMemoryVectorStore(memory, namespace="sam")
vector_memory = VectorStoreRetrieverMemory(retriever=store.as_retriever(search_kwargs={"k": 1}))
for said, answered in [
    ("My favourite food is pizza", "that's good to know"),
    ("My favourite sport is soccer", "..."),
    ("I don't like the Celtics", "ok"),
]:
    vector_memory.save_context({"input": said}, {"output": answered})
print(vector_memory.load_memory_variables({"prompt": "what sport should i watch?"})["history"])
"""
    ),
    md(
        """
`AgentMemoryRecall` is a classic `BaseMemory`: in a **new thread**, it recalls what the user
said anywhere before and offers each new exchange to long-term memory.
"""
    ),
    code(
        """
from langchain_agentmem import AgentMemoryRecall

recall = AgentMemoryRecall(memory, namespace="alice", thread="chat-2", k=2)
chain = ConversationChain(
    llm=chat_model("How about a cello recital? Your Sundays are already musical."),
    memory=recall,
)
log = PromptLog()
answer = chain.invoke({"input": "Any idea for my Sunday afternoon?"}, config={"callbacks": [log]})
print("recalled:", [r.text for r in recall.last_recalled])
print("AI:", answer["response"])
"""
    ),
    md(
        """
## 4. A policy-managed memory

A policy decides what long-term memory keeps (`ADD` / `UPDATE` / `DELETE` / `NOOP`), and every
decision lands in the audit log with its reason. With `policy="fifo"` and `capacity=3`, the
oldest item is forgotten when a fourth arrives.
"""
    ),
    code(
        """
from langchain_agentmem import available_policies

print("policies:", ", ".join(available_policies()))

bounded = AgentMemory(f"sqlite:///{WORKDIR / 'bounded.db'}", policy="fifo", capacity=3)
for fact in [
    "Bob's cat is called Miso.",
    "Bob works night shifts at the hospital.",
    "Bob is learning Portuguese.",
    "Bob moved to Porto in March.",
    "Bob runs on Saturday mornings.",
]:
    ops = bounded.add(fact, namespace="bob", thread="chat-1")
    print(f"{fact:<42} -> {', '.join(op.kind.value for op in ops)}")

print()
print("kept:", [r.text for r in bounded.records("bob")])
"""
    ),
    md(
        """
The audit log (`memory.decisions(user)`): every op, in order, with its reason. Forgetting
forgets here too: once a record is deleted, its ADD entry keeps the op, id, reason and time,
but no longer its text.
"""
    ),
    code(
        """
for d in bounded.decisions("bob"):
    ids = ", ".join(r[:8] for r in d.record_ids)
    print(f"#{d.seq:<3} {d.kind.value:<6} {d.policy:<5} {d.reason}")
    print(f"     {d.text if d.text else '(no text kept) ' + ids}")
"""
    ),
    code(
        """
bounded.close()
memory.close()
"""
    ),
]


# -- 02: a LangGraph agent -----------------------------------------------------------------------
NB2: list[Cell] = [
    md(
        """
# A LangGraph agent that remembers its users

A LangGraph graph with two memory nodes:

- `recall_node` puts references to the memories relevant to the newest human message
  into the state (record ids and scores, never the text: the state is checkpointed, and a
  checkpoint must not keep a copy of a memory the user later deletes);
  `memories_message` reads their texts from the memory and turns them into a system
  message for the model;
- `policy_node` offers each turn to long-term memory through the policy (every decision is
  logged with its reason) and trims the thread's short-term state to a window.

The user comes from `config["configurable"]["user_id"]`, the conversation from `thread_id`.
Threads are checkpointed by LangGraph's `SqliteSaver`; long-term memory lives in
`AgentMemory`. Both are SQLite files, so the agent remembers the user across threads **and
across restarts**. At the end, the same memory serves a `create_agent` agent through
`AgentMemoryMiddleware`.
"""
    ),
    SETUP,
    MODEL_MD,
    MODEL,
    code(
        """
LLM = chat_model(
    "Nice to meet you, Maya!",
    "A half marathon in October, great goal. Build up slowly.",
    "How about a chickpea and spinach curry? It is vegetarian.",
    "I don't know anything about you yet.",
    "You are Maya, and you live in Porto.",
    "You told me you are vegetarian and live in Porto.",
    "Three easy runs, one long run and a rest day, building towards October.",
)
"""
    ),
    md("## The graph"),
    code(
        '''
import sqlite3

from langchain_core.messages import HumanMessage, SystemMessage
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph import START, StateGraph

from langchain_agentmem import (
    AgentMemory,
    RecallState,
    memories_message,
    policy_node,
    recall_node,
    recalled_memories,
)

STORE = f"sqlite:///{WORKDIR / 'memory.db'}"
CHECKPOINTS = WORKDIR / "checkpoints.db"


def build_agent(memory, checkpointer, llm):
    """recall -> chat -> remember, checkpointed."""

    def chat(state: RecallState, config):
        recalled = memories_message(state.get("memories"), memory)
        prompt = [SystemMessage("You are a friendly assistant."), *([recalled] if recalled else [])]
        return {"messages": [llm.invoke([*prompt, *state["messages"]], config)]}

    builder = StateGraph(RecallState)
    builder.add_node("recall", recall_node(memory, k=3))
    builder.add_node("chat", chat)
    builder.add_node("remember", policy_node(memory, window=4))
    builder.add_edge(START, "recall")
    builder.add_edge("recall", "chat")
    builder.add_edge("chat", "remember")
    return builder.compile(checkpointer=checkpointer)


def ask(agent, user, thread, text):
    """One turn; prints what was recalled and the answer."""
    config = {"configurable": {"user_id": user, "thread_id": thread}}
    out = agent.invoke({"messages": [HumanMessage(text)]}, config)
    print(f"[{user} / {thread}] Human: {text}")
    for record in recalled_memories(out["memories"], memory, config=config):
        print(f"    recalled ({record.score:.2f}, from {record.thread}): {record.text}")
    print(f"[{user} / {thread}] AI:    {out['messages'][-1].text}")
    return out


memory = AgentMemory(STORE)
connection = sqlite3.connect(CHECKPOINTS, check_same_thread=False)
agent = build_agent(memory, SqliteSaver(connection), LLM)
'''
    ),
    md("## One user, two threads"),
    code(
        """
ask(agent, "maya", "monday", "Hi, I'm Maya. I'm vegetarian and I live in Porto.")
ask(agent, "maya", "monday", "I'm training for a half marathon in October.");
"""
    ),
    md("A new thread starts with an empty conversation, but recalls what Maya said on Monday:"),
    code(
        """
ask(agent, "maya", "tuesday", "Can you suggest a dinner for tonight?");
"""
    ),
    md(
        """
Tuesday's checkpoint keeps only references to what was recalled (record ids and scores),
never the texts: `memories_message` reads them from the memory when the prompt is built, so
a memory Maya deletes is not told again from a saved state.
"""
    ),
    code(
        """
tuesday = agent.get_state({"configurable": {"user_id": "maya", "thread_id": "tuesday"}})
print("tuesday's checkpoint, recalled:", tuesday.values["memories"])
"""
    ),
    md("Another user's namespace is a hard partition: Leo recalls nothing of Maya."),
    code(
        """
out = ask(agent, "leo", "leo-1", "What do you know about me?")
print("memories recalled for leo:", len(out["memories"]))
"""
    ),
    md(
        """
## The audit log

Every turn was offered to long-term memory through the policy (here the default,
`keep_all`, which keeps everything); each decision is logged with its reason. A bounded
memory (`AgentMemory(..., policy="novelty", capacity=...)` or the learned policy) skips and
forgets, and says why in the same log.
"""
    ),
    code(
        """
def show_log(memory, user):
    for d in memory.decisions(user):
        print(f"#{d.seq:<3} {d.at:%H:%M:%S} {d.kind.value:<6} {d.policy:<8} {d.reason}")
        print(f"     text: {d.text}")


show_log(memory, "maya")
"""
    ),
    md(
        """
## Restart

Close everything, then open the same two files again, as a new process would. The new agent
recalls Maya in a new thread, and Monday's thread continues from its checkpoint.
"""
    ),
    code(
        """
memory.close()
connection.close()
del agent, memory, connection

memory = AgentMemory(STORE)
connection = sqlite3.connect(CHECKPOINTS, check_same_thread=False)
agent = build_agent(memory, SqliteSaver(connection), LLM)

ask(agent, "maya", "wednesday", "What's my name, and where do I live?");
"""
    ),
    code(
        """
monday = agent.get_state({"configurable": {"user_id": "maya", "thread_id": "monday"}})
print("monday's checkpoint after the restart:")
for message in monday.values["messages"]:
    print(f"{message.type:>6}: {message.text}")
"""
    ),
    code(
        """
ask(agent, "maya", "monday", "What do you remember about my diet?");
"""
    ),
    md(
        """
A separate Python process sees the same long-term memory (the store is the SQLite file; the
process loads its own copy of the embedding model):
"""
    ),
    code(
        '''
import subprocess
import sys

script = f"""
from langchain_agentmem import AgentMemory
with AgentMemory({STORE!r}) as memory:
    for record in memory.search("Is Maya vegetarian?", namespace="maya", k=1):
        print("another process recalls:", record.text)
    print("decisions logged for maya:", len(memory.decisions("maya")))
"""
result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
print(result.stdout)
'''
    ),
    md(
        """
## The same memory in `create_agent`

`AgentMemoryMiddleware` recalls into the system prompt of a `create_agent` agent and offers
each turn to long-term memory. Here it shares the store (and the checkpointer) with the graph
above, so the agent already knows Maya.
"""
    ),
    code(
        """
from langchain.agents import create_agent

from langchain_agentmem import AgentMemoryMiddleware

coach = create_agent(
    LLM,
    system_prompt="You are a running coach.",
    middleware=[AgentMemoryMiddleware(memory, k=3)],
    checkpointer=SqliteSaver(connection),
)
log = PromptLog()
out = coach.invoke(
    {"messages": [HumanMessage("Plan my training week.")]},
    {"configurable": {"user_id": "maya", "thread_id": "coach-1"}, "callbacks": [log]},
)
print("system prompt the model saw:")
print(log.prompts[-1].split("\\nHuman:")[0])
print()
print("AI:", out["messages"][-1].text)
"""
    ),
    code(
        """
show_log(memory, "maya")
memory.close()
connection.close()
"""
    ),
]


# -- 03: training and evaluating the memory policy ------------------------------------------------
NB3: list[Cell] = [
    md(
        """
# Training and evaluating the memory policy

An agent's long-term memory has a budget: it may hold only a share of what it is told. Which
items should it keep, so that later questions still find their answers? This notebook

1. loads conversations in the LoCoMo format (turns, then questions with the turns that hold
   their answers as evidence);
2. trains the learned retain/forget policy with PPO for a few thousand steps (seconds) and
   plots its learning curve on a conversation it never saw;
3. compares policies at several budgets: evidence recall@10 (the share of each question's
   evidence turns among the 10 kept turns that best match the question), plotted against
   the budget.

Training here is tiny, to run in seconds: the shipped policy (`policy="learned"`) was trained
for far longer; see the end for how to retrain on your own conversations. Training and the
plots need the `rl` extra: `pip install ".[rl]"` in a checkout of the repository (the shipped
policy itself runs on the core install).
"""
    ),
    SETUP,
    code(
        """
%matplotlib inline
import time

import matplotlib.pyplot as plt
"""
    ),
    md(
        """
## The data

Conversations in the LoCoMo format are read from the file `$AGENTMEM_LOCOMO` names (for
example `data/locomo10.json` of the LoCoMo repository). When it is unset, the notebook
writes its own: seeded synthetic conversations from
`langchain_agentmem.rl.synthetic_conversations` (two speakers chatting over dated sessions,
stating facts about themselves and changing some), so it runs as it is on a fresh clone; it
says which data it uses.
"""
    ),
    code(
        """
from langchain_agentmem.rl.data import embed_conversations, load_locomo
from langchain_agentmem.rl.synthetic_conversations import generate, write

if os.environ.get("AGENTMEM_LOCOMO"):
    DATA = Path(os.environ["AGENTMEM_LOCOMO"])
    print(f"data: LoCoMo-format file {DATA} (from $AGENTMEM_LOCOMO)")
else:
    DATA = write(WORKDIR / "synthetic.json", generate(4, seed=0))
    print(
        "data: AGENTMEM_LOCOMO is unset, so these are 4 seeded synthetic conversations "
        "(langchain_agentmem.rl.synthetic_conversations); set it to a LoCoMo file for real ones"
    )
conversations = [c for c in load_locomo(DATA) if c.questions]
print(
    f"conversations: {len(conversations)} ({sum(len(c.turns) for c in conversations)} turns, "
    f"{sum(len(c.questions) for c in conversations)} answerable questions) from {DATA.name}"
)
for c in conversations:
    print(f"  {c.sample_id}: {len(c.turns)} turns, {len(c.questions)} questions")
"""
    ),
    md(
        """
To stay quick, the notebook trains on one conversation and holds out another (the
embedding model runs over every turn and question once; that is most of the run time).
Each turn is one memory item, `"speaker: text"`.
"""
    ),
    code(
        """
by_id = {c.sample_id: c for c in conversations}
# Two LoCoMo conversations of different sizes when they are there, else the first two.
TRAIN = [by_id.get("conv-30", conversations[0])]
HELD_OUT = [by_id.get("conv-26", conversations[1])]

started = time.perf_counter()
embed_conversations(TRAIN + HELD_OUT)
print(
    f"embedded {sum(len(c.turns) + len(c.questions) for c in TRAIN + HELD_OUT)} texts "
    f"in {time.perf_counter() - started:.0f} s"
)
print("an item:", HELD_OUT[0].turns[0].text[:100])
print("a question:", HELD_OUT[0].questions[0].text)
"""
    ),
    md(
        """
## Training

`MemoryBudgetEnv` (a Gymnasium environment) offers the turns of a conversation one by one;
the policy gives each a priority, memory keeps the items of highest priority within the
budget, and the reward is the change in evidence recall@10 of the conversation's questions.
`train` runs PPO (stable-baselines3) on it and scores the network on the held-out
conversation as it learns. The network is exported to plain numpy: `LearnedPolicy` needs no
torch at run time.
"""
    ),
    code(
        """
from langchain_agentmem.rl.train import train

STEPS = 6144
result = train(
    TRAIN, val_convs=HELD_OUT, budgets=(0.1, 0.25), steps=STEPS, eval_every=1024, n_steps=256
)
print(
    f"trained {result.config['steps']} steps in {result.config['train_seconds']} s; "
    f"kept the network of step {result.config['selected_at_steps']}"
)
"""
    ),
    code(
        """
steps = [row["steps"] for row in result.curve]
fig, ax = plt.subplots(figsize=(7, 4))
ax.plot(steps, [row["train_episode_recall"] for row in result.curve], label="training episodes")
for budget in ("0.1", "0.25"):
    ax.plot(
        steps,
        [row[f"heldout_recall@10/{budget}"] for row in result.curve],
        marker="o",
        label=f"held out ({HELD_OUT[0].sample_id}), budget {budget}",
    )
ax.set_xlabel("environment steps")
ax.set_ylabel("evidence recall@10")
ax.set_title("Learning curve (tiny run)")
ax.grid(alpha=0.3)
ax.legend()
plt.show()
print("learning curve points:", len(result.curve))
"""
    ),
    md(
        """
A run this short barely moves the network from where it starts (the importance rule's
score plus a correction near zero), and `train` keeps the network that scores best on the
training conversation, which may be the first one. The curve shows how PPO is driven and
scored, not what long training reaches.
"""
    ),
    md(
        """
## Recall against the budget

Every policy replays the held-out conversation at each budget (the same policy objects
`AgentMemory` uses, without the store in between). The heuristics: `fifo` keeps the newest
items, `random` a random sample, `importance` scores names, numbers, dates and length,
`novelty` discounts what memory already knows. The oracle knows which turns the questions
need: an upper reference, not a policy.
"""
    ),
    code(
        """
from langchain_agentmem.policies.learned import LearnedPolicy, load_policy
from langchain_agentmem.rl.evaluate import evaluate, heuristic_factories
from langchain_agentmem.rl.report import markdown

BUDGETS = (0.05, 0.1, 0.25, 0.5)
policies = heuristic_factories(("fifo", "random", "importance", "novelty"))
policies["learned (this notebook)"] = lambda cap, conv: LearnedPolicy(cap, layers=result.layers)
shipped_layers, shipped = load_policy()  # the policy behind policy="learned"
seen = set(shipped.get("trained_on", [])) & {c.sample_id for c in HELD_OUT}
label = "learned (shipped" + (", saw this conversation)" if seen else ")")
policies[label] = lambda cap, conv: LearnedPolicy(cap, layers=shipped_layers)
print(f"shipped policy: {shipped['steps']} steps on {', '.join(shipped['trained_on'])}")
if "cross_validation" in shipped:
    unseen = {b: round(row["learned"], 3) for b, row in shipped["cross_validation"].items()}
    print("  cross-validated recall@10 on conversations it never saw:", unseen)

table = evaluate(policies, HELD_OUT, BUDGETS)
print(markdown(table))
"""
    ),
    code(
        """
fig, ax = plt.subplots(figsize=(7, 4))
for name in table[f"{BUDGETS[0]:g}"]:
    ax.plot(
        [100 * b for b in BUDGETS],
        [table[f"{b:g}"][name]["recall@10"] for b in BUDGETS],
        marker="o",
        linestyle="--" if name.startswith("oracle") else "-",
        label=name,
    )
ax.set_xlabel("budget (% of the turns memory may hold)")
ax.set_ylabel("evidence recall@10")
ax.set_title(f"Recall against the budget ({HELD_OUT[0].sample_id}, held out)")
ax.grid(alpha=0.3)
ax.legend(fontsize=8)
plt.show()
for name, row in table["0.1"].items():
    print(f"budget 0.1  {name:<40} recall@10 {row['recall@10']:.3f}")
"""
    ),
    md(
        """
## The trained policy in `AgentMemory`

A trained network is two small files (`policy.npz`, loaded without pickle, and
`policy.json`). `AgentMemory` takes it as its policy; every keep, skip and eviction is
logged with the priority that decided it.
"""
    ),
    code(
        """
from langchain_agentmem import AgentMemory
from langchain_agentmem.policies.learned import save_policy

policy_dir = save_policy(WORKDIR / "my-policy", result.layers)
memory = AgentMemory(
    f"sqlite:///{WORKDIR / 'memory.db'}", policy=LearnedPolicy(capacity=3, path=policy_dir)
)
for text in [
    "Caroline: Hey Mel! Good to see you!",
    "Melanie: I went to the LGBTQ support group on 7 May 2023; it was so powerful.",
    "Caroline: lol, yeah.",
    "Melanie: I'm painting a lake sunrise, I started it last year in 2022.",
    "Caroline: I'm keen on counseling and mental health jobs, I applied to three in June.",
]:
    memory.add(text, namespace="caroline")
for d in memory.decisions("caroline"):  # a forgotten record's text leaves the log too
    ids = ", ".join(r[:8] for r in d.record_ids)
    print(f"#{d.seq:<3} {d.kind.value:<6} {d.reason}")
    print(f"     {d.text if d.text else '(no text kept) ' + ids}")
print()
print("kept:")
for record in memory.records("caroline"):
    print("  ", record.text)
memory.close()
"""
    ),
    md(
        """
## Training for real

The shipped policy was trained with the same code for far more steps (see its
`policy.json`: steps, conversations, held-out scores). To train one on your own
conversations (LoCoMo JSON format) and use it:

```bash
agentmem train --data my_conversations.json --out my-policy --budget 0.1,0.25 --steps 200000
```

```python
from langchain_agentmem import AgentMemory
from langchain_agentmem.policies.learned import LearnedPolicy

memory = AgentMemory("sqlite:///memory.db", policy=LearnedPolicy(1000, path="my-policy"))
```

`agentmem train` holds out the last `--holdout` conversations, writes the learning curve next
to the policy, and prints the held-out recall@10 at each budget.
"""
    ),
]


NOTEBOOKS: dict[str, list[Cell]] = {
    "01_langchain_memories.ipynb": NB1,
    "02_langgraph_agent.ipynb": NB2,
    "03_memory_policy.ipynb": NB3,
}


CLEANUP: list[Cell] = [
    md("Remove the temporary folder (skip this cell to look at the files first)."),
    code(
        """
import shutil

shutil.rmtree(WORKDIR)
print("removed", WORKDIR)
"""
    ),
]


def build(cells: list[Cell]) -> nbformat.NotebookNode:
    """A notebook (no outputs) from the cells, ending with the clean-up cells."""
    cells = [*cells, *CLEANUP]
    nb = new_notebook()
    nb.metadata = {
        "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
        "language_info": {"name": "python"},
    }
    for i, (kind, source) in enumerate(cells):
        cell = new_markdown_cell(source) if kind == "markdown" else new_code_cell(source)
        cell.id = f"cell-{i:02d}"
        nb.cells.append(cell)
    return nb


def main(argv: list[str]) -> int:
    names = argv or list(NOTEBOOKS)
    for name in names:
        nb = build(NOTEBOOKS[name])
        nbformat.validate(nb)
        nbformat.write(nb, HERE / name)
        print("wrote", HERE / name)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
