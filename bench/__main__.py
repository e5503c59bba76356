"""Run every benchmark module in this package that defines `main()`, in name order."""

from __future__ import annotations

import importlib
import pkgutil
import sys

import bench


def main() -> int:
    failed = 0
    for info in sorted(pkgutil.iter_modules(bench.__path__), key=lambda m: m.name):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"bench.{info.name}")
        run = getattr(module, "main", None)
        if not callable(run):
            continue
        print(f"== bench.{info.name}", flush=True)
        result = run()
        failed += 1 if isinstance(result, int) and result else 0
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
