"""Shrinking a broker's counterexample stops when a signal arrives (conform broker holds signals
while it writes its report, so without this a Ctrl-C waited out the whole shrinking budget)."""

from properties.conform.shrink import shrink


class _Schedule:
    def __init__(self, steps):
        self.steps = tuple(steps)

    def with_steps(self, steps):
        return _Schedule(steps)


class _Result:
    """Diverges ("x") at its step "bad"."""

    def __init__(self, steps):
        self.schedule = _Schedule(steps)

    def signature(self):
        return "x" if "bad" in self.schedule.steps else None

    def signatures(self):
        return [self.signature()] if self.signature() else []

    def step_of(self, signature):
        return self.schedule.steps.index("bad")


def _run(counter):
    def rerun(schedule):
        counter.append(schedule)
        return _Result(schedule.steps)
    return rerun


def test_shrinking_goes_to_the_one_step_that_matters_unless_told_to_stop():
    found = _Result(["a", "b", "c", "d", "e", "f", "bad", "g"])
    runs = []
    assert shrink(found, _run(runs)).schedule.steps == ("bad",)
    whole = len(runs)
    stopped = []
    best = shrink(found, _run(stopped), stop=lambda: len(stopped) >= 2)
    assert len(stopped) == 2 < whole  # the rerun under way finishes, no other starts
    assert best.signature() == "x" and len(best.schedule.steps) < len(found.schedule.steps)
    assert shrink(found, _run([]), stop=lambda: True) is found  # a signal before it began: as found
