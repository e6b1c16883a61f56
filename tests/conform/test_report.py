"""The conformance report's pages (``report.md``, ``index.html``) from a summary and its
counterexamples, without a broker: what they say must follow the summary, not a template."""

from properties import findings as shape
from properties.conform.report import checked_lines, finding, html_page, markdown


def _summary(status="new", partial=False, acknowledged=(), **changes):
    example = _example()
    found = [finding(example, 2, [1, 3], "counterexamples/01.json", status)]
    summary = shape.envelope(checker="conform-broker", system="broker:tansu", findings=found, done=12, requested=12,
                             unit="schedules", settings={}, checked=checked_lines({"JoinGroup": 9, "Heartbeat": 4}, False),
                             not_checked=[], partial=partial, stopped_by="SIGTERM" if partial else None)
    summary.update({
        "target": "--launch tansu", "mutant": None, "schedules": 12, "seed": 0, "members": 3,
        "steps": 24, "timers": False, "conforming": 10, "diverging": 2, "failures": 0, "crashes": 0,
        "versions": {"JoinGroup": 9, "Heartbeat": 4}, "acknowledged": list(acknowledged), "caps": {},
        "caps_why": "", "seconds": 4.0, "stopped_after": None,
    })
    summary.update(changes)
    return summary


def _example():
    return {"signature": "Heartbeat: answered <REBALANCE_IN_PROGRESS> & more", "summary": "m0 <pending>",
            "schedule": {"steps": [[0, "join", "fresh"], [0, "heartbeat", "current"]]}, "steps_before_shrinking": 9,
            "observed": ["Heartbeat REBALANCE_IN_PROGRESS"], "allowed": [["Heartbeat UNKNOWN_MEMBER_ID"]],
            "replay": "groupcheck replay c/01.json --launch tansu",
            "trace": [{"t_ms": 3, "member": 0, "connection": 1, "direction": "request", "api": "Heartbeat",
                       "version": 4, "body": {"member_id": "<m>"}},
                      {"t_ms": 9, "member": 0, "note": "closed <by broker>"}]}


def test_the_pages_name_only_the_apis_that_were_sent():
    for page in (markdown(_summary(), [_example()]), html_page(_summary(), [_example()])):
        assert "every answer to JoinGroup and Heartbeat against" in page
        assert "OffsetCommit" not in page and "SyncGroup" not in page


def test_the_html_page_escapes_what_the_broker_and_the_schedule_put_in_it():
    page = html_page(_summary(), [_example()])
    assert "&lt;REBALANCE_IN_PROGRESS&gt; &amp; more" in page and "<REBALANCE_IN_PROGRESS>" not in page
    assert "closed &lt;by broker&gt;" in page and "m0 &lt;pending&gt;" in page
    assert "[new]" in page and "2 of 9" in page and "FAIL" in page


def test_an_interrupted_campaign_says_so_and_a_finished_one_does_not():
    for render in (lambda s: markdown(s, [_example()]), lambda s: html_page(s, [_example()])):
        assert "PARTIAL" in render(_summary(partial=True))
        assert "PARTIAL" not in render(_summary(partial=False))


def test_acknowledged_divergences_leave_the_verdict_but_stay_on_the_page():
    acknowledged = _summary(status="acknowledged", acknowledged=[["Heartbeat: x", "known since 0.1"]])
    page = html_page(acknowledged, [_example()])
    assert acknowledged["verdict"] == "pass" and "PASS" in page
    assert "known since 0.1" in page and "[acknowledged]" in page


def test_answer_times_pair_each_connections_requests_and_answers_in_order():
    from properties.conform.tally import answer_times, latency_table

    trace = [
        {"t_ms": 0, "member": 0, "connection": 1, "direction": "request", "api": "JoinGroup"},
        {"t_ms": 1, "member": 1, "connection": 1, "direction": "request", "api": "Heartbeat"},
        {"t_ms": 3, "member": 1, "connection": 1, "direction": "response", "api": "Heartbeat"},
        {"t_ms": 5, "member": 0, "note": "disconnected"},
        {"t_ms": 250, "member": 0, "connection": 1, "direction": "response", "api": "JoinGroup"},
        {"t_ms": 260, "member": 1, "connection": 2, "direction": "request", "api": "Heartbeat"},  # never answered
    ]
    assert sorted(answer_times(trace)) == [("Heartbeat", 2), ("JoinGroup", 250)]
    table = latency_table({"Heartbeat": [1] * 98 + [40, 50]})
    assert table["Heartbeat"] == {"answers": 100, "p50_ms": 1, "p99_ms": 40, "max_ms": 50}


