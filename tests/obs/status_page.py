#!/usr/bin/env python3
"""The status page at / in a real browser: headless Chromium (Debian's `chromium`) loads
it from a running job's --http endpoint (127.0.0.1) and runs its scripts for a few seconds
of virtual time; the DOM it dumps must hold the rendered page:

  - no request leaves the page for anything but the endpoint (no CDN: every <script>,
    <link> and <img> is inline or absent);
  - it refreshed itself (body data-updates >= 2) and shows the job's name and state;
  - the plan: one box (svg g.op) per operator of /api/status with its name, each in one
    of the backpressure colours, one edge per input with its records/s (the key_by's
    > 0), and every box with its watermark and its stage's busy / backpressured time;
  - the figures: a table row per operator (the source's records in > 0), a row per split,
    the checkpoint history (>= 1 completed), and the window's entry in "why has my window
    not fired".

Usage: status_page.py SLUICE [--screenshot PNG]   (exit 77 without chromium)
"""
import html.parser
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import Job, datagen_job, fail, get, poll  # noqa: E402

COLOURS = {"#4caf50", "#ff9800", "#e53935", "#9e9e9e"}


class Dom(html.parser.HTMLParser):
    """The elements of a page as (tag, attrs, text inside) in document order."""

    def __init__(self):
        super().__init__()
        self.elems, self.stack = [], []

    def handle_starttag(self, tag, attrs):
        e = {"tag": tag, "attrs": dict(attrs), "text": ""}
        self.elems.append(e)
        if tag not in ("meta", "link", "img", "br", "input", "path", "rect"):
            self.stack.append(e)

    def handle_endtag(self, tag):
        while self.stack:
            if self.stack.pop()["tag"] == tag:
                break

    def handle_data(self, data):
        for e in self.stack:
            e["text"] += data

    def find(self, tag=None, cls=None, **attrs):
        out = []
        for e in self.elems:
            if tag and e["tag"] != tag:
                continue
            if cls and cls not in e["attrs"].get("class", "").split():
                continue
            if all(e["attrs"].get(k.replace("_", "-")) == v for k, v in attrs.items()):
                out.append(e)
        return out

    def by_id(self, i):
        got = [e for e in self.elems if e["attrs"].get("id") == i]
        if not got:
            fail("the page has no element #%s" % i)
        return got[0]


def chromium(url, profile, *args):
    exe = shutil.which("chromium") or shutil.which("chromium-browser")
    r = subprocess.run([exe, "--headless", "--no-sandbox", "--disable-gpu",
                        "--hide-scrollbars", "--user-data-dir=" + profile,
                        "--virtual-time-budget=4000", *args, url],
                       capture_output=True, text=True, timeout=120)
    if r.returncode != 0:
        fail("chromium exited %d: %s" % (r.returncode, r.stderr[-800:]))
    return r.stdout


def rows(dom, table):
    """The <tr> of #table's <tbody>."""
    t = dom.by_id(table)
    start = dom.elems.index(t)
    out, in_body = [], False
    for e in dom.elems[start + 1:]:
        if e["tag"] == "table":
            break
        if e["tag"] == "tbody":
            in_body = True
        elif e["tag"] == "tr" and in_body:
            out.append(e)
    return out


