"""What ``evalset agreement`` reports, from its inputs: the statistics of :func:`agreement_report`, the
disagreements as shown, and each annotator's quality when asked (:mod:`evalset.agreement.annotators`), with the
text and the JSON they print as.

Conventions
-----------
- The grades are read by :func:`~evalset.agreement.inputs.load_grades` (one annotator's conflicting judgments
  refused or settled by ``conflicting_grades``; the settled ones are said in the ``notes``) and checked against
  the scale (default :data:`~evalset.contract.DEFAULT_SCALE`) under ``out_of_scale``.
- The text lists the first ``top`` disagreements (largest gap first) and, with ``pairs="with-human"``, only the
  pairs with a human annotator; the JSON has every pair and the first ``top`` disagreements with their count. The
  confusion matrices are printed for at most :data:`CONFUSION_LIMIT` pairs (the JSON has them all).
- With query texts (``queries``) or document texts (``corpus``), the disagreements carry ``query`` and ``text``
  columns (the corpus is read for the documents disagreed on only).
- With runs, after the system rankings: the favouritism of each LLM annotator against each human one
  (:mod:`evalset.agreement.favouritism`), every run's row; the JSON's ``favouritism`` (null without runs) holds
  the pairs and the notes of pairs without figures.
- The per-annotator quality (crowd-kit) is computed when first asked for: for its section
  (``annotator_quality``), or for its confusion plot (:func:`~evalset.agreement.annotators.write_confusion_plot`).
"""

from __future__ import annotations

import functools
import json
import math
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from evalset.agreement import annotators
from evalset.agreement.analysis import (
    KAPPA_KEYS,
    AgreementReport,
    KappaEstimate,
    PairAgreement,
    agreement_report,
    with_texts,
)
from evalset.agreement.inputs import load_grades
from evalset.agreement.render import AGREEMENT_FILES, write_disagreements, write_heatmap
from evalset.contract import AGREEMENT_RULES, DEFAULT_METRIC, DEFAULT_SCALE, DEFAULT_SEED, EvaluationContract
from evalset.errors import InputError
from evalset.io.corpus import read_corpus
from evalset.io.files import folder_built_aside, write_text
from evalset.io.queries import read_queries
from evalset.io.trec import read_runs
from evalset.judgments.ensemble import ensemble_grades
from evalset.judgments.scale import OutOfScale
from evalset.params import validate_params
from evalset.render import json_safe, number, text_table

CONFUSION_LIMIT = 10
"""The most pairs whose confusion matrices the text prints."""


