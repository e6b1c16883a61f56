"""Model versus implementation on the same schedules (issue 3, first cut)."""

import pytest

from model.config import Config
from properties.differential import Aliases, canonical, compare
from properties.walker import walk


@pytest.mark.parametrize("seed", range(0, 40, 3))
def test_fault_free_schedules_agree_at_every_step(seed):
    config = Config()
    schedule = walk(seed, config, steps=60, faults="none").schedule
    result = compare(config, schedule, seed)
    assert result.divergence is None, result.divergence
    assert result.steps == len(schedule)


def test_a_broken_model_variant_diverges_from_the_implementation():
    # The comparison has teeth: a model that forgets to bump the generation parts from impl.
    broken = Config(broken={"generation_not_bumped"})
    schedule = walk(0, Config(), steps=60, faults="none").schedule
    result = compare(broken, schedule, 0)
    assert result.divergence is not None
    model_group, impl_group = result.divergence.model[2], result.divergence.impl[2]
    assert model_group[1] + 1 == impl_group[1]  # the generations differ by the missed bump


def test_member_ids_are_aliased_per_client_in_order_of_appearance():
    alias = Aliases()
    assert [alias("consumer-1-aa"), alias("consumer-0-bb"), alias("consumer-1-cc"), alias("consumer-1-aa"), alias("")] == [
        "c1.0", "c0.0", "c1.1", "c1.0", ""]
    obs = (5, 0, ("Stable", 2, "consumer-0-x", ("consumer-0-x",), "range"), (("STABLE", 2, "consumer-0-x", (1, 0), 0, True),), ())
    assert canonical(obs, Aliases()) == (5, 0, ("Stable", 2, "c0.0", ("c0.0",), "range"), (("STABLE", 2, "c0.0", (1, 0), 0, True),), ())
