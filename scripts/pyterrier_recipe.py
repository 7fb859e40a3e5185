"""The PyTerrier recipe of docs/coming-from.md: pt.Experiment's inputs (result frames here; a transformer works the
same), its table, then evalset's verdicts on the same inputs. Run: python scripts/pyterrier_recipe.py"""

from pathlib import Path

import pandas as pd
import pyterrier as pt
from ir_measures import AP, nDCG

from evalset.comparing import compare_systems
from evalset.io.trec import read_qrels, read_run

DL19 = Path(__file__).resolve().parents[1] / "data" / "dl19"
NAMES = ["bm25base_p", "bm25tuned_p", "idst_bert_p1"]

systems = [read_run(DL19 / "runs" / f"{name}.run.gz").rename(columns={"query_id": "qid", "doc_id": "docno"})
           for name in NAMES]  # as a PyTerrier retriever returns them: qid, docno, score, rank
topics = pd.read_csv(DL19 / "topics.tsv", sep="\t", names=["qid", "query"], dtype=str)
qrels = read_qrels(DL19 / "nist.qrels").rename(columns={"query_id": "qid", "doc_id": "docno", "grade": "label"})

print(pt.Experiment(systems, topics, qrels, eval_metrics=[nDCG @ 10, AP], names=NAMES).round(4).to_string(index=False))
print()
verdicts = compare_systems(systems, topics, qrels, names=NAMES, metric=nDCG @ 10).to_frame()
print(verdicts[["candidate", "difference", "p", "threshold", "judged_candidate", "verdict"]].round(4).to_string(
    index=False))
