"""The ``evalset push`` and ``evalset pull`` commands: Label Studio."""

from __future__ import annotations

import click


@click.command("push")
@click.argument("pool_dir", type=click.Path(file_okay=False, exists=True))
@click.option("--guideline", "guideline_path", required=True, type=click.Path(dir_okay=False),
              help="The guideline (Markdown with a TOML scale): the labeling config and the instructions.")
@click.option("--project", "title", required=True, help="Project title: found, or created if absent.")
@click.option("--overlap", default=1, show_default=True, type=click.IntRange(min=1),
              help="How many annotators judge each task.")
@click.option("--url", default=None, help="Label Studio URL. Default: $LABEL_STUDIO_URL.")
@click.option("--api-key-env", default="LABEL_STUDIO_API_KEY", show_default=True,
              help="The environment variable holding the API token (the token itself is never an argument).")
@click.option("--batch-size", default=500, show_default=True, type=click.IntRange(min=1),
              help="Tasks per import request.")
def push_command(pool_dir, guideline_path, title, overlap, url, api_key_env, batch_size):
    """Push POOL_DIR's tasks.jsonl to a Label Studio project, adding only pairs not already there."""
    from evalset import labelstudio
    from evalset.guideline import read_guideline

    guideline = read_guideline(guideline_path)
    client = labelstudio.connect(url, api_key_env)
    result = labelstudio.push(client, pool_dir, guideline, title, overlap=overlap, batch_size=batch_size)
    state = "created" if result.project_created else "found"
    click.echo(f"project {title!r} (id {result.project_id}, {state}): {result.pool_tasks} pool tasks, "
               f"{result.already_present} already there, {result.added} added; overlap {result.overlap}")
    for note in result.notes:
        click.echo(f"note: {note}")
    if result.duplicates:
        click.echo(f"warning: the project holds {result.duplicates} duplicate task(s) of the same pair_id "
                   "(not made by this push)", err=True)


@click.command("pull")
@click.option("--project", "title", required=True, help="Project title.")
@click.option("--pool", "pool_dir", required=True, type=click.Path(file_okay=False, exists=True),
              help="The pool folder that was pushed (its pool.tsv maps pair_id to query and document ids).")
@click.option("--guideline", "guideline_path", required=True, type=click.Path(dir_okay=False),
              help="The guideline the project was made from (its scale reads the grades).")
@click.option("-o", "--output", required=True, type=click.Path(dir_okay=False), help="The labels table (TSV).")
@click.option("--url", default=None, help="Label Studio URL. Default: $LABEL_STUDIO_URL.")
@click.option("--api-key-env", default="LABEL_STUDIO_API_KEY", show_default=True,
              help="The environment variable holding the API token.")
def pull_command(title, pool_dir, guideline_path, output, url, api_key_env):
    """Write every submitted annotation of a project as rows of the labels table."""
    from evalset import labelstudio
    from evalset.guideline import read_guideline
    from evalset.io.annotations import write_labels
    from evalset.io.outputs import check_outputs
    from evalset.pooling import pool_files

    check_outputs({"-o": output}, {"--pool": pool_files(pool_dir), "--guideline": guideline_path})
    guideline = read_guideline(guideline_path)
    client = labelstudio.connect(url, api_key_env)
    labels, report = labelstudio.pull(client, title, pool_dir, guideline)
    write_labels(labels, output)
    for line in report.lines():
        click.echo(line)
    click.echo(f"wrote {output}")
