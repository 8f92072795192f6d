"""The python tests' checks: check() counts a failure and says what it was; failures()
tells the script how many there were, for its exit status."""
import sys

_failed = 0


def check(ok, what):
    global _failed
    if not ok:
        _failed += 1
        print(f"FAIL: {what}", file=sys.stderr)


def failures():
    return _failed
