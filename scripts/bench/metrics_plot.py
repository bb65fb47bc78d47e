#!/usr/bin/env python3
"""signupd's own metrics under a staged load, as one SVG.

Starts signupd (a release build) with a private socket, database and --metrics-socket, cheap
Argon2id (1 pass, 8 MiB) and the benchmark's relaxed per-user limits; then, for --seconds:

  - keystrokes from the load generator (../shared/bench/ndjson-load: `set` of the signup
    form's password, DEPTH in flight per client) in phases of more and more clients
    (--phases, 10,100,400 by default), with a quiet lead-in and tail;
  - all along, --form-workers Python threads doing real signups and logins over the NDJSON
    protocol (Tests/robustness/harness.py's Client): each signs up a new random name, then
    logs in twice; one login in four uses a wrong password, always on one of the first two
    accounts made, so those two names get throttled (outcome "throttled") while the others
    log in;
  - GET /metrics over the metrics socket once a second (--interval), parsed with
    prometheus_client.

The SVG (written by hand, as scripts/bench/plot.py does) has four panels on one time axis:
validations per second and open connections; validation p50/p99 per interval from the
histogram's bucket deltas (what histogram_quantile does); signups and logins per second by
outcome; the hash queue depth. A per-phase summary goes to stdout (Markdown), and what the
client saw is checked against what the counters say.

    metrics_plot.py --signupd PATH --load PATH_TO_ndjson-load --out docs/metrics-under-load.svg [--seconds 60]

--dashboard PATH also checks a Grafana dashboard against the metric names (and against what
this run's scrapes held); --check-dashboard PATH does only that static check, starting nothing.
"""
import argparse
import datetime
import json
import math
import os
import random
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

sys.dont_write_bytecode = True  # importing Tests/robustness/harness.py leaves no __pycache__ in the tree
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))

from bench_args import FAST_ARGS  # the per-uid budgets lifted (bench_args.py)
CHEAP_HASH = ["--argon2-ops", "1", "--argon2-memory-kib", "8192"]

# The metrics signupd exposes (Sources/SignupDaemon/Metrics/DaemonMetrics.swift), with their labels.
COUNTERS = {
    "signupd_signups_total": {"form", "outcome"},
    "signupd_logins_total": {"form", "outcome"},
    "signupd_logouts_total": {"outcome"},
    "signupd_availability_checks_total": {"result"},
    "signupd_refusals_total": {"code"},
    "signupd_connection_closes_total": {"reason"},
    "signupd_log_lines_summarised_total": set(),
}
HISTOGRAMS = {
    "signupd_validation_seconds": {"form"},
    "signupd_availability_check_seconds": set(),
    "signupd_store_seconds": {"operation"},
    "signupd_hash_seconds": set(),
}
GAUGES = {
    "signupd_connections": set(), "signupd_sessions": set(), "signupd_detached_sessions": set(),
    "signupd_hash_queue_depth": set(), "signupd_carried_sessions": set(), "signupd_handover_seconds": set(),
    "signupd_up": set(), "signupd_build_info": {"version"}, "signupd_start_time_seconds": set(),
    "signupd_signups_paused": set(),
}


def series_names():
    """{series name as scraped: its labels} (histograms as _bucket, _count and _sum)."""
    names = dict(COUNTERS)
    names.update(GAUGES)
    for name, labels in HISTOGRAMS.items():
        names[name + "_bucket"] = labels | {"le"}
        names[name + "_count"] = labels
        names[name + "_sum"] = labels
    return names


def log(*a):
    print(*a, file=sys.stderr, flush=True)


# ---------------------------------------------------------------------------------------
# The Grafana dashboard's PromQL: only metric names (and labels) signupd has.

PROMQL_FUNCTIONS = {"sum", "max", "min", "avg", "count", "rate", "irate", "increase", "changes", "resets", "delta", "deriv",
                    "histogram_quantile", "time", "vector", "scalar", "abs", "clamp_min", "clamp_max", "round", "topk",
                    "bottomk", "max_over_time", "min_over_time", "avg_over_time", "absent", "label_replace", "timestamp"}
PROMQL_KEYWORDS = {"by", "without", "on", "ignoring", "group_left", "group_right", "and", "or", "unless", "bool", "offset"}
TARGET_LABELS = {"instance", "job"}  # what Prometheus adds to every scraped series


def check_promql(expr):
    """The problems of one expression: unknown metric names, functions, or labels."""
    problems = []
    known = series_names()
    s = re.sub(r'"(?:[^"\\]|\\.)*"', '""', expr)  # label values, Grafana variables inside them
    s = re.sub(r"\[[^\]]*\]", "", s)  # range selectors ([$__rate_interval], [2m])
    labels_used = set()
    for m in re.finditer(r"\b(by|without|on|ignoring|group_left|group_right)\s*\(([^)]*)\)", s):
        labels_used |= {x.strip() for x in m.group(2).split(",") if x.strip()}
    s = re.sub(r"\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)", " ", s)
    for m in re.finditer(r"\{([^}]*)\}", s):
        labels_used |= set(re.findall(r"([A-Za-z_][A-Za-z0-9_]*)\s*(?:=~|!~|!=|=)", m.group(1)))
    s = re.sub(r"\{[^}]*\}", " ", s)
    s = re.sub(r"(?<![A-Za-z_])\d+(\.\d+)?([eE][+-]?\d+)?", " ", s)  # numbers
    metrics = []
    for m in re.finditer(r"[A-Za-z_:][A-Za-z0-9_:]*", s):
        word = m.group(0)
        called = s[m.end():].lstrip().startswith("(")
        if called:
            if word not in PROMQL_FUNCTIONS:
                problems.append("unknown function %s" % word)
        elif word in PROMQL_KEYWORDS:
            continue
        elif word in known:
            metrics.append(word)
        elif word in HISTOGRAMS:
            problems.append("%s is a histogram: use %s_bucket, _count or _sum" % (word, word))
        else:
            problems.append("unknown metric %s" % word)
    if not metrics and "time()" not in expr:
        problems.append("no signupd metric")
    allowed = set(TARGET_LABELS)
    for name in metrics:
        allowed |= known[name]
    for label in labels_used - allowed:
        problems.append("label %s is on none of %s" % (label, metrics))
    if "histogram_quantile" in expr and not any(name.endswith("_bucket") for name in metrics):
        problems.append("histogram_quantile over no _bucket series")
    if any(name.endswith("_bucket") for name in metrics) and "le" not in labels_used:
        problems.append("_bucket aggregated without keeping le")
    return metrics, problems


