"""Running kernels: devices, argument processing, program caches."""