@dataclass(frozen=True)
class Agreement:
    """The result of ``evalset agreement`` (:func:`analyse_agreement`): the ``report``, the ``disagreements`` as
    shown (default: the report's), the ``top`` of them listed, the ``pairs`` listed in the text (``all`` or
    ``with-human``), the ``grades`` read and the ``out_of_scale`` policy (for the per-annotator quality), whether
    the quality section is reported (``annotator_quality``), and the ``notes`` for stderr."""

    report: AgreementReport
    disagreements: pd.DataFrame | None = None
    top: int = 20
    pairs: str = "all"
    grades: pd.DataFrame | None = None
    out_of_scale: OutOfScale = "error"
    annotator_quality: bool = False
    notes: tuple[str, ...] = ()

    @property
    def table(self) -> pd.DataFrame:
        """The disagreements as shown: every one, largest gap first."""
        return self.report.disagreements if self.disagreements is None else self.disagreements

    @functools.cached_property
    def quality(self) -> annotators.AnnotatorQuality:
        """Each annotator's quality (:func:`~evalset.agreement.annotators.annotator_quality`), computed when first
        asked for."""
        if self.grades is None:
            raise InputError("no grades to rate the annotators on")
        return annotators.annotator_quality(self.grades, self.report.scale, self.out_of_scale)

    def write(self, folder: str | os.PathLike, *, replace: bool = False) -> list[Path]:
        """Write the analysis as a folder (built aside, renamed into place; an existing non-empty folder refused
        unless ``replace``): ``agreement.json`` (what ``--format json`` prints, which ``evalset report --agreement``
        reads), ``disagreements.tsv`` (every disagreement, largest gap first), ``kappa.png`` (the kappa matrix) and,
        when the annotators' quality is reported, ``confusion.png`` (each one's Dawid-Skene confusion matrix).
        Returns the files written, in :data:`~evalset.agreement.render.AGREEMENT_FILES` order."""
        names = AGREEMENT_FILES if self.annotator_quality else AGREEMENT_FILES[:-1]
        with folder_built_aside(folder, replace=replace) as aside:
            write_text(aside / names[0], json.dumps(self.to_dict(), indent=2, ensure_ascii=False) + "\n")
            write_disagreements(self.table, aside / names[1])
            write_heatmap(self.report, aside / names[2])
            if self.annotator_quality:
                annotators.write_confusion_plot(self.quality, aside / names[3])
        return [Path(folder) / name for name in names]

    def to_text(self) -> str:
        """The report as ``evalset agreement`` prints it, then the per-annotator quality section when asked."""
        return _text(self)

    def to_dict(self) -> dict[str, Any]:
        """The JSON of ``evalset agreement --format json`` (an undefined value is null), with
        ``annotator_quality`` at the end when asked."""
        return _document(self)


@validate_params(AGREEMENT_RULES)
def analyse_agreement(inputs: Sequence[str], humans: Sequence[str] = (), *, scale: Sequence[int] = DEFAULT_SCALE,
                      out_of_scale: OutOfScale = "error", conflicting_grades: str = "refuse",
                      kappa: str = "quadratic", resamples: int = 1000, level: float = 0.95, seed: int = DEFAULT_SEED,
                      runs: Sequence[str] = (), measure: str = DEFAULT_METRIC,
                      contract: EvaluationContract | None = None, queries: str | os.PathLike | None = None,
                      corpus: str | os.PathLike | None = None, top: int = 20, pairs: str = "all",
                      annotator_quality: bool = False, ensemble: bool = False) -> Agreement:
    """The agreement of the annotators in ``inputs`` (labels tables and qrels files; ``humans``: see
    :func:`~evalset.agreement.inputs.load_grades`), with the system rankings of ``runs`` (files or folders) when
    given (module docstring; the statistics' parameters are :func:`agreement_report`'s). With ``ensemble``, the
    LLM judges combined and calibrated on the humans (:mod:`evalset.judgments.ensemble`) are one more annotator.
    Every parameter named in :data:`evalset.contract.AGREEMENT_RULES` is checked against its rule first."""
    grades, counts = load_grades(list(inputs), humans, conflicting_grades)
    settled = sum(entry.get("conflicting_grades_settled", 0) for entry in counts.values())
    notes = (f"note: {settled} conflicting judgments settled by --conflicting-grades {conflicting_grades}",) \
        if settled else ()
    if ensemble:
        combined = ensemble_grades(grades[grades["kind"] == "llm"], grades[grades["kind"] == "human"], scale)
        grades = pd.concat([grades, combined.labels().assign(file="")[list(grades.columns)]], ignore_index=True)
        counts[combined.name] = {"unjudged": 0, "collapsed_duplicates": 0}
        notes = (*notes, combined.note)
    report = agreement_report(grades, scale, out_of_scale=out_of_scale, kappa=kappa, resamples=resamples, level=level,
                              seed=seed, runs=read_runs(runs) if runs else None, measure=measure, contract=contract,
                              input_counts=counts)
    table = report.disagreements
    if queries or corpus:
        table = with_texts(table, read_queries(queries) if queries else None,
                           read_corpus(corpus, set(table["doc_id"])) if corpus else None)
    return Agreement(report, table, top, pairs, grades, out_of_scale, annotator_quality, notes)


