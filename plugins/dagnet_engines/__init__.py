"""dagnet's built-in engine variants, registered through the ``dagnet`` entry point.

- :mod:`.naive` runs each function inline at push: the debugging engine and
  the reference the others are checked against.
- :mod:`.threaded` runs ready functions on one shared worker pool.
- :mod:`.threaded_per_device` gives each device its own workers, streams,
  copy lanes and a priority lane (the default engine).
"""
