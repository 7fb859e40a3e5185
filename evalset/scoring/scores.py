"""Scoring runs on qrels or on a frozen set (through the evaluation room, :mod:`evalset.evaluation`): the score
table and its summaries, and their printed forms.

Conventions
-----------
- The contract in force, the split and the per-query values are the evaluation room's: see
  :class:`evalset.evaluation.Evaluation` and :func:`evalset.evaluation.per_query_values`.
- ``judged@k`` is placed after every ``nDCG@k`` that is not already beside it, so that a pool bias is visible.
- A mean is over the defined queries (:mod:`evalset.stats.strata`); on a set, means also come per stratum and
  across strata, and the score table shows the traffic-weighted mean when the set weights by traffic.
- An undefined value prints as ``undef`` (:data:`evalset.render.UNDEFINED`), is ``null`` in JSON and empty in TSV.
- On a set, each run's holes (the pairs of its headline's top k the set does not judge) and what they could cost
  follow the table (:mod:`evalset.holes.bounds`).
- Comparisons are made in the family of :mod:`evalset.stats.family` (on a set: logged, and counted in the
  threshold).
- ``--format trec_eval`` (:meth:`RunScores.to_trec_eval`) prints what ``trec_eval [-q] -m ...`` prints for the
  measures asked: ``%-22s\t%s\t%.4f`` lines under trec_eval's names (:func:`evalset.metrics.trec_eval_name`), in
  trec_eval's measure order (:data:`TREC_EVAL_ORDER`, cutoffs ascending), with ``show_per_query`` (trec_eval's
  ``-q``) every query's lines first (query ids sorted as strings, as trec_eval's ``strcmp``), then the ``all``
  lines: ``runid`` (the run's name: the file name, where trec_eval prints the run's tag), ``num_q`` (an integer:
  the queries scored) and each measure's mean over the defined queries (unweighted, even on a set weighted by
  traffic), added one by one in query order as trec_eval adds them. A count (``num_ret``, ``num_rel``,
  ``num_rel_ret``) is printed as an integer, and its ``all`` line is its sum over the queries, as trec_eval's; a
  measure summarised geometrically (``gm_map``, ``gm_bpref``) has only its ``all`` line, as in trec_eval. One such
  block per run, in the order given. A measure trec_eval does not have (``judged@k``, added beside nDCG@k, and
  ``rr@k``) is not printed; an undefined value is not printed (trec_eval has none: its numbers need
  ``missing=skip undefined=zero``, and ``missing=zero`` is its ``-c``).
"""
from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from evalset.contract import DEFAULT_METRICS, ContractOptions
from evalset.errors import InputError
from evalset.evaluation import Evaluation, PerQuery, input_notes, per_query_values, unusual_grades
from evalset.evaluation.values import Runs
from evalset.holes.bounds import RunBounds, run_bounds
from evalset.metrics import Measure, trec_eval_name
from evalset.metrics.decomposition import dcg_conventions
from evalset.params import validate_params
from evalset.render import UNDEFINED, is_undefined, json_safe, number, text_table
from evalset.scoring.spec import SCORE_RULES
from evalset.stats.strata import MeanSummary, StratifiedSummary


