"""The prompt lab in the window: presets, saved prompts, templates, View as code, meters,
compare (side-by-side columns, blind votes) and the leaderboard."""
