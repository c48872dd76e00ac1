"""exact for scikit-learn ensembles linear in their members: every case equals brute on the ensemble."""

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone
from sklearn.compose import TransformedTargetRegressor, make_column_transformer
from sklearn.ensemble import (
    BaggingClassifier,
    BaggingRegressor,
    GradientBoostingRegressor,
    HistGradientBoostingClassifier,
    HistGradientBoostingRegressor,
    RandomForestClassifier,
    RandomForestRegressor,
    StackingRegressor,
    VotingClassifier,
    VotingRegressor,
)
from sklearn.linear_model import PoissonRegressor, RidgeCV
from sklearn.multioutput import MultiOutputRegressor
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler
from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor

import pdpx

N = 250
rng = np.random.default_rng(3)
X = pd.DataFrame({"a": rng.normal(size=N), "b": rng.uniform(size=N), "c": rng.integers(0, 4, N).astype(float)})
Y = X.a * 2 + np.sin(X.b * 5) + X.c + rng.normal(scale=0.1, size=N)
YC = np.digitize(Y, np.quantile(Y, [0.33, 0.66]))
W = rng.uniform(0.5, 2.0, N)
SMALL = dict(max_iter=15, random_state=0)


def check(model, features, Xb=X, **kw):
    res = pdpx.partial_dependence(model, Xb, features, kind="both", grid_resolution=7, **kw)
    assert res.method == "exact", res.notes
    ref = pdpx.partial_dependence(model, Xb, features, kind="both", method="brute", grid_resolution=7, **kw)
    np.testing.assert_allclose(res.average, ref.average, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(res.individual, ref.individual, rtol=1e-9, atol=1e-9)
    avg = pdpx.partial_dependence(model, Xb, features, kind="average", grid_resolution=7, **kw)
    np.testing.assert_allclose(avg.average, ref.average, rtol=1e-9, atol=1e-9)
    return res


MODELS = {
    "voting": lambda: VotingRegressor([("h", HistGradientBoostingRegressor(**SMALL)),
                                       ("r", RandomForestRegressor(n_estimators=5, random_state=0)),
                                       ("g", GradientBoostingRegressor(n_estimators=10, random_state=0)),
                                       ("x", "drop")], weights=[1, 2, 3, 4]).fit(X, Y),
    "soft voting": lambda: VotingClassifier([("h", HistGradientBoostingClassifier(**SMALL)),
                                             ("r", RandomForestClassifier(n_estimators=5, random_state=0))],
                                            voting="soft", weights=[2, 1]).fit(X, YC),
    "bagging features": lambda: BaggingRegressor(DecisionTreeRegressor(max_depth=4), n_estimators=6, max_features=2,
                                                 bootstrap_features=True, random_state=0).fit(X, Y),
    "bagging classifier": lambda: BaggingClassifier(DecisionTreeClassifier(max_depth=4), n_estimators=6,
                                                    max_features=2, max_samples=0.3, random_state=1).fit(X, YC),
    "bagging hgb": lambda: BaggingRegressor(HistGradientBoostingRegressor(**SMALL), n_estimators=3, max_features=2,
                                            random_state=0).fit(X, Y),
    "multioutput": lambda: MultiOutputRegressor(HistGradientBoostingRegressor(**SMALL)).fit(X, np.c_[Y, Y**2]),
    "ttr": lambda: TransformedTargetRegressor(HistGradientBoostingRegressor(**SMALL),
                                              transformer=StandardScaler()).fit(X, Y),
    "ttr identity": lambda: TransformedTargetRegressor(RandomForestRegressor(n_estimators=4, random_state=0)).fit(X, Y),
    "stacking": lambda: StackingRegressor([("h", HistGradientBoostingRegressor(**SMALL)),
                                           ("r", RandomForestRegressor(n_estimators=5, random_state=0))],
                                          final_estimator=RidgeCV()).fit(X, Y),
}


@pytest.mark.parametrize("name", list(MODELS))
def test_linear_ensembles_equal_brute(name):
    model = MODELS[name]()
    check(model, ["a"])
    check(model, ["a", "c"], sample_weight=W)


def test_members_in_pipelines():
    Xc = X.assign(city=rng.choice(["x", "y", "z"], N))
    pre = make_column_transformer((OneHotEncoder(), ["city"]), remainder=StandardScaler())
    model = VotingRegressor([("p", make_pipeline(pre, HistGradientBoostingRegressor(**SMALL))),
                             ("r", make_pipeline(clone(pre), RandomForestRegressor(n_estimators=4, random_state=0)))]
                            ).fit(Xc, Y)
    check(model, ["city", "a"], Xb=Xc)


@pytest.mark.parametrize("model, why", [
    (lambda: TransformedTargetRegressor(HistGradientBoostingRegressor(**SMALL), func=np.log1p,
                                        inverse_func=np.expm1).fit(X, Y - Y.min()), "not known to be linear"),
    (lambda: StackingRegressor([("h", HistGradientBoostingRegressor(**SMALL))], final_estimator=RidgeCV(),
                               passthrough=True).fit(X, Y), "passthrough"),
    (lambda: StackingRegressor([("h", HistGradientBoostingRegressor(**SMALL)), ("d", DecisionTreeRegressor())],
                               final_estimator=PoissonRegressor()).fit(X, Y - Y.min() + 1), "does not predict linearly"),
])
def test_non_linear_ensembles_run_brute_and_say_why(model, why):
    m = model()
    res = pdpx.partial_dependence(m, X, ["a"])
    assert res.method == "brute"
    assert any(why in n for n in res.notes), res.notes
