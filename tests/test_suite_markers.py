"""The suite's own bookkeeping: the modules tests/conftest.py marks `version_independent` (left to
the Python 3.11 leg by the 3.12 leg, decision 145) exist under those names, so a renamed module
cannot silently drop out of the mark, and the mark reaches their tests."""

import os

import conftest
import pytest

HERE = os.path.dirname(os.path.abspath(__file__))


@pytest.mark.parametrize("module", sorted(conftest.VERSION_INDEPENDENT_MODULES))
def test_each_version_independent_module_exists_and_says_why(module):
    assert os.path.isfile(os.path.join(HERE, module)), f"{module} is named in conftest.py but gone"
    assert conftest.VERSION_INDEPENDENT_MODULES[module].strip(), module


def test_the_mark_reaches_the_listed_modules_tests(request):
    items = [item for item in request.session.items if item.path.name == "test_cache_cli.py"]
    if not items:
        pytest.skip("test_cache_cli.py is not part of this run")
    assert all("version_independent" in item.keywords for item in items)
    mine = request.node
    assert "version_independent" not in mine.keywords  # this module is run by both legs


@pytest.mark.parametrize(
    "module", sorted({*conftest.SLOW_MODULES_FIRST, *conftest.ONE_WORKER_MODULES})
)
def test_each_scheduling_module_exists(module):
    # A renamed module would silently lose its place first in the run, or its one worker.
    assert os.path.isfile(os.path.join(HERE, module)), f"{module} is named in conftest.py but gone"


def test_a_module_fixture_keeps_its_tests_on_one_worker():
    # test_sharding.py's tests share one child process of 8 devices (a module-scoped fixture):
    # under -n they are one unit of xdist's work, so the child runs once (decision 257); a test
    # of a module without one is a unit of its own.
    sharding = os.path.join(HERE, "test_sharding.py")
    assert conftest.shares_work_across_tests(sharding)
    assert not conftest.shares_work_across_tests(os.path.join(HERE, "test_suite_markers.py"))
    assert conftest.shares_work_across_tests(os.path.join(HERE, "test_error_fixes.py"))
    shared = {"tests/test_sharding.py"}
    assert (
        conftest.xdist_unit("tests/test_sharding.py::test_a[x]", shared) == "tests/test_sharding.py"
    )
    mine = "tests/test_suite_markers.py::test_a_module_fixture_keeps_its_tests_on_one_worker"
    assert conftest.xdist_unit(mine, shared) == mine
