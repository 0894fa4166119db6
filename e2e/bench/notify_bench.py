#!/usr/bin/env python3
"""Helpers of e2e/bench/bench_notify.sh (notifications at scale, DESIGN.md 3.9).

  plan SEED START DAYS OBJECTS-JSON       the requests of a simulated month
  drive PLAN OUT                          makes them at their simulated times
  recv DIR PORT DELAY                     the receiver (each POST to DIR/posts.jsonl)
  expect PLAN-DONE START DAYS             what is due, from the requests and the windows
  judge EXPECTED POSTS ...                delivered / lost / duplicates / latency
  watch PATH OUT                          a HostedCluster watch, each release write timed
  loop BOUNDARIES-JSON WRITES             window open -> release write latencies
  noise RUNS-A RUNS-B                     is B's latency A's within run-to-run noise

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


def cmd_recv(d, port, delay, host="127.0.0.1"):
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

    S((host, int(port)), H).serve_forever()


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
        exp.append(dict(rq, obj=obj, step="completed", at=w, image=r["image"]))
    reqs = [{"kind": r["kind"], "name": r["name"], "at": r["at"], "lo": r["lo"], "hi": r["hi"]}
            for r in json.load(open(done_file)) if 200 <= r["code"] < 300]
    json.dump({"expected": exp, "ambiguous": ambiguous, "refused": refused, "skip": skip,
               "requests": reqs}, sys.stdout)


def release_version(image):
    """"4.17.1" of "...ocp-release:4.17.1-x86_64" (the model's versions)."""
    m = re.search(r":(\d+\.\d+\.\d+)", image or "")
    return m.group(1) if m else image


def lead_of(msg):
    m = re.search(r"\(in (\d+)h(\d+)m\)", msg or "")
    return int(m.group(1)) * HOUR + int(m.group(2)) * 60 if m else None


def supersedes_of(s):
    """The lead an initiated step's data.supersedes names; "held" (no held
    step was told for the request, nor any window-soon) supersedes every
    lead: infinity."""
    if s == "held":
        return float("inf")
    m = re.match(r"window-soon (\d+)h(\d+)m$", s or "")
    return int(m.group(1)) * HOUR + int(m.group(2)) * 60 if m else None


def pct(xs, p):
    xs = sorted(xs)
    if not xs:
        return float("nan")
    i = min(len(xs) - 1, max(0, int(round(p / 100.0 * len(xs) + 0.5)) - 1))
    return xs[i]


# How far the request time a notification names (the webhook's record, on
# the controller's clock, in whole seconds) may lie outside the interval in
# which the bench saw the request admitted (its own reading of that clock:
# at 8640x a millisecond is 8.6 simulated seconds, a busy second of the
# controller's loop most of a simulated hour, and the clock starts again
# with the controller). A notification belongs to the object's request
# nearest to the time it names, within this. An object's requests are at
# least 6 hours apart.
REQ_SLACK = 3 * HOUR


def cmd_judge(exp_file, posts_file, down0, down1, restart, scale, term=None):
    """Matches what arrived against what was due. held, window-soon and
    initiated are matched per request (data.requestedAt within the request's
    admission interval), object, step, window and lead, each notification
    (by id) to one expectation at most; completed by object, in order.
    What is not delivered for its window is, in this order: moved (the same
    step for the same request in a later window: the change was kept held),
    superseded (a window-soon the initiated step of the same request names
    in data.supersedes: the window opened before the controller reached the
    lead), covered (a window-soon of a longer lead when a shorter one was
    told for the same request and window: only the shortest lead reached is
    told), else lost. A completed is due for a request whose release the
    object reached: with the model's record (MODEL_RECORD: HostedCluster
    controlplane-completed, NodePool nodepool-status, as HyperShift reports
    them), a request whose release the object never reached because it
    went on to a later request's first is counted as replaced by the later
    request (HyperShift never reports the earlier one completed); one whose
    release the object reached neither then nor later (its rollout had not
    ended when the month did: a pool whose MachineDeployment is paused
    between windows rolls only in them) is counted as not reached: there
    is no completion to tell. A completed
    counts for an object's requests only when it names a time after the
    first of them; one before (a new NodePool's first rollout ending:
    UpdatingVersion goes True then False for it too) is counted as
    initial, when the model's record shows the pool's first status.version
    then. Prints the figures as JSON."""
    down0, down1, restart, scale = float(down0), float(down1), float(restart), float(scale)
    term = float(term) if term else float("inf")
    sim, _ = sim_clock()
    e = json.load(open(exp_file))
    posts = {}  # id -> the notification (first arrival)
    arrivals = {}
    for line in open(posts_file):
        p = json.loads(line)
        b = p["body"]
        d = b["data"]
        arrivals.setdefault(b["id"], []).append(p["t"])
        if b["id"] in posts:
            continue
        posts[b["id"]] = {
            "kind": d["kind"], "name": d["name"], "step": d["step"],
            "window": epoch(d.get("window")) if d["step"] != "completed" else None,
            # completed: the time of the outcome it tells (data.window)
            "at": epoch(d.get("window")) if d["step"] == "completed" else None,
            "lead": lead_of(d.get("message")) if d["step"] == "window-soon" else None,
            "req": epoch(d.get("requestedAt")), "supersedes": supersedes_of(d.get("supersedes")),
            "image": release_version(d.get("change")), "t": p["t"]}
    dup_ids = {i: v for i, v in arrivals.items() if len(v) > 1}

    def gap(x, t):
        return 0 if x["lo"] <= t <= x["hi"] else min(abs(t - x["lo"]), abs(t - x["hi"]))

    # Each request the bench made (also those left out as ambiguous or let
    # through at once: they are requests too) by object.
    reqs = {}
    for x in e["expected"]:
        if x["step"] == "held":
            reqs.setdefault((x["obj"][0], x["obj"][1]), {})[x["req"]] = x
    for x in e.get("requests", []):
        reqs.setdefault((x["kind"], x["name"]), {}).setdefault(x["at"], x)

    def same_request(x, q):
        if q["req"] is None or gap(x, q["req"]) > REQ_SLACK:
            return False
        near = min(reqs.get((q["kind"], q["name"]), {x["req"]: x}).values(),
                   key=lambda r: gap(r, q["req"]))
        return gap(near, q["req"]) >= gap(x, q["req"])

    def of(x, q, step=None):
        return (q["kind"], q["name"], q["step"]) == (x["obj"][0], x["obj"][1], step or x["step"]) \
            and same_request(x, q)

    used = set()
    lat, lat_down, moved, superseded, covered, lost = [], [], [], [], [], []
    todo = [x for x in e["expected"] if x["step"] != "completed"]
    # 1. the step for its own window
    rest = []
    for x in todo:
        c = sorted((q["t"], i) for i, q in posts.items() if i not in used and of(x, q) and
                   q["window"] == x["window"] and q["lead"] == x.get("lead"))
        if not c:
            rest.append(x)
            continue
        used.add(c[0][1])
        delay = sim(c[0][0]) - x["at"]
        # While the receiver is up: the step falls outside the day it is
        # down, and its delivery did not wait for the receiver to come back.
        if down0 <= x["at"] <= down1 or x["at"] < down0 < sim(c[0][0]):
            lat_down.append(delay)
        else:
            lat.append(delay)
    # 2. moved: the same step of the same request for a later window
    rest2 = []
    for x in rest:
        c = sorted((q["window"], i) for i, q in posts.items() if i not in used and of(x, q) and
                   q["lead"] == x.get("lead") and q["window"] is not None and
                   x["window"] < q["window"] <= x["window"] + 8 * DAY)
        if c:
            used.add(c[0][1])
            moved.append(x)
        else:
            rest2.append(x)
    # 3. superseded: a window-soon by the initiated step of the request
    # naming its lead, held and every window-soon by one naming "held" (the
    # controller first saw the held request with its window open); covered:
    # a window-soon of a longer lead when a shorter one was told for the
    # same request and window
    def supersedes(q, x):
        sup = q["supersedes"]
        return sup is not None and (sup == float("inf") or
                                    (x["step"] == "window-soon" and sup <= x["lead"]))

    for x in rest2:
        if x["step"] in ("window-soon", "held"):
            if any(of(x, q, "initiated") and supersedes(q, x) and
                   x["window"] <= q["window"] <= x["window"] + 8 * DAY for q in posts.values()):
                superseded.append(x)
                continue
        if x["step"] == "window-soon":
            if any(of(x, q) and q["lead"] is not None and q["lead"] < x["lead"] and
                   x["window"] <= q["window"] <= x["window"] + 8 * DAY for q in posts.values()):
                covered.append(x)
                continue
        lost.append(x)
    # What the model reports each object reached (release versions) and a
    # NodePool's first status.version (simulated time).
    reached, first_version = {}, {}
    rec_file = os.environ.get("MODEL_RECORD")
    for line in (open(rec_file) if rec_file and os.path.exists(rec_file) else []):
        r = json.loads(line)
        name = r.get("object", "").split("/")[-1]
        if r["event"] == "controlplane-completed":
            reached.setdefault(("HostedCluster", name), set()).add(release_version(r.get("to")))
        elif r["event"] == "nodepool-status" and r.get("to"):
            reached.setdefault(("NodePool", name), set()).add(r["to"])
            if not r.get("from"):
                first_version.setdefault(name, epoch(r["at"][:19] + "Z"))
    completed_due, replaced, not_reached = {}, [], []
    for x in e["expected"]:
        if x["step"] == "completed":
            completed_due.setdefault(tuple(x["obj"]), []).append(x)
    lost_completed = []
    for obj, xs in completed_due.items():
        xs.sort(key=lambda x: x["req"])
        if rec_file:
            got = reached.get(obj, set())
            keep = []
            for k, x in enumerate(xs):
                v = release_version(x.get("image"))
                if v not in got and any(release_version(y.get("image")) in got for y in xs[k + 1:]):
                    replaced.append(x)
                elif v not in got:
                    # HyperShift (the model) never reported the release
                    # reached within the month: no completion to tell.
                    not_reached.append(x)
                else:
                    keep.append(x)
            xs = keep
        told = [i for i, q in posts.items()
                if (q["kind"], q["name"], q["step"]) == (obj[0], obj[1], "completed") and
                (q["at"] is None or q["at"] >= min(x["lo"] for x in completed_due[obj]))]
        used.update(told)
        lost_completed += xs[len(told):]
    initial = []
    for i, q in posts.items():
        t = first_version.get(q["name"])
        if i not in used and q["kind"] == "NodePool" and q["step"] == "completed" and \
                q["at"] is not None and t is not None and abs(q["at"] - t) <= HOUR:
            initial.append(i)
            used.add(i)
    # Not expected: a step for a request the bench made, for a later window
    # than the one derived (the change let through late and held again by
    # the backstop, then told again for the next window: "again"), else
    # unexpected (left out: a request the bench counts as ambiguous).
    skip = {tuple(k) for k in e.get("skip", [])}
    image_of = {(x["obj"][0], x["obj"][1], x["req"]): release_version(x.get("image"))
                for x in e["expected"] if x["step"] == "completed"}

    def reheld(q):
        """The same object's release, told for a later window under a later
        record than the bench's request x, with no other request of the
        object between: the release the controller let through was written
        after its window closed, and the webhook held (and recorded) it
        again."""
        if q["req"] is None or q["window"] is None or q["step"] == "completed":
            return False
        for x in todo:
            if (x["obj"][0], x["obj"][1]) != (q["kind"], q["name"]) or x["step"] != "held":
                continue
            if not (x["hi"] < q["req"] and x["window"] < q["window"] <= x["window"] + 8 * DAY):
                continue
            if image_of.get((q["kind"], q["name"], x["req"])) != q["image"]:
                continue
            if not any(x["req"] < r < q["req"] for r in reqs.get((q["kind"], q["name"]), {})):
                return True
        return False
    again, rehold, unexpected = [], [], []
    for i, q in posts.items():
        if i in used:
            continue
        if any(of(x, q, q["step"]) and q["window"] is not None and
               x["window"] < q["window"] <= x["window"] + 8 * DAY for x in todo):
            again.append(i)
        elif reheld(q):
            rehold.append(i)
        elif (q["kind"], q["name"], q["window"]) not in skip:
            unexpected.append(i)
    # Duplicates within a window: one notification (id) received more than once.
    dups = sum(len(v) - 1 for v in dup_ids.values())
    # Again after the SIGKILL (before the SIGTERM restart), or after the
    # SIGTERM restart.
    dups_after_restart = sum(1 for v in dup_ids.values()
                             if any(restart <= sim(t) < term for t in v[1:]))
    dups_after_term = sum(1 for v in dup_ids.values() if any(sim(t) >= term for t in v[1:]))
    show = lambda i: [posts[i][k] for k in ("kind", "name", "step", "window", "lead", "req")]
    out = {
        "expected": len(e["expected"]),
        "expected_non_completed": len(todo),
        "completed_expected": sum(len(v) for v in completed_due.values()),
        "completed_received": sum(1 for q in posts.values() if q["step"] == "completed"),
        "ambiguous": e["ambiguous"], "refused": e["refused"],
        "received": sum(len(v) for v in arrivals.values()),
        "lost": len(lost) + len(lost_completed), "lost_list": (lost + lost_completed)[:10],
        "duplicates": dups, "duplicates_after_restart": dups_after_restart,
        "duplicates_after_term": dups_after_term,
        "dup_list": [show(i) + [v] for i, v in list(dup_ids.items())[:5]],
        "moved": len(moved), "moved_list": moved[:10],
        "superseded": len(superseded), "superseded_list": superseded[:10],
        "covered": len(covered), "again": len(again),
        "replaced": len(replaced), "not_reached": len(not_reached), "initial": len(initial),
        "rehold": len(rehold),
        "unexpected": len(unexpected), "unexpected_list": [show(i) for i in unexpected[:10]],
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
    delay of each release written in the window's first part; and the
    median of each opening apart (one sample per boundary for cmd_noise)."""
    bs = json.loads(boundaries)
    lat, per = [], [[] for _ in bs]
    for line in open(writes):
        w = json.loads(line)
        for k, b in enumerate(bs):
            if 0 <= w["t"] - b < 5:
                lat.append(w["t"] - b)
                per[k].append(w["t"] - b)
    print(json.dumps({"n": len(lat), "p50_ms": pct(lat, 50) * 1000, "p99_ms": pct(lat, 99) * 1000,
                      "max_ms": (max(lat) if lat else float("nan")) * 1000,
                      "boundary_p50_ms": [pct(x, 50) * 1000 for x in per if x]}))


def mann_whitney_p(a, b):
    """Two-sided p of the Mann-Whitney U test (normal approximation with
    the tie correction): how likely a difference of ranks this large is
    when both samples come from one distribution."""
    import math
    n1, n2 = len(a), len(b)
    allv = sorted([(v, 0) for v in a] + [(v, 1) for v in b])
    ranks, i, ties = [0.0] * len(allv), 0, 0.0
    while i < len(allv):
        j = i
        while j + 1 < len(allv) and allv[j + 1][0] == allv[i][0]:
            j += 1
        for k in range(i, j + 1):
            ranks[k] = (i + j) / 2.0 + 1
        t = j - i + 1
        ties += t ** 3 - t
        i = j + 1
    r1 = sum(r for r, (_, g) in zip(ranks, allv) if g == 0)
    u = r1 - n1 * (n1 + 1) / 2.0
    n = n1 + n2
    var = n1 * n2 / 12.0 * ((n + 1) - ties / (n * (n - 1)))
    if var <= 0:
        return 1.0
    z = (abs(u - n1 * n2 / 2.0) - 0.5) / math.sqrt(var)
    return max(0.0, min(1.0, math.erfc(max(z, 0) / math.sqrt(2))))


def cmd_noise(runs_a, runs_b):
    """Whether the window open -> release write delays of B (10 slow
    endpoints) differ from A's (none) by more than A and B differ from
    themselves: RUNS_* are JSON lists of cmd_loop results, one per run.
    The samples are the per-boundary medians. Within noise when the
    difference of the runs' medians is no larger than the spread of
    either side's run medians, and the Mann-Whitney test of the
    per-boundary medians finds no difference (p >= 0.05)."""
    ra, rb = json.loads(runs_a), json.loads(runs_b)
    a = [v for r in ra for v in r["boundary_p50_ms"]]
    b = [v for r in rb for v in r["boundary_p50_ms"]]
    ma, mb = [r["p50_ms"] for r in ra], [r["p50_ms"] for r in rb]
    spread = max(max(ma) - min(ma), max(mb) - min(mb))
    diff = pct(mb, 50) - pct(ma, 50)
    p = mann_whitney_p(a, b)
    print(json.dumps({"runs": [len(ra), len(rb)], "samples": [len(a), len(b)],
                      "run_p50_ms_a": ma, "run_p50_ms_b": mb,
                      "median_a_ms": pct(a, 50), "median_b_ms": pct(b, 50),
                      "diff_ms": diff, "spread_ms": spread, "p": p,
                      "within_noise": abs(diff) <= spread and p >= 0.05}))


if __name__ == "__main__":
    cmd = sys.argv[1]
    globals()["cmd_" + cmd](*sys.argv[2:])
