"""The ``evalset`` command line: the click group, the error contract, and one short module per command.

A command module parses its options, makes one library call and prints with a library formatter; it holds
no statistics and no policy. Commands are loaded when they are run or listed, and a command imports the
library (pandas, numpy, scipy, ...) inside its function, so ``evalset --help`` starts in about 0.1 s.

Errors (see :mod:`evalset.errors`): an :class:`~evalset.errors.InputError` (bad input) or a
:class:`~evalset.errors.ServiceError` (Label Studio, an LLM endpoint, a disk) is one line on stderr and exit 2
(``--debug`` shows its traceback); anything else is a bug and keeps its traceback (exit 1). click's own usage
errors stay as click prints them (exit 2). Ctrl-C is one line ``evalset: interrupted`` and exit 130. Every path
option and argument of a command refuses an empty or blank value, naming itself (:class:`_GivenPath`).
"""

from __future__ import annotations

import contextlib
import copy
import functools
import gc
import importlib
import os
import sys
from typing import NamedTuple

import click

from evalset import __version__
from evalset.cli import interrupt, vocabulary
from evalset.errors import InputError, ServiceError

INTERRUPTED = 130
"""The exit status of a command interrupted by Ctrl-C (SIGINT): 128 + 2, as shells report it."""



class Entry(NamedTuple):
    """Where a command lives (``evalset.cli.MODULE``, its function), its one-line summary in ``evalset --help``,
    an example on the data the repo ships, and the page that documents it."""

    module: str
    function: str
    summary: str
    example: str
    page: str


# in pipeline order, which is the order `evalset --help` lists them in
COMMANDS = {
    "sample": Entry("sample", "sample", "Draw a stratified sample of queries from query logs into queries.tsv.",
                    "evalset sample data/querylog/excite-small.log -l header=no -l query=3 -l user_id=1 "
                    "--per-stratum 20 -o queries.tsv", "docs/sample.md"),
    "pool": Entry("pool", "pool_command", "Pool the top k of several runs into blind judging pairs.",
                  "evalset pool --spec pools/dl19-demo.toml -o pool", "docs/pool.md"),
    "push": Entry("labelstudio", "push_command", "Push a pool's judging tasks to a Label Studio project.",
                  "evalset push pool --guideline guidelines/relevance-v2.md --project \"DL19 pool\" --overlap 2",
                  "docs/labelstudio.md"),
    "pull": Entry("labelstudio", "pull_command", "Pull a Label Studio project's annotations into a labels table.",
                  "evalset pull --project \"DL19 pool\" --pool pool --guideline guidelines/relevance-v2.md "
                  "-o labels.tsv", "docs/labelstudio.md"),
    "judge": Entry("judge", "judge_group",
                   "Grade a pool with an LLM (OpenAI-compatible endpoint); probe and recheck the judge.",
                   "evalset judge pool --guideline guidelines/relevance-v2.md --model MODEL -o llm-labels.tsv",
                   "docs/judge.md"),
    "agreement": Entry("agreement", "agreement_command",
                       "Agreement of annotators and LLM judges, and of their rankings.",
                       "evalset agreement data/dl19/nist.qrels data/dl19/llm_labels/*.qrels --human nist "
                       "--guideline guidelines/relevance-v2.md", "docs/agreement.md"),
    "freeze": Entry("freeze", "freeze_group", "Freeze labels into a versioned, read-only set; grow it by its holes.",
                    "evalset freeze data/dl19/nist.qrels --queries data/dl19/topics.tsv "
                    "--guideline guidelines/relevance-v2.md --name dl19", "docs/freeze.md"),
    "verify": Entry("sets", "verify", "Check every file of a frozen set version against its manifest.",
                    "evalset verify sets/dl19/v1", "docs/freeze.md"),
    "diff": Entry("sets", "diff", "Judgments added, removed and changed between two set versions.",
                  "evalset diff sets/dl19/v1 sets/dl19/v2 --runs data/dl19/runs", "docs/freeze.md"),
    "score": Entry("score", "score", "Score runs against qrels or a frozen set.",
                   "evalset score --qrels data/dl19/nist.qrels data/dl19/runs -m ndcg@10 -m ap@100", "docs/score.md"),
    "compare": Entry("compare", "compare", "Compare candidate runs against a baseline, per query, with a verdict.",
                     "evalset compare --set sets/dl19/v1 data/dl19/runs/bm25base_p.run.gz "
                     "data/dl19/runs/idst_bert_p1.run.gz", "docs/compare.md"),
    "explain": Entry("explain", "explain", "Why each query moved between a baseline and candidates (no test made).",
                     "evalset explain --qrels data/dl19/nist.qrels data/dl19/runs/bm25base_p.run.gz "
                     "data/dl19/runs/idst_bert_p1.run.gz --top 5", "docs/compare.md"),
    "holes": Entry("holes", "holes", "The unjudged documents that could flip a comparison, as a pool to judge.",
                   "evalset holes --qrels data/dl19/nist.qrels data/dl19/runs/bm25base_p.run.gz "
                   "data/dl19/runs/idst_bert_p1.run.gz --depth 30 -o holes", "docs/compare-holes.md"),
    "reusability": Entry("reusability", "reusability_command",
                         "Leave each run (group) out of the pool: what a new system would lose to the holes.",
                         "evalset reusability --qrels data/dl19/nist.qrels data/dl19/runs --depth 10 "
                         "--groups data/dl19/run_metadata.tsv --run-column runid --group-column participant",
                         "docs/reusability.md"),
    "estimate": Entry("estimate", "estimate", "Means and differences from LLM grades plus a human sample.",
                      "evalset estimate validate slice data/dl19/runs --human data/dl19/nist.qrels "
                      "--llm data/dl19/llm_labels/llama-3-70b.fourprompts.qrels --resamples 1000 --size 10",
                      "docs/estimate.md"),
    "plan": Entry("plan", "plan_group", "How many queries a comparison needs (power); what judging costs (cost).",
                  "evalset plan power --set sets/dl19/v1 data/dl19/runs/bm25base_p.run.gz "
                  "data/dl19/runs/bm25tuned_p.run.gz", "docs/plan.md"),
    "report": Entry("report", "report_command", "Write a self-contained HTML report of a frozen set and its runs.",
                    "evalset report sets/dl19/v1 data/dl19/runs -o report.html", "docs/report.md"),
}


