"""The package's layout as a specification (docs/architecture.md): which module may import what, and sizes."""

import ast
import re
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "evalset"
MODULES = sorted(p for p in PACKAGE.rglob("*.py") if p.name != "__main__.py")
# the rooms of the house that hold no stage: a stage may use them, they use no stage
FOUNDATIONS = {"errors", "params", "seeds", "exports", "contract", "render", "speed", "io", "metrics", "stats",
               "evaluation"}
# the stages in pipeline order: a stage may import the foundations and the stages before it, never one after it
STAGES = ("sampling", "pooling", "judge", "judgments", "agreement", "quality", "labelstudio", "sets", "scoring",
          "comparing", "planning", "estimate", "reusability", "report")
# evalset behind another library's interface (an ir_measures provider): it may use the foundations, the engine
# among them, since its conventions are that library's; nothing in evalset imports it
ADAPTERS = {"compat"}
MAX_LINES = 450
# the engine's entry points: only the evaluation room (and the metrics module itself) calls them
ENGINE_CALLS = {"evaluate", "evaluate_runs", "evaluate_run_files", "evaluate_file", "evaluate_blocks", "prepare_qrels"}


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports(path: Path, top_level_only: bool = False) -> set[str]:
    """The modules ``path`` imports (``from evalset import x`` counts as ``evalset.x``)."""
    tree = ast.parse(path.read_text())
    nodes = tree.body if top_level_only else ast.walk(tree)
    found = set()
    for node in nodes:
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
            if node.module == "evalset":
                found.update(f"evalset.{alias.name}" for alias in node.names)
    return found


def room(module: str) -> str:
    """``evalset.io.trec`` -> ``io``; ``evalset.pooling`` -> ``pooling``."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def evalset_rooms(path: Path) -> set[str]:
    return {room(name) for name in imports(path) if name.startswith("evalset.")} - {room(module_name(path))}


@pytest.mark.parametrize("path", MODULES, ids=module_name)
def test_no_module_is_over_450_lines(path):
    assert len(path.read_text().splitlines()) <= MAX_LINES


def test_every_room_is_a_foundation_a_stage_the_command_line_or_an_adapter():
    rooms = {room(module_name(p)) for p in MODULES} - {""}
    known = FOUNDATIONS | set(STAGES) | {"cli"} | ADAPTERS
    assert rooms <= known, rooms - known
    # the package root holds folders and the few foundations that are one module each
    root_modules = {room(module_name(p)) for p in MODULES if len(p.relative_to(PACKAGE).parts) == 1} - {""}
    assert root_modules <= {"errors", "params", "seeds", "exports", "contract", "render"}


@pytest.mark.parametrize("path", [p for p in MODULES if room(module_name(p)) in STAGES], ids=module_name)
def test_a_stage_imports_no_stage_after_it(path):
    own = STAGES.index(room(module_name(path)))
    later = {r for r in evalset_rooms(path) if r in STAGES and STAGES.index(r) > own}
    assert not later, f"{module_name(path)} imports {sorted(later)}, which come after it in the pipeline"


@pytest.mark.parametrize("path", [p for p in MODULES if room(module_name(p)) not in ("metrics", "evaluation",
                                                                                   *ADAPTERS)], ids=module_name)
def test_analyses_reach_per_query_values_only_through_the_evaluation_room(path):
    called = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("evalset.metrics"):
            called |= {alias.name for alias in node.names} & ENGINE_CALLS
        elif isinstance(node, ast.Attribute) and node.attr in ENGINE_CALLS:
            called.add(node.attr)
    assert not called, f"{module_name(path)} calls the engine directly ({sorted(called)}): use evalset.evaluation"


@pytest.mark.parametrize("path", [p for p in MODULES if room(module_name(p)) != "cli"], ids=module_name)
def test_the_library_imports_neither_the_command_line_nor_click(path):
    assert not {name for name in imports(path) if name == "click" or name.startswith("evalset.cli")}


@pytest.mark.parametrize("path", [p for p in MODULES if room(module_name(p)) in FOUNDATIONS], ids=module_name)
def test_the_foundations_import_no_stage(path):
    assert evalset_rooms(path) <= FOUNDATIONS, f"{module_name(path)} imports a stage"


@pytest.mark.slow  # about a second: out of the quick tier (README)
def test_an_adapter_uses_only_the_foundations_and_nothing_uses_an_adapter():
    for path in MODULES:
        if room(module_name(path)) in ADAPTERS:
            assert evalset_rooms(path) <= FOUNDATIONS, f"{module_name(path)} imports a stage"
        else:
            assert not evalset_rooms(path) & ADAPTERS, f"{module_name(path)} imports an adapter"


COMMANDS = [p for p in MODULES if room(module_name(p)) == "cli" and p.name not in ("__init__.py", "__main__.py")]


SPEC = re.compile(r"evalset\.[a-z_]+\.spec")
"""A command's settings object (``evalset.<room>.spec``): light, so that a command reads its rules at once."""
SPECS = [p for p in MODULES if SPEC.fullmatch(module_name(p))]


