"""Every command's options, driven with hostile values: no traceback, one line naming the option, no file harmed.

For every leaf command of ``evalset`` (read from the registry, :data:`evalset.cli.COMMANDS`, and its groups), a
base invocation that succeeds on tiny real data (six DL19 queries, three runs, a pool, two versions of a frozen
set, a slice; built once for the module) has one or two of its options (or arguments) replaced by hostile values
chosen from the option's click type: numbers that are negative, zero, huge, not a number or no number at all;
an empty or unknown choice; paths that are empty, the working folder or its parent, one of the command's inputs,
a path inside an input folder or inside a frozen set's folder, a file that does not exist, stdin; empty, blank
and very long strings; a flag switched on. Each case runs in its own copy of the data, as the working folder.

The property, for each case:

- the exit status is 0 or 2 (verify also has its documented 1 and 3), never a traceback: ``result.exception``
  is None or a SystemExit;
- a refusal (2) prints exactly one line, ``evalset: error: ...``, that names what it refuses
  (:func:`names_refused`): the option or argument by its flag or name (``--seed`` or ``'--seed'``), a path's or a
  string's value as given (``nist.qrels:3: ...``, ``unknown measure 'x'``), or, refusing a combination, the other
  option given; a refusal that is the service's (the Label Studio and LLM endpoint commands run against a
  loopback server that refuses every request) is the base invocation's own line;
- no file changes, appears or disappears in the case's folder (the working folder and its parent) but the
  outputs the command declares (its ``-o``, ``--plot``... and the files beside them that it
  documents), and those only when it exited 0.

The cases run per command are printed at the end of the run (tests/conftest.py, "fuzzing the command line").
"""

from __future__ import annotations

import contextlib
import gzip
import hashlib
import json
import os
import re
import shutil
import signal
import stat
import subprocess
import threading
from collections import Counter
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import click
import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from evalset.cli import COMMANDS, main
from evalset.cli.ruled import RuleType
from tests.conftest import PROPERTY_EXAMPLES, PROPERTY_PROFILE, REPO

pytestmark = pytest.mark.slow

DL19 = REPO / "data" / "dl19"
RUNS = ("ICT-BERT2", "bm25base_p", "p_bert")
QUERIES = 6
EXAMPLES = PROPERTY_EXAMPLES[PROPERTY_PROFILE] * 5 // 2
"""Cases a command (100 on the full profile): most hostile values are refused while parsing (a few ms), a case
that runs is 0.05 to 0.5 s (a report): about a minute and a half for the 19 commands on this project's 2 cores."""
CASE_SECONDS = 30
"""A case running longer than this is a finding (a hostile count that makes a command work forever)."""
SERVER = "http://127.0.0.1:{port}"
"""The loopback server every Label Studio and LLM endpoint command talks to: it refuses every request (HTTP 401),
so a command that gets that far ends at once with one line, exit 2 (a dead port would cost seconds a case: the
endpoint check and Label Studio's client try a refused connection again after waits of their own)."""


# ------------------------------------------------------------------------------------------------ the commands
def leaf_commands() -> dict[str, click.Command]:
    """Every command a user can run, by its words (``judge probe``): the registry's commands, the subcommands of
    its groups."""
    ctx = click.Context(main)
    leaves: dict[str, click.Command] = {}

    def walk(words: str, command: click.Command) -> None:
        if not isinstance(command, click.Group) or command.invoke_without_command:
            leaves[words] = command
        if isinstance(command, click.Group):
            for name in command.list_commands(ctx):
                walk(f"{words} {name}", command.get_command(ctx, name))

    for name in COMMANDS:
        walk(name, main.get_command(ctx, name))
    return leaves


TWO_RUNS = "runs/ICT-BERT2.run.gz runs/bm25base_p.run.gz"


@dataclass(frozen=True)
class Base:
    """A command's base invocation (``{server}`` is the refusing server's URL), the parameters whose values are
    its outputs, and the statuses it documents besides 0 and 2."""

    args: str
    outputs: tuple[str, ...] = ()
    statuses: frozenset[int] = field(default_factory=frozenset)
    service: bool = False
    """It asks a service (the refusing server): its base invocation ends with the service's one-line refusal."""


