"""`carenav build` and `carenav value`."""
from __future__ import annotations

import argparse
import csv
import json
import re
import sys
from pathlib import Path

from carenav_core.codes import detect
from carenav_core.build_all import build_all
from carenav_core.retrieval.store import Store
from carenav_core.pfs.rows import AMA_NOTICE, UNPAID_STATUS, shows_cpt
from carenav_core.pfs.locality import directory, locality_records, locality_rows, resolve_places
from carenav_core.pfs.pricer import ClaimFileError, claim_record, claim_workbook, price_claim, read_claim
from carenav_core.pfs.columns import row_record
from carenav_core.pfs.valuation import open_reader, value
from carenav_core.progress import TerminalProgress
from carenav_core.settings import Settings



def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("build", help="build the fee-schedule database (and the rule-text index)")
    parser.add_argument("--mirror", type=Path, help="read sources from this folder (like shared/data) instead of downloading")
    parser.add_argument("--force", action="store_true", help="rebuild everything, even unchanged releases")
    parser.add_argument("--background", action="store_true",
                        help="index the rule text in a separate process and return once the fee schedule is built")
    parser.set_defaults(func=run_build)
    parser = subparsers.add_parser("value", help="valuation of codes or families, e.g. `carenav value APCM 99490`")
    parser.add_argument("terms", nargs="+", help="codes (G0556, 99490) or family names (APCM, 'chronic care management')")
    parser.add_argument("--years", type=int, default=None, help="how many recent final CYs (default: settings.years)")
    parser.add_argument("--modifiers", action="store_true", help="include modifier rows (26, TC, ...)")
    parser.add_argument("--cy", type=int, action="append", help="only this calendar year (repeatable)")
    parser.add_argument("--locality", help='price by locality: MAC:LOC (02402:02), "all", or a place ("Seattle", '
                                           '"King County, WA", "rest of California")')
    parser.add_argument("--modifier", help="with --locality: the row of this modifier (26, TC, 53, ...)")
    fmt = parser.add_mutually_exclusive_group()
    fmt.add_argument("--json", action="store_true", help="one JSON object per row, in a list")
    fmt.add_argument("--csv", action="store_true", help="CSV with provenance columns")
    parser.set_defaults(func=run_value)
    parser = subparsers.add_parser("price", help="price a claim file: carenav price claim.csv [--json|--xlsx OUT]")
    parser.add_argument("file", type=Path, help="CSV with code,modifier,units,facility,locality,date_of_service")
    out = parser.add_mutually_exclusive_group()
    out.add_argument("--json", action="store_true", help="lines, errors and total as JSON")
    out.add_argument("--xlsx", type=Path, help="write an Excel workbook (formulas + provenance sheet) here")
    parser.set_defaults(func=run_price)


def run_build(args: argparse.Namespace, settings: Settings) -> int:
    if args.mirror:
        settings = settings.model_copy(update={"mirror": args.mirror})
    store = Store(settings)
    try:
        for line in build_all(settings, store, TerminalProgress(), force=args.force, background=args.background):
            print(line)
    finally:
        store.close()
    return 0


_CODE_LIKE = re.compile(r"(?<![\w.$,])([A-Za-z]\d{4}|\d{4}[A-Za-z]|\d{5})(?![\w])")


def not_codes(text: str, detected: tuple[str, ...]) -> list[str]:
    """Code-shaped terms that are not HCPCS/CPT codes (e.g. Z9999: HCPCS Level II letters are A-V).

    >>> not_codes("Z9999 G0556", ("G0556",))
    ['Z9999']
    """
    return sorted({t.upper() for t in _CODE_LIKE.findall(text)} - set(detected))


def run_value(args: argparse.Namespace, settings: Settings) -> int:
    text = " ".join(args.terms)
    detection = detect(text)
    if args.locality:
        return run_value_locality(args, settings, detection.codes)
    with open_reader(settings.duckdb_file) as con:
        rows, unpriced = value(con, detection.codes, years=args.years or settings.years, modifiers=args.modifiers)
    rows = [r for r in rows if not args.cy or r.cy in args.cy]
    invalid = not_codes(text, detection.codes)
    if args.json:
        json.dump({"rows": [row_record(r) for r in rows], "unpriced": unpriced, "not_codes": invalid}, sys.stdout,
                  indent=1)
        print()
    elif args.csv:
        _write_csv([row_record(r) for r in rows], sys.stdout)
    else:
        print_table(rows)
    _report_missing(detection.codes, unpriced, invalid)
    if shows_cpt(rows):
        print(AMA_NOTICE, file=sys.stderr)
    return 1 if (unpriced or invalid) and not rows else 0


def _report_missing(codes: tuple[str, ...], unpriced: list[str], invalid: list[str]) -> None:
    for code in invalid:
        print(f"not a code: {code} is not a HCPCS/CPT code (Level II: letter A-V + 4 digits; CPT: 5 digits "
              "or 4 digits + F/T/A/M/U)", file=sys.stderr)
    for code in unpriced:
        print(f"not priced: {code} is in no loaded release", file=sys.stderr)
    if not codes and not invalid:
        print("no HCPCS/CPT code or code family named", file=sys.stderr)


