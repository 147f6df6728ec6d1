"""Command groups of the `workbench` CLI; one module per group, each with `register(sub)`."""
