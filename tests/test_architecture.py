"""The package's layout as a specification (docs/architecture.md): which module may import what, sizes, and which room
alone may do what. Each rule is one test over the whole package that collects every offender and names each one;
the rules that can be run on another copy of the package take its root (the rules' own tests break a copy)."""

import ast
import re
import shutil
import sys
from functools import cache
from pathlib import Path

import pytest

from tests.support.layout import (
    Import,
    called_or_imported,
    cycles,
    imported_names,
    imports,
    map_rooms,
    module_name,
    modules,
    room,
    string_pieces,
)

PACKAGE = Path(__file__).resolve().parent.parent / "evalset"
MAP = PACKAGE.parent / "docs" / "architecture.md"
MODULES = sorted(modules(PACKAGE).values())
# the floors of the house, lowest first: a module imports its own room and the rooms below it, never one above.
# The foundations hold no stage: a stage may use them, they use no stage; each uses only those before it.
FOUNDATIONS = ("errors", "params", "seeds", "contract", "exports", "render", "speed", "io", "metrics", "stats",
               "evaluation")
ROOT_FOUNDATIONS = {"errors", "params", "seeds", "contract", "exports", "render"}  # one module each, at the root
# the stages in pipeline order: a stage may import the foundations and the stages before it, never one after it
STAGES = ("sampling", "pooling", "holes", "judge", "judgments", "agreement", "quality", "labelstudio", "sets",
          "scoring", "comparing", "planning", "estimate", "reusability", "report")
COMMAND_LINE = "cli"  # the top floor: it may import anything; nothing imports it
FLOORS = ("", *FOUNDATIONS, *STAGES, COMMAND_LINE)  # "": the root package (its version), below everything
# evalset behind another library's interface (an ir_measures provider): it may use the foundations, the engine
# among them, since its conventions are that library's; nothing in evalset imports it
ADAPTERS = {"compat"}
MAX_LINES = 450
# the engine's entry points: only the evaluation room (and the metrics module itself) calls them
ENGINE_CALLS = {"evaluate", "evaluate_runs", "evaluate_run_files", "evaluate_file", "evaluate_blocks", "prepare_qrels"}


def name(path: Path) -> str:
    return module_name(PACKAGE, path)


@cache
def tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text())


def offenders(found: dict[str, object]) -> str:
    """Every offender on a line of its own, for an assertion's message."""
    return "\n" + "\n".join(f"  {module}: {what}" for module, what in found.items())


def test_no_module_is_over_450_lines():
    over = {name(path): f"{lines} lines" for path in MODULES
            if (lines := len(path.read_text().splitlines())) > MAX_LINES}
    assert not over, offenders(over)


def test_every_room_is_a_foundation_a_stage_the_command_line_or_an_adapter():
    rooms = {room(name(path)) for path in MODULES} - {""}
    known = set(FOUNDATIONS) | set(STAGES) | {COMMAND_LINE} | ADAPTERS
    assert rooms <= known, rooms - known
    # the package root holds folders and the few foundations that are one module each
    at_root = {room(name(p)) for p in MODULES if len(p.relative_to(PACKAGE).parts) == 1} - {"", COMMAND_LINE}
    assert at_root == ROOT_FOUNDATIONS


# --- what may import what: the import graph (every import, at a module's top or late) runs down the floors only,
# and no two modules import each other (however late)
def floor_breach(edge: Import) -> str | None:
    """Why ``edge`` runs up a floor (or into an adapter), or None."""
    source, target = room(edge.importer), room(edge.imported)
    if source == target:
        return None
    if target in ADAPTERS:
        return "nothing in evalset imports an adapter"
    if source in ADAPTERS:
        return None if target in ("", *FOUNDATIONS) else "an adapter imports the foundations only"
    if source not in FLOORS or target not in FLOORS:
        return "a room on no floor"
    if FLOORS.index(target) < FLOORS.index(source):
        return None
    if target == COMMAND_LINE:
        return "the library imports the command line"
    if source in FOUNDATIONS:
        return "a foundation imports a stage" if target in STAGES else "a foundation imports a foundation above it"
    return "a stage imports a stage after it"


def import_offences(root: Path) -> tuple[list[str], list[list[str]]]:
    """The imports of the package at ``root`` that run up a floor (each with why), and its import cycles (the
    modules of each strongly connected component of the import graph, late imports counted)."""
    edges = imports(root)
    up = [f"{edge}: {why}" for edge in edges if (why := floor_breach(edge))]
    return up, cycles(edges)