# ------------------------------------------------------------------------------------------------- scores
@dataclass(frozen=True)
class RunScores:
    """Runs scored: their per-query values, and each run's summary per metric spelling."""

    per_query: PerQuery
    summaries: dict[str, dict[str, MeanSummary]]
    show_per_query: bool = False  # every query's value in the printed forms too
    holes: RunBounds | None = None  # on a set: each run's holes in its headline's top k

    def to_text(self) -> str:
        """The score table (and every query's value with ``show_per_query``), as ``evalset score`` prints it; on a
        set, each run's holes after it."""
        self._refuse_no_measure()
        table = _score_table(self) + ("\n\n" + self.holes.to_text() if self.holes is not None else "")
        return table + "\n\n" + _per_query_table(self) if self.show_per_query else table

    def to_dict(self) -> dict[str, Any]:
        """The JSON of ``evalset score --format json`` (a documented contract)."""
        self._refuse_no_measure()
        return _document(self)

    def to_frame(self) -> pd.DataFrame:
        """Each run's mean (over its defined queries) per measure: one row per run, one column per measure, as
        ``pt.Experiment`` and ranx's ``Report`` show them; the counts of defined queries are in ``to_dict()``."""
        self._refuse_no_measure()
        return pd.DataFrame({measure: [self.summaries[run][measure].mean for run in self.summaries]
                             for measure in self.measures}, index=pd.Index(list(self.summaries), name="run"))

    def to_tsv(self) -> str:
        """``run, metric, mean, defined, undefined[, weighted_mean]``, or with ``show_per_query`` the long
        per-query table ``run, query_id, metric, value`` (an undefined value is empty)."""
        self._refuse_no_measure()
        return _tsv(self)

    def _refuse_no_measure(self) -> None:
        if not self.measures:
            raise InputError("no measure asked: relstring, runid and num_q are lines of trec_eval's output, printed "
                             "by --format trec_eval; add a measure (-m) for this format")

    def to_trec_eval(self) -> str:
        """What ``trec_eval -m ...`` prints for each run (``-q`` with ``show_per_query``): module docstring. When no
        measure asked has a trec_eval name, :class:`~evalset.errors.InputError` (the output would say nothing)."""
        return _trec_eval(self)

    def format_notes(self, output_format: str) -> list[str]:
        """The notes on stderr that belong to one output format: beside :meth:`to_trec_eval`, the measures asked
        that trec_eval has not (judged@k aside) and a level printed as another's (trec_eval's two decimals); in
        the others, trec_eval's lines asked for that only its layout prints (relstring, runid, num_q)."""
        if output_format != "trec_eval":
            shown = ["relstring (with --per-query)"] * bool(self.per_query.relstrings) + list(
                self.per_query.trec_eval_lines)
            return [f"note: trec_eval's lines that are no measure are printed by --format trec_eval only: "
                    f"{', '.join(shown)}"] if shown else []
        pictures = ["note: trec_eval's relstring (each ranking's top 10 as grades, not a measure) is printed per "
                    "query only: add --per-query"] if self.per_query.relstrings and not self.show_per_query else []
        return pictures + self._trec_eval_notes()

    def _trec_eval_notes(self) -> list[str]:
        left_out = [text + (f" (trec_eval's is {m.name}({', '.join(f'{k}={v!r}' for k, v in m.kind.trec_eval_params)}))"
                            if m.kind.trec_eval_params else "")
                    for text, m in self.measures.items() if trec_eval_name(m) is None and m.name != "judged"]
        notes = [f"note: not in trec_eval's output (trec_eval has no such measure): {', '.join(left_out)}"] * bool(
            left_out)
        notes += [f"note: {text} is printed as {name}, trec_eval's name for it (its level with two decimals)"
                  for text, m in self.measures.items() if m.kind.at and (name := trec_eval_name(m))
                  and float(name.rsplit("_", 1)[1]) != m.param(m.kind.at)]
        return notes

    @property
    def notes(self) -> list[str]:
        """One note per run about what was left out (repeated documents, unjudged or missing queries, the
        unjudged documents a condensed contract removed), and one on unusual grades."""
        return _notes(self)

    @property
    def evaluation(self) -> Evaluation:
        return self.per_query.evaluation

    @property
    def measures(self) -> dict[str, Measure]:
        return self.per_query.measures

    @property
    def tables(self) -> dict[str, pd.DataFrame]:
        return self.per_query.tables


