"""Code generation targets."""
