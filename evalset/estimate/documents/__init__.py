"""The document-sampled design of ``evalset estimate`` (statAP's and infNDCG's, with a calibrated LLM): the sample's
probabilities and draw (:mod:`~evalset.estimate.documents.sample`), drawn from a pool folder and written
(:mod:`~evalset.estimate.documents.select`), the per-query estimators and their linearised residuals
(:mod:`~evalset.estimate.documents.estimators`), means, differences and their two intervals
(:mod:`~evalset.estimate.documents.estimate`), the "this set" variance's floor and quantile
(:mod:`~evalset.estimate.documents.variance`), the simulation on fully judged data
(:mod:`~evalset.estimate.documents.validation`), and the command's inputs to either with the verdicts of the
comparisons (:mod:`~evalset.estimate.documents.report`).

The hole design is a document sample whose set's pairs are known, in this room: a seeded sample of a frozen set's
holes (found by :mod:`evalset.holes`) and a new system's full-judgment score (:mod:`~evalset.estimate.documents.holes`),
the sample sized per run for a precision (:mod:`~evalset.estimate.documents.holesizing`), and its validation, each
group of runs left out of the set's pool in turn (:mod:`~evalset.estimate.documents.holevalidation`). The query-slice
design (PPI++) is beside this room in :mod:`evalset.estimate`.
"""