def _write_csv(records: list[dict], stream) -> None:
    if records:
        writer = csv.DictWriter(stream, fieldnames=list(records[0]))
        writer.writeheader()
        writer.writerows(records)


def print_table(rows) -> None:
    print(f"{'label':<27}{'code':<7}{'mod':<4}{'st':<3}{'work':>6}{'PE nf':>7}{'PE f':>6}{'MP':>6}"
          f"{'tot nf':>8}{'tot f':>7}{'CF':>9}  {'pay nf':>11}{'pay f':>11}  CF used")
    for r in rows:
        def fmt(x, money=False):
            return "" if x is None else (f"${x:,.2f}" if money else str(x))

        def paid(x):        # a status Medicare pays nothing for shows no payment (its RVUs x CF is none)
            return None if r.status in UNPAID_STATUS else x
        print(f"{r.label:<27}{r.hcpcs:<7}{r.mod:<4}{r.status:<3}{fmt(r.work_rvu):>6}{fmt(r.pe_nonfac_rvu):>7}"
              f"{fmt(r.pe_fac_rvu):>6}{fmt(r.mp_rvu):>6}{fmt(r.total_nonfac):>8}{fmt(r.total_fac):>7}"
              f"{fmt(r.cf):>9}  {fmt(paid(r.payment_nonfac), True):>11}{fmt(paid(r.payment_fac), True):>11}  "
              f"{r.cf_label if r.status not in UNPAID_STATUS else f'not paid (status {r.status})'}"
              + (f" (also {', '.join(f'{c.label} {c.value}' for c in r.other_cfs)})" if r.other_cfs else ""))


def run_value_locality(args: argparse.Namespace, settings: Settings, codes) -> int:
    """`carenav value CODES --locality ...`: locality rows (pfs/locality.py) as a table, JSON or CSV."""
    with open_reader(settings.duckdb_file) as con:
        newest = max(args.cy or [max(directory(con).gpci)])
        keys, notes = resolve_places(con, args.locality, newest)
        result = locality_rows(con, codes, cys=args.cy, places=keys, modifier=args.modifier,
                               years=args.years or settings.years)
    records = locality_records(result.rows)
    if args.json:       # the shape of `carenav value --json`, plus the notes (stand-in files, ambiguous places)
        json.dump({"rows": records, "unpriced": result.unpriced, "not_codes": not_codes(" ".join(args.terms), codes),
                   "notes": notes + result.notes}, sys.stdout, indent=1)
        print()
    elif args.csv:
        _write_csv(records, sys.stdout)
    else:
        print(f"{'label':<40}{'code':<6}{'mod':<4}{'locality name':<32}{'pay nf':>10}{'pay f':>10}{'limit nf':>10}"
              f"{'national nf':>12}")
        for r in records:
            print(f"{r['label']:<40}{r['hcpcs']:<6}{r['mod']:<4}{r['locality_name'][:31]:<32}{r['payment_nonfac'] or '':>10}"
                  f"{r['payment_fac'] or '':>10}{r['limiting_charge_nonfac'] or '':>10}{r['national_nonfac'] or '':>12}")
    for line in notes + result.notes + [f"not priced: {c} is in no loaded release" for c in result.unpriced]:
        print(line, file=sys.stderr)
    if shows_cpt([r.national for r in result.rows]):
        print(AMA_NOTICE, file=sys.stderr)
    return 0 if result.rows else 1


def run_price(args: argparse.Namespace, settings: Settings) -> int:
    """`carenav price FILE.csv`: every line priced or reported with its reason (pfs/pricer.py)."""
    try:
        lines, errors = read_claim(args.file.read_text(encoding="utf-8-sig"))
    except (OSError, ClaimFileError) as exc:
        print(f"carenav price: {args.file}: {exc}", file=sys.stderr)
        return 2
    with open_reader(settings.duckdb_file) as con:
        claim = price_claim(con, lines, errors)
    if args.json:
        json.dump(claim_record(claim), sys.stdout, indent=1)
        print()
    else:
        for line in claim.lines:
            steps = "; ".join(f"{s.name} x{s.factor if s.factor is not None else '-'} [{s.citation}]" for s in line.steps)
            print(f"line {line.claim.line:>3} {line.claim.code} {' '.join(line.claim.modifiers):<6} {line.label:<40} "
                  f"fee {line.fee:>9} allowed {line.allowed:>9}  {steps}")
        print(f"total allowed: {claim.total} ({len(claim.lines)} lines priced, {len(claim.errors)} not)")
    if args.xlsx:
        args.xlsx.write_bytes(claim_workbook(claim))
        print(f"wrote {args.xlsx}", file=sys.stderr)
    for error in claim.errors:
        print(f"line {error.line} ({error.code or 'no code'}): {error.reason}", file=sys.stderr)
    return 0 if claim.lines else 1
