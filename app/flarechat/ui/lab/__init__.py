"""The prompt lab in the window: presets, saved prompts, templates, View as code and meters."""
