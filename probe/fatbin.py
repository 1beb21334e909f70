"""Which GPU architectures a compiled CUDA module ships code for, read from its ELF and fatbin headers alone.

Standard library only; nothing is decompressed or executed, and a file is never read whole: the ELF section
table names the fatbin sections (`.nv_fatbin`, and `__nv_relfatbin` for relocatable device code), and each
fatbin container there is walked entry by entry, reading each entry's header and seeking over its payload.

Layout (CUDA's fatbinary_section.h for the container; the entry header as cuobjdump 13.5 reads it, checked
entry by entry against `cuobjdump --list-elf --list-ptx` in bench/fatbin_vs_cuobjdump.py):
- container: `u32 magic 0xBA55ED50`, `u16 version`, `u16 header size` (16), `u64 size of what follows`;
- entry: `u16 kind` (+0x00: 1 PTX, 2 ELF cubin), `u32 header size` (+0x04), `u64 padded payload size` (+0x08;
  the next entry starts at entry + header size + this), `u16 minor`, `u16 major` (+0x18/+0x1A: the PTX ISA
  of a PTX entry), `u32 arch` (+0x1C: 80, 90, 100, 120 ...), `u64 flags` (+0x28: 0x100000 arch-specific `a`,
  0x200000 family-specific `f`, 0x2000 LZ4-compressed, 0x8000 zstd-compressed payload). The arch, its
  suffix and the PTX ISA are all in the header: compressed entries need no decompression to be listed.
- A standalone cubin (an ELF of machine EM_CUDA, 190, as flashinfer-cubin ships them): the arch is in
  `e_flags`: ABI version 7 (`e_ident[8]`) keeps it in bits 0-7 (0x800 = `a`), ABI version 8 in bits 8-15
  (0x8 = `a`). A family-specific `sm_XYf` cubin is not told apart there (cuobjdump too prints `sm=100` for
  one built with `-arch sm_100f`); `sm_XY` and `sm_XYf` SASS run on the same GPUs, so nothing is lost.
"""

from __future__ import annotations

import mmap
import os
import re
import struct
from dataclasses import dataclass, field
from typing import BinaryIO, Optional

FATBIN_MAGIC = 0xBA55ED50
_MAGIC_BYTES = struct.pack("<I", FATBIN_MAGIC)
KIND_PTX, KIND_CUBIN = 1, 2
FLAG_ARCH_SPECIFIC = 0x100000  # sm_XYa / compute_XYa
FLAG_FAMILY_SPECIFIC = 0x200000  # sm_XYf / compute_XYf
FLAG_LZ4 = 0x2000
FLAG_ZSTD = 0x8000
EM_CUDA = 190
FATBIN_SECTIONS = (".nv_fatbin", "__nv_relfatbin")
_ENTRY_HEADER = 0x40  # the bytes of an entry header read (every field used lies below 0x40)
_CONTAINER_HEADER = 16
# Bounds on what a hostile or broken file can make the reader do; each read is also bounded by the file's size,
# and each step moves forward, so the work is linear in the file and never more than these.
MAX_SECTION_HEADER = 256  # bytes per ELF64 section header (64 in every real file)
MAX_ENTRIES = 200_000  # fatbin entries in one file (a real .so: a few thousand)


class FatbinError(ValueError):
    """A file that is not an ELF this reader understands, or whose fatbin headers do not add up."""


class _TooMuch(FatbinError):
    """More entry headers than MAX_ENTRIES read in one file: a hostile file, never a real one."""


@dataclass
class Entry:
    kind: str  # "sass" (an ELF cubin) or "ptx"
    arch: str  # "sm_90a" for SASS, "compute_80" for PTX
    ptx_isa: Optional[str] = None  # "9.0", PTX entries only
    compressed: Optional[str] = None  # "lz4", "zstd" or None
    section: str = ".nv_fatbin"


@dataclass
class ModuleArchs:
    """What one compiled module ships: SASS archs, PTX archs (sorted), and how that was read."""

    sass: list[str] = field(default_factory=list)
    ptx: list[str] = field(default_factory=list)
    ptx_isa: Optional[str] = None  # the newest PTX ISA among its PTX entries (the driver must know it to JIT)
    entries: int = 0
    compressed: int = 0  # entries whose payload is compressed (listed all the same: the header is not)
    relocatable_only: list[str] = field(default_factory=list)  # archs found only in __nv_relfatbin
    unknown_kinds: int = 0
    how: str = "sections"  # "sections", "scan" (no fatbin section: the file was scanned for containers), "cubin"


def arch_name(kind: int, arch: int, flags: int) -> str:
    suffix = "a" if flags & FLAG_ARCH_SPECIFIC else "f" if flags & FLAG_FAMILY_SPECIFIC else ""
    return f"{'compute' if kind == KIND_PTX else 'sm'}_{arch}{suffix}"


def _arch_key(arch: str) -> tuple[int, str]:
    digits = "".join(ch for ch in arch.split("_", 1)[-1] if ch.isdigit())
    return int(digits or 0), arch


