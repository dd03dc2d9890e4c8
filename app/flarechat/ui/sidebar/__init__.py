"""The conversation list: groups, pins, rename/delete, search across chats."""
