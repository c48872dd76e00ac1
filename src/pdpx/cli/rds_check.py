"""What an R model file holds, read from its bytes before R sees it: anything that is not plain data is refused.

R's ``readRDS`` and ``load`` return what the file holds, and an R object can be code or
make R run code: a promise R runs when the object is first used (CVE-2024-27322), a
function, byte code, a call that a function such as ``predict`` or ``model.frame``
evaluates (a formula's ``predvars``), a class that sends ``predict`` to another
package's method, a reference that makes R load or attach a package (a namespace, a
package environment, an ALTREP vector of a package), or an ALTREP vector R reads from
another file (``mmap_real``). :func:`check_r_file` walks R's serialization format (XDR,
versions 2 and 3, as ``saveRDS`` and ``save`` write it; gzip, bzip2 or xz compressed, or
not) without building any R object and refuses what it cannot prove to be data:

* every item is a vector, a list, a symbol, a plain environment (its contents checked
  alike), R's global, base or empty environment, or a call whose function is a name on
  :data:`CALL_HEADS` (formula operators, subsetting, arithmetic, the fitting functions);
  a call in function position (``(function(...) ...)(y, x)``) is refused, and so is a
  namespace other than R's own packages (:data:`NAMESPACES`), a package environment,
  an ALTREP class other than those R writes for plain vectors (:data:`ALTREP_CLASSES`),
  S4 objects, external pointers and promises that were never run;
* the attributes R evaluates when a model is used (:data:`EVALUATED`) hold nothing but
  names: ``variables`` and ``predvars`` are ``list(a, b, ...)``, a ``formula`` or
  ``terms`` attribute uses formula operators only;
* the object is a model of a class pdpx reads, exactly (:data:`MODEL_CLASSES`: not
  ``c("lm", "randomForest")``, whose ``predict`` is ``predict.lm``), and every class
  inside it is one R or that package writes (:data:`INNER_CLASSES`);
* sizes are bounded before anything is allocated: the decompressed stream (a few KB of
  bzip2 can expand to gigabytes) is read a block at a time and stops at the memory
  budget, and every declared length (a vector's, a compact sequence's ``2^40``
  elements) is added to an estimate of the memory R would need, which must stay within
  the budget (:func:`pdpx.core.config.get_config`'s ``memory_budget``).

A fitted randomForest, ranger or gbm model passes. The walk uses an explicit stack, so
a deeply nested file costs memory in proportion to its size, never Python's recursion.
"""

from __future__ import annotations

import bz2
import gzip
import lzma
import struct
from dataclasses import dataclass, field
from pathlib import Path

from ..core.config import format_bytes, get_config

#: the classes of the models pdpx reads from an R file, exactly (a class vector is compared as a whole)
MODEL_CLASSES = {("randomForest.formula", "randomForest"): "randomForest", ("randomForest",): "randomForest",
                 ("ranger",): "ranger", ("gbm",): "gbm"}
#: classes of the parts of those models (R's own and the packages'); any other class inside is refused
INNER_CLASSES = frozenset({"factor", "ordered", "matrix", "array", "table", "data.frame", "terms", "formula",
                           "votes", "ranger.forest", "expressionsIndex", "srcrefsIndex"})
#: namespaces a file may name: R's own packages (loading them runs none of the file's code)
NAMESPACES = frozenset({"stats", "utils", "methods", "graphics", "grDevices", "datasets"})
#: packages a call may name with ``::`` (evaluating it loads the package): R's own and the models' own
PACKAGES = NAMESPACES | {"base", "randomForest", "ranger", "gbm"}
#: ALTREP classes R itself writes for plain vectors (package base): compact sequences, deferred strings, wrappers
ALTREP_CLASSES = {"compact_intseq": 4, "compact_realseq": 8, "deferred_string": 64, "wrap_integer": 0,
                  "wrap_real": 0, "wrap_logical": 0, "wrap_string": 0, "wrap_complex": 0, "wrap_raw": 0,
                  "wrap_list": 0}
