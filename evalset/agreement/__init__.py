"""Agreement between annotators (humans and LLM judges): kappas with intervals, alpha, calibration,
system-ranking agreement and each LLM judge's favouritism of runs, disagreements, and each annotator's quality.
See :func:`analyse_agreement` (the command's result, from its inputs) and :func:`agreement_report` (the statistics
of a grades table)."""

from evalset.agreement.analysis import (
    AgreementReport,
    Annotations,
    PairAgreement,
    agreement_report,
    alpha_ordinal,
    calibration,
    disagreements,
    pair_agreements,
    pair_confusions,
    with_texts,
)
from evalset.agreement.annotators import AnnotatorQuality, annotator_quality
from evalset.agreement.favouritism import Favouritism, favouritism, favouritism_pairs
from evalset.agreement.inputs import load_grades
from evalset.agreement.kappa import KAPPA_KINDS, landis_koch
from evalset.agreement.result import Agreement, analyse_agreement
from evalset.agreement.systems import ranking_agreement, system_rankings
from evalset.judgments.scale import apply_scale

__all__ = [
    "KAPPA_KINDS",
    "Agreement",
    "AgreementReport",
    "Annotations",
    "AnnotatorQuality",
    "Favouritism",
    "PairAgreement",
    "agreement_report",
    "alpha_ordinal",
    "analyse_agreement",
    "annotator_quality",
    "apply_scale",
    "calibration",
    "disagreements",
    "favouritism",
    "favouritism_pairs",
    "landis_koch",
    "load_grades",
    "pair_agreements",
    "pair_confusions",
    "ranking_agreement",
    "system_rankings",
    "with_texts",
]
