#!/usr/bin/env bash
# The README's demo: sets up .venv, then runs evalset end to end on the real TREC DL 2019 data in data/.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PYTHON" -m venv .venv
fi
.venv/bin/python -m pip install -q --disable-pip-version-check -e .
evalset=.venv/bin/evalset
out=out/demo
mkdir -p "$out"
runs=(data/dl19/runs/*.run.gz)

echo "== score: ${#runs[@]} official TREC DL 2019 runs on NIST's qrels (top 100 per topic)"
"$evalset" score --qrels data/dl19/nist.qrels "${runs[@]}" -m ndcg@10 -m p@10 -m rr@10 -m ap@100 \
  | tee "$out/scores.txt"
"$evalset" score --qrels data/dl19/nist.qrels "${runs[@]}" -m ndcg@10 -m p@10 -m rr@10 -m ap@100 \
  --per-query --format json > "$out/scores.json"

echo
echo "== compare: two planned comparisons against the BM25 baseline, nDCG@10"
"$evalset" compare --qrels data/dl19/nist.qrels data/dl19/runs/bm25base_p.run.gz \
  data/dl19/runs/idst_bert_p1.run.gz data/dl19/runs/bm25tuned_p.run.gz | tee "$out/compare.txt"
"$evalset" compare --qrels data/dl19/nist.qrels data/dl19/runs/bm25base_p.run.gz \
  data/dl19/runs/idst_bert_p1.run.gz data/dl19/runs/bm25tuned_p.run.gz --format json > "$out/compare.json"

echo
echo "artefacts:"
for f in "$out"/*; do echo "  $f"; done
