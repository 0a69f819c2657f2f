"""Per-device resources for operators (MXNet's "Resource Manager").

An operator asks for resources by :class:`ResourceRequest`; the manager
hands it the device's random generator or one of its reusable temp spaces.
Each resource is guarded by an engine variable: an operator lists
``resource.var`` among the variables it mutates, so two users of the same
resource never overlap.
"""

from __future__ import annotations

import enum
import threading
import zlib
from typing import Any

import numpy as np

from .. import config, storage
from .._errors import ResourceError
from ..context import Context
from ..engine import RunContext, Var

__all__ = ["ResourceKind", "ResourceRequest", "Resource", "RandomResource", "TempSpace",
           "ResourceManager", "device_seed", "DEFAULT_SEED"]

DEFAULT_SEED = 0  # like MXNet, unseeded runs are reproducible


class ResourceKind(enum.Enum):
    """MXNet's ``ResourceRequest::Type``."""

    RANDOM = "random"
    TEMP_SPACE = "temp_space"


class ResourceRequest:
    """What an operator declares it needs: ``ResourceRequest(ResourceKind.RANDOM)``,
    or simply ``ResourceRequest("temp_space")``."""

    __slots__ = ("kind",)

    def __init__(self, kind: ResourceKind | str):
        try:
            self.kind = ResourceKind(kind)
        except ValueError:
            expected = ", ".join(sorted(k.value for k in ResourceKind))
            raise ResourceError(
                f"unknown resource kind {kind!r}; expected one of {expected} "
                f"(or a dagnet.resource.ResourceKind)") from None

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ResourceRequest) and other.kind is self.kind

    def __hash__(self) -> int:
        return hash(self.kind)

    def __repr__(self) -> str:
        return f"ResourceRequest({self.kind.value!r})"


def device_seed(seed: int, ctx: Context) -> int:
    """The seed of ``ctx``'s generator: a function of the global seed and the device
    alone, so seeding is reproducible whatever order devices are first used in."""
    tag = zlib.crc32(ctx.device_type.encode())
    return int(np.random.SeedSequence([seed, tag, ctx.device_id]).generate_state(1, np.uint64)[0])


class Resource:
    """A resource of one device, guarded by ``var``."""

    kind: ResourceKind

    def __init__(self, ctx: Context, var: Var):
        self.ctx = ctx
        self.var = var

    def __repr__(self) -> str:
        return f"<{type(self).__name__} on {self.ctx}>"


class RandomResource(Resource):
    """The device's random generator (numpy ``Generator`` on CPU, cupy's on GPU)."""

    kind = ResourceKind.RANDOM

    def __init__(self, ctx: Context, var: Var, backend: Any, seed: int):
        super().__init__(ctx, var)
        self._backend = backend
        self.generator = backend.create_random(device_seed(seed, ctx), ctx.device_id)

    def reseed(self, seed: int) -> None:
        """Restart the generator from ``seed`` (call from a function that mutates ``var``)."""
        self.generator = self._backend.create_random(device_seed(seed, self.ctx),
                                                     self.ctx.device_id)


class TempSpace(Resource):
    """A reusable scratch buffer that grows to the largest size asked of it."""

    kind = ResourceKind.TEMP_SPACE

    def __init__(self, ctx: Context, var: Var):
        super().__init__(ctx, var)
        self._handle: storage.Handle | None = None

    def get_space(self, shape: tuple[int, ...], dtype: Any = np.float32) -> Any:
        """An uninitialised array of ``shape`` and ``dtype`` in this buffer.

        Valid until the function holding ``var`` returns; call it from there.
        """
        dtype = np.dtype(dtype)
        nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
        # The block may be larger than first asked (its pool bucket): use all of it.
        if self._handle is None or self._handle.size < nbytes:
            if self._handle is not None:
                storage.free(self._handle)
                self._handle = None
            self._handle = storage.alloc(nbytes, self.ctx)
        return self._handle.data[:nbytes].view(dtype).reshape(shape)

    @property
    def nbytes(self) -> int:
        """Bytes currently held (the whole block, which may exceed the largest request)."""
        return self._handle.size if self._handle is not None else 0


class ResourceManager:
    """Creates each device's resources on first request and seeds them."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._seed = DEFAULT_SEED
        self._random: dict[Context, RandomResource] = {}
        self._temp: dict[Context, list[TempSpace]] = {}
        self._next_temp: dict[Context, int] = {}

    def request(self, ctx: Context, request: ResourceRequest) -> Resource:
        """The resource of ``ctx`` that ``request`` asks for."""
        if not isinstance(request, ResourceRequest):
            raise ResourceError(
                f"expected a dagnet.resource.ResourceRequest such as "
                f"ResourceRequest('temp_space'), got {request!r}")
        _check_ctx(ctx)
        if request.kind is ResourceKind.RANDOM:
            return self._random_of(ctx)
        return self._temp_of(ctx)

    def _random_of(self, ctx: Context) -> RandomResource:
        resource = self._random.get(ctx)
        if resource is None:
            from ..backend import backend_for

            backend = backend_for(ctx)
            with self._lock:
                resource = self._random.get(ctx)
                if resource is None:
                    resource = RandomResource(ctx, Var(f"random({ctx})"), backend, self._seed)
                    self._random[ctx] = resource
        return resource

    def _temp_of(self, ctx: Context) -> TempSpace:
        if ctx not in self._temp:
            from ..backend import backend_for

            backend_for(ctx)  # an unusable device fails here, not inside an operator
        with self._lock:
            spaces = self._temp.get(ctx)
            if spaces is None:
                copies = config.get("temp_space_copies")
                spaces = self._temp[ctx] = [TempSpace(ctx, Var(f"temp_space({ctx})#{i}"))
                                            for i in range(copies)]
                self._next_temp[ctx] = 0
            index = self._next_temp[ctx]
            self._next_temp[ctx] = (index + 1) % len(spaces)
            return spaces[index]

    def seed(self, seed: int, ctx: Context | None = None) -> None:
        """Seed the random generator of ``ctx``, or of every device (now and later).

        Reseeding goes through the engine as a function mutating the
        generator's variable, so random work pushed before it is unaffected.
        """
        if not isinstance(seed, (int, np.integer)) or isinstance(seed, bool) or seed < 0:
            raise ResourceError(
                f"seed must be an integer >= 0, got {type(seed).__name__} {seed!r}")
        seed = int(seed)
        from .. import engine

        if ctx is None:
            with self._lock:
                self._seed = seed
                targets = list(self._random.values())
        else:
            _check_ctx(ctx)
            targets = [self._random_of(ctx)]
        eng = engine.current()
        for resource in targets:
            eng.push_sync(_reseeder(resource, seed), resource.ctx, mutate_vars=[resource.var],
                          name="random.seed")


def _check_ctx(ctx: object) -> None:
    if not isinstance(ctx, Context):
        raise ResourceError(f"expected a dagnet Context such as dagnet.cpu(), got {ctx!r}")


def _reseeder(resource: RandomResource, seed: int):
    def reseed(run_ctx: RunContext) -> None:
        resource.reseed(seed)

    return reseed
