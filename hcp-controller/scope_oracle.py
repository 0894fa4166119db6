#!/usr/bin/python3
"""Scoped exclusions (exclude[].scope) computed apart from the product.

  scope_oracle.py generate DIR N SEED   DIR/pNNN.json: random policies whose
      exclusions have random scopes, and DIR/pNNN.base.json: the same
      policy without its exclusions
  scope_oracle.py compare DIR FROM DAYS  for each policy and kind of change,
      DIR/pNNN.KIND.json (`preview --change KIND -o json`) against the
      windows of DIR/pNNN.base.windows.json minus the exclusions whose
      scope holds KIND, as computed here: local dates to UTC with Python's
      zoneinfo, the scope table below; over [FROM, FROM + DAYS days), to
      the second. Prints the totals; exits 1 on any difference.

The table is written from DESIGN.md 3.16 and GKE's scopes, not from the
product's code: AllChanges holds everything; MinorUpgrades a minor upgrade
of the control plane or of nodes; Nodes every NodePool change;
MinorUpgradesAndNodes both.
"""
import datetime as dt
import json
import os
import random
import sys
import zoneinfo

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "e2e",
                                "controller"))
import ics_compare  # noqa: E402  (the random policies the calendar's check uses)

KINDS = ["control-plane", "control-plane-minor", "nodes", "nodes-minor"]
SCOPES = ["AllChanges", "MinorUpgrades", "Nodes", "MinorUpgradesAndNodes"]
HOLDS = {
    "AllChanges": set(KINDS),
    "MinorUpgrades": {"control-plane-minor", "nodes-minor"},
    "Nodes": {"nodes", "nodes-minor"},
    "MinorUpgradesAndNodes": {"control-plane-minor", "nodes", "nodes-minor"},
}


def generate(d, n, seed):
    r = random.Random(seed)
    for i in range(n):
        pol = ics_compare.policy(r, i)
        ms = pol["spec"]["maintenanceSchedule"]
        if "permit" not in ms:  # windows to cut into
            ms["permit"] = {"rrule": ics_compare.rrule(r), "startTime": "06:00", "duration": "20h"}
        excl = ms.get("exclude", [])
        for _ in range(r.randint(1, 3)):
            start = dt.date(2026, 11, 1) + dt.timedelta(days=r.randint(0, 400))
            excl.append({"fromDate": start.isoformat(),
                         "untilDate": (start + dt.timedelta(days=r.randint(1, 40))).isoformat()})
        for e in excl:
            s = r.choice(SCOPES + [None])
            if s:
                e["scope"] = s
        ms["exclude"] = excl
        with open("%s/p%03d.json" % (d, i), "w") as f:
            json.dump(pol, f)
        del ms["exclude"]
        with open("%s/p%03d.base.json" % (d, i), "w") as f:
            json.dump(pol, f)


def intervals(path, lo, hi):
    out = []
    for w in json.load(open(path))["windows"]:
        a = ics_compare.utc(w["start"]) if w["start"] else lo
        b = ics_compare.utc(w["end"]) if w["end"] else hi
        a, b = max(a, lo), min(b, hi)
        if a < b:
            out.append((a, b))
    return merge(out)


def merge(ivs):
    out = []
    for a, b in sorted(ivs):
        if out and a <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], b))
        else:
            out.append((a, b))
    return out


def minus(ivs, cuts):
    for ca, cb in cuts:
        nxt = []
        for a, b in ivs:
            if cb <= a or ca >= b:
                nxt.append((a, b))
                continue
            if a < ca:
                nxt.append((a, ca))
            if cb < b:
                nxt.append((cb, b))
        ivs = nxt
    return ivs


def cuts_of(pol, kind):
    ms = pol["spec"]["maintenanceSchedule"]
    tz = zoneinfo.ZoneInfo(ms.get("timeZone", "UTC"))
    out = []
    for e in ms.get("exclude", []):
        if kind not in HOLDS[e.get("scope", "AllChanges")]:
            continue
        f = dt.date.fromisoformat(e["fromDate"])
        u = dt.date.fromisoformat(e["untilDate"]) if "untilDate" in e else f + dt.timedelta(1)
        out.append((dt.datetime(f.year, f.month, f.day, tzinfo=tz).astimezone(dt.timezone.utc),
                    dt.datetime(u.year, u.month, u.day, tzinfo=tz).astimezone(dt.timezone.utc)))
    return out


def compare(d, frm, days):
    lo = ics_compare.utc(frm)
    hi = lo + dt.timedelta(days=int(days))
    n = kinds = diffs = scoped = differ = 0
    for name in sorted(os.listdir(d)):
        if not (name.startswith("p") and name.endswith(".json") and name.count(".") == 1):
            continue
        stem = os.path.join(d, name[:-5])
        pol = json.load(open(stem + ".json"))
        base = intervals(stem + ".base.windows.json", lo, hi)
        n += 1
        scoped += any(e.get("scope", "AllChanges") != "AllChanges"
                      for e in pol["spec"]["maintenanceSchedule"]["exclude"])
        got_all = []
        for kind in KINDS:
            want = merge(minus(base, cuts_of(pol, kind)))
            got = intervals("%s.%s.json" % (stem, kind), lo, hi)
            got_all.append(got)
            kinds += 1
            if got != want:
                diffs += 1
                miss = sorted(set(want) - set(got))[:3]
                extra = sorted(set(got) - set(want))[:3]
                print("%s %s: missing %s extra %s" % (name, kind, miss, extra))
        differ += len({tuple(g) for g in got_all}) > 1
    print("%d policies (%d with scoped exclusions, %d whose kinds' windows differ), %d kinds "
          "of change, %d differences" % (n, scoped, differ, kinds, diffs))
    return 1 if diffs or n == 0 else 0


if __name__ == "__main__":
    if len(sys.argv) == 5 and sys.argv[1] == "generate":
        generate(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
    elif len(sys.argv) == 5 and sys.argv[1] == "compare":
        sys.exit(compare(sys.argv[2], sys.argv[3], sys.argv[4]))
    else:
        sys.exit(__doc__)
