"""The native part of the static check (static_check.py has the rules in words): every ELF file of
a candidate's folder, parsed here with ``struct`` (no dependency), for the libraries it asks the
loader for and the symbols it expects from them.

The dynamic segment is read as the loader reads it (program headers, ``PT_DYNAMIC``, addresses
mapped through ``PT_LOAD``), and the section headers too where present; the number of dynamic
symbols is the most the hash tables and relocations reach, so no symbol hides past a short hash
table. Every read is bounds-checked and counted against a budget, so a malformed or hostile file
gives a finding, never an exception or a long stall.
"""

from __future__ import annotations

import fnmatch
import mmap
import os
import re
import struct
from typing import Dict, List, Set, Tuple

from .static_names import finding

_BAD_LIBRARIES = ("libtorch*", "libc10*", "libshm*", "libopenblas*", "libblas*", "libcblas*", "liblapack*",
                  "libmkl*", "libdnnl*", "libmkldnn*", "libpython*", "libcublas*", "libcudnn*", "libcufft*",
                  "libcusparse*", "libcurand*", "libcusolver*", "libnumpy*", "libblis*", "libflexiblas*",
                  "libxsmm*", "libatlas*", "libsatlas*", "libtatlas*", "libf77blas*", "libarmpl*", "libgsl*",
                  "libfftw*", "libnpp*", "libcutensor*", "libmagma*", "libonnxruntime*", "libtensorflow*",
                  "libopencv*", "libxnnpack*", "*.cpython-*", "*.abi3.so*")
_BAD_SYMBOL_PREFIXES = ("Py", "_Py", "cblas_", "LAPACKE_", "_ZN2at", "_ZNK2at", "_ZN3c10", "_ZNK3c10",
                        "_ZN5torch", "_ZNK5torch", "mkl_", "MKL_", "dnnl_", "mkldnn_", "openblas_", "bli_",
                        "libxsmm_", "cublas", "cudnn", "cufft", "cusparse", "curand", "cusolver", "aoti_torch",
                        "THP", "_ZN6caffe2", "_ZNK6caffe2", "_ZN4dnnl", "_ZNK4dnnl", "_ZN6mkldnn", "_ZNK6mkldnn",
                        "fftw", "gsl_")
_LOADER_SYMBOLS = frozenset({"dlopen", "dlmopen", "dlsym", "dlvsym", "__libc_dlopen_mode", "__libc_dlsym",
                             "__libc_dlvsym", "_dl_sym", "dl_iterate_phdr", "_dl_find_object"})
# Fortran BLAS: {s,d,c,z} x these, the i?amax/i?amin family, mixed-precision and half names.
_BLAS_BASE = ("asum axpy axpby copy dot dotc dotu nrm2 rot rotg rotm rotmg scal swap gemv gbmv hemv hbmv hpmv "
              "symv sbmv spmv trmv tbmv tpmv trsv tbsv tpsv ger geru gerc her hpr her2 hpr2 syr spr syr2 spr2 "
              "gemm gemmt gemm3m symm hemm syrk herk syr2k her2k trmm trsm omatcopy imatcopy").split()
_BLAS_NAMES = frozenset({p + b for p in "sdcz" for b in _BLAS_BASE}
                        | {"i" + p + m for p in "sdcz" for m in ("amax", "amin")}
                        | {"scasum", "dzasum", "scnrm2", "dznrm2", "csscal", "zdscal", "csrot", "zdrot", "sdsdot",
                           "dsdot", "hgemm", "sbgemm", "shgemm", "bgemm", "sbgemv", "sbdot", "sgemm_direct",
                           "xerbla", "lsame"})
_LAPACK = re.compile(r"^[sdcz](ge|gb|gt|po|pp|pb|pt|sy|sp|he|hp|tr|tp|tb|or|op|un|up|st|hs|bd|gg|tg|la|ds)"
                     r"[a-z0-9]{2,4}_$")

# Reads (header entries, symbols, relocations, names) all ELF files of one candidate may take.
_MAX_READS = 2_000_000
_MAX_NAME = 4096


def _is_blas_symbol(name: str) -> bool:
    if _LAPACK.match(name):
        return True
    base = name
    for suffix in ("_64_", "64_", "_64", "_"):
        if base.endswith(suffix):
            base = base[: -len(suffix)]
            break
    return base in _BLAS_NAMES


def is_elf(path: str) -> bool:
    """True when the file starts with the ELF magic bytes."""
    try:
        with open(path, "rb") as f:
            return f.read(4) == b"\x7fELF"
    except OSError:
        return False


