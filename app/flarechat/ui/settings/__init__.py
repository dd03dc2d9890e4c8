"""The settings dialog and per-conversation options: pages, fields, validation."""
