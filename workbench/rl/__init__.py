"""RL training of a forecaster: reward functions, training data, GRPO with LoRA.

`rewards` needs only numpy; `data` needs `datasets` for `to_dataset`; `train` needs trl and
peft (the `llm` extra). Imports here stay light: the heavy ones happen inside the functions.
"""
from __future__ import annotations

from workbench.rl.rewards import (REWARDS, TRAINING_REWARDS, brier_reward, constant_groups,
                                  correctness_reward, crps_reward, format_reward, get_reward)

__all__ = ["REWARDS", "TRAINING_REWARDS", "brier_reward", "constant_groups", "correctness_reward",
           "crps_reward", "format_reward", "get_reward"]