BASES = {
    "sample": Base("excite.log -l header=no -l query=3 -l user_id=1 --per-stratum 5 -o queries.tsv", ("output",)),
    "pool": Base("runs -k 2 --queries topics.tsv --corpus passages.jsonl.gz -o new-pool", ("output",)),
    "push": Base("pool --guideline guideline.md --project proj --url {server}", service=True),
    "pull": Base("--project p --pool pool --guideline guideline.md -o labels.tsv --url {server}",
                 ("output", "gold_report"), service=True),
    "judge grade": Base("pool --guideline guideline.md --model m -o llm.tsv --base-url {server}/v1 -s max_retries=0",
                        ("output", "journal_path", "failures_path"), service=True),
    "judge probe": Base("pool --guideline guideline.md --human nist.qrels --model m -o probe.json "
                        "--base-url {server}/v1 -s max_retries=0", ("output", "journal_path", "failures_path"),
                        service=True),
    "judge recheck": Base("llm/flan.qrels llm/llama.qrels --human nist.qrels --resamples 50 -o recheck.txt",
                          ("output",)),
    "judge ensemble": Base("llm/flan.qrels llm/llama.qrels --human nist.qrels -o ensemble.tsv", ("output",)),
    "agreement": Base("nist.qrels llm/flan.qrels llm/llama.qrels --human nist --resamples 20 -o agreement",
                      ("output",)),
    "freeze set": Base("nist.qrels --queries topics.tsv --guideline guideline.md --name new", ("sets_dir",)),
    "freeze grow": Base("holes.qrels --sample holes-sample"),
    "verify": Base("sets/dl19/v1", statuses=frozenset({1, 3})),  # FAILED, UNVERIFIED
    "diff": Base("sets/dl19/v1 sets/dl19/v2 --runs runs"),
    "score": Base("--qrels nist.qrels runs -m ndcg@10"),
    "compare": Base(f"--qrels nist.qrels {TWO_RUNS} --permutations 200"),
    "explain": Base(f"--qrels nist.qrels {TWO_RUNS} --top 2"),
    "holes": Base(f"--qrels nist.qrels {TWO_RUNS} --depth 30 --permutations 200 -o new-holes", ("output",)),
    "reusability": Base("--qrels nist.qrels runs -k 3", ("plot",)),
    "estimate run slice": Base("runs --llm llm/llama.qrels --human slice-human.qrels --slice slice"),
    "estimate run documents": Base("runs --sample doc-sample --human doc-sample.qrels --llm pool-llm.qrels"),
    "estimate run holes": Base(f"{TWO_RUNS} --set sets/dl19/v2 --sample holes-sample --human holes.qrels --no-llm"),
    "estimate run set": Base("runs --set sets/part/v1"),
    "estimate validate slice": Base("runs --human nist.qrels --llm llm/llama.qrels --resamples 3 --size 3"),
    "estimate validate documents": Base("runs --human nist.qrels --llm llm/llama.qrels --resamples 2 --budget 40"),
    "estimate validate holes": Base("runs --set sets/dl19/v1 --groups groups.tsv --no-llm --resamples 2 --fraction 50% "
                                    "--depth 3"),
    "estimate select slice": Base("pool --size 3 -o new-slice", ("output",)),
    "estimate select documents": Base("pool --budget 60% -o new-sample", ("output",)),
    "estimate select holes": Base("holes --set sets/dl19/v2 --budget 50% -o new-holes-sample", ("output",)),
    "plan power": Base(f"--qrels nist.qrels {TWO_RUNS} --resamples 20 --permutations 20 --sizes 4,8", ("plot",)),
    "plan cost": Base(f"{TWO_RUNS} -k 5 --n-queries 100"),
    "report": Base("sets/dl19/v1 runs -o report.html --resamples 50 --permutations 50", ("output",)),
}


@dataclass(frozen=True)
class Output:
    """A path a command may write: a file, or a folder (with everything under it; only new files when ``new``);
    ``kept`` when the service refuses the job too (a judging job's journal: the answers so far)."""

    path: str
    new: bool = False
    kept: bool = False


