"""What the window offers for what models can do: images, JSON replies, tools, reasoning,
LoRA and licence terms (widgets, dialog pages and the chat pane's hooks)."""
