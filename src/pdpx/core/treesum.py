"""A model whose response is a weighted sum of tree models' responses (ensembles linear in their members).

Partial dependence and ICE are linear in the response, so the PD of
``offset + sum_m W_m @ member_m`` is ``offset + sum_m W_m @ PD(member_m)``: tree
methods compute each member on its own (by its own kernel and link) and add.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


@dataclass
class TreeTerm:
    """One member: its trees, how its outputs enter the sum, and which columns of X it reads.

    Attributes
    ----------
    model : TreeModel or TreeSum
        The member, for the response it contributes.
    weights : ndarray of shape (n_outputs, n_member_outputs)
        Output ``o`` of the sum gets ``weights[o, i]`` times the member's output ``i``.
    columns : list of int or None
        Positions of X's columns the member reads, in its own order (None: all of X, as is).
    """

    model: object
    weights: np.ndarray
    columns: list | None = None


@dataclass
class TreeSum:
    """``offset + sum of the terms``: what an adapter hands to tree methods for such ensembles."""

    terms: list
    offset: np.ndarray
    notes: list = field(default_factory=list)

    @property
    def n_outputs(self) -> int:
        return len(self.offset)
