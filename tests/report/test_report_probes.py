"""The report's "Can the judge be fooled?" section: the figures of a probe's JSON, shown when the set's LLM labels
come from the probe's judge, refused when that judge used another prompt or guideline."""

import hashlib
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from evalset.cli import main
from evalset.errors import InputError
from evalset.io.annotations import LABELS_COLUMNS
from evalset.io.guideline import read_guideline
from evalset.io.queries import read_queries
from evalset.io.setfolder import load_set
from evalset.judge import probes
from evalset.judge.client import JudgeStats, label_source
from evalset.judge.probing import ProbeReport, probe_figures
from evalset.judge.prompt import DEFAULT_TEMPLATE, read_template
from evalset.report.probes import probes_section, read_probe
from evalset.sets import freeze
from evalset.sets.inputs import read_judgments

REPO = Path(__file__).resolve().parents[2]
DL19 = REPO.parent / "shared" / "data" / "dl19"
GUIDELINE = REPO / "guidelines" / "relevance-v2.md"
RUN = DL19 / "runs" / "official_top100" / "bm25base_p.run.gz"
QUERIES = ("1037798", "104861", "1063750")


def _set(folder: Path, source: str):
    """NIST's grades of three queries, and an LLM's labels of the same pairs under ``source``."""
    qrels = pd.read_csv(DL19 / "qrels.txt", sep=r"\s+", header=None, dtype=str, names=["q", "it", "d", "g"])
    qrels = qrels[qrels["q"].isin(QUERIES)]
    rows = zip(qrels.q, qrels.d, qrels.g, strict=True)
    (folder / "nist.qrels").write_text("".join(f"{q} 0 {d} {g}\n" for q, d, g in rows))
    llm = pd.DataFrame({"query_id": qrels.q, "doc_id": qrels.d, "annotator": "llm:judge-test", "kind": "llm",
                        "grade": qrels.g, "source": source, "labeled_at": "2026-01-01T00:00:00Z", "comment": ""})
    llm[list(LABELS_COLUMNS)].to_csv(folder / "llm.tsv", sep="\t", index=False)
    judgments = read_judgments([folder / "nist.qrels"], [folder / "llm.tsv"])
    queries = read_queries(DL19 / "topics.tsv")
    queries = queries[queries["query_id"].isin(QUERIES)]
    return load_set(freeze(judgments, queries, read_guideline(GUIDELINE), "probed", folder / "sets").path)


def _probe(model="judge-test", guideline_sha=None) -> dict:
    """A probe's JSON from figures of known grades: 20 irrelevant pairs graded 0 unaltered; the grade-it injection
    raises 8 of them to 3, nothing else moves; 10 relevant pairs graded 2, truncation drops 4 to 0."""
    template, guideline = read_template(DEFAULT_TEMPLATE), read_guideline(GUIDELINE)
    text = "First sentence here. A second one follows."
    chosen = {"irrelevant": [f"{n:016x}" for n in range(20)], "relevant": [f"{n:016x}" for n in range(100, 110)]}
    variants, grade = [], {}
    for sample, ids in chosen.items():
        for n, pair in enumerate(ids):
            grade[pair] = 0 if sample == "irrelevant" else 2
            for probe in probes.PROBES:
                if (probe == "truncation") == (sample == "relevant"):
                    for variant in probes.variants(pair, "rsa key", text, probe, 3):
                        variants.append(variant)
                        moved = (variant.kind == "grade-it" and n < 8) or (variant.kind == "first" and n < 4)
                        grade[variant.variant_id] = (3 if sample == "irrelevant" else 0) if moved else grade[pair]
    figures = probe_figures(chosen, variants, grade, 1, 0, 500, 0.95)
    judge = {"model": model, "source": label_source(model, template, guideline), "prompt": template.name,
             "prompt_sha256": template.sha256, "guideline": guideline.name,
             "guideline_sha256": guideline.sha256}
    if guideline_sha:
        judge["source"] = judge["source"].replace(guideline.sha256, guideline_sha)
    return ProbeReport(judge, 1, 0, 0.95, {"irrelevant": {"population": 20, "sampled": 20},
                                          "relevant": {"population": 10, "sampled": 10}},
                       {"irrelevant": {0: 20}, "relevant": {2: 10}}, figures, JudgeStats(), 0, "p.json", "j", "f"
                       ).to_dict()


@pytest.fixture(scope="module")
def probed_set(tmp_path_factory):
    template, guideline = read_template(DEFAULT_TEMPLATE), read_guideline(GUIDELINE)
    return _set(tmp_path_factory.mktemp("set"), label_source("judge-test", template, guideline))


