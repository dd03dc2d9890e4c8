"""The experiments room: a run's results grid and a cell's detail (issue #24)."""