#: formula operators: all a formula, a terms object or its ``formula`` attribute may call
FORMULA_HEADS = frozenset({"~", "+", "-", "*", "/", ":", "^", "%in%", "(", "|", "."})
#: the names a call anywhere in the file may have in function position: formula operators, R's operators and
#: side-effect-free base functions (a model's ``call`` holds its data's subsetting), and the fitting functions
CALL_HEADS = FORMULA_HEADS | frozenset({
    "list", "c", "[", "[[", "$", "==", "!=", "<", ">", "<=", ">=", "&", "&&", "||", "!", "%%", "%/%",
    "seq", "seq_len", "seq_along", "rep", "nrow", "ncol", "length", "head", "tail", "which", "subset", "sample",
    "factor", "as.factor", "as.numeric", "as.integer", "as.character", "as.matrix", "data.frame", "cbind",
    "rbind", "sqrt", "log", "exp", "floor", "ceiling", "round", "abs", "min", "max", "sum", "mean", "I",
    "runif", "rnorm", "rbinom", "rpois", "is.na", "complete.cases", "na.omit", "unique", "sort", "order",
    "randomForest", "randomForest.formula", "randomForest.default", "ranger", "gbm", "gbm.fit", "model.frame",
    "train", "::", ":::",
})
#: attributes that R evaluates when the object is used (model.frame evaluates ``predvars``, or ``variables``)
EVALUATED = {"variables": "names", "predvars": "names", "formula": "formula", "terms": "formula"}
#: how deep a file may nest (R reads it recursively: deeper files exhaust R's own stack)
MAX_DEPTH = 5000
#: bytes R takes per object besides its data (a node), for the estimate
NODE = 56
BUDGET_HINT = "the memory_budget setting: pdpx.set_config(memory_budget=...), or --memory-budget on the command line"

_NIL, _EMPTYENV, _BASEENV, _GLOBALENV, _UNBOUND, _MISSING, _BASENS = 254, 242, 241, 253, 252, 251, 250
_REF, _PERSIST, _PACKAGE, _NAMESPACE, _CLASSREF, _GENERICREF, _ALTREP = 255, 247, 248, 249, 246, 245, 238
_SYM, _LIST, _CLOS, _ENV, _PROM, _LANG, _SPECIAL, _BUILTIN, _CHAR = 1, 2, 3, 4, 5, 6, 7, 8, 9
_LGL, _INT, _REAL, _CPLX, _STR, _DOT, _VEC, _EXPR, _BCODE, _EXTPTR, _WEAKREF, _RAW, _S4 = (
    10, 13, 14, 15, 16, 17, 19, 20, 21, 22, 23, 24, 25)
_WIDTH = {_LGL: 4, _INT: 4, _REAL: 8, _CPLX: 16, _RAW: 1}
_PLAIN = (_NIL, _EMPTYENV, _BASEENV, _GLOBALENV, _MISSING, _BASENS)
_NEVER_RAN = "a promise that never ran (code R runs when the object is first used: CVE-2024-27322)"
_CODE = {_CLOS: "an R function", _BCODE: "compiled R code", _DOT: "a '...' object",
         _SPECIAL: "an R function (a primitive)", _BUILTIN: "an R function (a primitive)", _EXPR: "an R expression",
         _PERSIST: "a persistent reference (it needs a hook to read)", _CLASSREF: "a class reference",
         _GENERICREF: "a generic reference", _EXTPTR: "an external pointer", _WEAKREF: "a weak reference",
         _S4: "an S4 object (its methods may load a package)", _UNBOUND: _NEVER_RAN,
         _PACKAGE: "a package environment (reading it makes R attach that package)"}
_S4_BIT = 1 << 4  # in the levels (flags >> 12): an S4 object
_BLOCK = 1 << 16
_MAGIC = ((b"\x1f\x8b", gzip.open), (b"BZh", bz2.open), (b"\xfd7zXZ\x00", lzma.open))


class RdsUnreadable(ValueError):
    """The file is not an R serialization pdpx can check (not XDR, truncated, an unknown item)."""


