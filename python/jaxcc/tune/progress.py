"""Which variant the tuning child is running, told without a message per call (decision 258): a
small file both processes map, where the child writes the variant's tag and a count of calls
begun before every call, and the user's process reads it only when it has to (the child died or
went quiet) or at a slow poll. A pipe message per call woke the user's process during every timed
call, which at a 40 us kernel doubled the time the tuner measured and flattened the differences
between variants."""

from __future__ import annotations

import mmap
import struct
import tempfile

SIZE = 512
_HEAD = struct.Struct("<QH")  # calls begun by the child, the tag's length in bytes
_TAG_ROOM = SIZE - _HEAD.size


class Slot:
    """The shared page. `begin(tag)` (the child, before a call) is two writes to memory: no
    system call, nothing that wakes the other process."""

    def __init__(self, fd: int):
        self._map = mmap.mmap(fd, SIZE)
        self._count = 0
        self._encoded: dict[str, bytes] = {}

    @classmethod
    def create(cls):
        """(a new slot, its file): the file's descriptor is what the child is given."""
        file = tempfile.TemporaryFile()
        file.truncate(SIZE)
        return cls(file.fileno()), file

    def begin(self, tag: str) -> None:
        data = self._encoded.get(tag)
        if data is None:
            data = self._encoded[tag] = tag.encode("utf-8")[:_TAG_ROOM]
        self._count += 1
        self._map[_HEAD.size : _HEAD.size + len(data)] = data
        _HEAD.pack_into(self._map, 0, self._count, len(data))

    def read(self) -> tuple[int, str | None]:
        """(calls the child has begun, the tag of the latest, None before any). Only the child
        writes: the reader compares counts to see whether a call began since it last looked."""
        count, length = _HEAD.unpack_from(self._map, 0)
        if count == 0:
            return 0, None
        tag = bytes(self._map[_HEAD.size : _HEAD.size + min(length, _TAG_ROOM)])
        return count, tag.decode("utf-8", "replace")

    def close(self) -> None:
        self._map.close()
