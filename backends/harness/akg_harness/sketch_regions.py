"""Regions of tensors and tiles: the bounds-guarded reads and writes of load, store and subscripts.

A region is one selector per dimension of its base (language reference, "Data movement"): an
integer index (the dimension is dropped), a slice ``a:b:s`` (extent ``ceil((b - a) / s)``), an
integer tile (the dimension is replaced by the tile's dimensions: element positions are the tile's
values), ``None`` (a new axis of extent 1, consuming no dimension), and whole dimensions for the
omitted trailing ones. Positions outside the base are never read (the reader gets a validity mask)
and never written. Positions are not wrapped: ``-1`` is outside, not the last element.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import List, Optional, Sequence, Tuple, Union

import numpy as np

from .sketch_values import Shape, SketchError, Tile, is_int

# Evaluated subscript items: an int, a slice (start, stop, step, any None), None (new axis) or an
# integer tile.
SliceItem = Tuple[Optional[int], Optional[int], Optional[int]]
IndexItem = Union[int, "SliceSpec", None, Tile]


@dataclass(frozen=True)
class SliceSpec:
    start: Optional[int]
    stop: Optional[int]
    step: Optional[int]


@dataclass(frozen=True)
class Selector:
    """How one base dimension is selected."""

    kind: str  # "int", "slice" or "tile"
    start: int = 0  # int: the index; slice: the first position
    step: int = 1
    extent: int = 0
    positions: Optional[np.ndarray] = None  # tile: the positions (int64)


@dataclass(frozen=True)
class Region:
    base_shape: Shape
    selectors: Tuple[Selector, ...]  # one per base dimension
    # For each output dimension: ("sel", selector index, dimension within a tile selector) or
    # ("new", -1, 0) for a new axis.
    layout: Tuple[Tuple[str, int, int], ...]
    shape: Shape

    @property
    def is_box(self) -> bool:
        return all(s.kind != "tile" for s in self.selectors)


def whole(shape: Shape) -> Region:
    sels = tuple(Selector("slice", 0, 1, d) for d in shape)
    return Region(tuple(shape), sels, tuple(("sel", i, 0) for i in range(len(shape))), tuple(shape))


def build_region(base_shape: Shape, items: Sequence[IndexItem], base_name: str) -> Region:
    """The region selected by ``items`` in a base of ``base_shape``; raises SketchError when the
    items cannot select from it (too many, a non-positive step, a non-integer index tile)."""
    used = sum(1 for it in items if it is not None)
    if used > len(base_shape):
        raise SketchError(f"too many indices for '{base_name}': {used} given but it has rank {len(base_shape)}")
    sels: List[Selector] = []
    layout: List[Tuple[str, int, int]] = []
    shape: List[int] = []
    for it in items:
        if it is None:
            layout.append(("new", -1, 0))
            shape.append(1)
            continue
        dim = base_shape[len(sels)]
        if isinstance(it, SliceSpec):
            start = 0 if it.start is None else it.start
            stop = dim if it.stop is None else it.stop
            step = 1 if it.step is None else it.step
            if step <= 0:
                raise SketchError(f"slice step must be positive, got {step} (indexing '{base_name}')")
            extent = max(0, -(-(stop - start) // step))
            layout.append(("sel", len(sels), 0))
            shape.append(extent)
            sels.append(Selector("slice", start, step, extent))
        elif isinstance(it, Tile):
            if not is_int(it.dtype) or it.data is None:
                raise SketchError(f"an index tile into '{base_name}' must hold integers, got {it.dtype}")
            for k, extent in enumerate(it.shape):
                layout.append(("sel", len(sels), k))
                shape.append(extent)
            sels.append(Selector("tile", positions=it.data.astype(np.int64)))
        else:
            sels.append(Selector("int", int(it)))
    for d in range(len(sels), len(base_shape)):
        layout.append(("sel", len(sels), 0))
        shape.append(base_shape[d])
        sels.append(Selector("slice", 0, 1, base_shape[d]))
    return Region(tuple(base_shape), tuple(sels), tuple(layout), tuple(shape))


# ---- box regions (no index tiles): the valid part is a box, read and written by slicing ----


def _valid_range(sel: Selector, dim: int) -> Tuple[int, int]:
    """For a slice, the k with 0 <= start + k*step < dim, as [lo, hi); for an int, (0, 1) or (0, 0)."""
    if sel.kind == "int":
        return (0, 1) if 0 <= sel.start < dim else (0, 0)
    lo = max(0, -(-(-sel.start) // sel.step))
    hi = min(sel.extent, -(-(dim - sel.start) // sel.step))
    return lo, max(lo, hi)


def _box_indices(region: Region) -> Optional[Tuple[tuple, tuple]]:
    """(base index, region index) of the valid box, or None when nothing is valid."""
    ranges = [_valid_range(s, d) for s, d in zip(region.selectors, region.base_shape)]
    if any(hi <= lo for lo, hi in ranges):
        return None
    base_idx: List[Union[int, slice]] = []
    for sel, (lo, hi) in zip(region.selectors, ranges):
        if sel.kind == "int":
            base_idx.append(sel.start)
        else:
            base_idx.append(slice(sel.start + lo * sel.step, sel.start + (hi - 1) * sel.step + 1, sel.step))
    out_idx: List[Union[int, slice]] = []
    for kind, s, _ in region.layout:
        if kind == "new":
            out_idx.append(0)
        else:
            lo, hi = ranges[s]
            out_idx.append(slice(lo, hi))
    return tuple(base_idx), tuple(out_idx)


# ---- general regions (index tiles): per-element positions ----


def _positions(region: Region) -> List[np.ndarray]:
    """Per base dimension, its positions as an array broadcastable to the region's shape."""
    rank = len(region.shape)
    out: List[np.ndarray] = []
    for i, sel in enumerate(region.selectors):
        if sel.kind == "int":
            out.append(np.array(sel.start, dtype=np.int64))
            continue
        dims = [k for k, (kind, s, _) in enumerate(region.layout) if kind == "sel" and s == i]
        shape = [1] * rank
        if sel.kind == "slice":
            shape[dims[0]] = sel.extent
            out.append((sel.start + sel.step * np.arange(sel.extent, dtype=np.int64)).reshape(shape))
        else:
            assert sel.positions is not None
            for k, d in enumerate(dims):
                shape[d] = sel.positions.shape[k]
            out.append(sel.positions.reshape(shape))
    return out