class RdsRefused(ValueError):
    """The file holds something that is not plain data (the message says what), or is larger than the budget."""


@dataclass
class RFileFacts:
    """What :func:`check_r_file` found: the model's class and package, and for a ``save`` file the object's name."""

    library: str
    classes: tuple
    name: str | None = None
    estimate: int = 0
    names: list = field(default_factory=list)


def _holds(what: str) -> RdsRefused:
    return RdsRefused(f"it holds {what}")


def budget_text(budget: int) -> str:
    """The memory budget in words, with how to change it."""
    return f"the memory budget ({format_bytes(budget)}; {BUDGET_HINT})"


class _Source:
    """The decompressed bytes of a file, read a block at a time, never more than ``cap`` bytes in all."""

    def __init__(self, path: Path, cap: int):
        with open(path, "rb") as fh:
            head = fh.read(6)
        opener = next((fn for magic, fn in _MAGIC if head.startswith(magic)), None)
        self.fh = opener(path, "rb") if opener is not None else open(path, "rb")
        self.buf, self.pos, self.total, self.cap = b"", 0, 0, cap

    def close(self) -> None:
        self.fh.close()

    def _fill(self, n: int) -> None:
        """At least ``n`` bytes in the buffer from ``pos``, or the end of the stream."""
        parts = [self.buf[self.pos:]]
        have = len(parts[0])
        while have < n:
            block = self.fh.read(max(_BLOCK, n - have))
            if not block:
                break
            self.total += len(block)
            if self.total > self.cap:
                raise RdsRefused(f"it decompresses to more than {format_bytes(self.cap)}, more than "
                                 f"{budget_text(self.cap)}")
            parts.append(block)
            have += len(block)
        self.buf, self.pos = b"".join(parts), 0

    def read(self, n: int) -> bytes:
        if self.pos + n > len(self.buf):
            self._fill(n)
            if n > len(self.buf):
                raise RdsUnreadable("the file ends in the middle of an item")
        out = self.buf[self.pos:self.pos + n]
        self.pos += n
        return out

    def int(self) -> int:
        return struct.unpack(">i", self.read(4))[0]

    def skip(self, n: int) -> None:
        while n > 0:
            step = min(n, _BLOCK)
            self.read(step)
            n -= step

    def back(self, n: int) -> None:
        """Step back over the ``n`` bytes just read (they are still in the buffer)."""
        self.pos -= n

    def at_end(self) -> bool:
        if self.pos < len(self.buf):
            return False
        self._fill(1)
        return len(self.buf) == 0


@dataclass
class _Item:
    """What a parent needs to know about an item it read: its type, a symbol's or string's text, a call's head,
    a vector's declared length, a character vector's first strings (class vectors are short)."""

    kind: int
    text: str | None = None
    length: int = 0
    strings: tuple = ()
    values: tuple = ()



