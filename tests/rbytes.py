"""Writing R's serialization format (XDR) by hand, for the byte reader's tests: crafted files that R itself
would not write (or not easily), item by item, with the header ``saveRDS`` writes."""

from __future__ import annotations

import struct

NIL = struct.pack(">i", 254)
GLOBALENV = struct.pack(">i", 253)
UNBOUND = struct.pack(">i", 252)
MISSING = struct.pack(">i", 251)


def header(version: int = 3) -> bytes:
    """``X\\n``, the format's version, the writer's and the reader's R versions (and the encoding, version 3)."""
    out = b"X\n" + struct.pack(">iii", version, 0x040202, 0x030500 if version == 3 else 0x020300)
    return out + (struct.pack(">i", 5) + b"UTF-8" if version == 3 else b"")


def flags(kind: int, *, attr: bool = False, tag: bool = False, obj: bool = False, levels: int = 0) -> bytes:
    return struct.pack(">i", kind | (obj << 8) | (attr << 9) | (tag << 10) | (levels << 12))


def length(n: int) -> bytes:
    if n < 2**31:
        return struct.pack(">i", n)
    return struct.pack(">iii", -1, n >> 32, n & 0xFFFFFFFF)


def char(text: str) -> bytes:
    data = text.encode()
    return flags(9, levels=64) + struct.pack(">i", len(data)) + data


def sym(name: str) -> bytes:
    return flags(1) + char(name)


def real(values, *, declared: int | None = None) -> bytes:
    values = list(values)
    return flags(14) + length(len(values) if declared is None else declared) + struct.pack(f">{len(values)}d",
                                                                                            *values)


def ints(values) -> bytes:
    values = list(values)
    return flags(13) + length(len(values)) + struct.pack(f">{len(values)}i", *values)


def raw(n: int, data: bytes = b"") -> bytes:
    return flags(24) + length(n) + data


def strs(values) -> bytes:
    """A character vector; None is NA."""
    na = flags(9) + struct.pack(">i", -1)
    return flags(16) + length(len(values)) + b"".join(na if v is None else char(v) for v in values)


def pairlist(items, *, kind: int = 2) -> bytes:
    """A pairlist (or, ``kind=6``, a call) of ``(tag or None, item bytes)``."""
    out = b""
    for i, (tag, item) in enumerate(items):
        out += flags(kind if i == 0 else 2, tag=tag is not None) + (sym(tag) if tag is not None else b"") + item
    return out + NIL


def call(head: bytes, *args: bytes) -> bytes:
    """A call: ``head`` (a symbol's bytes, or anything else) applied to ``args``."""
    return pairlist([(None, head)] + [(None, a) for a in args], kind=6)


def attributes(**named: bytes) -> bytes:
    return pairlist([(k.replace("_", "."), v) for k, v in named.items()])


def vec(items, *, attrs: bytes | None = None, obj: bool = False) -> bytes:
    return flags(19, attr=attrs is not None, obj=obj) + length(len(items)) + b"".join(items) + (attrs or b"")


def model(*extra: bytes, classes=("randomForest",), names=None) -> bytes:
    """A list of class ``classes`` (a randomForest by default) holding a number and ``extra``."""
    items = [real([1.0]), *extra]
    names = names or [f"x{i}" for i in range(len(items))]
    return vec(items, attrs=attributes(names=strs(names), **{"class": strs(list(classes))}), obj=True)


def altrep(cls: str, package: str, state: bytes, kind: int = 14) -> bytes:
    """An ALTREP vector: its class, package and type, its state, no attributes."""
    info = pairlist([(None, sym(cls)), (None, sym(package)), (None, ints([kind]))])
    return struct.pack(">i", 238) + info + state + NIL


def rds(item: bytes, version: int = 3) -> bytes:
    """A whole (uncompressed) .rds file holding ``item``."""
    return header(version) + item


def rda(**bindings: bytes) -> bytes:
    """A whole (uncompressed) save() file of ``bindings``."""
    return b"RDX3\n" + header(3) + pairlist(list(bindings.items()))
