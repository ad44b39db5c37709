"""``bytepair exercise``: the course chapter's exercise (count pairs, merge one pair) for Python."""

from __future__ import annotations

import sys
from pathlib import Path

from bytepair._util.atomic import check_target, write_atomically
from bytepair.cli.common import int_at_least


def run_check(args) -> int:
    from bytepair.teach.exercise import check, load_learner

    examples = args.examples or 200
    # The learner's code runs in a process of its own; Ctrl-C and SIGTERM end the check here.
    with load_learner(args.path) as learner:
        print(f"bytepair exercise check: {learner.name}: count_pairs and merge against the "
              f"reference on generated corpora ({examples} examples per failure mode)", flush=True)
        report = check(learner, examples)
    for line in report.lines():
        print(f"  {line}")
    if report.passed:
        print("all checks pass")
        return 0
    print(f"see it step by step: bytepair workbench --exercise {args.path}")
    return 1


def run_starter(args) -> int:
    from bytepair.teach.exercise import starter

    path = Path(args.path or "bpe_exercise.py")
    if path.exists() and not args.force:
        raise FileExistsError(f"PATH: {str(path)!r} exists; pass --force to replace it")
    check_target(path, "PATH")
    write_atomically(path, starter(path.name))
    print(f"bytepair: wrote {str(path)!r}; fix its count_pairs, then run: "
          f"bytepair exercise check {path}", file=sys.stderr)
    return 0


def run_exercise(args) -> int:
    if args.action == "check":
        if args.path is None:
            raise ValueError("FILE.py: bytepair exercise check needs the file to check")
        return run_check(args)
    if args.examples is not None:
        raise ValueError("--examples: only bytepair exercise check takes it")
    return run_starter(args)


def add_commands(commands) -> None:
    """Register ``exercise`` (its actions ``check FILE.py`` and ``starter [PATH]``)."""
    command = commands.add_parser(
        "exercise", help="the course's exercise: count pairs and merge, checked",
        usage="bytepair exercise check FILE.py [--examples N]\n"
              "       bytepair exercise starter [PATH] [--force]",
        description="The BPE chapter's exercise: write count_pairs(words) and "
        "merge(word, pair, new_token) in a Python file. 'check FILE.py' imports them and "
        "searches generated corpora (Hypothesis, seeded: the same file always gets the same "
        "report) for each of the chapter's five failure modes, with the smallest counterexample "
        "found; exit code 0 when every check passes, 1 when one fails. 'starter [PATH]' writes "
        "the starter file (default bpe_exercise.py): a merge that works and a count_pairs that "
        "counts only one occurrence per word.",
    )
    command.add_argument("action", choices=["check", "starter"], metavar="ACTION",
                         help="check or starter")
    command.add_argument("path", nargs="?", default=None, metavar="FILE.py|PATH")
    command.add_argument("--examples", type=int_at_least(1), default=None, metavar="N",
                         help="check: corpora tried per failure mode (200)")
    command.add_argument("--force", action="store_true", help="starter: replace PATH if it exists")
    command.set_defaults(run=run_exercise)
