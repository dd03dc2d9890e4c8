"""Settings and secrets: the JSON settings file, validators, environment overrides, the keychain.

Import the submodules directly (``flarechat.settings.resolve.resolve``, ``...store.SettingsStore``,
``...secrets``). Nothing is re-exported here: a re-exported ``resolve`` function would shadow the
``resolve`` module, and importing this package must not load keyring (only ``secrets`` does).
"""
