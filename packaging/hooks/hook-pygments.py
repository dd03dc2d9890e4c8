"""PyInstaller hook for pygments, replacing PyInstaller's own (which bundles all 250 lexers).

Bundles every formatter and style (small; the theme names its style) and only the lexer
modules for ``bundle_rules.HIGHLIGHTED_LANGUAGES`` plus whatever those import. The spec then
swaps in a lexer table listing only the bundled lexers (``bundle_rules.pygments_lexer_mapping``).
User hooks (``hookspath``) take precedence over PyInstaller's built-in ones.
"""

import bundle_rules  # on sys.path: the spec put packaging/ there
from pygments.lexers._mapping import LEXERS
from PyInstaller.utils.hooks import collect_submodules

hiddenimports = [
    *collect_submodules("pygments.formatters"),
    *collect_submodules("pygments.styles"),
    "pygments.lexers.special",  # TextLexer: the plain fallback
    *bundle_rules.pygments_lexer_modules(LEXERS),
]
