"""ipywidgets front-ends over the workbench's objects, for Jupyter.

    from widgets import CalibrationWidget
    CalibrationWidget.from_store(store, forecaster="learned-heldout", hardware_key="h100")

They share their logic with the Panel app (`workbench.ui`): the same pure functions compute
what is shown, so a notebook and the app agree on every number.
"""
from __future__ import annotations

from widgets.calibration import CalibrationWidget

__all__ = ["CalibrationWidget"]
