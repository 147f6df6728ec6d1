"""Search landscapes: a problem's whole kernel family measured, stored with its neighbourhoods,
replayed without a GPU; the structure metrics; the held-out protocol."""
from __future__ import annotations

from workbench.landscape.core import (Landscape, LandscapeError, PointRow, enumerate_landscape, measure,
                                      read_landscapes, seed_points, write_landscapes)
from workbench.landscape.protocol import (Choice, HeldOutLeakError, Protocol, ProtocolError,
                                          guard_forecaster, guarded_factory, inner_cv_choose, load_protocol)
from workbench.landscape.replay import LandscapeGenerator
from workbench.landscape.structure import structure

__all__ = ["Choice", "HeldOutLeakError", "guard_forecaster", "guarded_factory", "Landscape", "LandscapeError", "LandscapeGenerator", "PointRow", "Protocol",
           "ProtocolError", "enumerate_landscape", "inner_cv_choose", "load_protocol", "measure", "read_landscapes",
           "seed_points", "structure", "write_landscapes"]
