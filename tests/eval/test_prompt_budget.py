"""Every golden question's prompt fits the configured model context (issue 15): rows and computed figures
always, excerpts by rank while they fit."""
from __future__ import annotations

from carenav_core.chat.budget import messages_tokens
from carenav_core.chat.pipeline import chat_budget, prepare
from carenav_core.eval.golden import golden_set


def test_every_golden_prompt_fits_the_configured_context(backends, oracle):
    budget = chat_budget(backends.settings)
    over, trimmed = [], 0
    for question in golden_set(oracle, seed=7):
        prepared = prepare(question.text, backends)
        if messages_tokens(prepared.messages) > budget.prompt_tokens:
            over.append((question.text, messages_tokens(prepared.messages)))
        trimmed += prepared.dropped_excerpts > 0
    assert not over, over[:5]
    assert trimmed < 180                  # excerpts are dropped only where the rows leave no room


def test_a_small_context_keeps_rows_and_drops_excerpts(backends):
    small = backends.settings.model_copy(update={"llm_num_ctx": 2048, "llm_num_predict_chat": 384})
    import dataclasses
    prepared = prepare("How is 99490 valued?", dataclasses.replace(backends, settings=small))
    content = prepared.messages[1]["content"]
    assert messages_tokens(prepared.messages) <= 2048 - 384 and prepared.dropped_excerpts > 0
    assert all(r.label in content for r in prepared.rows if r.in_focus)