class _Group(click.Group):
    """Loads each command from its module when it is needed; prints user and service errors as one line."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return [*COMMANDS, *sorted(set(self.commands) - set(COMMANDS))]

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name not in COMMANDS:
            return super().get_command(ctx, name)  # a command added with add_command
        entry = COMMANDS[name]
        command = getattr(importlib.import_module(f"evalset.cli.{entry.module}"), entry.function)
        command.short_help = entry.summary
        command.epilog = f"\b\nExample:\n  {entry.example}\n\nSee {entry.page}."
        return _refusing_blank_paths(command)

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        ctx.meta["evalset.stdin_uses"] = sum(arg in ("-", "/dev/stdin") for arg in args)  # refused in invoke
        return super().parse_args(ctx, args)

    def invoke(self, ctx: click.Context):
        try:
            _refuse_stdin_twice(ctx.meta.get("evalset.stdin_uses", 0))
            result = super().invoke(ctx)
            sys.stdout.flush()
            return result
        except BrokenPipeError:
            # the reader of stdout closed it (`evalset pool ... | head -1`): not an error of ours; files are written
            # before the lines that report them, so nothing is lost. Python's advice (the docs on SIGPIPE): point
            # stdout at devnull so that the flush at exit does not fail again.
            with contextlib.suppress(OSError, ValueError):
                os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            sys.exit(0)
        except (InputError, ServiceError, click.UsageError) as exc:
            if ctx.params.get("debug"):
                raise
            # a command's usage error is one line too (click's would be four), naming the option
            message = (vocabulary.moved(exc) or exc.format_message()) if isinstance(exc, click.UsageError) else exc
            click.echo(f"evalset: error: {message}", err=True)
            sys.exit(2)
        except KeyboardInterrupt as exc:
            # Ctrl-C: not a bug (exit 1) nor click's "Aborted!"; the status shells use for SIGINT, no traceback.
            # Files are written atomically, so an interrupted command leaves no half-written output.
            with contextlib.suppress(OSError, ValueError):
                sys.stdout.flush()
            said = f": {exc.args[0]}" if exc.args and isinstance(exc.args[0], str) else ""  # what a run can resume
            click.echo(f"evalset: interrupted{said}", err=True)
            sys.exit(INTERRUPTED)
        finally:
            files = sys.modules.get("evalset.io.files")  # loaded only by a command that read a file
            if files is not None:
                files.remove_copies()  # the copies of stdin and pipes read by this command


class _GivenPath(click.Path):
    """A path option or argument that refuses an empty or blank value, naming itself: read, such a path names no
    file; written, it would be the current folder."""

    def convert(self, value, param, ctx):
        if isinstance(value, str) and not value.strip():
            shown = param.opts[0] if isinstance(param, click.Option) else (param.metavar or param.name.upper())
            raise click.UsageError(f"{shown.strip('[].')}: an empty path names no file; give a path", ctx)
        return super().convert(value, param, ctx)


@functools.cache
def _given(path_type: type) -> type:
    """``path_type`` (``click.Path`` or a subclass, such as the guideline's) refusing a blank value first."""
    return _GivenPath if path_type is click.Path else type(f"Given{path_type.__name__}", (_GivenPath, path_type), {})


def _refusing_blank_paths(command: click.Command) -> click.Command:
    """``command`` (and the commands of a group) with every ``click.Path`` parameter (a subclass's too) refusing a
    blank value (:class:`_GivenPath`)."""
    for param in command.params:
        if isinstance(param.type, click.Path) and not isinstance(param.type, _GivenPath):
            param.type = copy.copy(param.type)
            param.type.__class__ = _given(type(param.type))
    for subcommand in getattr(command, "commands", {}).values():
        _refusing_blank_paths(subcommand)
    return command


def _refuse_stdin_twice(uses: int) -> None:
    """Refuse stdin given as two inputs (``--qrels - -``): it can be read once."""
    if uses > 1:
        raise InputError("stdin can be read once: only one input can be `-` (or /dev/stdin) in one command")


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, prog_name="evalset")
@click.option("--debug", is_flag=True, help="Show the full traceback on errors.")
def main(debug: bool) -> None:
    """Build search evaluation sets the way TREC does, and score rankers on them honestly.

    Stages: sample -> pool -> push/pull and judge -> agreement -> freeze -> score/compare.
    """


