"""The entry point of dagnet's pytest plugin (``pytest11``), which loads
:mod:`dagnet.testing.pytest_plugin`, where the hooks and fixtures are.

It is a package of its own because pytest rewrites the assertions of every module
of the package that owns a plugin it loads from an entry point: owned by ``dagnet``,
the plugin made every pytest session parse and compile all of dagnet again, seconds
before the first test.  Only the test helpers, :mod:`dagnet.testing`, are rewritten.
"""

import pytest

pytest.register_assert_rewrite("dagnet.testing")

pytest_plugins = ["dagnet.testing.pytest_plugin"]
