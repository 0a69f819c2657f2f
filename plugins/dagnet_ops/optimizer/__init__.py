"""Optimizer updates (MXNet's ``src/operator/optimizer_op``): each computes a new weight,
written to its output (usually ``out=weight``), and updates its state arrays in place."""
