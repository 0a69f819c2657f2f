"""Registers the built-in operators and graph passes (entry point ``ops`` of the ``dagnet``
distribution)."""

from __future__ import annotations

import importlib
import pkgutil

import dagnet


def _op_modules():
    """Every module of this package that defines ``OPS`` (found, not listed by hand)."""
    package = importlib.import_module(__package__)
    for info in pkgutil.walk_packages(package.__path__, prefix=f"{__package__}."):
        if info.name.endswith(".plugin") or info.name.rsplit(".", 1)[-1].startswith("_"):
            continue
        module = importlib.import_module(info.name)
        if hasattr(module, "OPS"):
            yield module


@dagnet.hookimpl
def dagnet_register_ops(ops):
    for module in _op_modules():
        for op in module.OPS:
            ops.add(op, aliases=op.aliases)


# MXNet's names for its CPU backend, whose rewrites the every-bind passes stand for
_CPU_BACKENDS = ("MKLDNN", "ONEDNN")


@dagnet.hookimpl
def dagnet_register_graph_passes(passes):
    from .graph_passes import (
        eliminate_identity,
        fold_batch_norm,
        fuse_conv,
        fuse_fully_connected,
        inference_layout,
    )
    from .nn import layout_pass
    from .subgraph import default_backend

    for module in (layout_pass, eliminate_identity, fold_batch_norm, fuse_conv,
                   fuse_fully_connected):
        passes.add(module.NAME, module.rewrite, backends=_CPU_BACKENDS, on_bind=True)
    # every bind only: its nodes are dagnet's, so optimize_for("MKLDNN") leaves a symbol
    # MXNet loads
    passes.add(inference_layout.NAME, inference_layout.rewrite)
    passes.add(default_backend.NAME, default_backend.rewrite, backends=default_backend.BACKENDS)
