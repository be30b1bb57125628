"""LangChain v1 agent middleware that posts each summarization to ctxaudit.

Place it *after* LangChain's SummarizationMiddleware (`create_agent(..., middleware=[
SummarizationMiddleware(...), CtxauditMiddleware(client)])`). Read from langchain 1.5.2
(`langchain/agents/middleware/summarization.py`, `types.py`, PyPI): SummarizationMiddleware's
`before_model` replaces the state's messages with `RemoveMessage(REMOVE_ALL_MESSAGES)`, one
`HumanMessage` "Here is a summary of the conversation to date:…" carrying
`additional_kwargs={"lc_source": "summarization"}`, then the preserved recent messages. Every
model call then goes through `wrap_model_call(request, handler)` with `request.messages` (the
state's messages) and `request.system_message`.

How the before-context is known: at each model call this middleware keeps what the model saw
(system message + messages), the model's answer and, through `wrap_tool_call`, the tool results
that follow. When a model call starts with a summary message it has not seen yet, a
summarization just happened: before = what it kept, plus any message of the new state it had
not seen (e.g. a user turn added since); after = the system message, the summary and the
preserved messages. That pair is posted to POST /api/v1/events, or with `gate=True` to
POST /api/v1/gate; with `fail_closed=True` (the default with the gate) a "fail" verdict (any
verdict but "pass" or "no_rules"), or no answer, raises `CompactionBlocked` before the model
runs on the compacted context.

What it cannot see: a summarization on the very first model call of a process (nothing kept
yet; it is skipped with a warning), and tool results produced through a `Command` rather than a
`ToolMessage`. Optional dependency: `pip install 'ctxaudit-client[langchain]'` (or langchain>=1).
"""

from __future__ import annotations

import logging
import threading
import uuid
from collections.abc import Awaitable, Callable
from typing import Any

try:
    from langchain.agents.middleware import AgentMiddleware
    from langchain_core.messages import AIMessage, BaseMessage, ToolMessage, convert_to_openai_messages
except ImportError as exc:  # pragma: no cover - exercised only without langchain
    raise ImportError(
        "ctxaudit.integrations.langchain needs LangChain v1: pip install 'langchain>=1' "
        "(or pip install './clients/python[langchain]')"
    ) from exc

from ctxaudit.client import ApiError, Client, GateResult, Unavailable

logger = logging.getLogger(__name__)
SUMMARY_SOURCE = "summarization"  # SummarizationMiddleware's additional_kwargs["lc_source"]


