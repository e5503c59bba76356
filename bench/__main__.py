"""Run every benchmark module in this package that defines `main()`, in name order.

`--full` runs the polling simulation and the shelf watches at their full sizes (100,000 cards
or watches) and the PostgreSQL sweep at 1,000,000 cards (about three hours, `bench.scale_pg`);
the other benchmarks have one size.
"""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import sys

import bench

# Modules whose `main(argv)` takes `--full`.
SIZED = frozenset({"polling", "scale_pg", "watches"})


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__)
    parser.add_argument("--full", action="store_true", help="full sizes (minutes to an hour)")
    args = parser.parse_args(argv)
    del sys.argv[1:]  # the other modules' `main()` read their own options from it
    failed = 0
    for info in sorted(pkgutil.iter_modules(bench.__path__), key=lambda m: m.name):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"bench.{info.name}")
        run = getattr(module, "main", None)
        if not callable(run):
            continue
        print(f"== bench.{info.name}", flush=True)
        result = run(["--full"] if args.full else []) if info.name in SIZED else run()
        failed += 1 if isinstance(result, int) and result else 0
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
