"""Output-guard overhead per sentence, streamed in token-sized chunks, against a baseline of plain
regex sentence splitting measured in the same run.

    python bench/bench_guard.py [--sentences 2000] [--chunk 4]
Prints p50/p95 microseconds per sentence for both.
"""
from __future__ import annotations

import argparse
import logging
import random
import re
import statistics
import sys
import time
from decimal import Decimal
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from carenav_core.chat.events import Source  # noqa: E402
from carenav_core.chat.evidence import build_evidence  # noqa: E402
from carenav_core.chat.guard import OutputGuard  # noqa: E402
from carenav_core.pfs.rows import ValuationRow  # noqa: E402

_PLAIN_SPLIT = re.compile(r"(?<=[.!?])\s+")
TEMPLATES = (
    "G0556 has a work RVU of 0.25 [PFS CY2025 RVU25D]. ",
    "At the CY2025 conversion factor of $32.3465 the non-facility payment is $15.20 [PFS CY2025 RVU25D]. ",
    "The facility payment is $11.97, e.g. in a hospital outpatient department. [PFS CY2025 RVU25D] ",
    "The conversion factor fell 2.83 percent from CY2024 [89 FR 97860 ¶4]. ",
    "It pays $17.10 per month [PFS CY2025 RVU25D]. ",
    "- Practitioners must furnish at least 13 elements [89 FR 97860 ¶4].\n",
    "CMS finalized the U.S. APCM codes G0556, G0557 and G0558 in 2025 [89 FR 97860 ¶4]. ",
    "See 42 CFR 414.22 and No. 5 for the method [89 FR 12345 ¶1]. ",
)


def _row() -> ValuationRow:
    d = Decimal
    return ValuationRow(
        hcpcs="G0556", mod="", description="Adv prim care mgmt lvl 1", cy=2025, proposed=False, vintage="rvu25d",
        effective_date="2025-01-01", status="A", status_meaning="Active code, paid under the PFS",
        work_rvu=d("0.25"), pe_nonfac_rvu=d("0.20"), pe_fac_rvu=d("0.10"), mp_rvu=d("0.02"),
        total_nonfac=d("0.47"), total_fac=d("0.37"), nonfac_na="", fac_na="", pctc="9", global_days="XXX",
        cf=d("32.3465"), cf_label="CY2025", other_cfs=(), payment_nonfac=d("15.20"), payment_fac=d("11.97"),
        label="[PFS CY2025 RVU25D]", rule_id="CMS-1807-F", fr_citation="89 FR 97710", fr_url="", file_cf=None,
        source_file="", sha256="")


def _source() -> Source:
    return Source(label="[89 FR 97860 ¶4]", title="CY 2025 PFS final rule", kind="final rule",
                  published="2024-12-09", url="", text="The CY 2025 conversion factor is $32.3465, a decrease of "
                  "2.83 percent. Practitioners must furnish at least 13 elements.")


def _percentiles(samples: list[float]) -> tuple[float, float]:
    cuts = statistics.quantiles(samples, n=100)
    return cuts[49] * 1e6, cuts[94] * 1e6


def run(n_sentences: int, chunk: int) -> None:
    rng = random.Random(7)
    sentences = [rng.choice(TEMPLATES) for _ in range(n_sentences)]
    guard = OutputGuard(build_evidence([_row()], [_source()]))
    guarded, plain = [], []
    for sentence in sentences:
        pieces = [sentence[i:i + chunk] for i in range(0, len(sentence), chunk)]
        start = time.perf_counter()
        for piece in pieces:
            guard.feed(piece)
        guarded.append(time.perf_counter() - start)
        start = time.perf_counter()
        _PLAIN_SPLIT.split(sentence)
        plain.append(time.perf_counter() - start)
    guard.flush()
    g50, g95 = _percentiles(guarded)
    b50, b95 = _percentiles(plain)
    print(f"{n_sentences} sentences, {chunk}-character chunks, {guard.withheld} withheld")
    print(f"output guard (split + checks, streamed): p50 {g50:8.1f} us  p95 {g95:8.1f} us per sentence")
    print(f"baseline (plain regex split)          : p50 {b50:8.1f} us  p95 {b95:8.1f} us per sentence")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sentences", type=int, default=2000)
    parser.add_argument("--chunk", type=int, default=4, help="characters per streamed chunk (about one token)")
    args = parser.parse_args()
    logging.disable(logging.INFO)      # withheld sentences are logged; not part of the measurement
    run(args.sentences, args.chunk)
