"""Test configuration: the Hypothesis profile (ci under CI=true, dev otherwise, or
HYPOTHESIS_PROFILE=name) is loaded before any test runs."""

from properties.explore.profiles import load_default_profile

load_default_profile()
