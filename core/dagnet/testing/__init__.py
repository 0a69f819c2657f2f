"""Testing helpers for dagnet and for plugin authors.

The conformance suites ship here so that an outside engine, backend or
operator package checks itself exactly as the built-in ones are checked;
the ``dagnet`` pytest plugin (entry point ``pytest11``) provides the
fixtures that parametrize them over every registered engine and backend.
"""
