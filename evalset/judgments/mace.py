"""MACE (Hovy et al. 2013) fitted as crowd-kit 1.4's :class:`crowdkit.aggregation.MACE` fits it, with the same
grades, in a few numpy passes per EM step instead of crowd-kit's pandas frame operations.

crowd-kit's fit spends its time in pandas' per-call overhead, not in arithmetic: each E-step runs a ``groupby``
product per grade and three ``groupby`` sums, ``set_index``/``reset_index`` and column assignments on a frame of
all the labels, and a fit is ``n_restarts * (n_iter + 1) + 1`` E-steps (511 with the project's parameters)
whatever the number of labels. :func:`fit_mace` does the same arithmetic on numpy arrays and uses pandas only for
the three grouped reductions (one product, two sums) whose rounding must be pandas' own.

Conventions (what makes the grades crowd-kit's own, bit for bit):

- the same operations in the same order on the same float64 values: the E-step's products per task and sums per
  worker are pandas' grouped kernels over the rows in their given order (a product in row order, a compensated
  sum), every other step the same elementwise numpy expression as crowd-kit's;
- the same start: ``scipy.stats.uniform(1, 1 + default_noise).rvs`` with ``random_state`` for the spamming and
  the strategy parameters. crowd-kit passes the same integer seed to every restart, so every restart starts, runs
  and ends alike and the first one is kept (a later one replaces it only with a strictly larger likelihood): one
  run is fitted here. A ``random_state`` that is not an int is refused (its restarts would differ);
- crowd-kit's indexing, quirks included: codes of workers, grades and tasks in order of first appearance, the
  strategy counts laid out in sorted worker and grade order (pandas' ``groupby(["worker", "label"])``) yet read
  back by appearance codes, the ``em`` smoothing ``0.01 / n_labels`` (the ``smoothing`` parameter is unused);
- the grade of a task is the first of the most probable grades in order of first appearance (``idxmax``).

``tests/judgments/test_mace.py`` checks the grades, probabilities and parameters equal crowd-kit's class on
real and synthetic tables.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats
from scipy.special import digamma

from evalset.errors import InputError
from evalset.params import POSITIVE_INT, check


@dataclass(frozen=True)
class MaceFit:
    """A fitted MACE: the grade of each task (``labels``, indexed by task in order of first appearance), the
    probability of each grade (``probas``, crowd-kit's ``probas_``), the spamming and strategy parameters of the
    kept run (crowd-kit's ``spamming_``, ``thetas_``) and the EM iterations of one run."""

    labels: pd.Series
    probas: pd.DataFrame
    spamming: np.ndarray
    thetas: np.ndarray
    iterations: int

    def to_dict(self) -> dict[str, Any]:
        return {"tasks": len(self.labels), "iterations": self.iterations}

    def to_text(self) -> str:
        return f"MACE: {len(self.labels)} tasks, {self.iterations} EM iterations"


def _normalize(x: np.ndarray, smoothing: float) -> np.ndarray:
    norm = (x + smoothing).sum(axis=1)
    return np.divide(x + smoothing, norm[:, np.newaxis], out=np.zeros_like(x),
                     where=~np.isclose(norm[:, np.newaxis], np.zeros_like(norm[:, np.newaxis])))


def _variational_normalize(x: np.ndarray, hparams: np.ndarray) -> np.ndarray:
    norm = np.exp(digamma((x + hparams).sum(axis=1)))
    return np.divide(np.exp(digamma(x + hparams)), norm[:, np.newaxis], out=np.zeros_like(x),
                     where=~np.isclose(norm[:, np.newaxis], np.zeros_like(norm[:, np.newaxis])))


@dataclass(frozen=True)
class _Codes:
    tasks: np.ndarray
    workers: np.ndarray
    labels: np.ndarray
    task_names: pd.Index
    label_names: pd.Index
    n_workers: int
    by_worker_label: np.ndarray  # the group of (worker, grade) of each row, numbered worker-major
    sorted_rows: np.ndarray  # row r of the strategy counts as crowd-kit lays them out: the worker code in row r
    sorted_columns: np.ndarray  # column c likewise: the grade code in column c


def _codes(frame: pd.DataFrame) -> _Codes:
    workers, worker_names = pd.factorize(frame["worker"])
    labels, label_names = pd.factorize(frame["label"])
    tasks, task_names = pd.factorize(frame["task"])
    return _Codes(tasks, workers, labels, task_names, label_names, len(worker_names),
                  workers.astype(np.int64) * len(label_names) + labels,
                  np.argsort(np.asarray(worker_names, dtype=object), kind="stable"),
                  np.argsort(np.asarray(label_names), kind="stable"))


def _grouped(values: np.ndarray, keys: np.ndarray, how: str) -> np.ndarray:
    """pandas' grouped ``prod`` or ``sum`` of each column of ``values`` (rows in their order), by sorted key."""
    grouped = pd.DataFrame(values).groupby(keys, sort=True)
    return (grouped.prod() if how == "prod" else grouped.sum()).to_numpy()


def _e_step(codes: _Codes, spamming: np.ndarray, thetas: np.ndarray
            ) -> tuple[float, pd.DataFrame, np.ndarray, np.ndarray]:
    """crowd-kit's ``MACE._e_step``: the likelihood, the grade marginals of each task, the strategy counts (sorted
    layout) and the knowing counts (appearance order)."""
    tasks, workers, labels = codes.tasks, codes.workers, codes.labels
    n_labels = len(codes.label_names)
    s0, s1, theta = spamming[workers, 0], spamming[workers, 1], thetas[workers, labels]
    spam = s0 * theta
    marginal = np.column_stack([spam + s1 * (label == labels) for label in range(n_labels)])
    products = _grouped(marginal, tasks, "prod")
    frame = pd.DataFrame(np.zeros((len(codes.task_names), n_labels)), index=codes.task_names,
                         columns=codes.label_names)
    for code, label in enumerate(codes.label_names):  # column by column: pandas sums the blocks in their order
        frame[label] = products[:, code] / n_labels
    gold = frame.to_numpy()
    instance = frame.sum(axis=1).to_numpy()
    likelihood = float(np.log(instance + 1e-8).sum())
    strategy = np.zeros(len(tasks))
    for label in range(n_labels):
        strategy += gold[tasks, label] / (spam + s1 * (labels == label))
    strategy = strategy * s0 * theta
    strategy = strategy / instance[tasks]
    knowing = gold[tasks, labels] * s1 / (spam + s1) / instance[tasks]
    per_worker = _grouped(np.column_stack([strategy, knowing]), workers, "sum")
    cells = np.zeros(codes.n_workers * n_labels)
    present = np.unique(codes.by_worker_label)
    cells[present] = _grouped(strategy[:, np.newaxis], codes.by_worker_label, "sum")[:, 0]
    strategy_counts = cells.reshape(codes.n_workers, n_labels)[codes.sorted_rows][:, codes.sorted_columns]
    return likelihood, frame, strategy_counts, per_worker


def fit_mace(frame: pd.DataFrame, *, n_restarts: int = 10, n_iter: int = 50, method: str = "vb",
             smoothing: float = 0.1, default_noise: float = 0.5, alpha: float = 0.5, beta: float = 0.5,
             random_state: int = 0) -> MaceFit:
    """MACE on crowd-kit's ``task, worker, label`` frame with crowd-kit's parameters (see the module docstring)."""
    del smoothing  # crowd-kit 1.4 smooths with 0.01 / n_labels, not with this parameter
    if isinstance(random_state, bool) or not isinstance(random_state, (int, np.integer)):
        raise InputError(f"MACE's fast path needs an int random_state, got {random_state!r}")
    check("MACE's method", method, ("vb", "em"))
    check("MACE's restarts", n_restarts, POSITIVE_INT)
    codes = _codes(frame)
    n_workers, n_labels = codes.n_workers, len(codes.label_names)
    uniform = stats.uniform(1, 1 + default_noise)
    spamming = uniform.rvs(size=(n_workers, 2), random_state=random_state)
    thetas = uniform.rvs(size=(n_workers, n_labels), random_state=random_state)
    spamming = spamming / spamming.sum(axis=1, keepdims=True)
    thetas = thetas / thetas.sum(axis=1, keepdims=True)
    theta_priors = np.empty((n_workers, 2))
    theta_priors[:, 0], theta_priors[:, 1] = alpha, beta
    strategy_priors = np.multiply(10.0, np.ones((n_workers, n_labels)), dtype=np.float64)
    likelihood, gold, strategy_counts, knowing_counts = _e_step(codes, spamming, thetas)
    for _ in range(n_iter):
        if method == "vb":
            spamming = _variational_normalize(knowing_counts, theta_priors)
            thetas = _variational_normalize(strategy_counts, strategy_priors)
        else:
            spamming = _normalize(knowing_counts, 0.01 / n_labels)
            thetas = _normalize(strategy_counts, 0.01 / n_labels)
        likelihood, gold, strategy_counts, knowing_counts = _e_step(codes, spamming, thetas)
    if not likelihood > -np.inf:
        raise InputError(f"MACE's likelihood is {likelihood}: no run to keep")
    probas = gold.div(gold.sum(axis=1), axis=0)
    labels = probas.idxmax(axis="columns").rename("agg_label")  # crowd-kit's name of the grades
    labels.index.name = probas.index.name = "task"
    return MaceFit(labels, probas, spamming, thetas, n_iter)