@cache
def breaches() -> tuple[str, ...]:
    return tuple(import_offences(PACKAGE)[0])


def test_no_import_runs_up_a_floor_and_no_modules_import_each_other():
    up, loops = import_offences(PACKAGE)
    assert not up, "imports that run up a floor:\n  " + "\n  ".join(up)
    assert not loops, "import cycles (a late import too is an import):\n  " + "\n  ".join(map(" <-> ".join, loops))


def test_the_import_graph_rule_catches_an_up_import_and_a_cycle(tmp_path):
    copy = tmp_path / "evalset"
    shutil.copytree(PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__"))
    with open(copy / "stats" / "proportions.py", "a") as handle:  # a foundation importing a stage
        handle.write("\nfrom evalset.comparing.spec import CompareSpec  # noqa\n")
    with open(copy / "io" / "digests.py", "a") as handle:  # two modules of one room importing each other, one late
        handle.write("\nimport evalset.io.groups  # noqa\n")
    with open(copy / "io" / "groups.py", "a") as handle:
        handle.write("\n\ndef _late():\n    from evalset.io import digests  # noqa\n")
    up, loops = import_offences(copy)
    assert [line for line in up if line.startswith("evalset.stats.proportions")] == [
        f"evalset.stats.proportions (line {len((PACKAGE / 'stats/proportions.py').read_text().splitlines()) + 2}) "
        "imports evalset.comparing.spec: a foundation imports a stage"]
    assert ["evalset.io.digests", "evalset.io.groups"] in loops


def test_a_stage_imports_no_stage_after_it():
    assert not [b for b in breaches() if b.endswith("a stage imports a stage after it")], breaches()


def test_the_foundations_import_no_stage():
    assert not [b for b in breaches() if b.endswith("a foundation imports a stage")], breaches()


def test_the_library_imports_neither_the_command_line_nor_click():
    clicking = {name(path) for path in MODULES if room(name(path)) != COMMAND_LINE
                for node in ast.walk(tree(path)) if isinstance(node, ast.Import | ast.ImportFrom)
                and "click" in ([a.name.split(".")[0] for a in node.names] if isinstance(node, ast.Import)
                                else [(node.module or "").split(".")[0]])}
    assert not clicking, clicking
    assert not [b for b in breaches() if b.endswith("the library imports the command line")], breaches()


def test_an_adapter_uses_only_the_foundations_and_nothing_uses_an_adapter():
    assert not [b for b in breaches() if "adapter" in b], breaches()


FILE_CALLS = {"open", "read_text", "write_text", "read_bytes", "write_bytes", "to_csv", "to_parquet", "savefig",
              "mkdir", "unlink"}


def test_the_statistics_read_and_write_no_file():
    """stats/ computes from the data it is handed: a log or a table it needs is read (and a result written) by its
    caller through evalset.io (the comparison family: evalset.comparing.setlog reads and appends the log)."""
    found = {name(path): sorted(FILE_CALLS & called_or_imported(tree(path))) for path in MODULES
             if room(name(path)) == "stats"}
    found = {module: f"touches files ({', '.join(calls)})" for module, calls in found.items() if calls}
    found |= {edge.importer: f"imports {edge.imported}" for edge in imports(PACKAGE)
              if room(edge.importer) == "stats" and room(edge.imported) == "io"}
    assert not found, offenders(found)


def test_analyses_reach_per_query_values_only_through_the_evaluation_room():
    found = {}
    for path in MODULES:
        if room(name(path)) in ("metrics", "evaluation", *ADAPTERS):
            continue
        called = set()
        for node in ast.walk(tree(path)):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("evalset.metrics"):
                called |= {alias.name for alias in node.names} & ENGINE_CALLS
            elif isinstance(node, ast.Attribute) and node.attr in ENGINE_CALLS:
                called.add(node.attr)
        if called:
            found[name(path)] = f"calls the engine directly ({sorted(called)}): use evalset.evaluation"
    assert not found, offenders(found)


COMMANDS = [p for p in MODULES if room(name(p)) == COMMAND_LINE and p.name not in ("__init__.py", "__main__.py")]
SPEC = re.compile(r"evalset\.[a-z_]+\.spec")
"""A command's settings object (``evalset.<room>.spec``): light, so that a command reads its rules at once."""
SPECS = [p for p in MODULES if SPEC.fullmatch(name(p))]


def test_a_command_module_is_short_and_loads_no_library_until_run():
    light = {"click", "functools", "json", "sys", "pathlib", "__future__", "evalset.contract", "evalset.params",
             "evalset.errors", "signal", "types", "dataclasses", "inspect", "typing"}  # and the cli's, and the specs
    found = {}
    for path in COMMANDS:
        lines = len(path.read_text().splitlines())
        heavy = {imported for imported in imported_names(tree(path), top_level_only=True) if imported not in light
                 and not imported.startswith("evalset.cli.") and not SPEC.fullmatch(imported)}
        if lines >= 150 or heavy:
            found[name(path)] = f"{lines} lines; at its top imports {sorted(heavy)}"
    assert not found, offenders(found)


GUARDS = {"check_outputs", "describe_files_in_background", "read_ahead"}
"""What a command may call besides its one library call: the output guard, and work started while the library loads."""
CALLS_OVER_ONE = {"freeze.grow": 7, "judge.judge_command": 4, "judge_probe.probe_command": 3,
                  "labelstudio.pull_command": 9, "labelstudio.push_command": 8, "pool.pool_command": 3,
                  "reusability.reusability_command": 3, "sample.sample": 6}
"""The commands that still make more than one library call (parsing an option with a library parser, reading inputs,
raising a refusal themselves), and how many, as of issue 75: the count may only fall. A command is parse, one library
call, ``emit``."""


def library_calls(function: ast.FunctionDef) -> list[str]:
    """The calls ``function`` makes to what it imports from the library (not the command line's helpers, not
    :data:`GUARDS`): ``freeze_set(...)``, ``job.judge_pool(...)``, ``InputError(...)``."""
    imported = set()
    for node in ast.walk(function):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("evalset") and \
                not node.module.startswith("evalset.cli"):
            imported.update(alias.asname or alias.name for alias in node.names)
    calls = []
    for node in ast.walk(function):
        if isinstance(node, ast.Call):
            callee = node.func
            root = callee.id if isinstance(callee, ast.Name) else getattr(callee.value, "id", None) if isinstance(
                callee, ast.Attribute) else None
            leaf = callee.id if isinstance(callee, ast.Name) else getattr(callee, "attr", "")
            if root in imported and leaf not in GUARDS:
                calls.append(ast.unparse(callee))
    return calls


def test_a_command_is_parse_one_library_call_and_emit():
    counts = {}
    for path in COMMANDS:
        for function in tree(path).body:
            if isinstance(function, ast.FunctionDef) and any("command" in ast.unparse(decorator)
                                                             for decorator in function.decorator_list):
                counts[f"{path.stem}.{function.name}"] = len(library_calls(function))
    assert len(counts) >= 25
    over = {command: count for command, count in counts.items() if count > CALLS_OVER_ONE.get(command, 1)}
    assert not over, f"commands calling the library more than once (move the work into one library call): {over}"
    assert {command for command, count in counts.items() if count > 1} == set(CALLS_OVER_ONE), "lower the ratchet"


def test_the_command_rule_counts_every_library_call():
    source = ("def freeze(labels):\n    from evalset.io.queries import read_queries\n    from evalset import sets\n"
              "    from evalset.io.outputs import check_outputs\n    check_outputs({}, {})\n"
              "    emit(sets.freeze(read_queries(labels)))\n")
    assert library_calls(ast.parse(source).body[0]) == ["sets.freeze", "read_queries"]


def test_a_spec_loads_only_the_light_foundations_and_its_room_loads_nothing_on_import():
    """A command imports its spec at once (above): the spec may import evalset.contract, params and errors and the
    standard library, and its room's package (imported first) only the lazy exports (evalset.exports)."""
    def heavy(module_path: Path, allowed: set[str]) -> set[str]:
        return {imported for imported in imported_names(ast.parse(module_path.read_text())) if imported not in allowed
                and imported.split(".")[0] not in sys.stdlib_module_names}

    found = {name(path): sorted(heavy(path, {"evalset.contract", "evalset.params", "evalset.errors"})
                                | heavy(path.parent / "__init__.py", {"evalset.exports"})) for path in SPECS}
    assert not {module: loads for module, loads in found.items() if loads}, found


def test_a_packages_lazy_names_are_not_its_modules_names():
    """A lazy export named as a module of its package would be that module once the module is imported (the import
    system sets the attribute): ``from evalset.estimate import simulate`` would depend on what was imported first."""
    import importlib
    import pkgutil

    for path in SPECS:
        package = importlib.import_module(name(path.parent / "__init__.py"))
        package_modules = {info.name for info in pkgutil.iter_modules(package.__path__)}
        assert not set(getattr(package, "__all__", ())) & package_modules, package.__name__


# --- the map (docs/architecture.md): its rooms, their kinds and their floors are the ones these rules use, and each
# rule it lists names a test that exists
RULE_TESTS = re.compile(r"`(test_\w+)`|`(tests/[\w/]+\.py)`")


def named_tests(text: str) -> list[tuple[str, str]]:
    """The (file, test) pairs the map's table of rules names: a test named alone is this file's; a test file named
    stands for its tests (file, "")."""
    section = text.split("## The rules the tests hold")[1].split("\n## ")[0]
    return [("tests/test_architecture.py", test) if test else (file, "") for test, file in RULE_TESTS.findall(section)]


def test_each_rule_of_the_map_names_a_test_that_exists():
    named = named_tests(MAP.read_text())
    root = PACKAGE.parent
    assert len(named) >= 20
    missing = [f"{file}::{test}" for file, test in named if not (root / file).is_file() or (test and not re.search(
        rf"^def {test}\(", (root / file).read_text(), re.MULTILINE))]
    assert not missing, missing
    assert ("tests/test_architecture.py", "test_no_module_is_over_450_lines") in named


def test_the_maps_rooms_and_floors_are_the_ones_the_rules_use():
    rows = map_rooms(MAP.read_text())
    floors = [floor for floor, _, kind in rows if kind != "adapter"]
    assert floors == [str(n) for n in range(1, len(floors) + 1)], "the floors are numbered 1, 2, ... in order"
    assert all(floor == "-" for floor, _, kind in rows if kind == "adapter"), "an adapter is on no floor"
    kinds = {"foundation": list(FOUNDATIONS), "stage": list(STAGES), "command line": [COMMAND_LINE],
             "adapter": sorted(ADAPTERS)}
    assert {kind: [r for _, r, k in rows if k == kind] for kind in kinds} == kinds
    assert [r for _, r, k in rows if k != "adapter"] == list(FLOORS[1:]), "the rooms in floor order"


# a verdict is written by the decision module alone: no other module writes its words (a library docstring may name
# them; a command's docstring is its help, and may not)
VERDICT_WORDS = re.compile(r"\bestablished\b|\bno verdict\b|^\s*exploratory[ (:]|^candidate (?:better|worse)$"
                           r"|^no significant difference$", re.IGNORECASE)
DECISION_MODULE = "evalset.stats.verdicts"


def test_only_the_decision_module_writes_a_verdict():
    found = {}
    for path in MODULES:
        if name(path) == DECISION_MODULE:
            continue
        help_texts = room(name(path)) == COMMAND_LINE
        written = [(line, text) for line, text in string_pieces(tree(path), help_texts) if VERDICT_WORDS.search(text)]
        if written:
            found[name(path)] = (f"writes a verdict itself (line {written[0][0]}: {written[0][1]!r}): hand the "
                                 "evidence to evalset.stats.verdicts.decide, or take the word from it")
    assert not found, offenders(found)


def test_an_estimates_differences_become_evidence_in_one_place():
    """Every design's paired differences reach the decision module through evalset.estimate.differences (the
    family's kind and threshold, the interval at 1 - threshold): no other module of the estimate room decides."""
    found = {name(path): "decides itself: take a PairedDifference (evalset.estimate.differences) and its decided()"
             for path in MODULES if name(path).startswith("evalset.estimate.") and name(path) != ESTIMATE_EVIDENCE
             and {"decide", "Evidence"} & called_or_imported(tree(path))}
    assert not found, offenders(found)


ESTIMATE_EVIDENCE = "evalset.estimate.differences"


# --- measures only in metrics/: what a measure is (its ranking under the contract, its gains and discounts, its
# spelling) is computed there and nowhere else; an analysis asks the engine (evalset.metrics.documents for the
# document design) for what it needs
RANKING_CALL = "order_run"
RANKING_ELSEWHERE = {
    "evalset.pooling.topk": "the pool's top k of each run, in the engine's order: a ranking, no measure"}
MEASURE_ARITHMETIC = {"log2", "exp2"}  # a discount (1 / log2(rank + 1)) or an exponential gain (2^grade - 1)
OUTSIDE_METRICS = [p for p in MODULES if room(name(p)) != "metrics"]


def test_only_the_metrics_room_ranks_a_run_or_does_measure_arithmetic():
    found = {}
    for path in OUTSIDE_METRICS:
        used = called_or_imported(tree(path))
        ranks = RANKING_CALL in used and name(path) not in RANKING_ELSEWHERE
        arithmetic = sorted(used & MEASURE_ARITHMETIC)
        if ranks or arithmetic:
            found[name(path)] = (f"ranks runs itself ({RANKING_CALL}): ask evalset.metrics (evalset.metrics.documents."
                                 "rank_pool, top_k)" if ranks else "") + (
                f"computes a gain or a discount itself ({', '.join(arithmetic)}): take it from evalset.metrics "
                "(decomposition.discount, decomposition.gain)" if arithmetic else "")
    assert not found, offenders(found)


def measure_names() -> set[str]:
    from evalset.metrics.measures import MEASURES

    return {spelling for kind in MEASURES.values() for spelling in (kind.name, *kind.aliases) if len(spelling) > 2}


def test_only_the_metrics_room_parses_a_measures_spelling():
    """A regular expression that names a measure (``n?dcg[@_](\\d+)``) outside metrics/ is a second parser:
    parse with evalset.metrics.parse_measure."""
    names, found = measure_names(), {}
    for path in OUTSIDE_METRICS:
        for node in ast.walk(tree(path)):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and getattr(node.func.value, "id", "") == "re" and node.args
                    and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)):
                spelled = {n for n in names if re.search(rf"(?<![a-z]){re.escape(n)}", node.args[0].value)}
                if spelled:
                    found[name(path)] = f"line {node.lineno} parses a measure's spelling: {sorted(spelled)}"
    assert not found, offenders(found)


