#!/usr/bin/python3
"""The soak test: many clients using flowd as people would, for minutes
(docs/fuzzing.md).

flowd runs on a private bus as the system service would (harness.py).
Client processes of several uids (when this runs as root) each go through
flows again and again — StartSession, GetStep, SetAnswers with answers made
from the step's own field descriptions, Continue, now and then Back and
GetReview, Submit (the spool action), Close — timing every call. Every few
seconds flowd's memory (VmRSS) and descriptors are sampled.

At the end it prints the latency percentiles per method and checks that
every flow ended submitted, that RSS after the warm-up (the first third)
grew by at most 32 MiB and a quarter, and that the descriptors are back near
the baseline. Exit 0 when all hold.

    Fuzz/bus/soak.py [--seconds N] [--clients N]
"""
import argparse
import datetime
import multiprocessing
import os
import random
import sys
import time
from collections import defaultdict

import dbus

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402

FLOWS = ["survey", "onboarding", "consultation"]
TIMEOUT = 30


def answer_for(field, rng):
    """A valid answer for a field as GetStep describes it, or None."""
    kind = str(field.get("type", ""))
    options = [str(o[0]) for o in field.get("options", [])]
    if kind in ("text", "multiline", "secure"):
        low = int(field.get("minLength", 1))
        return dbus.String("Soak " + "x" * max(0, low - 5), variant_level=1)
    if kind == "email":
        return dbus.String("soak@example.org", variant_level=1)
    if kind == "number":
        low = float(field.get("minimum", 1))
        return dbus.Int64(int(low) if float(int(low)) >= low else int(low) + 1, variant_level=1)
    if kind == "choice" and options:
        return dbus.String(rng.choice(options), variant_level=1)
    if kind == "multichoice" and options:
        return dbus.Array([options[0]], signature="s", variant_level=1)
    if kind == "toggle":
        return dbus.Boolean(True, variant_level=1)
    if kind == "date":
        return dbus.String((datetime.date.today() + datetime.timedelta(days=1)).isoformat(), variant_level=1)
    if kind == "time":
        return dbus.String("10:00", variant_level=1)
    return None


