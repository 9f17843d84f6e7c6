"""Who speaks in a sentence of the rule text (chat/speakers.py): CMS, or commenters as CMS summarised them."""
from __future__ import annotations

from dataclasses import replace
from datetime import date

import pytest

from carenav_core.chat.plan import plan_question
from carenav_core.chat.speakers import speakers, split_voices
from carenav_core.codes import detect
from tests.chat.values import EXCERPT


def _voices(text, role):
    return [theirs for _, _, theirs in speakers(replace(EXCERPT, text=text, role=role))]


def test_in_cms_paragraphs_commenters_speak_only_in_what_reports_or_carries_on_their_point():
    text = ("Response: Several commenters stated that the home visit values are too low. They also asked that we "
            "revisit them. Whereas the values we established for office visits apply, we finalized work RVUs as "
            "proposed. The RUC reviewed these services in 2023. Nevertheless, we may consider this in future rulemaking.")
    assert _voices(text, "cms_response") == [True, True, False, False, False]


def test_a_comment_summary_is_theirs_until_cms_speaks_and_a_merged_response_is_cms():
    text = ("We received public comments on these proposals. Comment: Most commenters supported the care plan. "
            "Many practices already keep such plans. They asked that we allow verbal consent. "
            "Response: We agree. The care plan requirement is finalized.")
    assert _voices(text, "comment_summary") == [False, True, True, True, False, False]
    theirs, cms = split_voices(replace(EXCERPT, text=text, role="cms_response"))
    assert "Many practices" in theirs and "We received public comments" in cms and "finalized" in cms


def test_a_response_that_opens_with_its_comment_is_labelled_as_both():
    merged = replace(EXCERPT, role="cms_response", text="Comment: Commenters opposed it. Response: We disagree.")
    assert merged.speaker == "commenters' views as CMS summarised them, then CMS's response"
    assert replace(EXCERPT, role="cms_response").speaker == "CMS's response to comments"
    assert replace(EXCERPT, role="").speaker == ""


@pytest.mark.parametrize("question, asks", [
    ("What did commenters say about the G0557 work RVU?", True),
    ("Did stakeholders object to unbundling G0511?", True),
    ("Was there public feedback on the APCM performance measure?", True),
    ("Who opposed the concurrent billing restrictions?", True),
    ("How much does 99214 pay as opposed to 99213?", False),
    ("Is G0556 billed monthly as opposed to per visit?", False),
    ("Does remote monitoring 99457 need feedback from the device?", False),
    ("How is G0556 paid?", False),
])
def test_which_questions_ask_what_commenters_said(question, asks):
    assert plan_question(question, detect(question), date(2026, 12, 1)).comments is asks
