"""The names of a set's files, in one place: a version folder ``SETS/NAME/vN`` holds :data:`SET_FILES` (and, by how
it was frozen, the document sample's record or :data:`HOLES_FILE`); the set folder ``SETS/NAME`` holds
:data:`VERSIONS_FILE` and the comparison log. Loads nothing: a command checks its outputs with them before the library
loads. The reader is :mod:`evalset.io.setfolder`, the writer :mod:`evalset.sets.freezing`."""

QRELS_FILE = "qrels.txt"
"""A version's merged grades (TREC qrels)."""
QUERIES_FILE = "queries.tsv"
"""A version's queries, strata, weights and splits."""
LABELS_FILE = "labels.tsv"
"""A version's every raw judgment."""
MANIFEST_FILE = "manifest.json"
"""A version's manifest: its contract, inputs, counts and every file's sha256."""
SET_FILES = (QRELS_FILE, QUERIES_FILE, LABELS_FILE, MANIFEST_FILE)
"""The files of every version."""
HOLES_FILE = "holes.tsv"
"""A version's file when it added the graded sample of its parent's holes (``freeze grow``): the sample's table,
every pooled hole's ``pi`` and draw; the rest of its record is the manifest's ``hole_sample``."""
VERSIONS_FILE = "versions.tsv"
"""The set folder's record of each version's manifest sha256 (what ``verify`` checks a manifest against)."""
MAX_NAME_BYTES = 200
"""A set name's longest (UTF-8 bytes): a folder name, and SETS/NAME-adjudication.tsv's, within a file system's 255."""
