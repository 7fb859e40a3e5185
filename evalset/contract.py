"""The evaluation contract: every convention a score depends on, as one value recorded beside it."""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from typing import Any, ClassVar, Literal

from evalset.errors import InputError
from evalset.params import POSITIVE_INT, Choice, check_fields

TieRule = Literal["trec", "run", "docid", "expected"]
TIE_RULES: tuple[str, ...] = ("trec", "run", "docid", "expected")
Gain = Literal["linear", "exponential"]
GAINS: tuple[str, ...] = ("linear", "exponential")
MissingPolicy = Literal["zero", "skip"]
MISSING_POLICIES: tuple[str, ...] = ("zero", "skip")
UndefinedPolicy = Literal["skip", "zero"]
UNDEFINED_POLICIES: tuple[str, ...] = ("skip", "zero")
UnjudgedPolicy = Literal["nonrelevant", "condensed"]
UNJUDGED_POLICIES: tuple[str, ...] = ("nonrelevant", "condensed")

# The defaults shared by the library and the command line: a library function's default and the value its option
# shows are these names, never a second literal.
DEFAULT_SEED = 20191
"""The fixed default seed of every resampling and of the human slice (chosen once; any fixed value would do)."""
DEFAULT_METRIC = "ndcg@10"
"""The metric of a verdict, a plan, an estimate or a set's headline when none is asked for."""
DEFAULT_METRICS = ("ndcg@10", "ap", "rr", "p@10")
"""What ``score`` reports on qrels when no metric is asked for (on a set: its headline metric)."""
DEFAULT_HOLES_DEPTH = 10
"""The top k whose unjudged documents (holes) bound a verdict on a metric without cutoff (``ap``, ``rr``, ``ndcg``)
when no depth is given: TREC's usual pool depth (TREC DL's among them)."""
DEFAULT_SCALE = (0, 1, 2, 3)
"""The grade scale of ``agreement`` when neither a guideline nor a scale is given."""
AGGREGATION_RULES = ("dawid-skene", "one-coin", "mace", "glad")  # crowd-kit's models (evalset.judgments.crowd)
MERGE_RULES = ("median", "majority", "annotator-priority", *AGGREGATION_RULES)
"""How a frozen set merges several grades of one pair: the names of :data:`evalset.judgments.rules.RULES` (which
states each rule and checks these names on import), here for the command line, which reads them without pandas."""
WEIGHTINGS = ("traffic", "uniform")
"""How a frozen set weights its strata in a mean (see :mod:`evalset.sets`)."""

# The choices of a verdict, here so that a command's options read them without loading the statistics
BOOTSTRAP_INTERVALS = ("bca", "percentile")
"""The bootstrap interval of a paired mean difference (:mod:`evalset.stats.paired`)."""
PRIMARY_TESTS = ("permutation", "t")
"""The test a paired verdict rests on, with the interval."""
CORRECTIONS = ("tukey", "holm", "bonferroni")
"""The family-wise corrections of many systems compared at once (:mod:`evalset.stats.multiple`)."""

# The choices and defaults of estimate and plan (evalset.estimate.spec, evalset.planning.spec), here so that their
# options read them without loading the statistics
SET_SPLITS = ("test", "dev", "all")
"""The queries of a frozen set a command reads: its test split, its dev split, or all of them."""
CONFLICTING_GRADES = ("refuse", "latest", "first")
"""One annotator's different grades of one pair: refused, or the latest or the first judgment stands
(:mod:`evalset.io.annotations`)."""
ESTIMATE_DESIGNS = ("queries", "documents")
"""What humans grade for an estimate: a random slice of queries, or a document sample of every query."""
PPI_INTERVALS = ("t", "normal")
"""The interval of a prediction-powered mean: Student's t quantile, or ppi_py's normal one
(:mod:`evalset.stats.ppi`)."""
TOKENIZERS = ("auto", "tiktoken", "chars")
"""How a plan counts an LLM task's tokens: tiktoken when it loads else characters / 4, tiktoken, or characters / 4
(:mod:`evalset.planning.budget`)."""
DEFAULT_POWER = 0.8
"""The power a plan's queries are to reach (:mod:`evalset.stats.power`)."""
SIMULATION_RESAMPLES = 500
"""Bootstrap resamples per size of a plan's simulated power."""
SIMULATION_PERMUTATIONS = 999
"""Random sign flips per test of a plan's simulated power (a verdict's test uses 9,999)."""


def reads_ranks(ties: str | None) -> bool:
    """Whether a tie rule reads a run's rank field: only ``run`` does (trec_eval never does), so under the others
    scoring neither parses nor checks it. ``None``: the default rule."""
    return ties == "run"


