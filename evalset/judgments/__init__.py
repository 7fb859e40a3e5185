"""Judgments: the grades of several annotators, read from labels tables and TREC qrels and merged into one grade
per (query, document). Every stage that reads or merges grades (agreement, estimate, freeze, quality) does it
here, so that one input gets one treatment.

=============  ====================================================================================================
module         what it holds
=============  ====================================================================================================
``reading``    the one reader of grades: a file holding no judgment refused with one message, one annotator's
               repeats settled by one rule (``--conflicting-grades refuse|latest|first``)
``registry``   the registry of merge rules (median, majority, annotator-priority, crowd-kit's), each with its tie
               rule
``rules``      one grade per pair under a rule and a named tie policy (``unresolved`` or ``low``)
``crowd``      crowd-kit's models (Dawid-Skene, one-coin, MACE, GLAD) over the labels table
``mace``       crowd-kit's MACE as a numpy EM giving its grades bit for bit (``crowd`` fits ``mace`` with it)
``merging``    a frozen set's merge: the rule, LLM labels, the largest gap, adjudication, excluded annotators
``revisions``  grades revised or withdrawn upstream between two labels tables, followed by each judgment's source
``gold``       gold tasks: the gold file read, gold mixed blind into a push, the gold answers a pull finds (the
               annotators' scores against them: :mod:`evalset.quality.gold`)
=============  ====================================================================================================

The files themselves are parsed in :mod:`evalset.io.annotations` (``read_annotations``, ``settle_repeats``,
``is_labels_table``).
"""

from evalset.exports import lazy_exports, names

_EXPORTS = {
    "evalset.judgments.crowd": ("Aggregate", "CrowdFrame", "aggregate", "crowd_frame", "crowd_model",
                                "crowdkit_version"),
    "evalset.judgments.merging": ("MergeResult", "merge_grades"),
    "evalset.judgments.spec": ("MergePolicy",),
    "evalset.judgments.reading": ("Reading", "read_grades", "read_judgments"),
    "evalset.judgments.registry": ("RULES", "MergeRule", "merge_rule"),
    "evalset.judgments.rules": ("TIE_POLICIES", "PairGrades", "TiePolicy", "pair_grades"),
}
__getattr__ = lazy_exports(__name__, _EXPORTS)
__all__ = names(_EXPORTS)