TREC_EVAL_ORDER = ("num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref", "recip_rank",
                   "iprec_at_recall", "P", "recall", "infAP", "gm_bpref", "Rprec_mult", "utility", "11pt_avg", "binG",
                   "G", "ndcg", "ndcg_rel", "Rndcg", "ndcg_cut", "map_cut", "relative_P", "success", "set_P",
                   "set_relative_P", "set_recall", "set_map", "set_F", "num_nonrel_judged_ret", "rbp", "rbp_resid",
                   "unj")
"""The order in which trec_eval prints the measures evalset has (its measure table's order), by name stem; its
per-query ``relstring`` (:mod:`evalset.metrics.relstring`) comes after ``P``."""


@validate_params(SCORE_RULES)
def score_runs(evaluation: Evaluation, runs: Runs, metrics: Sequence[str] = (), *, per_query: bool = False,
               stream: bool | None = None, max_retrieved: int | None = None) -> RunScores:
    """Score ``runs`` (name -> file or frame, or files and folders of runs) on ``metrics`` (default: the set's
    headline, else :data:`DEFAULT_METRICS`), judged@k beside every nDCG@k; ``per_query``: print every query's
    value too; ``max_retrieved`` (where each ranking ends, trec_eval's ``-M``): :func:`evalset.metrics.evaluate`'s,
    checked first (:data:`evalset.contract.SCORE_RULES`). The trec_eval version is the evaluation's contract's."""
    default = (evaluation.headline,) if evaluation.frozen else DEFAULT_METRICS
    values = per_query_values(evaluation, runs, metrics or default, judged=True, stream=stream,
                              max_retrieved=max_retrieved)
    summaries = {run: {text: values.summary(run, text) for text in values.measures} for run in values.runs}
    holes = run_bounds(evaluation, runs, values) if evaluation.frozen is not None else None
    return RunScores(values, summaries, per_query, holes)


def score(runs: Any, qrels: Any, metrics: Sequence[str] = (), *, contract: ContractOptions | None = None,
          per_query: bool = False) -> RunScores:
    """``evalset score`` in one call, as ranx's and PyTerrier's users call theirs: ``runs`` one run held in Python
    (a pandas or polars frame, PyTerrier's ``qid, docno, score`` too, a dict of dicts; named ``run``), or name ->
    run, or run files and folders; ``qrels`` a file, ``irds:ID``, or qrels held in Python
    (:mod:`evalset.io.frames`); ``contract`` evalset's by default. ``.to_frame()`` is the table of means."""
    if isinstance(runs, str | os.PathLike):
        runs = [runs]
    named = runs if isinstance(runs, Mapping) or _are_paths(runs) else {"run": runs}
    return score_runs(Evaluation.on_qrels(qrels, contract), named, metrics, per_query=per_query)


def _are_paths(runs: Any) -> bool:
    return isinstance(runs, list | tuple) and bool(runs) and all(isinstance(run, str | os.PathLike) for run in runs)


def _cell(summary: MeanSummary, mean: float | None = None) -> str:
    value = number(summary.mean if mean is None else mean)
    return value if summary.undefined == 0 else f"{value} ({summary.defined}/{summary.undefined})"


