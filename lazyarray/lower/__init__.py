"""Lowering stored nodes to kernelcore kernels: the kernel and its schedule
(``kernel``), expressions and shared values (``expr``), statements, domains
and index algebra (``ir``), reduction layouts (``reduction``), transposed
tiles (``tiles``) and blocked products (``contraction``)."""