class CompactionBlocked(RuntimeError):
    """The gate did not pass this summarization (or could not be asked, with fail_closed).

    result: the GateResult (None when the gate gave no answer); reason: why, in words.
    """

    def __init__(self, reason: str, result: GateResult | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.result = result


def is_summary(message: Any) -> bool:
    """True for SummarizationMiddleware's summary message (`lc_source: "summarization"`)."""
    kwargs = getattr(message, "additional_kwargs", None) or {}
    return isinstance(kwargs, dict) and kwargs.get("lc_source") == SUMMARY_SOURCE


def _thread_id() -> str:
    try:
        from langgraph.config import get_config

        configurable = get_config().get("configurable") or {}
        value = configurable.get("thread_id")
        return str(value) if value is not None else "default"
    except Exception:  # noqa: BLE001 - outside a graph run there is no config
        return "default"


class _Thread:
    """What one conversation thread's model saw last."""

    def __init__(self) -> None:
        self.system: BaseMessage | None = None
        self.messages: list[BaseMessage] = []
        self.summary_ids: set[str] = set()
        self.sequence = 0


class CtxauditMiddleware(AgentMiddleware):  # type: ignore[misc]  # langchain is Any to mypy (pyproject)
    """Posts each summarization's before and after to ctxaudit.

    client: a ctxaudit.client.Client; session_id: the event's session (default: the run's
    `thread_id`, else "default"); rules: [{"id", "text", "severity"?}] sent with every event
    (default: the project's rule set, else rules extracted from the before-context);
    gate: ask POST /api/v1/gate instead of posting; fail_closed: with the gate, raise
    CompactionBlocked when the verdict blocks (`GateResult.blocks`) or the gate gives no answer
    (default True); metadata: added to each event.
    """

    def __init__(
        self,
        client: Client,
        *,
        session_id: str | None = None,
        rules: list[dict[str, Any]] | None = None,
        gate: bool = False,
        fail_closed: bool = True,
        metadata: dict[str, Any] | None = None,
    ) -> None:
        super().__init__()
        self.client = client
        self.session_id = session_id
        self.rules = rules
        self.gate = gate
        self.fail_closed = fail_closed
        self.metadata = dict(metadata or {})
        self.results: list[GateResult | None] = []  # gate answers, newest last (for callers and tests)
        self._threads: dict[str, _Thread] = {}
        self._lock = threading.Lock()

    # --- bookkeeping ----------------------------------------------------------------------

    def _thread(self) -> _Thread:
        with self._lock:
            return self._threads.setdefault(_thread_id(), _Thread())

    @staticmethod
    def _as_json(system: BaseMessage | None, messages: list[BaseMessage]) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = list(convert_to_openai_messages([system] if system is not None else []))
        for message in messages:
            converted = convert_to_openai_messages([message])
            for item in converted:
                if is_summary(message):
                    item = {**item, "kind": "compact_summary"}
                out.append(item)
        return out

    def _before_model(self, request: Any) -> None:
        """Detect a new summary at the head of the request; post (or gate) the pair."""
        thread = self._thread()
        current: list[BaseMessage] = list(request.messages)
        head = current[0] if current else None
        if head is not None and is_summary(head) and (head.id or "") not in thread.summary_ids:
            thread.summary_ids.add(head.id or "")
            if thread.messages:
                seen = {m.id for m in thread.messages if m.id}
                before = thread.messages + [m for m in current if m.id not in seen and not is_summary(m)]
                self._send(
                    thread,
                    request.system_message or thread.system,
                    before,
                    request.system_message,
                    current,
                    head,
                )
            else:
                logger.warning("ctxaudit: a summarization before any model call was seen; not posted")
        thread.system = request.system_message
        thread.messages = current

    def _after_model(self, response: Any) -> None:
        thread = self._thread()
        for message in getattr(response, "result", None) or []:
            if isinstance(message, AIMessage):
                thread.messages = [*thread.messages, message]

    def _after_tool(self, result: Any) -> None:
        if isinstance(result, ToolMessage):
            thread = self._thread()
            thread.messages = [*thread.messages, result]

    def _send(
        self,
        thread: _Thread,
        before_system: BaseMessage | None,
        before: list[BaseMessage],
        after_system: BaseMessage | None,
        after: list[BaseMessage],
        summary: BaseMessage,
    ) -> None:
        thread.sequence += 1
        session = self.session_id or _thread_id()
        body: dict[str, Any] = {
            "session_id": session[:200],
            "sequence": thread.sequence,
            "strategy": "summary",
            "format": "openai",
            "before": self._as_json(before_system, before),
            "after": self._as_json(after_system, after),
            "metadata": {**self.metadata, "source": "langchain:SummarizationMiddleware"},
        }
        if self.rules:
            body["rules"] = self.rules
        key = f"langchain:{session[:100]}:{summary.id or uuid.uuid4()}"
        if not self.gate:
            try:
                self.client.post_event(body, idempotency_key=key)
            except (Unavailable, ApiError) as exc:
                logger.warning("ctxaudit: could not post the summarization: %s", exc)
            return
        try:
            result: GateResult | None = self.client.gate(body, idempotency_key=key)
        except (Unavailable, ApiError) as exc:
            self.results.append(None)
            if self.fail_closed:
                raise CompactionBlocked(f"ctxaudit gate gave no answer: {exc}") from exc
            logger.warning("ctxaudit: the gate gave no answer: %s", exc)
            return
        self.results.append(result)
        if self.fail_closed and result is not None and result.blocks:
            lost = ", ".join(f"{r.id} {r.state}" for r in result.rules) or "no rule named"
            raise CompactionBlocked(
                f"ctxaudit gate: verdict {result.verdict} ({lost}); {result.ui_url}", result
            )

    # --- middleware hooks -----------------------------------------------------------------

    def wrap_model_call(self, request: Any, handler: Callable[[Any], Any]) -> Any:
        self._before_model(request)
        response = handler(request)
        self._after_model(response)
        return response

    async def awrap_model_call(self, request: Any, handler: Callable[[Any], Awaitable[Any]]) -> Any:
        # The client is synchronous (stdlib HTTP); its calls are short and bounded by its timeout.
        self._before_model(request)
        response = await handler(request)
        self._after_model(response)
        return response

    def wrap_tool_call(self, request: Any, handler: Callable[[Any], Any]) -> Any:
        result = handler(request)
        self._after_tool(result)
        return result

    async def awrap_tool_call(self, request: Any, handler: Callable[[Any], Awaitable[Any]]) -> Any:
        result = await handler(request)
        self._after_tool(result)
        return result
