"""Writes compare.py's fan-out and latency results as one hand-made SVG (no plotting library needed):
latency percentiles (p50/p90/p99, log scale) and deliveries/s per scenario, LiveControls beside uWebSockets and the
libwebsockets mirror.

`results` maps (scenario, extra arguments, server) to the list of runs the load tool reported; the plot
shows medians, like the Markdown table.
"""
import math
import statistics
from xml.sax.saxutils import escape

SERVERS = ("livecontrols", "uws", "mirror")
# One hue per server, darker for higher percentiles.
COLORS = {"livecontrols": ("#9ecae1", "#4292c6", "#08519c"), "uws": ("#c7e9c0", "#41ab5d", "#006d2c"),
          "mirror": ("#fdd0a2", "#f16913", "#a63603")}
PERCENTILES = ("p50", "p90", "p99")


def _label(scenario, extra):
    args = extra.split()
    opts = dict(zip(args[::2], args[1::2]))
    n = f"N={int(opts.get('--subscribers', 0)):,}"
    return (f"fanout {n} W={opts['--window']}" if scenario == "fanout" else f"latency {n}") if "--subscribers" in opts else f"{scenario} {extra}"


def _micros(v):
    if v >= 1_000_000:
        return f"{v / 1e6:.3g} s"
    if v >= 1000:
        return f"{v / 1000:.3g} ms"
    return f"{v:.3g} µs"


def _rate(v):
    if v >= 1_000_000:
        return f"{v / 1e6:.3g}M"
    return f"{v / 1000:,.0f}k" if v >= 1000 else f"{v:,.0f}"


