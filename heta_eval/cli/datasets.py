"""``heta-eval datasets``: list, download and validate registry datasets."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from heta_eval.cli import CliError

if TYPE_CHECKING:
    from heta_eval.data.registry import DatasetInfo

EPILOG = """examples:
  heta-eval datasets list --data-dir ../shared/datasets/beir
  heta-eval datasets download scifact
  heta-eval datasets download scifact --url https://mirror.example/scifact.zip \
      --md5 5f7d1de60b170fc8027bb7898e2efca1
  heta-eval datasets validate scifact --data-dir ../shared/datasets/beir
"""


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "datasets",
        help="list, download and validate datasets",
        description="List, download (checksum-verified) and validate the registry's datasets.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    listing = actions.add_parser("list", help="list the registry's datasets")
    listing.add_argument("--all", action="store_true", help="also list CQADupStack sub-forums")
    listing.add_argument(
        "--data-dir", help="data root to look in (default: $HETA_EVAL_DATA or the cache)"
    )
    listing.set_defaults(handler=run_list)

    download = actions.add_parser("download", help="download and verify a dataset")
    download.add_argument("name")
    download.add_argument(
        "--data-dir",
        help="folder that holds <name>/ (default: $HETA_EVAL_DATA or the cache under datasets/)",
    )
    download.add_argument("--url", help="download from this URL instead (a mirror)")
    download.add_argument("--md5", help="expected md5 of the archive (with --url)")
    download.add_argument("--retries", type=int, default=2)
    download.set_defaults(handler=run_download)

    validate = actions.add_parser("validate", help="check a dataset's files, with line numbers")
    validate.add_argument("name")
    validate.add_argument("--data-dir")
    validate.add_argument("--split", help="qrels split (default: the registry's)")
    validate.set_defaults(handler=run_validate)


def run_list(args: argparse.Namespace) -> int:
    from heta_eval.data.registry import RegistryError, list_datasets

    try:
        entries = list_datasets(include_subsets=args.all)
    except RegistryError as error:
        raise CliError(str(error)) from None
    print(f"{'name':<28} {'split':<6} {'queries':>8} {'corpus':>10}  {'md5':<32}  on disk")
    for info in entries:
        present = _on_disk(info, args.data_dir)
        print(
            f"{info.name:<28} {info.split:<6} {info.queries or 0:>8,} {info.corpus or 0:>10,}  "
            f"{info.md5 or '(unknown)':<32}  {'yes' if present else 'no'}"
        )
    return 0


def _on_disk(info: DatasetInfo, data_dir: str | None) -> bool:
    """Whether the dataset's files are where its adapter will look for them."""
    from heta_eval.data.locate import dataset_dir, looks_like_beir

    if info.adapter == "scifact-claims":
        from heta_eval.adapters.scifact_claims import find_release

        return find_release(data_dir, info.split) is not None
    folder = dataset_dir(info.name, data_dir)
    if info.subsets:
        return all(looks_like_beir(folder / subset) for subset in info.subsets)
    return looks_like_beir(folder)


def run_download(args: argparse.Namespace) -> int:
    from heta_eval.data.download import DownloadError, UnsafeArchiveError, download_dataset
    from heta_eval.data.registry import RegistryError

    try:
        folder = download_dataset(
            args.name, data_dir=args.data_dir, url=args.url, md5=args.md5, retries=args.retries
        )
    except (RegistryError, DownloadError, UnsafeArchiveError) as error:
        raise CliError(str(error)) from None
    print(f"{args.name}: ready at {folder}")
    return 0


def run_validate(args: argparse.Namespace) -> int:
    from heta_eval.data.locate import DatasetNotFoundError, find_dataset
    from heta_eval.data.registry import RegistryError, get_dataset
    from heta_eval.data.validate import validate_dataset

    try:
        info = get_dataset(args.name)
        if info.adapter != "beir":
            raise CliError(
                f"{info.name} is read by the {info.adapter!r} adapter, not in the BEIR layout; "
                "`validate` checks BEIR-layout datasets (its adapter checks its own files "
                "when it loads them)"
            )
        names = [f"{info.name}/{sub}" for sub in info.subsets] or [info.name]
        folders = [find_dataset(name, args.data_dir) for name in names]
    except (RegistryError, DatasetNotFoundError) as error:
        raise CliError(str(error)) from None
    ok = True
    for name, folder in zip(names, folders, strict=True):
        known = get_dataset(name).known_defects or info.known_defects
        report = validate_dataset(folder, args.split or info.split, known_defects=known)
        print(f"{name}: {report.format()}")
        ok = ok and report.ok
    return 0 if ok else 1