class _ElfError(Exception):
    """The file is not well-formed: the message says where."""


class _ElfForeign(_ElfError):
    """A well-formed ELF file of another class or byte order than this machine's."""


class _ElfTooLarge(_ElfError):
    """The budget of reads ran out."""


class ElfBudget:
    """How many more reads the ELF files of one candidate may take (headers, symbols, relocations,
    names): a hostile file with a million section headers over one symbol table is refused, not
    walked for minutes."""

    def __init__(self, reads: int = _MAX_READS) -> None:
        self.total = reads
        self.left = reads


class _Elf:
    """A read-only view of an ELF64 little-endian file; every read is bounds-checked and counted."""

    def __init__(self, data: "mmap.mmap | bytes", budget: ElfBudget) -> None:
        self.data = data
        self.size = len(data)
        self.budget = budget

    def _spend(self) -> None:
        self.budget.left -= 1
        if self.budget.left < 0:
            raise _ElfTooLarge(f"it takes more than {self.budget.total} reads, with the other native files "
                               "of the folder")

    def unpack(self, fmt: str, offset: int, what: str) -> Tuple[int, ...]:
        self._spend()
        if offset < 0 or offset + struct.calcsize(fmt) > self.size:
            raise _ElfError(f"{what} lies outside the file")
        return struct.unpack_from(fmt, self.data, offset)

    def cstr(self, offset: int, end: int, what: str) -> str:
        self._spend()
        end = min(end, self.size)
        if offset < 0 or offset >= end:
            raise _ElfError(f"{what} lies outside its string table")
        stop = self.data.find(b"\x00", offset, min(end, offset + _MAX_NAME))
        if stop < 0:
            raise _ElfError(f"{what} is not terminated within {_MAX_NAME} bytes")
        return bytes(self.data[offset:stop]).decode("utf-8", "replace")


def check_elf(folder: str, rel: str, budget: ElfBudget) -> List[dict]:
    """Findings for the ELF file ``rel`` of ``folder``."""
    path = os.path.join(folder, rel)
    try:
        with open(path, "rb") as f:
            try:
                data: "mmap.mmap | bytes" = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
            except (ValueError, OSError):
                data = f.read()
    except OSError as exc:
        return [finding(folder, rel, None, "ELF", f"{rel} cannot be read ({exc.strerror})")]
    try:
        found = _elf_names(data, budget)
    except _ElfForeign as exc:
        return [finding(folder, rel, None, "ELF",
                        f"{rel} is {exc}: native code is checked before it is loaded, and only 64-bit "
                        "little-endian ELF files (this machine's) can be; rebuild it for this machine")]
    except _ElfTooLarge as exc:
        return [finding(folder, rel, None, "ELF",
                        f"{rel} is too large to check ({exc}): a kernel's native code is small; ship only "
                        "the kernel's own library")]
    except _ElfError as exc:
        return [finding(folder, rel, None, "ELF",
                        f"{rel} is not a well-formed 64-bit little-endian ELF file ({exc}): native code is "
                        "checked before it is loaded, and this file cannot be; rebuild it for this machine")]
    finally:
        if isinstance(data, mmap.mmap):
            data.close()
    out: List[dict] = []
    for lib in sorted(found.libraries):
        base = os.path.basename(lib)
        if any(fnmatch.fnmatchcase(base, p) for p in _BAD_LIBRARIES):
            out.append(finding(folder, rel, None, base,
                               f"{rel} links {base}: a kernel may not link torch, Python or a math library "
                               "(BLAS, LAPACK, oneDNN, cuBLAS...): the computation must be the kernel's own code"))
    for soname in sorted(found.sonames):
        if any(fnmatch.fnmatchcase(os.path.basename(soname), p) for p in _BAD_LIBRARIES):
            out.append(finding(folder, rel, None, soname,
                               f"{rel} is {soname} (its own name says so): a copy of torch, Python or a math "
                               "library is not the kernel's own code"))
    for sym in sorted(found.provided):
        if sym.startswith(_BAD_SYMBOL_PREFIXES) or _is_blas_symbol(sym):
            out.append(finding(folder, rel, None, sym,
                               f"{rel} provides {sym}, a function of torch, Python or a math library: a copy of "
                               "such a library (or a Python extension module) is not the kernel's own code"))
    for sym in sorted(found.needed):
        if sym in _LOADER_SYMBOLS:
            out.append(finding(folder, rel, None, sym,
                               f"{rel} calls {sym}: loading libraries or looking symbols up at run time is "
                               "refused (it could reach torch or a BLAS); link what the kernel needs when it "
                               "is built"))
        elif sym.startswith(_BAD_SYMBOL_PREFIXES) or _is_blas_symbol(sym):
            out.append(finding(folder, rel, None, sym,
                               f"{rel} calls {sym}, a function of torch, Python or a math library (an undefined "
                               "symbol it expects another library to provide): the computation must be the "
                               "kernel's own code"))
    return out


