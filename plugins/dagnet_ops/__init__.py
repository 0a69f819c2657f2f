"""dagnet's built-in operator library, registered through the ``dagnet`` entry point.

Each module lists its operators in ``OPS``; :mod:`.plugin` registers them
when the operator registry is first needed.
"""
