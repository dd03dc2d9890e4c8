"""Which system libraries a Linux bundle needs from the host, and whether Depends covers them.

    python packaging/linux/host_libs.py BUNDLE_DIR                  # list soname -> package
    python packaging/linux/host_libs.py BUNDLE_DIR --depends "..."  # exit 1 if one is missing
    ... --depends "..." --allow-unowned   # a soname no installed package owns only warns

Reads the ``NEEDED`` entries of every ELF file in the bundle (``readelf -d``, binutils), drops
the ones the bundle carries itself, and maps the rest to Debian packages with ``dpkg -S``.
``build_deb.sh`` runs the check so a Depends line can never fall behind the bundle (with
``--allow-unowned``: the build machine need not have every runtime library installed);
``ci_deb_roundtrip.sh`` runs it again, strictly, once apt has installed the package's Depends.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path

ELF_MAGIC = b"\x7fELF"
_NEEDED = re.compile(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]")


def elf_files(bundle: Path) -> Iterator[Path]:
    """Every regular ELF file under ``bundle`` (symbolic links are skipped)."""
    for path in sorted(bundle.rglob("*")):
        if path.is_symlink() or not path.is_file():
            continue
        with path.open("rb") as handle:
            if handle.read(len(ELF_MAGIC)) == ELF_MAGIC:
                yield path


def needed_sonames(path: Path) -> set[str]:
    """The ``NEEDED`` sonames of one ELF file."""
    out = subprocess.run(
        ["readelf", "-d", str(path)], capture_output=True, text=True, check=True
    ).stdout
    return set(_NEEDED.findall(out))


def host_sonames(bundle: Path) -> dict[str, set[str]]:
    """Sonames needed by the bundle but not shipped in it, each with the files that need it."""
    shipped = {path.name for path in bundle.rglob("*")}
    wanted: dict[str, set[str]] = {}
    for path in elf_files(bundle):
        for soname in needed_sonames(path) - shipped:
            wanted.setdefault(soname, set()).add(str(path.relative_to(bundle)))
    return wanted


def package_of(soname: str) -> str | None:
    """The installed Debian package that owns ``soname`` (``None`` if no package does)."""
    result = subprocess.run(["dpkg", "-S", f"*/{soname}"], capture_output=True, text=True)
    if result.returncode != 0:
        return None
    first = result.stdout.splitlines()[0]
    return first.split(":", 1)[0].split(",")[0].strip()


def depends_names(depends: str) -> set[str]:
    """Package names in a Depends field (every alternative, versions and arch dropped)."""
    names = set()
    for clause in depends.split(","):
        for alternative in clause.split("|"):
            name = re.split(r"[\s(:]", alternative.strip(), maxsplit=1)[0]
            if name:
                names.add(name)
    return names


def uncovered(packages: dict[str, str | None], depends: str) -> tuple[list[str], list[str]]:
    """(problems, unowned): sonames whose package is missing from ``depends``, and sonames
    that no installed package owns (so they cannot be checked here)."""
    allowed = depends_names(depends)
    problems, unowned = [], []
    for soname, package in sorted(packages.items()):
        if package is None:
            unowned.append(f"{soname}: no installed package provides it")
        elif package not in allowed:
            problems.append(f"{soname}: package {package} is not in Depends")
    return problems, unowned


def _report(packages: dict[str, str | None], users: dict[str, set[str]]) -> Iterable[str]:
    for soname, package in sorted(packages.items(), key=lambda item: (item[1] or "", item[0])):
        example = sorted(users[soname])[0]
        yield f"{package or '?':<24} {soname:<28} (e.g. {example})\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("bundle", type=Path, help="the onedir bundle (dist/flarechat)")
    parser.add_argument("--depends", help="a Depends value to check against")
    parser.add_argument(
        "--allow-unowned",
        action="store_true",
        help="only warn about sonames that no installed package owns",
    )
    args = parser.parse_args(argv)
    users = host_sonames(args.bundle)
    packages = {soname: package_of(soname) for soname in users}
    if args.depends is None:
        sys.stdout.writelines(_report(packages, users))
        return 0
    problems, unowned = uncovered(packages, args.depends)
    if not args.allow_unowned:
        problems += unowned
    else:
        for line in unowned:
            sys.stderr.write(f"host_libs: warning: {line}\n")
    for line in problems:
        sys.stderr.write(f"host_libs: {line}\n")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
