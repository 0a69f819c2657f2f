"""``dagnet.mod`` / ``dagnet.module``: the Module API that trains a symbol (MXNet's
``mx.mod``).

>>> import numpy as np, dagnet as mx
>>> net = mx.sym.SoftmaxOutput(mx.sym.FullyConnected(mx.sym.Variable("data"),
...                                                  num_hidden=2, name="fc"), name="softmax")
>>> train = mx.io.NDArrayIter(np.random.rand(8, 3), np.arange(8) % 2, batch_size=4)
>>> mod = mx.mod.Module(net)
>>> mod.fit(train, num_epoch=1, optimizer_params={"learning_rate": 0.1})
>>> mod.predict(train).shape
(8, 2)
"""

from __future__ import annotations

from ._base_module import BaseModule, ModuleStateError
from ._module import Module
from .bucketing_module import BucketingModule
from .executor_group import DataParallelExecutorGroup

__all__ = ["BaseModule", "BucketingModule", "DataParallelExecutorGroup", "Module",
           "ModuleStateError"]
