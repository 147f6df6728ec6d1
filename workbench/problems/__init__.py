"""Problems in the KernelBench contract, and their loaders.

A problem file defines `class Model(nn.Module)`, `get_inputs()` and `get_init_inputs()`.
Built-in files (under `library/levelN/NN_name.py`) also carry metadata as module globals:

    CATEGORY = "softmax"            # what kind of operation
    DTYPE = "fp32"                  # fp32 | bf16 | fp16 | mixed
    TAGS = ("reduction",)           # free-form tags
    M, N = 4096, 8192               # sizes as UPPERCASE module globals ...
    CPU_SIZES = {"M": 64, "N": 96}  # ... overridden for the reduced-size CPU run
    def flops(): ...                # analytic FLOPs at the current sizes
    def bytes_moved(): ...          # analytic minimum DRAM bytes at the current sizes

Files from elsewhere (e.g. a KernelBench checkout) need only the contract; the metadata
is optional for them.
"""
from __future__ import annotations

from workbench.problems.loader import (  # noqa: F401
    LIBRARY_DIR,
    LoadedProblem,
    builtin_problems,
    get_problem,
    list_problems,
    load_dir,
    load_file,
    load_source,
)
