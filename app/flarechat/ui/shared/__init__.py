"""What every part of the window uses: the asyncio loop in Qt, icons, theme, text commands."""