@pytest.mark.parametrize("path", COMMANDS, ids=module_name)
def test_a_command_module_is_short_and_loads_no_library_until_run(path):
    assert len(path.read_text().splitlines()) < 150
    light = {"click", "functools", "json", "sys", "pathlib", "__future__", "evalset.contract", "evalset.params",
             "evalset.errors", "signal", "types", "dataclasses", "inspect"}  # and the cli's, and the specs
    assert {name for name in imports(path, top_level_only=True)
            if not name.startswith("evalset.cli.") and not SPEC.fullmatch(name)} <= light


@pytest.mark.parametrize("path", SPECS, ids=module_name)
def test_a_spec_loads_only_the_light_foundations_and_its_room_loads_nothing_on_import(path):
    """A command imports its spec at once (above): the spec may import evalset.contract, params and errors and the
    standard library, and its room's package (imported first) only the lazy exports (evalset.exports)."""
    def heavy(module_path: Path, allowed: set[str]) -> set[str]:
        return {name for name in imports(module_path) if name not in allowed
                and name.split(".")[0] not in sys.stdlib_module_names}

    assert heavy(path, {"evalset.contract", "evalset.params", "evalset.errors"}) == set()
    assert heavy(path.parent / "__init__.py", {"evalset.exports"}) == set()


def test_a_packages_lazy_names_are_not_its_modules_names():
    """A lazy export named as a module of its package would be that module once the module is imported (the import
    system sets the attribute): ``from evalset.estimate import simulate`` would depend on what was imported first."""
    import importlib
    import pkgutil

    for path in SPECS:
        package = importlib.import_module(module_name(path.parent / "__init__.py"))
        modules = {info.name for info in pkgutil.iter_modules(package.__path__)}
        assert not set(getattr(package, "__all__", ())) & modules, package.__name__


def test_the_map_names_every_room_and_module():
    doc = (PACKAGE.parent / "docs" / "architecture.md").read_text()
    tree = doc.split("## The rooms", 1)[1].split("```")[1]
    words = set(re.findall(r"[a-z_]+", tree))
    for path in MODULES:
        parts = path.relative_to(PACKAGE).with_suffix("").parts
        if len(parts) > 1:
            assert f"  {parts[0]}/" in tree, f"docs/architecture.md does not name the room {parts[0]}/"
        if parts[-1] != "__init__":
            assert parts[-1] in words, f"docs/architecture.md does not name {path.relative_to(PACKAGE)}"
    for stage in STAGES:
        assert f"`{stage}`" in doc.split("## What may import what", 1)[1].split("##", 1)[0]


# a verdict is written by the decision module alone: no other module writes its words (a library docstring may name
# them; a command's docstring is its help, and may not)
VERDICT_WORDS = re.compile(r"\bestablished\b|\bno verdict\b|^\s*exploratory[ (:]", re.IGNORECASE)
DECISION_MODULE = "evalset.stats.verdicts"


def string_pieces(tree: ast.AST, docstrings_too: bool = False) -> list[tuple[int, str]]:
    """The string literals of ``tree`` (f-strings' literal parts among them), docstrings left out unless asked."""
    docstrings = set() if docstrings_too else {
        id(node.body[0].value) for node in ast.walk(tree)
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
        and node.body and isinstance(node.body[0], ast.Expr) and isinstance(node.body[0].value, ast.Constant)}
    return [(node.lineno, node.value) for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings]


