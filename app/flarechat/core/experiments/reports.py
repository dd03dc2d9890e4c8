"""A run's results as figures and files: per-variant summaries, JSON, CSV, JUnit XML, HTML.

The summary per variant is its pass rate with a 95% Wilson interval, mean score, neurons and
dollars spent, and p50/p95 latency. The CSV has one row per cell (the variables, the filled
prompt, the reply, every figure and every verdict); the JUnit file one test suite per variant
and one test case per cell, so CI shows which case failed and why; the HTML page is one
self-contained file (styles inline, the pass-rate chart an inline SVG, nothing fetched).
"""

from __future__ import annotations

import csv
import html
import io
import json
import math
import re
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from xml.etree import ElementTree as ET

from flarechat.core.experiments.runner import CellResult, RunResult

__all__ = [
    "OUTPUT_SUFFIXES",
    "VariantSummary",
    "render",
    "summarise",
    "summary_table",
    "to_csv",
    "to_html",
    "to_json",
    "to_junit",
    "wilson",
    "write_output",
]

_Z95 = 1.959964
#: Characters XML 1.0 cannot hold (a reply may carry any): replaced in the JUnit file.
_NOT_XML = re.compile("[^\u0009\u000a\u000d\u0020-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
_PERCENT = 100.0


@dataclass(frozen=True, slots=True)
class VariantSummary:
    """One variant's figures over its graded cells."""

    variant: str
    model: str
    cells: int
    graded: int
    passed: int
    low: float
    high: float
    mean_score: float | None
    neurons: float
    usd: float
    p50_ms: float | None
    p95_ms: float | None
    #: with repeats: the share of cases whose repeats all passed or all failed
    stable: float | None = None
    #: with repeats: the mean over cases of the spread (population std dev) of their scores
    spread: float | None = None

    @property
    def pass_rate(self) -> float | None:
        return self.passed / self.graded if self.graded else None

    def to_json(self) -> dict[str, Any]:
        return {
            "variant": self.variant,
            "model": self.model,
            "cells": self.cells,
            "graded": self.graded,
            "passed": self.passed,
            "pass_rate": self.pass_rate,
            "interval": [self.low, self.high],
            "mean_score": self.mean_score,
            "neurons": self.neurons,
            "usd": self.usd,
            "p50_ms": self.p50_ms,
            "p95_ms": self.p95_ms,
            "stable": self.stable,
            "spread": self.spread,
        }


def wilson(passed: int, total: int) -> tuple[float, float]:
    """The 95% Wilson score interval of a pass rate (0..1; (0, 1) when nothing was graded)."""
    if total <= 0:
        return 0.0, 1.0
    rate = passed / total
    z2 = _Z95 * _Z95
    centre = (rate + z2 / (2 * total)) / (1 + z2 / total)
    spread = _Z95 * math.sqrt(rate * (1 - rate) / total + z2 / (4 * total * total))
    spread /= 1 + z2 / total
    return max(0.0, centre - spread), min(1.0, centre + spread)


def _percentile(values: Sequence[float], share: float) -> float | None:
    """The nearest-rank percentile (None for no values)."""
    if not values:
        return None
    ordered = sorted(values)
    rank = max(1, math.ceil(share * len(ordered)))
    return ordered[rank - 1]


def _stability(cells: Sequence[CellResult]) -> tuple[float | None, float | None]:
    """(share of cases whose repeats agree, mean spread of their scores) when cases repeat."""
    by_case: dict[int, list[CellResult]] = {}
    for r in cells:
        if r.passed is not None:
            by_case.setdefault(r.cell.case_index, []).append(r)
    repeated = [group for group in by_case.values() if len(group) > 1]
    if not repeated:
        return None, None
    agree = sum(1 for group in repeated if len({r.passed for r in group}) == 1)
    spreads = [statistics.pstdev(r.score or 0.0 for r in group) for group in repeated]
    return agree / len(repeated), sum(spreads) / len(spreads)


def summarise(result: RunResult) -> list[VariantSummary]:
    """A summary per variant, in the experiment's order."""
    summaries = []
    for variant in result.experiment.variants:
        cells = [r for r in result.results if r.cell.variant.name == variant.name]
        if not cells:
            continue
        graded = [r for r in cells if r.passed is not None]
        passed = sum(1 for r in graded if r.passed)
        low, high = wilson(passed, len(graded))
        scores = [r.score for r in graded if r.score is not None]
        seen = [r.observation for r in cells if r.observation is not None]
        latencies = [o.total_ms for o in seen if o.total_ms is not None]
        stable, spread = _stability(cells)
        summaries.append(
            VariantSummary(
                variant=variant.name,
                model=variant.model,
                cells=len(cells),
                graded=len(graded),
                passed=passed,
                low=low,
                high=high,
                mean_score=sum(scores) / len(scores) if scores else None,
                neurons=sum(o.neurons or 0.0 for o in seen),
                usd=sum(o.usd or 0.0 for o in seen),
                p50_ms=_percentile(latencies, 0.5),
                p95_ms=_percentile(latencies, 0.95),
                stable=stable,
                spread=spread,
            )
        )
    return summaries


def _ms(value: float | None) -> str:
    return "-" if value is None else f"{value:,.0f} ms"


def summary_table(result: RunResult) -> str:
    """The per-variant summary as aligned text (what ``flarechat eval`` prints)."""
    summaries = summarise(result)
    repeats = any(s.stable is not None for s in summaries)
    header: tuple[str, ...] = ("variant", "pass rate", "95% interval", "mean score", "cost")
    header += ("p50", "p95", "stable", "spread") if repeats else ("p50", "p95")
    rows = [header]
    for s in summaries:
        rate = "-" if s.pass_rate is None else f"{s.passed}/{s.graded} ({s.pass_rate:.0%})"
        rows.append(
            (
                s.variant,
                rate,
                f"{s.low:.0%}-{s.high:.0%}",
                "-" if s.mean_score is None else f"{s.mean_score:.2f}",
                f"${s.usd:.4f} · {s.neurons:,.1f} n",
                _ms(s.p50_ms),
                _ms(s.p95_ms),
            )
        )
        if repeats:
            rows[-1] += (
                "-" if s.stable is None else f"{s.stable:.0%}",
                "-" if s.spread is None else f"{s.spread:.2f}",
            )
    widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
    lines = [
        "  ".join(cell.ljust(widths[i]) for i, cell in enumerate(row)).rstrip() for row in rows
    ]
    return "\n".join(lines) + "\n"


def _cell_json(r: CellResult) -> dict[str, Any]:
    seen = r.observation
    return {
        "id": r.cell.id,
        "variant": r.cell.variant.name,
        "model": r.cell.variant.model,
        "case": r.cell.case_index,
        "repeat": r.cell.repeat,
        "vars": dict(r.cell.case.vars),
        "expected": r.cell.case.expected,
        "prompt": r.cell.prompt,
        "status": r.status,
        "mode": r.mode,
        "passed": r.passed,
        "score": r.score,
        "error": r.error,
        "reply": None if seen is None else seen.text,
        "ttft_ms": None if seen is None else seen.ttft_ms,
        "total_ms": None if seen is None else seen.total_ms,
        "prompt_tokens": None if seen is None else seen.prompt_tokens,
        "completion_tokens": None if seen is None else seen.completion_tokens,
        "neurons": None if seen is None else seen.neurons,
        "usd": None if seen is None else seen.usd,
        "verdicts": [v.to_json() for v in r.verdicts],
    }


def to_json(result: RunResult) -> str:
    """The whole run: its status, notes, forecast, spend, summaries and every cell."""
    document = {
        "run_id": result.run_id,
        "experiment": result.experiment.name,
        "source": result.experiment.source,
        "status": result.status,
        "notes": result.notes,
        "resets_at": None if result.resets_at is None else result.resets_at.isoformat(),
        "forecast": {
            "cells": result.forecast.cells,
            "to_send": result.forecast.to_send,
            "neurons": result.forecast.neurons,
            "usd": result.forecast.usd,
        },
        "spent": {"neurons": result.spent_neurons, "usd": result.spent_usd},
        "summary": [s.to_json() for s in summarise(result)],
        "cells": [_cell_json(r) for r in result.results],
    }
    return json.dumps(document, ensure_ascii=False, indent=2) + "\n"


_CSV_FIGURES = (
    "status",
    "mode",
    "passed",
    "score",
    "ttft_ms",
    "total_ms",
    "prompt_tokens",
    "completion_tokens",
    "neurons",
    "usd",
    "error",
)


def to_csv(result: RunResult) -> str:
    """One row per cell: ids, every variable, the filled prompt, the reply, every figure, and
    each assertion's pass/score/reason in its own columns."""
    names = list(dict.fromkeys(k for r in result.results for k in r.cell.case.vars))
    width = max((len(r.verdicts) for r in result.results), default=0)
    verdict_columns = [
        f"assert{i + 1}_{part}"
        for i in range(width)
        for part in ("type", "passed", "score", "reason")
    ]
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    ids = ("variant", "model", "case", "repeat")
    writer.writerow([*ids, *names, "expected", "prompt", "reply", *_CSV_FIGURES, *verdict_columns])
    for r in result.results:
        cell = _cell_json(r)
        verdicts: list[object] = []
        for v in r.verdicts:
            verdicts += [v.type, v.passed, v.score, v.reason]
        writer.writerow(
            [cell["variant"], cell["model"], cell["case"], cell["repeat"]]
            + [r.cell.case.vars.get(n, "") for n in names]
            + [r.cell.case.expected or "", cell["prompt"], cell["reply"] or ""]
            + ["" if cell[f] is None else cell[f] for f in _CSV_FIGURES]
            + verdicts
        )
    return out.getvalue()


def _xml(text: str | None) -> str:
    return _NOT_XML.sub("\ufffd", text or "")


def _case_name(r: CellResult) -> str:
    values = ", ".join(f"{k}={v}" for k, v in r.cell.case.vars.items())
    repeat = f" #{r.cell.repeat + 1}" if r.cell.repeat else ""
    return f"case {r.cell.case_index + 1}{repeat}: {values}"[:200]


def to_junit(result: RunResult) -> str:
    """JUnit XML: a suite per variant, a case per cell; a failed assertion is a <failure>,
    a cell that could not run an <error>, a cell not sent (stopped run) <skipped>."""
    root = ET.Element("testsuites", name=result.experiment.name)
    for summary in summarise(result):
        cells = [r for r in result.results if r.cell.variant.name == summary.variant]
        failures = sum(1 for r in cells if r.passed is False)
        errors = sum(1 for r in cells if r.status == "failed")
        skipped = sum(1 for r in cells if r.status == "not_sent")
        seconds = sum((r.observation.total_ms or 0.0) for r in cells if r.observation) / 1000
        suite = ET.SubElement(
            root,
            "testsuite",
            name=summary.variant,
            tests=str(len(cells)),
            failures=str(failures),
            errors=str(errors),
            skipped=str(skipped),
            time=f"{seconds:.3f}",
        )
        for r in cells:
            seconds = (r.observation.total_ms or 0.0) / 1000 if r.observation else 0.0
            case = ET.SubElement(
                suite,
                "testcase",
                name=_xml(_case_name(r)),
                classname=f"{result.experiment.name}.{summary.variant}",
                time=f"{seconds:.3f}",
            )
            if r.status == "failed":
                ET.SubElement(case, "error", message=_xml(r.error or "failed")).text = _xml(r.error)
            elif r.status == "not_sent":
                ET.SubElement(case, "skipped", message="not sent: the run stopped first")
            elif r.passed is False:
                failed = [v for v in r.verdicts if not v.passed]
                message = "; ".join(f"{v.type}: {v.reason}" for v in failed)
                body = "\n".join(
                    f"{v.type} (weight {v.weight:g}, score {v.score:g}): {v.reason}"
                    for v in r.verdicts
                )
                score = f"score {r.score:.2f} below {result.experiment.threshold:g}"
                failure = ET.SubElement(case, "failure", message=_xml(f"{score}: {message}"))
                failure.text = _xml(body)
            if r.observation is not None:
                ET.SubElement(case, "system-out").text = _xml(r.observation.text)
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def _chart(summaries: Sequence[VariantSummary]) -> str:
    """Pass rate per variant with its interval, as an inline SVG bar chart."""
    bar, gap, left, width = 28, 14, 180, 360
    height = len(summaries) * (bar + gap) + gap + 20
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{left + width + 70}" height="{height}" '
        'role="img" aria-label="Pass rate per variant">'
    ]
    for i, s in enumerate(summaries):
        y = gap + i * (bar + gap)
        rate = s.pass_rate or 0.0
        parts.append(
            f'<text x="{left - 8}" y="{y + bar * 0.65:.0f}" text-anchor="end">'
            f"{html.escape(s.variant)}</text>"
            f'<rect x="{left}" y="{y}" width="{width * rate:.1f}" height="{bar}" fill="#3b82f6"/>'
            f'<line x1="{left + width * s.low:.1f}" x2="{left + width * s.high:.1f}" '
            f'y1="{y + bar / 2}" y2="{y + bar / 2}" stroke="#111" stroke-width="2"/>'
            f'<text x="{left + width + 8}" y="{y + bar * 0.65:.0f}">{rate:.0%}</text>'
        )
    axis = height - 12
    parts.append(
        f'<line x1="{left}" x2="{left + width}" y1="{axis}" y2="{axis}" stroke="#888"/></svg>'
    )
    return "".join(parts)