def read(base: np.ndarray, region: Region) -> Tuple[np.ndarray, np.ndarray]:
    """(values, valid): the region's elements (0 where invalid) and which ones lie inside the base."""
    values = np.zeros(region.shape, dtype=base.dtype)
    valid = np.zeros(region.shape, dtype=np.bool_)
    if region.is_box:
        idx = _box_indices(region)
        if idx is not None:
            base_idx, out_idx = idx
            values[out_idx] = base[base_idx]
            valid[out_idx] = True
        return values, valid
    pos = _positions(region)
    ok = np.ones(region.shape, dtype=np.bool_)
    for p, dim in zip(pos, region.base_shape):
        ok &= (p >= 0) & (p < dim)
    clipped = tuple(np.clip(p, 0, max(dim - 1, 0)) for p, dim in zip(pos, region.base_shape))
    gathered = np.broadcast_to(base[clipped] if clipped else base, region.shape)
    np.copyto(values, gathered, where=ok)
    return values, ok


def write(base: np.ndarray, region: Region, values: np.ndarray, select: np.ndarray) -> None:
    """Writes values (region-shaped, base's dtype) where select is true and the position lies
    inside the base; nothing else of the base changes."""
    if region.is_box:
        idx = _box_indices(region)
        if idx is None:
            return
        base_idx, out_idx = idx
        view = base[base_idx + (Ellipsis,)]
        np.copyto(view, values[out_idx], where=select[out_idx])
        return
    pos = _positions(region)
    ok = np.broadcast_to(select, region.shape).copy()
    for p, dim in zip(pos, region.base_shape):
        ok &= (p >= 0) & (p < dim)
    full = [np.broadcast_to(p, region.shape)[ok] for p in pos]
    base[tuple(full)] = values[ok]


def squeezed(shape: Shape) -> Shape:
    return tuple(d for d in shape if d != 1)


def same_up_to_units(a: Shape, b: Shape) -> bool:
    return squeezed(a) == squeezed(b)


def broadcast_mask(mask: np.ndarray, shapes: Sequence[Shape], target: Shape) -> Optional[np.ndarray]:
    """mask broadcast to ``target``: directly, or to one of ``shapes`` (the same elements in another
    arrangement of unit dimensions) and reshaped; None when it fits none of them."""
    for shape in (target,) + tuple(shapes):
        try:
            out = np.broadcast_to(mask, shape)
        except ValueError:
            continue
        return out.reshape(target)
    return None
