"""Time push of 5,000 tasks and pull of 5,000 annotations against a running Label Studio.

    eval "$(scripts/label-studio.sh start --port 8090 --data-dir /tmp/ls-bench)"
    export LABEL_STUDIO_URL LABEL_STUDIO_API_KEY
    PYTHONPATH=. python scripts/bench_labelstudio.py [--pairs 5000] [--list-tasks]

The pool is real: the first N judged DL19 pairs (NIST qrels) with their MS MARCO passages, in a seeded judging
order. Push is timed twice (the second adds nothing). For the pull, a second project gets the same tasks imported
with one annotation each (the NIST grade, by a user created for the benchmark), because this Label Studio
edition has no bulk annotation endpoint; pull then reads them through an export snapshot. ``--list-tasks`` also
times listing the tasks page by page, the slow path pull avoids. ``--json PATH`` also writes the figures as one
record (``scripts/benchlib.py``).
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import sys
import tempfile
import time
import uuid
from pathlib import Path

import benchlib
import numpy as np

from evalset import labelstudio
from evalset.io.annotations import write_labels
from evalset.io.guideline import read_guideline
from evalset.io.trec import read_qrels
from evalset.pooling import pair_id

REPO = Path(__file__).resolve().parents[1]
DL19 = REPO.parent / "shared" / "data" / "dl19"


def make_pool(folder: Path, pairs: int, seed: int = 0) -> list[dict]:
    qrels = read_qrels(DL19 / "qrels.txt").head(pairs)
    topics = dict(line.split("\t", 1) for line in (DL19 / "topics.tsv").read_text().splitlines())
    wanted = set(qrels["doc_id"])
    with gzip.open(DL19 / "passages.jsonl.gz", "rt", encoding="utf-8") as handle:
        texts = {r["doc_id"]: r["text"] for r in map(json.loads, handle) if r["doc_id"] in wanted}
    order = np.random.default_rng(seed).permutation(len(qrels))
    rows = [{"pair_id": pair_id(q, d), "query_id": q, "doc_id": d, "query": topics[q], "text": texts[d],
             "grade": int(g), "order": int(o)} for (q, d, g), o in zip(qrels.itertuples(index=False), order,
                                                                      strict=True)]
    rows.sort(key=lambda row: row["order"])
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / "pool.tsv", "w") as handle:
        handle.write("pair_id\tquery_id\tdoc_id\torder\n")
        handle.writelines(f"{r['pair_id']}\t{r['query_id']}\t{r['doc_id']}\t{r['order']}\n" for r in rows)
    with open(folder / "tasks.jsonl", "w") as handle:
        handle.writelines(json.dumps({k: r[k] for k in ("pair_id", "query_id", "doc_id", "query", "text")}) + "\n"
                          for r in rows)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=5000)
    parser.add_argument("--list-tasks", action="store_true")
    benchlib.add_option(parser)
    args = parser.parse_args()
    record = benchlib.recorder(args, "bench_labelstudio", benchlib.case(benchlib.changed(args, parser, ["pairs"])))
    record.inputs(DL19 / "qrels.txt", DL19 / "topics.tsv", DL19 / "passages.jsonl.gz",
                  REPO / "guidelines" / "relevance-v2.md")
    guideline = read_guideline(REPO / "guidelines" / "relevance-v2.md")
    client = labelstudio.connect()
    run = uuid.uuid4().hex[:6]
    print(f"{time.strftime('%Y-%m-%d %H:%M %Z')}, {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f}")
    with tempfile.TemporaryDirectory() as tmp:
        rows = make_pool(Path(tmp) / "pool", args.pairs)
        started = time.perf_counter()
        first = labelstudio.push(client, Path(tmp) / "pool", guideline, f"bench push {run}", progress=False)
        push_s = time.perf_counter() - started
        started = time.perf_counter()
        again = labelstudio.push(client, Path(tmp) / "pool", guideline, f"bench push {run}", progress=False)
        repush_s = time.perf_counter() - started
        print(f"push {first.added} tasks: {push_s:.1f} s; push again ({again.added} added): {repush_s:.1f} s")

        user = client.users.create(username=f"bench-{run}", email=f"bench-{run}@example.org")
        project, _ = labelstudio.ensure_project(client, f"bench pull {run}", guideline, overlap=1)
        for start in range(0, len(rows), 500):
            client.projects.import_tasks(id=project.id, request=[
                {"data": {k: r[k] for k in labelstudio.TASK_DATA_FIELDS},
                 "annotations": [{"completed_by": user.id, "result": [
                     {"from_name": "grade", "to_name": "text", "type": "choices",
                      "value": {"choices": [str(r["grade"])]}}]}]}
                for r in rows[start:start + 500]])
        started = time.perf_counter()
        labels, report = labelstudio.pull(client, f"bench pull {run}", Path(tmp) / "pool", guideline)
        write_labels(labels, Path(tmp) / "labels.tsv")
        pull_s = time.perf_counter() - started
        print(f"pull {report.annotations} annotations -> {report.labels} labels: {pull_s:.1f} s; "
              f"load average {os.getloadavg()[0]:.2f}")
        if again.added or report.labels != len(rows) or \
                sorted(labels["grade"].tolist()) != sorted(r["grade"] for r in rows):
            sys.exit(f"check FAILED: the second push added {again.added}; pull gave {report.labels} labels of "
                     f"{len(rows)} tasks, grades equal: {sorted(labels['grade']) == sorted(r['grade'] for r in rows)}")
        print(f"check: the second push added nothing; the {len(rows):,} pulled grades are the ones entered")
        record.add("push wall time", push_s, "s")
        record.add("push again (0 added) wall time", repush_s, "s")
        record.add("pull wall time", pull_s, "s")
        if args.list_tasks:
            started = time.perf_counter()
            listed = sum(1 for _ in client.tasks.list(project=project.id, fields="all", page_size=100))
            list_s = time.perf_counter() - started
            print(f"list {listed} tasks page by page (the path pull avoids): {list_s:.1f} s")
            record.add("listing the tasks page by page wall time", list_s, "s")
    record.write()


if __name__ == "__main__":
    try:
        main()
    except labelstudio.LabelStudioError as exc:  # no server, a dead one, a wrong key: one line, no traceback
        print(f"bench_labelstudio: {exc}", file=sys.stderr)
        sys.exit(2)
