"""TREC lines split into fields: the layouts of runs and qrels, the line-by-line whitespace split that names a
malformed line, trec_eval 10's comment lines, and fields shifted by a space inside a query id.

Conventions
-----------
- A comment line is one whose first non-blank character is ``#`` (trec_eval 10.0 reads them so, in runs and in
  qrels): skipped like a blank line, counted, and the other lines keep their numbers in the file.
- Fields are split at ASCII whitespace (C's ``isspace``, as trec_eval reads them): white space at either end of a
  line is no field, and a non-breaking space is part of an id.
- Blank lines are skipped; a line with the wrong number of fields is refused with its number and text.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from evalset.errors import InputError, quoted
from evalset.io.files import BEIR_QRELS_HEADER

COMMENT_LINES = "comment_lines"
"""The key counting comment lines: in a parsed table's schema metadata, in a frame's ``attrs``."""


@dataclass(frozen=True)
class Layout:
    """A whitespace-separated line format: its field names, the ones kept, and whether extra fields are allowed."""

    fields: tuple[str, ...]
    keep: tuple[str, ...]
    extra_fields: bool  # trec_eval ignores text after a run line's tag
    shifted_marker: str = ""  # the usual second field: seen as a doc id, the line's fields are shifted
    header: tuple[str, ...] = ()  # a first line naming the fields (BEIR's qrels), skipped

    @property
    def text(self) -> str:
        return " ".join(self.fields)


RUN_LAYOUT = Layout(("qid", "Q0", "docid", "rank", "score", "tag"), ("qid", "docid", "rank", "score"), True, "Q0")


QRELS_LAYOUT = Layout(("qid", "0", "docid", "grade"), ("qid", "docid", "grade"), False)


BEIR_QRELS_LAYOUT = Layout(("qid", "docid", "grade"), ("qid", "docid", "grade"), False,
                            header=BEIR_QRELS_HEADER)


def split_lines(lines: pa.Array, layout: Layout, path: str, first_line: int = 1) -> pa.Table:
    """Whitespace-split ``lines`` (one string per line, the first being line ``first_line`` of ``path``) into
    ``layout``'s kept fields and ``line_no``; raises InputError on a malformed line. Blank lines and comment lines
    are skipped, the comment lines counted in the table's schema metadata (:func:`comment_lines`)."""
    trimmed = pc.ascii_trim_whitespace(lines)
    fields = pc.ascii_split_whitespace(trimmed)
    counts = pc.list_value_length(fields).to_numpy(zero_copy_only=False).copy()
    counts[pc.equal(trimmed, "").to_numpy(zero_copy_only=False)] = 0  # blank lines
    comment = pc.starts_with(trimmed, "#").to_numpy(zero_copy_only=False)
    counts[comment] = 0
    width = len(layout.fields)
    allowed = counts >= width if layout.extra_fields else counts == width
    bad = np.flatnonzero(~allowed & (counts != 0))
    if bad.size:
        row = int(bad[0])
        raise InputError(f"expected {width} whitespace-separated fields `{layout.text}`, found {counts[row]}: "
                         f"{quoted(lines[row].as_py())}", path, row + first_line)
    nonblank = np.flatnonzero(counts != 0)
    fields = fields.take(pa.array(nonblank))
    columns = {name: pc.list_element(fields, layout.fields.index(name)) for name in layout.keep}
    if layout.shifted_marker:
        _refuse_shifted(lines.take(pa.array(nonblank)), fields, counts[nonblank], nonblank + first_line, layout,
                        path)
    table = pa.table(columns | {"line_no": pa.array(nonblank + first_line)})
    return table.replace_schema_metadata({COMMENT_LINES: str(int(comment.sum()))})


def comment_lines(table: pa.Table) -> int:
    """The comment lines :func:`split_lines` skipped to make ``table`` (0 for a table parsed otherwise: the fast
    parse takes no file with a comment line)."""
    return int((table.schema.metadata or {}).get(COMMENT_LINES.encode(), 0))


def has_comment(query_ids: pa.Array | pa.ChunkedArray) -> bool:
    """Whether a fast parse's query ids hold a comment line (one whose first field starts with ``#``): such a
    file is parsed line by line, where comments are skipped and counted."""
    return len(query_ids) > 0 and bool(pc.any(pc.starts_with(query_ids, "#")).as_py())


def _refuse_shifted(lines: pa.Array, fields: pa.Array, counts: np.ndarray, line_no: np.ndarray, layout: Layout,
                    path: str) -> None:
    """Refuse a line whose fields are shifted by a space inside the query id (``19 335 Q0 8412 1 12.5 tag``
    reads as query ``19``, document ``Q0``): its document id is ``Q0``, or it has more fields than most lines
    and its document id is what most lines hold as their second field. Columnar (arrow kernels), no loop."""
    docid = pc.list_element(fields, layout.fields.index("docid"))
    shifted = pc.equal(docid, layout.shifted_marker).to_numpy(zero_copy_only=False)
    usual_width = int(np.bincount(counts).argmax()) if len(counts) else 0
    wider = counts > usual_width
    if wider.any():
        second = pc.list_element(fields, 1)
        counted = pc.value_counts(second.filter(pa.array(~wider)))  # the distinct second fields: few
        if len(counted):
            usual_second = counted[int(np.argmax(counted.field("counts").to_numpy()))]["values"].as_py()
            shifted |= wider & pc.equal(docid, usual_second).to_numpy(zero_copy_only=False)
    if shifted.any():
        row = int(np.flatnonzero(shifted)[0])
        raise InputError(f"fields shifted: the document id is {quoted(docid[row].as_py())}, a run's usual second "
                         f"field (is there a space in the query id?); expected `{layout.text}`, found {counts[row]} "
                         "fields: "
                         f"{quoted(lines[row].as_py())}", path, int(line_no[row]))
