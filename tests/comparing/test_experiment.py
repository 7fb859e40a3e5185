"""PyTerrier's experiment with evalset's verdicts (issue 67): what pt.Experiment takes (result frames, a transformer,
topics, qrels in PyTerrier's column names) gives the comparisons `evalset compare` gives on the same runs, and
pt.Experiment's own means, through ir_measures, are evalset's. PyTerrier runs without Java here: its result frames
and Transformer.from_df need none."""

import json

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from evalset.cli import main
from evalset.comparing import compare_systems
from evalset.errors import InputError
from evalset.io.trec import read_qrels, read_run

pt = pytest.importorskip("pyterrier")


@pytest.fixture(scope="module")
def dl19(shared_data):
    root = shared_data / "dl19"
    folder = sorted((root / "runs" / "official_top100").glob("*.run.gz"))
    paths = {path.name.removesuffix(".run.gz"): path for path in folder}
    paths = {"bm25base_p": paths.pop("bm25base_p"), **paths}  # the baseline first, as compare takes it
    results = {name: read_run(path).rename(columns={"query_id": "qid", "doc_id": "docno"})
               for name, path in paths.items()}
    qrels = read_qrels(root / "qrels.txt").rename(columns={"query_id": "qid", "doc_id": "docno", "grade": "label"})
    topics = pd.read_csv(root / "topics.tsv", sep="\t", names=["qid", "query"], dtype=str)
    return root, paths, results, qrels, topics


def test_the_experiments_inputs_give_the_verdicts_of_evalset_compare_on_all_37_runs(dl19):
    root, paths, results, qrels, topics = dl19
    systems = {name: pt.Transformer.from_df(run) if name == "idst_bert_p1" else run for name, run in results.items()}
    compared = compare_systems(systems, topics, qrels, baseline="bm25base_p", metric="nDCG@10")
    done = CliRunner().invoke(main, ["compare", "--qrels", str(root / "qrels.txt"), *map(str, paths.values()),
                                     "-m", "nDCG@10", "--format", "json"])
    assert done.exit_code == 0, done.output
    assert compared.to_dict() == json.loads(done.output)
    table = compared.to_frame().set_index("candidate")
    assert len(table) == 36 and list(table.index) == list(paths)[1:]
    assert list(table["verdict"]) == [result["verdict"] for result in json.loads(done.output)]
    assert table.loc["idst_bert_p1", "verdict"] == "established: candidate better (p = 0.0001 < 0.001389)"
    assert table.loc["idst_bert_p1", "candidate_mean"] == pytest.approx(0.7645, abs=5e-5)
    assert (table["baseline_mean"] == table["baseline_mean"].iloc[0]).all()
    assert table["judged_candidate"].between(0, 1).all() and table["judged_candidate"].min() < 1


def test_pt_experiments_means_through_ir_measures_are_evalsets_under_trec_eval_9(dl19):
    """ir_measures scores through pytrec_eval, trec_eval 9, which compares scores as single-precision floats: two
    scores of TUA1-1 equal as floats rank by document id there (AP 0.407725; 0.407733 under trec_eval 10). Judged@k
    is not among them: ir_measures' divides by a ranking's length when it is shorter than k, and breaks ties its own
    way, not trec_eval's (docs/coming-from.md)."""
    root, paths, results, qrels, topics = dl19
    from ir_measures import AP, RR, P, R, nDCG

    measures = [nDCG @ 10, AP, RR, P @ 10, R @ 100]
    table = pt.Experiment(list(results.values()), topics, qrels, eval_metrics=measures, names=list(results))
    done = CliRunner().invoke(main, ["score", "--qrels", str(root / "qrels.txt"), *map(str, paths.values()),
                                     *(arg for measure in measures for arg in ("-m", str(measure))),
                                     "-c", "trec_eval_version=9", "--format", "json"])  # pytrec_eval's
    ours = json.loads(done.output)["runs"]
    assert len(table) == 37
    for row in table.to_dict(orient="records"):
        for measure in map(str, measures):  # ir_measures' names, as evalset takes them
            assert np.isclose(row[measure], ours[row["name"]][measure]["mean"], rtol=0, atol=1e-12), (row, measure)


@pytest.mark.parametrize(("call", "message"), [
    (lambda r, t, q: compare_systems([r["bm25base_p"]], t, q), "one system"),
    (lambda r, t, q: compare_systems(list(r.values()), t, q, names=["a", "b"]), "2 names for 37 systems"),
    (lambda r, t, q: compare_systems(list(r.values()), t, q, baseline="nobody", names=list(r)), "no system named"),
    (lambda r, t, q: compare_systems([r["bm25base_p"], 42], t, q), "expected a result frame or a transformer"),
    (lambda r, t, q: compare_systems(list(r.values()), t.rename(columns={"qid": "id"}), q), "no qid"),
])
def test_bad_experiment_inputs_are_one_error(dl19, call, message):
    _, _, results, qrels, topics = dl19
    with pytest.raises(InputError, match=message):
        call(results, topics, qrels)
