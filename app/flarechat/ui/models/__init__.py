"""The model picker: toolbar button, searchable popup, catalogue list and badges."""