# ------------------------------------------------------------------------------------------------- the JSON
def _pair_dict(pair: PairAgreement, scale: tuple[int, ...]) -> dict[str, Any]:
    out: dict[str, Any] = {"a": pair.a, "b": pair.b, "kind_a": pair.kind_a, "kind_b": pair.kind_b, "n": pair.n,
                           "queries": pair.queries, "raw_agreement": pair.raw_agreement}
    for kind, key in KAPPA_KEYS.items():
        estimate = pair.kappas[kind]
        out[key] = estimate.value
        out[f"{key}_ci_asymptotic"] = estimate.ci_asymptotic
        out[f"{key}_ci_bootstrap"] = estimate.ci_bootstrap
        out[f"{key}_bootstrap_undefined"] = estimate.bootstrap_undefined
        out[f"{key}_reading"] = estimate.reading
    out["binary"] = [{"level": level, "kappa": e.value, "ci_asymptotic": e.ci_asymptotic,
                      "ci_bootstrap": e.ci_bootstrap, "reading": e.reading} for level, e in pair.binary.items()]
    out["confusion"] = {"rows": pair.a, "columns": pair.b, "grades": list(scale), "counts": pair.confusion}
    out["notes"] = pair.notes
    return out


def _document(result: Agreement) -> dict[str, Any]:
    report, table, top = result.report, result.table, result.top
    matrix = report.matrix()
    document = {
        "scale": list(report.scale),
        "confidence_level": report.level,
        "bootstrap": {"unit": "query", "resamples": report.resamples, "seed": report.seed,
                      "interval": "percentile"},
        "annotators": report.annotators,
        "pairs": [_pair_dict(pair, report.scale) for pair in report.pairs],
        "alpha_ordinal": report.alpha_ordinal,
        "matrix": {"kappa": KAPPA_KEYS[report.kappa], "annotators": list(matrix.index),
                   "values": matrix.to_numpy().tolist()},
        "calibration": report.calibration,
        "systems": None,
        "favouritism": None,
        "disagreements": {
            "items": len(table),
            "shown": min(top, len(table)),
            "rows": [{k: (None if pd.isna(v) else v) for k, v in row.items()}
                     for row in table.head(top).astype(object).to_dict(orient="records")],
        },
    }
    if report.rankings:
        document["systems"] = {
            "measure": report.measure,
            "scores": report.run_scores,
            "pairs": [{"a": r.a, "b": r.b, "queries": r.queries, "runs": r.runs, "kendall_tau": r.kendall_tau,
                       "kendall_p": r.kendall_p, "tau_ap": r.tau_ap, "tau_ap_reverse": r.tau_ap_reverse,
                       "moves": r.moves} for r in report.rankings],
        }
        document["favouritism"] = {"pairs": [f.to_dict() for f in report.favouritism],
                                   "notes": report.favouritism_notes}
    if result.annotator_quality:
        document["annotator_quality"] = result.quality.to_dict()
    return json_safe(document)


# ------------------------------------------------------------------------------------------------- the text
def _cell(estimate: KappaEstimate, reading: bool = True) -> str:
    low, high = estimate.ci_bootstrap
    interval = "" if math.isnan(low) else f" [{low:.2f}, {high:.2f}]"
    return number(estimate.value, 3) + interval + (f" {estimate.reading}" if reading else "")


def _asymptotic_cell(estimate: KappaEstimate) -> str:
    low, high = estimate.ci_asymptotic
    return number(estimate.value, 3) + ("" if math.isnan(low) else f" [{low:.2f}, {high:.2f}]")


def _grid(header: list[str], rows: list[list[Any]], right: set[int] = frozenset()) -> list[str]:
    return text_table([header, *rows], right)


