"""Sentences the search view shows about a search: why a selective method trusted no forecast,
and what the generator's failed answers were. Pure functions returning HTML in which every
stored string is escaped (`workbench.ui.safe`): model answers are hostile text."""
from __future__ import annotations

import math
from typing import Any, Sequence

from workbench.search.events import FailedGenerationEvent, decode_all
from workbench.ui.safe import code, esc, pre

#: Failed generations listed (the most recent); the rest are counted.
MAX_FAILED_SHOWN = 8
#: Characters of a failed answer shown (its end: where a truncated answer stops).
MAX_ANSWER_CHARS = 3000


def trust_note(run: Any) -> str:
    """Why a selective method (`selective`, `uncertainty_aware`) has trusted no forecast in `run`
    (a `SearchRun`), as an HTML paragraph; "" when it trusted some, or the method trusts nothing
    by design (measure_all, screen_topk)."""
    method = getattr(run, "method", None)
    if method is None or not hasattr(method, "policy") or run.trusted:
        return ""
    name = code(method.name)
    history = list(run.history)
    forecaster = getattr(run, "forecaster", None)
    try:
        calibration = forecaster.calibration_set() if forecaster is not None else None
    except Exception:  # noqa: BLE001 - an explanation must not fail the page
        calibration = None
    n_cal = len(calibration[0]) if calibration is not None and len(calibration[0]) else 0
    confidences = [f.confidence for f in run.forecasts.values() if not f.abstained]
    top = max(confidences) if confidences else None
    head = f"<p class='wb-trust-note'><b>{name} trusted no forecast</b>, so every child it chose went to the GPU: "
    if getattr(method, "trust_rule", "policy") == "no_gain":
        return head + ("its no-gain rule certified no threshold on the forecaster's held-out forecasts "
                       f"({n_cal}) and this search's {len(history)} measured forecasts.</p>")
    policy = method.policy(history, calibration)
    if policy is None:
        if n_cal:
            why = (f"its conformal risk controller could not be calibrated on the forecaster's {n_cal} held-out "
                   "forecasts")
        else:
            why = (f"its selective policy is not calibrated yet: the {code(getattr(forecaster, 'name', 'none'))} "
                   f"forecaster has no held-out forecasts to calibrate on, and this search has measured "
                   f"{len(history)} of the {int(method.min_calibration)} forecasts it needs to calibrate on "
                   "its own")
        return head + why + ".</p>"
    threshold = getattr(policy, "threshold_", None)
    risk, delta = getattr(policy, "target_risk", None), getattr(policy, "delta", None)
    target = (f"at target risk {risk:g} (a trusted forecast in the wrong speedup bin; guaranteed with "
              f"probability {1 - delta:.0%})" if risk is not None and delta is not None else "")
    n = getattr(policy, "n_calibration_", n_cal + len(history))
    if threshold is None or not math.isfinite(float(threshold)) or float(threshold) > 1.0:
        return head + (f"{target} its conformal risk controller certified no confidence threshold on {n} "
                       "calibration forecasts: even the most confident ones were in the wrong bin too often.</p>")
    text = f"{target} the certified confidence threshold is {float(threshold):.3f}"
    if top is None:
        return head + text + "; no forecast of this search had a confidence (all abstained).</p>"
    if top < float(threshold):
        return head + text + f", and the most confident forecast of this search had {top:.3f}.</p>"
    gain = getattr(method, "min_gain", None)
    if gain is not None:  # uncertainty_aware: confident is not enough, the child must also promise no gain
        return head + text + (f"; forecasts that reached it each promised an expected gain of at least "
                              f"{gain:.0%} over their parent, so they were worth measuring.</p>")
    return head + text + ".</p>"


def failed_generations_html(events: Sequence) -> str:
    """The generator's failed answers of a search (the most recent first): reason, tokens and the
    model's raw answer shown literally; "" when there are none."""
    failed = [e for e in decode_all(events) if isinstance(e, FailedGenerationEvent)]
    if not failed:
        return ""
    parts = [f"<p><b>{len(failed)} failed generation(s)</b> (answers that gave no candidate; the newest "
             f"{min(len(failed), MAX_FAILED_SHOWN)} shown, as the model wrote them)</p>"]
    for e in reversed(failed[-MAX_FAILED_SHOWN:]):
        cost = (f"; {int(e.prompt_tokens)} prompt + {int(e.completion_tokens)} completion tokens, "
                f"{float(e.seconds):.1f} s" if e.completion_tokens or e.seconds else "")
        parent = f" (parent {code(e.parent_id)})" if e.parent_id else ""
        answer = e.raw[-MAX_ANSWER_CHARS:] if e.raw else "(no answer came back)"
        parts.append(f"<p class='wb-failed-reason'>step {esc(e.step)}{parent}: {esc(e.reason)}{cost}</p>"
                     + pre(answer, "wb-failed-answer"))
    return "".join(parts)

