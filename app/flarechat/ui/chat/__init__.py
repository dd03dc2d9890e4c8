"""The chat pane around the transcript: composer, banners (retry, notices), find bar, welcome."""
