#!/usr/bin/env python3
"""Helpers of e2e/bench/bench_notify.sh (notifications at scale, DESIGN.md 3.9).

  plan SEED START DAYS OBJECTS-JSON       the requests of a simulated month
  drive PLAN OUT                          makes them at their simulated times
  recv DIR PORT DELAY                     the receiver (each POST to DIR/posts.jsonl)
  expect PLAN-DONE START DAYS             what is due, from the requests and the windows
  judge EXPECTED POSTS ...                delivered / lost / duplicates / latency
  watch PATH OUT                          a HostedCluster watch, each release write timed
  loop BOUNDARIES-JSON WRITES             window open -> release write latencies

The windows are computed here from the policies the bench creates (the
same three recurrences), never read from the controller, so that the
expected notifications are derived independently of what it sent.
"""
import http.server
import json
import os
import random
import re
import socketserver
import ssl
import sys
import threading
import time
import urllib.request

DAY = 86400
HOUR = 3600
LEADS = (48 * HOUR, HOUR)  # the controller's default leads
MARGIN = 1800  # simulated seconds a request stays away from any boundary

# The bench's policies: name -> (weekdays (Monday 0) or None for daily,
# start second of the day, duration).
POLICIES = {
    "daily": (None, 2 * HOUR, 4 * HOUR),
    "weekend": ((5,), 0, 8 * HOUR),
    "tue-thu": ((1, 3), 20 * HOUR, 6 * HOUR),
}