def test_the_section_shows_each_probe_and_kind_with_its_interval(probed_set):
    probe = _probe()
    page = probes_section(probed_set, probe)
    assert page.startswith("<h2>Can the judge be fooled?</h2>")
    injection = next(p for p in probe["probes"] if p["probe"] == "injection")
    assert injection["share"] == 8 / 20 and injection["moved"] == 8  # one phrasing fools 8 pairs of 20
    grade_it = next(k for k in injection["kinds"] if k["name"] == "injection/grade-it")
    assert grade_it["shift"] == pytest.approx(3 * 8 / 20)
    assert (f"<td>injection/grade-it</td><td class=\"num\">20</td><td class=\"num\">20</td><td class=\"num\">8</td>"
            f"<td class=\"num\">40% [{grade_it['low']:.0%}, {grade_it['high']:.0%}]</td>") in page
    assert "<li>fooled by injection in 40% of pairs" in page
    assert "<li>fooled by stuffing in 0% of pairs" in page
    truncation = next(p for p in probe["probes"] if p["probe"] == "truncation")
    assert truncation["share"] == 4 / 10 and truncation["shift"] == pytest.approx(-2 * 4 / 10)
    assert "<li>truncation (the control) lowered the grade below 1 in 40% of pairs" in page
    assert "irrelevant: 0: 20; relevant: 2: 10" in page


def test_a_probe_of_another_model_is_not_shown_and_another_guideline_is_refused(probed_set, tmp_path):
    page = probes_section(probed_set, _probe(model="other-judge"))
    assert "not shown" in page and "<table>" not in page and "judge-test" in page
    with pytest.raises(InputError, match="used another guideline than the set's LLM labels"):
        probes_section(probed_set, _probe(guideline_sha=hashlib.sha256(b"v2").hexdigest()))
    broken = tmp_path / "p.json"
    broken.write_text("{not json")
    with pytest.raises(InputError, match="not valid JSON"):
        read_probe(broken)
    broken.write_text(json.dumps({"probes": []}))
    with pytest.raises(InputError, match="not the JSON of `evalset judge probe`"):
        read_probe(broken)


@pytest.mark.slow
def test_report_command_adds_the_section_or_refuses_in_one_line(probed_set, tmp_path):
    good, bad = tmp_path / "probe.json", tmp_path / "bad.json"
    good.write_text(json.dumps(_probe()))
    bad.write_text(json.dumps(_probe(guideline_sha="0" * 64)))
    args = ["report", str(probed_set.path), str(RUN), "--resamples", "200", "--permutations", "200"]
    result = CliRunner().invoke(main, [*args, "--probes", str(good), "-o", str(tmp_path / "r.html")])
    assert result.exit_code == 0, result.output
    page = (tmp_path / "r.html").read_text()
    assert "<h2>Can the judge be fooled?</h2>" in page and "fooled by injection in 40% of pairs" in page
    assert page.index("Can the judge be fooled?") > page.index("<h2>Scores")
    result = CliRunner().invoke(main, [*args, "--probes", str(bad), "-o", str(tmp_path / "s.html")])
    assert result.exit_code == 2 and result.output.count("\n") == 1 and "used another guideline" in result.output
    assert str(bad) in result.output and not (tmp_path / "s.html").exists()
    assert np.isfinite(json.loads(good.read_text())["probes"][1]["low"])


@pytest.mark.service
def test_the_section_in_chromium_loads_without_error_and_is_screenshot(probed_set, tmp_path):
    import importlib.util
    import os
    import sys

    script = REPO / "scripts" / "check_html_in_chromium.py"
    spec = importlib.util.spec_from_file_location("check_html_in_chromium", script)
    chromium = sys.modules.setdefault(spec.name, importlib.util.module_from_spec(spec))
    spec.loader.exec_module(chromium)
    if chromium.find_chromium() is None:
        pytest.skip("Chromium is not installed: run scripts/install-chromium.sh (apt-get install chromium)")
    probe = tmp_path / "probe.json"
    probe.write_text(json.dumps(_probe()))
    page = tmp_path / "r.html"
    result = CliRunner().invoke(main, ["report", str(probed_set.path), str(RUN), "--resamples", "200",
                                       "--permutations", "200", "--probes", str(probe), "-o", str(page)])
    assert result.exit_code == 0, result.output
    check = chromium.check_page(page)
    assert check.errors == [] and check.external_requests == []
    assert check.screenshot.startswith(b"\x89PNG\r\n\x1a\n")
    if os.environ.get("EVALSET_ARTEFACTS"):
        (Path(os.environ["EVALSET_ARTEFACTS"]) / "report-probes.png").write_bytes(check.screenshot)