@dataclass(frozen=True)
class EvaluationContract:
    """How runs are scored (DESIGN.md, "The evaluation contract").

    rel_level
        Binary measures count a document relevant when its grade is at least this (default 1, as trec_eval).
    gain
        nDCG gain: ``linear`` (gain = grade) or ``exponential`` (2^grade - 1).
    ties
        Tie rule for equal scores: ``trec`` (doc id descending), ``run``, ``docid`` (ascending), ``expected``.
    missing
        A judged query absent from a run: ``zero`` (it scores 0: the system returned nothing) or ``skip``
        (left out, as trec_eval averages over the run's queries).
    undefined
        A query where the measure is undefined (no relevant document): ``skip`` (left out of the mean and
        counted) or ``zero`` (scored 0, as trec_eval does).
    unjudged
        A retrieved document without a judgment (no qrels line, or a negative grade: pooled but not judged):
        ``nonrelevant`` (it stays in the ranking and counts as not relevant) or ``condensed`` (it is removed from
        the ranking before scoring and the ranks close up, so that the cutoff of ``@10`` counts the first ten
        *judged* documents: Sakai's condensed lists, trec_eval's ``-J``). The qrels are unchanged (R, the ideal
        DCG, bpref's N). ``judged@k`` is always measured on the ranking as the run gave it, under either value:
        on the condensed list it would be 1 whenever the run retrieved k judged documents and say nothing, while
        on the run's ranking it says how many holes the condensed score stepped over. A manifest written before
        this convention existed has no ``unjudged`` key and reads as ``nonrelevant``, the only convention then.

    ============  =====================================  ==================================
    convention    values (default first)                 trec_eval
    ============  =====================================  ==================================
    rel_level     integer >= 1 (1)                       ``-l`` (1)
    gain          linear, exponential                    linear
    ties          trec, run, docid, expected             trec
    missing       zero, skip                             skip (``-c``: zero)
    undefined     skip, zero                             zero
    unjudged      nonrelevant, condensed                 nonrelevant (``-J``: condensed)
    ============  =====================================  ==================================
    """

    rel_level: int = 1
    gain: Gain = "linear"
    ties: TieRule = "trec"
    missing: MissingPolicy = "zero"
    undefined: UndefinedPolicy = "skip"
    unjudged: UnjudgedPolicy = "nonrelevant"

    RULES: ClassVar[dict] = {"rel_level": POSITIVE_INT, "gain": Choice(GAINS), "ties": Choice(TIE_RULES),
                             "missing": Choice(MISSING_POLICIES), "undefined": Choice(UNDEFINED_POLICIES),
                             "unjudged": Choice(UNJUDGED_POLICIES)}

    def __post_init__(self) -> None:
        check_fields(self, self.RULES)  # numpy's rel_level as int

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, values: dict[str, Any]) -> EvaluationContract:
        """The contract recorded in ``values`` (a manifest's, a JSON document's); a convention it does not name
        (an older manifest) takes its default, which was the only convention before it could be chosen."""
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in values.items() if k in known})


@dataclass(frozen=True)
class ContractOptions:
    """The contract options a user gave (``None``: not given), as one value: what ``--rel-level``, ``--gain``,
    ``--ties``, ``--missing``, ``--undefined`` and ``--unjudged`` build, passed whole to the evaluation room.

    On qrels they change the default contract; on a frozen set an option that contradicts the set's recorded
    contract is refused unless overridden, and the override is said (:meth:`applied_to`).
    """

    rel_level: int | None = None
    gain: Gain | None = None
    ties: TieRule | None = None
    missing: MissingPolicy | None = None
    undefined: UndefinedPolicy | None = None
    unjudged: UnjudgedPolicy | None = None

    def __post_init__(self) -> None:
        check_fields(self, EvaluationContract.RULES)

    def given(self) -> dict[str, Any]:
        return {k: v for k, v in asdict(self).items() if v is not None}

    def applied_to(self, recorded: EvaluationContract | None = None, *,
                   override: bool = False) -> tuple[EvaluationContract, tuple[str, ...]]:
        """The contract in force and the options that contradict ``recorded`` (``name=value (set: value)``).

        Without ``recorded`` (scoring on qrels) the options change the default contract. With it (a frozen set's),
        a contradicting option raises :class:`~evalset.errors.InputError` unless ``override``."""
        given = self.given()
        if recorded is None:
            return EvaluationContract(**given), ()
        values = recorded.to_dict()
        overridden = tuple(f"{k}={v} (set: {values[k]})" for k, v in given.items() if values[k] != v)
        if overridden and not override:
            raise InputError("these options contradict the set's contract: " + ", ".join(overridden)
                             + "; add --override-contract to score anyway")
        return EvaluationContract(**(values | given)), overridden


TREC_EVAL = EvaluationContract(missing="skip", undefined="zero")
"""trec_eval's conventions: average over the run's judged queries, a query without relevant documents scores 0."""
