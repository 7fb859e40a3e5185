"""The ``evalset freeze`` commands: ``freeze LABELS`` (``freeze set``) freezes labels into a versioned, read-only
set; ``freeze grow`` adds the graded sample of a set's holes as the set's next version."""

from __future__ import annotations

from pathlib import Path

import click

from evalset.cli.default_group import DefaultCommandGroup
from evalset.cli.emit import emit
from evalset.cli.guideline import guideline_option
from evalset.cli.options import conflicting_grades_option, evaluation_options, run_pairs
from evalset.cli.ruled import format_option, ruled
from evalset.cli.settings_option import settings_option
from evalset.contract import DEFAULT_METRIC, SET_CONTRACT_RULES
from evalset.judgments.spec import MergePolicy
from evalset.sets.spec import FREEZE_RULES

MERGE_SETTINGS = {
    "rule": "median, majority, annotator-priority, or crowd-kit's dawid-skene, one-coin, mace, glad (pip install "
            "'evalset[quality]'); ties and large gaps are unresolved (--merge dawid-skene: the rule alone)",
    "llm": "LLM grades take part in the merge", "max_gap": "grades of one pair further apart are unresolved",
    "priority": "annotator-priority's annotators, first wins (commas)",
    "exclude": "annotators left out of the merge, kept in labels.tsv and counted (commas)",
}


@click.group("freeze", cls=DefaultCommandGroup, default="set")
def freeze_group():
    """Freeze labels into a versioned, read-only set (`evalset freeze LABELS`, i.e. `freeze set`), or grow a set by
    the graded sample of its holes (`freeze grow`)."""


@freeze_group.command("set")
@click.argument("labels", nargs=-1, required=True, type=click.Path(dir_okay=False))
@click.option("--llm", "llm_labels", multiple=True, type=click.Path(dir_okay=False),
              help="Labels table or qrels of an LLM judge (kind llm); repeatable.")
@click.option("--queries", "queries_path", required=True, type=click.Path(dir_okay=False),
              help="queries.tsv from `evalset sample`, or a TREC topics file (one stratum, all in the test split).")
@guideline_option("The labeling guideline: its scale validates every grade; its sha256 goes in the manifest.",
                  "guideline_path", required=True)
@click.option("--name", required=True, help="The set's name: sets-dir/NAME/vN.")
@click.option("--sets-dir", default="sets", show_default=True, type=click.Path(file_okay=False),
              help="Folder holding the sets.")
@ruled(FREEZE_RULES, "version", "--version", "version_number", default=None,
       help="Version number [default: the next one].")
@settings_option(MergePolicy, MERGE_SETTINGS, "--merge", help="How the grades of one pair are merged", bare="rule")
@click.option("--adjudication", type=click.Path(dir_okay=False), help="Labels table or qrels that settle pairs.")
@conflicting_grades_option
@click.option("-m", "--metric", "headline", default=DEFAULT_METRIC, show_default=True,
              help="The set's headline metric.")
@ruled(SET_CONTRACT_RULES, "weighting", "--weighting", default="traffic",
       help="Means across strata: by traffic share, or every query alike.")
@click.option("--plan", "plans", multiple=True, metavar="BASELINE:CANDIDATE",
              help="A planned comparison (run names); repeatable. Others on this set are exploratory.")
@click.option("--sample", "sample_path", type=click.Path(exists=True),
              help="The document sample the human labels were drawn by (sample.json of `estimate select documents`, "
                   "or its folder): recorded in the set, whose estimates then use it.")
@evaluation_options
@format_option()
def freeze(labels, llm_labels, queries_path, guideline_path, name, sets_dir, version_number, merge, adjudication,
           conflicting_grades, headline, weighting, plans, sample_path, contract, output_format):
    """Freeze LABELS (labels tables, or qrels as one human annotator each) into sets-dir/NAME/vN.

    Grades are merged per pair by the declared rule (human grades only unless --merge llm=yes); unresolved pairs
    block the freeze unless --adjudication settles them. The folder is built aside, renamed into place, made
    read-only, and never rewritten. A set grown by the graded sample of its holes: `evalset freeze grow`.
    """
    from evalset.io.outputs import check_outputs
    from evalset.io.setfiles import VERSIONS_FILE
    from evalset.sets import freeze_files

    check_outputs({"--sets-dir": Path(sets_dir, name, VERSIONS_FILE)},  # the version folder itself is new
                  {"LABELS": labels, "--llm": llm_labels, "--queries": queries_path,
                   "--guideline": guideline_path, "--adjudication": adjudication, "--sample": sample_path},
                  adds_to_set=Path(sets_dir, name), resumes=True)  # a new version is added to versions.tsv
    emit(freeze_files(labels, queries_path, guideline_path, name, sets_dir, llm_labels=llm_labels,
                      version=version_number, contract=contract.applied_to()[0], headline=headline,
                      weighting=weighting, merge=MergePolicy(**merge), adjudication=adjudication,
                      planned=run_pairs(plans, "--plan"), conflicting_grades=conflicting_grades, sample=sample_path),
         output_format)


@freeze_group.command("grow")
@click.argument("labels", nargs=-1, required=True, type=click.Path(dir_okay=False))
@click.option("--sample", "sample_path", required=True, type=click.Path(exists=True),
              help="The sample of a set's holes LABELS grade (the -o folder of `estimate select holes --set SET`, or "
                   "its sample.json): the set it was drawn for grows by them.")
@guideline_option("The guideline the holes were graded by [default: the set's].", "guideline_path")
@ruled(FREEZE_RULES, "version", "--version", "version_number", default=None,
       help="Version number [default: the next one].")
@format_option()
def grow(labels, sample_path, guideline_path, version_number, output_format):
    """Add LABELS, the grades of the drawn holes of a set (`estimate select holes --set SET`), to the set as its next
    version: its queries, name, contract and plan kept, the sample recorded beside the grades."""
    from evalset.io.digests import file_sha256
    from evalset.io.guideline import read_guideline
    from evalset.io.outputs import check_outputs
    from evalset.io.samplerecord import read_sample, record_file
    from evalset.io.setfiles import VERSIONS_FILE
    from evalset.sets.holes import freeze_hole_sample, hole_sample_set
    from evalset.sets.inputs import read_judgments

    record = read_sample(sample_path)
    base = hole_sample_set(record, sample_path)
    check_outputs({"--sample": base.parent / VERSIONS_FILE}, {"LABELS": labels, "--sample": sample_path,
                  "--guideline": guideline_path}, adds_to_set=base.parent, resumes=True)
    grades = read_judgments(labels, ())
    grades.attrs["source"] = ", ".join(labels)
    inputs = {path: file_sha256(path) for path in (*labels, str(record_file(sample_path)))}
    emit(freeze_hole_sample(grades, record, record_path=sample_path, version=version_number, inputs=inputs,
                            guideline=read_guideline(guideline_path) if guideline_path else None), output_format)
