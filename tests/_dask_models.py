"""Models for the Dask tests, importable by worker processes (tests/ is on their sys.path)."""

import time

import numpy as np
from sklearn.ensemble import RandomForestRegressor

UNPICKLED = 0


class CountingForest(RandomForestRegressor):
    """Counts how often this process unpickles it: the model must reach each worker once."""

    def __setstate__(self, state):
        global UNPICKLED
        UNPICKLED += 1
        super().__setstate__(state)


def unpickled() -> int:
    return UNPICKLED


class SlowModel:
    """Takes its time, so a run can be interrupted."""

    def predict(self, X):
        time.sleep(0.5)
        return np.asarray(X.iloc[:, 0], dtype=float)
