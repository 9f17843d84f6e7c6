import pytest

from carenav_core.eval.oracle import Oracle


@pytest.fixture(scope="session")
def oracle(mirror) -> Oracle:
    """The oracle over the mirror's CMS files (read once per session)."""
    return Oracle(mirror / "cms")
