"""Scheduling: ordering loops and instructions into a linearization."""
