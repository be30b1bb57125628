"""ctxaudit.integrations.langchain with the real `langchain` package (LangChain v1 create_agent +
SummarizationMiddleware) and a real ctxaudit server; skipped when langchain is not installed."""

from __future__ import annotations

import pytest

pytest.importorskip("langchain.agents", reason="langchain (v1) is not installed: pip install 'langchain>=1'")

from langchain.agents import create_agent  # noqa: E402
from langchain.agents.middleware import SummarizationMiddleware  # noqa: E402
from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel  # noqa: E402
from langchain_core.messages import AIMessage, HumanMessage  # noqa: E402
from langgraph.checkpoint.memory import InMemorySaver  # noqa: E402

from ctxaudit.client import Client  # noqa: E402
from ctxaudit.ingest.models import Event  # noqa: E402
from ctxaudit.integrations.langchain import CompactionBlocked, CtxauditMiddleware, is_summary  # noqa: E402

SYSTEM = "You are the billing assistant of Acme."
RULE = "From now on, never refund more than 100 EUR without a manager's approval."
SUMMARY = "The user asked about refunds for order 4411 and the assistant looked it up."


def _agent(middleware: CtxauditMiddleware, answers: FakeMessagesListChatModel):
    summarizer = FakeMessagesListChatModel(responses=[AIMessage(content=SUMMARY)])
    return create_agent(
        answers,
        system_prompt=SYSTEM,
        middleware=[
            SummarizationMiddleware(summarizer, trigger=("messages", 5), keep=("messages", 2)),
            middleware,
        ],
        checkpointer=InMemorySaver(),
    )


def _answers() -> FakeMessagesListChatModel:
    return FakeMessagesListChatModel(
        responses=[AIMessage(content="Order 4411 is 240 EUR."), AIMessage(content="Done.")]
    )


def _talk(agent, thread: str) -> None:
    config = {"configurable": {"thread_id": thread}}
    agent.invoke(
        {"messages": [HumanMessage(RULE), AIMessage("Understood."), HumanMessage("Look up order 4411.")]},
        config,
    )
    agent.invoke({"messages": [HumanMessage("Refund it in full.")]}, config)


@pytest.mark.django_db(transaction=True)
def test_each_summarization_is_posted_with_its_before_and_after(live_server, api_key) -> None:
    middleware = CtxauditMiddleware(Client(live_server.url, api_key), metadata={"app": "billing"})
    _talk(_agent(middleware, _answers()), "thread-7")

    event = Event.objects.get()
    assert (event.session.external_id, event.sequence, event.strategy) == ("thread-7", 1, "summary")
    before = [m["content"] for m in event.before]
    assert before[0] == SYSTEM and before[1] == RULE
    assert "Order 4411 is 240 EUR." in before and before[-1] == "Refund it in full."
    after = event.after
    assert after[0]["content"] == SYSTEM
    assert after[1]["kind"] == "compact_summary" and SUMMARY in after[1]["content"]
    assert [m["content"] for m in after[2:]] == ["Order 4411 is 240 EUR.", "Refund it in full."]
    assert event.metadata == {"app": "billing", "source": "langchain:SummarizationMiddleware"}


@pytest.mark.django_db(transaction=True)
def test_the_gate_fails_closed_before_the_model_sees_the_compacted_context(live_server, api_key) -> None:
    rules = [{"id": "R-refund", "text": RULE, "severity": "critical"}]
    middleware = CtxauditMiddleware(Client(live_server.url, api_key), rules=rules, gate=True)
    answers = _answers()
    with pytest.raises(CompactionBlocked) as info:
        _talk(_agent(middleware, answers), "thread-8")
    result = info.value.result
    assert result is not None and result.verdict == "fail"
    assert [(r.id, r.state) for r in result.rules] == [("R-refund", "missing")]
    assert answers.i == 1  # the model answered the first turn only, never the compacted one
    assert Event.objects.get().status == "checked"


def test_summary_messages_are_recognised_by_their_lc_source() -> None:
    assert is_summary(HumanMessage("x", additional_kwargs={"lc_source": "summarization"}))
    assert not is_summary(HumanMessage("Here is a summary of the conversation to date:"))


@pytest.mark.django_db(transaction=True)
def test_async_agents_post_too(live_server, api_key) -> None:
    import asyncio

    middleware = CtxauditMiddleware(Client(live_server.url, api_key), session_id="billing-async")
    agent = _agent(middleware, _answers())
    config = {"configurable": {"thread_id": "t-async"}}

    async def talk() -> None:
        first = [HumanMessage(RULE), AIMessage("Understood."), HumanMessage("Look up order 4411.")]
        await agent.ainvoke({"messages": first}, config)
        await agent.ainvoke({"messages": [HumanMessage("Refund it in full.")]}, config)

    asyncio.run(talk())
    event = Event.objects.get()
    assert event.session.external_id == "billing-async"
    assert event.before[1]["content"] == RULE and event.after[1]["kind"] == "compact_summary"


@pytest.mark.django_db(transaction=True)
def test_a_second_summarization_is_a_second_event_whose_before_holds_the_first_summary(
    live_server, api_key
) -> None:
    middleware = CtxauditMiddleware(Client(live_server.url, api_key))
    answers = FakeMessagesListChatModel(
        responses=[
            AIMessage(content="Order 4411 is 240 EUR."),
            AIMessage(content="Done."),
            AIMessage(content="Sent."),
        ]
    )
    agent = _agent(middleware, answers)
    _talk(agent, "thread-9")
    agent.invoke(
        {"messages": [HumanMessage("Email me the receipt.")]}, {"configurable": {"thread_id": "thread-9"}}
    )

    first, second = Event.objects.order_by("sequence")
    assert (first.sequence, second.sequence) == (1, 2)
    assert second.before[1]["kind"] == "compact_summary"  # the first summary, now being summarized
    assert second.before[-1]["content"] == "Email me the receipt."
    assert second.after[1]["kind"] == "compact_summary"