def main():
    if len(sys.argv) not in (2, 4):
        print(__doc__)
        return 2
    sluice = sys.argv[1]
    shot = sys.argv[3] if len(sys.argv) == 4 and sys.argv[2] == "--screenshot" else None
    if not (shutil.which("chromium") or shutil.which("chromium-browser")):
        print("SKIP: chromium is not installed (tools/dev installs Debian's)")
        return 77
    tmp = tempfile.mkdtemp(prefix="sluice-page-")
    try:
        path = os.path.join(tmp, "page.sql")
        datagen_job(path, rows=3000000, rate=5000, name="obs_page")
        with open(path) as f:
            text = f.read()
        with open(path, "w") as f:
            f.write("SET 'execution.checkpointing.interval' = '300 ms';\n" + text)
        job = Job(sluice, path, "--checkpoint-dir", os.path.join(tmp, "ck"))
        poll("a completed checkpoint", lambda: json.loads(get(job.url + "/api/status")[2])
             .get("checkpoints", {}).get("completed", 0) >= 1, timeout=30)
        st, ctype, page = get(job.url + "/")
        if st != 200 or not ctype.startswith("text/html"):
            fail("/ answered %d %r" % (st, ctype))
        # self-contained: nothing fetched from elsewhere
        if re.search(r"<script[^>]+src=|<link[^>]+href=|<img[^>]+src=|https?://", page):
            fail("the page refers to something outside itself")
        doc = json.loads(get(job.url + "/api/status")[2])
        out = chromium(job.url + "/", os.path.join(tmp, "profile"), "--dump-dom")
        dom = Dom()
        dom.feed(out)
        body = dom.find("body")[0]
        if int(body["attrs"].get("data-updates", "0")) < 2:
            fail("the page did not refresh itself: data-updates=%r" %
                 body["attrs"].get("data-updates"))
        if dom.by_id("job")["text"] != "sluice: obs_page" or \
                dom.by_id("state")["text"] != "running":
            fail("header: %r %r" % (dom.by_id("job")["text"], dom.by_id("state")["text"]))
        ops = dom.find("g", "op")
        names = [o["name"] for o in doc["operators"]]
        shown = [e["text"] for e in dom.find("text", "op-name")]
        if len(ops) != len(names) or shown != names:
            fail("the plan shows %r, /api/status has %r" % (shown, names))
        if any(o["attrs"].get("data-colour") not in COLOURS for o in ops):
            fail("a box without a backpressure colour: %r" % [o["attrs"] for o in ops])
        edges = dom.find("path", "edge")
        want = {str(o["id"]) for o in doc["operators"] if o["input"] >= 0}
        if {e["attrs"]["data-to"] for e in edges} != want:
            fail("edges into %r, want %r" % ([e["attrs"]["data-to"] for e in edges], want))
        rates = {e["attrs"]["data-to"]: e["text"] for e in dom.find("text", "edge-rate")}
        kb = str(names.index("key_by"))
        if not all(t.endswith("/s") for t in rates.values()) or \
                float(rates[kb][:-2]) <= 0:
            fail("records/s on the edges: %r" % rates)
        if len(dom.find("text", "op-wm")) != len(names) or \
                not all("busy" in e["text"] for e in dom.find("text", "op-time")):
            fail("boxes without watermark or stage time")
        op_rows = rows(dom, "ops")
        if len(op_rows) != len(names):
            fail("%d operator rows, want %d" % (len(op_rows), len(names)))
        src_in = [e for e in dom.find("td", "in")][0]["text"].replace(",", "")
        if int(src_in) <= 0:
            fail("the source's records in: %r" % src_in)
        if len(rows(dom, "splits")) != 2:
            fail("%d split rows, want 2" % len(rows(dom, "splits")))
        if not rows(dom, "ckpts") or "completed" not in rows(dom, "ckpts")[-1]["text"]:
            fail("no completed checkpoint in the history table")
        why = [e for e in dom.find("p", "why-entry") if "tumble window" in e["text"]]
        if not why or "Remedy" not in why[0]["text"]:
            fail("no why entry for the window: %r" % dom.by_id("why")["text"])
        if shot:
            chromium(job.url + "/", os.path.join(tmp, "profile2"), "--window-size=1400,1300",
                     "--screenshot=" + os.path.abspath(shot))
            print("screenshot written to %s" % shot)
        rc = job.stop()
        if rc != 0:
            fail("the job exited %d: %s" % (rc, "".join(job.err)))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("PASS: %d boxes, %d edges, rates %r" % (len(ops), len(edges), rates))
    return 0


if __name__ == "__main__":
    sys.exit(main())
