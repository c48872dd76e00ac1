"""An adapter over a bare IR ensemble: brute is the IR's own prediction (for kernel tests)."""

from pdpx.core.adapter import Adapter
from pdpx.core.ir import TreeModel, numeric_encoder, numeric_values


class IRAdapter(Adapter):
    """Predicts with the ensemble itself, so brute is the IR's own prediction."""

    def __init__(self, ens):
        super().__init__(ens)
        self.ens = ens

    def responses(self):
        return ["predict"]

    def output_names(self, response):
        return [f"out{k}" for k in range(self.ens.n_outputs)]

    def default_outputs(self, response):
        return list(range(self.ens.n_outputs))

    def predict(self, X, response):
        return self.ens.predict(numeric_encoder(X))

    def tree_model(self, response):
        return TreeModel(self.ens, numeric_encoder, numeric_values)
