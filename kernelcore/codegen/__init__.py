"""Code generation: a linearized kernel -> OpenCL C source."""