def test_the_ranking_exception_is_still_needed():
    for module, why in RANKING_ELSEWHERE.items():
        path = PACKAGE.parent / (module.replace(".", "/") + ".py")
        assert RANKING_CALL in called_or_imported(tree(path)), (module, why)


def test_every_random_choice_draws_from_a_generator_of_the_seeds_module():
    """A seed is checked in one place (evalset.seeds.generator): numpy's generator made anywhere else would take a
    seed unchecked (``--seed -1``: numpy's ValueError and a traceback)."""
    makers = {"default_rng", "RandomState", "SeedSequence"}
    elsewhere = {name(path): sorted(makers & called_or_imported(tree(path)))
                 for path in MODULES if name(path) != "evalset.seeds"}
    assert {module: used for module, used in elsewhere.items() if used} == {}


# --- a pool folder has one reader and one writer (evalset.io.poolfiles): a pool file's name as a value of its own
# outside io/ (a path built, `folder / "pool.json"`; a file to write, `files["tasks.jsonl"] = ...`) is a second one;
# a message, a help text or a docstring may name the files
def pool_file_names_used(source: str) -> list[tuple[int, str]]:
    """(line, string) of each string literal of ``source`` that is a pool file's name or a path ending in one."""
    from evalset.io.poolfiles import POOL_FILES

    return [(line, text) for line, text in string_pieces(ast.parse(source))
            if any(text == file or text.endswith(f"/{file}") for file in POOL_FILES)]


