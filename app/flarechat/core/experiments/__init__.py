"""Experiments: variants x cases scored by assertions, run live or as batches (issue 24).

- ``spec``: the experiment as plain data (variants, cases, assertions) and its problems.
- ``loading``: reading it from YAML/JSON, cases from CSV/JSONL/JSON, checked before sending.
- ``promptfoo``: reading a promptfoo config's overlapping subset into the same data.
- ``assertions``: pure functions from a reply's observation to a verdict.
- ``budget``: the neurons and dollars a run is forecast to cost, and the cap.
- ``runner``: running the cells live or on the Batch API, each committed as it lands.
- ``reports``: a run's results as JSON, CSV, JUnit XML and a self-contained HTML page.

No Qt, no httpx, no ui here (import-linter contracts in pyproject.toml).
"""
