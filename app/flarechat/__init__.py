"""Flarechat: a desktop chat client for Cloudflare Workers AI and AI Gateway."""

__version__ = "0.1.0"
__all__ = ["__version__"]
