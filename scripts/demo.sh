#!/usr/bin/env bash
# The README's demo: sets up .venv, then runs the whole evalset pipeline on the real data shipped in data/
# (TREC DL 2019 runs, NIST and LLM grades, passages; the Excite query log). Artefacts go to out/demo/.
#
#   scripts/demo.sh [--with-label-studio]
#
# With --with-label-studio (or when LABEL_STUDIO_URL and LABEL_STUDIO_API_KEY are set), the pool is pushed to a
# Label Studio server (started here with scripts/label-studio.sh when only the flag is given). When
# OPENAI_BASE_URL is set, the LLM judge grades a small slice of the pool through that endpoint.
set -euo pipefail
cd "$(dirname "$0")/.."
with_label_studio=0
for argument in "$@"; do
  case "$argument" in
    --with-label-studio) with_label_studio=1 ;;
    *) echo "usage: scripts/demo.sh [--with-label-studio]" >&2; exit 2 ;;
  esac
done

PYTHON=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PYTHON" -m venv .venv
fi
mkdir -p out
pip_log=out/pip-install.log   # pip's own output (on some machines a hundred configuration warnings) goes here
if .venv/bin/python -m pip install --disable-pip-version-check -e '.[estimate,quality]' >"$pip_log" 2>&1; then
  echo "installed evalset into .venv (pip's output: $pip_log)"
else
  cat "$pip_log" >&2
  echo "demo: installing evalset into .venv failed (pip's output above, and in $pip_log)" >&2
  exit 1
