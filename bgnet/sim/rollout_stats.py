"""Statistics of a rollout's per-trial results: means, standard errors, the covariance of the mean, clamped chances.

``Moments`` gathers them chunk by chunk, so a rollout keeps a few numbers per
candidate however many trials it plays; ``trial_stats`` does the same for rows at hand.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from bgnet.core.probs import Probs

Z95 = 1.959963984540054
"""Two-sided 95% normal quantile."""


def trial_stats(values: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Mean (5,), standard errors (5,) and covariance of the mean (5, 5) of per-trial rows (n, 5)."""
    n = len(values)
    mean = values.mean(axis=0)
    if n < 2:
        return mean, np.zeros(5), np.zeros((5, 5))
    cov = np.cov(values, rowvar=False, ddof=1) / n
    return mean, np.sqrt(np.maximum(np.diag(cov), 0.0)), cov


@dataclass
class Moments:
    """Running count, mean and covariance of rows of ``width`` numbers, added a block of rows at a time.

    Sums of the rows less a shift (the first row seen), so the covariance keeps its
    digits when the spread is small beside the mean; blocks added in the same order
    give the same bits.
    """

    width: int
    n: int = 0
    shift: np.ndarray = field(default_factory=lambda: np.zeros(0))
    total: np.ndarray = field(default_factory=lambda: np.zeros(0))
    """Sum of the shifted rows (width,)."""
    products: np.ndarray = field(default_factory=lambda: np.zeros(0))
    """Sum of the shifted rows' outer products (width, width)."""

    def add(self, rows: np.ndarray) -> None:
        """Fold in rows (k, width)."""
        rows = np.asarray(rows, np.float64).reshape(-1, self.width)
        if len(rows) == 0:
            return
        if self.n == 0:
            self.shift = rows[0].copy()
            self.total = np.zeros(self.width)
            self.products = np.zeros((self.width, self.width))
        d = rows - self.shift
        self.total += d.sum(axis=0)
        self.products += d.T @ d
        self.n += len(rows)

    def mean(self) -> np.ndarray:
        """The mean row (width,)."""
        return self.shift + self.total / self.n

    def cov_of_mean(self) -> np.ndarray:
        """The covariance of the mean (width, width): the rows' covariance (n - 1 degrees of freedom) over n."""
        if self.n < 2:
            return np.zeros((self.width, self.width))
        centred = self.products - np.outer(self.total, self.total) / self.n
        return centred / (self.n - 1) / self.n

    def stats(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Mean, standard errors and covariance of the mean, as ``trial_stats``."""
        cov = self.cov_of_mean()
        return self.mean(), np.sqrt(np.maximum(np.diag(cov), 0.0)), cov


def clamp_probs(p: np.ndarray) -> Probs:
    """Mean chances made consistent (VR can push a mean a hair outside [0, 1] or out of order)."""
    w = min(1.0, max(0.0, float(p[0])))
    wg = min(w, max(0.0, float(p[1])))
    wb = min(wg, max(0.0, float(p[2])))
    lg = min(1.0 - w, max(0.0, float(p[3])))
    lb = min(lg, max(0.0, float(p[4])))
    return Probs(w, wg, wb, lg, lb)
