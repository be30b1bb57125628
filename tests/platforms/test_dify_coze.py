"""Dify and Coze: an exported app configuration + one conversation's message pages → one event
per point where the memory window dropped messages, with the context the model then saw.
Inputs in data/ were written for these tests in each platform's format (sources: README.md)."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from ctxaudit.engine.cli import main
from ctxaudit.engine.platforms import PLATFORMS, PlatformError, conversation_events
from ctxaudit.ingest.models import Event

DATA = Path(__file__).parent / "data"
DIFY_SYSTEM = "You are the refund desk of Acme. Never promise a refund above 100 EUR."
GERMAN = "From now on, always answer in German."


def _files(*names: str) -> list[tuple[str, str]]:
    return [(n, (DATA / n).read_text(encoding="utf-8")) for n in names]


def _dify(context_tokens: int | None = None, config: str = "dify_refund_desk.yml", *pages: str):
    pages = pages or ("dify_messages_page1.json", "dify_messages_page2.json")
    return PLATFORMS["dify"](_files(config)[0], _files(*pages), context_tokens=context_tokens)


def test_dify_window_of_two_rounds_drops_the_oldest_round_twice() -> None:
    conversation = _dify()
    assert conversation.max_rounds == 2
    assert conversation.system is not None and conversation.system.content == DIFY_SYSTEM
    events = conversation_events(conversation)
    assert [b["metadata"]["round"] for _, b in events] == [5, 6]  # round 3 failed: not in memory
    key, first = events[0]
    assert key == "dify:8c1f0e2a-4b3d-4f5e-9a6b-7c8d9e0f1a2b:b0a1c2d3-0000-4000-8000-000000000005"
    assert (first["session_id"], first["sequence"], first["strategy"]) == (
        "8c1f0e2a-4b3d-4f5e-9a6b-7c8d9e0f1a2b",
        1,
        "truncation",
    )
    before = [m["content"] for m in first["before"]]
    after = [m["content"] for m in first["after"]]
    assert before[0] == after[0] == DIFY_SYSTEM
    assert before[1] == GERMAN and GERMAN not in after
    assert len(before) == 1 + 6 + 1 and len(after) == 1 + 4 + 1
    assert after[-1] == "Can you refund 250 EUR today?"
    assert "How long does it take?" not in before  # the failed round never entered memory
    assert first["metadata"]["messages_dropped"] == 2 and first["metadata"]["history_messages_kept"] == 4
    assert first["metadata"]["llm_node"] == "LLM" and first["model"] == "gpt-4o-mini"
    assert first["occurred_at"].startswith("2025-12-01T10:04:00")


def test_dify_chat_app_replays_the_token_budget_only_when_the_context_size_is_given() -> None:
    pages = ("dify_chat_messages.json",)
    assert conversation_events(_dify(None, "dify_order_helper_chat.yml", *pages)) == []
    conversation = _dify(400, "dify_order_helper_chat.yml", *pages)
    assert conversation.system is not None
    assert conversation.system.content == "You help Mia with orders. Never share card numbers."
    events = conversation_events(conversation)
    assert [(b["metadata"]["round"], b["metadata"]["messages_dropped"]) for _, b in events] == [(4, 2)]
    after = [m["content"].split()[0] for m in events[0][1]["after"][1:]]
    assert after == ["delta", "echo", "fox", "hotel", "metal"]


def test_coze_context_round_window_within_a_section() -> None:
    conversation = PLATFORMS["coze"](_files("coze_bot.json")[0], _files("coze_messages.json"))
    assert conversation.max_rounds == 1
    assert [len(s) for s in conversation.sections] == [3, 2]
    events = conversation_events(conversation)
    assert len(events) == 1  # the cleared context (a new section) is not a drop
    key, body = events[0]
    assert key == "coze:7441600000000000100:7441600000000000003"
    roles = [m["role"] for m in body["before"]]
    assert roles == ["system", "user", "assistant", "user", "assistant", "tool", "assistant", "user"]
    assert body["before"][1]["content"] == "以后都用中文回答，并且每次都先确认订单号。"
    assert body["before"][4]["content"].startswith("[tool call {")
    assert [m["content"] for m in body["after"][1:]] == [
        "订单 A1001 还没发货。",
        body["before"][4]["content"],
        '{"status":"待发货","amount":350}',
        "订单 A1001 目前待发货，金额 350 元。",
        "那直接给我退款吧。",
    ]
    assert "如何查询物流？" not in json.dumps(body, ensure_ascii=False)  # follow_up is not context
    assert body["metadata"]["context_round"] == 1 and body["model"] == "豆包·1.5·Pro·32k"


def test_bad_exports_name_the_file() -> None:
    with pytest.raises(PlatformError, match="coze_bot.json: not a Dify DSL export"):
        PLATFORMS["dify"](_files("coze_bot.json")[0], _files("dify_messages_page1.json"))
    with pytest.raises(PlatformError, match="dify_refund_desk.yml: not valid JSON"):
        PLATFORMS["coze"](_files("dify_refund_desk.yml")[0], _files("coze_messages.json"))


def test_dry_run_prints_the_events() -> None:
    out, err = io.StringIO(), io.StringIO()
    code = main(
        [
            "import",
            "coze",
            "--config",
            str(DATA / "coze_bot.json"),
            "--messages",
            str(DATA / "coze_messages.json"),
            "--dry-run",
        ],
        stdout=out,
        stderr=err,
    )
    assert code == 0
    lines = [json.loads(line) for line in out.getvalue().splitlines()]
    assert [line["idempotency_key"] for line in lines] == ["coze:7441600000000000100:7441600000000000003"]
    assert "5 round(s), 1 window drop(s)" in err.getvalue()


@pytest.mark.django_db(transaction=True)
def test_import_posts_each_drop_once_and_the_dropped_rule_is_missing(
    live_server, api_key, monkeypatch
) -> None:
    monkeypatch.setenv("CTXAUDIT_URL", live_server.url)
    monkeypatch.setenv("CTXAUDIT_API_KEY", api_key)
    args = [
        "import",
        "dify",
        "--config",
        str(DATA / "dify_refund_desk.yml"),
        "--messages",
        str(DATA / "dify_messages_page1.json"),
        str(DATA / "dify_messages_page2.json"),
    ]
    out = io.StringIO()
    assert main(args, stdout=out, stderr=io.StringIO()) == 0
    assert "2 new event(s), 0 already there" in out.getvalue()
    out = io.StringIO()
    assert main(args, stdout=out, stderr=io.StringIO()) == 0
    assert "0 new event(s), 2 already there" in out.getvalue()
    first = Event.objects.order_by("sequence").first()
    assert first is not None and first.status == "checked"
    states = {r["text"]: r["state"] for r in first.report["rules"]}
    assert states.get(GERMAN) == "missing"