def test_a_divergence_seen_only_after_another_is_shown_under_it_unless_no_state_explains_it():
    from properties.conform.judge import Divergence
    from properties.conform.run import Result
    from properties.conform.schedule import generate
    from properties.conform.tally import Tally

    def divergence(step, signature, answer):
        return Divergence(step, "s", signature, (), (), answer)

    first = divergence(1, "JoinGroup: no answer where the model allows NONE", ("JoinGroup", "parked"))
    state_explains = divergence(4, "Heartbeat: answered REBALANCE_IN_PROGRESS where the model allows NONE",
                                ("Heartbeat", "REBALANCE_IN_PROGRESS"))
    never_kafka = divergence(6, "DescribeGroups: answered NONE with group_state 'Unknown' where the model allows "
                                "'Stable'", ("DescribeGroups", "NONE Unknown"))
    tally = Tally()
    for seed in (0, 1):
        tally.add(Result(generate(seed), "g", (first, state_explains, never_kafka), None, 10, (), ()))
    assert tally.parent(first.signature) is None
    assert tally.parent(state_explains.signature) == first.signature  # may only follow from the first
    assert tally.parent(never_kafka.signature) is None  # Kafka never answers 'Unknown': its own
    # its own ones by count (then name), each followed by those seen only after it
    assert tally.ordered() == [never_kafka.signature, first.signature, state_explains.signature]
    assert tally.counts[state_explains.signature] == 2 and tally.diverging == 2


def test_divergences_of_their_own_get_the_larger_share_of_the_shrinking_budget(tmp_path, monkeypatch):
    """The shrinking budget is shared: one of its own (what a reader fixes) gets OWN_SHARE times
    what one only seen after another gets, whatever the order they come in."""
    import types

    from properties import targets
    from properties.conform import tally as tally_module
    from properties.conform.judge import Divergence
    from properties.conform.run import NO_TIMERS, Result
    from properties.conform.schedule import generate

    def divergence(step, signature, answer):
        return Divergence(step, "s", signature, (), (), answer)

    own = [divergence(1, "JoinGroup: no answer where the model allows NONE", ("JoinGroup", "parked")),
           divergence(2, "SyncGroup: no answer where the model allows NONE", ("SyncGroup", "parked"))]
    after = [divergence(4 + i, f"Heartbeat: answered REBALANCE_IN_PROGRESS where the model allows {e}",
                        ("Heartbeat", "REBALANCE_IN_PROGRESS")) for i, e in enumerate(("NONE", "ILLEGAL_GENERATION"))]
    tally = tally_module.Tally()
    tally.add(Result(generate(0), "g", (own[0], after[0]), None, 10, (), ()))
    tally.add(Result(generate(1), "g", (own[1], after[1]), None, 10, (), ()))
    shares = {}

    def fake_shrink(result, run, max_runs=150, max_seconds=120.0, signature=None, first=True, stop=lambda: False):
        shares[signature] = max(shares.get(signature, 0), max_seconds)
        return result

    monkeypatch.setattr(tally_module, "shrink", fake_shrink)
    monkeypatch.setattr(tally_module.time, "monotonic", lambda: 0.0)  # shrinking takes no time here
    target = types.SimpleNamespace(profile=targets.profile_for("groupcheck"), system="groupcheck",
                                   text="--launch groupcheck", crashes=0)
    said = []
    tally.finish(None, target, NO_TIMERS, None, {"seed": 0, "members": 3, "steps": 24}, str(tmp_path), 1.0,
                 shrink_seconds=600, say=said.append)
    budget_own = [shares[d.signature] for d in own]
    budget_after = [shares[d.signature] for d in after]
    assert min(budget_own) >= tally_module.OWN_SHARE * max(budget_after) * 0.99, shares
    # a line per divergence shrunk, saying which and for how long at most (progress on long work)
    assert len(said) == 4 and said[0].startswith("shrinking 1/4: ") and own[0].signature in said[0], said
    assert said[0].endswith(f"({shares[own[0].signature]:.0f} s at most)")
