"""A data note the deterministic writer leads the prose with is not shown again as a warning box (read once)."""
from carenav_core.chat.deterministic import DATA_NOTE_KINDS
from carenav_core.chat.events import WarningKind
from carenav_core.ui.chat_view import _in_prose


def test_a_note_the_prose_says_is_recognised_whatever_the_line_breaks():
    note = "No CY2019 fee schedule values for 99490 (the data hold it for CY2020 to CY2026), so the nearest year's " \
           "values (CY2020) are shown instead."
    prose = "No language model wrote this answer.\n\nNo CY2019 fee schedule values for 99490 (the data hold it for\n" \
            "CY2020 to CY2026), so the nearest year's values (CY2020) are shown instead.\n\n- Under the CY2020 ..."
    assert _in_prose(note, prose) and not _in_prose(note, "- Under the CY2020 final fee schedule ...")
    assert not _in_prose("", prose)
    assert WarningKind.WEAK_MATCH in DATA_NOTE_KINDS and WarningKind.RETRIEVAL not in DATA_NOTE_KINDS
