"""A smaller ``libicudata``: ICU's common data without the trees Qt never reads (Linux bundle).

PySide6's Linux wheels link QtCore against ICU, whose data library (``libicudata.so.NN``,
32 MB) holds every ICU service's data in one "common data" package exported as the symbol
``icudtNN_dat``. QtCore calls only four ICU services (``nm -D --undefined-only
libQt6Core.so.6``): case mapping (``u_strToUpper/Lower``), converters (``ucnv_*``, for
``QStringConverter`` codecs beyond UTF/Latin-1), collation (``ucol_*``, ``QCollator``) and
calendars/time zones (``ucal_open``, ``ucal_getCanonicalTimeZoneID``,
``ucal_getTimeZoneDisplayName``: ``QTimeZone`` names). The trees below are read only by
other services (break iteration, measure units, currency and locale display names,
transliteration, spelled-out numbers, character names), so they are left out; every other
item is copied byte for byte, in the original (sorted) order ICU's binary search needs.

The trimmed package goes back into a library with the same soname and symbol, built with
binutils' ``as`` and ``ld`` (binutils is already needed: PyInstaller strips with it).
``ICU_DATA`` alone cannot do this: libicuuc links ``libicudata`` for the ``icudtNN_dat``
symbol, so the 32 MB library ships whatever the variable says; a stub library plus a trimmed
``.dat`` found through ``ICU_DATA`` would be the same size with one more moving part.
tests/packaging runs Qt's ICU calls against both libraries and compares the results.
"""

from __future__ import annotations

import re
import struct
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "DROPPED_ITEMS",
    "DROPPED_TREES",
    "CommonData",
    "common_data_bytes",
    "read_common_data",
    "trim",
    "trimmed_library",
    "write_library",
]

#: ICU data trees (``icudt73l/<tree>/…``) no ICU service QtCore calls ever opens.
DROPPED_TREES = frozenset({"brkitr", "curr", "lang", "rbnf", "region", "translit", "unit"})
#: Single items likewise unused: Unicode character names (``u_charName``).
DROPPED_ITEMS = frozenset({"unames.icu"})
_SYMBOL = re.compile(r"^icudt\d+_dat$")
_COMMON_DATA_FORMAT = b"CmnD"
_MAGIC = b"\xda\x27"
#: Items in a common data package start on 16-byte boundaries (ICU's package writer).
_ALIGN = 16
_PAD = b"\xaa"
_TOC_ENTRY = struct.Struct("<II")
_COUNT = struct.Struct("<I")
_SHT_NOBITS = 8


@dataclass(frozen=True, slots=True)
class CommonData:
    """One ICU common data package: its header, and its items by full name, in ToC order."""

    header: bytes
    items: tuple[tuple[str, bytes], ...]

    @classmethod
    def parse(cls, data: bytes) -> CommonData:
        header_size = struct.unpack_from("<H", data, 0)[0]
        if data[2:4] != _MAGIC or data[12:16] != _COMMON_DATA_FORMAT:
            raise ValueError("not an ICU common data package (CmnD)")
        body = data[header_size:]
        (count,) = _COUNT.unpack_from(body, 0)
        entries = [
            _TOC_ENTRY.unpack_from(body, _COUNT.size + i * _TOC_ENTRY.size) for i in range(count)
        ]
        ends = [offset for _name, offset in entries[1:]] + [len(body)]
        items = tuple(
            (body[name : body.index(b"\0", name)].decode("ascii"), body[offset:end])
            for (name, offset), end in zip(entries, ends, strict=True)
        )
        return cls(header=data[:header_size], items=items)

    def pack(self) -> bytes:
        """The package as ICU reads it: header, count, ToC, names, then 16-aligned items."""
        names = b"".join(name.encode("ascii") + b"\0" for name, _data in self.items)
        toc_size = _COUNT.size + len(self.items) * _TOC_ENTRY.size
        offset = _aligned(toc_size + len(names))
        name_offset = toc_size
        toc = [_COUNT.pack(len(self.items))]
        chunks: list[bytes] = []
        for name, data in self.items:
            toc.append(_TOC_ENTRY.pack(name_offset, offset))
            name_offset += len(name) + 1
            chunks.append(data.ljust(_aligned(len(data)), _PAD))
            offset += len(chunks[-1])
        head = b"".join(toc) + names
        return self.header + head.ljust(_aligned(len(head)), _PAD) + b"".join(chunks)


