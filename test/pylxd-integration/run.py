#!/usr/bin/env python3
"""Runs pylxd's own integration suite (vendored from pylxd 2.2.10, Apache-2.0: LICENSE beside this
file) against the LXD daemon at $LXD_DIR/unix.socket and prints one JSON line per test:
{"test": id, "outcome": "pass" | "fail" | "error" | "skip" | "not-run", "message": the exception's last line,
"seconds": how long it took}.
Used by test/lxc-client/pylxd-integration.test.ts, once against LXD 5.0.2 and once against the
simulator."""
import json
import os
import time
import sys
import unittest
import warnings

warnings.simplefilter("ignore")
here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)


def last_line(err):
    text = "".join(__import__("traceback").format_exception_only(err[0], err[1])).strip()
    return text.splitlines()[-1] if text else ""


class JsonResult(unittest.TestResult):
    started = 0.0

    def startTest(self, test):
        super().startTest(test)
        self.started = time.monotonic()

    def record(self, test, outcome, message=""):
        seconds = round(time.monotonic() - self.started, 2)
        print(json.dumps({"test": test.id(), "outcome": outcome, "message": message, "seconds": seconds}), flush=True)

    def addSuccess(self, test):
        self.record(test, "pass")

    def addFailure(self, test, err):
        self.record(test, "fail", last_line(err))

    def addError(self, test, err):
        self.record(test, "error", last_line(err))

    def addSkip(self, test, reason):
        self.record(test, "skip", reason)

    def addExpectedFailure(self, test, err):
        self.record(test, "pass")

    def addUnexpectedSuccess(self, test):
        self.record(test, "fail", "unexpected success")


def tests(suite):
    for item in suite:
        if isinstance(item, unittest.TestSuite):
            yield from tests(item)
        else:
            yield item


# Tests not to run here (ids, comma-separated): reported as "not-run".
not_run = set(filter(None, os.environ.get("PYLXD_NOT_RUN", "").split(",")))
result = JsonResult()
for test in tests(unittest.defaultTestLoader.discover(os.path.join(here, "integration"), top_level_dir=here)):
    if test.id() in not_run:
        print(json.dumps({"test": test.id(), "outcome": "not-run", "message": "", "seconds": 0}), flush=True)
    else:
        unittest.TestSuite([test]).run(result)