class _Names:
    """What an ELF file names: libraries it asks the loader for, its own names (DT_SONAME), the
    symbols it needs from others (undefined) and those it provides (defined, global or weak)."""

    def __init__(self) -> None:
        self.libraries: Set[str] = set()
        self.sonames: Set[str] = set()
        self.needed: Set[str] = set()
        self.provided: Set[str] = set()

    def symbol(self, elf: _Elf, info: int, shndx: int, name_at: int, end: int) -> None:
        if shndx == 0:
            self.needed.add(elf.cstr(name_at, end, "a symbol name"))
        elif info >> 4 in (1, 2, 10):  # GLOBAL, WEAK, GNU_UNIQUE
            self.provided.add(elf.cstr(name_at, end, "a symbol name"))


def _elf_names(data: "mmap.mmap | bytes", budget: ElfBudget) -> _Names:
    """The names of an ELF file, from the dynamic segment and, where present, the section headers."""
    elf = _Elf(data, budget)
    if elf.size < 16:
        raise _ElfError("the identification bytes are cut off")
    ei_class, ei_data = data[4], data[5]
    if ei_class == 1:
        raise _ElfForeign("a 32-bit ELF file")
    if ei_class != 2:
        raise _ElfError(f"unknown ELF class {ei_class}")
    if ei_data == 2:
        raise _ElfForeign("a big-endian ELF file")
    if ei_data != 1:
        raise _ElfError(f"unknown byte order {ei_data}")
    (_type, _machine, _version, _entry, phoff, shoff, _flags, _ehsize, phentsize, phnum, shentsize, shnum,
     _shstrndx) = elf.unpack("<HHIQQQIHHHHHH", 16, "the ELF header")
    loads: List[Tuple[int, int, int]] = []
    dynamic: List[Tuple[int, int]] = []
    if phnum:
        if phentsize < 56:
            raise _ElfError("program header entries are too small")
        for i in range(phnum):
            p_type, _fl, p_offset, p_vaddr, _pa, p_filesz, _memsz, _align = elf.unpack(
                "<IIQQQQQQ", phoff + i * phentsize, "a program header")
            if p_type == 1:
                loads.append((p_vaddr, p_offset, p_filesz))
            elif p_type == 2:
                dynamic.append((p_offset, p_filesz))
    found = _Names()
    for offset, size in dynamic:
        _dynamic_names(elf, loads, offset, size, found)
    if shoff:
        _section_names(elf, shoff, shentsize, shnum, found)
    return found


def _to_offset(loads: List[Tuple[int, int, int]], vaddr: int, what: str) -> int:
    for start, offset, size in loads:
        if start <= vaddr < start + size:
            return offset + (vaddr - start)
    raise _ElfError(f"{what} is in no loaded segment")


_DT_LIBRARY_TAGS = (1, 0x7ffffffd, 0x7fffffff, 0x6ffffefc, 0x6ffffefb)  # NEEDED, AUXILIARY, FILTER, AUDIT, DEPAUDIT
_DT_SONAME = 14


