"""Context formats: the registry, auto-detection, the Responses API and Anthropic's compaction block."""

from __future__ import annotations

import pytest

from ctxaudit.engine import ContextPair, Rule, parse_context, run_checks
from ctxaudit.engine.formats import FORMATS, READERS, ContextFormatError, detect_format
from ctxaudit.engine.tokens import CharCounter

SYSTEM = "You are the billing assistant of Acme."


def test_every_registered_format_is_a_module_with_its_name_detect_and_read() -> None:
    assert FORMATS[0] == "auto"
    assert (
        set(FORMATS[1:])
        == set(READERS)
        >= {"openai", "openai-responses", "anthropic", "langchain", "generic"}
    )
    for name, reader in READERS.items():
        assert name == reader.NAME
        assert callable(reader.detect) and callable(reader.read)


@pytest.mark.parametrize(
    ("raw", "fmt"),
    [
        ({"instructions": SYSTEM, "input": [{"role": "user", "content": "hi"}]}, "openai-responses"),
        (
            [{"type": "function_call", "call_id": "c1", "name": "refund", "arguments": "{}"}],
            "openai-responses",
        ),
        ([{"role": "user", "content": [{"type": "input_text", "text": "hi"}]}], "openai-responses"),
        ({"system": SYSTEM, "messages": []}, "anthropic"),
        ([{"role": "assistant", "content": [{"type": "compaction", "content": "Summary."}]}], "anthropic"),
        ([{"type": "human", "data": {"content": "hi"}}], "langchain"),
        ([{"role": "tool", "tool_call_id": "x", "content": "ok"}], "openai"),
        ([{"role": "user", "content": "hi"}], "openai"),
        ("plain text", "generic"),
    ],
)
def test_auto_detection_picks_the_most_specific_format(raw: object, fmt: str) -> None:
    assert detect_format(raw) == fmt


def test_a_responses_history_reads_as_messages_calls_and_outputs() -> None:
    ctx = parse_context(
        {
            "instructions": SYSTEM,
            "input": [
                {"role": "user", "content": [{"type": "input_text", "text": "Refund order 7."}]},
                {"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": "think"}]},
                {"type": "function_call", "call_id": "call_9", "name": "refund", "arguments": '{"order": 7}'},
                {"type": "function_call_output", "call_id": "call_9", "output": '{"status": "declined"}'},
                {
                    "type": "message",
                    "role": "assistant",
                    "content": [{"type": "output_text", "text": "The refund was declined."}],
                },
            ],
        },
        format="openai-responses",
    )
    assert [(m.role, m.name, m.content) for m in ctx.messages] == [
        ("system", None, SYSTEM),
        ("user", None, "Refund order 7."),
        ("assistant", None, '[tool call refund({"order": 7})]'),
        ("tool", "refund", '{"status": "declined"}'),
        ("assistant", None, "The refund was declined."),
    ]


def test_an_encrypted_responses_compaction_is_counted_as_unauditable() -> None:
    before = parse_context(
        [{"role": "system", "content": "Never refund more than $100."}, {"role": "user", "content": "hi"}]
    )
    after = parse_context(
        [
            {"role": "system", "content": "Never refund more than $100."},
            {"type": "compaction", "id": "cmp_1", "encrypted_content": "gAAAAB-opaque"},
        ]
    )
    report = run_checks(
        ContextPair(before, after, rules=(Rule("R1", "Never refund more than $100."),)), counter=CharCounter()
    )
    assert report.unauditable_compactions == 1
    assert "unauditable_compaction" in {f.kind for f in report.findings}


def test_anthropic_compaction_block_is_the_summary_and_hides_what_came_before_it() -> None:
    after = parse_context(
        {
            "system": SYSTEM,
            "messages": [
                {"role": "user", "content": "From now on, never email invoices to personal addresses."},
                {
                    "role": "assistant",
                    "content": [{"type": "compaction", "content": "The user asked about invoices."}],
                },
                {"role": "user", "content": "Send March's invoice."},
            ],
        },
        format="anthropic",
    )
    assert [(m.role, m.kind, m.content) for m in after.messages] == [
        ("system", None, SYSTEM),
        ("assistant", "compact_summary", "The user asked about invoices."),
        ("user", None, "Send March's invoice."),
    ]


def test_a_rule_the_anthropic_compaction_summary_drops_is_missing_not_unauditable() -> None:
    rule = "Never email invoices to personal addresses."
    before = parse_context(
        {"system": f"{SYSTEM} {rule}", "messages": [{"role": "user", "content": "Send March's invoice."}]}
    )
    after = parse_context(
        {
            "system": SYSTEM,
            "messages": [
                {"role": "user", "content": "Send March's invoice."},
                {
                    "role": "assistant",
                    "content": [{"type": "compaction", "content": "The user wants March's invoice sent."}],
                },
            ],
        }
    )
    report = run_checks(ContextPair(before, after, rules=(Rule("R1", rule),)), counter=CharCounter())
    assert [r.state.value for r in report.rules] == ["missing"]
    assert report.unauditable_compactions == 0


def test_a_failed_anthropic_compaction_null_content_is_an_empty_summary() -> None:
    after = parse_context(
        {
            "system": SYSTEM,
            "messages": [{"role": "assistant", "content": [{"type": "compaction", "content": None}]}],
        }
    )
    assert [(m.kind, m.content) for m in after.messages] == [(None, SYSTEM), ("compact_summary", "")]


def test_a_bad_responses_item_names_its_field() -> None:
    with pytest.raises(ContextFormatError) as exc:
        parse_context(
            {"input": [{"role": "user", "content": "ok"}, 5]}, field="after", format="openai-responses"
        )
    assert exc.value.field == "after.input[1]"


@pytest.mark.parametrize(
    ("name", "family"),
    [
        ("auto-compact", "summary"),
        ("condensation", "summary"),
        ("LLMSummarizingCondenser", "summary"),
        ("role-separated", "role_separated"),
        ("sliding_window", "truncation"),
        ("RecentEventsCondenser", "truncation"),
        ("structured summary", "structured"),
        ("RAG", "retrieval"),
        ("key_messages", "key_messages"),
        ("storage", "other"),
        ("", "other"),
        (None, "other"),
    ],
)
def test_strategy_names_map_to_their_family(name: str | None, family: str) -> None:
    from ctxaudit.engine.strategies import strategy_family

    assert strategy_family(name) == family
