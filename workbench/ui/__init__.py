"""Panel components of the workbench app (`panel serve workbench/app.py`).

The app is a data store (workbench.store.Store), one background runner per server process
(kept in `pn.state.cache`), and views that poll the store's version counter and redraw.
"""
