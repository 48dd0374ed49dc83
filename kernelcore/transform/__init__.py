"""Kernel transformations: pure functions from kernel to kernel."""