def summarise(entries: list[Entry], how: str) -> ModuleArchs:
    runnable = [e for e in entries if e.section != "__nv_relfatbin"]
    sass = {e.arch for e in runnable if e.kind == "sass"}
    ptx = {e.arch for e in runnable if e.kind == "ptx"}
    reloc = {e.arch for e in entries if e.section == "__nv_relfatbin"} - sass - ptx
    isas = [e.ptx_isa for e in runnable if e.kind == "ptx" and e.ptx_isa]
    newest = max(isas, key=lambda v: tuple(int(p) for p in v.split("."))) if isas else None
    return ModuleArchs(
        sass=sorted(sass, key=_arch_key),
        ptx=sorted(ptx, key=_arch_key),
        ptx_isa=newest,
        entries=len(entries),
        compressed=sum(1 for e in entries if e.compressed),
        relocatable_only=sorted(reloc, key=_arch_key),
        how=how,
    )


class _File:
    """An open file and its size, read at offsets only within it (checked first: a header claiming gigabytes never
    makes us allocate them, an offset past 2**63 never reaches seek)."""

    def __init__(self, handle: BinaryIO):
        self.handle = handle
        self.size = os.fstat(handle.fileno()).st_size

    def read_at(self, offset: int, size: int) -> bytes:
        if offset < 0 or size < 0 or offset + size > self.size:
            raise FatbinError(f"truncated at offset {offset:#x} (wanted {size} bytes)")
        self.handle.seek(offset)
        data = self.handle.read(size)
        if len(data) != size:
            raise FatbinError(f"truncated at offset {offset:#x} (wanted {size} bytes)")
        return data


def _cubin_arch(header: bytes) -> Entry:
    """The arch of a standalone cubin from its ELF header's e_flags."""
    abi = header[8]
    (flags,) = struct.unpack_from("<I", header, 0x30)
    if abi >= 8:  # CUDA 13's layout: arch in bits 8-15, feature bits below (0x8: arch-specific)
        arch, suffix = (flags >> 8) & 0xFF, "a" if flags & 0x8 else ""
    else:
        arch, suffix = flags & 0xFF, "a" if flags & 0x800 else ""
    return Entry("sass", f"sm_{arch}{suffix}", section="cubin")


