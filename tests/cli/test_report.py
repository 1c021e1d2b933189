"""The HTML report of `rapidrpc bench`, opened in headless Chromium (Debian's
`chromium` package): it loads without errors, the four charts are in the
rendered DOM at their size with real content, and the screenshot shows them.

Skipped, saying why, when Chromium is not installed (apt-get install chromium;
scripts/setup.sh does not install it). Set CHROMIUM to use another binary.
The PNG is decoded with zlib (standard library only).
"""

import os
import re
import shutil
import struct
import subprocess
import tempfile
import unittest
import zlib

import clitest
from clitest import EXIT_OK, describe, harness, run_tool

CHROMIUM_TIMEOUT = 90
WINDOW = (1200, 3200)
CHARTS = ("chart-latency-histogram", "chart-percentiles", "chart-throughput", "chart-latency-time")
CHART_SIZE = ("960", "320")
# Fill colours of the report (bench_report.cpp): bars, the percentile line.
BAR_BLUE = (0x3b, 0x82, 0xf6)
LINE_PURPLE = (0x7c, 0x3a, 0xed)


def chromium_path():
    for candidate in (os.environ.get("CHROMIUM"), "/usr/bin/chromium", shutil.which("chromium"),
                      shutil.which("chromium-browser")):
        if candidate and os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    return None


def chromium(*args, workdir):
    """Runs headless Chromium with a fresh profile, nothing reaching out."""
    profile = tempfile.mkdtemp(dir=workdir)
    cmd = [chromium_path(), "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
           "--no-first-run", "--disable-background-networking", "--disable-component-update",
           "--disable-sync", "--disable-extensions", "--hide-scrollbars", "--enable-logging=stderr",
           "--v=0", f"--user-data-dir={profile}", *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=CHROMIUM_TIMEOUT,
                          stdin=subprocess.DEVNULL, cwd=workdir)