def check_dashboard(path, seen=None):
    """Checks a Grafana dashboard: JSON, its datasource input and instance variable, unique
    panel ids, no overlapping panels, and every PromQL expression (panels, annotations, the
    variable's query). With `seen` (series names scraped in a run), says which of the
    dashboard's metrics the run never saw. Returns the number of problems."""
    problems = []
    with open(path) as f:
        dashboard = json.load(f)
    inputs = {i.get("name"): i for i in dashboard.get("__inputs", [])}
    if inputs.get("DS_PROMETHEUS", {}).get("pluginId") != "prometheus":
        problems.append("no DS_PROMETHEUS datasource input")
    variables = {v.get("name"): v for v in dashboard.get("templating", {}).get("list", [])}
    if "instance" not in variables:
        problems.append("no instance variable")
    exprs = []
    for v in variables.values():
        query = v.get("query")
        query = query.get("query") if isinstance(query, dict) else query
        m = re.fullmatch(r"\s*label_values\(\s*([A-Za-z_:][A-Za-z0-9_:]*)\s*,\s*([A-Za-z_][A-Za-z0-9_]*)\s*\)\s*", query or "")
        if not m:
            problems.append("variable %s: query is not label_values(metric, label): %r" % (v.get("name"), query))
        elif m.group(1) not in series_names() or m.group(2) not in series_names()[m.group(1)] | TARGET_LABELS:
            problems.append("variable %s: %s" % (v.get("name"), query))
    for a in dashboard.get("annotations", {}).get("list", []):
        if "expr" in a:
            exprs.append(("annotation " + a.get("name", "?"), a["expr"]))
    ids = set()
    cells = {}
    for p in dashboard.get("panels", []):
        if p.get("id") in ids:
            problems.append("duplicate panel id %s" % p.get("id"))
        ids.add(p.get("id"))
        g = p.get("gridPos", {})
        for x in range(g.get("x", 0), g.get("x", 0) + g.get("w", 0)):
            for y in range(g.get("y", 0), g.get("y", 0) + g.get("h", 0)):
                if (x, y) in cells:
                    problems.append("panels %r and %r overlap" % (cells[(x, y)], p.get("title")))
                cells[(x, y)] = p.get("title")
        if g.get("x", 0) + g.get("w", 0) > 24:
            problems.append("panel %r is wider than the grid" % p.get("title"))
        if p.get("datasource", {}).get("uid") != "${DS_PROMETHEUS}":
            problems.append("panel %r does not use ${DS_PROMETHEUS}" % p.get("title"))
        for t in p.get("targets", []):
            exprs.append(("panel %r %s" % (p.get("title"), t.get("refId")), t.get("expr", "")))
    used = set()
    for where, expr in exprs:
        metrics, found = check_promql(expr)
        used |= set(metrics)
        problems += ["%s: %s (%s)" % (where, problem, expr) for problem in found]
    problems = sorted(set(problems), key=problems.index)
    for problem in problems:
        log("dashboard:", problem)
    families = {re.sub(r"_(bucket|count|sum)$", "", n) for n in used}
    unused = sorted((set(COUNTERS) | set(HISTOGRAMS) | set(GAUGES)) - families)
    log("dashboard %s: %d panels, %d expressions, %d problems; metrics not on it: %s" % (
        path, len(dashboard.get("panels", [])), len(exprs), len(problems), ", ".join(unused) or "none"))
    if seen is not None:
        unseen = sorted(n for n in used if n not in seen)
        log("dashboard metrics this run's scrapes never held (no event of that kind happened): %s" % (", ".join(unseen) or "none"))
    return len(problems)


# ---------------------------------------------------------------------------------------
# Scrapes.

def scrape(path):
    """GET /metrics over the Unix socket (raw HTTP, as Tests/operators/operators_test.py does): the body."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.settimeout(10)
        s.connect(path)
        s.sendall(b"GET /metrics HTTP/1.1\r\nHost: signupd\r\nConnection: close\r\n\r\n")
        data = b""
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    status = head.split(b"\r\n", 1)[0].decode()
    if not status.endswith(" 200 OK"):
        raise RuntimeError("scrape answered " + status)
    return body.decode()


def parse(text):
    """[(series name, labels dict, value)] of a Prometheus text exposition."""
    from prometheus_client.parser import text_string_to_metric_families
    return [(s.name, dict(s.labels), s.value) for family in text_string_to_metric_families(text) for s in family.samples]


class Scrape:
    def __init__(self, t, samples, took):
        self.t = t
        self.took = took
        self.samples = samples

    def total(self, name, **match):
        return sum(v for n, labels, v in self.samples if n == name and all(labels.get(k) == w for k, w in match.items()))

    def by(self, name, label, **match):
        out = {}
        for n, labels, v in self.samples:
            if n == name and all(labels.get(k) == w for k, w in match.items()):
                out[labels.get(label, "")] = out.get(labels.get(label, ""), 0) + v
        return out

    def buckets(self, histogram):
        """{le: cumulative count}, summed over every label set (sum by (le))."""
        out = {}
        for n, labels, v in self.samples:
            if n == histogram + "_bucket":
                le = float(labels["le"])
                out[le] = out.get(le, 0) + v
        return out


def increase(before, after):
    """A counter's increase; a drop is a reset (the daemon restarted): count from zero."""
    return after - before if after >= before else after


