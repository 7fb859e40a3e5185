"""The evaluation contract: every convention a score depends on, as one value recorded beside it; the defaults
the library and the command line share; and the rules of the parameters a command hands the library (the end of
this module), which the command line reads without loading the library."""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from typing import Any, ClassVar, Literal

from evalset.errors import InputError
from evalset.params import (
    DEPTH,
    MAX_RESAMPLES,
    NON_NEGATIVE_INT,
    POSITIVE_INT,
    PROBABILITY,
    RESAMPLES,
    SEED,
    Choice,
    Constraint,
    Interval,
    Length,
    check_fields,
)

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
TREC_EVAL_VERSIONS = (9, 10)
"""The trec_eval versions whose rules iprec@r, 11pt_avg, ties and ``all_trec`` follow
(evalset.metrics.trec_procedures)."""

# The defaults shared by the library and the command line: a library function's default and the value its option
# shows are these names, never a second literal.
DEFAULT_SEED = 20191
"""The fixed default seed of every resampling and of the human slice (chosen once; any fixed value would do)."""
DEFAULT_METRIC = "ndcg@10"
"""The metric of a verdict, a plan, an estimate or a set's headline when none is asked for."""
DEFAULT_METRICS = (DEFAULT_METRIC, "ap", "rr", "p@10")
"""What ``score`` reports on qrels when no metric is asked for (on a set: its headline metric)."""
DEFAULT_HOLES_DEPTH = 10
"""The top k whose unjudged documents (holes) bound a verdict on a metric without cutoff (``ap``, ``rr``, ``ndcg``)
when no depth is given: TREC's usual pool depth (TREC DL's among them)."""
NO_CHANGE = 1e-9
"""A per-query difference within this of zero is no change (floating-point sums of the same terms): a tie of
``compare``'s wins/losses/ties, and ``explain``'s default ``--epsilon``."""
DEFAULT_SCALE = (0, 1, 2, 3)
"""The grade scale of ``agreement`` when neither a guideline nor a scale is given."""
AGGREGATION_RULES = ("dawid-skene", "one-coin", "mace", "glad")  # crowd-kit's models (evalset.judgments.crowd)
MERGE_RULES = ("median", "majority", "annotator-priority", *AGGREGATION_RULES)
"""How a frozen set merges several grades of one pair: the names of :data:`evalset.judgments.registry.RULES` (which
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
    """How runs are scored (docs/design.md, "The evaluation contract").

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
    trec_eval_version
        The trec_eval whose rules the measures follow where its versions differ: 9 (and pytrec_eval, which builds
        9.0.8) or 10. A recall level of ``iprec@r`` and ``11pt_avg`` is a count of relevant documents, r*R + 0.9
        truncated in 9, r*R rounded half away from zero in 10; under ``ties=trec``, 9 compares scores as 32-bit
        floats (two scores 7e-7 apart can tie), 10 as doubles; 10's ``all_trec`` adds ``unj``, ``rbp`` and
        ``rbp_resid``. Every other measure is the same in both. A manifest written before this convention could
        be chosen has no such key and reads as 10, the only rule then.

    ============  =====================================  ==================================
    convention    values (default first)                 trec_eval
    ============  =====================================  ==================================
    rel_level     integer >= 1 (1)                       ``-l`` (1)
    gain          linear, exponential                    linear
    ties          trec, run, docid, expected             trec
    missing       zero, skip                             skip (``-c``: zero)
    undefined     skip, zero                             zero
    unjudged      nonrelevant, condensed                 nonrelevant (``-J``: condensed)
    trec_eval_    10, 9                                  the version it is
    version
    ============  =====================================  ==================================
    """

    rel_level: int = 1
    gain: Gain = "linear"
    ties: TieRule = "trec"
    missing: MissingPolicy = "zero"
    undefined: UndefinedPolicy = "skip"
    unjudged: UnjudgedPolicy = "nonrelevant"
    trec_eval_version: int = 10

    RULES: ClassVar[dict] = {"rel_level": POSITIVE_INT, "gain": Choice(GAINS), "ties": Choice(TIE_RULES),
                             "missing": Choice(MISSING_POLICIES), "undefined": Choice(UNDEFINED_POLICIES),
                             "unjudged": Choice(UNJUDGED_POLICIES), "trec_eval_version": Choice(TREC_EVAL_VERSIONS)}

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
    """The contract settings a user gave (``None``: not given), as one value: what ``-c/--contract NAME=VALUE``
    builds (``rel_level``, ``gain``, ``ties``, ``missing``, ``undefined``, ``unjudged``, ``trec_eval_version``),
    passed whole to the evaluation room.

    On qrels they change the default contract; on a frozen set an option that contradicts the set's recorded
    contract is refused unless overridden, and the override is said (:meth:`applied_to`).
    """

    rel_level: int | None = None
    gain: Gain | None = None
    ties: TieRule | None = None
    missing: MissingPolicy | None = None
    undefined: UndefinedPolicy | None = None
    unjudged: UnjudgedPolicy | None = None
    trec_eval_version: int | None = None

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


# ------------------------------------------------------------------------------------------- parameter rules
# The rules of the parameters a command hands the library (evalset.params), declared once here, where the command
# line reads them without loading the library: the library function or settings class each names applies them
# (validate_params, or RULES with check_fields), and evalset.cli.ruled builds each option from the same rule, so
# that both refuse the same values in the same words. The names of a choice are a constant beside its rule.
SPLITS = ("test", "dev", "all")
"""The queries of a frozen set a command scores: its test split, its dev split, or all of them."""
OUTPUT_FORMATS = ("table", "json")
"""What a command prints (evalset.cli.emit): its table, or its JSON document (a documented contract)."""
SCORE_FORMATS = ("table", "tsv", "json", "trec_eval")
"""What score prints: also a TSV, and trec_eval's own layout."""
COMPARE_FORMATS = ("table", "json", "tsv")
"""What compare prints: also, for many systems at once, the matrix of adjusted p-values as a TSV."""
CONFLICTING_GRADES = ("refuse", "latest", "first")
"""One annotator's different grades of one pair: refused, or the latest or first judgment kept."""
KAPPA_KINDS = ("unweighted", "linear", "quadratic")
OUT_OF_SCALE = ("error", "clip", "drop")
"""A grade off the scale: refused, clipped to the scale's end, or dropped."""
AGREEMENT_PAIRS = ("all", "with-human")
RECHECK_FIGURES = ("quadratic kappa", "kappa", "tau")
"""The figure a judge recheck's verdict rests on."""
LOG_FORMATS = ("tsv", "csv", "jsonl", "parquet")
COUNT_BY = ("submissions", "users")
ENGINES = ("auto", "pandas", "duckdb", "spark")
STRUCTURED_OUTPUT = ("auto", "on", "off")
GOLD_RATE_MAX = 0.5
"""The largest share of gold tasks a push mixes in (evalset.quality.gold)."""
SECONDS = Interval(float, 0, 86_400, closed="right")
"""A wait in seconds: above 0 and at most a day (a longer one is a hang)."""

