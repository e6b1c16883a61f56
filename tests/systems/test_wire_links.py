"""--wire: the simulated links carry encoded frames, and the run is the same run."""

from __future__ import annotations

import dataclasses

import pytest

from model.config import Config
from properties.systems import run
from properties.systems import wire_links


@pytest.mark.parametrize("config", [Config(), Config(clients=2, brokers=1, partitions=3, join_group_version=3),
                                    Config(join_group_version=9)], ids=["v5", "pre-v4", "v9"])
def test_wire_runs_are_the_same_runs(config):
    """Every message makes a round trip through the codec, and the trace is unchanged: the codec
    neither loses nor invents anything the model or the implementation can see."""
    wired = Config(**{**_fields(config), "wire": True})
    for seed in range(4):
        plain = run("impl", seed, config, steps=60)
        encoded = run("impl", seed, wired, steps=60)
        assert encoded.violation is None, encoded.violation
        assert encoded.trace_hash == plain.trace_hash
        wire = encoded.companion.sim.wire  # the codec really carried the traffic
        assert wire.messages > 10 and {"FindCoordinator", "JoinGroup"} <= set(wire.requests_by_api)
        assert plain.companion.sim.wire is None


def _fields(config):
    import attrs

    return attrs.asdict(config, recurse=False)


def test_a_codec_that_loses_an_error_code_is_caught(monkeypatch):
    """The differential check sees through the wire: a decoder that drops Heartbeat errors (the
    member never learns of a rebalance) makes the implementation diverge from the model."""
    real = wire_links.decode_response

    def lossy(api, version, payload):
        decoded = real(api, version, payload)
        if api == "Heartbeat" and getattr(decoded.body, "error_code", 0):
            decoded = dataclasses.replace(decoded, body=dataclasses.replace(decoded.body, error_code=0))
        return decoded

    monkeypatch.setattr(wire_links, "decode_response", lossy)
    failures = [run("impl", seed, Config(wire=True), steps=60).violation for seed in range(30)]
    assert any(v is not None and v.property == "impl-matches-model" for v in failures)


def test_an_unreadable_frame_stops_the_run_naming_it(monkeypatch):
    """The codec is the implementation's: a frame it cannot read is an impl-no-crash counterexample
    naming the frame, not a traceback."""
    monkeypatch.setattr(wire_links, "encode_request", lambda *a, **k: b"\x00\x00\x00\x03abc")
    result = run("impl", 0, Config(wire=True), steps=20)
    assert result.violation.property == "impl-no-crash"
    assert result.violation.message.startswith("WireRoundTripError: ") and "could not read a request" in result.violation.message


def test_wire_needs_the_impl_system():
    from model.config import ConfigError
    from properties.systems import world_config

    with pytest.raises(ConfigError, match="--wire"):
        world_config("model", "all", 3, 3, 6, wire=True)
    assert world_config("impl", "all", 3, 3, 6, wire=True).wire is True