def _sections(handle: _File, header: bytes) -> dict[str, tuple[int, int, int]]:
    """name -> (type, file offset, size) of each ELF64 section."""
    (shoff,) = struct.unpack_from("<Q", header, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", header, 0x3A)
    if shoff == 0 or shnum == 0:
        return {}
    if not 64 <= shentsize <= MAX_SECTION_HEADER:
        raise FatbinError(f"section header size {shentsize} is not an ELF64 one (64)")
    table = handle.read_at(shoff, shentsize * shnum)
    rows = [struct.unpack_from("<IIQQQQ", table, i * shentsize) for i in range(shnum)]  # name,type,flags,addr,off,size
    if shstrndx >= shnum:
        raise FatbinError("section name table index out of range")
    _, _, _, _, str_off, str_size = rows[shstrndx]
    names = handle.read_at(str_off, str_size)
    out = {}
    for name_off, sh_type, _, _, offset, size in rows:
        end = names.find(b"\0", name_off)
        out[names[name_off : end if end >= 0 else None].decode("latin-1")] = (sh_type, offset, size)
    return out


def _walk_containers(handle: _File, start: int, end: int, section: str, budget: list[int]) -> list[Entry]:
    """Every entry of the fatbin containers packed back to back in [start, end)."""
    entries: list[Entry] = []
    pos = start
    end = min(end, handle.size)  # a section claiming more than the file holds
    while pos + _CONTAINER_HEADER <= end:
        magic, _version, header_size, size = struct.unpack("<IHHQ", handle.read_at(pos, _CONTAINER_HEADER))
        if magic != FATBIN_MAGIC:
            if magic == 0:  # alignment padding between containers
                pos += 8
                continue
            raise FatbinError(f"{section}: no fatbin magic at {pos:#x}")
        if header_size < _CONTAINER_HEADER:  # would not move forward
            raise FatbinError(f"{section}: bad container header at {pos:#x} (size {header_size})")
        if pos + header_size + size > end:
            raise FatbinError(f"{section}: the container at {pos:#x} claims {size} bytes past the section's end")
        entries.extend(_walk_entries(handle, pos + header_size, pos + header_size + size, section, budget))
        pos += header_size + size
    return entries


def _walk_entries(handle: _File, pos: int, end: int, section: str, budget: list[int]) -> list[Entry]:
    """The entries in [pos, end); `budget[0]`: entry headers this file may still have read (shared by every walk
    of one file, failed ones too: a scan over a hostile file stays linear)."""
    entries: list[Entry] = []
    while pos + _ENTRY_HEADER <= end:
        budget[0] -= 1
        if budget[0] < 0:
            raise _TooMuch(f"{section}: more than {MAX_ENTRIES} fatbin entry headers")
        head = handle.read_at(pos, _ENTRY_HEADER)
        kind, header_size, padded = struct.unpack_from("<HxxIQ", head, 0)
        minor, major, arch = struct.unpack_from("<HHI", head, 0x18)
        (flags,) = struct.unpack_from("<Q", head, 0x28)
        if header_size < _ENTRY_HEADER or kind == 0:
            raise FatbinError(f"{section}: bad entry header at {pos:#x} (kind {kind}, size {header_size})")
        compressed = "zstd" if flags & FLAG_ZSTD else "lz4" if flags & FLAG_LZ4 else None
        if kind in (KIND_PTX, KIND_CUBIN):
            entries.append(
                Entry(
                    kind="ptx" if kind == KIND_PTX else "sass",
                    arch=arch_name(kind, arch, flags),
                    ptx_isa=f"{major}.{minor}" if kind == KIND_PTX else None,
                    compressed=compressed,
                    section=section,
                )
            )
        else:
            entries.append(Entry(kind=f"kind{kind}", arch=f"kind{kind}_{arch}", section=section))
        pos += header_size + padded
    return entries


def _scan(path: str) -> list[Entry]:
    """Fallback for an ELF without named fatbin sections (stripped section table): find each container by its
    magic. The whole file is mapped, not read; a payload is skipped once its container is parsed."""
    entries: list[Entry] = []
    with _open_regular(path) as raw:
        handle = _File(raw)
        size = handle.size
        if size == 0:
            return entries
        with mmap.mmap(raw.fileno(), 0, access=mmap.ACCESS_READ) as view:
            pos = view.find(_MAGIC_BYTES)
            budget = [MAX_ENTRIES]
            while pos >= 0:
                if pos + _CONTAINER_HEADER > size:
                    break
                _, version, header_size, payload = struct.unpack_from("<IHHQ", view, pos)
                if version == 1 and header_size == 16 and pos + 16 + payload <= size:
                    try:
                        entries.extend(_walk_entries(handle, pos + 16, pos + 16 + payload, "scan", budget))
                    except _TooMuch:
                        raise
                    except FatbinError:
                        budget[0] -= 1  # the magic bytes inside other data: not a container
                    else:
                        pos = view.find(_MAGIC_BYTES, pos + 16 + payload)
                        continue
                pos = view.find(_MAGIC_BYTES, pos + 4)
    return entries


def _open_regular(path: str) -> BinaryIO:
    """The file, opened without blocking (a FIFO named `x.so` would wait for a writer for ever); FatbinError for
    anything but a regular file (a FIFO, a device, a directory)."""
    import stat

    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise FatbinError("not a regular file")
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_entries(path: str) -> tuple[list[Entry], str]:
    """Every fatbin entry of a host ELF (or the one arch of a standalone cubin), and how they were found."""
    with _open_regular(path) as raw:
        handle = _File(raw)
        header = raw.read(64)
        if header[:4] != b"\x7fELF":
            raise FatbinError("not an ELF file")
        if len(header) < 64:
            raise FatbinError(f"a truncated ELF file ({len(header)} bytes, less than its 64-byte header)")
        if header[4] != 2 or header[5] != 1:
            raise FatbinError("not a little-endian ELF64 file")
        (machine,) = struct.unpack_from("<H", header, 0x12)
        if machine == EM_CUDA:
            return [_cubin_arch(header)], "cubin"
        sections = _sections(handle, header)
        found = [(name, sections[name]) for name in FATBIN_SECTIONS if name in sections]
        if found or sections:
            entries: list[Entry] = []
            budget = [MAX_ENTRIES]
            for name, (sh_type, offset, size) in found:
                if sh_type == 8:  # SHT_NOBITS: no bytes in the file
                    continue
                entries.extend(_walk_containers(handle, offset, offset + size, name, budget))
            return entries, "sections"
    return _scan(path), "scan"


_CUBIN_HASH_DIR = re.compile(r"/cubins/[0-9a-f]{40}/")
_BUILD_SUFFIX = re.compile(r"-[0-9a-f]{7}-[0-9a-f]{7}$")


def module_key(path: str) -> str:
    """The name a compiled file is tabled under: its path inside the wheel (site-packages relative), except the
    thousands of standalone cubins of a cubin package (flashinfer-cubin), which are grouped by kernel family: the
    content-hash directory and a family directory's build suffixes are dropped, as they change every release
    ("flashinfer_cubin/cubins/158f.../fmha/trtllm-gen/x.cubin" -> "flashinfer_cubin/fmha/trtllm-gen")."""
    path = path.replace(os.sep, "/")
    if not path.endswith(".cubin"):
        return path
    folder = os.path.dirname(_CUBIN_HASH_DIR.sub("/", path))
    return _BUILD_SUFFIX.sub("", folder).split("/include")[0]


def module_archs(path: str) -> ModuleArchs:
    """The SASS and PTX archs one `.so` (or `.cubin`) ships; FatbinError when it cannot be read as such."""
    entries, how = read_entries(path)
    return summarise(entries, how)