def _score_table(scores: RunScores) -> str:
    """One row per run, one column per metric, then the set, the split and the contract."""
    evaluation, frozen, summaries = scores.evaluation, scores.evaluation.frozen, scores.summaries
    metrics = list(scores.measures)
    weighted = frozen is not None and frozen.contract.weighting == "traffic"

    def headline_cell(summary: MeanSummary) -> str:
        return _cell(summary, summary.weighted_mean if weighted else None)

    lines = text_table([["run", *metrics], *[[name, *(headline_cell(s[m]) for m in metrics)]
                                             for name, s in summaries.items()]])
    if frozen is not None:
        first: StratifiedSummary = next(iter(summaries.values()))[metrics[0]]
        if len(first.strata) > 1:
            lines.append(f"\n{metrics[0]} per stratum (traffic share):")
            header = ["run", *(f"{s} ({first.strata[s].share:.3f})" for s in first.strata), "weighted", "unweighted"]
            rows = [[name, *(_cell(s[metrics[0]].strata[stratum]) for stratum in first.strata),
                     number(s[metrics[0]].weighted_mean), _cell(s[metrics[0]])] for name, s in summaries.items()]
            lines += text_table([header, *rows])
        splits = ",".join(sorted(evaluation.queries["split"].unique()))
        averaging = "traffic-weighted across strata" if weighted else "unweighted"
        lines.append(f"\nset {frozen.path} ({frozen.manifest['name']} {frozen.version}), split {splits}, "
                     f"{len(next(iter(scores.tables.values())))} judged queries; means are {averaging}")
        if evaluation.overridden:
            lines.append("CONTRACT OVERRIDDEN: " + ", ".join(evaluation.overridden))
    else:
        lines.append(f"\n{len(next(iter(scores.tables.values())))} queries scored")
    lines.append("contract: " + " ".join(f"{k}={v}" for k, v in evaluation.contract.to_dict().items()))
    gains = {text: measure.contract(evaluation.contract).gain for text, measure in scores.measures.items()
             if measure.name == "ndcg"}  # a measure's own gain (dcg='exp-log2') overrides the contract's
    for gain in dict.fromkeys(gains.values()):
        named = "ndcg" if len(set(gains.values())) == 1 else ", ".join(t for t, g in gains.items() if g == gain)
        lines.append(f"{named}: {dcg_conventions(gain)}")
    lines.append("a mean is over defined queries; (n/m) = defined/undefined when some are undefined")
    return "\n".join(lines)


def _per_query_table(scores: RunScores) -> str:
    """Every query's value, one row per run and query, one column per metric."""
    wide = scores.per_query.long().pivot_table(index=["run", "query_id"], columns="metric", values="value",
                                               sort=False, dropna=False)
    return wide[list(scores.measures)].to_string(float_format=lambda v: f"{v:.4f}", na_rep=UNDEFINED)


def _document(scores: RunScores) -> dict[str, Any]:
    evaluation = scores.evaluation
    document: dict[str, Any] = {
        "contract": evaluation.contract.to_dict(),
        "runs": {name: {text: s.to_dict() for text, s in by_metric.items()}
                 for name, by_metric in scores.summaries.items()},
        "notes": {name: dict(table.attrs) for name, table in scores.tables.items()},
    }
    unusual, _ = unusual_grades(evaluation)
    if unusual:  # said only when there are some, so that the document of good input keeps its shape
        for notes in document["notes"].values():
            notes["unusual_grades"] = {str(g): n for g, n in unusual.items()}
    if evaluation.frozen is not None:
        document["set"] = {"path": str(evaluation.frozen.path), "split": evaluation.split,
                           "weighting": evaluation.frozen.contract.weighting,
                           "contract_overridden": list(evaluation.overridden)}
    if scores.holes is not None:
        document["holes"] = scores.holes.to_dict()
    if scores.show_per_query:
        document["per_query"] = [{"run": row.run, "query_id": row.query_id, "metric": row.metric,
                                  "value": json_safe(row.value)} for row in scores.per_query.long().itertuples()]
    return document


def _tsv(scores: RunScores) -> str:
    if scores.show_per_query:
        return scores.per_query.long().to_csv(sep="\t", index=False, na_rep="")
    rows = []
    for name, by_metric in scores.summaries.items():
        for text, summary in by_metric.items():
            entry = summary.to_dict()
            rows.append({"run": name, "metric": text, **{k: entry[k] for k in ("mean", "defined", "undefined")},
                         **({"weighted_mean": entry["weighted_mean"]} if "weighted_mean" in entry else {})})
    return pd.DataFrame(rows).to_csv(sep="\t", index=False, na_rep="")


