#!/usr/bin/python3
"""Random change management policies, and the comparison of a calendar's
events with `hcp-controller preview -o json`, read with an independent
iCalendar parser (Debian's python3-icalendar).

  ics_compare.py generate DIR N SEED      writes DIR/p000.json .. policies
  ics_compare.py objects DIR N NS EVERY     a List of the policies DIR/pNNN.json
      in namespace NS, HostedCluster hcNNN following pNNN, and every EVERY-th
      one a NodePool npNNN following the next policy
  ics_compare.py compare-all DIR FROM     each DIR/pNNN.json against its
      DIR/pNNN.ics and DIR/pNNN.windows.json; prints the totals
  ics_compare.py compare-feed ICS LIST FROM UNTIL   a feed: each line of LIST is
      "SUMMARY-PREFIX|WINDOWS-JSON|POLICY[,POLICY]"; prints the totals
  ics_compare.py compare ICS JSON POLICY FROM [PREFIX]
      the VEVENTs of ICS whose SUMMARY starts with PREFIX (default: all):
      windows must equal JSON's windows, exclusions the policy's
      exclusions overlapping the range; prints differences, exits 1 if any.
"""
import datetime as dt
import json
import random
import sys
import zoneinfo

from icalendar import Calendar

ZONES = ["UTC", "Europe/Berlin", "America/New_York", "Australia/Lord_Howe", "Asia/Kolkata",
         "America/Sao_Paulo", "Pacific/Chatham"]
DAYS = ["MO", "TU", "WE", "TH", "FR", "SA", "SU"]
REASONS = ["", "year-end freeze", "launch; no changes, please", "Black Friday \\ Cyber Monday",
           "ünïcödé façade — " + "long reason " * 12, "line one\nline two"]
LOOKAHEAD = 315576000


def rrule(r):
    kind = r.choice(["daily", "weekly", "monthly-date", "monthly-day", "yearly"])
    if kind == "daily":
        return "FREQ=DAILY;INTERVAL=%d" % r.randint(1, 4)
    if kind == "weekly":
        days = sorted(r.sample(DAYS, r.randint(1, 3)), key=DAYS.index)
        return "FREQ=WEEKLY;INTERVAL=%d;BYDAY=%s" % (r.randint(1, 3), ",".join(days))
    if kind == "monthly-date":
        return "FREQ=MONTHLY;BYMONTHDAY=%d" % r.randint(1, 31)
    if kind == "monthly-day":
        return "FREQ=MONTHLY;BYDAY=%d%s" % (r.choice([1, 2, 3, 4, -1]), r.choice(DAYS))
    return "FREQ=YEARLY;BYMONTH=%d;BYMONTHDAY=%d" % (r.randint(1, 12), r.randint(1, 28))


def policy(r, i):
    ms = {"timeZone": r.choice(ZONES)}
    if r.random() < 0.9:
        permit = {"rrule": rrule(r), "startTime": "%02d:%02d" % (r.randint(0, 23),
                                                                 r.choice([0, 15, 30, 45]))}
        if r.random() < 0.8:
            permit["duration"] = "%dh%dm" % (r.randint(0, 30), r.choice([0, 30]) or 15)
        ms["permit"] = permit
    excl = []
    for _ in range(r.randint(0, 3)):
        start = dt.date(2026, 11, 1) + dt.timedelta(days=r.randint(0, 400))
        e = {"fromDate": start.isoformat(),
             "untilDate": (start + dt.timedelta(days=r.randint(1, 40))).isoformat()}
        reason = r.choice(REASONS)
        if reason:
            e["reason"] = reason
        excl.append(e)
    if excl:
        ms["exclude"] = excl
    if "permit" not in ms and not excl:
        ms["exclude"] = [{"fromDate": "2026-12-24", "reason": "holiday"}]
    return {"apiVersion": "changemanagement.hypershift.openshift.io/v1alpha1",
            "kind": "HostedChangeManagementPolicy",
            "metadata": {"name": "p%03d" % i, "namespace": "cal"},
            "spec": {"strategy": "MaintenanceSchedule", "maintenanceSchedule": ms}}


def generate(d, n, seed):
    r = random.Random(seed)
    for i in range(n):
        with open("%s/p%03d.json" % (d, i), "w") as f:
            json.dump(policy(r, i), f)


def objects(d, n, ns, every):
    cm = "changemanagement.hypershift.openshift.io/policy"
    items = []
    for i in range(n):
        p = json.load(open("%s/p%03d.json" % (d, i)))
        p["metadata"]["namespace"] = ns
        items.append(p)
        items.append({"apiVersion": "hypershift.openshift.io/v1beta1", "kind": "HostedCluster",
                      "metadata": {"namespace": ns, "name": "hc%03d" % i,
                                   "annotations": {cm: "p%03d" % i}},
                      "spec": {"release": {"image": "r:1"}, "infraID": "hc%03d-infra" % i,
                               "platform": {"type": "None"}}})
        if i % every == 0:
            items.append({"apiVersion": "hypershift.openshift.io/v1beta1", "kind": "NodePool",
                          "metadata": {"namespace": ns, "name": "np%03d" % i,
                                       "annotations": {cm: "p%03d" % ((i + 1) % n)}},
                          "spec": {"clusterName": "hc%03d" % i, "replicas": 1,
                                   "management": {"upgradeType": "Replace"},
                                   "release": {"image": "r:1"}}})
    json.dump({"apiVersion": "v1", "kind": "List", "items": items}, sys.stdout)


