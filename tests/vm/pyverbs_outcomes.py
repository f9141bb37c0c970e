#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""
pyverbs_outcomes.py SUITE OUTFILE [ARGS...] - rdma-core's tests in SUITE (a
copy of /usr/share/doc/rdma-core/tests) run as its run_tests.py runs them,
with ARGS (--dev rxe0), each test's outcome written to OUTFILE as one
"TEST_ID OUTCOME" line (ok, skip, error, fail, xfail, xpass), whatever the
tests print meanwhile; unittest's own report goes to stderr as usual.
"""
import os
import sys
import unittest
from importlib.machinery import SourceFileLoader

suite_dir, out_path = sys.argv[1], sys.argv[2]
sys.argv = [os.path.join(suite_dir, 'run_tests.py')] + sys.argv[3:]
sys.path.insert(0, suite_dir)
from args_parser import parser  # noqa: E402  (the suite's own, from SUITE)

tests = SourceFileLoader('tests',
                         os.path.join(suite_dir, '__init__.py')).load_module()
parser.parse_args()


class Recorder(unittest.TextTestResult):
    """A TextTestResult that also keeps each test's outcome."""
    outcomes = []

    def _keep(self, test, outcome):
        Recorder.outcomes.append((test.id(), outcome))

    def addSuccess(self, test):
        super().addSuccess(test)
        self._keep(test, 'ok')

    def addSkip(self, test, reason):
        super().addSkip(test, reason)
        self._keep(test, 'skip')

    def addError(self, test, err):
        super().addError(test, err)
        self._keep(test, 'error')

    def addFailure(self, test, err):
        super().addFailure(test, err)
        self._keep(test, 'fail')

    def addExpectedFailure(self, test, err):
        super().addExpectedFailure(test, err)
        self._keep(test, 'xfail')

    def addUnexpectedSuccess(self, test):
        super().addUnexpectedSuccess(test)
        self._keep(test, 'xpass')


runner = unittest.TextTestRunner(resultclass=Recorder, verbosity=2)
unittest.main(module=tests, testRunner=runner, exit=False)
with open(out_path, 'w') as f:
    for test_id, outcome in sorted(Recorder.outcomes):
        f.write('%s %s\n' % (test_id, outcome))
