"""While the rule text is still being indexed, an answer says how far it is (issue 12, item 3)."""
from __future__ import annotations

from carenav_core.backends import Backends
from carenav_core.chat.events import WarningEvent
from carenav_core.chat.pipeline import answer
from carenav_core.pfs.valuation import open_reader
from carenav_core.retrieval.progress import advance, finish_run, start_run


def test_an_answer_during_indexing_says_how_far_the_rule_text_is(stoppable_settings, stoppable_store):
    with open_reader(stoppable_settings.duckdb_file) as con:
        backends = Backends(settings=stoppable_settings, fee_db=con, store=stoppable_store)
        start_run(stoppable_store.engine, "rules", planned=5196, total=5196)
        advance(stoppable_store.engine, "rules", 1240)
        during = [e for e in answer("How is 99490 valued?", backends) if isinstance(e, WarningEvent)]
        finish_run(stoppable_store.engine, "rules")
        after = [e for e in answer("How is 99490 valued?", backends) if isinstance(e, WarningEvent)]
    notes = [w.message for w in during if w.kind == "indexing"]
    assert notes and "1,240 of 5,196 paragraphs" in notes[0]
    assert not [w for w in after if w.kind == "indexing"]