def quantile(q, buckets):
    """histogram_quantile over {le: cumulative count}: linear within the bucket, 0 as the first
    bucket's lower bound, and the highest finite bound when the rank falls in +Inf. Returns
    (seconds, capped) or (None, False) with no observations."""
    les = sorted(buckets)
    if not les or buckets[les[-1]] <= 0:
        return None, False
    total = buckets[les[-1]]
    rank = q * total
    for i, le in enumerate(les):
        if buckets[le] >= rank:
            if math.isinf(le):
                return (les[-2] if len(les) > 1 else None), True
            lower, below = (les[i - 1], buckets[les[i - 1]]) if i else (0.0, 0.0)
            inside = buckets[le] - below
            return (lower + (le - lower) * ((rank - below) / inside if inside else 1.0)), False
    return None, False


def bucket_increase(a, b, histogram):
    before, after = a.buckets(histogram), b.buckets(histogram)
    return {le: increase(before.get(le, 0), after[le]) for le in after}


# ---------------------------------------------------------------------------------------
# Real signups and logins alongside the keystrokes.

class FormLoad:
    GUESSED = 2  # wrong passwords go to the first GUESSED accounts only

    def __init__(self, sock, workers, stop):
        sys.path.insert(0, os.path.join(ROOT, "Tests", "robustness"))
        from harness import Client
        self.Client = Client
        self.sock = sock
        self.stop = stop
        self.lock = threading.Lock()
        self.accounts = []  # (name, password)
        self.seen = {}  # what the client saw: ("signup"|"login", "ok"|messageId|"error:code") -> count
        self.errors = []
        self.threads = [threading.Thread(target=self.worker, args=(i,), daemon=True) for i in range(workers)]

    def start(self):
        for t in self.threads:
            t.start()

    def join(self, timeout):
        deadline = time.monotonic() + timeout
        for t in self.threads:
            t.join(max(0.0, deadline - time.monotonic()))

    def tally(self, kind, result):
        if result.get("event") == "error":
            key = (kind, "refused:%s" % result.get("code"))
        else:
            key = (kind, "ok" if result.get("ok") else result.get("messageId") or "?")
        with self.lock:
            self.seen[key] = self.seen.get(key, 0) + 1

    def fill(self, client, form, values):
        """Opens `form` and sets `values`: None once submit is enabled, else why not (an
        `error` event, or a field's failed validation)."""
        opened, _ = client.reply(client.send("open", form=form))
        if opened.get("event") == "error":
            return dict(opened, stage="open")
        client.until(lambda m: m.get("event") == "busy")
        for field, value in values:
            client.send("set", field=field, value=value)
        done, _ = client.until(lambda m: (m.get("event") == "enabled" and m.get("value")) or m.get("event") == "error"
                               or (m.get("event") == "validation" and m.get("state") == "failed"))
        if done.get("event") == "enabled":
            return None
        return done if done.get("event") == "error" else {"messageId": "not submitted: %s failed" % done.get("field")}

    def form(self, client, kind, values):
        """One form, filled and submitted; its result or refusal is tallied. Returns the result
        (None if refused). A refusal for going too fast (more than
        --max-expensive-requests-per-second opens and submits on the connection) waits a little."""
        refused = self.fill(client, kind, values)
        result = client.submit_and_wait() if refused is None else refused
        self.tally(kind, result)
        if result.get("stage") != "open":
            client.send("close")
        if result.get("event") == "error":
            if result.get("code") == "rate_limited":
                time.sleep(0.2)
            return None
        return result

    def worker(self, index):
        rng = random.Random(index * 7919 + os.getpid())
        client = None
        try:
            client = self.Client(self.sock, timeout=30)
            round_ = 0
            while not self.stop.is_set():
                round_ += 1
                name = "".join(rng.choice("abcdefghijkmnpqrstuvwxyz") for _ in range(10))
                password = "metrics plot %d %s" % (index, name)
                result = self.form(client, "signup", [("username", name), ("password", password), ("repeatedPassword", password)])
                if result and result.get("ok"):
                    with self.lock:
                        self.accounts.append((name, password))
                for attempt in range(2):
                    with self.lock:
                        accounts = list(self.accounts)
                    if len(accounts) <= self.GUESSED or self.stop.is_set():
                        break
                    if (round_ * 2 + attempt) % 4 == 0:
                        who, secret = rng.choice(accounts[:self.GUESSED])[0], "not the password"
                    else:
                        who, secret = rng.choice(accounts[self.GUESSED:])
                    self.form(client, "login", [("username", who), ("password", secret)])
        except Exception as e:  # the daemon stopped under it at the end, or something broke
            if not self.stop.is_set():
                with self.lock:
                    self.errors.append("worker %d: %r" % (index, e))
        finally:
            if client:
                try:
                    client.close()
                except OSError:
                    pass


# ---------------------------------------------------------------------------------------
# The SVG, in scripts/bench/plot.py's style.

