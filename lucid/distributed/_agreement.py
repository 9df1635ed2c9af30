"""What each process says it is about to exchange, and the message when they disagree.

MLX's collectives check nothing: a process summing 3 floats against one summing 5, or a
broadcast against an all_reduce, returns garbage on both. So before each collective every
process describes its call (:class:`Call`: the collective, the op, the root, each tensor's
dtype and shape, how they are grouped) and the processes exchange a 16-byte fingerprint of
it, in one small all_gather. Equal fingerprints: the call goes ahead. Otherwise every
process has seen the same table, so every process fetches the full descriptions (the rare
path) and raises the same :class:`~lucid.distributed.DistBackendError`, before any data
has moved.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass

# how many tensors a description lists before "..." (a DDP model can have thousands)
_SHOWN = 4


@dataclass(frozen=True)
class Call:
    """One process's description of a collective it is about to run.

    ``tensors`` lists ``(dtype name, shape)`` in the order they travel; ``layout`` says
    how they are grouped into messages (DDP's buckets, ZeRO's shards), where that matters:
    any nesting of tuples of ints.
    """

    collective: str
    op: str | None = None
    root: tuple[str, int] | None = None  # ("src", 0), ("to", 1)
    tensors: tuple[tuple[str, tuple[int, ...]], ...] = ()
    layout: tuple = ()

    def encode(self) -> bytes:
        """The call as JSON, for the message (the rare path)."""
        return json.dumps(asdict(self), separators=(",", ":")).encode()

    def fingerprint(self) -> list[int]:
        """Two int64 words, equal on two processes exactly when their calls are (the repr of
        tuples of str and int is the same in every process, and cheaper than JSON)."""
        fields = (self.collective, self.op, self.root, self.tensors, self.layout)
        digest = hashlib.blake2b(repr(fields).encode(), digest_size=16).digest()
        return [int.from_bytes(digest[:8], "little", signed=True), int.from_bytes(digest[8:], "little", signed=True)]

    @staticmethod
    def decode(payload: bytes) -> dict:
        return json.loads(payload)


def tensor_entry(tensor) -> tuple[str, tuple[int, ...]]:
    return (tensor.dtype.name, tuple(int(n) for n in tensor.shape))  # plain ints: the same repr everywhere


def _spell(entry) -> str:
    dtype, shape = entry
    return f"{dtype}[{', '.join(map(str, shape))}]"


def spell(call: dict) -> str:
    """``all_reduce(float32[3], op=SUM)``: a call as the message shows it."""
    parts = []
    tensors = call["tensors"]
    if tensors:
        shown = ", ".join(_spell(t) for t in tensors[:_SHOWN])
        if len(tensors) > _SHOWN:
            shown += f", ... ({len(tensors)} tensors)"
        parts.append(shown if len(tensors) == 1 else f"[{shown}]")
    if call["op"] is not None:
        parts.append(f"op={call['op']}")
    if call["root"] is not None:
        parts.append(f"{call['root'][0]}={call['root'][1]}")
    if call["layout"]:
        parts.append(f"grouped as {json.dumps(call['layout'])}")
    return f"{call['collective']}({', '.join(parts)})"


def _difference(a: dict, b: dict) -> str:
    """What differs between two calls, the most telling first."""
    for key, what in (("collective", "the collective"), ("op", "the op"), ("root", "the root")):
        if a[key] != b[key]:
            return what
    if len(a["tensors"]) != len(b["tensors"]):
        return "the number of tensors"
    for i, (x, y) in enumerate(zip(a["tensors"], b["tensors"])):
        where = "" if len(a["tensors"]) == 1 else f" of tensor {i}"
        if x[0] != y[0]:
            return f"the dtype{where} ({x[0]} against {y[0]})"
        if list(x[1]) != list(y[1]):
            return f"the shape{where} ({_spell(x)} against {_spell(y)})"
    return "how the tensors are grouped"


def disagreement(calls: list[dict]) -> str:
    """The message for processes whose ``calls`` (in rank order) are not all equal."""
    distinct: list[tuple[dict, list[int]]] = []
    for rank, call in enumerate(calls):
        for seen, ranks in distinct:
            if seen == call:
                ranks.append(rank)
                break
        else:
            distinct.append((call, [rank]))
    first, other = distinct[0][0], distinct[1][0]
    said = "; ".join(f"{_ranks(ranks)} called {spell(call)}" for call, ranks in distinct)
    return (f"the processes called collectives that disagree on {_difference(first, other)}: {said}. "
            "Every process must make the same collective calls in the same order, with the same op, root, "
            "dtypes and shapes; nothing was exchanged, and the process group can still be used")


def _ranks(ranks: list[int]) -> str:
    return f"rank {ranks[0]}" if len(ranks) == 1 else f"ranks {', '.join(map(str, ranks))}"
