"""One benchmark case in a fresh process: ``python -m benches.worker SPEC`` prints its JSON result.

The runner (:func:`benches.harness.run_case`) starts it, so that each case's
peak memory is its own; SPEC is the case and its settings as JSON.
"""

from __future__ import annotations

import json
import sys

from .harness import run_worker


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 1:
        print("usage: python -m benches.worker SPEC", file=sys.stderr)
        return 2
    print(json.dumps(run_worker(json.loads(argv[0]))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