def test_only_the_io_room_reads_or_writes_a_pool_folders_files_by_name():
    found = {name(path): f"line {used[0][0]} names the pool file {used[0][1]!r}" for path in MODULES
             if room(name(path)) != "io" and (used := pool_file_names_used(path.read_text()))}
    assert not found, offenders(found) + ("\nread and write a pool folder through evalset.io.poolfiles "
                                          "(read_pool_manifest, read_tasks, read_pairs_and_tasks, write_pool_folder; "
                                          "its file names POOL_FILES)")


def test_the_pool_file_rule_catches_an_ad_hoc_reader_and_spares_messages():
    ad_hoc = ('"""Reads pool.json."""\nmanifest = json.loads((folder / "pool.json").read_text())\n'
              'with open(os.path.join(folder, "tasks.jsonl")) as handle:\n    pass\nfiles["pool_sources.tsv"] = []\n'
              'raise InputError(f"pair {p} of tasks.jsonl is not in pool.tsv", help="the pool.json")\n')
    assert sorted(pool_file_names_used(ad_hoc)) == [(2, "pool.json"), (3, "tasks.jsonl"), (5, "pool_sources.tsv")]


def set_file_names_used(source: str) -> list[tuple[int, str]]:
    """(line, string) of each string literal of ``source`` that is a set's file name or a path ending in one."""
    from evalset.io.setfiles import HOLES_FILE, SET_FILES, VERSIONS_FILE

    names = (*SET_FILES, HOLES_FILE, VERSIONS_FILE)
    return [(line, text) for line, text in string_pieces(ast.parse(source))
            if any(text == file or text.endswith(f"/{file}") for file in names)]


