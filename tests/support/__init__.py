"""Helpers shared across the test trees: ``from support.<module> import ...`` (tests/ is on
sys.path, as pytest puts the rootdir conftest's folder there)."""
