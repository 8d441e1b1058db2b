"""The README's Python snippet: the planner swings up the pendulum for 300 steps."""
import sys

import dfmpc

model = sys.argv[1] if len(sys.argv) > 1 else "examples/models/pendulum_swingup.pt"
env = dfmpc.make_env("pendulum_swingup")
planner = dfmpc.Planner.from_file(model, seed=3)  # the task's tuned options, seed 3

observation, _ = env.reset(seed=0)
planner.reset(observation)
episode_return = 0.0
for _ in range(300):
    observation, reward, terminated, truncated, _ = env.step(planner.act(observation))
    episode_return += reward
print(f"return over 300 steps: {episode_return:.1f}")
env.close()
