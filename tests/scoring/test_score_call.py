"""`score(frame, qrels)`: evalset score in one library call, on runs held as ranx's and PyTerrier's users hold them
(issue 67): the same means as the command on the files."""

import json

import polars
import pytest
from click.testing import CliRunner

from evalset.cli import main
from evalset.errors import InputError
from evalset.io.trec import read_qrels, read_run
from evalset.scoring import score


@pytest.fixture(scope="module")
def dl19(shared_data):
    root = shared_data / "dl19"
    run_path = root / "runs" / "official_top100" / "ICT-BERT2.run.gz"
    done = CliRunner().invoke(main, ["score", "--qrels", str(root / "qrels.txt"), str(run_path), "--format", "json"])
    means = {measure: value["mean"] for measure, value in json.loads(done.output)["runs"]["ICT-BERT2"].items()}
    return root / "qrels.txt", run_path, means


def test_one_frame_of_any_shape_scores_as_the_command_does(dl19):
    qrels_path, run_path, means = dl19
    run = read_run(run_path)
    pyterrier = run.rename(columns={"query_id": "qid", "doc_id": "docno"})
    qrels = read_qrels(qrels_path).rename(columns={"query_id": "qid", "doc_id": "docno", "grade": "label"})
    for given in (run, polars.from_pandas(run), pyterrier):
        table = score(given, qrels)
        assert list(table.to_frame().index) == ["run"]
        assert table.to_frame().loc["run"].to_dict() == means
    assert score({"ICT-BERT2": run}, str(qrels_path)).to_frame().loc["ICT-BERT2"].to_dict() == means
    assert score(run_path, str(qrels_path)).to_frame().loc["ICT-BERT2"].to_dict() == means


def test_a_frame_without_the_columns_is_one_error_naming_them(dl19):
    qrels_path, run_path, _ = dl19
    with pytest.raises(InputError, match="score"):
        score(read_run(run_path).drop(columns="score"), str(qrels_path))
