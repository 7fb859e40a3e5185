"""``evalset judge probe``: can the judge be fooled? Adversarial variants (:mod:`evalset.judge.probes`) of pairs
the humans graded irrelevant, a neutral edit of the same pairs (the placebo: a noisy judge moves under any edit,
and a probe's share means something only above it), and the truncation control on pairs they graded relevant,
graded as ``evalset judge`` grades (same prompt, client, journal, fault handling), beside the judge's grades of
the unaltered pairs.

Conventions
-----------
- **Samples.** The *irrelevant* sample: ``size`` pairs of ``pool.tsv`` whose every human grade is 0; the
  *relevant* sample (truncation only): ``size`` pairs whose every human grade is ``>= rel``. A pair the humans
  disagree on is in neither. Both are drawn by :func:`evalset.judge.probes.sample` with ``seed``. A pool with no
  human-irrelevant pair is refused; one with no human-relevant pair runs without the control (a note says so).
- **rel** is the relevance level: the contract's ``rel_level`` by default (1; the guideline has no level of its
  own). It must be a grade of the scale above its lowest.
- **Judged in one run.** The unaltered pairs are judged with their variants (one journal, default
  ``OUTPUT.journal.sqlite``: a killed probe resumes), since "rose" is relative to the judge's own grade of the
  original. A pair or variant without a grade (failed, or unanswered this run) is counted as failed, never as a
  grade: its pair is left out of the figures it lacks.
- **Figures, per kind** (one variant per pair): ``moved`` is the number of *eligible* pairs (the judge graded
  the original ``< rel``; for truncation ``>= rel``) whose variant is graded ``>= rel`` (truncation: ``< rel``); a
  pair the judge already graded relevant cannot rise, so it is left out of the share and counted
  (``already``). ``shift`` is the mean of variant grade minus original grade over every pair with both grades.
- **Figures, per probe** (the pair is the unit): a pair moved when any of its variants moved; its shift is the
  mean of its variants' shifts; a pair counts when all its variants have grades. A pair the probe cannot alter
  (truncating a one-sentence passage) is ``unaltered``, in no figure.
- **Intervals** over pairs: the share's Wilson interval (:func:`evalset.stats.proportions.wilson_interval`), the
  shift's BCa bootstrap (:func:`evalset.stats.paired.bootstrap_interval`, ``resamples``, each seeded by ``seed``, so
  that figures of the same values get the same interval). No eligible pair: the share is undefined (NaN), never 0%.
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from evalset.contract import DEFAULT_SEED
from evalset.errors import InputError
from evalset.io.files import atomic_path, write_text
from evalset.io.guideline import read_guideline
from evalset.io.poolfiles import PAIRS_FILE, TASKS_FILE, read_pool_pairs, read_tasks
from evalset.judge import probes as variants_of
from evalset.judge.client import JudgeStats, label_source, labels_from_journal
from evalset.judge.endpoint import resolve_endpoint
from evalset.judge.job import PROGRESS_DELAY, judge_tasks
from evalset.judge.prompt import DEFAULT_TEMPLATE, read_template
from evalset.judge.spec import PROBE_RULES, JudgeSettings
from evalset.params import validate_params
from evalset.pooling.examples import refuse_worked_examples
from evalset.render import json_safe
from evalset.seeds import generator
from evalset.stats.paired import bootstrap_interval
from evalset.stats.proportions import wilson_interval


@dataclass(frozen=True)
class Figures:
    """One kind's or one probe's figures (module docstring); ``name`` is ``probe`` or ``probe/kind``."""

    name: str
    pairs: int
    eligible: int
    already: int
    moved: int
    share: float
    low: float
    high: float
    shift: float
    shift_low: float
    shift_high: float
    failed: int
    unaltered: int


@dataclass(frozen=True)
class ProbeFigures:
    """A probe: its figures over pairs, each kind's, and its verdict line."""

    probe: str
    figures: Figures
    kinds: tuple[Figures, ...]
    rel: int

    @property
    def verdict(self) -> str:
        f = self.figures
        if not f.eligible:
            cause = "below" if self.probe != variants_of.CONTROL else "at or above"
            return f"{self.probe}: undefined: no answered pair the judge graded {cause} {self.rel} unaltered"
        share = f"{f.share:.0%} of pairs [{f.low:.0%}, {f.high:.0%}]"
        shift = f"mean grade shift {f.shift:+.2f} [{f.shift_low:+.2f}, {f.shift_high:+.2f}]"
        if self.probe == variants_of.CONTROL:
            return f"truncation (the control) lowered the grade below {self.rel} in {share}; {shift}"
        if self.probe == variants_of.PLACEBO:
            return (f"a neutral edit (the placebo) raised the grade to {self.rel} in {share}, the share any edit "
                    f"moves this judge; {shift}")
        return f"fooled by {self.probe} in {share}; {shift}"