def declared_outputs(words: str, values: dict[str, object]) -> list[Output]:
    """The paths a command may write, from its option values: the outputs its options name, and the files it
    documents beside them."""
    paths = [Output(str(value)) for name in BASES[words].outputs for value in _listed(values.get(name))]
    if words == "sample":
        from evalset.sampling import manifest_path
        paths += [Output(manifest_path(output.path)) for output in paths]
    if words in ("judge grade", "judge probe") and Path(str(values["output"])).name:  # (else refused by click)
        from evalset.judge import job, probing
        journal, failures = (job if words == "judge grade" else probing).default_paths(values["output"])
        paths += [Output(str(values.get("journal_path") or journal), kept=True),  # opened before the endpoint
                  Output(str(values.get("failures_path") or failures))]
    if words == "freeze set":  # a new version in sets-dir/NAME, listed in its versions.tsv
        folder = Path(str(values.get("sets_dir", "sets")), str(values.get("name")))
        paths = [Output(str(folder / "versions.tsv")), Output(str(folder), new=True)]
    if words == "freeze grow":  # the next version of the set the holes were drawn for
        paths = [Output("sets/dl19/versions.tsv"), Output("sets/dl19", new=True)]
    if words in ("compare", "holes") and values.get("set_path"):  # every comparison on a set is added to its log
        paths.append(Output(str(Path(str(values["set_path"])).parent / "comparisons.jsonl")))
    return paths


def _listed(value) -> list:
    return [] if value is None or value is True else list(value) if isinstance(value, list | tuple) else [value]


# ------------------------------------------------------------------------------------- parsing a base invocation
def parse_base(command: click.Command, args: list[str]) -> dict[str, object]:
    """A base invocation's words as values by parameter name: a string, a list (a repeatable option or an
    argument of many values), or the flag as given."""
    by_flag = {flag: param for param in command.params if isinstance(param, click.Option)
               for flag in (*param.opts, *param.secondary_opts)}
    values: dict[str, object] = {}
    positional: list[str] = []
    words = iter(args)
    for word in words:
        param = by_flag.get(word)
        if param is None:
            positional.append(word)
        elif param.is_flag:
            values[param.name] = word
        elif param.multiple:
            values.setdefault(param.name, []).append(next(words))
        else:
            values[param.name] = next(words)
    arguments = [param for param in command.params if isinstance(param, click.Argument)]
    for index, param in enumerate(arguments):
        if param.nargs == 1:
            if positional:
                values[param.name] = positional.pop(0)
        else:
            later = sum(1 for other in arguments[index + 1:] if other.nargs == 1)
            taken, positional = positional[:len(positional) - later], positional[len(positional) - later:]
            values[param.name] = taken
    assert not positional, f"{args}: words left over: {positional}"
    return values


def command_line(words: str, command: click.Command, values: dict[str, object]) -> list[str]:
    """The words a user types for ``values``: the options, then ``--`` and the arguments (so that an argument
    starting with ``-`` is read as one)."""
    line = words.split()
    arguments: list[str] = []
    for param in command.params:
        value = values.get(param.name)
        if value is None:
            continue
        if isinstance(param, click.Argument):
            arguments += _listed(value)
        elif param.is_flag:
            line.append(value if isinstance(value, str) else param.opts[0])
        else:
            for one in _listed(value):
                line += [param.opts[0], one]
    return [*line, "--", *arguments] if arguments else line


def names_of(param: click.Parameter) -> list[str]:
    """How a message may name a parameter: an option's flags; an argument's name and metavar (``POOL_DIR``,
    ``RUN`` of ``[RUN]...``)."""
    if isinstance(param, click.Option):
        return [*param.opts, *param.secondary_opts]
    return sorted({param.name.upper(), param.human_readable_name.strip("[]."),
                   (param.metavar or "").replace("[", "").replace("]", "").strip(".")} - {""})


def _word(name: str, text: str, flags: int = 0) -> bool:
    return re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", text, flags) is not None


def _about(subject: str | None, path: str) -> bool:
    """``subject`` (the path a refusal is about) is ``path``, or a file in the folder ``path``."""
    if subject is None:
        return False
    subject, path = os.path.normpath(subject.split(":")[0]), os.path.normpath(path)
    return subject == path or os.path.normpath(os.path.dirname(subject) or ".") == path


