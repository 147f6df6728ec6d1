"""The zoo runs on the CPU through Triton's interpreter: set it before triton is imported."""
import os

os.environ.setdefault("TRITON_INTERPRET", "1")