def client(address, uid, seed, deadline, results):
    if uid != os.getuid():
        harness.as_user(uid)
    rng = random.Random(seed)
    connection = dbus.bus.BusConnection(address)
    latencies = defaultdict(list)
    counts = defaultdict(int)

    def call(path, interface, method, signature="", args=()):
        start = time.monotonic()
        try:
            return connection.call_blocking(harness.BUS_NAME, path, interface, method, signature, args, timeout=TIMEOUT)
        finally:
            latencies[method].append((time.monotonic() - start) * 1000.0)

    while time.monotonic() < deadline:
        flow = rng.choice(FLOWS)
        path = None
        try:
            path = str(call(harness.MANAGER_PATH, harness.MANAGER, "StartSession", "sa{sv}", (flow, {"locale": dbus.String("en", variant_level=1)})))
            stuck = False
            for _ in range(30):
                step = call(path, harness.SESSION, "GetStep")
                if step["id"] in ("review", "complete"):
                    break
                if rng.random() < 0.1 and step.get("canGoBack", False):
                    # A person who checks the step before, then comes back.
                    call(path, harness.SESSION, "Back")
                    continue
                answers = {}
                for field in step.get("fields", []):
                    # What a hurried person fills in: the required fields.
                    if not (field.get("required", False) or field.get("mustBeOn", False)):
                        continue
                    value = answer_for(field, rng)
                    if value is not None:
                        answers[str(field["id"])] = value
                if answers:
                    call(path, harness.SESSION, "SetAnswers", "a{sv}", (answers,))
                errors = call(path, harness.SESSION, "Continue")
                if errors:
                    counts["stuck"] += 1
                    if counts["stuck"] <= 3:
                        print("soak: %s stayed on %s: %s (answers %s)" % (flow, step["id"], dict(errors), answers),
                              file=sys.stderr)
                    stuck = True
                    break
            if stuck:
                raise StopIteration
            if rng.random() < 0.5:
                call(path, harness.SESSION, "GetReview")
            call(path, harness.SESSION, "Submit")
            state = call(path, "org.freedesktop.DBus.Properties", "Get", "ss", (harness.SESSION, "State"))
            counts["submitted" if state == "submitted" else "not submitted"] += 1
        except StopIteration:
            pass
        except dbus.DBusException as error:
            counts["error " + (error.get_dbus_name() or "?")] += 1
            if counts["error " + (error.get_dbus_name() or "?")] <= 2:
                print("soak: %s: %s" % (flow, error), file=sys.stderr)
        if path:
            try:
                call(path, harness.SESSION, "Close")
            except dbus.DBusException as error:
                counts["error " + (error.get_dbus_name() or "?")] += 1
    results.put((uid, dict(latencies), dict(counts)))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=float(os.environ.get("SOAK_SECONDS", "600")))
    parser.add_argument("--clients", type=int, default=int(os.environ.get("SOAK_CLIENTS", "16")))
    options = parser.parse_args()
    uids = [os.getuid()] + (harness.OTHER_UIDS if os.getuid() == 0 else [])
    print("soak: %d clients (uids %s) for %.0f s" % (options.clients, uids, options.seconds), flush=True)
    failures = []
    with harness.Flowd(configuration="[Limits]\nMaxSessionsPerUser=64\n") as flowd:
        root = flowd.connect()
        baseline_rss, baseline_fds = flowd.rss_kib(), flowd.fd_count()
        start = time.monotonic()
        deadline = start + options.seconds
        results = multiprocessing.Queue()
        workers = [multiprocessing.Process(target=client, args=(flowd.address, uids[i % len(uids)], i, deadline, results))
                   for i in range(options.clients)]
        for worker in workers:
            worker.start()
        samples = []
        while time.monotonic() < deadline:
            time.sleep(min(5.0, max(0.0, deadline - time.monotonic())))
            if not flowd.alive():
                failures.append("flowd died (exit %s)" % flowd.daemon.returncode)
                break
            samples.append((time.monotonic() - start, flowd.rss_kib(), flowd.fd_count()))
        latencies, counts = defaultdict(list), defaultdict(int)
        for _ in workers:
            try:
                _, lat, cnt = results.get(timeout=TIMEOUT + 30)
            except Exception:
                failures.append("a client did not report")
                continue
            for method, values in lat.items():
                latencies[method] += values
            for key, value in cnt.items():
                counts[key] += value
        for worker in workers:
            worker.join(timeout=30)
        try:
            flowd.ping(root)
        except dbus.DBusException as error:
            failures.append("flowd did not answer Ping at the end: %s" % error)
        final_fds = flowd.fd_count() if flowd.alive() else 0

        elapsed = time.monotonic() - start
        total = sum(len(v) for v in latencies.values())
        print("soak: %d calls in %.0f s (%.0f a second); flows: %s" % (
            total, elapsed, total / max(elapsed, 1), ", ".join("%s %d" % kv for kv in sorted(counts.items()))))
        print("soak: %-12s %8s %8s %8s %8s %8s  (ms)" % ("method", "calls", "p50", "p90", "p99", "max"))
        for method in sorted(latencies):
            p = harness.percentiles(latencies[method])
            print("soak: %-12s %8d %8.2f %8.2f %8.2f %8.1f" % (method, len(latencies[method]), p[50], p[90], p[99], p[100]))
        warm = [s for s in samples if s[0] >= options.seconds / 3]
        warm_rss = warm[0][1] if warm else baseline_rss
        peak_rss = max((s[1] for s in samples), default=baseline_rss)
        late_rss = max((s[1] for s in warm), default=peak_rss)
        print("soak: RSS %d KiB at the start, %d KiB after the warm-up, %d KiB at most; descriptors %d at the start, "
              "%d at most, %d at the end" % (baseline_rss, warm_rss, peak_rss, baseline_fds,
                                             max((s[2] for s in samples), default=0), final_fds))
        if counts.get("not submitted") or counts.get("stuck") or any(k.startswith("error") for k in counts):
            failures.append("not every flow went through: %s" % dict(counts))
        if late_rss > warm_rss * 1.25 + 32 * 1024:
            failures.append("RSS kept growing after the warm-up: %d KiB, then %d KiB" % (warm_rss, late_rss))
        if final_fds and final_fds > baseline_fds + 8:
            failures.append("descriptors grew from %d to %d" % (baseline_fds, final_fds))
    if failures:
        for failure in failures:
            print("soak: FAIL: " + failure)
        return 1
    print("soak: passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
