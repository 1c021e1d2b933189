"""`rapidrpc bench`'s live line (docs/cli.md): on a terminal, one line on
standard error rewritten in place about once a second while the load runs,
then erased before the summary; nothing of it when standard output or
standard error is not a terminal, with --json or with --quiet. The
terminal is a pseudo-terminal (clitest.run_on_terminal); the ZeroMQ
driver's line is checked in test_zmq."""

import json
import re

from clitest import EXIT_OK, harness, run_on_terminal, run_tool, split_terminal

CALL = ("sample.add", "i/3", "i/5")
LOAD = ("-c", 4, "-d", 3)
TIMED_LINE = re.compile(r"^(\d+) s of 3 s: (\d+) calls, \d+ calls/s \(last second\), (\d+) errors, "
                        r"p99 \d[\d.]* (us|ms|s)$")


def shape(summary):
    """The summary's lines with their figures taken out: what stays the same
    from one run to the next (calls still in flight at the end are counted
    in some timed runs and not in others)."""
    summary = re.sub(r" \(\d+ still in flight at the end, not counted\)", "", summary)
    return [re.sub(r"\d[\d.,]*( (us|ms|s)\b)?", "#", line) for line in summary.splitlines()]


class LiveLineTest(harness.DaemonTestCase):

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        # One 3 s run on a terminal: its line is what the first test checks,
        # its summary what the others' output must look like.
        cls.status, cls.terminal, _ = run_on_terminal("bench", *LOAD, cls.daemon.url, *CALL)

    def bench_on_terminal(self, *args, **kw):
        status, terminal, piped = run_on_terminal("bench", *args, self.url, *CALL, **kw)
        self.assertEqual(status, EXIT_OK, f"terminal: {terminal[-3000:]!r}\npipe: {piped[-3000:]!r}")
        return terminal, piped

    def assert_plain_summary(self, text):
        """`text` is the summary alone, as a run on no terminal prints it."""
        self.assertNotIn("\r", text)
        self.assertNotIn("\x1b", text)
        self.assertEqual(shape(text), shape(split_terminal(self.terminal)[2]), text)

    def test_the_line_is_refreshed_each_second_then_erased_before_the_summary(self):
        self.assertEqual(self.status, EXIT_OK, repr(self.terminal[-3000:]))
        before, lines, summary = split_terminal(self.terminal)
        self.assertEqual(before, "", repr(self.terminal[:300]))
        self.assertGreaterEqual(len(lines), 2, f"fewer than two refreshes in 3 s: {self.terminal!r}")
        figures = []
        for line in lines:
            m = TIMED_LINE.match(line)
            self.assertIsNotNone(m, f"not a live line: {line!r}")
            figures.append((int(m[1]), int(m[2]), int(m[3])))
        seconds, calls, errors = zip(*figures)
        self.assertTrue(all(a < b for a, b in zip(seconds, seconds[1:])), seconds)
        self.assertTrue(all(a < b for a, b in zip(calls, calls[1:])), f"calls do not grow: {calls}")
        self.assertEqual(set(errors), {0})
        # The summary starts on the erased line and reads as it does without one.
        self.assertTrue(summary.startswith("rapidrpc bench: sample.add on "), repr(summary[:300]))
        self.assertNotIn("\r", summary)
        self.assertNotIn("\x1b", summary)
        self.assertIn(" ok, 0 errors, in ", summary)

    def test_nothing_of_it_when_standard_output_is_not_a_terminal(self):
        # `rapidrpc bench ... > file` typed on a terminal: standard error
        # is still the terminal, and gets nothing.
        terminal, piped = self.bench_on_terminal(*LOAD, stdout_terminal=False)
        self.assertEqual(terminal, "")
        self.assert_plain_summary(piped)

    def test_nothing_of_it_when_standard_error_is_not_a_terminal(self):
        # `rapidrpc bench ... 2> log`: the line is not written into the log.
        terminal, piped = self.bench_on_terminal(*LOAD, stderr_terminal=False)
        self.assertEqual(piped, "")
        self.assert_plain_summary(terminal)

    def test_nothing_of_it_with_json(self):
        terminal, _ = self.bench_on_terminal("--json", *LOAD)
        self.assertNotIn("\r", terminal)
        self.assertNotIn("\x1b", terminal)
        self.assertEqual(terminal.count("\n"), 1, terminal)
        self.assertGreater(json.loads(terminal)["ok"], 0)

    def test_nothing_of_it_with_quiet(self):
        terminal, _ = self.bench_on_terminal("--quiet", *LOAD)
        self.assert_plain_summary(terminal)
        self.assertIn("-q,--quiet", run_tool("bench", "--help").stdout)

    def test_the_line_is_cut_to_a_narrow_terminal(self):
        # A line wider than the terminal would wrap, and its next rewind
        # would go back to its last row only.
        terminal, _ = self.bench_on_terminal("-c", 4, "-d", 2, columns=40)
        _, lines, summary = split_terminal(terminal)
        self.assertGreaterEqual(len(lines), 1, repr(terminal))
        for line in lines:
            self.assertEqual(len(line), 39, repr(line))
            self.assertRegex(line, r"^\d+ s of 2 s: \d+ calls")
        self.assertTrue(summary.startswith("rapidrpc bench: "), repr(summary[:300]))

    def test_a_dumb_terminal_gets_no_escape_sequence(self):
        # Emacs's shell and other dumb terminals show the erase sequence as
        # text: the line is written over with a carriage return and spaces
        # instead, and blanked the same way before the summary.
        for term in ("dumb", None):
            terminal, _ = self.bench_on_terminal(*LOAD, term=term)
            self.assertNotIn("\x1b", terminal)
            parts = terminal.split("\r")
            lines, summary = [p.rstrip(" ") for p in parts[1:-1] if p.strip(" ")], parts[-1]
            self.assertEqual(parts[0], "", repr(terminal[:300]))
            self.assertGreaterEqual(len(lines), 2, f"fewer than two refreshes in 3 s: {terminal!r}")
            for line in lines:
                self.assertRegex(line, TIMED_LINE, f"TERM={term}")
            # Each text is as long as the one it writes over, or longer, and the
            # last is blanked whole.
            widths = [len(p) for p in parts[1:-1]]
            self.assertTrue(all(b >= a for a, b in zip(widths, widths[1:])), widths)
            self.assertEqual(parts[-2], " " * len(parts[-3].rstrip(" ")), repr(parts[-3:]))
            self.assertTrue(summary.startswith("rapidrpc bench: sample.add on "), repr(summary[:300]))
            self.assert_plain_summary(summary)


if __name__ == "__main__":
    harness.main()
