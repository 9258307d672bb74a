#!/usr/bin/env python3
"""tools/flamegraph.py - fold `perf script` stacks and draw them as a flame graph SVG.

usage: flamegraph.py collapse [PERF_SCRIPT_TXT]         folded stacks on stdout
       flamegraph.py svg [--title T] [--min-pct P] FOLDED   SVG on stdout
       flamegraph.py top [--n N] FOLDED                  self and inclusive % per function

Debian 12 ships no flame graph package, so this is the small part of Brendan Gregg's
stackcollapse-perf.pl + flamegraph.pl that sluice needs, in the standard library only.

Folded format: one line per distinct stack, frames root first joined by ';', a space, the
sample count; the root frame is the thread name (comm), so shards and the main thread show
apart. The SVG is static (a <title> tooltip per frame, no script) and drops frames narrower
than --min-pct of all samples (default 0.1) so it stays a few hundred KB at most.
"""

import argparse
import collections
import html
import re
import sys

OFFSET = re.compile(r"\+0x[0-9a-f]+$")


def collapse(lines):
    """perf script text -> Counter of root-first frame tuples."""
    stacks = collections.Counter()
    comm, frames = None, []

    def flush():
        if comm is not None:
            stacks[tuple([comm] + frames[::-1])] += 1

    for line in lines:
        line = line.rstrip("\n")
        if not line.strip():
            flush()
            comm, frames = None, []
            continue
        if not line[0].isspace():
            flush()
            # "comm  pid/tid  time: period event:" (comm may contain blanks)
            m = re.match(r"^(.*?)\s+\d+(/\d+)?\s", line)
            comm = (m.group(1) if m else line.split()[0]).strip() or "?"
            frames = []
            continue
        parts = line.strip().split(None, 1)
        if len(parts) < 2:
            continue
        sym = parts[1]
        dso = ""
        if sym.endswith(")") and " (" in sym:
            sym, dso = sym.rsplit(" (", 1)
            dso = dso[:-1]
        sym = OFFSET.sub("", sym.strip())
        if sym in ("[unknown]", ""):
            sym = "[%s]" % dso.rsplit("/", 1)[-1] if dso else "[unknown]"
        frames.append(sym.replace(";", ":"))
    flush()
    return stacks


def read_folded(path):
    stacks = collections.Counter()
    with open(path) as f:
        for line in f:
            line = line.rstrip("\n")
            if not line:
                continue
            stack, _, n = line.rpartition(" ")
            stacks[tuple(stack.split(";"))] += int(n)
    return stacks


def top(stacks, n):
    total = sum(stacks.values()) or 1
    self_c, incl = collections.Counter(), collections.Counter()
    for st, c in stacks.items():
        self_c[st[-1]] += c
        for fr in set(st[1:]):  # the thread name is not a function
            incl[fr] += c
    out = ["samples: %d" % total, "", "  self%  function"]
    for fr, c in self_c.most_common(n):
        out.append("%6.1f%%  %s" % (100.0 * c / total, fr))
    out += ["", "  incl%  function"]
    for fr, c in incl.most_common(n):
        out.append("%6.1f%%  %s" % (100.0 * c / total, fr))
    return "\n".join(out) + "\n"


def color(name):
    """Warm colours, stable per function name (as flamegraph.pl's 'hot' palette)."""
    h = 0
    for ch in name:
        h = (h * 31 + ord(ch)) & 0xFFFFFFFF
    r = 205 + h % 50
    g = (h >> 8) % 190
    b = (h >> 16) % 55
    return "rgb(%d,%d,%d)" % (r, g, b)


def svg(stacks, title, min_pct, width=1200, row=16):
    total = sum(stacks.values())
    tree = {"n": 0, "kids": {}}
    for st, c in stacks.items():
        node = tree
        node["n"] += c
        for fr in st:
            node = node["kids"].setdefault(fr, {"n": 0, "kids": {}})
            node["n"] += c
    min_n = total * min_pct / 100.0

    def kept_depth(node):
        """Depth of the deepest frame under node wide enough to be drawn."""
        return 1 + max((kept_depth(k) for k in node["kids"].values() if k["n"] >= min_n),
                       default=0)

    depth_max = kept_depth(tree)
    top_pad, bottom_pad = 40, 10
    height = top_pad + row * depth_max + bottom_pad
    scale = (width - 20) / float(total or 1)
    out = [
        '<?xml version="1.0" standalone="no"?>',
        '<svg version="1.1" width="%d" height="%d" xmlns="http://www.w3.org/2000/svg">'
        % (width, height),
        '<rect x="0" y="0" width="%d" height="%d" fill="#f8f8f0"/>' % (width, height),
        '<text x="%d" y="24" font-size="17" font-family="Verdana" text-anchor="middle">%s'
        "</text>" % (width // 2, html.escape(title)),
        '<g font-family="Verdana" font-size="11">',
    ]

    def draw(node, name, x, depth):
        w = node["n"] * scale
        y = height - bottom_pad - row * (depth + 1)
        pct = 100.0 * node["n"] / total
        label = "%s (%d samples, %.2f%%)" % (name, node["n"], pct)
        out.append('<g><title>%s</title><rect x="%.1f" y="%d" width="%.1f" height="%d" '
                   'fill="%s" rx="2"/>' % (html.escape(label), x, y, w, row - 1,
                                            color(name)))
        chars = int(w / 7)
        if chars >= 3:
            text = name if len(name) <= chars else name[:chars - 2] + ".."
            out.append('<text x="%.1f" y="%d">%s</text>' % (x + 3, y + row - 4,
                                                           html.escape(text)))
        out.append("</g>")
        cx = x
        for kid_name, kid in sorted(node["kids"].items()):
            if kid["n"] >= min_n:
                draw(kid, kid_name, cx, depth + 1)
            cx += kid["n"] * scale

    draw(tree, "all", 10.0, 0)
    out.append("</g></svg>")
    return "\n".join(out) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("collapse")
    c.add_argument("input", nargs="?")
    s = sub.add_parser("svg")
    s.add_argument("--title", default="Flame graph")
    s.add_argument("--min-pct", type=float, default=0.1)
    s.add_argument("folded")
    t = sub.add_parser("top")
    t.add_argument("--n", type=int, default=25)
    t.add_argument("folded")
    a = ap.parse_args()

    if a.cmd == "collapse":
        f = open(a.input, errors="replace") if a.input else sys.stdin
        for st, n in sorted(collapse(f).items()):
            sys.stdout.write("%s %d\n" % (";".join(st), n))
    elif a.cmd == "svg":
        sys.stdout.write(svg(read_folded(a.folded), a.title, a.min_pct))
    else:
        sys.stdout.write(top(read_folded(a.folded), a.n))
    return 0


if __name__ == "__main__":
    sys.exit(main())
