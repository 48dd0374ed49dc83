"""The host replay side of ``la.jit``: calls of a signature of small host
arrays run by the host replay of the function's trace
(:mod:`lazyarray.host.replay`), traced once per function (or shared by
functions made anew from the same code that read equal constants), where
the tier trial (:mod:`lazyarray.host.trial`) found it the faster form of
the host tier.

Public names: ReplayCalls.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import numpy as np

from lazyarray.closure import changed, constants_key
from lazyarray.host.replay import HostReplay, host_replay
from lazyarray.host.trial import TierTrial
from lazyarray.jit_program import is_array, traced_scalar
from lazyarray.pytree import flatten

logger = logging.getLogger("lazyarray.jit")

#: a signature whose replay was not looked for yet
_UNSEEN: Any = object()


class ReplayCalls:
    """What a jitted function (``lazyarray.jit._Jitted``) adds to run its
    calls by host replays; it gives ``fn``, ``name``, ``_split``,
    ``_record``, ``_closure``, ``_positional`` and ``_leaf_order``."""

    fn: Any
    name: str
    _closure: tuple
    _positional: tuple | None
    _leaf_order: list | None
    #: by tier trial (a signature of small host arrays), the host replay of
    #: this function's trace, None where it has none
    _replays: dict[TierTrial, HostReplay | None]
    #: the same, taking the arguments of calls by position as they are
    _replays_by_position: dict[TierTrial, HostReplay]

    _split: Callable[..., tuple]
    _record: Callable[..., Any]

    def _replay_call(self, trial: TierTrial, args, kwargs) -> Any:
        """The call run by the host replay of its signature (traced first
        where this function has none yet), or by the function itself where
        it has no replay (:func:`~lazyarray.host.replay.host_replay`)."""
        if self._closure and changed(self._closure):
            self._replays.clear()
            self._replays_by_position.clear()
        replay = self._replays.get(trial, _UNSEEN)
        if replay is None:
            return self.fn(*args, **kwargs)
        if replay is _UNSEEN:
            # (functions made anew from this code, reading equal constants,
            # share one: a script that decorates a nested step on each run)
            key = constants_key(self.fn)
            replay = trial.replays.get(key) if key is not None else None
            if replay is None:
                made = self._make_replay(args, kwargs)
                if made is None:
                    self._replays[trial] = None
                    trial.no_replay()
                    return self.fn(*args, **kwargs)
                replay, result = made
                self._keep_replay(trial, replay)
                if key is not None:
                    trial.share(key, replay)
                return result
            self._keep_replay(trial, replay)
        if not kwargs and self._positional is not None and len(args) == len(self._positional):
            return self._replays_by_position[trial](args)       # (the common call)
        return replay(flatten(self._split(args, kwargs)[1])[0])

    def _keep_replay(self, trial: TierTrial, replay: HostReplay) -> None:
        self._replays[trial] = replay
        if self._leaf_order is not None:
            self._replays_by_position[trial] = replay.reordered(self._leaf_order)

    def _make_replay(self, args, kwargs) -> tuple[HostReplay, Any] | None:
        """The host replay of the call's signature and the call's result by
        it, or None (the call not run) where the function does not trace or
        its graph has a part the replay does not compute."""
        static, dynamic = self._split(args, kwargs)
        leaves, structure = flatten(dynamic)
        arrays: list[int] = []
        scalars: list[int] = []
        seen: set[int] = set()
        for position, leaf in enumerate(leaves):
            if is_array(leaf):
                if id(leaf) in seen:
                    return None         # (an array passed twice: compiled or itself)
                seen.add(id(leaf))
                arrays.append(position)
            elif traced_scalar(leaf):
                scalars.append(position)
            else:
                # (a bool, string or NumPy scalar: the trace holds its value,
                # which the signature of the tier trial does not tell apart)
                return None
        data = [np.asarray(leaves[k]._hv) for k in arrays]
        try:
            record = self._record(static, structure, leaves, data, range(len(arrays)),
                                  purpose="its host replay")
        except Exception as error:
            logger.info("%s: no host replay (%s: %s)", self.name, type(error).__name__, error)
            return None
        try:
            if record.supplies:
                return None
            return host_replay(
                leaves, list(zip(arrays, record.placeholders)),
                list(zip(scalars, record.params)),
                [(node, None if k is None else arrays[k])
                 for node, k in zip(record.out_nodes, record.returned)],
                [(arrays[k], node) for k, node in record.changed], record.structure)
        finally:
            for p in record.placeholders:
                p.data = None


__all__ = ["ReplayCalls"]
