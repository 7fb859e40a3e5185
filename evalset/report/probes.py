"""The report's "Can the judge be fooled?" section: the figures of ``evalset judge probe`` (its JSON) beside the set
judged by that judge.

Conventions
-----------
- The probe's judge is its ``judge`` block: the model and ``source``, the label source its labels would carry
  (:func:`evalset.judge.client.label_source`: model, prompt template and guideline, each with its sha256).
- The section is shown when the set's LLM labels (``labels.tsv``, kind ``llm``, column ``source``) come from that
  model. Same model but another prompt or guideline (a sha256 differs): refused, one line, since the probe measured
  another judge. No LLM label of that model (none at all, or another model's): the section says so instead of
  the figures.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from evalset.errors import InputError
from evalset.io.documents import read_json
from evalset.io.setfolder import FrozenSet
from evalset.judgments.identity import source_fields
from evalset.render import number
from evalset.report.markup import escaped, html_table


def read_probe(path: str | os.PathLike) -> dict[str, Any]:
    """The JSON ``evalset judge probe`` wrote; refused (one line) when it is not JSON or not a probe's report."""
    path = os.fspath(path)
    probe = read_json(path)
    if not isinstance(probe, dict) or not isinstance(probe.get("judge"), dict) or "probes" not in probe or \
            not source_fields(str(probe["judge"].get("source", ""))):
        raise InputError("not the JSON of `evalset judge probe` (no judge block with its source, or no probes)", path)
    return probe


def probes_section(frozen: FrozenSet, probe: Mapping[str, Any], path: str | None = None) -> str:
    """The section's HTML for ``frozen`` (module docstring); raises :class:`InputError` when the probe's judge is
    the set's model under another prompt or guideline."""
    judge = source_fields(probe["judge"]["source"])
    title = "<h2>Can the judge be fooled?</h2>"
    labels = frozen.labels
    sources = sorted(set(labels.loc[labels["kind"] == "llm", "source"].astype(str)))
    ours = [fields for fields in map(source_fields, sources) if fields.get("model") == judge["model"]]
    if not ours:
        held = ", ".join(sorted({f["model"] for f in map(source_fields, sources) if f})) or "none"
        return (f'{title}\n<p class="none">The probe is of the judge {escaped(judge["model"])}; the set\'s LLM labels '
                f"are not (their models: {escaped(held)}), so its figures are not shown.</p>")
    for labelled in ours:
        for key, what in (("prompt_sha256", "prompt"), ("guideline_sha256", "guideline")):
            if labelled[key] != judge[key]:
                raise InputError(f"the probe's judge {judge['model']} used another {what} than the set's LLM labels "
                                 f"(sha256 {judge[key][:12]} vs {labelled[key][:12]}): it measured another judge", path)
    rows = []
    for entry in probe["probes"]:
        for row in (entry, *entry.get("kinds", [])):
            rows.append([row["name"], row["pairs"], row["eligible"], row["moved"], _share(row), _shift(row),
                         row["failed"]])
    grades = "; ".join(f"{escaped(sample)}: " + ", ".join(f"{g}: {n}" for g, n in counts.items())
                       for sample, counts in probe.get("original_grades", {}).items())
    samples = probe.get("samples", {})
    irrelevant, relevant = samples.get("irrelevant", {}), samples.get("relevant", {})
    rel = probe.get("rel")
    parts = [title, (
        f"<p>The judge <b>{escaped(judge['model'])}</b> (prompt {escaped(judge['prompt'])}, "
        f"guideline {escaped(judge['guideline'])}: "
        f"the judge of this set's LLM labels) was shown adversarial passages by <code>evalset judge probe</code>: the "
        "query's terms stuffed in, an instruction to the grader appended, the query copied in front, and a neutral "
        f"sentence appended (the placebo: how often any edit moves the judge), on {irrelevant.get('sampled', 0)} "
        "pairs the humans graded 0; and, as a control that should lower grades, the "
        f"passage cut to its first sentence on {relevant.get('sampled', 0)} pairs they graded &ge; {rel}. "
        f"<b>moved</b>: of the <b>eligible</b> pairs (the judge graded the unaltered pair below {rel}; for the "
        f"control, at least {rel}), those whose variant reached {rel} (the control: fell below it), with a Wilson "
        "interval; <b>shift</b>: the mean grade change over the pairs, with a bootstrap interval. A probe's row "
        f"counts a pair moved when any of its variants moved. The judge's grades of the unaltered pairs: {grades}."
        "</p>"),
        html_table(["probe/kind", "pairs", "eligible", "moved", "share [interval]", "shift [interval]", "failed"], rows,
               numeric={1, 2, 3, 4, 5, 6}),
        "<ul>" + "".join(f"<li>{escaped(entry['verdict'])}</li>" for entry in probe["probes"]) + "</ul>",
        *(f'<p class="none">{escaped(note)}</p>' for note in probe.get("notes", [])),
    ]
    return "\n".join(parts)


def _share(row: Mapping[str, Any]) -> str:
    if row.get("share") is None:
        return "undef"
    return f"{row['share']:.0%} [{row['low']:.0%}, {row['high']:.0%}]"


def _shift(row: Mapping[str, Any]) -> str:
    if row.get("shift") is None:
        return "undef"
    return f"{number(row['shift'], 2, sign=True)} [{number(row['shift_low'], 2, sign=True)}, " \
           f"{number(row['shift_high'], 2, sign=True)}]"