class _Walker:
    """One pass over the stream. Items are read by generators (:meth:`_item`) driven from an explicit stack, so
    nesting costs no recursion; each yields ``(role, depth)`` per child and receives the child's :class:`_Item`.

    Roles: ``root`` (the object of an .rds), ``rda`` (the bindings of a ``save`` file) and ``binding`` (one of
    its objects), ``element`` (anything inside), ``head`` (the function of a call), ``formula`` and ``names``
    (inside an attribute R evaluates), ``attributes:<owner>``, ``class:<owner>``, ``tag``, ``symbol``,
    ``state`` (an ALTREP vector's) and ``info`` (its class).
    """

    def __init__(self, src: _Source, budget: int):
        self.src, self.budget, self.refs, self.estimate = src, budget, [], 0
        self.models: list = []  # (binding name or None, class vector) of each object of a model class
        self.names: list = []  # a save file's bindings
        self.binding: str | None = None

    def charge(self, n_bytes: int, what: str) -> None:
        """Add ``n_bytes`` R would allocate; refuse once one item or the sum passes the budget."""
        if n_bytes > self.budget:
            raise RdsRefused(f"it declares {what} ({format_bytes(n_bytes)}), more than {budget_text(self.budget)}")
        self.estimate += n_bytes
        if self.estimate > self.budget:
            raise RdsRefused(f"it would take R more than {format_bytes(self.estimate)} to read, more than "
                             f"{budget_text(self.budget)}")

    def run(self, role: str) -> _Item:
        """Read one item and everything in it."""
        stack = [self._item(role, 0)]
        value = None
        while stack:
            try:
                request = stack[-1].send(value)
            except StopIteration as stop:
                stack.pop()
                value = stop.value
                continue
            if len(stack) > MAX_DEPTH:
                raise RdsRefused(f"it nests deeper than {MAX_DEPTH} levels")
            stack.append(self._item(*request))
            value = None
        return value

    def _flags(self) -> tuple:
        flags = self.src.int()
        kind = flags & 0xFF
        if kind != _REF and (flags >> 12) & _S4_BIT:  # (a reference packs its index there)
            raise _holds(_CODE[_S4])
        return kind, flags & (1 << 9), flags & (1 << 10), flags

    def _length(self) -> int:
        n = self.src.int()
        if n == -1:
            hi, lo = self.src.int(), self.src.int()
            n = (hi << 32) + (lo & 0xFFFFFFFF)
        if n < 0:
            raise RdsUnreadable("a vector of negative length")
        return n

    def _item(self, role: str, depth: int):
        """One item of any type (a generator, see the class docstring)."""
        kind, has_attr, has_tag, flags = self._flags()
        if kind in _PLAIN:
            return _Item(kind)
        if kind == _REF:
            i = (flags >> 8) or self.src.int()
            if not 1 <= i <= len(self.refs):
                raise RdsUnreadable("a reference to an item not read yet")
            return self.refs[i - 1]
        if kind == _CLOS and not has_attr and has_tag:
            return (yield from self._closure(depth))
        if kind in _CODE:
            raise _holds(_CODE[kind])
        if kind == _SYM:
            name = yield ("symbol", depth + 1)
            if name.kind != _CHAR:
                raise RdsUnreadable("a symbol without a name")
            item = _Item(_SYM, name.text)
            self.refs.append(item)
            return item
        if kind == _NAMESPACE:
            return (yield from self._namespace(depth))
        if kind == _ENV:
            item = _Item(_ENV)
            self.refs.append(item)
            self.src.int()  # locked
            for part in ("element", "element", "element", "attributes:inner"):  # enclosure, frame, hashtab
                yield (part, depth + 1)
            self.charge(NODE, "an environment")
            return item
        if kind == _PROM:
            return (yield from self._promise(has_attr, has_tag, depth))
        if kind in (_LIST, _LANG):
            return (yield from self._pairs(kind, has_attr, has_tag, role, depth))
        if kind == _ALTREP:
            return (yield from self._altrep(depth))
        if kind == _CHAR:
            if has_attr:  # R reads (and drops) such an item: refused rather than read
                raise RdsUnreadable("a string with attributes (a format R no longer writes)")
            return self._char()
        item = yield from self._vector(kind, role, depth)
        if has_attr:  # a model is a list: only a list's class makes it one
            yield ("attributes:" + (role if role in ("root", "binding") and kind == _VEC else "inner"), depth + 1)
        return item

    def _char(self) -> _Item:
        n = self.src.int()
        if n == -1:
            return _Item(_CHAR)
        if n < 0:
            raise RdsUnreadable("a string of negative length")
        self.charge(NODE + n, f"a string of {n:,} bytes")
        return _Item(_CHAR, self.src.read(n).decode("utf-8", "replace") if n <= 4096 else self.src.skip(n))

    def _vector(self, kind: int, role: str, depth: int):
        """An atomic vector (its data skipped, but an ALTREP state's few numbers kept), a character vector or
        a list; the declared length is charged before anything is read."""
        if kind not in _WIDTH and kind not in (_STR, _VEC):
            raise RdsUnreadable(f"an item of unknown type {kind}")
        n = self._length()
        width = _WIDTH.get(kind, 8)
        what = {_STR: "a character vector", _VEC: "a list"}.get(kind, "a vector")
        self.charge(48 + n * width, f"{what} of {n:,} elements")
        if kind == _STR:
            return _Item(_STR, length=n, strings=self._strings(n))
        if kind == _VEC:
            for _ in range(n):
                yield ("binding" if role == "rda" else "element", depth + 1)
            return _Item(_VEC, length=n)
        if role in ("state", "code") and kind in (_INT, _REAL) and n <= 4:
            raw = self.src.read(n * width)
            return _Item(kind, length=n, values=struct.unpack(">" + ("i" if kind == _INT else "d") * n, raw))
        self.src.skip(n * width)
        return _Item(kind, length=n)

    def _strings(self, n: int) -> tuple:
        """The strings of a character vector, read in place (the first eight kept: class vectors are short)."""
        kept = []
        for _ in range(n):
            kind, has_attr, _t, _f = self._flags()
            if kind != _CHAR or has_attr:
                raise RdsUnreadable("a character vector holds something else than plain strings")
            text = self._char().text
            if len(kept) < 8:
                kept.append(text)  # NA stays None: c("randomForest", NA) is no model's class
        return tuple(kept)

    def _closure(self, depth: int):
        """A function is refused unless it is provably R's identity function ``function(object, ...) object`` of
        R's own namespaces (``stats::na.pass``, which gbm stores in the call it keeps): its environment, its
        arguments and its body (the name ``object``, or byte code that only returns it) are checked."""
        refused = _holds(_CODE[_CLOS])
        env = yield ("element", depth + 1)
        if env.kind not in (_NAMESPACE, _BASENS):
            raise refused
        for expected in ("object", "..."):  # the formals: a pairlist of two arguments without defaults
            kind, has_attr, has_tag, _flags = self._flags()
            if kind != _LIST or has_attr or not has_tag:
                raise refused
            tag = yield ("tag", depth + 1)
            default = yield ("element", depth + 1)
            if tag.text != expected or default.kind != _MISSING:
                raise refused
        if self._flags()[0] != _NIL:
            raise refused
        kind, has_attr, _tag, _flags = self._flags()
        if kind == _BCODE and not has_attr:
            yield from self._identity_bytecode(refused, depth)
        else:
            self.src.back(4)
            body = yield ("element", depth + 1)
            if body.kind != _SYM or body.text != "object":
                raise refused
        self.charge(NODE, "a function")
        return _Item(_CLOS)

    def _identity_bytecode(self, refused: RdsRefused, depth: int):
        """Byte code that loads the variable ``object`` and returns it (GETVAR 0, RETURN), nothing else."""
        self.src.int()  # the number of shared references
        code = yield ("code", depth + 1)
        if code.kind != _INT or len(code.values) != 4 or code.values[1:] != (20, 0, 1):
            raise refused
        for i in range(self.src.int()):  # the constants: the name, then R's plain index vectors
            kind = self.src.int()
            if kind not in (_SYM, _INT, _REAL, _LGL, _STR, _NIL) and kind != _REF:
                raise refused
            const = yield ("element", depth + 1)
            if i == 0 and (const.kind != _SYM or const.text != "object"):
                raise refused

    def _namespace(self, depth: int):
        if self.src.int() != 0:
            raise RdsUnreadable("an unknown namespace reference")
        names = []
        for _ in range(self.src.int()):
            names.append((yield ("symbol", depth + 1)).text)
        if not names or names[0] not in NAMESPACES:
            raise _holds(f"a reference to the namespace of package {names[0] if names else '?'} (reading it "
                             "makes R load that package)")
        item = _Item(_NAMESPACE, names[0])
        self.refs.append(item)
        return item

    def _promise(self, has_attr: int, has_tag: int, depth: int):
        """A promise: refused unless it has run (its value is there; R never runs its code again)."""
        if has_attr:
            yield ("attributes:inner", depth + 1)
        if has_tag:
            yield ("element", depth + 1)  # its environment
        yield ("element", depth + 1)  # its value: an unbound value (it never ran) is refused as code
        yield ("element", depth + 1)  # its code, checked like any other call
        self.charge(NODE, "a promise")
        return _Item(_PROM)

    def _pairs(self, kind: int, has_attr: int, has_tag: int, role: str, depth: int):
        """A pairlist or a call, with its tail read in a loop (a long pairlist nests no deeper)."""
        first = _Item(kind)
        owner = role.split(":", 1)[1] if role.startswith("attributes:") else None
        args: list = []
        while True:
            self.charge(NODE, "a pairlist")
            if has_attr:
                yield ("attributes:inner", depth + 1)
            tag = (yield ("tag", depth + 1)) if has_tag else None
            if kind == _LANG:
                head = yield ("head", depth + 1)
                self._check_head(head, role)
                if first.text is None:  # the function's name: pkg::name's name, never "::"
                    first.text = head.text if head.kind == _SYM else (head.strings or (None, None))[-1]
                kind = _LIST  # the rest of a call are its arguments
            elif owner is not None:
                name = tag.text if tag is not None else None
                value = yield (_attribute_role(name, owner), depth + 1)
                if name == "class":
                    self._note_class(value, owner)
            elif role == "rda":
                self.binding = tag.text if tag is not None else None
                self.names.append(self.binding)
                yield ("binding", depth + 1)
            else:
                value = yield (role if role in ("formula", "names") else "element", depth + 1)
                args.append(value)
                first.length = first.length or value.length
            kind, has_attr, has_tag, _flags = self._flags()
            if kind == _NIL:
                first.strings = tuple(_head_name(a) for a in args)
                if first.text in ("::", ":::") and first.strings[:1] and first.strings[0] not in PACKAGES:
                    raise _holds(f"a reference to package {first.strings[0]} (R would load it to evaluate "
                                 f"{first.strings[0]}{first.text}{(first.strings[1:] or ['?'])[0]})")
                return first
            if kind not in (_LIST, _LANG):  # a dotted pair (a deferred string's state): its last item
                self.src.back(4)
                yield ("element", depth + 1)
                return first

    def _check_head(self, head: _Item, role: str) -> None:
        """The function of a call: a name on the allow-list (a formula operator in a formula), never a call but
        ``pkg::name`` of such a name."""
        if role == "head":  # the call in function position: only pkg::name
            if head.kind != _SYM or head.text not in ("::", ":::"):
                raise _holds("a call whose function is itself a call (code R would run when evaluating it)")
            return
        name = head.text
        if head.kind == _LANG and head.text in ("::", ":::") and len(head.strings) == 2:
            name = head.strings[1]
        elif head.kind != _SYM:
            raise _holds("a call whose function is itself computed (code R would run when evaluating it)")
        allowed = FORMULA_HEADS if role == "formula" else frozenset({"list"}) if role == "names" else CALL_HEADS
        if name not in allowed:
            where = {"formula": "a formula", "names": "the variables of a formula"}.get(role, "the model")
            raise _holds(f"a call to {name!r} in {where} (code R would run when the model is used)")

    def _note_class(self, value: _Item, owner: str) -> None:
        classes = tuple(value.strings) if value.kind == _STR else ()
        if owner in ("root", "binding") and classes in MODEL_CLASSES:
            self.models.append((self.binding if owner == "binding" else None, classes))
            return
        if owner == "root":
            raise RdsRefused(_class_refusal(classes))
        other = [c for c in classes if c not in INNER_CLASSES] or ([] if classes else ["(none)"])
        if other:
            raise _holds(f"an object of class {other[0]!r}{' in the model' if owner == 'inner' else ''} (R "
                             "would use its methods, which may be another package's code)")

    def _altrep(self, depth: int):
        """An ALTREP vector: its class (only R's own for plain vectors), its state (a compact sequence's declared
        length charged as if it were expanded) and attributes."""
        info = yield ("info", depth + 1)
        name = info.strings[0] if len(info.strings) == 3 and info.strings[1] == "base" else None
        if name not in ALTREP_CLASSES:
            shown = " of package ".join(s for s in info.strings[:2] if s) or "?"
            source = "another file" if shown.startswith("mmap") else "code outside the file"
            raise _holds(f"an ALTREP vector of class {shown} (R would fill it from {source})")
        state = yield ("state", depth + 1)
        if name.startswith("compact_"):
            if state.kind not in (_INT, _REAL) or len(state.values) != 3 or not float(state.values[0]).is_integer():
                raise RdsUnreadable("a compact sequence whose state is not (length, start, step)")
            n = int(state.values[0])
            self.charge(48 + n * ALTREP_CLASSES[name], f"a compact sequence of {n:,} elements")
            length = n
        else:
            length = state.length
            self.charge(length * ALTREP_CLASSES[name], f"a vector of {length:,} strings")
        yield ("attributes:inner", depth + 1)
        return _Item(_VEC, length=length)


