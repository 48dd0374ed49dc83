"""Package version (part of every cache key)."""

VERSION = "0.1.0"
