"""Layout sizes that both the planner and the lowering read: the largest GPU
work-group, the registers of a GPU row kernel, a tile's edge, and which
results get a work-item per row (the planner plans for the layouts the
lowering will choose).

Public names: MAX_GROUP, ROW_SLOTS, TILE, NARROW_COLUMNS, has_narrow_rows.
"""

from __future__ import annotations

#: the largest work-group any GPU allows
MAX_GROUP = 1024
#: elements of a row array (a value kept in registers) per work-item of a GPU
#: row kernel at most: rows of up to MAX_GROUP * ROW_SLOTS elements are read
#: from memory once
ROW_SLOTS = 32
#: edge of a square tile (one warp wide)
TILE = 32
#: ... and a result with at most this many columns has each work-item write
#: a row (2*a.T of 4x16777216: 238 us -> 154 us; of 16x4194304 this way
#: 758 us, a row's stores too far apart)
NARROW_COLUMNS = 4


def has_narrow_rows(extents: tuple) -> bool:
    """Whether a GPU result of *extents* has each work-item write a whole row
    whatever it reads: rows of 2 to :data:`NARROW_COLUMNS` elements, more
    rows than a tile. (W5's heat steps over 16777216x4 on an H200: 1851 ->
    1683 us with a work-item per row, no longer diverging on the boundary
    columns; over 8388608x3: 646 -> 472 us; ``a*b + c`` of 16777216x4:
    276 -> 249 us.)"""
    return len(extents) >= 2 and 1 < extents[-1] <= NARROW_COLUMNS and extents[-2] > TILE
