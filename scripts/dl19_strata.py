"""Give the 43 TREC DL 2019 topics strata and traffic shares, for the demo's per-stratum, traffic-weighted scoring.

DL19 has no traffic of its own. The rule: a topic of at most 4 words is ``short``, a longer one ``long``; each
stratum's share is the share of the Excite log's non-empty submissions (third field) of that length. Every topic
is in the test split. Writes a ``queries.tsv`` that ``evalset freeze --queries`` reads (frequency and weight are
filled in by freeze).

    python scripts/dl19_strata.py [--log data/querylog/excite-small.log] [--topics data/dl19/topics.tsv] -o FILE
"""

from __future__ import annotations

import argparse
import csv


def stratum(query: str) -> str:
    return "short" if len(query.split()) <= 4 else "long"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--log", default="data/querylog/excite-small.log")
    parser.add_argument("--topics", default="data/dl19/topics.tsv")
    parser.add_argument("-o", "--output", required=True)
    options = parser.parse_args()
    submissions = {"short": 0, "long": 0}
    with open(options.log, encoding="utf-8") as lines:
        for line in lines:
            fields = line.rstrip("\n").split("\t")
            if len(fields) > 2 and fields[2].strip():
                submissions[stratum(fields[2])] += 1
    share = {name: count / sum(submissions.values()) for name, count in submissions.items()}
    with open(options.topics, encoding="utf-8") as lines:
        rows = [line.rstrip("\n").split("\t", 1) for line in lines if line.strip()]
    with open(options.output, "w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle, delimiter="\t", lineterminator="\n")
        writer.writerow(["query_id", "query", "stratum", "stratum_share", "split"])
        writer.writerows([qid, query, stratum(query), f"{share[stratum(query)]:.4f}", "test"] for qid, query in rows)
    counts = {name: sum(stratum(query) == name for _, query in rows) for name in share}
    print(f"short (<= 4 words): {counts['short']} topics, {share['short']:.1%} of the Excite log's "
          f"{sum(submissions.values()):,} submissions; long (5+ words): {counts['long']} topics, {share['long']:.1%}; "
          f"wrote {options.output}")

if __name__ == "__main__":
    main()
