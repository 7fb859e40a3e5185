"""The ``evalset verify`` and ``diff`` commands: frozen set versions checked and compared."""

from __future__ import annotations

import sys

import click

from evalset.cli.emit import emit
from evalset.cli.ruled import format_option, ruled
from evalset.contract import SPLIT_RULES


@click.command()
@click.argument("set_path", type=click.Path(file_okay=False))
@click.option("--manifest-sha256", metavar="HEX",
              help="The manifest's expected sha256 (from the original versions.tsv): verifies a copied version.")
@click.option("--labels", "labels_paths", multiple=True, type=click.Path(dir_okay=False, exists=True),
              help="A later labels table (a new pull): also list the set's grades revised or withdrawn upstream since "
                   "it was frozen; repeatable.")
@format_option()
def verify(set_path, manifest_sha256, labels_paths, output_format):
    """Check every hash and the manifest of a frozen set version.

    Exit 0 (OK), 1 (FAILED, naming each changed, missing or extra file) or 3 (UNVERIFIED: every file matches the
    manifest, but the manifest itself could not be checked: no versions.tsv records it and no --manifest-sha256).
    Grades changed upstream (--labels) are reported, not failed: the frozen version itself is unchanged.
    """
    from evalset.sets import check_version

    checked = check_version(set_path, manifest_sha256, labels_paths)
    emit(checked, output_format)
    if checked.verification.problems:
        sys.exit(1)
    if checked.verification.unverified:
        sys.exit(3)


@click.command()
@click.argument("old_path", type=click.Path(file_okay=False))
@click.argument("new_path", type=click.Path(file_okay=False))
@click.option("--runs", "runs", multiple=True, type=click.Path(),
              help="Runs (files or folders) whose headline score under each version is shown; repeatable.")
@ruled(SPLIT_RULES, "split", "--split", default="all", help="The queries the runs are scored on.")
@format_option()
def diff(old_path, new_path, runs, split, output_format):
    """Judgments added, removed and changed between two versions of a set, and how runs move."""
    from evalset.sets import diff_versions

    emit(diff_versions(old_path, new_path, runs or None, split), output_format)
