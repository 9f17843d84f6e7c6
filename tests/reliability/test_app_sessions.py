"""Two browser sessions of the app never see each other's state, interleaved turn by turn and when
one arrives through a shared ?q= link. (tests/app/test_pages.py checks one question per session.)"""
from __future__ import annotations

from streamlit.testing.v1 import AppTest

from carenav_core.settings import PROJECT_ROOT

APP = str(PROJECT_ROOT / "app.py")


def session(**query) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=120)
    for key, value in query.items():
        at.query_params[key] = value
    return at.run()


def codes_shown(at: AppTest) -> list[set[str]]:
    """Per answer of the session, every code its tables hold (asked rows, family members, other years)."""
    return [{r.hcpcs for r in turn.rows} for turn in at.session_state["turns"]]


def questions(at: AppTest) -> list[str]:
    return [turn.question for turn in at.session_state["turns"]]


def test_interleaved_sessions_and_a_shared_link_stay_apart(reliable_env):
    first = session()
    linked = session(q="What is APCM? G0556")
    assert not first.exception and not linked.exception
    assert questions(linked) == ["What is APCM? G0556"] and "turns" in first.session_state
    assert questions(first) == []

    first.chat_input[0].set_value("How is 99490 valued?").run()
    linked.chat_input[0].set_value("And 99487?").run()
    first.chat_input[0].set_value("What about G0557?").run()
    linked.run()                                           # a rerun must not answer the link twice
    for at in (first, linked):
        assert not at.exception, at.exception

    assert questions(first) == ["How is 99490 valued?", "What about G0557?"]
    assert questions(linked) == ["What is APCM? G0556", "And 99487?"]
    ccm = {"99490", "99439", "99487", "99489", "99491", "99437"}        # naming one member pulls in its family
    apcm = {"G0556", "G0557", "G0558"}
    assert codes_shown(first) == [ccm, apcm]
    assert codes_shown(linked) == [apcm, ccm]
    assert first.query_params["q"] in (["What about G0557?"], "What about G0557?")
    assert linked.query_params["q"] in (["And 99487?"], "And 99487?")