def _head_name(item: _Item) -> str | None:
    return item.text if item.kind in (_SYM, _CHAR, _LANG) else None


def _attribute_role(name: str | None, owner: str) -> str:
    if name in EVALUATED:
        return EVALUATED[name]
    return f"class:{owner}" if name == "class" else "element"


def _class_refusal(classes: tuple) -> str:
    what = f"an object of class c({', '.join(repr(c) for c in classes)})" if classes else "an object without a class"
    known = ", ".join("c(" + ", ".join(repr(c) for c in k) + ")" for k in MODEL_CLASSES)
    return (f"it is {what}, not a model pdpx reads from an R file: a list of class {known}, exactly (another "
            "class would let R hand the model to that class's methods)")


def _header(src: _Source) -> bool:
    """Read the format's header; True for a ``save`` file (RDX2 / RDX3), False for ``saveRDS``."""
    head = src.read(2)
    rda = head == b"RD"
    if rda:
        magic = head + src.read(3)
        if magic not in (b"RDX2\n", b"RDX3\n"):
            raise RdsUnreadable("it is a save() file in a format other than XDR (saved with ascii = TRUE?)")
        head = src.read(2)
    if head != b"X\n":
        raise RdsUnreadable("it is not in R's default (XDR) serialization format (saved with ascii = TRUE?)")
    version = src.int()
    src.int()
    src.int()
    if version == 3:
        n = src.int()
        if not 0 <= n <= 64:
            raise RdsUnreadable("its header names an encoding of implausible length")
        src.read(n)
    elif version != 2:
        raise RdsUnreadable(f"serialization version {version} is not one pdpx knows (2 or 3)")
    return rda


