"""Options shared by several commands: the evaluation contract, the frozen set, pairs of run names, --force."""

from __future__ import annotations

import functools

import click

from evalset.cli.ruled import ruled
from evalset.cli.settings_option import settings_option
from evalset.contract import DEFAULT_SCALE, REPEATS_RULES, SPLIT_RULES, EvaluationContract, reads_ranks


def apply_options(command, options):
    return functools.reduce(lambda decorated, option: option(decorated), reversed(options), command)


CONTRACT_SETTINGS = {
    "rel_level": "binary measures' relevant grade",
    "gain": "nDCG's gain",
    "ties": "the order of equal scores (trec: doc id descending; run: the run's)",
    "missing": "a judged query a run lacks: 0, or left out (refused until chosen where a verdict is printed)",
    "undefined": "a query with no relevant document: left out, or 0",
    "unjudged": "an unjudged document: not relevant, or condensed away (trec_eval -J)",
    "trec_eval_version": "the trec_eval whose iprec@r, 11pt_avg, ties and all_trec",
}
"""The evaluation contract's settings (:class:`evalset.contract.EvaluationContract`) and what each means."""
CONTRACT_OPTIONS = tuple(CONTRACT_SETTINGS)


def evaluation_options(command, with_set: bool = False):
    """``-c/--contract NAME=VALUE``: the evaluation contract's settings, each by its rule, given to the command as
    one ``contract`` (:class:`evalset.contract.ContractOptions`); ``with_set``: the command has --set, whose contract
    is the default."""
    @functools.wraps(command)
    def collapsed(*args, **kwargs):
        from evalset.contract import ContractOptions

        return command(*args, contract=ContractOptions(**kwargs.pop("contract")), **kwargs)

    return contract_option(CONTRACT_OPTIONS, ", or the set's with --set" if with_set else "")(collapsed)


def contract_option(names: tuple[str, ...] = CONTRACT_OPTIONS, default_note: str = "",
                    defaults: dict[str, object] | None = None):
    """The ``-c/--contract`` option of the contract settings ``names``: a dict of those given (``defaults``: a
    command's own)."""
    return settings_option(EvaluationContract, {name: CONTRACT_SETTINGS[name] for name in names}, "-c", "--contract",
                           "contract", help="An evaluation convention", default_note=default_note,
                           defaults=defaults)


def conflicting_grades_option(command):
    """--conflicting-grades, with one name and help wherever annotations are read (agreement, freeze)."""
    return ruled(
        REPEATS_RULES, "conflicting_grades", "--conflicting-grades", default="refuse",
        help="One annotator giving one pair different grades: refuse (naming both places), or keep the latest "
             "judgment or the first (by labeled_at, then the order of files and lines; qrels have no time); "
             "settled ones are counted.")(command)


set_evaluation_options = functools.partial(evaluation_options, with_set=True)
"""The evaluation-contract options of a command whose --set brings its own contract (the default there)."""


def contract_options(command):
    """What the commands that score runs share (score, compare, explain, holes, plan power, reusability): the qrels
    or the frozen set, its split and contract override, and the evaluation-contract options."""
    return evaluation_options(apply_options(command, [
        click.option("--qrels", "qrels_path", type=click.Path(dir_okay=False),
                     help="TREC qrels: qid 0 docid grade. Required unless --set."),
        click.option("--set", "set_path", type=click.Path(file_okay=False),
                     help="Score on a frozen set (sets/NAME/vN): its qrels, queries and contract. Required unless "
                          "--qrels."),
        ruled(SPLIT_RULES, "split", "--split", default="test", help="With --set: the queries scored."),
        click.option("--override-contract", is_flag=True,
                     help="With --set: allow options that contradict the set's contract (the output says so)."),
    ]), with_set=True)


def force_option(what: str = "-o", folder: bool = True):
    """``--force``: replace an output folder that is not empty, or an output file that exists (else refused)."""
    return click.option("--force", is_flag=True, help=f"Replace the {what} folder if it exists and is not empty (built "
                        "aside, then swapped in; refused without --force, as it may be work in progress)." if folder
                        else "Replace an output file that exists (refused without it).")


def png_path(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """A --plot path: plots are PNG, so a name with another suffix (a.pdf, a.svg) is refused before any work."""
    if value is not None and not value.lower().endswith(".png"):
        raise click.BadParameter(f"the plot is a PNG image: give a file name ending in .png, got {value!r}",
                                 ctx=ctx, param=param)
    return value


def run_pairs(values: tuple[str, ...], option: str) -> list[tuple[str, str]]:
    pairs = [value.partition(":")[::2] for value in values]
    for value, (base, candidate) in zip(values, pairs, strict=True):
        if not base or not candidate:
            raise click.BadParameter(f"expected BASELINE:CANDIDATE, got {value!r}", param_hint=option)
    return pairs


def grade_scale(guideline: str | list[int] | None) -> list[int]:
    """The scale of ``--guideline`` (a guideline, or a bare scale: :class:`~evalset.cli.guideline.GuidelinePath`);
    default :data:`evalset.contract.DEFAULT_SCALE`."""
    from evalset.io.guideline import read_guideline

    if isinstance(guideline, list):
        return guideline
    return read_guideline(guideline).grades if guideline else list(DEFAULT_SCALE)


def evaluation_from_options(qrels_path, set_path, split, override_contract, contract, runs=()):
    """The Evaluation of score's, compare's and plan's options (a run read ahead while the library loads)."""
    if bool(qrels_path) == bool(set_path):
        raise click.UsageError("give either --qrels or --set")
    if stray := [f"--{name.replace('_', '-')}" for name in ("split", "override_contract") if not set_path and
                 click.get_current_context().get_parameter_source(name) == click.core.ParameterSource.COMMANDLINE]:
        raise click.UsageError(f"{' and '.join(stray)}: only with --set (a frozen set's split, its contract)")
    from evalset.io.runtext import read_ahead
    read_ahead(runs, rank=reads_ranks(contract.ties))
    from evalset.evaluation import Evaluation
    if set_path:
        return Evaluation.on_set(set_path, split, contract, override_contract=override_contract)
    return Evaluation.on_qrels(qrels_path, contract)