def test_only_the_set_files_module_names_a_sets_files():
    found = {name(path): f"line {used[0][0]} names the set file {used[0][1]!r}" for path in MODULES
             if name(path) != "evalset.io.setfiles" and (used := set_file_names_used(path.read_text()))}
    assert not found, offenders(found) + "\nname a set's files through evalset.io.setfiles (QRELS_FILE, ...)"


def test_the_set_file_rule_catches_a_name_by_hand_and_spares_messages():
    by_hand = ('"""Reads labels.tsv."""\nqrels = read_qrels(path / "qrels.txt")\n'
               'log = os.path.join(folder, "versions.tsv")\nraise InputError("the manifest.json differs")\n')
    assert sorted(set_file_names_used(by_hand)) == [(2, "qrels.txt"), (3, "versions.tsv")]


def test_no_quantile_is_asked_of_scipy_outside_the_statistics_room():
    found = {name(path): found[0] for path in MODULES if room(name(path)) != "stats"
             and (found := re.findall(r"\.(?:ppf|isf)\(", path.read_text()))}
    assert not found, offenders(found) + "\nask evalset.stats.quantiles.two_sided"


def test_one_class_is_named_holes():
    named = [name(path) for path in MODULES if re.search(r"^class Holes\b", path.read_text(), re.MULTILINE)]
    assert named == ["evalset.holes.find"], named


