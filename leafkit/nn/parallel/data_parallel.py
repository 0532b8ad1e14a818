"""``DataParallel``, as ``torch.nn.DataParallel`` behaves on the machines leafkit runs on.

PyTorch's ``DataParallel`` copies a module to every GPU and splits each batch between them.  Without a GPU it
does nothing of that: it keeps the module as ``.module`` and forwards every call to it, so old tutorials that
wrap their model run unchanged.  leafkit does exactly this when ``torch.cuda.is_available()`` is False (the
simulated cuda device counts as no GPU, as for ``torch.accelerator``).  With a real GPU (CuPy) there is one
device, and leafkit does what PyTorch does with one: it moves the module to ``cuda:0``, moves the inputs there
and calls the module.  Either way the wrapper's parameters and ``state_dict`` keys start with ``module.``.
"""

from __future__ import annotations

from ... import _device
from ... import cuda as _cuda
from ..._tensor import Tensor
from ..module import Module

__all__ = ["DataParallel"]


def _to_device(obj, dev):
    if isinstance(obj, Tensor):
        return obj.to(dev)
    if isinstance(obj, tuple) and hasattr(obj, "_fields"):
        return type(obj)(*(_to_device(o, dev) for o in obj))
    if isinstance(obj, (list, tuple)):
        return type(obj)(_to_device(o, dev) for o in obj)
    if isinstance(obj, dict):
        return type(obj)((k, _to_device(v, dev)) for k, v in obj.items())
    return obj


class DataParallel(Module):
    """Run ``module`` on every GPU in parallel, splitting the batch along ``dim`` (``torch.nn.DataParallel``).

    Parameters
    ----------
    module : Module
    device_ids : list of int, optional
        With a GPU: default ``[0]`` (leafkit has one); only 0 is valid.
    output_device : int, optional
        With a GPU: default ``device_ids[0]``.
    dim : int
        The batch dimension (default 0).

    Attributes
    ----------
    module : Module
        The wrapped module; ``state_dict()`` keys are ``"module." + key``.
    device_ids : list of int
        ``[]`` without a GPU (then ``forward`` is ``module(*inputs, **kwargs)``, and there is no
        ``output_device``, as in PyTorch).

    Raises
    ------
    RuntimeError
        With a GPU, in ``forward``: "module must have its parameters and buffers on device cuda:0
        (device_ids[0]) but found one of them on device: cpu" when the module was moved off the GPU.
    """

    def __init__(self, module, device_ids=None, output_device=None, dim=0):
        super().__init__()
        if not _cuda.is_available():
            self.module = module
            self.device_ids = []
            return
        if device_ids is None:
            device_ids = [0]
        device_ids = [d.index if isinstance(d, _device.device) else d for d in device_ids]
        if any(d != 0 for d in device_ids):
            raise RuntimeError("CUDA error: invalid device ordinal (leafkit has one GPU, device 0)")
        if output_device is None:
            output_device = device_ids[0]
        self.dim = dim
        self.module = module
        self.device_ids = device_ids
        self.output_device = output_device
        self.src_device_obj = _device.CUDA0
        self.module.to(self.src_device_obj)

    def forward(self, *inputs, **kwargs):
        if not self.device_ids:
            return self.module(*inputs, **kwargs)
        for t in list(self.module.parameters()) + list(self.module.buffers()):
            if t.device != self.src_device_obj:
                raise RuntimeError(
                    f"module must have its parameters and buffers on device {self.src_device_obj} (device_ids[0]) "
                    f"but found one of them on device: {t.device}"
                )
        return self.module(*_to_device(inputs, self.src_device_obj), **_to_device(kwargs, self.src_device_obj))
