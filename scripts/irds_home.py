"""Fill an ir_datasets cache (``IR_DATASETS_HOME``) from ../shared/data, in the layout ir_datasets reads, so that its
own code reads TREC DL 2019 with no network: the files it would download, put where it keeps them.

- ``msmarco-passage/trec-dl-2019/qrels``: NIST's 2019qrels-pass.txt (data/dl19/qrels.txt is that file: same md5,
  2f4be390198da108f6845c822e5ada14);
- ``msmarco-passage/trec-dl-2019/queries.tsv``: the 43 judged topics (data/dl19/topics.tsv; the 157 unjudged of the
  full test set are not shipped, so ``msmarco-passage/trec-dl-2019`` lacks them and ``.../judged`` is whole);
- ``msmarco-passage/collection.tsv``: the 19,383 passages of data/dl19/passages.jsonl.gz (the pooled ones; the
  collection's other 8.8 million are not shipped), and ``msmarco-passage/irds_version.txt`` (``v2``: the
  passages' encoding already fixed, so that its migration keeps the file); then ir_datasets builds its docs store
  from them (``docs_store().build()``, in a process of its own: ir_datasets fixes its cache folder on import), as
  it would on first use.

Usage: ``python scripts/irds_home.py DIR`` (then ``IR_DATASETS_HOME=DIR``; with the Python that has ir_datasets);
tests/io/test_irds.py calls ``fill``.
"""

from __future__ import annotations

import gzip
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data" / "dl19"


def fill(home: Path, shared: Path = SHARED) -> Path:
    """Fill ``home`` (created) as the module docstring says; returns it."""
    dl19 = home / "msmarco-passage" / "trec-dl-2019"
    dl19.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(shared / "qrels.txt", dl19 / "qrels")
    shutil.copyfile(shared / "topics.tsv", dl19 / "queries.tsv")
    with gzip.open(shared / "passages.jsonl.gz", "rt", encoding="utf-8") as lines, \
            open(home / "msmarco-passage" / "collection.tsv", "w", encoding="utf-8") as out:
        for line in lines:
            passage = json.loads(line)
            out.write(f"{passage['doc_id']}\t{passage['text']}\n")
    (home / "msmarco-passage" / "irds_version.txt").write_text("v2")
    build = "import ir_datasets; ir_datasets.load('msmarco-passage').docs_store().build()"
    subprocess.run([sys.executable, "-c", build], env={**os.environ, "IR_DATASETS_HOME": str(home)}, check=True,
                   capture_output=True, timeout=600)
    return home


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: python scripts/irds_home.py DIR")
    fill(Path(sys.argv[1]))