def read_png(path):
    """(width, height, rows) of an 8-bit RGB or RGBA, non-interlaced PNG;
    rows[y] is a bytes object of width * channels."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise AssertionError("not a PNG file")
    pos, idat, header = 8, [], None
    while pos < len(data):
        length, ctype = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        pos += 12 + length
        if ctype == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif ctype == b"IDAT":
            idat.append(body)
        elif ctype == b"IEND":
            break
    width, height, depth, color, _, _, interlace = header
    if depth != 8 or color not in (2, 6) or interlace:
        raise AssertionError(f"unsupported PNG layout: depth {depth} colour type {color} interlace {interlace}")
    channels = 4 if color == 6 else 3
    raw = zlib.decompress(b"".join(idat))
    stride = width * channels
    rows, prev, i = [], bytearray(stride), 0
    for _ in range(height):
        kind, line = raw[i], bytearray(raw[i + 1:i + 1 + stride])
        i += 1 + stride
        for x in range(stride):
            a = line[x - channels] if x >= channels else 0
            b = prev[x]
            c = prev[x - channels] if x >= channels else 0
            if kind == 1:
                line[x] = (line[x] + a) & 0xFF
            elif kind == 2:
                line[x] = (line[x] + b) & 0xFF
            elif kind == 3:
                line[x] = (line[x] + ((a + b) >> 1)) & 0xFF
            elif kind == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                pred = a if pa <= pb and pa <= pc else (b if pb <= pc else c)
                line[x] = (line[x] + pred) & 0xFF
        rows.append(bytes(line))
        prev = line
    return width, height, channels, rows


@unittest.skipIf(chromium_path() is None,
                 "Chromium is not installed (apt-get install chromium): the report is not rendered")
class ReportInChromiumTest(harness.DaemonTestCase):

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.workdir = tempfile.mkdtemp(prefix="rapidrpc-report-test-")
        cls.report = os.path.join(cls.workdir, "report.html")
        proc = run_tool("bench", "-c", 4, "-t", 2, "-d", 2, "--report", cls.report,
                        cls.daemon.url, "sample.add", "i/3", "i/5")
        if proc.returncode != EXIT_OK:
            raise AssertionError("rapidrpc bench failed\n" + describe(proc))
        cls.url = "file://" + cls.report

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.workdir, ignore_errors=True)
        super().tearDownClass()

    def test_dom_has_every_chart_at_its_size_with_content(self):
        proc = chromium("--dump-dom", self.url, workdir=self.workdir)
        self.assertEqual(proc.returncode, 0, proc.stderr[-3000:])
        dom = proc.stdout
        self.assertIn("<title>rapidrpc bench", dom)
        # No page error: nothing reported on the console, nothing failed to load.
        self.assertNotRegex(proc.stderr, r"CONSOLE\(\d+\)|Uncaught|net::ERR_", proc.stderr[-3000:])
        svgs = {m.group(1): m.group(0) for m in re.finditer(r'<svg id="([^"]+)".*?</svg>', dom, re.S)}
        for chart in CHARTS:
            with self.subTest(chart=chart):
                self.assertIn(chart, svgs, "chart missing from the rendered page")
                svg = svgs[chart]
                head = svg[:svg.index(">")]
                self.assertIn(f'width="{CHART_SIZE[0]}"', head)
                self.assertIn(f'height="{CHART_SIZE[1]}"', head)
                self.assertNotIn('class="empty"', svg, "the chart says it has no data")
        # Real content: bars with height, lines with many points.
        def bars(svg, colour):
            return [float(h) for h in re.findall(
                r'<rect [^>]*height="([\d.]+)" fill="%s"' % colour, svg)]
        hist = bars(svgs["chart-latency-histogram"], "#3b82f6")
        self.assertGreaterEqual(len(hist), 3, "latency histogram has too few bars")
        self.assertGreater(max(hist), 20, "latency histogram bars are flat")
        tput = bars(svgs["chart-throughput"], "#3b82f6")
        self.assertGreaterEqual(len(tput), 15, "2 s in 0.1 s bars should give about 20 bars")
        self.assertGreater(sorted(tput)[len(tput) // 2], 50, "throughput bars are flat")
        for chart in ("chart-percentiles", "chart-latency-time"):
            paths = re.findall(r'<path d="M([^"]+)"', svgs[chart])
            self.assertTrue(paths, f"{chart} has no line")
            self.assertGreater(max(p.count("L") for p in paths), 10, f"{chart} line has too few points")

    def test_screenshot_shows_the_charts(self):
        shot = os.path.join(self.workdir, "report.png")
        proc = chromium(f"--screenshot={shot}", "--window-size=%d,%d" % WINDOW, self.url,
                        workdir=self.workdir)
        self.assertEqual(proc.returncode, 0, proc.stderr[-3000:])
        self.assertTrue(os.path.isfile(shot), "no screenshot written\n" + proc.stderr[-3000:])
        width, height, channels, rows = read_png(shot)
        self.assertEqual((width, height), WINDOW)

        def close(px, colour, tol=6):
            return all(abs(px[k] - colour[k]) <= tol for k in range(3))

        non_white = 0
        blue_rows, purple = set(), 0
        for y in range(0, height, 2):
            row = rows[y]
            for x in range(0, width, 2):
                px = row[x * channels:x * channels + 3]
                if px[0] < 240 or px[1] < 240 or px[2] < 240:
                    non_white += 1
                if close(px, BAR_BLUE):
                    blue_rows.add(y)
                elif close(px, LINE_PURPLE, 20):
                    purple += 1
        sampled = (width // 2) * (height // 2)
        self.assertGreater(non_white / sampled, 0.03, "the page is (almost) blank")
        # Bars of two charts (histogram and throughput) stand in different
        # places, each tens of pixels tall.
        self.assertGreater(len(blue_rows), 60, "too few rows with bar colour: charts not drawn")
        bands = 1 + sum(1 for a, b in zip(sorted(blue_rows), sorted(blue_rows)[1:]) if b - a > 100)
        self.assertGreaterEqual(bands, 2, "expected bars in two separate charts")
        self.assertGreater(purple, 20, "the percentile line is not drawn")


class PngReaderTest(unittest.TestCase):
    """The decoder the screenshot test relies on, checked on a PNG made here."""

    def test_round_trip(self):
        width, height = 5, 3
        pixels = [[(x * 40, y * 80, (x + y) * 20, 255) for x in range(width)] for y in range(height)]
        raw = b""
        for y, row in enumerate(pixels):
            line = b"".join(bytes(p) for p in row)
            kind = y % 3  # none, sub, up filters
            if kind == 1:
                line = bytes((line[i] - (line[i - 4] if i >= 4 else 0)) & 0xFF for i in range(len(line)))
            elif kind == 2:
                above = b"".join(bytes(p) for p in pixels[y - 1])
                line = bytes((line[i] - above[i]) & 0xFF for i in range(len(line)))
            raw += bytes([kind]) + line

        def chunk(t, body):
            return struct.pack(">I", len(body)) + t + body + struct.pack(">I", zlib.crc32(t + body))
        png = (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 6, 0, 0, 0))
               + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))
        with tempfile.NamedTemporaryFile(suffix=".png", delete=False) as f:
            f.write(png)
        try:
            w, h, ch, rows = read_png(f.name)
        finally:
            os.unlink(f.name)
        self.assertEqual((w, h, ch), (width, height, 4))
        for y in range(height):
            for x in range(width):
                self.assertEqual(tuple(rows[y][x * 4:x * 4 + 4]), pixels[y][x])


if __name__ == "__main__":
    harness.main()
