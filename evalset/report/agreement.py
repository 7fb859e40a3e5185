"""The agreement block a report shows: the JSON of ``evalset agreement``, or a block recorded in a set's manifest,
read into a matrix of pairwise kappas (with Krippendorff's alpha and the system rankings' taus when recorded)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from evalset.errors import InputError

KAPPA_PREFERENCE = ("kappa_linear", "kappa_quadratic", "kappa")
"""Which kappa of an agreement ``pairs`` list the heatmap shows, first present wins (weighted suits ordinal grades)."""


@dataclass(frozen=True)
class AgreementMatrix:
    """Pairwise agreement of annotators: a square ``matrix`` (annotator x annotator, 1 on the diagonal, NaN
    where undefined or not measured), the name of the statistic, and what else the block recorded."""

    matrix: pd.DataFrame
    measure: str
    alpha_ordinal: float | None = None
    system_taus: pd.DataFrame | None = None


def agreement_matrix(block: Mapping[str, Any] | None) -> AgreementMatrix | None:
    """Read an agreement summary into a matrix; ``None`` when there is none.

    Accepted shapes (the first that fits): the JSON of ``evalset agreement`` with ``"matrix": {"kappa",
    "annotators", "values"}``; a ``"pairs"`` list of ``{"a", "b", <kappa>}`` (the kappa named first in
    :data:`KAPPA_PREFERENCE`, else ``"value"``); or a mapping ``{annotator: {annotator: kappa}}`` (alone or
    under ``"matrix"``).
    ``alpha_ordinal`` and ``systems.pairs`` (Kendall's tau between system rankings) are kept when present.
    A block that fits none of them, or holds a value that is not a number, raises :class:`InputError`.
    """
    try:
        return _agreement_matrix(block)
    except InputError:
        raise
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise InputError(f"agreement block not understood: {type(exc).__name__}: {exc}") from None


def _agreement_matrix(block: Mapping[str, Any] | None) -> AgreementMatrix | None:
    if not block:
        return None
    if not isinstance(block, Mapping):
        raise InputError(f"an agreement block is a JSON object, got {type(block).__name__}")
    if isinstance(block.get("matrix"), Mapping) and "values" in block["matrix"]:
        names = [str(n) for n in block["matrix"]["annotators"]]
        values = np.array([[np.nan if v is None else float(v) for v in row] for row in block["matrix"]["values"]])
        if values.shape != (len(names), len(names)):
            raise InputError(f"agreement matrix is {values.shape}, expected {len(names)} x {len(names)}")
        matrix, measure = pd.DataFrame(values, index=names, columns=names), str(block["matrix"].get("kappa", "kappa"))
    elif isinstance(block.get("pairs"), list):
        pairs = block["pairs"]
        measure = next((key for key in (*KAPPA_PREFERENCE, "value") if pairs and key in pairs[0]), "kappa")
        names = sorted({str(p[side]) for p in pairs for side in ("a", "b")})
        matrix = pd.DataFrame(np.eye(len(names)), index=names, columns=names)
        for pair in pairs:
            value = pair.get(measure)
            matrix.loc[str(pair["a"]), str(pair["b"])] = matrix.loc[str(pair["b"]), str(pair["a"])] = (
                np.nan if value is None else float(value))
    elif all(isinstance(v, Mapping) for v in block.get("matrix", block).values()):
        nested = block.get("matrix", block)
        names = sorted({str(a) for a in nested} | {str(b) for row in nested.values() for b in row})
        matrix = pd.DataFrame(np.eye(len(names)), index=names, columns=names)
        for a, row in nested.items():
            for b, value in row.items():
                matrix.loc[str(a), str(b)] = matrix.loc[str(b), str(a)] = np.nan if value is None else float(value)
        measure = "kappa"
    else:
        raise InputError("agreement block not understood: expected a `matrix`, a `pairs` list, or "
                         "{annotator: {annotator: kappa}}")
    if matrix.empty:
        return None
    taus = None
    systems = block.get("systems")
    if isinstance(systems, Mapping) and systems.get("pairs"):
        taus = pd.DataFrame([{"a": str(p.get("a")), "b": str(p.get("b")), "runs": p.get("runs"),
                              "kendall_tau": p.get("kendall_tau"), "tau_ap": p.get("tau_ap")}
                             for p in systems["pairs"]])
    alpha = block.get("alpha_ordinal")
    return AgreementMatrix(matrix, measure, None if alpha is None else float(alpha), taus)