@pytest.mark.parametrize("path", [p for p in MODULES if module_name(p) != DECISION_MODULE], ids=module_name)
def test_only_the_decision_module_writes_a_verdict(path):
    help_texts = room(module_name(path)) == "cli"
    written = [(line, text) for line, text in string_pieces(ast.parse(path.read_text()), help_texts)
               if VERDICT_WORDS.search(text)]
    assert not written, (f"{module_name(path)} writes a verdict itself (line {written[0][0]}: {written[0][1]!r}): hand "
                         "the evidence to evalset.stats.verdicts.decide, or take the word from it")


# --- measures only in metrics/: what a measure is (its ranking under the contract, its gains and discounts, its
# spelling) is computed there and nowhere else; an analysis asks the engine (evalset.metrics.documents for the
# document design) for what it needs
RANKING_CALL = "order_run"
RANKING_ELSEWHERE = {
    "evalset.pooling.topk": "the pool's top k of each run, in the engine's order: a ranking, no measure"}
MEASURE_ARITHMETIC = {"log2", "exp2"}  # a discount (1 / log2(rank + 1)) or an exponential gain (2^grade - 1)


def called_or_imported(tree: ast.AST) -> set[str]:
    """The names ``tree`` calls (``f(...)``, ``np.f(...)``) or imports (``from m import f``)."""
    names = {alias.name for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) for alias in node.names}
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            function = node.func
            names.add(function.attr if isinstance(function, ast.Attribute) else getattr(function, "id", ""))
    return names


OUTSIDE_METRICS = [p for p in MODULES if room(module_name(p)) != "metrics"]


@pytest.mark.parametrize("path", OUTSIDE_METRICS, ids=module_name)
def test_only_the_metrics_room_ranks_a_run_or_does_measure_arithmetic(path):
    used = called_or_imported(ast.parse(path.read_text()))
    if module_name(path) not in RANKING_ELSEWHERE:
        assert RANKING_CALL not in used, (f"{module_name(path)} ranks runs itself ({RANKING_CALL}): ask "
                                          "evalset.metrics (evalset.metrics.documents.rank_pool, top_k)")
    arithmetic = used & MEASURE_ARITHMETIC
    assert not arithmetic, (f"{module_name(path)} computes a gain or a discount itself ({', '.join(arithmetic)}): "
                            "take it from evalset.metrics (decomposition.discount, decomposition.gain)")


def measure_names() -> set[str]:
    from evalset.metrics.measures import MEASURES

    return {spelling for kind in MEASURES.values() for spelling in (kind.name, *kind.aliases) if len(spelling) > 2}


@pytest.mark.parametrize("path", OUTSIDE_METRICS, ids=module_name)
def test_only_the_metrics_room_parses_a_measures_spelling(path):
    """A regular expression that names a measure (``n?dcg[@_](\\d+)``) outside metrics/ is a second parser:
    parse with evalset.metrics.parse_measure."""
    names = measure_names()
    for node in ast.walk(ast.parse(path.read_text())):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and getattr(node.func.value, "id", "") == "re" and node.args
                and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)):
            spelled = {name for name in names if re.search(rf"(?<![a-z]){re.escape(name)}", node.args[0].value)}
            assert not spelled, f"{module_name(path)} line {node.lineno} parses a measure's spelling: {spelled}"


def test_the_ranking_exception_is_still_needed():
    for module, why in RANKING_ELSEWHERE.items():
        path = PACKAGE.parent / (module.replace(".", "/") + ".py")
        assert RANKING_CALL in called_or_imported(ast.parse(path.read_text())), (module, why)


def test_every_random_choice_draws_from_a_generator_of_the_seeds_module():
    """A seed is checked in one place (evalset.seeds.generator): numpy's generator made anywhere else would take a
    seed unchecked (``--seed -1``: numpy's ValueError and a traceback)."""
    makers = {"default_rng", "RandomState", "SeedSequence"}
    elsewhere = {module_name(path): sorted(makers & called_or_imported(ast.parse(path.read_text())))
                 for path in MODULES if module_name(path) != "evalset.seeds"}
    assert {module: used for module, used in elsewhere.items() if used} == {}