def nice_step(span, ticks=4):
    raw = span / ticks if span > 0 else 1
    power = 10 ** math.floor(math.log10(raw))
    for m in (1, 2, 2.5, 5, 10):
        if raw <= m * power:
            return m * power
    return 10 * power


def fmt_number(v):
    if v >= 1000 and v % 1000 == 0:
        return "%dk" % (v // 1000)
    if v >= 1000:
        return "%gk" % (v / 1000)
    return "%g" % v


def fmt_latency(us):
    if us < 1000:
        return "%g µs" % float("%.3g" % us)
    if us < 1e6:
        return "%g ms" % float("%.3g" % (us / 1000))
    return "%g s" % float("%.3g" % (us / 1e6))


def svg_text(s):
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def draw(path, title, subtitle, panels, phases, t_end):
    """panels: [{"title", "left_label", "right_label", "log": bool, "series": [{"label",
    "color", "dash", "axis": "left"|"right", "step": bool, "points": [(t, v or None)]}],
    "notes": [(t0, t1, text)]}]; phases: [(t0, t1, label)]."""
    width, left, plot_right, legend_x = 1000, 78, 720, 790
    top, panel_h, gap, bottom = 100, 150, 44, 46
    height = top + len(panels) * panel_h + (len(panels) - 1) * gap + bottom
    out = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" font-size="12">' % (width, height),
           '<rect width="100%" height="100%" fill="white"/>',
           '<text x="%d" y="24" font-size="15" font-weight="bold">%s</text>' % (left - 60, svg_text(title))]
    for i, line in enumerate(subtitle):
        out.append('<text x="%d" y="%d" fill="#555">%s</text>' % (left - 60, 43 + 15 * i, svg_text(line)))

    def px(t):
        return left + t / t_end * (plot_right - left)

    x_step = nice_step(t_end, 6)
    for index, panel in enumerate(panels):
        y_top = top + index * (panel_h + gap)
        y_bottom = y_top + panel_h
        out.append('<text x="%d" y="%d" font-weight="bold">%s</text>' % (left, y_top - 8, svg_text(panel["title"])))
        # Phases: shaded bands, dashed boundaries.
        for i, (t0, t1, label) in enumerate(phases):
            if i % 2:
                out.append('<rect x="%.1f" y="%d" width="%.1f" height="%d" fill="#f3f5f7"/>' % (px(t0), y_top, px(t1) - px(t0), panel_h))
            if t0 > 0:
                out.append('<line x1="%.1f" x2="%.1f" y1="%d" y2="%d" stroke="#bbb" stroke-dasharray="3,3"/>' % (px(t0), px(t0), y_top, y_bottom))
            if index == 0:
                out.append('<text x="%.1f" y="%d" text-anchor="middle" fill="#777" font-size="11">%s</text>' % (
                    (px(t0) + px(t1)) / 2, y_top + 13, svg_text(label)))
        # Scales.
        headroom = panel.get("headroom", 18)
        scales = {}
        for axis in ("left", "right"):
            values = [v for s in panel["series"] if s["axis"] == axis for _, v in s["points"] if v is not None]
            if not any(s["axis"] == axis for s in panel["series"]):
                continue
            if panel.get("log") and axis == "left":
                positive = [v for v in values if v > 0] or [1, 10]
                lo, hi = math.floor(math.log10(min(positive))), math.ceil(math.log10(max(positive)))
                hi = max(hi, lo + 1)
                scales[axis] = ("log", lo, hi)
            else:
                peak = max(values) if values else 1
                step = nice_step(peak * 1.08 or 1)
                scales[axis] = ("linear", 0, step * math.ceil((peak * 1.08 or 1) / step), step)

        def py(v, axis, y_top=y_top, y_bottom=y_bottom, scales=scales, headroom=headroom):
            scale = scales[axis]
            if scale[0] == "log":
                frac = (math.log10(max(v, 10 ** scale[1])) - scale[1]) / (scale[2] - scale[1])
            else:
                frac = v / scale[2] if scale[2] else 0
            return y_bottom - frac * (y_bottom - y_top - headroom)  # room for the phase labels and notes

        # Grid and tick labels.
        for axis, scale in scales.items():
            x_label = left - 6 if axis == "left" else plot_right + 6
            anchor = "end" if axis == "left" else "start"
            color = "#333" if axis == "left" else panel.get("right_color", "#333")
            if scale[0] == "log":
                decades = scale[2] - scale[1]
                ticks = sorted({round(10 ** e * m, 9) for e in range(scale[1], scale[2] + 1) for m in ((1,) if decades > 2 else (1, 2, 5))
                                if 10 ** e * m <= 10 ** scale[2] * 1.0001})
                for v in ticks:
                    y = py(v, axis)
                    major = abs(math.log10(v) - round(math.log10(v))) < 1e-9
                    out.append('<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" stroke="%s"/>' % (left, plot_right, y, y, "#ddd" if major else "#eee"))
                    out.append('<text x="%d" y="%.1f" text-anchor="%s" fill="%s">%s</text>' % (x_label, y + 4, anchor, color, fmt_latency(v)))
            else:
                v = 0
                while v <= scale[2] + 1e-9:
                    y = py(v, axis)
                    if axis == "left":
                        out.append('<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" stroke="#ddd"/>' % (left, plot_right, y, y))
                    else:
                        out.append('<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" stroke="%s"/>' % (plot_right, plot_right + 4, y, y, color))
                    out.append('<text x="%d" y="%.1f" text-anchor="%s" fill="%s">%s</text>' % (x_label, y + 4, anchor, color, fmt_number(v)))
                    v += scale[3]
        out.append('<text transform="translate(%d,%d) rotate(-90)" text-anchor="middle" fill="#333">%s</text>' % (
            14, (y_top + y_bottom) / 2, svg_text(panel["left_label"])))
        if panel.get("right_label"):
            out.append('<text transform="translate(%d,%d) rotate(90)" text-anchor="middle" fill="%s">%s</text>' % (
                legend_x - 22, (y_top + y_bottom) / 2, panel.get("right_color", "#333"), svg_text(panel["right_label"])))
        t = 0
        while t <= t_end + 1e-9:
            out.append('<line x1="%.1f" x2="%.1f" y1="%d" y2="%d" stroke="#eee"/>' % (px(t), px(t), y_top, y_bottom))
            if index == len(panels) - 1:
                out.append('<text x="%.1f" y="%d" text-anchor="middle">%g</text>' % (px(t), y_bottom + 16, t))
            t += x_step
        out.append('<rect x="%d" y="%d" width="%d" height="%d" fill="none" stroke="#999"/>' % (left, y_top, plot_right - left, panel_h))
        for t0, t1, text in panel.get("notes", []):
            out.append('<text x="%.1f" y="%d" text-anchor="middle" fill="#555" font-size="10.5" stroke="white" stroke-width="3" paint-order="stroke">%s</text>' % (
                (px(t0) + px(t1)) / 2, y_top + (13 if index else 27), svg_text(text)))
        # Series and legend.
        legend_y = y_top + 8
        for s in panel["series"]:
            segments, current, last = [], [], None
            for t, v in s["points"]:
                if v is None:
                    if current:
                        segments.append(current)
                    current, last = [], None
                    continue
                y = py(v, s["axis"])
                if s.get("step") and last is not None:
                    current.append((px(t), last))
                current.append((px(t), y))
                last = y
            if current:
                segments.append(current)
            for seg in segments:
                if len(seg) == 1:
                    out.append('<circle cx="%.1f" cy="%.1f" r="2" fill="%s"/>' % (seg[0][0], seg[0][1], s["color"]))
                else:
                    out.append('<polyline fill="none" stroke="%s" stroke-width="%s" stroke-dasharray="%s" stroke-linejoin="round" points="%s"/>' % (
                        s["color"], s.get("width", 1.8), s.get("dash", ""), " ".join("%.1f,%.1f" % p for p in seg)))
            out.append('<line x1="%d" x2="%d" y1="%d" y2="%d" stroke="%s" stroke-width="2" stroke-dasharray="%s"/>' % (
                legend_x, legend_x + 26, legend_y, legend_y, s["color"], s.get("dash", "")))
            for i, line in enumerate(s["label"].split("\n")):
                out.append('<text x="%d" y="%d">%s</text>' % (legend_x + 32, legend_y + 4 + 14 * i, svg_text(line)))
            legend_y += 17 + 14 * s["label"].count("\n")
    out.append('<text x="%d" y="%d" text-anchor="middle">seconds since signupd started (one scrape a second; each point is the interval ending there)</text>' % (
        (left + plot_right) / 2, height - 10))
    out.append("</svg>")
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")