def names_refused(line: str, chosen: list[click.Parameter], values: dict[str, object],
                  command: click.Command) -> bool:
    """Whether a refusal names what it refuses: one of the ``chosen`` parameters by its flag, or an argument by its
    name (in prose too: ``the labels`` for LABELS); for a path or a free string, also by its value as given:
    quoted (``unknown measure 'x'``), or, not blank, as a word or as the file the line is about (an input file's
    refusal is ``PATH:LINE: message``, docs/architecture.md, and PATH may be a file in the folder given). A
    refusal of a combination, a fuzzed value that is fine alone but contradicts another option given, names that
    option (``--human 'nist' names no annotator``). Numbers, choices and flags are named by their
    flag alone, as click names them (``Invalid value for '--seed'``)."""
    message = line.removeprefix("evalset: error: ")
    subject = message.split(": ", 1)[0] if ": " in message else None  # PATH of ``PATH:LINE: message``
    for param in chosen:
        if any(_word(name, message) for name in names_of(param)):
            return True
        if isinstance(param, click.Argument) and any(_word(name.lower(), message, re.IGNORECASE)
                                                     for name in names_of(param)):
            return True
        if kind_of(param) not in ("path", "string"):
            continue
        for value in map(str, _listed(values.get(param.name))):
            if any(f"{quote}{shown}{quote}" in message for quote in "'\"" for shown in (value, value.strip())):
                return True
            if value == "-" and message.startswith("<stdin>"):  # stdin is named so (io/files.local_file)
                return True
            if value.strip() and (_word(value, message) or (kind_of(param) == "path" and _about(subject, value))):
                return True
    return any(_word(flag, message) for param in command.params if isinstance(param, click.Option)
               and param not in chosen and values.get(param.name) is not None for flag in param.opts)


# ----------------------------------------------------------------------------------------------- hostile values
NUMBERS = ["-1", "0", "-0", "1e309", "nan", "inf", "-inf", "99999999999999999999", "", " ", "x", "1.5"]
STRINGS = ["", " ", "x", "-1", "0", "nan", ":", "a:b", ",", "=", "%", "é∞", "x" * 4000]
DATES = ["", " ", "x", "0", "-1", "9999-99-99", "2020-02-30", "1e309"]
FOLDERS_OF_A_SET = ["sets/dl19", "sets/dl19/", "sets/dl19/versions.tsv", "sets/dl19/comparisons.jsonl",
                    "sets/dl19/v1", "sets/dl19/v1/x", "sets/dl19/v1/qrels.txt"]
ELSEWHERE = ["", " ", ".", "..", "-", "missing/none.tsv", "none.tsv", "runs", "runs/x", "pool", "pool/x",
             "pool/pool.tsv", "nist.qrels", "guideline.md"]


def path_values(base: dict[str, object], command: click.Command, inputs: Path, work: Path) -> list[str]:
    """Paths for any path option: nowhere, the working folder and its parent, the command's inputs and paths
    inside its input folders, a frozen set's folder and what lies in it, files that do not exist."""
    given = sorted({str(value) for param in command.params if isinstance(param.type, click.Path)
                    for value in _listed(base.get(param.name)) if (inputs / str(value)).exists()})
    inside = [f"{value}/x" for value in given if (inputs / value).is_dir()]
    return list(dict.fromkeys([*ELSEWHERE, str(work), str(work.parent), *given, *inside, *FOLDERS_OF_A_SET]))


def kind_of(param: click.Parameter) -> str:
    """What a parameter takes, by its click type: a flag, a choice, a path, a number, a date or a free string."""
    kind = param.type
    if isinstance(param, click.Option) and param.is_flag:
        return "flag"
    if isinstance(kind, click.Choice):
        return "choice"
    if isinstance(kind, click.Path):
        return "path"
    if isinstance(kind, click.types.IntParamType | click.types.FloatParamType | RuleType):
        return "number"
    return "date" if isinstance(kind, click.DateTime) else "string"


def hostile(param: click.Parameter, paths: list[str]) -> st.SearchStrategy:
    """The hostile values of a parameter, by what it takes."""
    kind = kind_of(param)
    if kind == "flag":
        return st.sampled_from([param.opts[0], *param.secondary_opts])
    if kind == "choice":
        return st.sampled_from(["", "nonesuch", str(param.type.choices[0]).upper()])
    return st.sampled_from({"path": paths, "number": NUMBERS, "date": DATES, "string": STRINGS}[kind])