def run() -> None:
    """The ``evalset`` program: :func:`main` in a process that ends with the command (tests call ``main``).

    Three settings for a process that lives for one command. Measured 2026-12-02 on a command's start of about
    1.1 s CPU: numpy's BLAS starts one thread per core that spins idle for about 0.1 s of CPU, while a command's
    matrix products are small (a user's ``OPENBLAS_NUM_THREADS`` is kept); and the cyclic garbage collector walks
    the ~500k objects the imports make again and again (0.1 s), then every object once more at exit only for the
    process to free them (45 ms): young objects are collected every 10,000 allocations instead of 700, and all
    objects are frozen before exit. Measured 2026-12-06 (``perf``, ``evalset score`` on 10M lines): where the
    kernel backs memory with 2 MiB pages (numpy and arrow's allocator ask for them), each page a block of the run
    touches afresh is zeroed whole, a third of the command's CPU (sys 1.1-1.8 s, varying with the machine's
    memory), so the process asks for small pages (:func:`_small_pages`): sys 0.4 s, 8% less wall time.
    """
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    _small_pages()
    gc.set_threshold(10_000, 10, 10)
    interrupt.install()  # Ctrl-C never inside an import (see evalset.cli.interrupt)
    try:
        main()
    finally:
        gc.freeze()


_PR_SET_THP_DISABLE = 41  # <linux/prctl.h>


def _small_pages() -> None:
    """No transparent huge pages for this process (Linux's ``prctl``; elsewhere, or refused, nothing changes)."""
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):
            import ctypes

            ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_THP_DISABLE, 1, 0, 0, 0)