@dataclass(frozen=True)
class ProbeReport:
    """What ``evalset judge probe`` measured and wrote. ``judge`` names the judge (model, ``source`` as its labels
    carry it, the prompt's and guideline's sha256); ``samples`` the sizes of each sample and population;
    ``original_grades`` the judge's grades of the unaltered pairs of each sample."""

    judge: dict[str, str]
    rel: int
    seed: int
    level: float
    samples: dict[str, dict[str, int]]
    original_grades: dict[str, dict[int, int]]
    probes: tuple[ProbeFigures, ...]
    stats: JudgeStats
    failed: int
    output: str
    journal_path: str
    failures_path: str
    notes: tuple[str, ...] = field(default_factory=tuple)
    price_in: float | None = None
    price_out: float | None = None

    def to_text(self) -> str:
        s = self.samples
        lines = [f"judge {self.judge['model']} (prompt sha256 {self.judge['prompt_sha256'][:12]}, guideline sha256 "
                 f"{self.judge['guideline_sha256'][:12]}); relevant: grade >= {self.rel}",
                 f"irrelevant sample: {s['irrelevant']['sampled']:,} of the {s['irrelevant']['population']:,} pairs "
                 f"the humans graded 0; relevant sample: {s['relevant']['sampled']:,} of "
                 f"{s['relevant']['population']:,} graded >= {self.rel}"]
        for sample, grades in self.original_grades.items():
            shown = ", ".join(f"{grade}: {count:,}" for grade, count in sorted(grades.items())) or "none"
            lines.append(f"judge's grades of the unaltered {sample} pairs: {shown}")
        header = f"{'probe/kind':<22} {'pairs':>6} {'eligible':>8} {'moved':>6} {'share':>6} {'interval':>15} " \
                 f"{'shift':>6} {'interval':>15} {'failed':>6}"
        lines += ["", header]
        for probe in self.probes:
            for row in (probe.figures, *probe.kinds):
                lines.append(f"{row.name:<22} {row.pairs:>6,} {row.eligible:>8,} {row.moved:>6,} "
                             f"{_pct(row.share):>6} {_span(row.low, row.high, _pct):>15} {_num(row.shift):>6} "
                             f"{_span(row.shift_low, row.shift_high, _num):>15} {row.failed:>6,}")
        lines += ["", *(probe.verdict for probe in self.probes), "",
                  f"requests {self.stats.requests:,}, judged {self.stats.judged:,} this run "
                  f"({self.stats.already_answered:,} from the journal), failed {self.failed:,}; tokens "
                  f"{self.stats.prompt_tokens:,} in, {self.stats.completion_tokens:,} out{self._cost()}",
                  f"wrote {self.output}", f"wrote {self.failures_path}", f"journal {self.journal_path}"]
        return "\n".join(lines)

    def _cost(self) -> str:
        cost = self.stats.cost(self.price_in, self.price_out)
        return "" if cost is None else f", cost {cost:.4f}"

    def to_dict(self) -> dict[str, Any]:
        return json_safe({
            "judge": self.judge, "rel": self.rel, "seed": self.seed, "level": self.level, "samples": self.samples,
            "original_grades": {k: {str(g): n for g, n in v.items()} for k, v in self.original_grades.items()},
            "probes": [{"probe": p.probe, "verdict": p.verdict, **asdict(p.figures),
                        "kinds": [asdict(kind) for kind in p.kinds]} for p in self.probes],
            "failed": self.failed, "requests": self.stats.requests, "notes": list(self.notes),
        })


def _pct(value: float) -> str:
    return "undef" if math.isnan(value) else f"{value:.0%}"


def _num(value: float) -> str:
    return "undef" if math.isnan(value) else f"{value:+.2f}"


def _span(low: float, high: float, shown) -> str:
    return f"[{shown(low)}, {shown(high)}]"


