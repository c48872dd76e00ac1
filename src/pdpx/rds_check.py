"""What an R ``.rds`` file holds that R would run or load, found by reading its bytes, before R sees it.

R's ``readRDS`` returns what the file holds. Some of it is code or loads code:

* a promise not run yet, which R runs when the object is first used (at the top of the
  file, as soon as the result is looked at: CVE-2024-27322, fixed in R 4.4.0; inside the
  object, when ``predict`` reaches it, in any R version); a promise already run (the
  argument of a function a model was fit in) holds its value, which R uses as it is;
* a function (closure), an active binding (a function too) or byte code, which R runs when
  they are called (``predict`` may call what the object holds);
* a reference to the namespace of a package, or an ALTREP vector of a package: reading
  them loads that package (its load hook runs);
* a persistent reference, which only a reading hook can resolve.

:func:`rds_hazards` walks R's serialization format (XDR, versions 2 and 3, as ``saveRDS``
writes it; gzip, bzip2 or xz compressed, or not) without building any R object, and lists
what it found. A model made of vectors, lists, attributes, symbols and calls (a fitted
randomForest; its ``call`` and formula are calls, which R evaluates only when asked to,
see :mod:`pdpx.model_files` for the formula) lists nothing.
"""

from __future__ import annotations

import bz2
import gzip
import lzma
import struct
from pathlib import Path

#: namespaces whose reference in a file is harmless: R itself and the packages the command line attaches
SAFE_NAMESPACES = frozenset({"base", "stats", "utils", "methods", "graphics", "grDevices", "randomForest"})

_NIL, _EMPTYENV, _BASEENV, _GLOBALENV, _UNBOUND, _MISSING, _BASENS = 254, 242, 241, 253, 252, 251, 250
_REF, _PERSIST, _PACKAGE, _NAMESPACE, _CLASSREF, _GENERICREF, _ALTREP = 255, 247, 248, 249, 246, 245, 238
_ATTRLANG, _ATTRLIST = 240, 239
_SYM, _LIST, _CLOS, _ENV, _PROM, _LANG, _SPECIAL, _BUILTIN, _CHAR = 1, 2, 3, 4, 5, 6, 7, 8, 9
_LGL, _INT, _REAL, _CPLX, _STR, _DOT, _VEC, _EXPR, _BCODE, _EXTPTR, _WEAKREF, _RAW, _S4 = (
    10, 13, 14, 15, 16, 17, 19, 20, 21, 22, 23, 24, 25)
_PAIRS = (_LIST, _LANG, _CLOS, _PROM, _DOT, _ATTRLANG, _ATTRLIST)
_WIDTH = {_LGL: 4, _INT: 4, _REAL: 8, _CPLX: 16, _RAW: 1}
PROMISE = "a promise (code R runs when the object is used)"
_CODE = {_CLOS: "an R function",
         _DOT: "a '...' object", _BCODE: "compiled R code", _PERSIST: "a persistent reference (needs a hook)",
         _CLASSREF: "a class reference", _GENERICREF: "a generic reference"}


class RdsUnreadable(ValueError):
    """The file is not an R serialization pdpx can check (not XDR, truncated, an unknown item)."""


def _decompressed(path: Path) -> bytes:
    raw = Path(path).read_bytes()
    if raw[:2] == b"\x1f\x8b":
        return gzip.decompress(raw)
    if raw[:3] == b"BZh":
        return bz2.decompress(raw)
    if raw[:6] == b"\xfd7zXZ\x00":
        return lzma.decompress(raw)
    return raw


