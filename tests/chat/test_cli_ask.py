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