def default_paths(output: str | os.PathLike) -> tuple[str, str]:
    """The journal and failures files beside ``probe.json``: ``probe.json.journal.sqlite``, ``probe.failures.tsv``."""
    output = Path(output)
    stem = output.name[:-5] if output.name.endswith(".json") else output.name
    return str(output) + ".journal.sqlite", str(output.with_name(stem + ".failures.tsv"))


def human_samples(pairs: pd.DataFrame, human: pd.DataFrame, rel: int, size: int, seed: int,
                  source: str | None = None) -> tuple[dict[str, list[str]], dict[str, dict[str, int]]]:
    """The pair ids of the irrelevant and relevant samples (module docstring) and the populations' sizes."""
    grades = human.astype({"query_id": str, "doc_id": str}).groupby(["query_id", "doc_id"])["grade"]
    low, high = grades.max().astype(int), grades.min().astype(int)
    keys = list(zip(pairs["query_id"], pairs["doc_id"], strict=True))
    zero = {key for key, value in low.items() if value == 0}
    relevant = {key for key, value in high.items() if value >= rel}
    population = {"irrelevant": [p for p, key in zip(pairs["pair_id"], keys, strict=True) if key in zero],
                  "relevant": [p for p, key in zip(pairs["pair_id"], keys, strict=True) if key in relevant]}
    if not population["irrelevant"]:
        raise InputError("no pair of the pool has a human grade of 0 (every human grade 0): nothing to probe", source)
    chosen = {name: variants_of.sample(ids, size, seed) for name, ids in population.items()}
    return chosen, {name: {"population": len(population[name]), "sampled": len(chosen[name])} for name in chosen}


@validate_params(PROBE_RULES)
def probe_pool(pool_dir: str | os.PathLike, guideline_path: str | os.PathLike, human: pd.DataFrame,
               output: str | os.PathLike, settings: JudgeSettings, *, human_source: str | None = None,
               size: int = 200, rel: int = 1, seed: int = DEFAULT_SEED, resamples: int = 9999, level: float = 0.95,
               template_path: str | os.PathLike = DEFAULT_TEMPLATE, journal_path: str | None = None,
               failures_path: str | None = None, progress: bool | None = None,
               progress_delay: float = PROGRESS_DELAY, price_in: float | None = None,
               price_out: float | None = None) -> ProbeReport:
    """Probe the judge on the pool's pairs (module docstring); write the report as JSON to ``output`` and the
    failures table. ``human`` holds the human grades (``query_id, doc_id, grade``; several per pair allowed);
    ``price_in`` and ``price_out`` (per million tokens) only price the summary. Every parameter named in
    :data:`evalset.judge.spec.PROBE_RULES` is checked first."""
    resolve_endpoint(settings.base_url)
    guideline, template = read_guideline(guideline_path), read_template(template_path)
    if rel not in guideline.grades[1:]:
        raise InputError(f"the relevance level (-c rel_level) must be a grade of the guideline's scale above its "
                         f"lowest ({', '.join(map(str, guideline.grades))}), got {rel}", os.fspath(guideline_path))
    pool_dir = Path(pool_dir)
    chosen, samples = human_samples(read_pool_pairs(pool_dir / PAIRS_FILE), human, rel, size, seed, human_source)
    tasks_path = pool_dir / TASKS_FILE
    if not tasks_path.exists():
        raise InputError("the pool has no tasks.jsonl (no passage texts): build it with a corpus (evalset pool "
                         "--corpus)", os.fspath(pool_dir))
    by_id = {task["pair_id"]: task for task in read_tasks(tasks_path).to_dict("records")}
    refuse_worked_examples(guideline, by_id, pool_dir, "being probed", "the judge would read its grade in its "
                           "prompt")  # the rule of every reader of a guideline beside a pool (judge's, push's)
    notes = () if chosen["relevant"] else (f"no pair of the pool has every human grade >= {rel}: the truncation "
                                           "control is not run",)
    top = max(guideline.grades)
    originals, variants = [], []
    for sample, ids in chosen.items():
        for pair_id in ids:
            task = by_id.get(pair_id)
            if task is None or not task["text"].strip():
                raise InputError(f"pair {pair_id} (query {task['query_id'] if task else '?'}) has no passage text in "
                                 "tasks.jsonl: build the pool with a corpus that holds it", os.fspath(tasks_path))
            originals.append(task)
            for probe in variants_of.PROBES:
                if (probe == variants_of.CONTROL) == (sample == "relevant"):
                    variants += variants_of.variants(pair_id, task["query"], task["text"], probe, top, seed)
    variant_tasks = [{**by_id[v.pair_id], "pair_id": v.variant_id, "text": v.text} for v in variants]
    tasks = list({task["pair_id"]: task for task in [*originals, *variant_tasks]}.values())
    default_journal, default_failures = default_paths(output)
    journal_path, failures_path = journal_path or default_journal, failures_path or default_failures
    stats, answers = judge_tasks(tasks, guideline, template, settings, journal_path, progress=progress,
                                 progress_delay=progress_delay)
    grade = {pair: answer.grade for pair, answer in answers.items() if answer.status == "judged"}
    _, failures = labels_from_journal(tasks, answers, settings.model, template, guideline)
    figures = probe_figures(chosen, variants, grade, rel, seed, resamples, level)
    judge = {"model": settings.model, "source": label_source(settings.model, template, guideline),
             "prompt": template.name, "prompt_sha256": template.sha256, "guideline": guideline.name,
             "guideline_sha256": guideline.sha256}
    original_grades = {name: dict(sorted(pd.Series([grade[p] for p in ids if p in grade], dtype="int64")
                                         .value_counts().to_dict().items())) for name, ids in chosen.items()}
    report = ProbeReport(judge, rel, seed, level, samples, original_grades, figures, stats,
                         sum(task["pair_id"] not in grade for task in tasks), os.fspath(output), journal_path,
                         failures_path, notes, price_in, price_out)

    write_text(output, json.dumps(report.to_dict(), indent=2, ensure_ascii=False) + "\n")
    with atomic_path(failures_path) as tmp:
        failures.to_csv(tmp, sep="\t", index=False, lineterminator="\n")
    return report


