"""Kernels from Einstein summation specifications (loopy's ``make_einsum``).

Public names: make_einsum.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from kernelcore.creation import make_kernel
from kernelcore.diagnostic import ParseError


def make_einsum(spec: str, arg_names: Sequence[str], **knl_creation_kwargs: Any) -> Any:
    """A kernel computing :func:`numpy.einsum`'s *spec* (``"ij,j->i"``) of
    the arrays *arg_names*; the result is ``out``, and the length of index
    ``i`` is the parameter ``Ni``. Further keyword arguments go to
    :func:`~kernelcore.make_kernel`."""
    if "->" not in spec:
        raise ParseError(f"make_einsum: spec {spec!r} needs an explicit '->' output")
    in_part, out_spec = (p.strip() for p in spec.split("->"))
    in_specs = [s.strip() for s in in_part.split(",")]
    if isinstance(arg_names, str):
        arg_names = [s.strip() for s in arg_names.split(",")]
    if len(in_specs) != len(arg_names):
        raise ParseError(f"make_einsum: {len(in_specs)} operands in {spec!r} but "
                              f"{len(arg_names)} argument names")
    for s in in_specs + [out_spec]:
        if not all(c.isalpha() for c in s):
            raise ParseError(f"make_einsum: index names must be letters, got {s!r}")
    if len(set(out_spec)) != len(out_spec):
        raise ParseError(f"make_einsum: repeated index in output {out_spec!r}")
    indices = list(dict.fromkeys("".join(in_specs + [out_spec])))   # each once, in order
    missing = set(out_spec) - set("".join(in_specs))
    if missing:
        raise ParseError(f"make_einsum: output index {sorted(missing)} not in any input")
    summed = [c for c in indices if c not in out_spec]
    domain = "{{ [{}]: {} }}".format(", ".join(indices),
                               " and ".join(f"0 <= {c} < N{c}" for c in indices))

    def access(name: str, s: str) -> str:
        return f"{name}[{', '.join(s)}]" if s else name

    product = "*".join(access(n, s) for n, s in zip(arg_names, in_specs))
    if summed:
        rhs = f"sum(({', '.join(summed)}), {product})" if len(summed) > 1 \
            else f"sum({summed[0]}, {product})"
    else:
        rhs = product
    knl_creation_kwargs.setdefault("name", "einsum")
    return make_kernel(domain, f"{access('out', out_spec)} = {rhs}", **knl_creation_kwargs)


__all__ = ["make_einsum"]