def _trec_eval_measures(scores: RunScores) -> list[tuple[str, str]]:
    """(trec_eval name, spelling) of every measure trec_eval has, in trec_eval's order, each measure once."""
    named: dict[str, tuple[tuple[int, float], str]] = {}
    for text, measure in scores.measures.items():
        name = trec_eval_name(measure)
        if name in named and scores.measures[named[name][1]] != measure:
            raise InputError(f"{named[name][1]} and {text} are both {name} in trec_eval's output (it prints a "
                             "level with two decimals): ask for one of them")
        if name is not None and name not in named:
            named[name] = (_trec_eval_order(measure), text)
    return [(name, text) for name, (_, text) in sorted(named.items(), key=lambda item: item[1][0])]


def _trec_eval_order(measure: Measure) -> tuple[int, float]:
    """Where trec_eval prints ``measure``: its stem's place in :data:`TREC_EVAL_ORDER`, then its cutoff or level."""
    whole, stem = measure.kind.trec_eval
    level = measure.cutoff or (measure.param(measure.kind.at) if measure.kind.at else 0)  # iprec: its recall level
    return TREC_EVAL_ORDER.index(whole if measure.cutoff is None else stem), level


def _trec_eval_line(name: str, query: str, value: object) -> str:
    return f"{name:<22}\t{query}\t{value}"


def _trec_eval(scores: RunScores) -> str:
    measures = _trec_eval_measures(scores)
    pictures = scores.per_query.relstrings  # trec_eval's relstring, after the P lines
    if not measures and not pictures and not scores.per_query.trec_eval_lines:
        raise InputError(f"none of the measures asked ({', '.join(scores.measures)}) has a trec_eval name: "
                         "--format trec_eval would print no value (a measure's own parameters are not trec_eval's: "
                         "use -c rel_level=N with map, P_10, ...)")
    counts = {text for _, text in measures if scores.measures[text].kind.count}  # integers, summed for "all"
    summary_only = {text for _, text in measures if scores.measures[text].kind.summary == "geometric"}  # gm_map
    printed = [(name, text) for name, text in measures if text not in summary_only]
    up_to_p = [text for _, text in printed if _trec_eval_order(scores.measures[text])[0] <= TREC_EVAL_ORDER.index("P")]
    lines = []
    for run, table in scores.tables.items():
        columns = {text: table[str(scores.measures[text])] for _, text in measures}
        if scores.show_per_query:
            for query in sorted(table.index.astype(str)):
                query_lines = [_trec_eval_line(name, query, f"{value:.0f}" if text in counts else f"{value:.4f}")
                               for name, text in printed if not is_undefined(value := columns[text].loc[query])]
                if pictures:
                    at = sum(not is_undefined(columns[text].loc[query]) for text in up_to_p)
                    query_lines.insert(at, _trec_eval_line("relstring", query, f"'{pictures[run].loc[query]}'"))
                lines += query_lines
        asked = {"runid": run, "num_q": len(table)}
        lines += [_trec_eval_line(name, "all", asked[name]) for name in scores.per_query.trec_eval_lines]
        means = {text: scores.summaries[run][text].mean if text in summary_only else _running_mean(columns[text])
                 for _, text in measures}
        lines += [_trec_eval_line(name, "all", f"{columns[text].sum():.0f}" if text in counts else f"{mean:.4f}")
                  for name, text in measures if not is_undefined(mean := means[text])]
    return "".join(line + "\n" for line in lines)


def _running_mean(values: pd.Series) -> float:
    """trec_eval's mean: the defined values added one by one in query order (byte order of the ids), over their
    count; at an exact half the fourth decimal can depend on that order (numpy's pairwise sum: P_200 0.0961 where
    trec_eval prints 0.0960)."""
    defined = values.dropna()
    ordered = defined.to_numpy()[sorted(range(len(defined)), key=lambda i: str(defined.index[i]))]
    return sum(ordered.tolist(), 0.0) / len(ordered) if len(ordered) else float("nan")


def _notes(scores: RunScores) -> list[str]:
    return input_notes(scores.per_query)
