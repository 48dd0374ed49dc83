"""A dictionary on disk shared by processes, whose entries are checked on reading.

One SQLite database file per store: SQLite serializes the writers of several
processes and makes each write atomic. An entry holds its key, a SHA-256
digest of the key and its content, and the pickled content. A read
recomputes the digest before unpickling, so a damaged entry (flipped bits,
truncated or foreign data) is logged and read as missing, and the next
:meth:`DiskStore.put` replaces it. A file SQLite cannot read as a database
is logged and replaced by an empty one. No error of the disk reaches the
caller: a cache that cannot be read or written is a cache miss.

Public names: DiskStore, default_cache_dir.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import pickle
import sqlite3
import threading
from collections.abc import Callable
from typing import Any

logger = logging.getLogger(__name__)

#: SQLite's result codes: a read-only database, a damaged one, a file that is not
#: one, and a database file that another process replaced (reopened, not damage)
_SQLITE_READONLY, _SQLITE_CORRUPT, _SQLITE_NOTADB = 8, 11, 26
_SQLITE_READONLY_DBMOVED = 1032
#: versions of the entry format (part of the digest)
_FORMAT = b"kernelcore-store-1\0"
#: how long a process waits for another one's write before giving up (seconds)
_BUSY_TIMEOUT = 60.0


def default_cache_dir() -> str:
    """``KERNELCORE_CACHE_DIR``, else the user cache directory of kernelcore."""
    directory = os.environ.get("KERNELCORE_CACHE_DIR")
    if directory:
        return directory
    try:
        import platformdirs  # an optional dependency
        return platformdirs.user_cache_dir("kernelcore")
    except ImportError:
        return os.path.join(os.path.expanduser("~"), ".cache", "kernelcore")


def _digest(key: str, content: bytes) -> str:
    return hashlib.sha256(_FORMAT + key.encode() + b"\0" + content).hexdigest()


def _damaged_file(error: sqlite3.Error, path: str) -> bool:
    """Whether *error* says the database file at *path* is damaged or not a
    database (a writable file that SQLite finds read-only has a damaged
    header)."""
    code = getattr(error, "sqlite_errorcode", None)
    if code is None:
        return type(error) is sqlite3.DatabaseError
    if code & 0xFF == _SQLITE_READONLY:
        return (code != _SQLITE_READONLY_DBMOVED and os.access(path, os.W_OK)
                and os.access(os.path.dirname(path) or ".", os.W_OK))
    return code & 0xFF in (_SQLITE_CORRUPT, _SQLITE_NOTADB)


class DiskStore:
    """Pickled values by string key in ``<directory>/<name>.sqlite``, checked
    by a digest when read (see the module documentation); safe to use from
    several threads and processes."""

    def __init__(self, name: str, directory: str):
        self.path = os.path.join(directory, f"{name}.sqlite")
        self._lock = threading.Lock()
        self._conn: sqlite3.Connection | None = None
        self._inode: int | None = None

    def get(self, key: str, accept: Callable[[Any], bool] = lambda value: True) -> Any:
        """The value stored under *key*, or None if there is none or it is
        damaged (its digest differs, it cannot be unpickled or *accept*
        refuses it)."""
        row = self._run(lambda conn: conn.execute(
            "SELECT digest, content FROM entries WHERE key = ?", (key,)).fetchone())
        if row is None:
            return None
        digest, content = row
        if not isinstance(content, bytes) or digest != _digest(key, content):
            logger.warning("damaged cache entry %s in %s (its digest does not match "
                           "its content): rebuilding it", key[:12], self.path)
            return None
        try:
            value = pickle.loads(content)
        except Exception as e:
            logger.warning("unreadable cache entry %s in %s (%s: %s): rebuilding it",
                           key[:12], self.path, type(e).__name__, e)
            return None
        if not accept(value):
            logger.warning("cache entry %s in %s holds an unexpected %s: rebuilding it",
                           key[:12], self.path, type(value).__name__)
            return None
        return value

    def put(self, key: str, value: Any) -> bool:
        """Store *value* under *key* (replacing what is there); whether it was
        written."""
        content = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
        row = (key, _digest(key, content), content)
        return self._run(lambda conn: bool(conn.execute(
            "INSERT OR REPLACE INTO entries VALUES (?, ?, ?)", row))) is True

    # {{{ the database file

    def _run(self, action: Callable[[sqlite3.Connection], Any]) -> Any:
        """*action*'s result on a connection to the file, or None when the
        file cannot be used (logged); a damaged file is replaced once."""
        with self._lock:
            for attempt in (1, 2):
                try:
                    return action(self._connection())
                except sqlite3.Error as e:
                    if not _damaged_file(e, self.path) or attempt == 2:
                        logger.warning("kernel cache %s unusable (%s: %s)", self.path,
                                       type(e).__name__, e)
                        self._close()
                        return None
                    logger.warning("kernel cache %s is damaged (%s): starting it anew",
                                   self.path, e)
                    self._remove_file()
                except OSError as e:
                    logger.warning("kernel cache %s unusable (%s)", self.path, e)
                    return None
        return None

    def _connection(self) -> sqlite3.Connection:
        """An open connection to the file now at :attr:`path` (reopened when
        another process replaced it)."""
        try:
            inode = os.stat(self.path).st_ino
        except FileNotFoundError:
            inode = None
        if self._conn is not None and inode == self._inode:
            return self._conn
        self._close()
        os.makedirs(os.path.dirname(self.path) or ".", exist_ok=True)
        conn = sqlite3.connect(self.path, timeout=_BUSY_TIMEOUT, isolation_level=None,
                               check_same_thread=False)
        try:
            conn.execute("PRAGMA synchronous = OFF")      # a cache: speed over durability
            conn.execute("CREATE TABLE IF NOT EXISTS entries "
                         "(key TEXT PRIMARY KEY, digest TEXT, content BLOB)")
        except BaseException:
            conn.close()
            raise
        self._conn, self._inode = conn, os.stat(self.path).st_ino
        return conn

    def _close(self) -> None:
        if self._conn is not None:
            self._conn.close()
        self._conn = self._inode = None

    def _remove_file(self) -> None:
        self._close()
        for suffix in ("", "-journal", "-wal", "-shm"):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(self.path + suffix)

    # }}}
