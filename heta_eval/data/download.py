"""Verified dataset downloads and safe archive extraction.

Downloads go through `pooch <https://www.fatiando.org/pooch>`_: streamed (with a tqdm
progress bar), written to a temporary file in the destination folder, checked against the
registry's md5 and only then renamed into place. A failed or truncated transfer deletes the
temporary file and is retried from scratch (``retries``); a file that still does not match
is refused with a :class:`ChecksumMismatchError` naming the URL, the expected and the actual
checksum. A :class:`filelock.FileLock` per dataset keeps two processes from downloading or
extracting the same archive at once: the second waits, then finds the verified copy.

Layout under the data root::

    <root>/_downloads/<name>/<name>.zip     the verified archive
    <root>/_downloads/checksums.json        sha256 pins of datasets whose md5 is unknown
    <root>/<name>/                          the extracted dataset (+ .heta-eval-complete)

>>> from heta_eval.data.download import is_unsafe_member
>>> is_unsafe_member("../../etc/passwd"), is_unsafe_member("scifact/corpus.jsonl")
(True, False)
"""

from __future__ import annotations

import json
import logging
import os
import re
import shutil
import stat
import tarfile
import warnings
import zipfile
from pathlib import Path, PurePosixPath

import filelock
import pooch

from heta_eval.data.locate import candidate_dirs, how_to_get, looks_like_beir, resolve_data_root
from heta_eval.data.registry import DatasetInfo, file_sha256, get_dataset
from heta_eval.io.write import write_whole

__all__ = [
    "ChecksumMismatchError",
    "DownloadError",
    "UnsafeArchiveError",
    "download_dataset",
    "fetch_file",
    "is_unsafe_member",
    "safe_extract",
]

logger = logging.getLogger(__name__)

COMPLETE_MARKER = ".heta-eval-complete"
CHECKSUMS_FILE = "checksums.json"


class DownloadError(RuntimeError):
    """The file could not be fetched (network error, truncated transfer, HTTP error)."""


class ChecksumMismatchError(DownloadError, ValueError):
    """The downloaded file does not match its expected checksum; it has been removed."""


class UnsafeArchiveError(ValueError):
    """An archive member would land outside the extraction folder (absolute path, ``..``,
    or a link pointing outside). Nothing is extracted."""


# --------------------------------------------------------------------------- fetching


def fetch_file(
    url: str,
    dest: Path,
    *,
    known_hash: str | None,
    retries: int = 2,
    timeout: float = 60.0,
    progress: bool = True,
) -> Path:
    """Download ``url`` to ``dest`` unless a copy matching ``known_hash`` (``"md5:..."`` or
    ``"sha256:..."``) is already there. The caller holds the lock.

    A mismatching existing copy is replaced; a mismatching download is deleted and raises
    :class:`ChecksumMismatchError`; network failures raise :class:`DownloadError`.
    """
    import requests  # pooch's HTTP client

    dest.parent.mkdir(parents=True, exist_ok=True)
    # pooch's temp files (tmpXXXX) left by a killed process: this folder holds one file only
    # and we hold its lock, so any leftover temp file is stale.
    for stale in dest.parent.glob("tmp*"):
        stale.unlink(missing_ok=True)
    fetcher = pooch.create(
        path=dest.parent,
        base_url="",
        registry={dest.name: known_hash},
        urls={dest.name: url},
        retry_if_failed=retries,
    )
    downloader = pooch.HTTPDownloader(progressbar=progress, timeout=timeout)
    try:
        return Path(fetcher.fetch(dest.name, downloader=downloader))
    except ValueError as error:  # pooch: hash mismatch (temp file already deleted)
        got = re.search(r"but got (\w+)", str(error))
        raise ChecksumMismatchError(
            f"checksum mismatch for {url}: expected {known_hash}, got "
            f"{got.group(1) if got else 'a different value'}. The downloaded file was removed. "
            "The transfer may be corrupt or the file may have changed upstream; retry, or pass "
            "--md5 with the checksum you expect if you trust this source."
        ) from error
    except (requests.RequestException, OSError) as error:
        raise DownloadError(f"could not download {url}: {error}") from error


def _pins_path(root: Path) -> Path:
    return root / "_downloads" / CHECKSUMS_FILE


def _read_pins(root: Path) -> dict[str, dict[str, str]]:
    path = _pins_path(root)
    if not path.exists():
        return {}
    return json.loads(path.read_text(encoding="utf-8"))


def _write_pin(root: Path, archive_name: str, url: str, sha256: str) -> None:
    pins = _read_pins(root)
    pins[archive_name] = {"sha256": sha256, "url": url}
    path = _pins_path(root)
    write_whole(path, json.dumps(pins, indent=2, sort_keys=True) + "\n")  # never half a file


# --------------------------------------------------------------------------- extraction


def is_unsafe_member(name: str) -> bool:
    """True for an archive member name that is absolute, has a drive, or climbs with ``..``."""
    normal = name.replace("\\", "/")
    if normal.startswith("/") or re.match(r"^[A-Za-z]:", normal):
        return True
    return ".." in PurePosixPath(normal).parts


def _escapes(target: Path, member_name: str, link: str, *, hard: bool) -> bool:
    # A symlink resolves relative to its own folder; a tar hardlink names another member.
    if link.startswith("/") or re.match(r"^[A-Za-z]:", link):
        return True
    base = target if hard else (target / member_name).parent
    resolved = os.path.normpath(base / link)
    root = os.path.normpath(target)
    return not (resolved == root or resolved.startswith(root + os.sep))


