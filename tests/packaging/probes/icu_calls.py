"""Prints, as JSON, the result of every ICU-backed call QtCore makes, and which libicudata
the process mapped. tests/packaging runs it with the wheel's library and with the trimmed one
(``LD_PRELOAD``) and compares: a trimmed-away item Qt needs would change an answer.

The ICU services QtCore imports (``nm -D --undefined-only libQt6Core.so.6``): case mapping,
collation (QCollator), converters (QStringEncoder/QStringDecoder beyond UTF and Latin-1), and
calendars/time zones (QTimeZone ids and localised names, QLocale date-times naming a zone).
"""

from __future__ import annotations

import functools
import json
import sys
from pathlib import Path

from PySide6.QtCore import QCollator, QDateTime, QLocale, QStringDecoder, QStringEncoder, QTimeZone

WORDS = (
    "zebra",
    "Äpfel",
    "apple",
    "Ångström",
    "öl",
    "Zürich",
    "école",
    "eagle",
    "Ölberg",
    "item10",
    "item9",
)
COLLATION_LOCALES = ("de_DE", "sv_SE", "fr_FR", "tr_TR", "ja_JP", "zh_CN", "C")
CASE_LOCALES = ("tr_TR", "az_AZ", "lt_LT", "el_GR", "nl_NL", "de_DE", "en_US")
ZONES = (b"Europe/Berlin", b"America/New_York", b"Asia/Kolkata", b"Australia/Lord_Howe", b"UTC")
ZONE_LOCALES = ("en_US", "de_DE", "ja_JP", "ar_EG", "fa_IR", "hi_IN", "ru_RU", "zh_TW")
CODECS = (
    "Shift_JIS",
    "GB18030",
    "EUC-KR",
    "Big5",
    "ISO-2022-JP",
    "EUC-TW",
    "windows-1251",
    "KOI8-R",
)
#: 2023-11-14 22:13:20 UTC: standard time in the north, daylight time at Lord Howe.
WHEN = 1_700_000_000


def collation() -> dict[str, object]:
    out: dict[str, object] = {}
    for name in COLLATION_LOCALES:
        collator = QCollator(QLocale(name))
        out[f"sorted {name}"] = sorted(WORDS, key=functools.cmp_to_key(collator.compare))
        collator.setNumericMode(True)
        collator.setCaseSensitivity(collator.caseSensitivity().CaseInsensitive)
        out[f"numeric {name}"] = sorted(WORDS, key=functools.cmp_to_key(collator.compare))
    return out


def casing() -> dict[str, object]:
    return {
        f"case {name}": [
            QLocale(name).toUpper("istanbul ǆ ß ή ij"),
            QLocale(name).toLower("İSTANBUL IÌ ΣΑΣ IJ"),
        ]
        for name in CASE_LOCALES
    }


def time_zones() -> dict[str, object]:
    out: dict[str, object] = {"ids": len(QTimeZone.availableTimeZoneIds())}
    kinds = (
        QTimeZone.TimeType.StandardTime,
        QTimeZone.TimeType.DaylightTime,
        QTimeZone.TimeType.GenericTime,
    )
    names = (
        QTimeZone.NameType.LongName,
        QTimeZone.NameType.ShortName,
        QTimeZone.NameType.OffsetName,
    )
    for locale in ZONE_LOCALES:
        for zone_id in ZONES:
            zone = QTimeZone(zone_id)
            out[f"zone {locale} {zone_id.decode()}"] = [
                zone.displayName(kind, name, QLocale(locale)) for kind in kinds for name in names
            ]
        moment = QDateTime.fromSecsSinceEpoch(WHEN, QTimeZone(ZONES[0]))
        out[f"datetime {locale}"] = QLocale(locale).toString(moment, QLocale.FormatType.LongFormat)
    return out


def converters() -> dict[str, object]:
    out: dict[str, object] = {"available": sorted(QStringDecoder.availableCodecs())}
    for name in CODECS:
        encoder, decoder = QStringEncoder(name), QStringDecoder(name)
        out[f"codec {name}"] = [
            encoder.isValid(),
            decoder.isValid(),
            encoder.name(),
            decoder.name(),
        ]
    return out


def icu_data_library() -> list[str]:
    maps = Path("/proc/self/maps").read_text(encoding="utf-8").splitlines()
    return sorted({line.split()[-1] for line in maps if "libicudata" in line})


def main() -> None:
    results = {**collation(), **casing(), **time_zones(), **converters()}
    json.dump({"library": icu_data_library(), "results": results}, sys.stdout, ensure_ascii=False)


if __name__ == "__main__":
    main()