# ---------------------------------------------------------------------------------------------------- the data
def build_inputs(root: Path) -> None:
    """Six DL19 queries: their topics, NIST's and two LLM judges' qrels, three runs cut to them, the passages they
    name, the Excite log, the guideline; then (by the command line) a pool, a frozen set of two versions
    (``sets/dl19/v1``, ``v2`` with LLM labels beside), a slice of three queries with the humans' grades of it (and
    the set ``part`` of them with the LLM's labels of the rest), a document sample of the pool (``doc-sample``), a
    sample of half the holes of v2 in two runs' top 30 (``holes-sample``), grades of the drawn pairs and the LLM's
    of the pool (made up), and each run's group."""
    topics = (DL19 / "topics.tsv").read_text().splitlines(keepends=True)[:QUERIES]
    queries = {line.split("\t")[0] for line in topics}
    (root / "topics.tsv").write_text("".join(topics))
    (root / "llm").mkdir()
    judged = _cut(DL19 / "nist.qrels", root / "nist.qrels", queries)
    _cut(DL19 / "llm_labels" / "llama-3-70b.fourprompts.qrels", root / "llm" / "llama.qrels", queries)
    _cut(DL19 / "llm_labels" / "flan-t5-large.fourprompts.qrels", root / "llm" / "flan.qrels", queries)
    documents = {line.split()[2] for line in judged}
    (root / "runs").mkdir()
    for name in RUNS:
        with gzip.open(DL19 / "runs" / f"{name}.run.gz", "rt") as lines:
            kept = [line for line in lines if line.split()[0] in queries]
        documents |= {line.split()[2] for line in kept}
        with gzip.open(root / "runs" / f"{name}.run.gz", "wt") as out:
            out.writelines(kept)
    with gzip.open(DL19 / "passages.jsonl.gz", "rt") as lines, gzip.open(root / "passages.jsonl.gz", "wt") as out:
        out.writelines(line for line in lines if json.loads(line)["doc_id"] in documents)
    shutil.copy(REPO / "data" / "querylog" / "excite-small.log", root / "excite.log")
    shutil.copy(REPO / "guidelines" / "relevance-v2.md", root / "guideline.md")
    with contextlib.chdir(root):
        for line in ("pool runs -k 3 --queries topics.tsv --corpus passages.jsonl.gz -o pool",
                     "freeze nist.qrels --queries topics.tsv --guideline guideline.md --name dl19",
                     "freeze nist.qrels --llm llm/llama.qrels --queries topics.tsv --guideline guideline.md "
                     "--name dl19",
                     "estimate select slice pool --size 3 --seed 3 -o slice",
                     "estimate select documents pool --budget 60% --seed 1 -o doc-sample",
                     f"holes --set sets/dl19/v2 {TWO_RUNS} --depth 30 -o holes --exploratory",
                     "estimate select holes holes --set sets/dl19/v2 --budget 50% --seed 1 -o holes-sample"):
            result = CliRunner().invoke(main, line.split())
            assert result.exit_code == 0, (line, result.output)
    sliced = set(json.loads((root / "slice" / "slice.json").read_text())["slice"])
    _cut(root / "nist.qrels", root / "slice-human.qrels", sliced)
    with contextlib.chdir(root):
        result = CliRunner().invoke(main, ["freeze", "slice-human.qrels", "--llm", "llm/llama.qrels", "--queries",
                                           "topics.tsv", "--guideline", "guideline.md", "--name", "part"])
        assert result.exit_code == 0, result.output
    for folder, qrels in (("doc-sample", "doc-sample.qrels"), ("pool", "pool-llm.qrels")):
        pairs = [line.split("\t")[1:3] for line in (root / folder / "pool.tsv").read_text().splitlines()[1:]]
        (root / qrels).write_text("".join(f"{query} 0 {doc} {index % 3}\n" for index, (query, doc) in
                                          enumerate(pairs)))
    (root / "groups.tsv").write_text("run\tgroup\n" + "".join(f"{name}\t{name[:3]}\n" for name in RUNS))
    drawn = [line.split("\t")[1:3] for line in (root / "holes-sample" / "pool.tsv").read_text().splitlines()[1:]]
    (root / "holes.qrels").write_text("".join(f"{query} 0 {doc} {index % 3}\n" for index, (query, doc) in
                                              enumerate(drawn)))