def check_r_file(path, *, budget: int | None = None) -> RFileFacts:
    """What the R file at ``path`` (``saveRDS`` or ``save``) holds, or :class:`RdsRefused` / :class:`RdsUnreadable`.

    ``budget``: the bytes R may use to read it (default: the ``memory_budget`` setting), which also caps the
    decompressed stream.
    """
    budget = int(get_config()["memory_budget"] if budget is None else budget)
    src = _Source(Path(path), budget)
    try:
        rda = _header(src)
        walker = _Walker(src, budget)
        walker.run("rda" if rda else "root")
        if not src.at_end():
            raise RdsUnreadable("it holds more than one object")
    finally:
        src.close()
    return _facts(walker, rda)


def _facts(walker: _Walker, rda: bool) -> RFileFacts:
    if not walker.models:
        if rda:
            raise _holds(f"no model pdpx reads among its objects ({', '.join(map(str, walker.names))})")
        raise RdsRefused(_class_refusal(()))
    if len(walker.models) > 1:
        names = ", ".join(str(n) for n, _ in walker.models)
        raise _holds(f"several models ({names}); save the one to read on its own: saveRDS(model, file)")
    name, classes = walker.models[0]
    return RFileFacts(library=MODEL_CLASSES[classes], classes=classes, name=name, estimate=walker.estimate,
                      names=list(walker.names))
