"""The prompt lab, free of Qt: presets, the system-prompt library, prompt templates, their
storage in the profile and in exports, and a sent reply's request as code.

Layout: ``presets``, ``prompt_library``, ``templates`` (the items; ``variables``: a template's
``{{names}}`` in a text), ``library`` (the shelves holding them), ``kinds`` (their names),
``documents`` (as plain data), ``migrations`` (its versions), ``storage`` (the profile file),
``exchange`` (export and import), ``request_view`` (View as code); ``compare`` (a compare
run), ``compare_export``, ``votes`` (blind votes) and ``leaderboard`` (their ratings).
"""
