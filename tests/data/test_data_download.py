"""Downloads against a real HTTP server on 127.0.0.1: checksum, truncation, retry, lock,
safe extraction, sha256 pinning of unknown checksums, and the no-network message."""

from __future__ import annotations

import hashlib
import io
import json
import socket
import stat
import tarfile
import threading
import zipfile
from pathlib import Path

import pytest
from support.download_server import CORPUS, Server, beir_zip

from heta_eval.data import download as dl
from heta_eval.data.beir_loader import load_beir
from heta_eval.data.download import (
    ChecksumMismatchError,
    DownloadError,
    UnsafeArchiveError,
    download_dataset,
    safe_extract,
)


def md5(data: bytes) -> str:
    return hashlib.md5(data).hexdigest()


@pytest.fixture
def server():
    srv = Server()
    yield srv
    srv.close()


def fetch(name, root, url, checksum, **kwargs):
    kwargs.setdefault("retries", 0)
    kwargs.setdefault("timeout", 5)
    kwargs.setdefault("progress", False)
    kwargs.setdefault("lock_timeout", 30)
    return download_dataset(name, data_dir=root, url=url, md5=checksum, **kwargs)


def leftovers(root: Path) -> list[str]:
    folder = root / "_downloads" / "scifact"
    return sorted(p.name for p in folder.iterdir()) if folder.exists() else []


def test_good_archive_is_verified_extracted_and_not_fetched_again(server, tmp_path):
    data = beir_zip()
    server.files["/scifact.zip"] = data
    folder = fetch("scifact", tmp_path, server.url("/scifact.zip"), md5(data))
    assert folder == tmp_path / "scifact"
    ds = load_beir(folder)
    assert ds.qrels == {"q1": {"d1": 1}} and [d.id for d in ds.corpus()] == ["d1", "d2"]
    marker = json.loads((folder / dl.COMPLETE_MARKER).read_text())
    assert marker["checksum"] == f"md5:{md5(data)}"
    assert leftovers(tmp_path) == ["scifact.zip"]  # no temp files
    # A second call touches nothing on the network.
    assert fetch("scifact", tmp_path, server.url("/scifact.zip"), md5(data)) == folder
    assert server.hits["/scifact.zip"] == 1
    # Extraction lost but a verified archive present: re-extract, do not re-download.
    import shutil

    shutil.rmtree(folder)
    fetch("scifact", tmp_path, server.url("/scifact.zip"), md5(data))
    assert server.hits["/scifact.zip"] == 1 and (folder / "corpus.jsonl").exists()


