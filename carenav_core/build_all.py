"""`carenav build` as one step list: the fee-schedule database, then the screener's program corpus,
then the rule-text index (in the foreground, or with `background` in a separate process so the app
answers valuation questions while the Federal Register paragraphs are embedded). Each step reports
plain lines; a failing step raises and publishes nothing of its own (the fee-schedule database is
renamed into place only when complete; the index commits per document and records its progress)."""
from __future__ import annotations

from carenav_core.pfs.build import build
from carenav_core.progress import Progress, silent
from carenav_core.retrieval.background import index_log, start_background_index
from carenav_core.retrieval.index import index_documents
from carenav_core.retrieval.store import Store
from carenav_core.screener.store import index_programs
from carenav_core.settings import Settings


def build_all(settings: Settings, store: Store, progress: Progress = silent, force: bool = False,
              background: bool = False) -> list[str]:
    """Build everything the app needs into the fee-schedule file and `store`; one summary line per step."""
    report = build(settings, progress, force=force)
    lines = [f"fee schedule: {report.rows:,} rows; parsed {len(report.releases)} releases, reused "
             f"{len(report.reused)} unchanged; proposed: {', '.join(report.proposed) or 'none'}; {report.seconds:.1f} s"]
    lines += [f"skipped: {line}" for line in report.skipped]
    lines.append(_index_line("program corpus", index_programs(store, progress, force=force)))
    if background:
        child = start_background_index(settings, force=force)
        lines.append(f"rule text: indexing in the background (process {child.pid}, log {index_log(settings)}); "
                     "valuation answers work now; progress on the Data page or `carenav index --status`")
    else:
        lines.append(_index_line("rule text", index_documents(settings, store, progress, force=force)))
    return lines


def _index_line(what: str, report) -> str:
    return (f"{what}: {report.documents} documents; embedded {len(report.embedded_documents)}, unchanged "
            f"{len(report.unchanged_documents)}, removed {len(report.removed_documents)}; "
            f"{report.chunks_embedded} chunks in {report.seconds:.1f} s")
