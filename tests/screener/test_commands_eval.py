"""`carenav screen` and `carenav eval screener` through argparse, and the evaluation's guarantees."""
from __future__ import annotations

import argparse
import json

import pytest

from carenav_core.errors import ConfigError
from carenav_core.screener import commands
from carenav_core.screener.evaluation import generate_families, run_evaluation
from carenav_core.settings import Settings


def _parser(existing_eval: bool = False) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="carenav")
    sub = parser.add_subparsers(dest="command", required=True)
    if existing_eval:
        sub.add_parser("eval").add_subparsers(dest="eval_target").add_parser("chat")
    commands.register(sub)
    return parser


def test_screen_command_prints_markdown_or_json(tmp_path, capsys):
    answers = tmp_path / "answers.json"
    answers.write_text(json.dumps({"age": 82, "county": "Lewis", "veteran_status": "no"}))
    args = _parser().parse_args(["screen", "--answers", str(answers), "--date", "2026-05-01"])
    assert args.func(args, Settings()) == 0
    assert "not an eligibility decision" in capsys.readouterr().out
    args = _parser().parse_args(["screen", "--answers", str(answers), "--date", "2026-05-01", "--json"])
    args.func(args, Settings())
    report = json.loads(capsys.readouterr().out)
    assert report["writer"] == "deterministic" and {e["program"] for e in report["excluded"]} >= {"va_pension", "pace"}
    assert all(card["retrieval_failed"] for card in report["cards"])  # no store wired in tests


@pytest.mark.parametrize(("content", "words"), [
    ("[1, 2]", "expected a JSON object"), ("{nope", "answers file"), ('{"age": "old"}', "age"),
    ('{"age": true}', "age must be a whole number"), ('{"household_size": 2.5}', "whole number"),
    ('{"county": "Kin\xe9"}'.encode("latin-1"), "is not UTF-8 text"),
])
def test_screen_command_rejects_bad_answer_files(tmp_path, content, words):
    answers = tmp_path / "answers.json"
    answers.write_bytes(content if isinstance(content, bytes) else content.encode("utf-8"))
    args = _parser().parse_args(["screen", "--answers", str(answers)])
    with pytest.raises(ConfigError, match=words):
        args.func(args, Settings())


def test_eval_screener_joins_an_existing_eval_command(tmp_path, capsys):
    args = _parser(existing_eval=True).parse_args(["eval", "screener", "--families", "12", "--out", str(tmp_path / "r.json")])
    assert args.func(args, Settings()) == 0
    assert json.loads((tmp_path / "r.json").read_text())["families"] == 12


def test_families_are_reproducible_from_the_seed():
    assert generate_families(3, 30) == generate_families(3, 30)
    assert generate_families(3, 30) != generate_families(4, 30)


def test_hundred_families_no_invented_programs_all_citations_valid():
    results = run_evaluation(seed=7, families=100)
    assert results["invented_programs_in_reports"] == 0
    assert results["citation_validity"] == 1.0 and results["citations"] > 0
    assert results["coverage_described_for_retrieval_failed"] == 0
    assert 0 < results["override_share"] < 1
    assert results["agreement"] == 1.0, results["disagreements"]
    assert results["passed"]


def test_the_expected_outcome_table_has_at_least_60_scenarios_and_scores_every_program():
    from carenav_core.screener.evaluation import load_scenarios
    from carenav_core.screener.rules import PROGRAMS_BY_KEY
    assert len(load_scenarios()) >= 60
    results = run_evaluation(seed=7, families=len(load_scenarios()))
    assert set(results["agreement_by_program"]) == set(PROGRAMS_BY_KEY)
    assert all(v["expectations"] > 0 for v in results["agreement_by_program"].values())


def test_data_check_lists_figures_ending_soon_and_exits_nonzero(capsys):
    args = _parser().parse_args(["data", "check", "--on", "2026-12-01"])
    assert args.func(args, Settings()) == 1
    out = capsys.readouterr().out
    # its 2026 figure ends, and the 2027 value on file is only a floor: the maintainer is told to look for the figure
    assert "extra_help_resources" in out and "the next is only a floor" in out
    args = _parser().parse_args(["data", "check", "--on", "2027-01-02"])
    assert args.func(args, Settings()) == 1
    assert "extra_help_resources" in capsys.readouterr().out.split("floor", 1)[1]
    args = _parser().parse_args(["data", "check", "--on", "2026-12-01"])
    assert args.func(args, Settings()) == 1
    out = capsys.readouterr().out
    assert "va_net_worth_limit" in out and "floor" in out        # 12/2026 figure not seen: a floor
    args = _parser().parse_args(["data", "check", "--on", "2026-06-01"])
    assert args.func(args, Settings()) == 1      # the state spousal resource standard's July 1 figure is not on file
    assert "spousal_csra_state_standard" in capsys.readouterr().out
    args = _parser().parse_args(["data", "check", "--on", "2026-03-01"])
    assert args.func(args, Settings()) == 0
    assert "0 findings on 2026-03-01" in capsys.readouterr().out