# --- one reader for every file (evalset.io): runs, qrels, logs and tables are parsed only there, so a command that
# reads a run gets the reader's line checks, errors (file and line), doc-id packing and streaming; a second parser is
# a second set of rules
PARSERS = re.compile(r"\bpyarrow\.(?:csv|parquet|json)\b|\bimport polars\b|\bpd\.read_(?:csv|table|parquet|json)\("
                     r"|\bread_csv(?:_auto)?\(|\bread_parquet\(|\bjson\.load\(")


READERS = {"read_text", "read_bytes"}
READING_CALLS = {("json", "load"), ("json", "loads"), ("csv", "reader"), ("csv", "DictReader"), ("tomllib", "load")}
NOT_A_USERS_FILE = {"evalset.sampling.spark": "the JVM's own output, shown when Spark fails to start"}
"""Modules that read a file that is not the user's (the line of its reason)."""


def parsers_used(source: str) -> list[str]:
    """What ``source`` parses or reads itself, from its syntax tree: a second parser (pyarrow's, polars, pandas' or
    DuckDB's readers), ``json.load``/``json.loads`` of a file's text, ``csv.reader``, ``tomllib.load``, ``open``
    for reading, ``read_text``, ``read_bytes``. A JSON or CSV parse of text a service answered is not a file."""
    found = PARSERS.findall(source)
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Call):
            continue
        function = node.func
        if isinstance(function, ast.Name) and function.id == "open":
            mode = node.args[1] if len(node.args) > 1 else next(
                (keyword.value for keyword in node.keywords if keyword.arg == "mode"), None)
            if not (isinstance(mode, ast.Constant) and set(str(mode.value)) & set("wax")):
                found.append("open(")
        elif isinstance(function, ast.Attribute) and function.attr in READERS:
            found.append(f".{function.attr}(")
        elif isinstance(function, ast.Attribute) and isinstance(function.value, ast.Name) and (
                function.value.id, function.attr) in READING_CALLS and function.attr != "loads":
            found.append(f"{function.value.id}.{function.attr}(")
    return found


def test_only_the_io_room_parses_or_reads_a_file():
    found = {name(path): used for path in MODULES if room(name(path)) != "io" and name(path) not in NOT_A_USERS_FILE
             if (used := parsers_used(path.read_text()))}
    assert not found, f"files parsed or read outside evalset.io (read them through its readers): {found}"


