"""Mutants as patches (``properties/mutation/mutants.py``): every mutant is a small source change to
today's impl/, made when it is applied.

Each mutant's ``old`` texts occur exactly once in the live source of its target and each changed
function says ``# MUTANT:``; the mutated function is compiled as the original was (its file and line
numbers, its module's globals, its closure cells: zero-argument ``super()`` works, its defaults);
leaving restores the very same objects; a patch that no longer matches impl/, or a source on disk
that is not the code loaded, fails with one line naming the mutant and the text.
"""

import importlib
import inspect
import sys
import textwrap
import traceback

import pytest

from properties.mutation import mutants
from properties.mutation.mutants import ALL, Mutant, StaleMutant, applied, mutated_source


def _code(fn):
    return fn.__code__.co_code, fn.__code__.co_consts, fn.__code__.co_names


def _functions(name):
    return [(owner, attr, getattr(owner, attr)) for owner, attr in ALL[name].owners()]


@pytest.mark.parametrize("name", list(ALL))
def test_every_mutant_applies_to_todays_impl_and_says_what_it_changed(name):
    for owner, attr, fn in _functions(name):
        live = textwrap.dedent(inspect.getsource(fn))
        mutated = mutated_source(ALL[name], fn)  # raises StaleMutant if an old text is gone or ambiguous
        assert mutated != live and "# MUTANT:" in mutated and "# MUTANT:" not in live, f"{name}: {attr}"


@pytest.mark.parametrize("name", list(ALL))
def test_applied_puts_the_mutated_code_in_place_where_the_original_was(name):
    before = _functions(name)
    with applied(name):
        for owner, attr, fn in before:
            new = vars(owner)[attr]
            assert _code(new) != _code(fn)
            assert new.__code__.co_filename == fn.__code__.co_filename  # tracebacks point into impl/
            assert new.__code__.co_firstlineno == fn.__code__.co_firstlineno
            assert new.__globals__ is fn.__globals__ and new.__defaults__ is fn.__defaults__
            assert new.__qualname__.endswith(f"[mutant {name}]")
    for owner, attr, fn in before:
        assert vars(owner)[attr] is fn


def test_a_mutated_function_raises_at_its_line_in_the_impl_file():
    """expired_member_not_checked looks a member up without checking it: the KeyError's innermost
    frame is the mutated line, at the original's line number in impl/server/group_coordinator.py."""
    from impl.server.group_coordinator import GroupCoordinator
    from impl.server.group_metadata import GroupMetadata

    original = GroupCoordinator.should_complete_non_pending_heartbeat
    with applied("expired_member_not_checked"):
        with pytest.raises(KeyError) as raised:
            GroupCoordinator.should_complete_non_pending_heartbeat(None, GroupMetadata("g"), "gone")
    frame = traceback.extract_tb(raised.value.__traceback__)[-1]
    assert frame.filename == original.__code__.co_filename and frame.name == "should_complete_non_pending_heartbeat"
    assert "group.members.get(member_id)" in frame.line  # the file's line there: the one the mutant changed


def test_a_method_calling_super_keeps_its_class_cell():
    """metadata_change_not_watched mutates a method that ends with zero-argument super(): its
    __class__ cell is the original's."""
    from impl.coordinator.consumer_coordinator import ConsumerCoordinator

    original = vars(ConsumerCoordinator)["rejoin_needed_or_pending"]
    assert original.__code__.co_freevars == ("__class__",)
    with applied("metadata_change_not_watched"):
        new = vars(ConsumerCoordinator)["rejoin_needed_or_pending"]
        assert new.__code__.co_freevars == ("__class__",)
        assert new.__closure__[0].cell_contents is ConsumerCoordinator


class Base:
    def greet(self, who="base"):
        return f"hello {who}"


class Child(Base):
    def greet(self, who="child", *, loud=False):
        text = super().greet(who)  # the unmutated line
        return text.upper() if loud else text


def _local(edits, attr="greet"):
    return Mutant("local", "a test's mutant", f"{__name__}.Child.{attr}", "test", edits)


def test_a_patch_of_a_method_using_super_keeps_its_defaults_and_module():
    mutant = _local([("text = super().greet(who)  # the unmutated line",
                      "text = super().greet(who) + \"!\"  # MUTANT: exclaims")])
    original = vars(Child)["greet"]
    with applied(mutant):
        assert Child().greet() == "hello child!" and Child().greet("x", loud=True) == "HELLO X!"
        assert vars(Child)["greet"].__kwdefaults__ is original.__kwdefaults__
    assert vars(Child)["greet"] is original and Child().greet() == "hello child"


@pytest.mark.parametrize("edits, text", [
    ([("no such text", "x  # MUTANT")], "'no such text' is not in its source"),
    ([("who", "x  # MUTANT")], "'who' is 2 times in its source"),
    ([("text = super().greet(who)\nreturn nothing", "x  # MUTANT")],
     "'text = super().greet(who)' ... is not in its source"),
])
def test_a_stale_patch_is_one_clear_error_and_changes_nothing(edits, text):
    original = vars(Child)["greet"]
    with pytest.raises(StaleMutant) as raised:
        with applied(_local(edits)):
            pass
    message = str(raised.value)
    assert message == f"mutant local no longer applies to tests/mutation/test_patches.py (Child.greet): {text}"
    assert "\n" not in message and vars(Child)["greet"] is original


def test_a_mutant_of_two_methods_changes_neither_when_one_patch_is_stale():
    from impl.future import RequestFuture

    before = dict(vars(RequestFuture))
    mutant = Mutant("half", "d", "impl.future.RequestFuture._fire_success+add_listener", "k",
                    [("listeners.popleft().on_success(value)", "pass  # MUTANT")])
    with pytest.raises(StaleMutant, match=r"mutant half no longer applies to impl/future.py \(RequestFuture.add_listener\)"):
        with applied(mutant):
            pass
    assert dict(vars(RequestFuture)) == before


def test_edits_that_are_not_python_are_named():
    with pytest.raises(StaleMutant, match="mutant local: its edits of greet are not Python"):
        with applied(_local([("return text.upper() if loud else text", "return (  # MUTANT")])):
            pass


def test_a_source_edited_on_disk_since_the_import_is_refused(tmp_path, monkeypatch):
    """inspect.getsource reads the file as it is now: if it no longer is the code loaded, the patch
    would put an old or a new version in place; it is refused instead."""
    (tmp_path / "edited_since.py").write_text("def f(x):\n    return x + 1\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    module = importlib.import_module("edited_since")
    try:
        (tmp_path / "edited_since.py").write_text("def f(x):\n    return x + 2  # edited\n")
        mutant = Mutant("disk", "d", "edited_since.f", "k", [("return x + 2  # edited", "return x  # MUTANT")])
        with pytest.raises(StaleMutant, match=r"mutant disk no longer applies to edited_since.py \(f\): its source "
                                              r"on disk is not the code loaded"):
            with applied(mutant):
                pass
        assert module.f(1) == 2
    finally:
        sys.modules.pop("edited_since", None)


def test_a_mutant_is_compiled_once_per_set_of_originals():
    """hunt() enters the mutant once per interleaving: the mutated functions are built once."""
    with applied("generation_not_bumped"):
        from impl.server.group_metadata import GroupMetadata

        first = vars(GroupMetadata)["init_next_generation"]
    with applied("generation_not_bumped"):
        assert vars(GroupMetadata)["init_next_generation"] is first
    assert mutants._BUILT[ALL["generation_not_bumped"]][1] == [first]
