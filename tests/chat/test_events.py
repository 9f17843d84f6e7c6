"""Events serialise to one JSON line each, Decimals as exact strings."""
from __future__ import annotations

import json

from carenav_core.chat.answer import Answer
from carenav_core.chat.events import (DoneEvent, EventType, SourcesEvent, TokenEvent, ValuationEvent, WarningEvent,
                                      WarningKind, provenance_for)
from tests.chat.values import EXCERPT, G0556, PROPOSED_2027


def test_valuation_event_json_keeps_exact_decimals():
    event = ValuationEvent(codes=("G0556",), families=("apcm",), rows=(G0556, PROPOSED_2027),
                           provenance=provenance_for((G0556, G0556, PROPOSED_2027)), unpriced=("G9999",))
    data = json.loads(event.to_json())
    assert data["type"] == "valuation"
    assert data["rows"][0]["payment_nonfac"] == "15.20" and data["rows"][0]["cf"] == "32.3465"
    assert data["rows"][1]["other_cfs"][0]["value"] == "33.5675"
    assert [p["label"] for p in data["provenance"]] == ["[PFS CY2025 RVU25D]", "[CY2027 NPRM Addendum B]"]


def test_every_event_has_a_type():
    events = [TokenEvent(text="Hi."), SourcesEvent(cited=(EXCERPT,), also_retrieved=()),
              WarningEvent(message="the store is down", kind=WarningKind.RETRIEVAL),
              DoneEvent(writer="deterministic", withheld=1)]
    assert [json.loads(e.to_json())["type"] for e in events] == ["token", "sources", "warning", "done"]
    assert json.loads(events[1].to_json())["cited"][0]["label"] == "[89 FR 97860 ¶4]"
    assert json.loads(events[2].to_json())["kind"] == "retrieval"
    assert events[3].to_dict() == {"type": "done", "writer": "deterministic", "withheld": 1, "build_id": "",
                                   "index_version": ""}


def test_every_event_type_and_warning_kind_is_sent_by_the_pipeline():
    """No documented kind that is never sent: each enum value appears in the pipeline's source."""
    import inspect
    from carenav_core.chat import pipeline
    source = inspect.getsource(pipeline)
    assert all(f"WarningKind.{k.name}" in source for k in WarningKind)
    assert {e.type for e in (TokenEvent(text=""), DoneEvent(writer="", withheld=0))} <= set(EventType)


def test_a_withheld_sentence_travels_once_and_the_answer_folds_it():
    note = TokenEvent(text="(removed: states $99.99, which is not in the evidence it cites.) ", withheld=True,
                      reasons=("states $99.99, which is not in the evidence it cites",))
    events = [ValuationEvent(codes=("G0556",), families=(), rows=(G0556,), provenance=provenance_for((G0556,)),
                             unpriced=()),
              TokenEvent(text="G0556 pays $15.20 [PFS CY2025 RVU25D]. "), note, TokenEvent(text="Rest."),
              WarningEvent(message="the store is down", kind=WarningKind.RETRIEVAL),
              SourcesEvent(cited=(EXCERPT,), also_retrieved=()), DoneEvent(writer="deterministic", withheld=1)]
    folded = Answer.from_events("How is G0556 paid?", events)
    assert folded.released_text == "G0556 pays $15.20 [PFS CY2025 RVU25D]. Rest."
    assert folded.text.count("(removed:") == 1 and folded.withheld == (note,)
    assert folded.rows == (G0556,) and folded.cited == (EXCERPT,) and folded.writer == "deterministic"
    assert [w.kind for w in folded.warnings] == [WarningKind.RETRIEVAL]
    data = json.loads(folded.to_json())
    assert data["withheld"][0]["reasons"] == list(note.reasons) and data["valuation"]["rows"][0]["cf"] == "32.3465"
