"""Random samplers (MXNet's ``src/operator/random``): operators without inputs that fill
their output from the device's random generator (a ``random`` resource)."""
