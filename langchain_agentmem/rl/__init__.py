"""Training and evaluating the memory policy: environment, PPO, evaluation."""