def _text(result: Agreement) -> str:
    report, pairs = result.report, result.pairs
    kinds = [a["kind"] for a in report.annotators]
    level = f"{report.level:.0%}"
    lines = [f"{len(kinds)} annotators ({kinds.count('human')} human, {kinds.count('llm')} llm); scale "
             f"{', '.join(map(str, report.scale))}; intervals {level}: bootstrap over queries "
             f"({report.resamples} resamples, seed {report.seed}) and asymptotic (items independent)", ""]
    annotator_rows = [[a["annotator"], a["kind"], a["items"], *a["grades"].values(), a["clipped"], a["dropped"],
                       a.get("unjudged", 0), ", ".join(a["files"])] for a in report.annotators]
    lines += ["Annotators", *_grid(
        ["annotator", "kind", "items", *[f"={g}" for g in report.scale], "clipped", "dropped", "unjudged", "file"],
        annotator_rows, right=set(range(2, 6 + len(report.scale))))]
    shown = [p for p in report.pairs if pairs == "all" or "human" in (p.kind_a, p.kind_b)]
    shown.sort(key=lambda p: ("human" not in (p.kind_a, p.kind_b), p.kind_a != p.kind_b))
    lines += ["", f"Pairs ({len(shown)} of {len(report.pairs)}): Cohen's kappa [{level} bootstrap interval] "
                  "and Landis-Koch reading"]
    lines += _grid(["a", "b", "n", "queries", "raw", "kappa", "linear", "quadratic"],
                   [[p.a, p.b, p.n, p.queries, number(p.raw_agreement, 3), *(_cell(p.kappas[k]) for k in KAPPA_KEYS)]
                    for p in shown], right={2, 3, 4})
    lines += ["", f"Asymptotic {level} intervals (Fleiss-Cohen-Everitt; treats items as independent)"]
    lines += _grid(["a", "b", "kappa", "linear", "quadratic"],
                   [[p.a, p.b, *(_asymptotic_cell(p.kappas[k]) for k in KAPPA_KEYS)] for p in shown])
    levels = list(report.pairs[0].binary) if report.pairs else []
    lines += ["", "Binarised kappa (relevant = grade >= level) [bootstrap interval]"]
    lines += _grid(["a", "b", *[f">={v}" for v in levels]],
                   [[p.a, p.b, *(_cell(p.binary[v], reading=False) for v in levels)] for p in shown])
    notes = [f"{p.a} vs {p.b}: {note}" for p in shown for note in p.notes]
    if notes:
        lines += ["", "Notes"] + [f"  {note}" for note in notes]
    if len(shown) <= CONFUSION_LIMIT:
        for p in shown:
            lines += ["", f"Confusion {p.a} (rows) x {p.b} (columns)"]
            lines += _grid(["", *map(str, report.scale)],
                           [[str(g), *row] for g, row in zip(report.scale, p.confusion, strict=True)],
                           right=set(range(len(report.scale) + 1)))
    else:
        lines += ["", f"Confusion matrices: {len(shown)} pairs, in --format json"]
    lines += ["", f"Krippendorff's alpha (ordinal, all annotators): {number(report.alpha_ordinal, 3)}"]
    lines += ["", *_matrix_lines(report)]
    lines += ["", *_calibration_lines(report)]
    if report.rankings:
        lines += ["", *_ranking_lines(report)]
        for favoured in report.favouritism:
            lines += ["", favoured.to_text()]
        lines += [f"Note: {note}" for note in report.favouritism_notes]
    humans = [a["annotator"] for a in report.annotators if a["kind"] == "human"]
    lines += ["", *_disagreement_lines(result.table, result.top, humans)]
    if result.annotator_quality:
        lines += ["", result.quality.to_text()]
    return "\n".join(lines)



def _matrix_lines(report: AgreementReport) -> list[str]:
    matrix = report.matrix()
    names = list(matrix.index)
    numbered = len(names) > 6
    columns = [str(i + 1) for i in range(len(names))] if numbered else names
    rows = [[(f"{i + 1} " if numbered else "") + name,
             *("-" if i == j else number(matrix.iat[i, j], 2) for j in range(len(names)))]
            for i, name in enumerate(names)]
    grid = _grid(["", *columns], rows, right=set(range(1, len(names) + 1)))
    return [f"Pairwise {KAPPA_KEYS[report.kappa]} matrix", *grid]