def write_svg(path, results, note):
    med = lambda rs, f: statistics.median(f(r) for r in rs)
    groups = []  # (label, {server: {"p50":…, "p90":…, "p99":…, "rate":…}})
    for (scenario, extra, server), rs in results.items():
        if scenario not in ("fanout", "latency"):
            continue
        label = _label(scenario, extra)
        if not groups or groups[-1][0] != label:
            existing = [g for g in groups if g[0] == label]
            if existing:
                entry = existing[0][1]
            else:
                entry = {}
                groups.append((label, entry))
        else:
            entry = groups[-1][1]
        entry[server] = {p: med(rs, lambda r: max(1, r["latencyMicros"][p])) for p in PERCENTILES}
        entry[server]["rate"] = med(rs, lambda r: r["deliveriesPerSecond"])

    width, left, right = 980, 80, 20
    top1, h1 = 84, 300       # latency panel
    top2, h2 = top1 + h1 + 90, 200  # throughput panel
    height = top2 + h2 + 60 + 18 * len(SERVERS)
    plot_w = width - left - right
    gw = plot_w / max(1, len(groups))
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" '
           f'font-family="DejaVu Sans, Helvetica, Arial, sans-serif" font-size="12">',
           f'<rect width="{width}" height="{height}" fill="white"/>',
           f'<text x="{width / 2}" y="24" text-anchor="middle" font-size="16" font-weight="bold">LiveControls against uWebSockets (socketify) and the raw-libwebsockets mirror</text>',
           f'<text x="{width / 2}" y="42" text-anchor="middle" fill="#555">{escape(note)}</text>']

    # Latency panel: log scale from the decade below the smallest value to the decade above the largest.
    values = [s[p] for _, e in groups for s in e.values() for p in PERCENTILES]
    lo = 10 ** math.floor(math.log10(min(values))) if values else 100
    hi = 10 ** math.ceil(math.log10(max(values))) if values else 10_000
    if hi <= lo:
        hi = lo * 10
    y_lat = lambda v: top1 + h1 - (math.log10(v) - math.log10(lo)) / (math.log10(hi) - math.log10(lo)) * h1
    out.append(f'<text x="{left}" y="{top1 - 12}" font-size="14" font-weight="bold">Latency, send → receive at every subscriber (median of runs; log scale)</text>')
    d = lo
    while d <= hi:
        y = y_lat(d)
        out.append(f'<line x1="{left}" x2="{width - right}" y1="{y:.1f}" y2="{y:.1f}" stroke="#ddd"/>')
        out.append(f'<text x="{left - 6}" y="{y + 4:.1f}" text-anchor="end" fill="#444">{_micros(d)}</text>')
        d *= 10
    bar = min(14, gw / (5 * len(SERVERS)))
    for gi, (label, entry) in enumerate(groups):
        gx = left + gi * gw
        for si, server in enumerate(SERVERS):
            if server not in entry:
                continue
            cx = gx + gw / 2 + (si - (len(SERVERS) - 1) / 2) * (4 * bar + 8)
            for pi, p in enumerate(PERCENTILES):
                v = entry[server][p]
                x = cx + (pi - 1.5) * bar
                y = y_lat(v)
                out.append(f'<rect x="{x:.1f}" y="{y:.1f}" width="{bar - 1:.1f}" height="{top1 + h1 - y:.1f}" fill="{COLORS[server][pi]}">'
                           f'<title>{escape(label)} {server} {p}: {v:,.0f} µs</title></rect>')
            p99 = entry[server]["p99"]
            out.append(f'<text x="{cx:.1f}" y="{y_lat(p99) - 4:.1f}" text-anchor="middle" font-size="10" fill="#222">{_micros(p99)}</text>')
        out.append(f'<text x="{gx + gw / 2:.1f}" y="{top1 + h1 + 18}" text-anchor="middle">{escape(label)}</text>')
    out.append(f'<line x1="{left}" x2="{width - right}" y1="{top1 + h1}" y2="{top1 + h1}" stroke="#333"/>')

    # Throughput panel: linear scale.
    rates = [s["rate"] for _, e in groups for s in e.values()]
    top_rate = max(rates) if rates else 1
    step = 10 ** math.floor(math.log10(top_rate)) if top_rate > 0 else 1
    while top_rate / step > 6:
        step *= 2
    while top_rate / step < 3:
        step /= 2
    ymax = math.ceil(top_rate / step) * step
    y_rate = lambda v: top2 + h2 - v / ymax * h2
    out.append(f'<text x="{left}" y="{top2 - 12}" font-size="14" font-weight="bold">Deliveries per second (messages received by all subscribers together)</text>')
    t = 0
    while t <= ymax:
        y = y_rate(t)
        out.append(f'<line x1="{left}" x2="{width - right}" y1="{y:.1f}" y2="{y:.1f}" stroke="#ddd"/>')
        out.append(f'<text x="{left - 6}" y="{y + 4:.1f}" text-anchor="end" fill="#444">{_rate(t)}</text>')
        t += step
    rbar = min(40, gw / (len(SERVERS) + 2))
    for gi, (label, entry) in enumerate(groups):
        gx = left + gi * gw
        for si, server in enumerate(SERVERS):
            if server not in entry:
                continue
            v = entry[server]["rate"]
            x = gx + gw / 2 + (si - len(SERVERS) / 2) * (rbar + 4)
            y = y_rate(v)
            out.append(f'<rect x="{x:.1f}" y="{y:.1f}" width="{rbar:.1f}" height="{top2 + h2 - y:.1f}" fill="{COLORS[server][1]}">'
                       f'<title>{escape(label)} {server}: {v:,.0f} deliveries/s</title></rect>')
            out.append(f'<text x="{x + rbar / 2:.1f}" y="{y - 4:.1f}" text-anchor="middle" font-size="10">{_rate(v)}</text>')
        out.append(f'<text x="{gx + gw / 2:.1f}" y="{top2 + h2 + 18}" text-anchor="middle">{escape(label)}</text>')
    out.append(f'<line x1="{left}" x2="{width - right}" y1="{top2 + h2}" y2="{top2 + h2}" stroke="#333"/>')

    # Legend.
    for li, server in enumerate(SERVERS):  # one line per server
        lx, ly = left, height - 28 - 18 * (len(SERVERS) - 1 - li)
        for pi, p in enumerate(PERCENTILES):
            out.append(f'<rect x="{lx}" y="{ly - 10}" width="12" height="12" fill="{COLORS[server][pi]}"/>')
            out.append(f'<text x="{lx + 16}" y="{ly}">{server} {p}</text>')
            lx += 130
    out.append(f'<text x="{width - right}" y="{height - 8}" text-anchor="end" font-size="10" fill="#777">'
               f'Benchmarks/compare.py; the throughput bars use each server\'s middle colour</text>')
    out.append("</svg>")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(out) + "\n")
