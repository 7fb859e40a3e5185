"""Stratified query sampling from a query log: count, screen, stratify by traffic, sample with weights.

The pipeline has three steps; only the first and last touch every row or every query, and both exist three
times, in memory (pyarrow/pandas), in DuckDB (plain SQL, out of core) and on Spark (the same SQL), with the
same results:

1. **Group log rows** by their raw query text (and user, and the log's own stratum column), after the time
   window. The DuckDB path is one ``GROUP BY`` over the files, the same work as counting queries at all.
2. **Screen** each distinct raw text once: normalise it and drop it if empty or carrying personal data. This
   step is shared by both paths (pyarrow compute kernels over the distinct texts), so the rules exist once.
3. **Aggregate and stratify**: frequency per normalised query (submissions, or distinct users), then strata by
   cumulative traffic share.

================  ==========================================================================================
module            job
================  ==========================================================================================
``options``       the run's options (normalisation, strata, window, screening) and its results
``memory``        steps 1 and 3 in memory (``--engine pandas``), and step 1's column rules
``sql``           step 1 and step 3's counts in DuckDB (``--engine duckdb``), out of core
``spark``         the same SQL on Spark (``--engine spark``): a local session or a cluster
``screening``     step 2, shared by both engines: normalisation and PII rules
``strata``        step 3: query ids, strata by cumulative traffic share (every engine's), the canonical order
``draw``          the seeded draw per stratum and the held-out split
``stage``         the whole stage: engine choice (by log size), manifest, files
================  ==========================================================================================

Conventions
-----------
- ``query_id`` is ``"q"`` + the first 16 hex digits of the MD5 of the normalised query (of
  ``source + TAB + query`` when the log has a stratum column), so it is stable across re-sampling and engines.
- Boundary rule: within each log stratum (``source``) queries are ordered by frequency descending, then by
  ``query_id`` ascending. A query belongs to the first traffic stratum whose cut point is above the traffic
  share of all queries ordered before it (``traffic_before < cut * total``). The query that straddles a cut
  point stays in the earlier stratum; queries of equal frequency on a cut are split by ``query_id``, an order
  unrelated to their text, and the same on every run and engine.
- Dropped counts are in submissions: log lines, or the summed ``count`` of a pre-aggregated log.
- Every random choice comes from ``numpy.random.default_rng([seed, crc32(stratum name)])``: a stratum's
  sample depends only on the seed and its own candidates.
"""

from evalset.exports import lazy_exports, names

_EXPORTS = {
    "evalset.contract": ("COUNT_BY", "ENGINES"),
    "evalset.sampling.draw": ("parse_per_stratum", "sample_queries"),
    "evalset.sampling.memory": ("count_queries", "group_log_rows"),
    "evalset.sampling.options": ("DROP_REASONS", "Normalisation", "QueryCounts", "SampleResult", "Screen", "Strata",
                                 "Window"),
    "evalset.sampling.spec": ("LogLayout", "SAMPLE_RULES"),
    "evalset.sampling.screening": ("has_card_number", "luhn_valid", "normalise_texts", "screen_queries"),
    "evalset.sampling.spark": ("count_queries_spark", "spark_session"),
    "evalset.sampling.sql": ("count_queries_duckdb", "group_rows_sql", "query_frequencies_sql"),
    "evalset.sampling.stage": ("build_manifest", "choose_engine", "manifest_path", "sample_log", "write_sample"),
    "evalset.sampling.strata": ("assign_strata", "query_ids"),
}
__getattr__ = lazy_exports(__name__, _EXPORTS)
__all__ = names(_EXPORTS)