SPLIT_RULES: dict[str, Constraint] = {"split": Choice(SPLITS)}
"""evalset.evaluation.Evaluation.on_set, evalset.io.setfolder.select_split and evalset.sets.diff_versions."""
REPEATS_RULES: dict[str, Constraint] = {"conflicting_grades": Choice(CONFLICTING_GRADES)}
"""evalset.io.annotations.settle_repeats: one annotator's repeated judgments of one pair."""
AGREEMENT_REPORT_RULES: dict[str, Constraint] = {
    "out_of_scale": Choice(OUT_OF_SCALE), "kappa": Choice(KAPPA_KINDS), "resamples": Interval(int, 0, MAX_RESAMPLES),
    "level": PROBABILITY, "seed": SEED}
"""evalset.agreement.agreement_report (0 resamples: no bootstrap interval)."""
AGREEMENT_RULES: dict[str, Constraint] = {**AGREEMENT_REPORT_RULES, "top": NON_NEGATIVE_INT,
                                          "pairs": Choice(AGREEMENT_PAIRS)}
"""evalset.agreement.analyse_agreement: agreement_report's, and what the text shows (0 disagreements: none)."""
RECHECK_RULES: dict[str, Constraint] = {"primary": Choice(RECHECK_FIGURES), "resamples": RESAMPLES,
                                        "level": PROBABILITY, "seed": SEED}
"""evalset.agreement.recheck."""
PROJECT_TITLE = Length(3, 50)
"""A Label Studio project's title (Label Studio 1.23.2's PROJECT_TITLE_MIN_LEN and PROJECT_TITLE_MAX_LEN); with
``--annotators``, each annotator's title ``TITLE [e-mail]``."""
PUSH_RULES: dict[str, Constraint] = {"overlap": POSITIVE_INT, "batch_size": POSITIVE_INT, "title": PROJECT_TITLE}
"""evalset.labelstudio.push, push_blind and push_tasks."""
REUSABILITY_RULES: dict[str, Constraint] = {"depth": DEPTH}
"""evalset.reusability.analyse_reusability."""
SET_CONTRACT_RULES: dict[str, Constraint] = {"weighting": Choice(WEIGHTINGS)}
"""evalset.io.setfolder.SetContract."""