def _dynamic_names(elf: _Elf, loads: List[Tuple[int, int, int]], offset: int, size: int, found: _Names) -> None:
    tags: Dict[int, int] = {}
    names: List[Tuple[int, int]] = []
    for i in range(size // 16):
        tag, value = elf.unpack("<qQ", offset + 16 * i, "the dynamic section")
        if tag == 0:
            break
        if tag in _DT_LIBRARY_TAGS or tag == _DT_SONAME:
            names.append((tag, value))
        else:
            tags.setdefault(tag, value)
    if 5 not in tags:  # DT_STRTAB
        if names:
            raise _ElfError("the dynamic section names libraries but has no string table")
        return
    strtab = _to_offset(loads, tags[5], "the dynamic string table")
    strend = strtab + tags.get(10, elf.size)  # DT_STRSZ
    for tag, value in names:
        name = elf.cstr(strtab + value, strend, "a library name")
        (found.sonames if tag == _DT_SONAME else found.libraries).add(name)
    if 6 not in tags:  # DT_SYMTAB
        return
    symtab = _to_offset(loads, tags[6], "the dynamic symbol table")
    syment = tags.get(11, 24)
    if syment < 24:
        raise _ElfError("dynamic symbol entries are too small")
    count = _symbol_count(elf, loads, tags)
    if symtab + count * syment > elf.size:
        raise _ElfError("the dynamic symbol table runs past the end of the file")
    for i in range(count):
        st_name, st_info, _other, st_shndx, _value, _size = elf.unpack("<IBBHQQ", symtab + i * syment, "a symbol")
        if st_name:
            found.symbol(elf, st_info, st_shndx, strtab + st_name, strend)


def _symbol_count(elf: _Elf, loads: List[Tuple[int, int, int]], tags: Dict[int, int]) -> int:
    """Symbols of the dynamic table: the most the hash tables and the relocations reach."""
    count = 0
    if 4 in tags:  # DT_HASH: nbucket, nchain
        count = max(count, elf.unpack("<II", _to_offset(loads, tags[4], "the hash table"), "the hash table")[1])
    if 0x6ffffef5 in tags:  # DT_GNU_HASH
        base = _to_offset(loads, tags[0x6ffffef5], "the GNU hash table")
        nbuckets, symoffset, bloom_size, _shift = elf.unpack("<IIII", base, "the GNU hash table")
        buckets = base + 16 + 8 * bloom_size
        chains = buckets + 4 * nbuckets
        top = symoffset
        for b in range(nbuckets):
            index = elf.unpack("<I", buckets + 4 * b, "the GNU hash buckets")[0]
            if index >= symoffset:
                top = max(top, index)
        if top > symoffset or nbuckets:
            while top >= symoffset:
                value = elf.unpack("<I", chains + 4 * (top - symoffset), "the GNU hash chains")[0]
                top += 1
                if value & 1:
                    break
                if top - symoffset > (elf.size // 4):
                    raise _ElfError("the GNU hash chains do not end")
        count = max(count, top)
    for table, size_tag, entry in ((7, 8, 24), (17, 18, 16), (23, 2, 24 if tags.get(20, 7) == 7 else 16)):
        if table in tags:  # RELA, REL, JMPREL (its kind by DT_PLTREL)
            start = _to_offset(loads, tags[table], "a relocation table")
            n = tags.get(size_tag, 0) // entry
            if start + n * entry > elf.size:
                raise _ElfError("a relocation table runs past the end of the file")
            for i in range(n):
                info = elf.unpack("<Q", start + i * entry + 8, "a relocation")[0]
                count = max(count, (info >> 32) + 1)
    return count


def _section_names(elf: _Elf, shoff: int, shentsize: int, shnum: int, found: _Names) -> None:
    if shentsize < 64:
        raise _ElfError("section header entries are too small")
    sections = [elf.unpack("<IIQQQQIIQQ", shoff + i * shentsize, "a section header") for i in range(shnum)]
    for _name, sh_type, _flags, _addr, offset, size, link, _info, _align, entsize in sections:
        if sh_type not in (2, 6, 11):  # SYMTAB, DYNAMIC, DYNSYM
            continue
        if offset + size > elf.size:
            raise _ElfError("a section runs past the end of the file")
        if link >= len(sections):
            raise _ElfError("a section links to a section that does not exist")
        str_off, str_size = sections[link][4], sections[link][5]
        if str_off + str_size > elf.size:
            raise _ElfError("a string table runs past the end of the file")
        if sh_type == 6:
            for i in range(size // 16):
                tag, value = elf.unpack("<qQ", offset + 16 * i, "the dynamic section")
                if tag == 0:
                    break
                if tag in _DT_LIBRARY_TAGS or tag == _DT_SONAME:
                    name = elf.cstr(str_off + value, str_off + str_size, "a library name")
                    (found.sonames if tag == _DT_SONAME else found.libraries).add(name)
            continue
        entsize = entsize or 24
        if entsize < 24:
            raise _ElfError("symbol entries are too small")
        for i in range(size // entsize):
            st_name, st_info, _o, st_shndx, _v, _s = elf.unpack("<IBBHQQ", offset + i * entsize, "a symbol")
            if st_name:
                found.symbol(elf, st_info, st_shndx, str_off + st_name, str_off + str_size)
