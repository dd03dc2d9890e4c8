"""The kinds of saved lab item, as the lab document names its lists (and the UI its tabs)."""

from __future__ import annotations

__all__ = ["KINDS", "PRESETS", "PROMPTS", "TEMPLATES"]

PRESETS, PROMPTS, TEMPLATES = "presets", "prompts", "templates"
KINDS = (PRESETS, PROMPTS, TEMPLATES)