fi
evalset=.venv/bin/evalset
out=out/demo
rm -rf "$out"   # the demo's own output; a frozen set elsewhere is never touched
mkdir -p "$out"
runs=(data/dl19/runs/*.run.gz)
llm_labels=(data/dl19/llm_labels/*.qrels)
step() { printf '\n== %s\n' "$*"; }

cat <<'EOF_INTRO'

Two public data sets feed the demo, because none has both a query log and judged runs:
  - the 1997 Excite query log feeds `sample` alone: it shows how queries are drawn by traffic stratum. The
    60 queries it draws have no runs and no grades here; they are what a team would pool and judge next.
  - TREC DL 2019 (43 topics graded by NIST's assessors, 37 official runs, three recorded LLM judges) feeds
    every later stage: pool, agreement, freeze, verify, score, compare, plan, report.
  - at the end, the 43 DL19 topics are given two strata (short and long queries) with the traffic shares of
    short and long queries in the Excite log, frozen as a second set and scored per stratum, traffic-weighted.
EOF_INTRO

step "sample (Excite log -> $out/queries.tsv): 20 queries per third of traffic, PII removed, 20% held out as test"
"$evalset" sample data/querylog/excite-small.log -l header=no -l query=3 -l user_id=1 -l timestamp=2 \
  -l timestamp_format=%y%m%d%H%M%S --per-stratum 20 --holdout 0.2 --seed 7 -o "$out/queries.tsv"

step "pool (DL19 runs -> $out/pool): the ${#runs[@]} official runs at depth 10, blind judging order, passage texts"
"$evalset" pool --spec pools/dl19-demo.toml -o "$out/pool"

step "agreement (DL19 grades): NIST's assessors against ${#llm_labels[@]} recorded LLM judges (kappas, system-ranking tau)"
"$evalset" agreement data/dl19/nist.qrels "${llm_labels[@]}" --human nist --guideline guidelines/relevance-v2.md \
  --runs data/dl19/runs --queries data/dl19/topics.tsv -o "$out/agreement" --pairs with-human \
  | tee "$out/agreement.txt"

step "freeze (DL19 grades -> $out/sets/dl19/v1): NIST's grades (human) and the LLM grades (kept, not merged)"
"$evalset" freeze data/dl19/nist.qrels $(printf -- '--llm %s ' "${llm_labels[@]}") \
  --queries data/dl19/topics.tsv --guideline guidelines/relevance-v2.md --name dl19 --sets-dir "$out/sets" \
  --plan bm25base_p:idst_bert_p1 --plan bm25base_p:bm25tuned_p
set_path="$out/sets/dl19/v1"
"$evalset" verify "$set_path"

step "score (DL19 runs on the frozen set): every run under the set's contract (nDCG@10, trec ties, rel level 1)"
"$evalset" score --set "$set_path" "${runs[@]}" -m ndcg@10 -m p@10 -m ap@100 | tee "$out/scores.txt"
"$evalset" score --set "$set_path" "${runs[@]}" -m ndcg@10 --format json > "$out/scores.json"
.venv/bin/python - "$out/scores.json" data/dl19/nist_summaries.json <<'EOF'
import json, sys
ours, nist = (json.load(open(path)) for path in sys.argv[1:])
gaps = {run: abs(v["ndcg@10"]["mean"] - nist[run]["trec_eval"]["ndcg_cut_10"]) for run, v in ours["runs"].items()}
equal = sum(gap <= 5e-5 for gap in gaps.values())
print(f"check: {equal}/{len(gaps)} runs equal NIST's published nDCG@10 (largest gap {max(gaps.values()):.1e})")
EOF

step "compare (on the frozen set): the two planned comparisons against the BM25 baseline"
"$evalset" compare --set "$set_path" data/dl19/runs/bm25base_p.run.gz data/dl19/runs/idst_bert_p1.run.gz \
  data/dl19/runs/bm25tuned_p.run.gz | tee "$out/compare.txt"

step "plan (the frozen set as a pilot): queries needed to settle bm25tuned_p against bm25base_p, and the cost"
"$evalset" plan power --set "$set_path" data/dl19/runs/bm25base_p.run.gz data/dl19/runs/bm25tuned_p.run.gz \
  --compare bm25base_p:bm25tuned_p --plot "$out/power.png" | tee "$out/plan.txt"
needed=$(grep -o -- '--n-queries [0-9]*' "$out/plan.txt" | head -1)  # the queries the comparison needs
"$evalset" plan cost --pool "$out/pool" $needed --seconds-per-judgment 30 --annotators 3 | tee "$out/cost.txt"

step "report (the frozen set and the runs -> $out/report.html): one self-contained HTML page"
"$evalset" report "$set_path" "${runs[@]}" --agreement "$out/agreement/agreement.json" -o "$out/report.html"

step "strata (DL19 topics -> $out/dl19-strata.tsv -> $out/sets/dl19-strata/v1): per-stratum, traffic-weighted scores and verdicts"
# The rule (scripts/dl19_strata.py): a topic of at most 4 words is "short", a longer one "long"; each stratum's
# traffic share is the share of the Excite log's submissions of that length (DL19 has no traffic of its own).
.venv/bin/python scripts/dl19_strata.py -o "$out/dl19-strata.tsv"
"$evalset" freeze data/dl19/nist.qrels --queries "$out/dl19-strata.tsv" --guideline guidelines/relevance-v2.md \
  --name dl19-strata --sets-dir "$out/sets" --plan bm25base_p:idst_bert_p1 --plan bm25base_p:bm25tuned_p
"$evalset" score --set "$out/sets/dl19-strata/v1" data/dl19/runs/{bm25base_p,bm25tuned_p,p_bert,idst_bert_p1}.run.gz \
  -m ndcg@10 | tee "$out/scores-strata.txt"
"$evalset" compare --set "$out/sets/dl19-strata/v1" data/dl19/runs/{bm25base_p,idst_bert_p1,bm25tuned_p}.run.gz \
  | tee "$out/compare-strata.txt"

step "estimate (DL19): PPI++ from Llama-3-70B's grades on all 43 topics and NIST's grades on a random slice of 10"
"$evalset" estimate select slice "$out/pool" --size 10 --seed 3 -o "$out/slice"
# NIST's grades of the slice's queries stand in for what annotators would grade in Label Studio
awk 'NR == FNR {if (FNR > 1) slice[$2]; next} $1 in slice' "$out/slice/pool.tsv" data/dl19/nist.qrels \
  > "$out/slice-nist.qrels"
"$evalset" estimate run slice data/dl19/runs/bm25base_p.run.gz data/dl19/runs/bm25tuned_p.run.gz \
  data/dl19/runs/idst_bert_p1.run.gz --llm data/dl19/llm_labels/llama-3-70b.fourprompts.qrels --human "$out/slice-nist.qrels" --slice "$out/slice" \
  --compare bm25base_p:idst_bert_p1 | tee "$out/estimate.txt"
# a set frozen from the slice's human grades and the LLM's grades of every topic: its report shows the estimates
"$evalset" freeze "$out/slice-nist.qrels" --llm data/dl19/llm_labels/llama-3-70b.fourprompts.qrels \
  --queries data/dl19/topics.tsv --guideline guidelines/relevance-v2.md --name dl19-slice --sets-dir "$out/sets" \
  --plan bm25base_p:idst_bert_p1
"$evalset" report "$out/sets/dl19-slice/v1" data/dl19/runs/{bm25base_p,bm25tuned_p,idst_bert_p1}.run.gz \
  -o "$out/report-slice.html"

if [ "$with_label_studio" = 1 ] || { [ -n "${LABEL_STUDIO_URL:-}" ] && [ -n "${LABEL_STUDIO_API_KEY:-}" ]; }; then
  if [ -z "${LABEL_STUDIO_URL:-}" ]; then
    step "label studio: starting a local server on 127.0.0.1 (the first start installs it: a few minutes)"
    eval "$(scripts/label-studio.sh start --data-dir out/label-studio)"
    echo "started; stop it with: scripts/label-studio.sh stop --data-dir out/label-studio"
    echo "the admin's e-mail and password are in out/label-studio/evalset-admin.env (readable by you alone)"
  fi
  step "push: the pool's judging tasks to Label Studio at $LABEL_STUDIO_URL, two annotators per task"
  "$evalset" push "$out/pool" --guideline guidelines/relevance-v2.md --project "DL19 demo pool" --overlap 2
  echo "annotators log in at $LABEL_STUDIO_URL and open the project 'DL19 demo pool'; then:"
  echo "  $evalset pull --project 'DL19 demo pool' --pool $out/pool --guideline guidelines/relevance-v2.md -o labels.tsv"
fi

if [ -n "${OPENAI_BASE_URL:-}" ]; then
  step "judge: the live LLM judge on the first 20 pairs through $OPENAI_BASE_URL"
  "$evalset" judge "$out/pool" --guideline guidelines/relevance-v2.md --model "${EVALSET_DEMO_MODEL:-gpt-4o-mini}" \
    --limit 20 -o "$out/llm-labels.tsv"
fi

step "artefacts"
find "$out" -maxdepth 1 -mindepth 1 | sort | sed 's/^/  /'
echo "  $set_path (the frozen set)"