def utc(s):
    return dt.datetime.fromisoformat(s.replace("Z", "+00:00"))


def day_floor(t):
    return t.replace(hour=0, minute=0, second=0)


def expected(js, pols, start, until):
    """(windows, exclusions) as sets of comparable tuples."""
    wins = set()
    for w in json.loads(js)["windows"]:
        a = utc(w["start"]) if w["start"] else day_floor(start)
        b = utc(w["end"]) if w["end"] else day_floor(until)
        if a < until:
            wins.add((a, b))
    excl = set()
    for pol in pols:
        ms = pol["spec"].get("maintenanceSchedule") or {}
        tz = zoneinfo.ZoneInfo(ms.get("timeZone", "UTC"))
        for e in ms.get("exclude", []):
            f = dt.date.fromisoformat(e["fromDate"])
            u = dt.date.fromisoformat(e["untilDate"]) if "untilDate" in e else f + dt.timedelta(1)
            a = dt.datetime(f.year, f.month, f.day, tzinfo=tz).astimezone(dt.timezone.utc)
            b = dt.datetime(u.year, u.month, u.day, tzinfo=tz).astimezone(dt.timezone.utc)
            if b > start and a < until:
                excl.add((a, b, e.get("reason", "")))
    return wins, excl


def parse(ics):
    """Every VEVENT as (summary, start, end, description)."""
    out = []
    for ev in Calendar.from_ical(ics).walk("VEVENT"):
        for k in ("UID", "DTSTAMP"):
            if ev.get(k) is None:
                raise SystemExit("event without %s: %s" % (k, ev.get("SUMMARY")))
        out.append((str(ev.get("SUMMARY")), ev.decoded("DTSTART"), ev.decoded("DTEND"),
                    str(ev.get("DESCRIPTION"))))
    return out


def events(parsed, prefix):
    wins, excl = set(), set()
    for summary, a, b, desc in parsed:
        if prefix and not summary.startswith(prefix + ":"):
            continue
        if summary.endswith(": changes permitted"):
            wins.add((a, b))
        else:
            reason = desc.split(". Reason: ", 1)[1] if ". Reason: " in desc else ""
            excl.add((a, b, reason))
    return wins, excl


def compare(ics_path, json_path, pol_path, frm, prefix="", until=None, parsed=None):
    start = utc(frm)
    until = utc(until) if until else start + dt.timedelta(seconds=LOOKAHEAD)
    pols = [json.load(open(p)) for p in pol_path.split(",")]
    want_w, want_e = expected(open(json_path).read(), pols, start, until)
    if parsed is None:
        parsed = parse(open(ics_path, "rb").read())
    got_w, got_e = events(parsed, prefix)
    diffs = [("missing window", x) for x in want_w - got_w] + \
            [("extra window", x) for x in got_w - want_w] + \
            [("missing exclusion", x) for x in want_e - got_e] + \
            [("extra exclusion", x) for x in got_e - want_e]
    for d in sorted(diffs, key=str)[:5]:
        print("%s: %s %s" % (pol_path, d[0], d[1]))
    return len(got_w) + len(got_e), len(diffs)


def compare_one(*args):
    n, d = compare(*args)
    print("%d events, %d differences" % (n, d))
    return 1 if d else 0


def compare_feed(ics, listing, frm, until):
    events_n = diffs = timelines = 0
    parsed = parse(open(ics, "rb").read())
    for line in open(listing):
        prefix, js, pols = line.rstrip("\n").split("|")
        n, k = compare(ics, js, pols, frm, prefix, until, parsed)
        events_n, diffs, timelines = events_n + n, diffs + k, timelines + 1
    total = len(parsed)
    if total != events_n:
        print("the feed has %d events, the timelines account for %d" % (total, events_n))
        diffs += 1
    print("%d timelines, %d events, %d differences" % (timelines, events_n, diffs))
    return 1 if diffs else 0


def compare_all(d, frm):
    import glob
    events_n = diffs = policies = 0
    for p in sorted(glob.glob(d + "/p[0-9][0-9][0-9].json")):
        n, k = compare(p[:-5] + ".ics", p[:-5] + ".windows.json", p, frm)
        events_n, diffs, policies = events_n + n, diffs + k, policies + 1
    print("%d policies, %d events, %d differences" % (policies, events_n, diffs))
    return 1 if diffs else 0


if __name__ == "__main__":
    if sys.argv[1] == "generate":
        generate(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
    elif sys.argv[1] == "compare":
        sys.exit(compare_one(*sys.argv[2:]))
    elif sys.argv[1] == "objects":
        objects(sys.argv[2], int(sys.argv[3]), sys.argv[4], int(sys.argv[5]))
    elif sys.argv[1] == "compare-feed":
        sys.exit(compare_feed(*sys.argv[2:]))
    elif sys.argv[1] == "compare-all":
        sys.exit(compare_all(*sys.argv[2:]))
    else:
        sys.exit(__doc__)