class _Reader:
    """One pass over the stream: ``item()`` reads one item and returns a name for symbols and strings."""

    def __init__(self, buf: bytes):
        self.buf, self.pos, self.refs, self.found = buf, 0, [], []

    def int(self) -> int:
        if self.pos + 4 > len(self.buf):
            raise RdsUnreadable("the file ends in the middle of an item")
        (v,) = struct.unpack_from(">i", self.buf, self.pos)
        self.pos += 4
        return v

    def skip(self, n: int) -> None:
        if n < 0 or self.pos + n > len(self.buf):
            raise RdsUnreadable("the file ends in the middle of an item")
        self.pos += n

    def length(self) -> int:
        n = self.int()
        if n == -1:
            hi, lo = self.int(), self.int()
            n = (hi << 32) + (lo & 0xFFFFFFFF)
        return n

    def item(self):  # noqa: C901 - one case per item type of R's format
        """Read one item; return the text of a CHARSXP / SYMSXP (else None)."""
        flags = self.int()
        kind, has_attr, has_tag = flags & 0xFF, flags & (1 << 9), flags & (1 << 10)
        if kind in (_NIL, _EMPTYENV, _BASEENV, _GLOBALENV, _UNBOUND, _MISSING, _BASENS):
            return None
        if kind == _REF:
            i = (flags >> 8) or self.int()
            if not 1 <= i <= len(self.refs):
                raise RdsUnreadable("a reference to an item not read yet")
            return self.refs[i - 1]
        if kind in _CODE:
            self.found.append(_CODE[kind])
            raise _Stop
        if kind == _SYM:
            name = self.item()
            self.refs.append(name)
            return name
        if kind in (_PACKAGE, _NAMESPACE):
            if self.int() != 0:
                raise RdsUnreadable("an unknown package reference")
            names = [self.item() for _ in range(self.int())]
            if kind == _NAMESPACE and names and names[0] not in SAFE_NAMESPACES:
                self.found.append(f"a reference to the namespace of package {names[0]} (reading it loads the package)")
            self.refs.append(None)
            return None
        if kind == _ENV:
            self.refs.append(None)
            self.int()  # locked
            for _ in range(4):  # enclosure, frame, hash table, attributes
                self.item()
            return None
        if kind in _PAIRS:
            while True:  # a pairlist's tail, read in a loop rather than by recursion
                if has_attr:
                    self.item()
                if has_tag:
                    self.item()
                if kind == _PROM and self.int() & 0xFF == _UNBOUND:  # not run yet: its value is unbound
                    self.found.append(PROMISE)
                    raise _Stop
                if kind == _PROM:
                    self.pos -= 4
                self.item()  # CAR (a forced promise's value)
                flags = self.int()
                kind, has_attr, has_tag = flags & 0xFF, flags & (1 << 9), flags & (1 << 10)
                if kind in _CODE:
                    self.found.append(_CODE[kind])
                    raise _Stop
                if kind not in _PAIRS:
                    self.pos -= 4
                    self.item()
                    return None
        if kind == _ALTREP:
            info = self._altrep_info()
            self.item()  # state
            self.item()  # attributes
            if info[1] != "base":
                self.found.append(f"an ALTREP vector of package {info[1]} (reading it loads the package)")
            return None
        text = None
        if kind == _CHAR:
            n = self.int()
            if n != -1:
                start = self.pos
                self.skip(n)
                text = self.buf[start:self.pos].decode("utf-8", "replace")
        elif kind in _WIDTH:
            self.skip(self.length() * _WIDTH[kind])
        elif kind in (_STR, _VEC, _EXPR):
            for _ in range(self.length()):
                self.item()
        elif kind in (_SPECIAL, _BUILTIN):
            self.skip(self.int())
        elif kind == _EXTPTR:
            self.refs.append(None)
            self.item()
            self.item()
        elif kind == _WEAKREF:
            self.refs.append(None)
        elif kind != _S4:
            raise RdsUnreadable(f"an item of unknown type {kind}")
        if has_attr:
            self.item()
        return text

    def _altrep_info(self) -> tuple:
        """The ALTREP class and package symbols (a pairlist: class, package, type)."""
        names: list = []
        flags = self.int()
        while flags & 0xFF in (_LIST, _ATTRLIST):
            if flags & (1 << 9):
                self.item()
            if flags & (1 << 10):
                self.item()
            names.append(self.item())
            flags = self.int()
        self.pos -= 4
        self.item()
        return (names + [None, None])[:2]


class _Stop(Exception):
    """Code found: no need to read further."""


def rds_hazards(path) -> list[str]:
    """What in the .rds file at ``path`` R would run or load (empty: nothing). Raises RdsUnreadable."""
    buf = _decompressed(Path(path))
    if buf[:2] != b"X\n":
        raise RdsUnreadable("it is not in R's default (XDR) serialization format")
    reader = _Reader(buf)
    reader.pos = 2
    version = reader.int()
    reader.int()
    reader.int()
    if version == 3:
        reader.skip(reader.int())  # the native encoding's name
    elif version != 2:
        raise RdsUnreadable(f"serialization version {version} is not one pdpx knows (2 or 3)")
    try:
        reader.item()
    except _Stop:
        return list(dict.fromkeys(reader.found))
    except RecursionError:
        raise RdsUnreadable("it nests deeper than pdpx checks") from None
    if reader.pos != len(buf):
        raise RdsUnreadable("it holds more than one object")
    return list(dict.fromkeys(reader.found))
