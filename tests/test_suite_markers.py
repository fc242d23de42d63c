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