def _cut(source: Path, target: Path, queries: set[str]) -> list[str]:
    lines = [line for line in source.read_text().splitlines(keepends=True) if line.split()[0] in queries]
    target.write_text("".join(lines))
    return lines


class _Refusing(BaseHTTPRequestHandler):
    """Answers every request with HTTP 401, as a server refusing the key does."""

    def refuse(self) -> None:
        body = json.dumps({"detail": "refused", "error": {"message": "refused", "type": "invalid_request_error",
                                                          "code": "invalid_api_key"}}).encode()
        self.send_response(401)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = refuse

    def log_message(self, *args) -> None:
        pass


@pytest.fixture(scope="module")
def server():
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Refusing)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield SERVER.format(port=httpd.server_address[1])
    httpd.shutdown()
    httpd.server_close()


@pytest.fixture(scope="module")
def inputs(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("fuzz-inputs") / "work"
    root.mkdir()
    build_inputs(root)
    return root


# --------------------------------------------------------------------------------------------------- one case
class CaseTimeout(BaseException):
    """A case ran longer than CASE_SECONDS (a BaseException: no ``except Exception`` of the code under test hides
    it, and CliRunner lets it through)."""


def snapshot(folder: Path) -> dict[str, str]:
    """sha256 of every file under ``folder`` (a link: where it points), by path."""
    found = {}
    for path in sorted(folder.rglob("*")):
        if path.is_symlink():
            found[str(path)] = "-> " + os.readlink(path)
        elif path.is_file():
            found[str(path)] = hashlib.sha256(path.read_bytes()).hexdigest()
        elif path.is_dir():
            found[str(path)] = "folder"
    return found


def remove(folder: Path) -> None:
    """Remove a case's folder, frozen set versions (read-only) included."""
    for path in folder.rglob("*"):
        if path.is_dir() and not path.is_symlink():
            path.chmod(path.stat().st_mode | stat.S_IWUSR | stat.S_IXUSR)
    shutil.rmtree(folder)


@dataclass
class Outcome:
    status: int
    output: str
    exception: BaseException | None
    changed: list[str]


def run_case(line: list[str], case: Path, outputs: list[Output], env: dict, service_line: str | None = None
             ) -> Outcome:
    """Run ``line`` in ``case/work`` and list the paths under ``case`` that changed without being outputs (an
    output: when the command exited 0, or one ``kept`` when it ended with ``service_line``)."""
    work = case / "work"
    before = snapshot(case)

    def expire(signum, frame):
        raise CaseTimeout(f"over {CASE_SECONDS} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.alarm(CASE_SECONDS)
    try:
        with contextlib.chdir(work):
            result = CliRunner(env=env).invoke(main, line)
        status, output, exception = result.exit_code, result.output, result.exception
    except CaseTimeout as timeout:
        status, output, exception = -1, "", timeout
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
    after = snapshot(case)
    written = [out for out in outputs if not _holds(work / out.path, work)  # never the working folder
               and (status == 0 or (out.kept and output == service_line))]
    allowed = [(os.path.abspath(work / output.path), output.new) for output in written]

    def may_change(path: str, appeared: bool) -> bool:
        return any(((path == out or path.startswith(out + os.sep)) and (appeared or not new))
                   or (appeared and after.get(path) == "folder" and out.startswith(path + os.sep))  # its new folder
                   for out, new in allowed)

    changed = [path for path in sorted(before.keys() | after.keys()) if before.get(path) != after.get(path)
               and not may_change(path, path not in before)]
    return Outcome(status, output, exception, changed)


def _holds(path: Path, folder: Path) -> bool:
    """``path`` is ``folder`` or a folder holding it."""
    real, held = os.path.realpath(path), os.path.realpath(folder)
    return held == real or held.startswith(real.rstrip(os.sep) + os.sep)


# ----------------------------------------------------------------------------------------------- the property
LEAVES = leaf_commands()


def test_every_command_has_a_base_invocation():
    """A new command (or subcommand) is fuzzed too: it needs its base invocation here."""
    assert sorted(LEAVES) == sorted(BASES)


def test_every_base_invocation_succeeds_or_reaches_its_service(inputs, server, tmp_path):
    """The base of every case: it succeeds (or, asking the service, is refused by it in one line) and writes only
    its outputs, so that a case's refusal or change is its hostile values' doing."""
    for words, base in BASES.items():
        command = LEAVES[words]
        values = parse_base(command, base.args.format(server=server).split())
        refusal = service_refusal(words, values, inputs, tmp_path / "base", server) if base.service else None
        case = tmp_path / words.replace(" ", "-")
        shutil.copytree(inputs.parent, case, symlinks=True)
        outcome = run_case(command_line(words, command, values), case, declared_outputs(words, values),
                           _env(server), refusal)
        remove(case)
        if base.service:
            assert outcome.status == 2 and outcome.output == refusal, (words, outcome.output)
            assert refusal.startswith("evalset: error: ") and "401" in refusal, (words, refusal)
        else:
            assert outcome.status == 0, (words, outcome.output, outcome.exception)
        assert outcome.changed == [], (words, outcome.changed)


def service_refusal(words: str, values: dict[str, object], inputs: Path, case: Path, server: str) -> str:
    """What a command that asks the service prints when the service refuses its base invocation."""
    shutil.copytree(inputs.parent, case, symlinks=True)
    try:
        return run_case(command_line(words, LEAVES[words], values), case, [], _env(server)).output
    finally:
        remove(case)


def _env(server: str) -> dict[str, str | None]:
    return {"LABEL_STUDIO_URL": server, "LABEL_STUDIO_API_KEY": "not-a-key", "OPENAI_BASE_URL": f"{server}/v1",
            "OPENAI_API_KEY": "not-a-key", "LABEL_STUDIO_ANNOTATORS": None}


@pytest.mark.parametrize("words", list(BASES))
def test_hostile_option_values_give_exit_0_or_one_line_naming_the_option_and_harm_no_file(
        words, inputs, server, tmp_path, record_property):
    """The property of the module's docstring, on ``settings``' examples of one command."""
    command, base = LEAVES[words], BASES[words]
    env = _env(server)
    base_values = parse_base(command, base.args.format(server=server).split())
    params = [param for param in command.params if param.name != "help"]
    # the service's refusal of the base invocation: a case whose values were all accepted ends so
    service_line = service_refusal(words, base_values, inputs, tmp_path / "base", server) if base.service else None
    counts = Counter()

    @settings(max_examples=EXAMPLES)
    @given(data=st.data())
    def fuzz(data):
        number = counts["cases"]
        case = tmp_path / f"case{number}"
        work = case / "work"
        paths = path_values(base_values, command, inputs, work)
        chosen = data.draw(st.lists(st.sampled_from(params), min_size=1, max_size=2, unique_by=lambda p: p.name),
                           label="options")
        values = dict(base_values)
        for param in chosen:
            values[param.name] = data.draw(hostile(param, paths), label=param.name)
        line = command_line(words, command, values)
        shutil.copytree(inputs.parent, case, symlinks=True)
        try:
            outcome = run_case(line, case, declared_outputs(words, values), env, service_line)
        finally:
            remove(case)
        counts["cases"] += 1
        shown = f"evalset {' '.join(repr(word) if not word or ' ' in word else word for word in line)}"
        assert outcome.status in {0, 2, *base.statuses}, f"{shown}\nexit {outcome.status}: {outcome.exception!r}"
        assert outcome.exception is None or isinstance(outcome.exception, SystemExit), (
            f"{shown}\n{outcome.exception!r}")
        if outcome.status == 2:
            counts["refused"] += 1
            lines = outcome.output.splitlines()
            assert len(lines) == 1 and lines[0].startswith("evalset: error: "), f"{shown}\n{outcome.output}"
            assert outcome.output == service_line or names_refused(lines[0], chosen, values, command), (
                f"{shown}\nthe refusal names none of {[names_of(param) for param in chosen]}: {lines[0]}")
        assert outcome.changed == [], f"{shown}\nexit {outcome.status}, changed: {outcome.changed}"

    fuzz()
    record_property("fuzz", f"{words}: {counts['cases']} cases, {counts['refused']} refused (exit 2), "
                            "0 tracebacks")


# ------------------------------------------------------------------------------------ a hostile file system (issue 74)
# Every base invocation again, on a disk that is full, with the set on a read-only mount, and with a version of the
# set copied beside the outputs (``backup-v1``: a backup, or a set shared by copying): the same property, no
# traceback, exit 0 or one line. The set's commands also on it, and on the copy in place of the set.
ON_THE_SET = {"compare --set": ("compare", f"--set sets/dl19/v1 {TWO_RUNS} --permutations 200"),
              "score --set": ("score", "--set sets/dl19/v1 runs -m ndcg@10")}
ENVIRONMENTS = ("full disk", "read-only set", "copied set")


@contextlib.contextmanager
def mounted(*arguments: str, target: Path):
    """``mount ARGUMENTS TARGET`` for the block (unmounted after); skipped, saying why, where this process may not
    mount (CI and the developers' machines run as root)."""
    done = subprocess.run(["mount", *arguments, str(target)], capture_output=True, text=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount here ({done.stderr.strip()[:120]}): a hostile file system needs root")
    try:
        yield target
    finally:
        subprocess.run(["umount", "-l", str(target)], capture_output=True)


def fill(folder: Path) -> None:
    """Fill the file system of ``folder`` to the last byte."""
    for name, chunk in (("filler", 1 << 16), ("filler-tail", 1)):  # then the last partial block
        handle = open(folder / name, "wb", buffering=0)  # noqa: SIM115 (closing it may fail too: the disk is full)
        with contextlib.suppress(OSError):
            while True:
                handle.write(b"\0" * chunk)
        with contextlib.suppress(OSError):
            handle.close()


@pytest.mark.parametrize("environment", ENVIRONMENTS)
def test_every_command_on_a_full_disk_a_read_only_set_or_a_copied_set_gives_one_line_and_harms_no_file(
        environment, inputs, server, tmp_path, record_property):
    invocations = {words: (words, BASES[words].args) for words in BASES} | ON_THE_SET
    size = sum(path.stat().st_size for path in inputs.parent.rglob("*") if path.is_file()) + (4 << 20)
    counts = Counter()
    for name, (words, args) in invocations.items():
        command = LEAVES[words]
        case = tmp_path / name.replace(" ", "-")
        case.mkdir()
        with contextlib.ExitStack() as stack:
            if environment == "full disk":
                stack.enter_context(mounted("-t", "tmpfs", "-o", f"size={size}", "tmpfs", target=case))
            shutil.copytree(inputs.parent, case, symlinks=True, dirs_exist_ok=True)
            work = case / "work"
            if environment == "copied set":
                shutil.copytree(work / "sets" / "dl19" / "v1", work / "backup-v1")
                args = args.replace("sets/dl19/v1", "backup-v1")
            elif environment == "read-only set":
                stack.enter_context(mounted("--bind", str(work / "sets"), target=work / "sets"))
                subprocess.run(["mount", "-o", "remount,bind,ro", str(work / "sets")], check=True)
            else:
                fill(case)
            values = parse_base(command, args.format(server=server).split())
            outputs = declared_outputs(words, values)
            outcome = run_case(command_line(words, command, values), case, outputs, _env(server),
                               service_line=None)
        remove(case)
        counts[outcome.status] += 1
        shown = f"{environment}: evalset {words} {args}"
        assert outcome.exception is None or isinstance(outcome.exception, SystemExit), f"{shown}\n{outcome.exception!r}"
        assert outcome.status in {0, 2, *BASES[words].statuses}, f"{shown}\nexit {outcome.status}: {outcome.output}"
        if outcome.status == 2:
            lines = outcome.output.splitlines()
            assert len(lines) == 1 and lines[0].startswith("evalset: error: "), f"{shown}\n{outcome.output}"
        if BASES[words].service or environment != "full disk":
            pass  # a service's refusal may leave its journal; the other environments write where they may
        else:
            assert outcome.changed == [] or outcome.status == 0, f"{shown}\nchanged: {outcome.changed}"
        if environment == "read-only set" and name == "compare --set":
            assert "comparisons.jsonl: cannot be written" in outcome.output, outcome.output
        if environment == "copied set" and not BASES[words].service:
            assert outcome.status in {0, *BASES[words].statuses}, f"{shown}\n{outcome.output}"
    record_property("fuzz", f"{environment}: {sum(counts.values())} commands, {counts[2]} refused in one line, "
                            f"{counts[0]} succeeded, 0 tracebacks")
