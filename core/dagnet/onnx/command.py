"""``dagnet onnx``: convert a saved model to ONNX and back from the command line.

    dagnet onnx export PREFIX EPOCH --input-shape 1,3,224,224 [--output FILE]
    dagnet onnx import FILE PREFIX [--epoch N]

``export`` reads ``PREFIX-symbol.json`` and ``PREFIX-EPOCH.params`` (what
``HybridBlock.export`` or ``mx.model.save_checkpoint`` writes) and writes
``PREFIX.onnx``; ``import`` writes an ONNX model's symbol and parameters in that
same checkpoint form.  A graph of many operators shows a progress bar.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

from .. import ndarray as nd
from ._errors import OnnxError
from ._export import default_export_opset, export_model
from ._import import import_to_symbol
from .to_onnx import EXPORT_OPSETS

__all__ = ["main"]

# Below this many operators a conversion takes a moment and no bar is drawn.
PROGRESS_THRESHOLD = 100


def _shape(text: str) -> tuple[int, ...]:
    cleaned = text.strip().strip("()[]").replace("x", ",")
    try:
        shape = tuple(int(d) for d in cleaned.split(",") if d.strip())
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a shape such as 1,3,224,224"
                                         ) from None
    if not shape or any(d < 1 for d in shape):
        raise argparse.ArgumentTypeError(f"{text!r} is not a shape of positive sizes")
    return shape


def _progress(enabled: bool, what: str) -> Callable[[Iterable[Any]], Iterable[Any]] | None:
    """tqdm over the operators when the graph is large (and bars are wanted)."""
    if not enabled:
        return None
    from tqdm import tqdm

    def wrap(items: Iterable[Any]) -> Iterable[Any]:
        items = list(items)
        if len(items) < PROGRESS_THRESHOLD:
            return items
        return tqdm(items, desc=what, unit="op", file=sys.stderr)

    return wrap


def _export(args: argparse.Namespace) -> int:
    symbol_file = f"{args.prefix}-symbol.json"
    params_file = f"{args.prefix}-{args.epoch:04d}.params"
    output = args.output or f"{args.prefix}.onnx"
    shapes = args.input_shape
    types = [np.dtype(t) for t in args.input_type] if args.input_type else np.float32
    dynamic_shapes = None
    if args.dynamic_batch:
        dynamic_shapes = [(None, *shape[1:]) for shape in shapes]
    export_model(symbol_file, params_file, shapes, types, output,
                 dynamic=bool(args.dynamic or args.dynamic_batch),
                 dynamic_input_shapes=dynamic_shapes, opset_version=args.opset,
                 run_shape_inference=args.shape_inference,
                 progress=_progress(args.progress, "exporting"))
    opset = args.opset or default_export_opset()
    print(f"wrote {output} (ONNX opset {opset}) from {symbol_file} and {params_file}")
    return 0


def _import(args: argparse.Namespace) -> int:
    symbol, arg_params, aux_params = import_to_symbol(
        args.file, progress=_progress(args.progress, "importing"))
    symbol_file = f"{args.prefix}-symbol.json"
    params_file = f"{args.prefix}-{args.epoch:04d}.params"
    symbol.save(symbol_file)
    saved = {f"arg:{k}": v for k, v in arg_params.items()}
    saved.update({f"aux:{k}": v for k, v in aux_params.items()})
    nd.save(params_file, saved)
    inputs = [n for n in symbol.list_inputs() if n not in arg_params and n not in aux_params]
    print(f"wrote {symbol_file} and {params_file} from {args.file} (inputs: "
          f"{', '.join(inputs)})")
    return 0


def parser() -> argparse.ArgumentParser:
    """The ``dagnet onnx`` argument parser."""
    top = argparse.ArgumentParser(prog="dagnet onnx", description=__doc__.split("\n\n")[0])
    commands = top.add_subparsers(dest="direction", required=True)
    export = commands.add_parser("export", help="PREFIX-symbol.json + PREFIX-EPOCH.params "
                                                "-> an ONNX model")
    export.add_argument("prefix", metavar="PREFIX")
    export.add_argument("epoch", metavar="EPOCH", type=int)
    export.add_argument("--input-shape", type=_shape, action="append", required=True,
                        metavar="SHAPE", help="an example shape per input, in order "
                        "(repeat for several inputs), e.g. 1,3,224,224")
    export.add_argument("--input-type", action="append", metavar="DTYPE",
                        help="each input's dtype (default float32)")
    export.add_argument("--output", "-o", metavar="FILE", help="default PREFIX.onnx")
    export.add_argument("--opset", type=int, default=None,
                        choices=list(EXPORT_OPSETS), help="ONNX opset (default: 13)")
    export.add_argument("--dynamic", action="store_true",
                        help="every input dimension variable")
    export.add_argument("--dynamic-batch", action="store_true",
                        help="only the first (batch) dimension variable")
    export.add_argument("--shape-inference", action="store_true",
                        help="store ONNX's inferred shapes in the file")
    importer = commands.add_parser("import", help="an ONNX model -> PREFIX-symbol.json + "
                                                  "PREFIX-EPOCH.params")
    importer.add_argument("file", metavar="FILE")
    importer.add_argument("prefix", metavar="PREFIX")
    importer.add_argument("--epoch", type=int, default=0)
    for sub in (export, importer):
        sub.add_argument("--no-progress", dest="progress", action="store_false",
                         help="no progress bar, however large the graph")
    return top


def main(argv: list[str] | None = None) -> int:
    """Run ``dagnet onnx``; exit status 0 on success, 2 with a message on error."""
    args = parser().parse_args(sys.argv[1:] if argv is None else argv)
    try:
        return _export(args) if args.direction == "export" else _import(args)
    except (OnnxError, ImportError, OSError) as error:
        print(f"dagnet onnx {args.direction}: error: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
