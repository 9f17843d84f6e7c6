import io

from carenav_core.progress import TerminalProgress


class Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_piped_progress_prints_plain_lines_without_flooding():
    out = io.StringIO()
    progress = TerminalProgress(out, every=3600)
    for done in range(101):
        progress(done, 100, "embedding: doc A")
    progress(100, 100, "done")
    lines = out.getvalue().splitlines()
    assert lines[0].startswith("0/100 embedding: doc A") and lines[-1].startswith("100/100 done")
    assert len(lines) <= 3 and "\r" not in out.getvalue()


def test_terminal_progress_draws_a_bar():
    out = Tty()
    progress = TerminalProgress(out)
    progress(5, 10, "rvu25d: reading")
    progress(10, 10, "done")
    text = out.getvalue()
    assert "\r[###############---------------] 5/10" in text and text.endswith("s\n")
