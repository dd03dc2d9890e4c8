"""The main window: layout, menus, toolbar, status bar and its dialogs."""