def windows(policy, start, days):
    """The windows (start, end) of policy from a day before start until days + 8 after."""
    wd, at, dur = POLICIES[policy]
    d0 = start - start % DAY - DAY
    out = []
    for i in range(days + 10):
        day = d0 + i * DAY
        # 1970-01-01 was a Thursday (3).
        if wd is None or (day // DAY + 3) % 7 in wd:
            out.append((day + at, day + at + dur))
    return out


def classify(ws, t):
    """("open", None) inside a window, else ("held", next window start)."""
    for s, e in ws:
        if s <= t < e:
            return ("open", None)
        if s > t:
            return ("held", s)
    return ("held", None)


def near_boundary(ws, t):
    for s, e in ws:
        for b in (s, e, s - LEADS[1], s - LEADS[0]):
            if abs(t - b) < MARGIN:
                return True
    return False


def cmd_plan(seed, start, days, objects):
    rnd = random.Random(int(seed))
    start, days = int(start), int(days)
    objs = json.loads(objects)
    end = start + days * DAY
    plan = []
    # A NodePool's release waits for its control plane to have completed it
    # (DESIGN.md 3.6): a NodePool asks for a release only after the window
    # in which its HostedCluster's request for it was let through (the
    # HostedClusters come first in OBJECTS).
    cp_done = {}
    for o in objs:
        ws = windows(o["policy"], start, days)
        t_min = start + 6 * HOUR
        images = list(o["images"])
        while images:
            if o["kind"] == "NodePool":
                done = cp_done.get((o["cluster"], images[0]))
                if done is None:
                    break
                t_min = max(t_min, done + 6 * HOUR)
                if t_min > end - 3 * DAY:
                    break
            # A time outside the windows and away from every boundary, whose
            # window ends a day before the month does.
            for _ in range(200):
                # Within the next 6 days, so that most objects ask twice.
                t = rnd.uniform(t_min, min(end - 2 * DAY, t_min + 6 * DAY))
                k, w = classify(ws, t)
                if k == "held" and w is not None and not near_boundary(ws, t) and \
                        w + 8 * HOUR + DAY < end:
                    break
            else:
                break
            img = images.pop(0)
            plan.append({"kind": o["kind"], "path": o["path"], "name": o["name"],
                         "policy": o["policy"], "image": img, "at": round(t, 3)})
            wend = [e for s, e in ws if s == w][0]
            if o["kind"] == "HostedCluster":
                cp_done[(o["name"], img)] = wend
            # The next request once this one's change is done.
            t_min = max(t_min, wend + 6 * HOUR)
            if t_min > end - 3 * DAY:
                break
    plan.sort(key=lambda r: r["at"])
    json.dump(plan, sys.stdout)


class Api:
    def __init__(self):
        self.server = os.environ["E_SERVER"]
        self.token = os.environ["ADMIN_TOKEN"]
        self.ctx = ssl.create_default_context(cafile=os.environ["E_CA"])

    def patch(self, path, body):
        req = urllib.request.Request(self.server + path, data=json.dumps(body).encode(),
                                     method="PATCH")
        req.add_header("Authorization", "Bearer " + self.token)
        req.add_header("Content-Type", "application/merge-patch+json")
        try:
            with urllib.request.urlopen(req, context=self.ctx, timeout=10) as r:
                return r.status, json.loads(r.read())
        except urllib.error.HTTPError as e:
            return e.code, None
        except OSError:
            return 0, None


def sim_clock():
    sim0 = float(os.environ["SIM0"])
    t0 = float(os.environ["T0_US"]) / 1e6
    k = float(os.environ["SCALE"])
    return lambda real: sim0 + (real - t0) * k, lambda sim: t0 + (sim - sim0) / k


def cmd_drive(plan_file, out_file):
    """Each request at its simulated time; a refusal (the webhooks' controller
    restarting) is tried again. Records the simulated interval in which the
    API server admitted it."""
    api = Api()
    sim, real = sim_clock()
    plan = json.load(open(plan_file))
    done = []
    for r in plan:
        d = real(r["at"]) - time.time()
        if d > 0:
            time.sleep(d)
        tries = 0
        while True:
            lo = sim(time.time())
            code, obj = api.patch(r["path"], {"spec": {"release": {"image": r["image"]}}})
            hi = sim(time.time())
            tries += 1
            if 200 <= code < 300:
                break
            if tries > 400:
                break
            time.sleep(0.05)
        r = dict(r, lo=lo, hi=hi, code=code, tries=tries,
                 admitted=(obj or {}).get("spec", {}).get("release", {}).get("image"))
        done.append(r)
        with open(out_file + ".tmp", "w") as f:
            json.dump(done, f)
        os.replace(out_file + ".tmp", out_file)


def cmd_recv(d, port, delay):
    delay = float(delay)
    lock = threading.Lock()
    out = open(os.path.join(d, "posts.jsonl"), "a", buffering=1)

    class H(http.server.BaseHTTPRequestHandler):
        def do_POST(self):
            t = time.time()
            body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            if delay > 0:
                time.sleep(delay)
            with lock:
                out.write(json.dumps({"t": t, "path": self.path,
                                      "body": json.loads(body or b"null")}) + "\n")
            self.send_response(200)
            self.end_headers()

        def log_message(self, *a):
            pass

    class S(socketserver.ThreadingMixIn, http.server.HTTPServer):
        daemon_threads = True
        allow_reuse_address = True
        request_queue_size = 256

    S(("127.0.0.1", int(port)), H).serve_forever()


def epoch(s):
    return int(time.mktime(time.strptime(s, "%Y-%m-%dT%H:%M:%SZ")) - time.timezone) if s else None


def cmd_expect(done_file, start, days):
    """The notifications due per request: held and window-soon (each lead) for
    the window the request waits for, initiated at its opening, completed
    after it; a request admitted in an open window is let through at once
    (nothing held: nothing expected). A request whose admission interval straddles a
    boundary is ambiguous and left out (counted)."""
    start, days = int(start), int(days)
    exp, ambiguous, refused, skip = [], 0, 0, []
    for r in json.load(open(done_file)):
        if not 200 <= r["code"] < 300:
            refused += 1
            continue
        ws = windows(r["policy"], start, days)
        a, b = classify(ws, r["lo"]), classify(ws, r["hi"])
        if a != b or near_boundary(ws, r["lo"]) or near_boundary(ws, r["hi"]):
            ambiguous += 1
            for c in (a, b):
                if c[1] is not None:
                    skip.append([r["kind"], r["name"], c[1]])
            continue
        obj = (r["kind"], r["name"])
        if a[0] == "open":
            # Let through at once: nothing held; its completion is news only
            # while fresh (NOTIFY_FRESH), which a fast clock may outrun.
            continue
        w = a[1]
        t = r["hi"]
        # The admission interval: the webhook records the request's time
        # (seconds) within it, and every held / window-soon / initiated told
        # for it names that time (data.requestedAt).
        rq = {"req": r["at"], "lo": r["lo"], "hi": r["hi"]}
        exp.append(dict(rq, obj=obj, step="held", window=w, at=t))
        for lead in LEADS:
            # The shortest lead reached is told; a shorter one covers longer.
            if lead == min(LEADS) or w - r["lo"] > min(LEADS):
                exp.append(dict(rq, obj=obj, step="window-soon", window=w, lead=lead,
                                at=max(t, w - lead)))
        exp.append(dict(rq, obj=obj, step="initiated", window=w, at=w))
        exp.append(dict(rq, obj=obj, step="completed", at=w))
    json.dump({"expected": exp, "ambiguous": ambiguous, "refused": refused, "skip": skip},
              sys.stdout)


def lead_of(msg):
    m = re.search(r"\(in (\d+)h(\d+)m\)", msg or "")
    return int(m.group(1)) * HOUR + int(m.group(2)) * 60 if m else None


def pct(xs, p):
    xs = sorted(xs)
    if not xs:
        return float("nan")
    i = min(len(xs) - 1, max(0, int(round(p / 100.0 * len(xs) + 0.5)) - 1))
    return xs[i]


def cmd_judge(exp_file, posts_file, down0, down1, restart, scale):
    """Matches what arrived against what was due (by object, step, window and
    lead; completed by object, in order). Prints the figures as JSON."""
    down0, down1, restart, scale = float(down0), float(down1), float(restart), float(scale)
    sim, _ = sim_clock()
    e = json.load(open(exp_file))
    got = {}
    ids = {}
    for line in open(posts_file):
        p = json.loads(line)
        d = p["body"]["data"]
        key = (d["kind"], d["name"], d["step"], epoch(d.get("window")) if d["step"] != "completed"
               else None, lead_of(d.get("message")) if d["step"] == "window-soon" else None)
        got.setdefault(key, []).append(p["t"])
        ids.setdefault(p["body"]["id"], []).append((key, p["t"]))
    dup_ids = {i: v for i, v in ids.items() if len(v) > 1}
    lost, lat, lat_down, matched, moved = [], [], [], set(), []
    expected_keys = {(x["obj"][0], x["obj"][1], x["step"], x["window"], x.get("lead"))
                     for x in e["expected"] if x["step"] != "completed"}
    completed_due = {}
    for x in e["expected"]:
        if x["step"] == "completed":
            completed_due.setdefault(tuple(x["obj"]), []).append(x)
            continue
        key = (x["obj"][0], x["obj"][1], x["step"], x["window"], x.get("lead"))
        ts = got.get(key)
        if not ts:
            # The controller kept the change held for a later window (the
            # health gate, or its release write admitted after the window
            # closed on a clock this fast): the step arrives for that window.
            # Counted apart; lost only when it arrives for none.
            later = sorted(k for k in got if k[:3] == key[:3] and k[4] == key[4] and
                           k[3] is not None and key[3] < k[3] <= key[3] + 8 * DAY and
                           k not in expected_keys and k not in matched)
            if later:
                matched.add(later[0])
                moved.append(x)
                continue
            lost.append(x)
            continue
        matched.add(key)
        first = min(ts)
        delay = sim(first) - x["at"]
        # While the receiver is up: the step falls outside the day it is
        # down, and its delivery did not wait for the receiver to come back.
        if down0 <= x["at"] <= down1 or x["at"] < down0 < sim(first):
            lat_down.append(delay)
        else:
            lat.append(delay)
    lost_completed = 0
    for obj, xs in completed_due.items():
        told = {i for i, v in ids.items() if v[0][0][:3] == (obj[0], obj[1], "completed")}
        lost_completed += max(0, len(xs) - len(told))
    # A window-soon not sent because the controller reached the window's
    # opening late (more than the lead behind the simulated clock) and
    # then let the change through in a later window: counted apart.
    moved_req = {(tuple(x["obj"]), x["req"]) for x in moved if x["step"] == "initiated"}
    behind = [x for x in lost if x["step"] == "window-soon" and (tuple(x["obj"]), x["req"]) in moved_req]
    lost = [x for x in lost if x not in behind]
    skip = {tuple(k) for k in e.get("skip", [])}
    unexpected = [k for k in got if k[2] != "completed" and k not in matched and
                  (k[0], k[1], k[3]) not in skip]
    # Duplicates within a window: one (object, step, window, lead) received
    # more than once (completed: one id more than once).
    dups = sum(len(v) - 1 for v in dup_ids.values())
    dups_after_restart = sum(1 for v in dup_ids.values() if any(sim(t) >= restart for _, t in v[1:]))
    out = {
        "expected": len(e["expected"]),
        "expected_non_completed": len(e["expected"]) - sum(len(v) for v in completed_due.values()),
        "completed_expected": sum(len(v) for v in completed_due.values()),
        "completed_received": sum(len(v) for k, v in got.items() if k[2] == "completed"),
        "ambiguous": e["ambiguous"], "refused": e["refused"],
        "received": sum(len(v) for v in got.values()),
        "lost": len(lost) + lost_completed, "lost_list": lost[:10],
        "duplicates": dups, "duplicates_after_restart": dups_after_restart,
        "dup_list": [[list(k), t] for v in list(dup_ids.values())[:5] for k, t in v],
        "moved": len(moved), "moved_list": moved[:10], "behind": len(behind),
        "unexpected": len(unexpected), "unexpected_list": [list(k) for k in unexpected[:10]],
        "latency_up_n": len(lat),
        "latency_up_p50_sim": pct(lat, 50), "latency_up_p99_sim": pct(lat, 99),
        "latency_up_max_sim": max(lat) if lat else float("nan"),
        "latency_up_p50_real": pct(lat, 50) / scale, "latency_up_p99_real": pct(lat, 99) / scale,
        "latency_up_max_real": (max(lat) if lat else float("nan")) / scale,
        "latency_down_n": len(lat_down),
        "latency_down_max_sim": max(lat_down) if lat_down else float("nan"),
    }
    json.dump(out, sys.stdout)


def cmd_watch(path, out_file):
    """Streams the watch of PATH (a HostedCluster collection); writes each
    change of spec.release.image with the real time it arrived."""
    api = Api()
    req = urllib.request.Request(api.server + path + "?watch=1&allowWatchBookmarks=false")
    req.add_header("Authorization", "Bearer " + api.token)
    last = {}
    with open(out_file, "a", buffering=1) as out, \
            urllib.request.urlopen(req, context=api.ctx, timeout=3600) as r:
        for line in r:
            t = time.time()
            ev = json.loads(line)
            o = ev.get("object", {})
            n = o.get("metadata", {}).get("name")
            img = o.get("spec", {}).get("release", {}).get("image")
            if n and img and last.get(n) != img:
                if n in last:
                    out.write(json.dumps({"t": t, "name": n, "image": img}) + "\n")
                last[n] = img


def cmd_loop(boundaries, writes):
    """Per window opening (real instant on the controller's clock), the
    delay of each release written in the window's first part."""
    bs = json.loads(boundaries)
    lat = []
    for line in open(writes):
        w = json.loads(line)
        for b in bs:
            if 0 <= w["t"] - b < 5:
                lat.append(w["t"] - b)
    print(json.dumps({"n": len(lat), "p50_ms": pct(lat, 50) * 1000, "p99_ms": pct(lat, 99) * 1000,
                      "max_ms": (max(lat) if lat else float("nan")) * 1000}))


if __name__ == "__main__":
    cmd = sys.argv[1]
    globals()["cmd_" + cmd](*sys.argv[2:])
