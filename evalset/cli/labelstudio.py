"""The ``evalset push`` and ``evalset pull`` commands: Label Studio."""

from __future__ import annotations

import click

from evalset.cli.emit import emit
from evalset.cli.guideline import guideline_option
from evalset.cli.ruled import format_option, ruled
from evalset.cli.settings_option import settings_option
from evalset.contract import DEFAULT_SEED, PUSH_RULES
from evalset.judgments.spec import GOLD_PUSH_RULES
from evalset.quality.spec import GoldPolicy


@click.command("push")
@click.argument("pool_dir", type=click.Path(file_okay=False, exists=True))
@guideline_option("The guideline (Markdown with a TOML scale): the labeling config and the instructions.",
                  "guideline_path", required=True)
@ruled(PUSH_RULES, "title", "--project", "title", required=True,
       help="Project title: found, or created if absent (with --annotators, each annotator's is TITLE [e-mail]).")
@ruled(PUSH_RULES, "overlap", "--overlap", default=1, help="How many annotators judge each task.")
@click.option("--url", default=None, help="Label Studio URL. Default: $LABEL_STUDIO_URL.")
@click.option("--api-key-env", default="LABEL_STUDIO_API_KEY", show_default=True,
              help="The environment variable holding the API token (the token itself is never an argument).")
@ruled(PUSH_RULES, "batch_size", "--batch-size", default=500, help="Tasks per import request.")
@click.option("--gold", "gold_path", default=None, type=click.Path(dir_okay=False),
              help="Qrels or labels of adjudicated grades: known-answer pairs to mix in blind (needs --gold-rate).")
@ruled(GOLD_PUSH_RULES, "rate", "--gold-rate", default=None, help="Gold tasks / all tasks (needs --gold).")
@ruled(GOLD_PUSH_RULES, "seed", "--seed", default=DEFAULT_SEED, help="Seed of the gold choice and its places.")
@click.option("--annotators", default=None, metavar="EMAIL,EMAIL",
              help="Blind judging: one project per annotator, each on a Label Studio server of their own "
                   "(scripts/label-studio.sh start-team), each task given to --overlap of them. Their servers and "
                   "tokens come from the file named by --annotators-env.")
@click.option("--annotators-env", default="LABEL_STUDIO_ANNOTATORS", show_default=True,
              help="The environment variable naming the annotators file (scripts/label-studio.sh start-team).")
@click.option("--shared-server", is_flag=True,
              help="Accept --annotators who share one server (each in their own organization): not blind, since "
                   "Label Studio Community lets each read the others' grades by URL.")
@click.option("--corpus", default=None, type=click.Path(dir_okay=False),
              help="Texts of gold pairs outside the pool. Default: the corpus recorded in pool.json.")
@click.option("--queries", default=None, type=click.Path(dir_okay=False),
              help="Query texts of gold pairs outside the pool. Default: the queries recorded in pool.json.")
@format_option()
def push_command(pool_dir, guideline_path, title, overlap, url, api_key_env, batch_size, gold_path, gold_rate, seed,
                 annotators, annotators_env, shared_server, corpus, queries, output_format):
    """Push POOL_DIR's tasks.jsonl to a Label Studio project, adding only pairs not already there."""
    from evalset import labelstudio
    from evalset.errors import InputError
    from evalset.io.guideline import read_guideline

    if (gold_path is None) != (gold_rate is None):
        raise InputError("--gold and --gold-rate go together: give both or neither")
    if shared_server and annotators is None:
        raise InputError("--shared-server goes with --annotators (annotators who share one server)")
    guideline = read_guideline(guideline_path)
    plan = None
    if gold_path is not None:
        from evalset.judgments.gold import prepare_gold_push

        plan = prepare_gold_push(pool_dir, gold_path, guideline, gold_rate, seed, corpus=corpus, queries=queries)
    if annotators is not None:
        team = labelstudio.annotator_team(annotators, annotators_env)
        emit(labelstudio.push_blind(url, team, pool_dir, guideline, title, overlap=overlap, batch_size=batch_size,
                                    gold=plan, shared_server=shared_server), output_format)
        return
    client = labelstudio.connect(url, api_key_env)
    emit(labelstudio.push(client, pool_dir, guideline, title, overlap=overlap, batch_size=batch_size, gold=plan),
         output_format)


@click.command("pull")
@click.option("--project", "title", required=True, help="Project title.")
@click.option("--pool", "pool_dir", required=True, type=click.Path(file_okay=False, exists=True),
              help="The pool folder that was pushed (its pool.tsv maps pair_id to query and document ids).")
@guideline_option("The guideline the project was made from (its scale reads the grades).", "guideline_path",
                  required=True)
@click.option("-o", "--output", required=True, type=click.Path(dir_okay=False), help="The labels table (TSV).")
@click.option("--url", default=None, help="Label Studio URL. Default: $LABEL_STUDIO_URL.")
@click.option("--api-key-env", default="LABEL_STUDIO_API_KEY", show_default=True,
              help="The environment variable holding the API token.")
@click.option("--gold", "gold_path", default=None, type=click.Path(dir_okay=False),
              help="The gold file given to push: score each annotator against it; gold-only answers stay out of -o.")
@click.option("--gold-report", default=None, type=click.Path(dir_okay=False),
              help="Write the per-annotator gold report here (.tsv: a table; else JSON). Needs --gold.")
@settings_option(GoldPolicy, {
    "min_gold": "gold answers an annotator needs to be flagged or passed (fewer: 'not enough gold')",
    "min_kappa": "an annotator whose linear kappa against gold is below it is flagged"},
    "--gold-rule", "gold_rule", help="When an annotator is flagged, with --gold")
@click.option("--previous", default=None, type=click.Path(dir_okay=False, exists=True),
              help="The labels table of an earlier pull: list each grade revised or withdrawn since (pair, annotator, "
                   "old and new grade, times).")
@click.option("--annotators", default=None, metavar="EMAIL,EMAIL",
              help="Blind judging: read every annotator's own project (as pushed with --annotators) with their token.")
@click.option("--annotators-env", default="LABEL_STUDIO_ANNOTATORS", show_default=True,
              help="The environment variable naming the annotators file (scripts/label-studio.sh start-team).")
@format_option()
def pull_command(title, pool_dir, guideline_path, output, url, api_key_env, gold_path, gold_report, gold_rule,
                 previous, annotators, annotators_env, output_format):
    """Write every submitted annotation of a project as rows of the labels table."""
    from evalset import labelstudio
    from evalset.errors import InputError
    from evalset.io.guideline import read_guideline
    from evalset.io.outputs import check_outputs

    if gold_report and not gold_path:
        raise InputError("--gold-report needs --gold (the gold file given to push)")
    check_outputs({"-o": output, "--gold-report": gold_report},
                  {"--pool": pool_dir, "--guideline": guideline_path, "--gold": gold_path,
                   "--previous": previous}, resumes=True)  # a pull is repeated as annotators work
    guideline = read_guideline(guideline_path)
    gold = None
    if gold_path:
        from evalset import quality

        gold = quality.gold_check(quality.read_gold(gold_path, guideline), GoldPolicy(**gold_rule))
    if annotators is not None:
        team = labelstudio.annotator_team(annotators, annotators_env)
        labels, report = labelstudio.pull_blind(url, team, title, pool_dir, guideline, gold=gold, previous=previous)
    else:
        client = labelstudio.connect(url, api_key_env)
        labels, report = labelstudio.pull(client, title, pool_dir, guideline, gold=gold, previous=previous)
    emit(labelstudio.write_pull(labels, report, output, gold_report), output_format)