def _check_zip(archive: zipfile.ZipFile, target: Path) -> None:
    for info in archive.infolist():
        if is_unsafe_member(info.filename):
            raise UnsafeArchiveError(f"unsafe path in archive: {info.filename!r}")
        if stat.S_ISLNK(info.external_attr >> 16):
            link = archive.read(info).decode("utf-8", "replace")
            if _escapes(target, info.filename, link, hard=False):
                raise UnsafeArchiveError(
                    f"archive member {info.filename!r} is a link to {link!r}, outside the target"
                )


def _check_tar(archive: tarfile.TarFile, target: Path) -> None:
    for member in archive.getmembers():
        if is_unsafe_member(member.name):
            raise UnsafeArchiveError(f"unsafe path in archive: {member.name!r}")
        if member.issym() or member.islnk():
            if _escapes(target, member.name, member.linkname, hard=member.islnk()):
                raise UnsafeArchiveError(
                    f"archive member {member.name!r} links to {member.linkname!r}, "
                    "outside the target"
                )
        elif not (member.isfile() or member.isdir()):
            raise UnsafeArchiveError(f"archive member {member.name!r} is a device or fifo")


def safe_extract(archive: Path, target: Path) -> Path:
    """Extract a zip or tar archive into ``target`` after checking every member.

    Extraction goes to a hidden sibling folder first and is renamed into place, so an
    interrupted extraction never looks complete. If the archive has one top-level folder
    named like ``target`` (BEIR zips hold ``scifact/...``), its content becomes ``target``.
    Links inside a zip that stay within the target are written as zipfile writes them
    (a small file holding the link text).
    """
    target = Path(target)
    staging = target.parent / f".{target.name}.partial-{os.getpid()}"
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    try:
        if zipfile.is_zipfile(archive):
            with zipfile.ZipFile(archive) as zf:
                _check_zip(zf, staging)
                zf.extractall(staging)
        elif tarfile.is_tarfile(archive):
            with tarfile.open(archive) as tf:
                _check_tar(tf, staging)
                if hasattr(tarfile, "data_filter"):  # Python >= 3.11.4: a second safety net
                    tf.extractall(staging, filter="data")
                else:  # pragma: no cover
                    tf.extractall(staging)
        else:
            raise UnsafeArchiveError(f"{archive} is neither a zip nor a tar archive")
        entries = [p for p in staging.iterdir() if p.name != "__MACOSX"]
        source = staging
        if len(entries) == 1 and entries[0].is_dir() and entries[0].name == target.name:
            source = entries[0]
        if target.exists():
            shutil.rmtree(target)  # an earlier, incomplete extraction
        os.replace(source, target)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return target


# --------------------------------------------------------------------------- datasets


def _is_complete(folder: Path, info: DatasetInfo) -> bool:
    if (folder / COMPLETE_MARKER).exists():
        return True
    # A copy unpacked by hand (or a shared read-only folder) counts if the layout is there.
    if info.subsets:
        return all(looks_like_beir(folder / sub) for sub in info.subsets)
    return looks_like_beir(folder)


def download_dataset(
    name: str,
    *,
    data_dir: str | os.PathLike[str] | None = None,
    url: str | None = None,
    md5: str | None = None,
    retries: int = 2,
    timeout: float = 60.0,
    progress: bool = True,
    lock_timeout: float = -1,
) -> Path:
    """Make dataset ``name`` available under the data root and return its folder.

    Nothing is downloaded when an extracted copy exists. ``url``/``md5`` override the
    registry (a mirror). A registry entry with ``"md5": null`` is pinned on first download:
    its sha256 is recorded in ``_downloads/checksums.json`` (with a warning) and later
    downloads must match it.

    >>> download_dataset("scifact", data_dir="../shared/datasets/beir")  # doctest: +SKIP
    PosixPath('../shared/datasets/beir/scifact')
    """
    info = get_dataset(name)
    top = get_dataset(info.parent) if info.parent else info
    for existing in candidate_dirs(name, data_dir):
        if looks_like_beir(existing):  # incl. --data-dir pointing at the dataset folder itself
            return existing
    root = resolve_data_root(data_dir)
    folder = root / top.name
    wanted = root / name
    if _is_complete(folder, top):
        return wanted
    source = url or top.url
    if not source:
        raise DownloadError(
            f"dataset {top.name!r} has no download URL; " + how_to_get(name, wanted)
        )
    downloads = root / "_downloads" / top.name
    downloads.mkdir(parents=True, exist_ok=True)
    lock = filelock.FileLock(str(downloads) + ".lock", timeout=lock_timeout)
    with lock:
        if _is_complete(folder, top):  # another process finished while we waited
            return wanted
        checksum = md5 or top.md5
        pinned = None
        if checksum:
            known_hash: str | None = f"md5:{checksum.lower()}"
        else:
            pinned = _read_pins(root).get(top.archive_name, {}).get("sha256")
            known_hash = f"sha256:{pinned}" if pinned else None
        try:
            archive = fetch_file(
                source,
                downloads / top.archive_name,
                known_hash=known_hash,
                retries=retries,
                timeout=timeout,
                progress=progress,
            )
        except DownloadError as error:
            if isinstance(error, ChecksumMismatchError):
                raise
            advice = how_to_get(name, wanted, archive=downloads / top.archive_name)
            raise DownloadError(f"{error}\n{advice}") from error
        if known_hash is None:
            digest = file_sha256(archive)
            _write_pin(root, top.archive_name, source, digest)
            warnings.warn(
                f"{top.name}: the registry has no checksum for {source}; recorded sha256 "
                f"{digest} in {_pins_path(root)}. Later downloads must match it.",
                stacklevel=2,
            )
        safe_extract(archive, folder)
        (folder / COMPLETE_MARKER).write_text(
            json.dumps({"url": source, "checksum": known_hash or f"sha256:{file_sha256(archive)}"})
            + "\n",
            encoding="utf-8",
        )
    return wanted
