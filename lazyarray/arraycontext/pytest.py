"""Registration with arraycontext's pytest machinery: importing this module
adds the factory ``lazyarray``, so any suite parametrized by
``pytest_generate_tests_for_array_contexts`` runs on
:class:`~lazyarray.arraycontext.context.LazyarrayArrayContext` with
``ARRAYCONTEXT_TEST=lazyarray``. As a plugin::

    ARRAYCONTEXT_TEST=lazyarray python -m pytest -p lazyarray.arraycontext.pytest test/

Public names: PytestLazyarrayArrayContextFactory.
"""

from __future__ import annotations

from arraycontext.pytest import (
    _ARRAY_CONTEXT_FACTORY_REGISTRY,
    PytestPyOpenCLArrayContextFactory,
    register_pytest_array_context_factory,
)


class PytestLazyarrayArrayContextFactory(PytestPyOpenCLArrayContextFactory):
    """Makes a :class:`LazyarrayArrayContext` on a new queue of the device
    arraycontext's machinery passes."""

    @classmethod
    def is_available(cls) -> bool:
        try:
            import lazyarray.arraycontext.context  # noqa: F401  (needs arraycontext: optional)
        except ImportError:
            return False
        return True

    def __call__(self):
        from lazyarray.arraycontext.context import LazyarrayArrayContext  # (arraycontext: optional)
        _, queue = self.get_command_queue()
        return LazyarrayArrayContext(queue)

    def __str__(self) -> str:
        return (f"<LazyarrayArrayContext for <pyopencl.Device "
                f"'{self.device.name.strip()}' on '{self.device.platform.name.strip()}'>>")


if "lazyarray" not in _ARRAY_CONTEXT_FACTORY_REGISTRY:
    register_pytest_array_context_factory("lazyarray", PytestLazyarrayArrayContextFactory)


__all__ = ["PytestLazyarrayArrayContextFactory"]