def probe_figures(chosen: dict[str, list[str]], variants: list[variants_of.Variant], grade: dict[str, int],
                  rel: int, seed: int, resamples: int, level: float) -> tuple[ProbeFigures, ...]:
    """Every probe's figures and its kinds' (module docstring) from the grades by pair id (originals and
    variants' ids). Every figure's bootstrap starts from ``seed``: figures of the same values (a probe of one kind
    and its kind) get the same interval."""
    result = []
    for probe in variants_of.PROBES:
        control = probe == variants_of.CONTROL
        ids = chosen["relevant" if control else "irrelevant"]
        if not ids:
            continue
        of_probe = [v for v in variants if v.probe == probe]
        by_pair: dict[str, list[variants_of.Variant]] = {}
        for variant in of_probe:
            by_pair.setdefault(variant.pair_id, []).append(variant)
        kinds = tuple(_figures(f"{probe}/{kind}", ids, {p: [v for v in vs if v.kind == kind] for p, vs in
                                                        by_pair.items()}, grade, rel, control,
                               generator(seed), resamples, level)
                      for kind in variants_of.KINDS[probe])
        overall = _figures(probe, ids, by_pair, grade, rel, control, generator(seed), resamples, level)
        result.append(ProbeFigures(probe, overall, kinds, rel))
    return tuple(result)


def _figures(name: str, ids: list[str], by_pair: dict[str, list[variants_of.Variant]], grade: dict[str, int],
             rel: int, control: bool, rng: np.random.Generator, resamples: int, level: float) -> Figures:
    shifts, eligible, already, moved, failed, unaltered = [], 0, 0, 0, 0, 0
    for pair_id in ids:
        altered = by_pair.get(pair_id, [])
        if not altered:
            unaltered += 1
            continue
        if pair_id not in grade or any(v.variant_id not in grade for v in altered):
            failed += 1
            continue
        original, graded = grade[pair_id], [grade[v.variant_id] for v in altered]
        shifts.append(float(np.mean([g - original for g in graded])))
        if control:
            eligible += original >= rel
            moved += original >= rel and any(g < rel for g in graded)
        elif original >= rel:
            already += 1
        else:
            eligible += 1
            moved += any(g >= rel for g in graded)
    low, high = wilson_interval(moved, eligible, level)
    values = np.asarray(shifts, dtype=float)
    shift_low, shift_high = bootstrap_interval(values, level, resamples, rng) if len(values) else (math.nan,) * 2
    return Figures(name, len(shifts), eligible, already, moved, moved / eligible if eligible else math.nan, low, high,
                   float(values.mean()) if len(values) else math.nan, shift_low, shift_high, failed, unaltered)
