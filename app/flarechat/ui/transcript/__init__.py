"""The conversation view: message widgets, paging, Markdown, and where streamed text is painted."""
