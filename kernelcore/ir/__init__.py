"""The kernel intermediate representation: data, expressions, instructions, kernels."""
