"""``evalset score --format trec_eval --per-query -m all_trec`` against NIST's trec_eval 10.0, built from its source
(``../shared/tools/trec_eval-10.0``) in a temporary folder, line by line: trec_eval's fixtures and the 46 DL19 runs
(37 top-100, 9 full), at ``-l1`` and ``-l2``, plain, ``-c`` (with queries removed from the runs) and ``-M100``.

Every line that differs is one of :data:`KNOWN`, each a documented behaviour of trec_eval 10.0 checked here for
what it is (../shared/tools/README.md); the counts are printed at the end of the session."""

import gzip
from pathlib import Path

import pytest

from tests.support.trec_eval10 import Comparison, compare, departure

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def inputs(shared_data, tmp_path_factory) -> dict[str, Path]:
    """Uncompressed runs (trec_eval reads no gzip), named by their tags; the top-100 runs each without every
    seventh query from its own offset (for ``-c``); trec_eval's fixture run under its tag."""
    root = tmp_path_factory.mktemp("inputs")
    dl19 = shared_data / "dl19"
    for folder in ("official_top100", "official_full"):
        (root / folder).mkdir()
        for path in sorted((dl19 / "runs" / folder).glob("*.run.gz")):
            (root / folder / path.name.removesuffix(".run.gz")).write_bytes(gzip.decompress(path.read_bytes()))
    (root / "missing").mkdir()
    for index, path in enumerate(sorted((root / "official_top100").iterdir())):
        lines = path.read_text().splitlines(keepends=True)
        queries = sorted({line.split()[0] for line in lines})
        dropped = set(queries[index % 7::7])
        (root / "missing" / path.name).write_text("".join(line for line in lines if line.split()[0] not in dropped))
    fixtures = shared_data / "trec_eval"
    for name in ("results.test", "results.trunc"):
        (root / name.replace(".", "_")).mkdir()
        (root / name.replace(".", "_") / "STANDARD").write_bytes((fixtures / name).read_bytes())
    return {"dl19": dl19 / "qrels.txt", "qrels.test": fixtures / "qrels.test",
            "qrels.rel_level": fixtures / "qrels.rel_level", "root": root}


CONFIGURATIONS = {
    "fixtures qrels.test": ("qrels.test", "results_test", []),
    "fixtures qrels.rel_level -l1": ("qrels.rel_level", "results_test", ["-l1"]),
    "fixtures qrels.rel_level -l2": ("qrels.rel_level", "results_test", ["-l2"]),
    "fixtures results.trunc -c": ("qrels.test", "results_trunc", ["-c"]),
    "dl19 top100 -l1": ("dl19", "official_top100", ["-l1"]),
    "dl19 top100 -l2": ("dl19", "official_top100", ["-l2"]),
    "dl19 top100 -c -l1 (queries removed)": ("dl19", "missing", ["-c", "-l1"]),
    "dl19 top100 -c -l2 (queries removed)": ("dl19", "missing", ["-c", "-l2"]),
    "dl19 full -l1": ("dl19", "official_full", ["-l1"]),
    "dl19 full -l2": ("dl19", "official_full", ["-l2"]),
    "dl19 full -M100 -l2": ("dl19", "official_full", ["-M100", "-l2"]),
    "dl19 full -c -M100 -l1": ("dl19", "official_full", ["-c", "-M100", "-l1"]),
}


@pytest.mark.parametrize("configuration", list(CONFIGURATIONS))
def test_every_line_equals_trec_eval_10s_or_is_a_known_trec_eval_behaviour(trec_eval_10, inputs, configuration,
                                                                            record_property):
    qrels_name, folder, flags = CONFIGURATIONS[configuration]
    qrels = inputs[qrels_name]
    runs = sorted((inputs["root"] / folder).iterdir())
    comparison: Comparison = compare(trec_eval_10, qrels, runs, flags)
    known: dict[str, int] = {}
    unexplained = []
    for run, their, our in comparison.differing:
        kind = departure(their, our, [], qrels, flags)
        if kind is None:
            unexplained.append((run, their, our))
        else:
            known[kind] = known.get(kind, 0) + 1
    said = ", ".join(f"{count:,} {kind}" for kind, count in known.items()) or "none"
    record_property("compatibility", f"trec_eval 10.0 -q -m all_trec {configuration}: {len(runs)} runs; "
                                     f"{comparison.summary()}; differing: {said}")
    assert not comparison.order, f"lines in another order: {comparison.order}"
    assert not unexplained, f"{len(unexplained)} lines differ, e.g. {unexplained[:5]}"
    assert sum(comparison.compared.values()) > 0
    if "-c" in flags and qrels_name == "dl19" and "-l2" in flags:
        assert known.get("num_rel all under -c") == len(runs)  # the defect shows where -l matters
