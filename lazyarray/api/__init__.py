"""The NumPy-named functions of the ``la`` namespace, by theme (``lazyarray``
re-exports them)."""
