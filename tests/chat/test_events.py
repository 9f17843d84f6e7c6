"""Events serialise to one JSON line each, Decimals as exact strings."""
from __future__ import annotations

import json

from carenav_core.chat.events import (DoneEvent, SourcesEvent, TokenEvent, ValuationEvent, WarningEvent,
                                      provenance_for)
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
              WarningEvent(message="withheld one sentence", kind="withheld"),
              DoneEvent(writer="deterministic", withheld=1)]
    assert [json.loads(e.to_json())["type"] for e in events] == ["token", "sources", "warning", "done"]
    assert json.loads(events[1].to_json())["cited"][0]["label"] == "[89 FR 97860 ¶4]"
    assert events[3].to_dict() == {"type": "done", "writer": "deterministic", "withheld": 1}