def _calibration_lines(report: AgreementReport) -> list[str]:
    calibration = report.calibration
    lines = [f"Calibration of the LLM judges ({calibration['kappa']}): {calibration['human_range_note']}"]
    if calibration["human_range"]:
        low, high = calibration["human_range"]
        lines[0] += f": {low:.3f} to {high:.3f}"
        lines += _grid(["human", "human", "n", "kappa [bootstrap]"],
                       [[h["a"], h["b"], h["n"], f"{number(h['kappa'], 3)} [{number(h['ci_bootstrap'][0], 2)}, "
                                                   f"{number(h['ci_bootstrap'][1], 2)}]"]
                        for h in calibration["human_pairs"]], right={2})
        lines.append("")
    judges = sorted(calibration["judges"], key=lambda j: (-(j["kappa"] if not math.isnan(j["kappa"]) else -9),
                                                          j["llm"], j["human"]))
    if not judges:
        return [*lines, "  no LLM-vs-human pair"]
    lines += _grid(["llm", "human", "n", "kappa [bootstrap]", "reading", "verdict"],
                   [[j["llm"], j["human"], j["n"], f"{number(j['kappa'], 3)} [{number(j['ci_bootstrap'][0], 2)}, "
                                                   f"{number(j['ci_bootstrap'][1], 2)}]", j["reading"], j["verdict"]]
                    for j in judges], right={2})
    return lines


def _ranking_lines(report: AgreementReport) -> list[str]:
    lines = [f"System rankings by {report.measure} under each annotator's grades "
             f"({report.rankings[0].runs} runs; means over the queries both annotators define)"]
    rows = []
    for r in report.rankings:
        moves = ", ".join(f"{m['run']} {m['rank_a']}->{m['rank_b']}" for m in r.moves[:3])
        taus = (number(tau, 3) for tau in (r.kendall_tau, r.tau_ap, r.tau_ap_reverse))
        rows.append([r.a, r.b, r.queries, *taus, moves])
    return lines + _grid(["a", "b", "queries", "tau", "tau_ap(a ref)", "tau_ap(b ref)", "runs moving most (a->b)"],
                         rows, right={2, 3, 4, 5})


def _disagreement_lines(table: pd.DataFrame, top: int, humans: list[str]) -> list[str]:
    lines = [f"Disagreements: {len(table)} items where annotators differ; the {min(top, len(table))} "
             "largest gaps (-o DIR writes all)"]
    if table.empty:
        return lines
    fixed = {"query_id", "doc_id", "gap", "min_grade", "max_grade", "annotators", "query", "text"}
    names = [c for c in table.columns if c not in fixed]
    humans = set(humans)
    rows = []
    for row in table.head(top).to_dict(orient="records"):
        grades = [(name, row[name]) for name in names if not pd.isna(row[name])]
        if len(grades) <= 4:
            summary = " ".join(f"{name}={grade}" for name, grade in grades)
        else:
            named = [f"{name}={grade}" for name, grade in grades if name in humans]
            others = [grade for name, grade in grades if name not in humans]
            counts = pd.Series(others).value_counts().sort_index()
            summary = " ".join([*named, ("others " if named else "") + " ".join(
                f"{grade}:{count}" for grade, count in counts.items()) + " (grade:annotators)"])
        texts = [str(row[c])[:50] for c in ("query", "text") if c in row]
        rows.append([row["query_id"], row["doc_id"], row["gap"], summary, *texts])
    extra = [c for c in ("query", "text") if c in table.columns]
    return lines + _grid(["query_id", "doc_id", "gap", "grades", *extra], rows, right={2})

