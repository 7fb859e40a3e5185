"""The command line's vocabulary: the spellings that changed, each refused with one line naming the new one.

An option renamed or folded into another is not kept as a hidden alias: a script that used it stops with
``evalset: error: --missing is now -c missing=VALUE ...`` (exit 2), so that nothing runs under a meaning the user
did not choose. The README's changelog holds the same table (``tests/cli/test_vocabulary.py`` checks both).
"""

from __future__ import annotations

import click

RENAMED = {
    "--rel-level": "-c rel_level=N",
    "--gain": "-c gain=linear|exponential",
    "--ties": "-c ties=trec|run|docid|expected",
    "--missing": "-c missing=zero|skip",
    "--undefined": "-c undefined=skip|zero",
    "--unjudged": "-c unjudged=nonrelevant|condensed",
    "--trec-eval-version": "-c trec_eval_version=9|10",
    "--concurrency": "-s concurrency=N",
    "--rpm": "-s rpm=N",
    "--tpm": "-s tpm=N",
    "--timeout": "-s timeout=N",
    "--max-retries": "-s max_retries=N",
    "--max-invalid": "-s max_invalid=N",
    "--structured": "-s structured=auto|on|off",
    "--max-tokens": "-s max_tokens=N",
    "--measure": "-m/--metric",
    "--bootstrap": "--resamples",
    "--confidence": "--level",
}
"""An old option -> its new spelling."""
RENAMED_IN = {
    "grade": {"--seed": "-s seed=N"},
    "sample": {"--no-header": "-l header=no", "--query": "-l query=COLUMN", "--count": "-l count=COLUMN",
               "--timestamp": "-l timestamp=COLUMN", "--timestamp-format": "-l timestamp_format=FORMAT",
               "--user": "-l user_id=COLUMN", "--stratum-column": "-l source=COLUMN"},
    "agreement": {"--disagreements": "-o DIR (its disagreements.tsv)", "--plot": "-o DIR (its kappa.png)",
                  "--confusion-plot": "-o DIR (its confusion.png)", "--scale": "--guideline 0,1,2,3 (a bare scale)"},
    "set": {"--allow-llm": "--merge llm=yes", "--max-gap": "--merge max_gap=N", "--priority": "--merge priority=NAMES",
            "--exclude-annotator": "--merge exclude=NAMES", "--llm-labels": "--llm (as estimate's)",
            "--headline": "-m/--metric"},
    "pull": {"--gold-min-answers": "--gold-rule min_gold=N", "--gold-min-kappa": "--gold-rule min_kappa=K"},
    "report": {"--runs": "SET RUN... (the runs after the set, as score takes them)"},
    "recheck": {"--scale": "--guideline 0,1,2,3 (a bare scale)"},
    "ensemble": {"--scale": "--guideline 0,1,2,3 (a bare scale)"},
    "compare": {"--why": "`evalset explain` (the same runs and --qrels or --set)",
                "--epsilon": "`evalset explain --epsilon`", "--top": "`evalset explain --top`",
                "--holes": "`evalset holes` (the same runs and --qrels or --set, -o DIR)",
                "--corpus": "`evalset holes --corpus`", "--force": "`evalset holes --force`",
                "--test": "--decide t+bca (the test and the interval that decide)",
                "--interval": "--decide permutation+percentile (the test and the interval that decide)"},
}
"""An old option of one command (by its name) -> its new spelling there (``--seed`` stays elsewhere)."""
ONE_JOB = "one command, one job"
SETTINGS_OPTIONS = {"-c": "--contract, one option for the evaluation contract's settings; --help lists them",
                    "-s": "--client, one option for the client's pace and patience; --help lists them",
                    "-l": "--log, one option for the logs' layout; --help lists them",
                    "--merge": "--merge, one option for the merge's rule and settings; --help lists them"}


SPLIT = {
    "plan": "plan is now two commands: `evalset plan power RUNS... --qrels|--set ...` (the queries a comparison "
            "needs, from a pilot) and `evalset plan cost RUNS... -k K | --pool DIR ...` (what judging them costs)",
    "select": "estimate select is now three commands, one for each thing drawn: `evalset estimate select slice POOL "
              "--size N|--per-stratum N|--fraction F` (was --size ...), `estimate select documents POOL --budget B|P%` "
              "(was --documents), `estimate select holes POOL --set SET --budget B|P%|--precision SE` (was --holes "
              "SET)",
    "estimate": "estimate is now commands by verb and design: `evalset estimate run slice|documents|holes|set RUN... "
                "...` (was estimate --runs RUN --slice, --design documents --sample, --set ...), `estimate validate "
                "slice|documents|holes RUN... --resamples R ...` (was --simulate R), `estimate select "
                "slice|documents|holes POOL ...`",
}
"""A command that became several, by its name -> the line that names them."""


def moved(error: click.UsageError) -> str | None:
    """The line for an old spelling click did not know (:data:`RENAMED`), or for a command that became several
    given the old way (:data:`SPLIT`), else None."""
    command = error.ctx.command if error.ctx is not None else None
    if isinstance(command, click.Group) and command.name in SPLIT and not isinstance(
            error, click.exceptions.NoArgsIsHelpError):  # the group alone shows its help
        return SPLIT[command.name]
    if not isinstance(error, click.NoSuchOption):
        return None
    renamed = RENAMED | RENAMED_IN.get(command.name if command is not None else "", {})
    if error.option_name not in renamed:
        return None
    name, new = error.option_name, renamed[error.option_name]
    why = SETTINGS_OPTIONS.get(new.split()[0], ONE_JOB if new.startswith("`") else
                               "one spelling for one concept on every command")
    return f"{name} is now {new} ({why})"


def runnable_commands(group: click.Group, path: tuple[str, ...] = ()) -> dict[str, click.Command]:
    """Every command a user can run, by its words (``judge probe``): a group that runs on its own (``estimate``)
    too. Loads every command's module."""
    context = click.Context(group)
    found: dict[str, click.Command] = {}
    if path and (not isinstance(group, click.Group) or group.invoke_without_command):
        found[" ".join(path)] = group
    if isinstance(group, click.Group):
        for name in group.list_commands(context):
            found |= runnable_commands(group.get_command(context, name), (*path, name))
    return found


def options_of(command: click.Command) -> list[click.Option]:
    """The options a user sees in ``--help`` (not ``--help`` itself)."""
    return [param for param in command.params
            if isinstance(param, click.Option) and not param.hidden and param.name != "help"]
