"""Verdicts: the one place that decides what a comparison may say, from the evidence an analysis hands it.

An analysis (``compare``, ``compare --all``, ``report``, ``estimate`` of either design, ``judge recheck``) computes
figures and gathers :class:`Evidence`: the difference, the primary test's p, the interval at the family's level,
the design (units, strata, resamples, permutations, sample size), the holes' bound and the measure's range. It
never writes a verdict: :func:`decide` applies :data:`RULES` in order and the first that fires decides. The
words it prints are :data:`ESTABLISHED`, :data:`NOT_ESTABLISHED`, :data:`EXPLORATORY` and :data:`NO_VERDICT` (an
abstention, with its reason); ``tests/test_architecture.py`` holds that no other module writes them.

The rules (docs/compare.md, "How a verdict is decided", shows them as a table):

=================  ==============================================  =============================================
rule               evidence                                        printed
=================  ==============================================  =============================================
dev split          the values are of a set's ``dev`` split         ``exploratory (dev split, ...)``
exploratory        the comparison was not planned                  ``exploratory (...)``
no difference      no unit carries a value (n = 0)                 ``no verdict: no query ...``
few units          fewer than 2 units (queries, or a stratum's)    ``no verdict: ...``
too few flips      permutations P with 1 / (P + 1) >= threshold    ``no verdict: P sign flips cannot reach ...``
too few resamples  resamples R with R * threshold / 2 < 1          ``no verdict: R resamples cannot place ...``
sample too small   a document sample below its design's minimum    ``no verdict: ...``
outside range      the estimate or interval left the measure's     ``no verdict: ... clipped to [a, b]``
                   range (clipped and named)
zero width         an interval of zero width                        ``no verdict: the interval has zero width``
undefined          the p-value or the interval is undefined         ``no verdict: ... undefined``
holes could flip   a fill of the unjudged documents of the top k   ``not established: N unjudged documents ...``
                   changes the verdict (holes bounded)
p at threshold     the primary test's p >= threshold                ``not established (p = ... >= threshold)``
interval holds 0   the interval at 1 - threshold holds 0            ``not established (... holds 0)``
established        p < threshold and the interval excludes 0       ``established: candidate better or worse (...)``
=================  ==============================================  =============================================

A p-value and an interval that disagree give no verdict of a difference: both must exclude it. The direction is
the interval's side (the difference's sign when the decision rests on a p alone).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from evalset.params import minimum_resamples

ESTABLISHED = "established"
NOT_ESTABLISHED = "not established"
EXPLORATORY = "exploratory"
NO_VERDICT = "no verdict"
WORDS = (ESTABLISHED, NOT_ESTABLISHED, EXPLORATORY, NO_VERDICT)


@dataclass(frozen=True)
class HoleBound:
    """The holes' bound of a comparison: ``unjudged`` documents in ``place`` (e.g. ``the candidate's top 10``),
    whether a fill of them ``could_flip`` the verdict, and whether the verdict keeps them as judged (``policy``:
    ``bounded``, or ``accepted`` / ``condensed``, which keep the verdict as judged and say so elsewhere)."""

    unjudged: int
    place: str
    could_flip: bool
    policy: str = "bounded"


@dataclass(frozen=True)
class Evidence:
    """What a verdict rests on. Differences are candidate minus baseline.

    ``p`` is the primary test's p-value (NaN: the decision rests on the interval alone) and ``test`` how it is
    named (``p``, ``t-test p``, ``adjusted p``); ``low, high`` the interval at level ``1 - threshold`` (NaN: none)
    and ``interval`` its name (``BCa interval``, ``PPI++ interval``); ``n`` the units the test rests on;
    ``strata`` each stratum's units; ``permutations`` and ``resamples`` the design's draws (None: not drawn);
    ``holes`` the holes' bound (None: none or not bounded); ``clipped`` what left the measure's range and was
    clipped to it (``""``: nothing); ``design`` a reason the design cannot support a verdict, said by the
    analysis that knows it (e.g. a document sample below its minimum; ``""``: none). ``interval_decides``: whether
    the interval must exclude 0 beside the test (the default, and always where there is no p) or only describes
    the difference; ``min_effect`` the smallest gap worth the change, which an established verdict is read
    against (None: none asked).
    """

    estimate: float
    threshold: float
    kind: str = "planned"
    split: str | None = None
    p: float = math.nan
    test: str = "p"
    low: float = math.nan
    high: float = math.nan
    interval: str = "interval"
    n: int | None = None
    strata: dict[str, int] = field(default_factory=dict)
    permutations: int | None = None
    resamples: int | None = None
    holes: HoleBound | None = None
    clipped: str = ""
    design: str = ""
    interval_decides: bool = True
    min_effect: float | None = None

    @property
    def has_interval(self) -> bool:
        return not (math.isnan(self.low) and math.isnan(self.high))

    @property
    def interval_rules(self) -> bool:
        """Whether the interval decides (module docstring): asked to, or nothing else can."""
        return self.has_interval and (self.interval_decides or not self.has_p)

    @property
    def has_p(self) -> bool:
        return not math.isnan(self.p)


@dataclass(frozen=True)
class Verdict:
    """A decision: its ``word`` (one of :data:`WORDS`), the ``rule`` that fired, the ``text`` printed, and whether
    a difference is ``established``."""

    word: str
    rule: str
    text: str

    @property
    def established(self) -> bool:
        return self.word == ESTABLISHED

    @property
    def short(self) -> str:
        """The word, and the rule where it is not the plain outcome of the test (a table's cell):
        ``established``, ``not established``, ``not established: holes could flip``, ``no verdict: zero width``."""
        plain = self.rule in ("established", "p at threshold", "interval holds 0", "exploratory")
        return self.word if plain else f"{self.word}: {self.rule}"

    @property
    def css(self) -> str:
        """The word as an HTML class (``not-established``)."""
        return css_class(self.word)

    def to_dict(self) -> dict[str, Any]:
        return {"word": self.word, "rule": self.rule, "text": self.text}


def css_class(word: str) -> str:
    """A verdict word (:data:`WORDS`) as an HTML class: ``not established`` -> ``not-established``."""
    return word.replace(" ", "-")


@dataclass(frozen=True)
class Rule:
    """One rule: its ``name``, the ``evidence`` it reads and what it ``prints`` (the README's table), and ``fires``:
    the verdict text when it applies, else None."""

    name: str
    word: str
    evidence: str
    prints: str
    fires: Callable[[Evidence], str | None]


def _p(value: float) -> str:
    return "undef" if value is None or math.isnan(value) else f"{value:.4g}"


def _test(e: Evidence) -> str:
    """``p = 0.01`` or ``PPI++ interval at 0.95 ...``: what the decision rests on, for an exploratory verdict."""
    return f"{e.test} = {_p(e.p)}" if e.has_p else f"{e.interval} at {1 - e.threshold:.4g}"


def minimum_permutations(threshold: float) -> int:
    """The fewest sign flips P whose smallest p-value, 1 / (P + 1), is below ``threshold``."""
    return math.floor(1 / threshold)


def _dev(e: Evidence) -> str | None:
    if e.split == "dev":
        return f"{EXPLORATORY} (dev split, {_test(e)}): the dev split is for tuning, never {ESTABLISHED}"
    return None


def _exploratory(e: Evidence) -> str | None:
    if e.kind == "exploratory":
        return f"{EXPLORATORY} ({_test(e)}): a lead for a planned comparison, never {ESTABLISHED}"
    return None


def _no_units(e: Evidence) -> str | None:
    if e.n == 0:
        return f"{NO_VERDICT}: no query has a value for both runs"
    return None


def _few_units(e: Evidence) -> str | None:
    if e.n is not None and e.n < 2:
        return f"{NO_VERDICT}: a difference on {e.n} query cannot be told from chance"
    small = {name: size for name, size in e.strata.items() if size < 2}
    if small:
        named = ", ".join(f"{name} ({size} {'query' if size == 1 else 'queries'})" for name, size in small.items())
        return (f"{NO_VERDICT}: stratum {named} cannot carry an interval (a stratum needs 2 queries or more: merge "
                "it with a neighbour in the queries file)")
    return None


def _flips(e: Evidence) -> str | None:
    if e.permutations is not None and e.has_p and e.permutations < minimum_permutations(e.threshold):
        return (f"{NO_VERDICT}: {e.permutations} sign flips cannot reach p < {e.threshold:.4g} (the smallest p they "
                f"give is {1 / (e.permutations + 1):.4g}); give at least {minimum_permutations(e.threshold)}")
    return None


def _resamples(e: Evidence) -> str | None:
    if e.resamples is not None and e.resamples < minimum_resamples(e.threshold):
        return (f"{NO_VERDICT}: {e.resamples} resamples cannot place the ends of a {1 - e.threshold:.4g} interval "
                f"(none falls beyond them); give at least {minimum_resamples(e.threshold)}")
    return None


def _design(e: Evidence) -> str | None:
    return f"{NO_VERDICT}: {e.design}" if e.design else None


def _clipped(e: Evidence) -> str | None:
    return f"{NO_VERDICT}: {e.clipped}" if e.clipped else None


def _zero_width(e: Evidence) -> str | None:
    if e.has_interval and e.low == e.high:
        return (f"{NO_VERDICT}: the {e.interval} has zero width ({e.low:+.4f}): every resample gave the same "
                "difference, which says nothing of its spread")
    return None


def _undefined(e: Evidence) -> str | None:
    if not e.has_p and not e.has_interval:
        return f"{NO_VERDICT}: neither a p-value nor an interval is defined"
    if e.has_interval and (math.isnan(e.low) or math.isnan(e.high)):
        return f"{NO_VERDICT}: the {e.interval} is undefined"
    return None


def _holes(e: Evidence) -> str | None:
    if e.holes is None or not e.holes.could_flip or e.holes.policy != "bounded" or not _excluded(e):
        return None
    return (f"{NOT_ESTABLISHED}: {e.holes.unjudged} unjudged documents in {e.holes.place} could flip it (judge "
            "them, or a sample of them: evalset holes -o DIR)")


def _interval_holds_zero(e: Evidence) -> str | None:
    if e.interval_rules and e.low <= 0 <= e.high:
        rests = f"{e.test} = {_p(e.p)}, " if e.has_p else ""
        return f"{NOT_ESTABLISHED} ({rests}{e.interval} at {1 - e.threshold:.4g} holds 0)"
    return None


def _p_at_threshold(e: Evidence) -> str | None:
    if e.has_p and not e.p < e.threshold:
        return f"{NOT_ESTABLISHED} ({e.test} = {_p(e.p)} >= {e.threshold:.4g})"
    return None


def _established(e: Evidence) -> str | None:
    positive = e.low > 0 if e.interval_rules else e.estimate > 0
    rests = (f"{e.test} = {_p(e.p)} < {e.threshold:.4g}" if e.has_p
             else f"{e.interval} at {1 - e.threshold:.4g} excludes 0")
    return f"{ESTABLISHED}: candidate {'better' if positive else 'worse'} ({rests}){_gap(e, positive)}"


def _gap(e: Evidence, positive: bool) -> str:
    """An established difference read against the smallest gap worth the change: at least it (the interval's near
    end reaches it), below it (its far end does not), or not shown to reach it (the interval holds it); the estimate
    alone where there is no interval."""
    if e.min_effect is None:
        return ""
    gap, sign = e.min_effect, 1 if positive else -1
    near, far = sorted((sign * e.low, sign * e.high)) if e.has_interval else (sign * e.estimate,) * 2
    where = f"{e.interval} [{e.low:+.4f}, {e.high:+.4f}]" if e.has_interval else f"estimate {e.estimate:+.4f}"
    if near >= gap:
        return f"; at least {gap:g}, the smallest gap worth the change ({where})"
    if far < gap:
        return f"; but below {gap:g}, the smallest gap worth the change ({where})"
    return f"; not shown to reach {gap:g}, the smallest gap worth the change ({where} holds it)"


def _excluded(e: Evidence) -> bool:
    """Whether the evidence as judged excludes a zero difference (the holes' rule applies only then)."""
    p_says = not e.has_p or e.p < e.threshold
    interval_says = not e.interval_rules or not e.low <= 0 <= e.high
    return p_says and interval_says


RULES: tuple[Rule, ...] = (
    Rule("dev split", EXPLORATORY, "the values are of a set's dev split", "exploratory (dev split, ...)", _dev),
    Rule("exploratory", EXPLORATORY, "the comparison was not planned (off the set's plan, or not on its headline)",
         "exploratory (...)", _exploratory),
    Rule("no queries", NO_VERDICT, "no query has a value for both runs", "no verdict: no query ...", _no_units),
    Rule("few queries", NO_VERDICT, "fewer than 2 queries, or a stratum of fewer than 2",
         "no verdict: ... cannot be told from chance / cannot carry an interval", _few_units),
    Rule("too few flips", NO_VERDICT, "P sign flips whose smallest p, 1 / (P + 1), is not below the threshold",
         "no verdict: P sign flips cannot reach p < threshold", _flips),
    Rule("too few resamples", NO_VERDICT, "R resamples with R x threshold / 2 < 1",
         "no verdict: R resamples cannot place the ends ...", _resamples),
    Rule("design", NO_VERDICT, "a design below its minimum (a document sample too small for its estimator)",
         "no verdict: the reason", _design),
    Rule("outside range", NO_VERDICT, "an estimate or interval outside the measure's range (clipped to it)",
         "no verdict: ... clipped to [a, b]", _clipped),
    Rule("zero width", NO_VERDICT, "an interval of zero width", "no verdict: the interval has zero width",
         _zero_width),
    Rule("undefined", NO_VERDICT, "an undefined p-value or interval", "no verdict: ... undefined", _undefined),
    Rule("holes could flip", NOT_ESTABLISHED, "the holes' bound at depth k (bounded, the default): a fill of the "
         "unjudged documents changes the outcome", "not established: N unjudged documents in ... could flip it",
         _holes),
    Rule("p at threshold", NOT_ESTABLISHED, "the primary test's p >= threshold",
         "not established (p = ... >= threshold)", _p_at_threshold),
    Rule("interval holds 0", NOT_ESTABLISHED, "the interval at level 1 - threshold holds 0 (where it decides: by "
         "default, and wherever there is no p)", "not established (... interval at level holds 0)",
         _interval_holds_zero),
    Rule("established", ESTABLISHED, "p < threshold and the interval excludes 0 (where it decides); read against "
         "the smallest gap worth the change when one is given", "established: candidate better or worse (...)[; at "
         "least / but below / not shown to reach D]", _established),
)


def comparison_kind(exploratory: bool, split: str) -> str:
    """``planned`` or ``exploratory``: a comparison is exploratory when it is declared so, or when it is made on
    the dev split (which is for tuning: never a difference, whatever its plan)."""
    return "exploratory" if exploratory or split == "dev" else "planned"


def outcome(mean: float, p: float, threshold: float) -> str:
    """What a mean difference and its p-value say at ``threshold``, the plain outcome a filled hole can flip:
    ``candidate better`` or ``candidate worse`` (p below the threshold, a mean off 0), else ``no significant
    difference``. The verdict itself, with its reasons, is :func:`decide`'s."""
    if math.isfinite(p) and p < threshold and mean != 0:
        return "candidate better" if mean > 0 else "candidate worse"
    return "no significant difference"


def decide(evidence: Evidence) -> Verdict:
    """The verdict of ``evidence``: the first rule of :data:`RULES` that fires."""
    for rule in RULES:
        text = rule.fires(evidence)
        if text is not None:
            return Verdict(rule.word, rule.name, text)
    raise AssertionError("the last rule always fires")  # pragma: no cover


@dataclass(frozen=True)
class Bounded:
    """An estimate and its interval kept inside a measure's range: ``clipped`` names what was clipped (``""``:
    nothing); an :class:`Evidence` carrying it gives no verdict."""

    estimate: float
    low: float
    high: float
    clipped: str = ""


def bounded(estimate: float, low: float, high: float, limits: tuple[float, float], what: str = "") -> Bounded:
    """``estimate, low, high`` clipped to ``limits`` (a measure's range, or ``[-w, w]`` for a difference), and
    what was clipped, named (``what``: e.g. ``the estimate of run A``)."""
    lower, upper = limits
    parts = []
    if not math.isnan(estimate) and not lower <= estimate <= upper:
        parts.append(f"the estimate {estimate:.4f}")
    if (not math.isnan(low) and low < lower) or (not math.isnan(high) and high > upper):
        parts.append(f"the interval [{low:.4f}, {high:.4f}]")
    if not parts:
        return Bounded(estimate, low, high)
    def clip(value: float) -> float:
        return value if math.isnan(value) else min(max(value, lower), upper)

    said = (f"{' and '.join(parts)}{' of ' + what if what else ''} left the measure's range, clipped to "
            f"[{lower:g}, {upper:g}]")
    return Bounded(clip(estimate), clip(low), clip(high), said)