# ---------------------------------------------------------------------------------------
# The run.

def git_commit():
    try:
        commit = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"], capture_output=True, text=True, timeout=10).stdout.strip()
        dirty = subprocess.run(["git", "-C", ROOT, "status", "--porcelain", "--untracked-files=no"], capture_output=True, text=True, timeout=10).stdout.strip()
        return commit + (" + uncommitted changes" if dirty else "") if commit else "unknown"
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def machine():
    try:
        model = re.search(r"model name\s*:\s*(.*)", open("/proc/cpuinfo").read())
    except OSError:
        model = None
    return "%d cores%s" % (os.cpu_count(), ", " + re.sub(r"\s+", " ", model.group(1)) if model else "")


class Run:
    def __init__(self, args):
        self.args = args
        self.work = tempfile.mkdtemp(prefix="signupd-metrics-plot-")
        self.daemon = None
        self.loads = []  # Popen of the load generator, at most one running
        self.stop = threading.Event()
        self.forms_stop = threading.Event()
        self.scrapes = []
        self.scrape_errors = []
        self.phases = []  # (t0, t1, clients, ndjson-load's key=value output)

    def start_daemon(self):
        sys.path.insert(0, os.path.join(ROOT, "Tests", "robustness"))
        from harness import Daemon
        self.metrics_sock = os.path.join(self.work, "metrics.sock")
        args = ["--metrics-socket", self.metrics_sock, "--log-level", "warning"] + CHEAP_HASH + FAST_ARGS
        self.daemon = Daemon(os.path.abspath(self.args.signupd), directory=self.work, args=args).start()
        self.t0 = time.monotonic()

    def scraper(self):
        k = 0
        while True:
            k += 1
            began = time.monotonic()
            try:
                samples = parse(scrape(self.metrics_sock))
                self.scrapes.append(Scrape(began - self.t0, samples, time.monotonic() - began))
            except Exception as e:
                self.scrape_errors.append("%.1f s: %r" % (began - self.t0, e))
            if self.stop.is_set():
                return
            time.sleep(max(0.0, self.t0 + k * self.args.interval - time.monotonic()))

    def run_load(self, clients, seconds):
        began = time.monotonic()
        proc = subprocess.Popen([self.args.load, "-s", self.daemon.sock, "-c", str(clients), "-p", str(self.args.depth), "-d", "%g" % seconds],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.loads.append(proc)
        out, err = proc.communicate(timeout=seconds + 120)
        ended = time.monotonic()
        result = {k: float(v) for k, v in re.findall(r"(\w+)=([0-9.]+)", out)}
        if proc.returncode != 0 or result.get("errors"):
            log("load with %d clients: exit %s, %s %s" % (clients, proc.returncode, out.strip(), err.strip()))
        self.phases.append((began - self.t0, ended - self.t0, clients, result))
        log("%5.1f–%5.1f s: %d clients: %s" % (began - self.t0, ended - self.t0, clients, out.strip()))

    def sleep_until(self, t):
        time.sleep(max(0.0, self.t0 + t - time.monotonic()))

    def go(self):
        a = self.args
        self.start_daemon()
        log("signupd %s ready (pid %d), scratch %s" % (a.signupd, self.daemon.proc.pid, self.work))
        scraper = threading.Thread(target=self.scraper, daemon=True)
        scraper.start()
        forms = FormLoad(self.daemon.sock, a.form_workers, self.forms_stop)
        forms.start()
        steps = [int(x) for x in a.phases.split(",") if x.strip()]
        lead = max(2.0, min(5.0, a.seconds * 0.1))
        each = max(1.0, (a.seconds - 2 * lead) / len(steps))
        self.sleep_until(lead)
        for clients in steps:
            self.run_load(clients, each)
        self.sleep_until(max(a.seconds, time.monotonic() - self.t0 + 1))
        # The forms stop (each worker finishes the form it is in), then the scrapes; the last
        # one comes after every answer the workers saw, so that the counters can be compared.
        self.forms_stop.set()
        forms.join(30)
        self.stop.set()
        scraper.join(15)
        self.forms = forms
        self.t_end = self.scrapes[-1].t if self.scrapes else time.monotonic() - self.t0

    def cleanup(self):
        self.forms_stop.set()
        self.stop.set()
        for proc in self.loads:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        if self.daemon and self.daemon.proc and self.daemon.proc.poll() is None:
            self.daemon.proc.send_signal(signal.SIGTERM)
            try:
                self.daemon.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.daemon.proc.kill()
                self.daemon.proc.wait()
        shutil.rmtree(self.work, ignore_errors=True)


def analyse(run):
    """The per-interval series, the per-phase summary and the checks; draws the SVG."""
    a = run.args
    scrapes = run.scrapes
    if len(scrapes) < 3:
        raise RuntimeError("only %d scrapes: %s" % (len(scrapes), run.scrape_errors[:3]))
    pairs = list(zip(scrapes, scrapes[1:]))
    val_rate, conns, p50, p99, depth, sessions = [], [], [], [], [], []
    capped = 0
    rates = {}  # (kind, outcome) -> [(t, per second)]
    outcomes = set()
    for s in scrapes:
        for kind in ("signups", "logins"):
            outcomes |= {(kind, o) for o in s.by("signupd_%s_total" % kind, "outcome")}
    for before, after in pairs:
        dt = after.t - before.t
        t = after.t
        val_rate.append((t, increase(before.total("signupd_validation_seconds_count"), after.total("signupd_validation_seconds_count")) / dt))
        conns.append((t, after.total("signupd_connections")))
        sessions.append((t, after.total("signupd_sessions")))
        depth.append((t, after.total("signupd_hash_queue_depth")))
        delta = bucket_increase(before, after, "signupd_validation_seconds")
        for q, out in ((0.5, p50), (0.99, p99)):
            v, cap = quantile(q, delta)
            capped += cap
            out.append((t, v * 1e6 if v is not None else None))
        for kind, outcome in outcomes:
            name = "signupd_%s_total" % kind
            moved = increase(before.total(name, outcome=outcome), after.total(name, outcome=outcome))
            rates.setdefault((kind, outcome), []).append((t, moved / dt))

    # Per phase: increases over the whole phase (first scrape after its start to last before its end).
    def window(t0, t1):
        inside = [s for s in scrapes if t0 <= s.t <= t1]
        return (inside[0], inside[-1]) if len(inside) >= 2 else (None, None)

    lead_end = run.phases[0][0] if run.phases else scrapes[-1].t
    spans = [(0.0, lead_end, "quiet lead-in", None)] + [(p[0], p[1], "%d clients" % p[2], p) for p in run.phases] + \
            [(run.phases[-1][1] if run.phases else 0.0, run.t_end, "quiet tail", None)]
    summary = []
    for t0, t1, label, phase in spans:
        first, last = window(t0, t1)
        if not first:
            continue
        dt = last.t - first.t
        delta = bucket_increase(first, last, "signupd_validation_seconds")
        q50, q99 = quantile(0.5, delta)[0], quantile(0.99, delta)[0]
        inside = [(t, v) for t, v in val_rate if first.t < t <= last.t]
        row = {"label": label, "t0": t0, "t1": t1,
               "validations_per_s": increase(first.total("signupd_validation_seconds_count"), last.total("signupd_validation_seconds_count")) / dt,
               "peak_validations_per_s": max((v for _, v in inside), default=0),
               "p50_us": q50 * 1e6 if q50 is not None else None, "p99_us": q99 * 1e6 if q99 is not None else None,
               "connections_max": max((s.total("signupd_connections") for s in scrapes if first.t <= s.t <= last.t), default=0),
               "hash_depth_max": max((s.total("signupd_hash_queue_depth") for s in scrapes if first.t <= s.t <= last.t), default=0),
               "load": phase[3] if phase else None}
        for kind in ("signups", "logins"):
            name = "signupd_%s_total" % kind
            row[kind] = {o: increase(first.total(name, outcome=o), last.total(name, outcome=o)) / dt
                         for k, o in sorted(outcomes) if k == kind}
        hashes = increase(first.total("signupd_hash_seconds_count"), last.total("signupd_hash_seconds_count"))
        hdelta = bucket_increase(first, last, "signupd_hash_seconds")
        row["hash_per_s"] = hashes / dt
        row["hash_p50_ms"] = (quantile(0.5, hdelta)[0] or 0) * 1000
        row["hash_p99_ms"] = (quantile(0.99, hdelta)[0] or 0) * 1000
        summary.append(row)

    # The SVG.
    peak = max(v for _, v in val_rate)
    phases = [(0.0, lead_end, "quiet")] + [(p[0], p[1], "%d clients" % p[2]) for p in run.phases] + \
             [(run.phases[-1][1], run.t_end, "quiet")]
    notes = [(r["t0"], r["t1"], "p99 %s vs %s" % (fmt_latency(r["p99_us"]), fmt_latency(r["load"]["p99_us"])))
             for r in summary if r["p99_us"] and r["load"] and r["load"].get("p99_us")]
    rate_notes = [(r["t0"], r["t1"], "mean %s/s" % fmt_number(round(r["validations_per_s"], -2 if r["validations_per_s"] > 1000 else 0)))
                  for r in summary if r["load"]]
    colors = {("signups", "ok"): ("#27ae60", ""), ("logins", "ok"): ("#2980b9", ""), ("logins", "failed"): ("#c0392b", ""),
              ("logins", "throttled"): ("#e67e22", ""), ("signups", "taken"): ("#8e44ad", ""), ("signups", "too_similar"): ("#8e44ad", "5,3"),
              ("signups", "throttled"): ("#e67e22", "5,3"), ("signups", "unavailable"): ("#7f8c8d", "5,3"),
              ("logins", "unavailable"): ("#7f8c8d", ""), ("signups", "paused"): ("#f1c40f", "")}
    form_series = []
    for key in sorted(rates, key=lambda k: (k[0] != "signups", k[1] != "ok", k[1])):
        if not any(v for _, v in rates[key]):
            continue
        color, dash = colors.get(key, ("#555", "2,2"))
        form_series.append({"label": "%s %s" % (key[0][:-1], key[1]), "color": color, "dash": dash, "axis": "left", "points": rates[key]})
    round_trip = {}
    for t0, t1, clients, result in run.phases:
        for key in ("p50_us", "p99_us"):
            if result.get(key):
                round_trip.setdefault(key, []).extend([(t0, result[key]), (t1, result[key]), (t1, None)])
    panels = [
        {"title": "Validations per second (all forms) and open connections", "left_label": "validations / s",
         "right_label": "connections", "right_color": "#7f8c8d", "notes": rate_notes, "headroom": 32,
         "series": [{"label": "validations/s", "color": "#c0392b", "axis": "left", "points": val_rate},
                    {"label": "connections", "color": "#7f8c8d", "dash": "6,4", "axis": "right", "step": True, "points": conns}]},
        {"title": "Validation latency: signupd_validation_seconds (set → its events queued) per 1 s interval, vs the clients' round trip",
         "left_label": "latency (log)", "log": True, "notes": notes, "headroom": 20,
         "series": [{"label": "p50 (histogram)", "color": "#2c3e50", "axis": "left", "points": p50},
                    {"label": "p99 (histogram)", "color": "#c0392b", "axis": "left", "points": p99},
                    {"label": "p50 round trip,\nndjson-load, phase", "color": "#2c3e50", "dash": "2,3", "axis": "left", "width": 2.5,
                     "points": round_trip.get("p50_us", [])},
                    {"label": "p99 round trip,\nndjson-load, phase", "color": "#c0392b", "dash": "7,4", "axis": "left", "width": 2.5,
                     "points": round_trip.get("p99_us", [])}]},
        {"title": "Signups and logins per second, by outcome (%d Python workers)" % a.form_workers, "left_label": "per second",
         "series": form_series},
        {"title": "Hash queue depth (signups and logins queued or hashing), sampled at each scrape", "left_label": "queued or hashing",
         "series": [{"label": "hash queue depth", "color": "#8e44ad", "axis": "left", "step": True, "points": depth}]},
    ]
    when = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    version = next(iter(scrapes[-1].by("signupd_build_info", "version")), "?")
    built = datetime.datetime.fromtimestamp(os.stat(a.signupd).st_mtime, datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    title = "signupd metrics under staged load: %s, commit %s, %d cores" % (when, git_commit(), os.cpu_count())
    subtitle = ["Machine: %s. Keystrokes: ndjson-load, a set of the signup form's password, %d in flight per client, in phases of %s clients." % (
                    machine(), a.depth, ", ".join(x.strip() for x in a.phases.split(","))),
                "Alongside, %d Python threads sign up and log in (1 login in 4 with a wrong password, always on the same 2 accounts)." % a.form_workers,
                "signupd %s (binary of %s); Argon2id 1 pass, 8 MiB; the bench's relaxed per-user limits; /metrics scraped every %g s. Peak: %s validations/s." % (
                    version, built, a.interval, fmt_number(round(peak, -2) if peak >= 1000 else round(peak)))]
    os.makedirs(os.path.dirname(os.path.abspath(a.out)), exist_ok=True)
    draw(a.out, title, subtitle, panels, phases, run.t_end)
    return summary, capped


def report(run, summary, capped):
    print("signupd metrics under load: %s, %s" % (git_commit(), machine()))
    print()
    print("| phase | s | validations/s (mean, peak) | p50 | p99 | load's own p99 (round trip) | connections | signups/s | logins/s | hashes/s, p50, p99 | max hash queue |")
    print("|---|---|---:|---:|---:|---:|---:|---|---|---:|---:|")
    for r in summary:
        load = r["load"]
        own = fmt_latency(load["p99_us"]) if load and "p99_us" in load else ""
        fmt_rates = lambda d: ", ".join("%s %.1f" % (o, v) for o, v in d.items() if v) or "0"
        print("| %s | %.0f–%.0f | %s, %s | %s | %s | %s | %d | %s | %s | %.1f, %.0f ms, %.0f ms | %d |" % (
            r["label"], r["t0"], r["t1"], fmt_number(round(r["validations_per_s"])), fmt_number(round(r["peak_validations_per_s"])),
            fmt_latency(r["p50_us"]) if r["p50_us"] else "-", fmt_latency(r["p99_us"]) if r["p99_us"] else "-", own,
            r["connections_max"], fmt_rates(r["signups"]), fmt_rates(r["logins"]), r["hash_per_s"], r["hash_p50_ms"], r["hash_p99_ms"], r["hash_depth_max"]))
    print()
    last = run.scrapes[-1]
    seen = run.forms.seen
    print("What the clients saw: %s" % ", ".join("%s %s: %d" % (k[0], k[1], v) for k, v in sorted(seen.items())))
    print("What the counters say at the end: signups %s; logins %s" % (
        last.by("signupd_signups_total", "outcome"), last.by("signupd_logins_total", "outcome")))
    problems = []
    ok_signups = seen.get(("signup", "ok"), 0)
    if last.total("signupd_signups_total", outcome="ok") != ok_signups:
        problems.append("signups ok: counter %g, clients saw %d" % (last.total("signupd_signups_total", outcome="ok"), ok_signups))
    if last.total("signupd_logins_total", outcome="ok") != seen.get(("login", "ok"), 0):
        problems.append("logins ok: counter %g, clients saw %d" % (last.total("signupd_logins_total", outcome="ok"), seen.get(("login", "ok"), 0)))
    submitted = sum(v for k, v in seen.items() if k[0] == "login" and not k[1].startswith(("refused:", "not submitted")))
    if last.total("signupd_logins_total") != submitted:
        problems.append("logins (all outcomes): counter %g, clients submitted %d" % (last.total("signupd_logins_total"), submitted))
    refused = sum(v for k, v in seen.items() if k[1].startswith("refused:"))
    if last.total("signupd_refusals_total") != refused:
        problems.append("refusals: counter %g, the form workers were refused %d times (the load generator is never refused)" % (
            last.total("signupd_refusals_total"), refused))
    made = last.total("signupd_store_seconds_count", operation="create_account")
    if made != ok_signups:
        problems.append("create_account store calls %g, signups ok %d" % (made, ok_signups))
    load_requests = sum(p[3].get("requests", 0) for p in run.phases)
    validations = last.total("signupd_validation_seconds_count")
    if validations < load_requests:
        problems.append("validation histogram counted %g, fewer than the load generator's %d answered requests" % (validations, load_requests))
    print("Validation histogram count %g; the load generator's answered requests %d (the rest: the form workers' sets)." % (validations, load_requests))
    print("Closes by reason %s; refusals %s." % (last.by("signupd_connection_closes_total", "reason"), last.by("signupd_refusals_total", "code") or "none"))
    print("Availability checks %s; hashes %g." % (last.by("signupd_availability_checks_total", "result"), last.total("signupd_hash_seconds_count")))
    took = sorted(s.took for s in run.scrapes)
    print("Scrapes: %d, median %.1f ms, max %.1f ms; errors: %s." % (len(took), took[len(took) // 2] * 1000, took[-1] * 1000, run.scrape_errors or "none"))
    if capped:
        problems.append("%d per-second quantiles fell in the +Inf bucket (shown at 100 ms)" % capped)
    if run.forms.errors:
        problems.append("form workers: %s" % run.forms.errors)
    lines = run.daemon.log().strip().splitlines()
    for line in lines[:5]:
        print("signupd logged (warning or above): " + line)
    if len(lines) > 5:
        print("signupd logged %d more lines at warning or above" % (len(lines) - 5))
    for p in problems:
        print("ODD: " + p)
    if not problems:
        print("Counters agree with what the clients saw.")


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--signupd", help="signupd, release build")
    p.add_argument("--load", help="../shared/bench/ndjson-load, built")
    p.add_argument("--out", help="the SVG to write")
    p.add_argument("--seconds", type=float, default=60)
    p.add_argument("--phases", default="10,100,400", help="keystroke clients per phase, comma-separated")
    p.add_argument("--depth", type=int, default=1, help="requests in flight per load client")
    p.add_argument("--form-workers", type=int, default=4, help="threads signing up and logging in")
    p.add_argument("--interval", type=float, default=1.0, help="seconds between scrapes")
    p.add_argument("--dashboard", help="also check this Grafana dashboard, against this run's scrapes too")
    p.add_argument("--check-dashboard", metavar="PATH", help="only check this Grafana dashboard's PromQL; start nothing")
    a = p.parse_args()
    if a.check_dashboard:
        sys.exit(1 if check_dashboard(a.check_dashboard) else 0)
    if not (a.signupd and a.load and a.out):
        p.error("--signupd, --load and --out are needed (or --check-dashboard)")
    if not re.fullmatch(r"\s*\d+(\s*,\s*\d+)*\s*", a.phases):
        p.error("--phases: client counts, comma-separated, e.g. 10,100,400")

    def on_signal(number, _frame):
        raise SystemExit(128 + number)

    for number in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(number, on_signal)
    run = Run(a)
    try:
        run.go()
        summary, capped = analyse(run)
        report(run, summary, capped)
        log("wrote " + a.out)
        if a.dashboard:
            seen = {n for s in run.scrapes for n, _, _ in s.samples}
            if check_dashboard(a.dashboard, seen):
                sys.exit(1)
    finally:
        run.cleanup()


if __name__ == "__main__":
    main()
