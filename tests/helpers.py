"""Helpers shared by the tests of every component: the checkout's root
folder, host copies of results, counting what lazyarray launches and builds."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
