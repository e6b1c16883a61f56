"""A command's session stops the child processes it started, and only those: a process started
before it (a broker a test session shares) is not its own."""

import sys

from properties.engine import children
from properties.engine import run as engine


def _sleeper():
    return children.popen([sys.executable, "-c", "import time; time.sleep(60)"])


def test_a_session_stops_its_own_children_and_keeps_the_ones_from_before():
    before = _sleeper()
    try:
        with engine.session():
            inside = _sleeper()
        assert inside.poll() is not None  # stopped at the session's end
        assert before.poll() is None  # not the session's own
        assert before in children.running()
        children.stop_all()
        assert before.poll() is not None
    finally:
        before.kill()
        before.wait()
