"""Box spaces of the environments' observations and actions.

gymnasium is not in Debian, so Env.observation_space and Env.action_space
are plain objects with gymnasium's Box names and meaning: low, high, shape,
dtype, contains() and sample().
"""

import numpy as np


class Box:
    """The values between low and high, elementwise (either may be +-inf)."""

    def __init__(self, low, high):
        self.low = np.asarray(low, dtype=np.float64)
        self.high = np.asarray(high, dtype=np.float64)
        if self.low.shape != self.high.shape:
            raise ValueError(f"low {self.low.shape} and high {self.high.shape} differ in shape")
        self.shape = self.low.shape
        self.dtype = np.dtype(np.float64)

    def contains(self, x):
        """Whether x has the box's shape and lies within its bounds."""
        x = np.asarray(x, dtype=np.float64)
        return x.shape == self.shape and bool(np.all((x >= self.low) & (x <= self.high)))

    def sample(self, rng=None):
        """A uniform draw; a standard normal draw along unbounded axes."""
        rng = np.random.default_rng() if rng is None else rng
        bounded = np.isfinite(self.low) & np.isfinite(self.high)
        low = np.where(bounded, self.low, 0.0)
        high = np.where(bounded, self.high, 1.0)
        return np.where(bounded, rng.uniform(low, high), rng.standard_normal(self.shape))

    def __repr__(self):
        return f"Box(low={self.low}, high={self.high})"
