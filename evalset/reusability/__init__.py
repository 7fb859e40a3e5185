"""Will the set be fair to the next system? Leave-one-run-out and leave-one-group-out pool-bias analysis.

A frozen set is judged on the pool of the systems that existed when it was made; the next system is the one
that was not in it, and its good unjudged documents count as not relevant. Leaving each run (each group of
runs: a participant, a team) out of the depth-k pool in turn, removing the judgments of the documents only it
contributed, and rescoring it shows what a new system like it would lose (Zobel 1998; Buckley, Dimmick,
Soboroff & Voorhees 2007; NIST's ``gloo-eval.pl``).

- :mod:`evalset.pooling.contributions` (below the estimate stage, which leaves groups out too): the pool, the
  unique contributions, the reduced qrels, the checks.
- :mod:`~evalset.reusability.leave_out`: rescoring, ranks, tau and tau_AP, the verdict, its text and JSON.
- :mod:`~evalset.reusability.plot`: the plot.
"""

from evalset.pooling.contributions import (
    POOL_RUN_MAX_HOLES,
    PoolOfRuns,
    contribution_counts,
    pool_of_runs,
    reduced_qrels,
    unique_contributions,
    without_pairs,
)
from evalset.reusability.leave_out import (
    DROP_CARE,
    DROP_HOLDS,
    TAU_CARE,
    TAU_HOLDS,
    LeaveOut,
    Reusability,
    analyse_reusability,
    groups_of_runs,
    leave_out,
    verdict,
)
from evalset.reusability.plot import plot_reusability

__all__ = [
    "DROP_CARE",
    "DROP_HOLDS",
    "POOL_RUN_MAX_HOLES",
    "TAU_CARE",
    "TAU_HOLDS",
    "LeaveOut",
    "PoolOfRuns",
    "Reusability",
    "analyse_reusability",
    "contribution_counts",
    "groups_of_runs",
    "leave_out",
    "plot_reusability",
    "pool_of_runs",
    "reduced_qrels",
    "unique_contributions",
    "verdict",
    "without_pairs",
]