def _stability_cells(summary: VariantSummary, repeats: bool) -> str:
    if not repeats:
        return ""
    stable = "-" if summary.stable is None else f"{summary.stable:.0%}"
    spread = "-" if summary.spread is None else f"{summary.spread:.2f}"
    return f"<td>{stable}</td><td>{spread}</td>"


_STYLE = """
body{font:14px system-ui,sans-serif;margin:2em;color:#111;background:#fff}
table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;padding:4px 8px;
vertical-align:top;text-align:left}th{background:#f3f4f6}.pass{color:#15803d}.fail{color:#b91c1c}
pre{white-space:pre-wrap;max-width:60em;margin:0}details summary{cursor:pointer}
"""


def to_html(result: RunResult) -> str:
    """One self-contained page: the summary, the pass-rate chart, and every cell's detail."""
    e = html.escape
    summaries = summarise(result)
    repeats = any(s.stable is not None for s in summaries)
    rows = "".join(
        f"<tr><td>{e(s.variant)}</td><td>{e(s.model)}</td><td>{s.passed}/{s.graded}</td>"
        f"<td>{s.low:.0%} to {s.high:.0%}</td>"
        f"<td>{'-' if s.mean_score is None else f'{s.mean_score:.2f}'}</td>"
        f"<td>${s.usd:.4f}</td><td>{s.neurons:,.1f}</td>"
        f"<td>{e(_ms(s.p50_ms))}</td><td>{e(_ms(s.p95_ms))}</td>{_stability_cells(s, repeats)}"
        "</tr>"
        for s in summaries
    )
    cells = []
    for r in result.results:
        verdict = "pass" if r.passed else "fail"
        label = {True: "pass", False: "fail", None: r.status}[r.passed]
        detail = "".join(
            f"<li class={'pass' if v.passed else 'fail'}>{e(v.type)} "
            f"(weight {v.weight:g}, score {v.score:g}): {e(v.reason)}</li>"
            for v in r.verdicts
        )
        reply = r.observation.text if r.observation else r.error or ""
        cells.append(
            f"<tr><td>{e(r.cell.variant.name)}</td><td>{e(_case_name(r))}</td>"
            f"<td class={verdict}>{e(label)}"
            f"{'' if r.score is None else f' ({r.score:.2f})'}</td>"
            f"<td><details><summary>{e(reply.splitlines()[0] if reply else '')[:120]}</summary>"
            f"<p><b>Prompt</b></p><pre>{e(r.cell.prompt)}</pre><p><b>Reply</b></p>"
            f"<pre>{e(reply)}</pre><ul>{detail}</ul></details></td></tr>"
        )
    notes = "".join(f"<li>{e(n)}</li>" for n in result.notes)
    return (
        "<!DOCTYPE html>\n<html lang=en><head><meta charset=utf-8>"
        f"<title>{e(result.experiment.name)}: experiment run</title><style>{_STYLE}</style>"
        f"</head><body><h1>{e(result.experiment.name)}</h1>"
        f"<p>Run {e(result.run_id)} · {e(result.status)} · spent ≈ "
        f"{result.spent_neurons:,.1f} neurons, ${result.spent_usd:.4f}</p><ul>{notes}</ul>"
        "<h2>Summary</h2><table><tr><th>Variant</th><th>Model</th><th>Passed</th>"
        "<th>95% interval</th><th>Mean score</th><th>Cost</th><th>Neurons</th><th>p50</th>"
        f"<th>p95</th>{'<th>Stable</th><th>Spread</th>' if repeats else ''}</tr>{rows}</table>"
        "<h3>Pass rate per variant (the line is its 95% interval)</h3>"
        f"{_chart(summaries)}"
        "<h2>Cells</h2><table><tr><th>Variant</th><th>Case</th><th>Verdict</th><th>Reply</th>"
        f"</tr>{''.join(cells)}</table></body></html>\n"
    )


#: What ``--output`` writes, by suffix.
OUTPUT_SUFFIXES: dict[str, Callable[[RunResult], str]] = {
    ".json": to_json,
    ".csv": to_csv,
    ".xml": to_junit,
    ".html": to_html,
}


def render(result: RunResult, path: Path) -> str:
    """The file ``path`` gets (its suffix picks the format); ValueError for another suffix."""
    writer = OUTPUT_SUFFIXES.get(path.suffix.lower())
    if writer is None:
        raise ValueError(f"{path}: the output must end in {', '.join(OUTPUT_SUFFIXES)}")
    return writer(result)


def write_output(result: RunResult, path: Path) -> None:
    path.write_text(render(result, path), encoding="utf-8", newline="")
