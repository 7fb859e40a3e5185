"""``evalset pool``: judging pools from several systems' runs, and the pool folder.

- :mod:`evalset.pooling.topk`: every system's top k per query, as codes; a big run file read for its top k only.
- :mod:`evalset.pooling.pool`: the union of the systems' top k, pair ids, judge-the-holes, the budget, the blind
  judging order, per-system statistics (the conventions are in its docstring).
- :mod:`evalset.pooling.folder`: the pool specification (TOML or options), building from it, writing the folder,
  the summary.
- :mod:`evalset.pooling.contributions`: the depth-k pool of the runs that made a set, what each run (or group)
  alone contributed to it, the qrels without those contributions (reusability's leave-out, the hole sample's
  leave-one-group-out simulation); imported by name, not loaded with the package.
"""

from evalset.exports import lazy_exports, names

_EXPORTS = {
    "evalset.pooling.folder": ("POOL_FILES", "PoolBuild", "PoolSpec", "build_from_spec", "pool_files",
                               "pool_manifest", "write_pool"),
    "evalset.pooling.pool": ("PAIR_ID_DIGITS", "Pool", "UnknownQueriesError", "apply_budget", "attach_texts",
                             "build_pool", "judging_order", "pair_id", "pair_ids"),
    "evalset.pooling.topk": ("TopK", "collect_top_k", "read_top_k", "stack_top_k"),
}
__getattr__ = lazy_exports(__name__, _EXPORTS)
__all__ = names(_EXPORTS)
