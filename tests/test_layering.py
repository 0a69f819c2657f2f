"""The import rules of the architecture, read from the source.

- A module imports another package's public names only: never a private
  module (``dagnet.ndarray._invoke``) or a private name (``from dagnet.x
  import _y``) of a package it is not part of.  Plugins and backends see
  dagnet only from outside: ``dagnet._errors`` is private to them too.
- Core's packages form layers; a package imports only its own layer and the
  layers below it (imports inside functions included), but for the few
  upward references MXNet's API itself makes, listed with their reason.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CORE = ROOT / "core"
OUTSIDE = [ROOT / "plugins", ROOT / "backend_cpu", ROOT / "backend_cuda"]

# Bottom to top.  ``runtime`` runs kernels with the operators' OpContext, so the
# operator records sit just below it.
LAYERS = [
    {"_errors", "_argcheck", "_fork", "_handles", "config", "context", "backend", "plugins",
     "attribute", "name", "base", "util", "registry"},
    {"engine", "storage"},
    {"resource"},
    {"operator"},
    {"runtime"},
    {"ndarray"},
    {"symbol", "executor", "autograd", "random", "numpy", "numpy_extension", "np", "npx",
     "numpy_dispatch_protocol", "numpy_op_signature", "_numpy_op_doc",
     "onnx", "_clib"},
    {"initializer", "optimizer", "lr_scheduler", "metric", "io", "kvstore", "model",
     "recordio", "image", "profiler"},
    {"module", "callback", "launcher", "test_utils", "testing", "cli", "init", "kv", "mod",
     "nd", "sym", "gluon", "rnn", "_recurrent_step", "contrib", "visualization", "viz",
     "monitor", "mon"},
]
LAYER_OF = {name: level for level, names in enumerate(LAYERS) for name in names}

# Upward references MXNet's own API makes, each in a function, never at import.
ALLOWED_UPWARD = {
    ("ndarray", "random"): "mx.nd.random is mx.random's samplers",
    ("ndarray", "executor"): "mx.nd.CachedOp runs a symbol through an executor",
    ("symbol", "executor"): "Symbol.bind and Symbol.simple_bind make executors",
    ("ndarray", "numpy"): "NDArray.as_np_ndarray gives an mx.np array",
    ("base", "_clib"): "mxnet.base._LIB is the C library's entry points, emulated over "
                       "symbols and arrays",
}


def _modules(base: Path) -> list[Path]:
    return sorted(p for p in base.rglob("*.py") if "tests" not in p.relative_to(base).parts)


def _dotted(path: Path, base: Path) -> tuple[list[str], bool]:
    parts = list(path.relative_to(base).with_suffix("").parts)
    if parts[-1] == "__init__":
        return parts[:-1], True
    return parts, False


def _imports(path: Path, base: Path) -> list[tuple[int, list[str], str | None]]:
    """(line, imported module path, imported name or None) for every import in ``path``."""
    parts, is_package = _dotted(path, base)
    package = parts if is_package else parts[:-1]
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                module = package[:len(package) - node.level + 1]
                module += node.module.split(".") if node.module else []
            else:
                module = node.module.split(".")
            found.extend((node.lineno, module, alias.name) for alias in node.names)
        elif isinstance(node, ast.Import):
            found.extend((node.lineno, alias.name.split("."), None) for alias in node.names)
    return found


def _is_private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def _private_use(module: list[str], name: str | None, owner: list[str]) -> str | None:
    """The private part of ``module`` (+ ``name``) that ``owner`` may not reach, or None.

    A private module or name belongs to the package that holds it: only modules
    inside that package may import it.  Checked for dagnet's modules and for the
    importing package's own (a plugin's subpackages keep to each other's public
    names too)."""
    if module[:1] != ["dagnet"] and module[:1] != owner[:1]:
        return None
    path = module + ([name] if name else [])
    for depth, part in enumerate(path[1:], start=1):
        if _is_private(part):
            return None if owner[:depth] == path[:depth] else ".".join(path[:depth + 1])
    return None


def test_no_module_reaches_into_another_packages_private_modules():
    problems = []
    for base in [CORE, *OUTSIDE]:
        for path in _modules(base):
            owner = _dotted(path, base)[0]
            for line, module, name in _imports(path, base):
                private = _private_use(module, name, owner)
                if private:
                    problems.append(f"{path.relative_to(ROOT)}:{line} imports {private}")
    assert not problems, "\n".join(problems)


def _core_edges() -> list[tuple[str, str, str]]:
    edges = []
    for path in _modules(CORE / "dagnet"):
        parts, _ = _dotted(path, CORE)
        if len(parts) < 2:
            continue
        for line, module, _name in _imports(path, CORE):
            if module[:1] == ["dagnet"] and len(module) > 1 and module[1] != parts[1]:
                edges.append((parts[1], module[1], f"{path.relative_to(ROOT)}:{line}"))
    return edges


def test_every_core_package_has_a_layer():
    packages = {p.stem if p.is_file() else p.name for p in (CORE / "dagnet").iterdir()
                if (p.suffix == ".py" and p.stem != "__init__")
                or (p.is_dir() and (p / "__init__.py").exists())}
    assert packages <= set(LAYER_OF), f"add {sorted(packages - set(LAYER_OF))} to LAYERS"


def test_core_packages_import_only_their_layer_and_below():
    problems = [f"{where}: {source} imports {target}"
                for source, target, where in _core_edges()
                if target in LAYER_OF and LAYER_OF[target] > LAYER_OF[source]
                and (source, target) not in ALLOWED_UPWARD]
    assert not problems, "\n".join(problems)


def test_ndarray_never_imports_autograd():
    # autograd builds on ndarray; the array front end reaches the recorder only
    # through the runtime's hooks
    edges = [where for source, target, where in _core_edges()
             if (source, target) == ("ndarray", "autograd")]
    assert not edges, f"ndarray imports autograd at {edges}"