def test_checksum_mismatch_is_refused_and_removed(server, tmp_path):
    good = beir_zip()
    corrupted = bytearray(good)
    corrupted[len(corrupted) // 2] ^= 0xFF
    server.files["/scifact.zip"] = bytes(corrupted)
    url = server.url("/scifact.zip")
    with pytest.raises(ChecksumMismatchError) as info:
        fetch("scifact", tmp_path, url, md5(good))
    message = str(info.value)
    assert f"expected md5:{md5(good)}" in message
    assert f"got {md5(bytes(corrupted))}" in message
    assert url in message
    assert leftovers(tmp_path) == []  # nothing kept, no temp file
    assert not (tmp_path / "scifact").exists()


def test_truncated_transfer_is_an_error_and_leaves_nothing(server, tmp_path):
    data = beir_zip()
    server.files["/scifact.zip"] = data
    server.truncate["/scifact.zip"] = len(data) // 3
    server.truncate_times["/scifact.zip"] = 99
    with pytest.raises(DownloadError) as info:
        fetch("scifact", tmp_path, server.url("/scifact.zip"), md5(data))
    assert not isinstance(info.value, ChecksumMismatchError)
    assert "could not be downloaded here" in str(info.value)  # and what to do instead
    assert leftovers(tmp_path) == []
    assert not (tmp_path / "scifact").exists()


def test_interrupted_download_is_cleanly_retried(server, tmp_path):
    data = beir_zip()
    server.files["/scifact.zip"] = data
    server.truncate["/scifact.zip"] = len(data) // 2
    server.truncate_times["/scifact.zip"] = 1  # only the first attempt is cut short
    # A stale temp file from a killed process is cleaned up too.
    stale = tmp_path / "_downloads" / "scifact" / "tmpdeadbeef"
    stale.parent.mkdir(parents=True)
    stale.write_bytes(b"partial")
    folder = fetch("scifact", tmp_path, server.url("/scifact.zip"), md5(data), retries=1)
    assert server.hits["/scifact.zip"] == 2
    assert (folder / "corpus.jsonl").read_text() == CORPUS
    assert leftovers(tmp_path) == ["scifact.zip"]


def test_two_concurrent_downloads_fetch_once(server, tmp_path):
    data = beir_zip()
    server.files["/scifact.zip"] = data
    server.delay = 0.5  # both threads start while the first transfer is in flight
    results: list[object] = []

    def worker() -> None:
        try:
            results.append(fetch("scifact", tmp_path, server.url("/scifact.zip"), md5(data)))
        except Exception as error:  # surfaced by the assert below
            results.append(error)

    threads = [threading.Thread(target=worker) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=600)
    assert results == [tmp_path / "scifact"] * 3
    assert server.hits["/scifact.zip"] == 1


def test_lock_across_processes(server, tmp_path):
    import subprocess
    import sys

    data = beir_zip()
    server.files["/scifact.zip"] = data
    server.delay = 0.5
    code = (
        "import sys; from heta_eval.data.download import download_dataset as d; "
        "print(d('scifact', data_dir=sys.argv[1], url=sys.argv[2], md5=sys.argv[3], "
        "progress=False, timeout=60, retries=0))"
    )
    args = [sys.executable, "-c", code, str(tmp_path), server.url("/scifact.zip"), md5(data)]
    procs = [
        subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE) for _ in range(2)
    ]
    outputs = [p.communicate(timeout=600) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outputs
    assert server.hits["/scifact.zip"] == 1


# ---------------------------------------------------------------- unsafe archives


def test_dotdot_member_is_rejected_before_anything_is_written(server, tmp_path):
    data = beir_zip(extra={"scifact/../../evil.txt": b"pwned"})
    server.files["/scifact.zip"] = data
    root = tmp_path / "root"
    with pytest.raises(UnsafeArchiveError, match=r"\.\./\.\./evil\.txt"):
        fetch("scifact", root, server.url("/scifact.zip"), md5(data))
    assert not (tmp_path / "evil.txt").exists()
    assert not (root / "evil.txt").exists()
    assert not (root / "scifact").exists()
    assert not list(root.glob(".scifact.partial-*"))


def test_absolute_member_is_rejected(tmp_path):
    archive = tmp_path / "a.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("/etc/evil", b"x")
    with pytest.raises(UnsafeArchiveError, match="unsafe path"):
        safe_extract(archive, tmp_path / "out")


def zip_with_symlink(target: str) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as zf:
        zf.writestr("scifact/corpus.jsonl", CORPUS)
        info = zipfile.ZipInfo("scifact/link")
        info.external_attr = (stat.S_IFLNK | 0o777) << 16
        zf.writestr(info, target)
    return buffer.getvalue()


def test_zip_symlink_escaping_the_target_is_rejected(server, tmp_path):
    data = zip_with_symlink("../../../etc/passwd")
    server.files["/scifact.zip"] = data
    with pytest.raises(UnsafeArchiveError, match="link"):
        fetch("scifact", tmp_path, server.url("/scifact.zip"), md5(data))
    assert not (tmp_path / "scifact").exists()
    with pytest.raises(UnsafeArchiveError):
        archive = tmp_path / "abs.zip"
        archive.write_bytes(zip_with_symlink("/etc/passwd"))
        safe_extract(archive, tmp_path / "out")


def tar_with(member: tarfile.TarInfo, data: bytes = b"") -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tf:
        ok = tarfile.TarInfo("scifact/corpus.jsonl")
        ok.size = len(CORPUS)
        tf.addfile(ok, io.BytesIO(CORPUS.encode()))
        member.size = len(data)
        tf.addfile(member, io.BytesIO(data) if data else None)
    return buffer.getvalue()


@pytest.mark.parametrize(
    ("kind", "link"),
    [
        (tarfile.SYMTYPE, "../../outside"),
        (tarfile.SYMTYPE, "/etc/passwd"),
        (tarfile.LNKTYPE, "../outside"),
    ],
)
def test_tar_links_escaping_the_target_are_rejected(tmp_path, kind, link):
    member = tarfile.TarInfo("scifact/link")
    member.type = kind
    member.linkname = link
    archive = tmp_path / "a.tar.gz"
    archive.write_bytes(tar_with(member))
    with pytest.raises(UnsafeArchiveError, match="link"):
        safe_extract(archive, tmp_path / "scifact")
    assert not (tmp_path / "scifact").exists()


def test_tar_link_inside_the_target_is_fine(tmp_path):
    member = tarfile.TarInfo("scifact/alias.jsonl")
    member.type = tarfile.SYMTYPE
    member.linkname = "corpus.jsonl"
    archive = tmp_path / "a.tar.gz"
    archive.write_bytes(tar_with(member))
    out = safe_extract(archive, tmp_path / "scifact")
    assert (out / "alias.jsonl").read_text() == CORPUS


# ---------------------------------------------------------------- unknown checksums, no network


def test_unknown_md5_is_pinned_on_first_download(server, tmp_path, monkeypatch):
    registry = tmp_path / "registry.json"
    registry.write_text(
        json.dumps(
            {
                "datasets": {
                    "scifact": {
                        "kind": "custom",
                        "url": server.url("/scifact.zip"),
                        "md5": None,
                        "split": "test",
                    }
                }
            }
        )
    )
    monkeypatch.setenv("HETA_EVAL_REGISTRY", str(registry))
    first = beir_zip()
    server.files["/scifact.zip"] = first
    root = tmp_path / "data"
    with pytest.warns(UserWarning, match="recorded sha256"):
        download_dataset("scifact", data_dir=root, progress=False, retries=0, timeout=60)
    pins = json.loads((root / "_downloads" / "checksums.json").read_text())
    assert pins["scifact.zip"]["sha256"] == hashlib.sha256(first).hexdigest()
    # Upstream changes the file: a fresh download must match the recorded pin.
    import shutil

    shutil.rmtree(root / "scifact")
    (root / "_downloads" / "scifact" / "scifact.zip").unlink()
    server.files["/scifact.zip"] = beir_zip(extra={"scifact/new.txt": b"changed"})
    with pytest.raises(ChecksumMismatchError, match="sha256"):
        download_dataset("scifact", data_dir=root, progress=False, retries=0, timeout=60)


def test_no_network_error_says_how_to_get_the_data(tmp_path):
    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    with pytest.raises(DownloadError) as info:
        fetch("scifact", tmp_path, f"http://127.0.0.1:{port}/scifact.zip", "0" * 32)
    message = str(info.value)
    assert "could not download" in message
    # Not "run the same command again": where to put an archive fetched elsewhere.
    archive = tmp_path / "_downloads" / "scifact" / "scifact.zip"
    assert f"copy it to {archive}, then rerun this download" in message
    assert "(needs network)" not in message
    assert "HETA_EVAL_DATA" in message


def test_the_offline_advice_works_an_archive_copied_there_is_verified_and_extracted(tmp_path):
    data = beir_zip()
    (tmp_path / "_downloads" / "scifact").mkdir(parents=True)
    (tmp_path / "_downloads" / "scifact" / "scifact.zip").write_bytes(data)
    with socket.socket() as sock:  # still no network
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    folder = fetch("scifact", tmp_path, f"http://127.0.0.1:{port}/scifact.zip", md5(data))
    assert (folder / "corpus.jsonl").read_text() == CORPUS


def test_http_404_is_a_download_error(server, tmp_path):
    with pytest.raises(DownloadError, match="404"):
        fetch("scifact", tmp_path, server.url("/missing.zip"), "0" * 32)
