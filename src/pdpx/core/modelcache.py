"""What identifies a fitted model's contents, and the readings kept with each live model.

:func:`fingerprint` digests the arrays a model's predictions depend on (an adapter's fingerprint of a
fitted model is made of it); :class:`ModelCache` (one process-wide :data:`model_cache`) keeps each
model's tree representation, its trust verdict and other readings, keyed by the model while it is
alive and checked against its fingerprint. :mod:`.ir` names them too (their earlier place).
"""

from __future__ import annotations

import threading
from typing import Callable

import numpy as np

from .threads import ModelLock


def fingerprint(*parts) -> str:
    """A digest of the contents of ``parts``: what an adapter's fingerprint of a fitted model is made of.

    Each part is an array (its bytes, dtype and shape: a structured array's records
    whole), a bytes-like object, a string, or another value (its ``repr``). Arrays
    are read where they lie (no copy when contiguous). A model changed in place (a
    leaf value, a threshold, a loaded model) has different bytes, so a different
    fingerprint; the same contents always give the same one.

    The digest is CRC-32 (zlib: several GB/s, against well under one for the
    cryptographic hashes of hashlib), each part's kind, size, dtype and leading
    dimension folded in (a structured array's record size, not its fields' names:
    a model's records keep their layout).
    It guards against changes, not against an adversary: two different models
    agree by chance with odds of 2**-32.
    """
    import zlib

    crc = 0
    total = 0
    for part in parts:
        if isinstance(part, np.ndarray):
            dt = part.dtype
            if dt.hasobject or not part.size:
                head, buf = b"o", repr(part.tolist()).encode()
            else:  # the array's own buffer (zlib reads it in place); its dtype's number, record size and shape
                buf = part if part.flags.c_contiguous else np.ascontiguousarray(part)
                head = b"a%d.%d.%d.%d" % (dt.num, dt.itemsize, part.ndim, part.shape[0] if part.ndim else 0)
        elif isinstance(part, (bytes, bytearray)):
            head, buf = b"b", part
        elif isinstance(part, memoryview):
            head, buf = b"b", part if part.contiguous else part.tobytes()
        else:
            head, buf = b"s", (part if isinstance(part, str) else repr(part)).encode()
        size = buf.nbytes if isinstance(buf, (memoryview, np.ndarray)) else len(buf)
        crc = zlib.crc32(buf, zlib.crc32(b"%s:%d|" % (head, size), crc))
        total += size
    return f"{crc:08x}.{total:x}.{len(parts)}"


#: Keys of a model's entries that are no cached value: the model (held when not weakly referenceable), its lock.
_RESERVED = ("__model__", "__lock__")


class ModelCache:
    """Extraction cache: one TreeModel per (model, response), kept while the model is alive.

    An entry is found by three things:

    * ``key_objects``: objects a refit replaces (e.g. the list of fitted trees, the
      booster); the entry holds them, so their ids cannot be reused while cached;
    * ``state``: values that say which part of the model a prediction uses (the
      rounds, the wrapper's missing value);
    * ``fingerprint``: a digest of the contents a prediction depends on (the
      adapter's ``fingerprint()``, made with :func:`fingerprint`: the trees' arrays,
      or the library's own serialisation). A model changed in place (a loaded model,
      an edited leaf or threshold, a refit reusing the objects) keeps its objects and
      its state but not its fingerprint, so it misses the cache.

    Anything kept with a model (its trees, the reasons they cannot be used, what is
    derived from them) lives in an entry, so it follows these keys. A new entry of a
    response replaces its old one (the old contents can no longer be asked for).
    """

    def __init__(self):
        import weakref

        self._weakref = weakref
        self._store: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()
        self._by_id: dict = {}
        self._guard = threading.Lock()  # makes a model's entries and lock once

    def _entries(self, model) -> dict:
        try:
            found = self._store.get(model)
            if found is not None:
                return found
            with self._guard:
                return self._store.setdefault(model, {})
        except TypeError:  # not hashable (it defines __eq__): by id, forgotten when the model is collected
            pass
        with self._guard:
            return self._entries_by_id(model)

    def _entries_by_id(self, model) -> dict:
        entries = self._by_id.get(id(model))
        if entries is None:
            entries = {}
            try:
                self._weakref.finalize(model, self._by_id.pop, id(model), None)
            except TypeError:  # not weak-referenceable either: held here (a few only)
                if len(self._by_id) >= 8:
                    self._by_id.pop(next(iter(self._by_id)))
                entries["__model__"] = model
            self._by_id[id(model)] = entries
        return entries

    def lock(self, model):
        """``model``'s :class:`~pdpx.core.threads.ModelLock`, made on first use and kept (forgotten) with its
        entries: what reads the model's contents (its fingerprint, its trees, the trust check's verdict) holds it
        exclusively, so concurrent calls on one model read it once and never while another changes a setting."""
        entries = self._entries(model)
        held = entries.get("__lock__")
        if held is None:
            with self._guard:
                held = entries.setdefault("__lock__", ModelLock())
        return held

    def get(self, model, response: str, key_objects: tuple, build: Callable, *, state: str = "",
            fingerprint: str = ""):
        """The cached value of ``model``'s ``response`` for this fitted state and contents, built by ``build()``
        if absent (under the model's :meth:`lock`: one thread builds it, the others wait for it)."""
        key = self._key(response, key_objects, state, fingerprint)
        entries = self._entries(model)
        hit = entries.get(key)
        if hit is not None:
            return hit[1]
        with self.lock(model).exclusive():
            if key in entries:  # built by another thread meanwhile
                return entries[key][1]
            value = build()
            # forget stale entries of this response (a refit, a change in place)
            for k in [k for k in list(entries) if k not in _RESERVED and k[0] == response]:
                del entries[k]
            entries[key] = (key_objects, value)
        return value

    def peek(self, model, response: str, key_objects: tuple, *, state: str = "", fingerprint: str = ""):
        """The cached value of ``model``'s ``response`` for this fitted state and contents, or None (nothing is
        built)."""
        hit = self._entries(model).get(self._key(response, key_objects, state, fingerprint))
        return None if hit is None else hit[1]

    @staticmethod
    def _key(response: str, key_objects: tuple, state: str, fingerprint: str) -> tuple:
        """An entry's key: the response, the ids of the objects that identify the fitted state, ``state`` and
        ``fingerprint``."""
        return (response, tuple(id(o) for o in key_objects), state, fingerprint)

    def clear(self) -> None:
        """Forget every entry (the next lookup of each model reads its trees again)."""
        self._store.clear()
        self._by_id.clear()


#: The process-wide extraction cache used by adapters.
model_cache = ModelCache()
