"""`carenav ask` on the terminal: the rows asked, not the family's context rows, lead (and are all that is printed)."""
import argparse

from carenav_core.chat.commands import run_ask


def test_ask_prints_the_asked_rows_and_counts_the_context_rows(full_settings, fee_db, capsys):
    run_ask(argparse.Namespace(question="What does 99214 pay in 2026?", json=False), full_settings)
    out = capsys.readouterr().out
    table = [line for line in out.splitlines() if line.startswith("[PFS ")]
    assert table and all(" 99214 " in f" {line} " for line in table)        # 99202 ... G2211 are context only
    assert "rows of related codes and years for context; --json gives them" in out
    assert "$135.61" in out.split("rows of related codes")[0]


def test_ask_prints_the_answer_s_notes_on_standard_output_once(full_settings, fee_db, capsys):
    """The same-locality note was printed on standard error only: a reader of the printed answer saw one row and no
    reason. Notes the prose already says are not repeated."""
    run_ask(argparse.Namespace(question="Spokane vs Tacoma 99215 in 2026", json=False), full_settings)
    out = capsys.readouterr().out
    notes = out.split("Notes:")[1].split("Sources cited:")[0]
    assert "Spokane and Tacoma are in one payment locality" in notes
    assert out.count("Spokane and Tacoma are in one payment locality") == 1
    run_ask(argparse.Namespace(question="What does 99213 pay in ZIP code 98101?", json=False), full_settings)
    out = capsys.readouterr().out
    assert out.count("ZIP codes are not mapped to payment localities") == 1
