"""Planning: which values of a graph are stored, and why (``storage``)."""