# --- a pool folder has one reader and one writer (evalset.io.poolfiles): a pool file's name as a value of its own
# outside io/ (a path built, `folder / "pool.json"`; a file to write, `files["tasks.jsonl"] = ...`) is a second one;
# a message, a help text or a docstring may name the files
def pool_file_names_used(source: str) -> list[tuple[int, str]]:
    """(line, string) of each string literal of ``source`` that is a pool file's name or a path ending in one."""
    from evalset.io.poolfiles import POOL_FILES

    return [(line, text) for line, text in string_pieces(ast.parse(source))
            if any(text == name or text.endswith(f"/{name}") for name in POOL_FILES)]


@pytest.mark.parametrize("path", [p for p in MODULES if room(module_name(p)) != "io"], ids=module_name)
def test_only_the_io_room_reads_or_writes_a_pool_folders_files_by_name(path):
    used = pool_file_names_used(path.read_text())
    assert not used, (f"{module_name(path)} line {used[0][0]} names the pool file {used[0][1]!r}: read and write a "
                      "pool folder through evalset.io.poolfiles (read_pool_manifest, read_tasks, read_pairs_and_tasks, "
                      "write_pool_folder; its file names POOL_FILES)")


def test_the_pool_file_rule_catches_an_ad_hoc_reader_and_spares_messages():
    ad_hoc = ('"""Reads pool.json."""\nmanifest = json.loads((folder / "pool.json").read_text())\n'
              'with open(os.path.join(folder, "tasks.jsonl")) as handle:\n    pass\nfiles["pool_sources.tsv"] = []\n'
              'raise InputError(f"pair {p} of tasks.jsonl is not in pool.tsv", help="the pool.json")\n')
    assert sorted(pool_file_names_used(ad_hoc)) == [(2, "pool.json"), (3, "tasks.jsonl"), (5, "pool_sources.tsv")]


# --- one reader for every file (evalset.io): runs, qrels, logs and tables are parsed only there, so a command that
# reads a run gets the reader's line checks, errors (file and line), doc-id packing and streaming; a second parser is
# a second set of rules
PARSERS = re.compile(r"\bpyarrow\.(?:csv|parquet|json)\b|\bimport polars\b|\bpd\.read_(?:csv|table|parquet|json)\("
                     r"|\bread_csv(?:_auto)?\(|\bread_parquet\(|\bjson\.load\(")


def parsers_used(source: str) -> list[str]:
    return PARSERS.findall(source)


def test_only_the_io_room_parses_a_file():
    found = {module_name(path): used for path in MODULES if room(module_name(path)) != "io"
             if (used := parsers_used(path.read_text()))}
    assert not found, f"files parsed outside evalset.io (read them through its readers): {found}"


def test_the_parser_rule_catches_a_second_reader():
    source = ("import pyarrow.csv as pacsv\nimport polars as pl\nframe = pd.read_csv(path)\n"
              "duckdb.sql(\"select * from read_csv_auto('x')\")\nmanifest = json.load(handle)\n")
    assert parsers_used(source) == ["pyarrow.csv", "import polars", "pd.read_csv(", "read_csv_auto(", "json.load("]


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
    "evalset.comparing.holes": "the judgments' largest grade (data: a hole cannot be filled relevant without one)",
}


@pytest.mark.parametrize("path", [p for p in MODULES if p.name != "params.py"], ids=module_name)
def test_no_module_checks_a_parameter_by_hand(path):
    text = path.read_text()
    for what, pattern in HAND_CHECKS.items():
        found = pattern.search(text)
        if module_name(path) in NOT_PARAMETERS:
            continue
        assert not found, f"{module_name(path)}: {what} ({found.group(0)!r}): declare it in evalset/params.py's way"
    if room(module_name(path)) == "cli" and path.name != "ruled.py":
        found = CLI_HAND_TYPES.search(text)
        assert not found, f"{module_name(path)}: {found.group(0)!r}: build the option with cli.ruled from its rule"


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