def _aligned(size: int) -> int:
    return -(-size // _ALIGN) * _ALIGN


def _item_is_kept(name: str) -> bool:
    parts = name.split("/")  # "icudt73l/zone/de.res", "icudt73l/cnvalias.icu"
    if len(parts) > 2 and parts[1] in DROPPED_TREES:
        return False
    return parts[-1] not in DROPPED_ITEMS


def trim(package: CommonData) -> CommonData:
    """``package`` without the dropped trees and items."""
    kept = tuple(item for item in package.items if _item_is_kept(item[0]))
    return CommonData(header=package.header, items=kept)


def _symbol(library: Path) -> tuple[str, int, int]:
    """(name, virtual address, size) of the ``icudtNN_dat`` symbol ``library`` exports."""
    out = subprocess.run(
        ["nm", "-D", "-S", "--defined-only", str(library)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    for line in out.splitlines():
        fields = line.split()
        if len(fields) == 4 and _SYMBOL.match(fields[3]):
            return fields[3], int(fields[0], 16), int(fields[1], 16)
    raise ValueError(f"{library} exports no icudtNN_dat symbol")


def _file_offset(image: bytes, address: int) -> int:
    """The file offset of virtual ``address`` in an ELF64 little-endian ``image``."""
    shoff = struct.unpack_from("<Q", image, 0x28)[0]
    entsize, count = struct.unpack_from("<HH", image, 0x3A)
    for index in range(count):
        _name, kind, _flags, start, offset, size = struct.unpack_from(
            "<IIQQQQ", image, shoff + index * entsize
        )
        no_bits = kind == _SHT_NOBITS  # .bss has no bytes in the file
        if not no_bits and start <= address < start + size:
            return int(address - start + offset)
    raise ValueError(f"address {address:#x} is in no section")


def common_data_bytes(library: Path) -> tuple[str, bytes]:
    """The exported symbol's name and the bytes of the common data package it points at."""
    name, address, size = _symbol(library)
    image = library.read_bytes()
    start = _file_offset(image, address)
    return name, image[start : start + size]


def read_common_data(library: Path) -> tuple[str, CommonData]:
    """The exported symbol's name and the common data package ``library`` carries."""
    name, data = common_data_bytes(library)
    return name, CommonData.parse(data)


def _soname(library: Path) -> str:
    out = subprocess.run(
        ["readelf", "-d", str(library)], capture_output=True, text=True, check=True
    ).stdout
    match = re.search(r"\(SONAME\)\s+Library soname: \[([^\]]+)\]", out)
    return match.group(1) if match else library.name


def write_library(data: bytes, *, symbol: str, soname: str, out: Path) -> Path:
    """A data-only shared library exporting ``data`` as ``symbol`` (what libicudata is)."""
    with tempfile.TemporaryDirectory() as tmp:
        blob, source, obj = Path(tmp, "data.bin"), Path(tmp, "data.s"), Path(tmp, "data.o")
        blob.write_bytes(data)
        source.write_text(
            "\t.section .rodata\n"
            f"\t.globl {symbol}\n\t.type {symbol}, @object\n\t.balign {_ALIGN}\n"
            f'{symbol}:\n\t.incbin "{blob}"\n\t.size {symbol}, . - {symbol}\n'
            '\t.section .note.GNU-stack,"",@progbits\n',
            encoding="ascii",
        )
        subprocess.run(["as", "-o", str(obj), str(source)], check=True)
        out.parent.mkdir(parents=True, exist_ok=True)
        command = ["ld", "-shared", "--build-id=none", "-z", "noexecstack", "-soname", soname]
        subprocess.run([*command, "-o", str(out), str(obj)], check=True)
    return out


def trimmed_library(library: Path, *, out_dir: Path) -> Path:
    """``library`` (a libicudata) rebuilt under ``out_dir`` with the trimmed package."""
    symbol, package = read_common_data(library)
    out = out_dir / library.name
    return write_library(trim(package).pack(), symbol=symbol, soname=_soname(library), out=out)
