"""Agreement between annotators (humans and LLM judges): kappas with intervals, alpha, calibration,
system-ranking agreement and disagreements. See :func:`agreement_report`."""

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
from evalset.agreement.inputs import apply_scale, load_grades
from evalset.agreement.kappa import KAPPA_KINDS, landis_koch
from evalset.agreement.systems import ranking_agreement, system_rankings

__all__ = [
    "KAPPA_KINDS",
    "AgreementReport",
    "Annotations",
    "PairAgreement",
    "agreement_report",
    "alpha_ordinal",
    "apply_scale",
    "calibration",
    "disagreements",
    "landis_koch",
    "load_grades",
    "pair_agreements",
    "pair_confusions",
    "ranking_agreement",
    "system_rankings",
    "with_texts",
]
