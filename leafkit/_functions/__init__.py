"""leafkit's differentiable operations, one module per family.

Every class here is both the operation (``Cls.apply(...)``) and the node it
leaves in the graph, named as PyTorch names it (``MulBackward0``).  Forward
and backward work on NumPy/CuPy arrays (``_array_api = True``); the engine
sums every input gradient back to the input's shape and casts it to the
input's dtype, so no op undoes broadcasting itself.
"""