def test_the_parser_rule_catches_a_second_reader():
    source = ("import pyarrow.csv as pacsv\nimport polars as pl\nframe = pd.read_csv(path)\n"
              "duckdb.sql(\"select * from read_csv_auto('x')\")\nmanifest = json.load(handle)\n"
              "probe = json.loads(Path(path).read_text())\nrows = list(csv.reader(handle))\n"
              "with open(path) as handle: pass\nwith open(path, 'rb') as handle: pass\n"
              "with open(path, 'w') as handle: pass\nanswer = json.loads(content)\n")
    assert parsers_used(source) == ["pyarrow.csv", "import polars", "pd.read_csv(", "read_csv_auto(", "json.load(",
                                    "json.load(", ".read_text(", "csv.reader(", "open(", "open("]


# a parameter's rule is declared once (evalset/params.py: a settings class's RULES, validate_params): no module checks
# a value against choices or a bound by hand; a command's options take their type from the declared rule
# (cli/ruled.py). A file's content is data, not a parameter: its checks say "found" and name the file and line.
HAND_CHECKS = {
    "a choice checked by hand": re.compile(r"if [^\n]* not in \(?[\"'A-Z][^\n]*:\n\s*raise InputError"),
    "a rule's message written by hand": re.compile(
        r"InputError\(\s*f?[\"'][^\"'\n]*must be (?:one of|a positive|a non-negative|an integer|a number|in [\[(]|a "
        r"fraction|at least|between)[^\n]*\bgot\b"),
    "a bound checked by hand": re.compile(
        r"if (?:not )?\(?-?[\d.]+ <=? [a-z_.]+ <=? [\d.A-Z_]+\)?:\n\s*raise InputError"
        r"|if [a-z_.]+ (?:<|<=) [01]:\n\s*raise InputError"),
}
CLI_HAND_TYPES = re.compile(r"type=(?:int|float)\b|click\.(?:IntRange|FloatRange)\(|click\.Choice\(\[")
NOT_PARAMETERS = {  # what these modules check looks like a parameter's rule and is not one
    "evalset.metrics.measures": "a measure's name looked up in its registry (the message offers close spellings)",
    "evalset.metrics.trec_eval_names": "a trec_eval measure family looked up in its table of defaults",
    "evalset.compat.ir_measures": "an ir_measures measure looked up in its table of counterparts",
    "evalset.holes.find": "the judgments' largest grade (data: a hole cannot be filled relevant without one)",
}


def test_no_module_checks_a_parameter_by_hand():
    found = {}
    for path in MODULES:
        if path.name == "params.py":
            continue
        text = path.read_text()
        hand = [] if name(path) in NOT_PARAMETERS else [
            f"{what} ({match.group(0)!r}): declare it in evalset/params.py's way"
            for what, pattern in HAND_CHECKS.items() if (match := pattern.search(text))]
        if room(name(path)) == COMMAND_LINE and path.name != "ruled.py" and (match := CLI_HAND_TYPES.search(text)):
            hand.append(f"{match.group(0)!r}: build the option with cli.ruled from its rule")
        if hand:
            found[name(path)] = "; ".join(hand)
    assert not found, offenders(found)


@pytest.mark.parametrize("source, caught", [
    ('    if ties not in TIE_RULES:\n        raise InputError(f"unknown tie rule {ties!r}")', True),
    ('    if depth < 1:\n        raise InputError(f"depth must be a positive integer, got {depth}")', True),
    ('        raise InputError(f"weighting must be one of {WEIGHTINGS}, got {w!r}")', True),
    ('    if not 0 <= holdout < 1:\n        raise InputError(f"holdout must be a fraction in [0, 1), not {h}")', True),
    ('        raise InputError(f"rank must be a positive integer, found {value!r}", path, line)', False),
    ('    check("depth", depth, POSITIVE_INT)', False),
])
def test_the_hand_check_patterns_catch_what_they_name(source, caught):
    assert any(pattern.search(source) for pattern in HAND_CHECKS.values()) is caught


def test_what_is_not_a_parameter_still_looks_like_one():
    """The exceptions do not outlive what they excuse."""
    for module in NOT_PARAMETERS:
        text = (PACKAGE.parent / (module.replace(".", "/") + ".py")).read_text()
        assert any(pattern.search(text) for pattern in HAND_CHECKS.values()), module
