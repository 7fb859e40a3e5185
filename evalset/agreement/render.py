"""The agreement report as JSON, as a text table, as a TSV of disagreements and as a heatmap (all written
atomically by the ``write_*`` functions)."""

from __future__ import annotations

import json
import math
import os
from typing import Any

import numpy as np
import pandas as pd

from evalset.agreement.analysis import KAPPA_KEYS, AgreementReport, KappaEstimate, PairAgreement
from evalset.io.files import atomic_path
from evalset.render import json_safe, number, text_table


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


def to_json_dict(report: AgreementReport, disagreements: pd.DataFrame | None = None,
                 top: int = 20) -> dict[str, Any]:
    """The report as a JSON-ready dict (NaN becomes null); ``disagreements`` (default: the report's) is cut to
    its first ``top`` rows, with the total count beside them."""
    table = report.disagreements if disagreements is None else disagreements
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
    return json_safe(document)


def to_json(report: AgreementReport, disagreements: pd.DataFrame | None = None, top: int = 20,
            sections: dict[str, Any] | None = None) -> str:
    """The report as JSON text; ``sections`` (e.g. ``annotator_quality``) are added at the end when given."""
    return json.dumps({**to_json_dict(report, disagreements, top), **(sections or {})}, indent=2,
                      ensure_ascii=False) + "\n"


# ------------------------------------------------------------------------------------------------ the table
def _cell(estimate: KappaEstimate, reading: bool = True) -> str:
    low, high = estimate.ci_bootstrap
    interval = "" if math.isnan(low) else f" [{low:.2f}, {high:.2f}]"
    return number(estimate.value, 3) + interval + (f" {estimate.reading}" if reading else "")


def _asymptotic_cell(estimate: KappaEstimate) -> str:
    low, high = estimate.ci_asymptotic
    return number(estimate.value, 3) + ("" if math.isnan(low) else f" [{low:.2f}, {high:.2f}]")


def _grid(header: list[str], rows: list[list[Any]], right: set[int] = frozenset()) -> list[str]:
    return text_table([header, *rows], right)


def format_table(report: AgreementReport, *, pairs: str = "all", disagreements: pd.DataFrame | None = None,
                 top: int = 20, confusion_limit: int = 10) -> str:
    """A text report. ``pairs="with-human"`` lists only the pairs with a human annotator in the pair tables."""
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
    if len(shown) <= confusion_limit:
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
    humans = [a["annotator"] for a in report.annotators if a["kind"] == "human"]
    lines += ["", *_disagreement_lines(report.disagreements if disagreements is None else disagreements, top, humans)]
    return "\n".join(lines) + "\n"


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
             "largest gaps (--disagreements FILE.tsv writes all)"]
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


# ------------------------------------------------------------------------------------------------ the files
def write_text(text: str, path: str | os.PathLike) -> None:
    """Write a text file atomically (UTF-8)."""
    with atomic_path(path) as tmp, open(tmp, "w", encoding="utf-8") as handle:
        handle.write(text)


def write_disagreements(table: pd.DataFrame, path: str | os.PathLike) -> None:
    """The full disagreements table as TSV with a header (atomically); an ungraded cell is empty."""
    with atomic_path(path) as tmp:
        table.to_csv(tmp, sep="\t", index=False, na_rep="", lineterminator="\n")


def write_heatmap(report: AgreementReport, path: str | os.PathLike) -> None:
    """A heatmap of the pairwise kappa matrix (matplotlib, PNG), written atomically."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    matrix = report.matrix()
    size = len(matrix)
    inches = max(6.0, 0.32 * size + 3.0)
    figure, axes = plt.subplots(figsize=(inches + 1.5, inches))
    values = np.ma.masked_invalid(matrix.to_numpy(dtype=float))
    image = axes.imshow(values, vmin=min(0.0, float(np.nanmin(matrix.to_numpy()))), vmax=1.0, cmap="viridis")
    axes.set_xticks(range(size), labels=matrix.columns, rotation=90, fontsize=8)
    axes.set_yticks(range(size), labels=matrix.index, fontsize=8)
    if size <= 12:
        for i in range(size):
            for j in range(size):
                if i != j and not np.ma.is_masked(values[i, j]):
                    axes.text(j, i, f"{values[i, j]:.2f}", ha="center", va="center", fontsize=8,
                              color="white" if values[i, j] < 0.5 else "black")
    axes.set_title(f"Pairwise {KAPPA_KEYS[report.kappa]} (grades {report.scale[0]}-{report.scale[-1]})")
    figure.colorbar(image, ax=axes, fraction=0.046, pad=0.04)
    figure.tight_layout()
    with atomic_path(path) as tmp:
        figure.savefig(tmp, format="png", dpi=120, metadata={"Software": None})
    plt.close(figure)
