"""``heta-eval datasets``: list, download and validate registry datasets."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from heta_eval.cli import CliError
from heta_eval.cli.numbers import RETRIES, add_number

if TYPE_CHECKING:
    from heta_eval.data.registry import DatasetInfo

EPILOG = """examples:
  heta-eval datasets list --data-dir ../shared/datasets/beir
  heta-eval datasets download scifact
  heta-eval datasets download scifact --url https://mirror.example/scifact.zip \
      --md5 5f7d1de60b170fc8027bb7898e2efca1
  heta-eval datasets validate scifact --data-dir ../shared/datasets/beir
  heta-eval datasets validate ./my_dataset
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
    listing = actions.add_parser(
        "list",
        help="list the registry's datasets",
        description="List every registered dataset: split, query and corpus counts, md5, and "
        "whether it is on disk where its adapter reads it.",
        epilog="example:\n  heta-eval datasets list --data-dir ../shared/datasets/beir",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    listing.add_argument("--all", action="store_true", help="also list CQADupStack sub-forums")
    listing.add_argument(
        "--data-dir",
        help="data root to look in (default: where run and evaluate look: $HETA_EVAL_DATA, "
        "../shared/datasets/beir beside a checkout, the cache)",
    )
    listing.set_defaults(handler=run_list)

    download = actions.add_parser(
        "download",
        help="download and verify a dataset",
        description="Download a dataset's archive, verify its md5 against the registry, and "
        "extract it safely; nothing is downloaded when it is already on disk.",
        epilog="examples:\n  heta-eval datasets download scifact\n"
        "  heta-eval datasets download scifact --data-dir data/beir\n"
        "  heta-eval datasets download scifact --url https://mirror.example/scifact.zip "
        "--md5 5f7d1de60b170fc8027bb7898e2efca1",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    download.add_argument("name")
    download.add_argument(
        "--data-dir",
        help="folder that holds <name>/ (default: $HETA_EVAL_DATA or the cache under datasets/)",
    )
    download.add_argument("--url", help="download from this URL instead (a mirror)")
    download.add_argument("--md5", help="expected md5 of the archive (with --url)")
    add_number(
        download, "--retries", rule=RETRIES, default=2, help="attempts after the first (default: 2)"
    )
    download.set_defaults(handler=run_download)

    validate = actions.add_parser(
        "validate",
        help="check a dataset's files, with line numbers",
        description="Stream a BEIR-layout dataset's corpus, queries and qrels and report "
        "malformed lines, bad labels, duplicates and dangling ids with file and line; a "
        "registered dataset is also compared with the registry (counts, checksums). Exit "
        "status 1 on errors or differences.",
        epilog="examples:\n  heta-eval datasets validate scifact --data-dir ../shared/datasets/beir"
        "\n  heta-eval datasets validate ./my_dataset",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    validate.add_argument("name", metavar="NAME|PATH", help="a registered dataset or a folder")
    validate.add_argument("--data-dir", help="where registered datasets live")
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
    """Whether the dataset's files are where its adapter will look for them: every place
    ``run`` and ``evaluate`` look, in their order (``--data-dir``; else ``$HETA_EVAL_DATA``,
    the shared data beside a checkout, the cache)."""
    from heta_eval.data.locate import candidate_dirs, looks_like_beir

    if info.adapter == "scifact-claims":
        from heta_eval.adapters.scifact_claims import find_release

        return find_release(data_dir, info.split) is not None
    names = [f"{info.name}/{subset}" for subset in info.subsets] or [info.name]
    return all(
        any(looks_like_beir(folder) for folder in candidate_dirs(name, data_dir)) for name in names
    )


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
    from heta_eval.data.folders import is_folder_argument, resolve_dataset
    from heta_eval.data.locate import DatasetNotFoundError
    from heta_eval.data.registry import RegistryError, get_dataset
    from heta_eval.data.validate import validate_dataset

    try:
        if is_folder_argument(args.name):
            if args.data_dir:
                raise CliError(f"{args.name} is a folder: drop --data-dir")
            names = [args.name]
        else:
            info = get_dataset(args.name)
            if info.adapter != "beir":
                raise CliError(
                    f"{info.name} is read by the {info.adapter!r} adapter, not in the BEIR "
                    "layout; `validate` checks BEIR-layout datasets (its adapter checks its own "
                    "files when it loads them)"
                )
            names = [f"{info.name}/{sub}" for sub in info.subsets] or [info.name]
        found = [resolve_dataset(name, args.data_dir, args.split) for name in names]
    except (RegistryError, DatasetNotFoundError) as error:
        raise CliError(str(error)) from None
    ok = True
    for dataset in found:
        known = dataset.info.known_defects or _parent_defects(dataset.info.name)
        report = validate_dataset(dataset.folder, dataset.split, known_defects=known)
        print(f"{dataset.info.name}: {report.format()}")
        if dataset.differences:
            print(f"{dataset.info.name}: {dataset.warning()}")
        ok = ok and report.ok and not dataset.differences
    return 0 if ok else 1


def _parent_defects(name: str) -> dict[str, list[str]]:
    from heta_eval.data.registry import RegistryError, get_dataset

    try:
        return get_dataset(name.split("/")[0]).known_defects
    except RegistryError:
        return {}
