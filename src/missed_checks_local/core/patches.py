"""The emulator's patches of moto's server (werkzeug) and of botocore, and what every service's
patches share (:class:`MotoChanged`, the install lock).

Each patch names its upstream candidate: what a pull request to moto (or werkzeug, botocore) would
change, or "not upstreamable" and why. Checked against moto 5.2.1-5.2.5, Werkzeug 3.1, botocore 1.44.
Nothing here runs at import: :func:`missed_checks_local.patches.install` installs them.
"""

from __future__ import annotations

import functools
import io
import threading
from typing import Any

import botocore.loaders
import botocore.session

__all__ = ["INSTALL_LOCK", "MOTO_VERSION_CHECKED", "MotoChanged", "backend_per_host_once",
           "one_data_loader_per_process", "one_write_per_answer", "process_loader"]

MOTO_VERSION_CHECKED = "5.2.1"
INSTALL_LOCK = threading.Lock()
"""Held while a patch is installed (moto's classes are process-wide)."""


class MotoChanged(RuntimeError):
    """moto no longer has what a patch replaces: the emulator would silently lose a behaviour."""


# -- werkzeug: one sendall per answer (5h) -------------------------------------------------------
class _OneWritePerAnswer(io.BufferedIOBase):
    """A request handler's ``wfile`` that sends what was written at each ``flush`` in one
    ``sendall`` (patch 5h); an interim ``100 Continue`` goes at once, as the client waits for it."""

    def __init__(self, connection: Any) -> None:
        super().__init__()
        self._connection = connection
        self._parts: list[bytes] = []

    def writable(self) -> bool:
        return True

    def write(self, data: Any) -> int:
        chunk = bytes(data)
        self._parts.append(chunk)
        if chunk.startswith(b"HTTP/1.1 100 "):
            self.flush()
        return len(chunk)

    def flush(self) -> None:
        if self._parts:
            data, self._parts = b"".join(self._parts), []
            self._connection.sendall(data)


def one_write_per_answer() -> None:
    """Patch 5h: moto's server (werkzeug's ``WSGIRequestHandler`` under ``MotoRequestHandler``) writes
    each answer's status line and headers with one ``sendall`` and its body with another
    (socketserver's unbuffered writer); each system call gives up the GIL and waits to get it back
    behind the threads serving other requests (17 to 23 % of the server threads' samples in a
    fanned-out evaluation). The answer is sent with one ``sendall`` at werkzeug's ``flush``. Same bytes.

    Upstream candidate (werkzeug): buffer the status line and headers until the body is written."""
    from moto.moto_server.werkzeug_app import MotoRequestHandler  # deferred: moto is slow to import

    original = MotoRequestHandler.setup

    @functools.wraps(original)
    def setup(self: Any) -> None:
        original(self)
        if self.wbufsize == 0:  # socketserver's unbuffered writer: one system call per write
            self.wfile = _OneWritePerAnswer(self.connection)

    MotoRequestHandler.setup = setup  # type: ignore[method-assign]


# -- moto's server: one backend lookup per host (5e) -----------------------------------------------
def backend_per_host_once() -> None:
    """Patch 5e: ``DomainDispatcherApplication.get_backend_for_host`` keeps the backend it found for
    each host. moto picks the backend of every request under one process-wide lock, listing its
    package directory (about 170 system calls) and trying every service's URL patterns, so under
    load every request queued on that lock. The answer for a host never changes while moto runs.

    Upstream candidate (moto, ``moto_server/werkzeug_app.py``): cache the backend per host."""
    from moto.moto_server.werkzeug_app import DomainDispatcherApplication  # deferred: moto is slow to import

    original = DomainDispatcherApplication.get_backend_for_host
    found: dict[str, Any] = {}

    @functools.wraps(original)
    def get_backend_for_host(self: Any, host: str | None) -> Any:
        if host is None:
            return None
        backend = found.get(host)
        if backend is None:
            backend = original(self, host)
            if backend is not None:  # an unknown host keeps being told so
                found[host] = backend
        return backend

    DomainDispatcherApplication.get_backend_for_host = get_backend_for_host  # type: ignore[method-assign]


# -- botocore: the process's one data loader (5i) -------------------------------------------------
class _DistinctPaths(list[str]):
    """A data loader's search paths: boto3 appends its own data path for every new session."""

    def append(self, path: str) -> None:
        if path not in self:
            super().append(path)


_LOADER_LOCK = threading.Lock()


def process_loader() -> botocore.loaders.Loader:
    """The one botocore data loader of this process's sessions once :func:`one_data_loader_per_process`
    is installed: the loader a new botocore session got first (``AWS_DATA_PATH`` honoured)."""
    with _LOADER_LOCK:  # the first caller makes it, every later one gets the same
        return _first_loader()


@functools.cache
def _first_loader() -> botocore.loaders.Loader:
    loader: botocore.loaders.Loader = botocore.session.get_session().get_component("data_loader")
    return loader


def one_data_loader_per_process() -> None:
    """Patch 5i: every botocore session of this process uses its one data loader
    (:func:`process_loader`), moto's own sessions included. moto opens a new ``boto3.Session()`` to
    list a service's regions at import (``moto.ec2``, 0.3 s) and for every backend it creates, and
    botocore parsed its endpoint file and the service's model again for each (importing moto's
    CloudFormation took 1.23 s with them, 0.74 s without). The loader's search paths are kept
    distinct (boto3 appends its data path for each session). Installed before moto is imported.

    Not upstreamable as is: it changes every botocore session of the process, which only a process
    that runs the emulator wants; moto would do better with one session of its own (upstream
    candidate for moto: reuse one ``boto3.Session`` for its region lists)."""
    session_class = botocore.session.Session
    if getattr(session_class._register_data_loader, "one_per_process", False):  # type: ignore[attr-defined]  # private in botocore, not declared by botocore-stubs
        return
    loader = process_loader()
    with INSTALL_LOCK:
        if getattr(session_class._register_data_loader, "one_per_process", False):  # type: ignore[attr-defined]  # private in botocore, not declared by botocore-stubs
            return
        if not isinstance(getattr(loader, "_search_paths", None), list):
            raise MotoChanged("botocore.loaders.Loader: _search_paths is gone")
        loader._search_paths = _DistinctPaths(loader._search_paths)  # type: ignore[attr-defined]  # private in botocore, not declared by botocore-stubs

        def register_data_loader(self: Any) -> None:
            self._components.lazy_register_component("data_loader", process_loader)

        register_data_loader.one_per_process = True  # type: ignore[attr-defined]
        session_class._register_data_loader = register_data_loader  # type: ignore[attr-defined]  # private in botocore, not declared by botocore-stubs
