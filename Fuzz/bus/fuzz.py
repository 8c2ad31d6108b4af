#!/usr/bin/python3
"""The D-Bus fuzzer: hostile clients against the real flowd (docs/fuzzing.md).

flowd runs on a private bus as the system service would (harness.py). The
fuzzer asks it for its interfaces (Introspect, recursively), then clients of
several uids — root and, when this runs as root, the bus's other users —
call every method of every interface, and Get, GetAll and Set of every
property, on the Manager, on their own sessions, on other users' sessions
and on made-up paths, with arguments of the right signature but hostile
values (huge, empty, odd Unicode, every integer's bounds, NaN, deep
variants, unknown fields and options), of a wrong signature, or none. A
separate client keeps rewriting a flow file and calling Reload.

After each batch (a few seconds) flowd must answer Ping within 10 s; its
memory (VmRSS) and descriptors are sampled. At the end:

- every error that came back is documented: a name in docs/dbus-api.md's
  table, or org.freedesktop.DBus.Error.* (but never NoReply: a call flowd
  did not answer in 15 s is a hang);
- flowd is alive and answers;
- RSS after the warm-up (the first quarter) grew by at most a factor and a
  margin (below), and the descriptors by at most a few over the baseline.

Exit status 0 when all hold, 1 otherwise (with what broke).

    Fuzz/bus/fuzz.py [--seconds N] [--seed N] [--calls-per-batch N]
"""
import argparse
import multiprocessing
import os
import random
import shutil
import sys
import time
import xml.etree.ElementTree as ElementTree
from collections import Counter

import dbus

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402

PROPERTIES = "org.freedesktop.DBus.Properties"
INTROSPECTABLE = "org.freedesktop.DBus.Introspectable"
CALL_TIMEOUT = 15
FLOW_IDS = ["consultation", "survey", "registration", "onboarding", "support-request", "device-enrolment", "fuzz-extra"]
FIELD_IDS = ["name", "email", "day", "time", "topics", "notes", "password", "hostname", "username", "satisfaction",
             "x", "name.other", "", "a" * 300]
STEP_IDS = ["review", "complete", "contact", "when", "intro", "nowhere", ""]


# --- signatures and hostile values ------------------------------------------------------------

def split_types(signature):
    """The complete types of a signature: 'sa{sv}' -> ['s', 'a{sv}']."""
    types, i = [], 0
    while i < len(signature):
        end = complete_type_end(signature, i)
        types.append(signature[i:end])
        i = end
    return types


def complete_type_end(signature, i):
    code = signature[i]
    if code == "a":
        return complete_type_end(signature, i + 1)
    if code in "({":
        close = ")" if code == "(" else "}"
        depth, j = 0, i
        while j < len(signature):
            if signature[j] in "({":
                depth += 1
            elif signature[j] in ")}":
                depth -= 1
                if depth == 0:
                    return j + 1
            j += 1
        raise ValueError("unbalanced " + close)
    return i + 1


BASIC = "ybnqiuxtdsog"


def random_signature(rng, depth=0):
    """A random complete type."""
    roll = rng.random()
    if depth > 3 or roll < 0.55:
        return rng.choice(BASIC + "v")
    if roll < 0.7:
        return "a" + random_signature(rng, depth + 1)
    if roll < 0.85:
        return "a{" + rng.choice("sy") + random_signature(rng, depth + 1) + "}"
    return "(" + "".join(random_signature(rng, depth + 1) for _ in range(rng.randint(1, 3))) + ")"


def hostile_string(rng, context=None):
    pool = [
        "", " ", "x", "A" * rng.choice([63, 64, 65, 255, 4096, 4097, 70000]),
        "\u202eevil", "é" * 2049, "\U0001F600" * 100, "../../etc/passwd", "%s%n", "\ufeff",
        "pt-BR", "en", "zz-ZZ-x-private", "de_DE.UTF-8", "today", "2024-02-30", "99:99",
        "0123456789abcdef0123456789abcdef", "\t\n\r", "'; DROP TABLE sessions; --",
    ]
    pool += FLOW_IDS + FIELD_IDS + STEP_IDS
    if context:
        pool += context
    return rng.choice(pool)


def value_for(rng, code, state, depth=0, level=0):
    """A value of complete type `code`, as python-dbus wants it (`level` 1:
    to be sent as a variant)."""
    if code in "ybnqiuxtdsog" and len(code) == 1 and level:
        value = value_for(rng, code, state, depth)
        return type(value)(value, variant_level=level)
    if code == "y":
        return dbus.Byte(rng.choice([0, 1, 255, rng.randint(0, 255)]))
    if code == "b":
        return dbus.Boolean(rng.random() < 0.5)
    bounds = {"n": (-2**15, 2**15 - 1, dbus.Int16), "q": (0, 2**16 - 1, dbus.UInt16), "i": (-2**31, 2**31 - 1, dbus.Int32),
              "u": (0, 2**32 - 1, dbus.UInt32), "x": (-2**63, 2**63 - 1, dbus.Int64), "t": (0, 2**64 - 1, dbus.UInt64)}
    if code in bounds:
        low, high, kind = bounds[code]
        return kind(rng.choice([low, high, 0, 1, -1 if low < 0 else 2, 3, 5, 64, rng.randint(low, high)]))
    if code == "d":
        return dbus.Double(rng.choice([float("nan"), float("inf"), float("-inf"), -0.0, 1e308, 2.5, 3.0, -1.0]))
    if code == "s":
        return dbus.String(hostile_string(rng))
    if code == "o":
        return dbus.ObjectPath(rng.choice(["/", "/org/flowd/Flow1", "/org/flowd/Flow1/session/" + "%032x" % rng.getrandbits(128)]
                                          + state.get("paths", [])))
    if code == "g":
        return dbus.Signature(rng.choice(["", "s", "a{sv}", "v", "(ii)"]))
    if code == "v":
        inner = random_signature(rng, depth + 1) if depth < 6 else rng.choice(BASIC)
        return typed_variant(rng, inner, state, depth + 1)
    if code.startswith("a{"):
        key, value = split_types(code[2:-1])
        entries = {}
        for _ in range(count_within_budget(rng, state, [0, 1, 2, 5, 70])):
            k = value_for(rng, key, state, depth + 1)
            if key == "s" and rng.random() < 0.7:
                k = dbus.String(rng.choice(FIELD_IDS + ["locale", "prefill", "bogus"]))
            entries[k] = value_for(rng, value, state, depth + 1)
        return dbus.Dictionary(entries, signature=key + value, variant_level=level)
    if code.startswith("a"):
        element = code[1:]
        count = count_within_budget(rng, state, [0, 1, 3, 257, 1000] if depth < 3 else [0, 1, 2])
        return dbus.Array([value_for(rng, element, state, depth + 1) for _ in range(count)], signature=element,
                          variant_level=level)
    if code.startswith("("):
        return dbus.Struct([value_for(rng, t, state, depth + 1) for t in split_types(code[1:-1])], signature=code[1:-1],
                           variant_level=level)
    raise ValueError(code)


def count_within_budget(rng, state, choices):
    """How many elements a container gets: one of `choices`, within what is
    left of the call's budget (`state["budget"]` elements in all), so that
    nested containers cannot multiply into millions."""
    count = min(rng.choice(choices), state.get("budget", 2000))
    state["budget"] = state.get("budget", 2000) - count
    return max(0, count)


def typed_variant(rng, code, state, depth):
    """`value_for(code)` to be sent as a variant (python-dbus reads its type)."""
    return value_for(rng, code, state, depth, level=1)


# --- the interfaces, from Introspect -------------------------------------------------------------

def introspect(connection, path="/"):
    """{interface: {"methods": {name: signature}, "properties": {name: (type, access)}}} and the object paths."""
    xml = connection.call_blocking(harness.BUS_NAME, path, INTROSPECTABLE, "Introspect", "", (), timeout=CALL_TIMEOUT)
    node = ElementTree.fromstring(str(xml))
    interfaces, paths = {}, [path]
    for interface in node.findall("interface"):
        entry = interfaces.setdefault(interface.get("name"), {"methods": {}, "properties": {}})
        for method in interface.findall("method"):
            entry["methods"][method.get("name")] = "".join(a.get("type") for a in method.findall("arg")
                                                            if a.get("direction", "in") == "in")
        for prop in interface.findall("property"):
            entry["properties"][prop.get("name")] = (prop.get("type"), prop.get("access"))
    for child in node.findall("node"):
        name = child.get("name")
        if not name:
            continue
        sub = (path.rstrip("/") + "/" + name)
        more, sub_paths = introspect(connection, sub)
        for key, value in more.items():
            interfaces.setdefault(key, value)
        paths += sub_paths
    return interfaces, paths


# --- the clients ------------------------------------------------------------------------------

def client(address, uid, seed, deadline, interfaces, root_sessions, results, allowed):
    if uid != os.getuid():
        harness.as_user(uid)
    rng = random.Random(seed)
    connection = dbus.bus.BusConnection(address)
    state = {"paths": list(root_sessions)}
    stats, violations = Counter(), []
    calls = [(interface, method, signature) for interface, entry in sorted(interfaces.items())
             for method, signature in sorted(entry["methods"].items())]
    properties = [(interface, name, spec) for interface, entry in sorted(interfaces.items())
                  for name, spec in sorted(entry["properties"].items())]
    while time.monotonic() < deadline:
        interface, method, signature = rng.choice(calls)
        session_interface = interface == harness.SESSION or (interface in (PROPERTIES, INTROSPECTABLE) and rng.random() < 0.6)
        path = harness.MANAGER_PATH
        if session_interface or interface == harness.SESSION:
            path = rng.choice(state["paths"] + [harness.MANAGER_PATH + "/session/" + "%032x" % rng.getrandbits(128)]) \
                if state["paths"] else harness.MANAGER_PATH
        try:
            path, signature, args = prepare(rng, interface, method, signature, path, state, properties)
        except Exception:
            stats["client-side"] += 1
            continue
        try:
            reply = connection.call_blocking(harness.BUS_NAME, path, interface, method, signature, args,
                                             timeout=CALL_TIMEOUT)
            stats["ok"] += 1
            if method == "StartSession" and isinstance(reply, dbus.ObjectPath):
                state["paths"].append(str(reply))
                state["paths"] = state["paths"][-40:]
        except dbus.DBusException as error:
            name = error.get_dbus_name() or "?"
            stats[name] += 1
            documented = name in allowed or (name.startswith("org.freedesktop.DBus.Error.")
                                             and name != "org.freedesktop.DBus.Error.NoReply")
            if not documented and len(violations) < 20:
                violations.append("uid %d %s.%s(%s) on %s: %s: %s" % (
                    uid, interface, method, signature, path, name, str(error)[:200]))
        except (TypeError, ValueError, OverflowError, UnicodeError):
            stats["client-side"] += 1
    results.put((uid, dict(stats), violations))


def prepare(rng, interface, method, signature, path, state, properties):
    """The path, signature and arguments of one call."""
    state["budget"] = 2000
    if interface == PROPERTIES and properties and rng.random() < 0.8:
        owner, name, (ptype, _) = rng.choice(properties)
        owner = owner if rng.random() < 0.9 else hostile_string(rng)
        name = name if rng.random() < 0.9 else hostile_string(rng)
        if method == "Get":
            return path, signature, (owner, name)
        if method == "GetAll":
            return path, signature, (owner,)
        return path, signature, (owner, name, typed_variant(rng, ptype if rng.random() < 0.5 else random_signature(rng),
                                                             state, 0))
    roll = rng.random()
    if roll < 0.15:
        signature = "".join(random_signature(rng) for _ in range(rng.randint(0, 3)))
    elif roll < 0.2:
        signature = ""
    args = tuple(value_for(rng, t, state) for t in split_types(signature))
    if method == "StartSession" and signature == "sa{sv}" and rng.random() < 0.6:
        args = (dbus.String(rng.choice(FLOW_IDS)), args[1])
    return path, signature, args


def reloader(address, flows_dir, deadline, results):
    """Rewrites a flow file and calls Reload, again and again."""
    connection = dbus.bus.BusConnection(address)
    extra = os.path.join(flows_dir, "fuzz-extra.json")
    count, errors = 0, Counter()
    while time.monotonic() < deadline:
        if count % 3 == 0:
            with open(extra, "w") as f:
                f.write('{"format": 1, "id": "fuzz-extra", "title": "Extra %d", "steps": [{"id": "s", "title": "S", '
                        '"fields": [{"id": "x", "type": "%s", "label": "X"}]}]}' % (count, ["text", "number"][count % 2]))
        elif count % 3 == 1 and os.path.exists(extra):
            os.remove(extra)
        try:
            connection.call_blocking(harness.BUS_NAME, harness.MANAGER_PATH, harness.MANAGER, "Reload", "", (),
                                     timeout=CALL_TIMEOUT)
        except dbus.DBusException as error:
            errors[error.get_dbus_name()] += 1
        count += 1
        time.sleep(0.05)
    results.put(("reload", {"reloads": count, **errors}, []))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=float(os.environ.get("FUZZ_BUS_SECONDS", "600")))
    parser.add_argument("--seed", type=int, default=int(os.environ.get("FUZZ_BUS_SEED", str(int(time.time())))))
    parser.add_argument("--batch-seconds", type=float, default=5.0)
    options = parser.parse_args()

    allowed = harness.documented_error_names()
    flows = os.path.join(harness.tempfile.mkdtemp(prefix="flowd-busfuzz-flows."))
    for name in os.listdir(os.path.join(harness.ROOT, "flows")):
        shutil.copyfile(os.path.join(harness.ROOT, "flows", name), os.path.join(flows, name))
    os.chmod(flows, 0o755)
    uids = [os.getuid()] + (harness.OTHER_UIDS if os.getuid() == 0 else [])
    configuration = "[Limits]\nMaxSessionsPerUser=32\nMaxSessions=400\n[Plugins]\nCallTimeout=3s\n"
    print("busfuzz: seed %d, %.0f s, uids %s" % (options.seed, options.seconds, uids), flush=True)
    failures = []
    with harness.Flowd(configuration=configuration, flows_dir=flows) as flowd:
        root = flowd.connect()
        # A few of root's sessions, so that session objects exist to introspect and to attack.
        sessions = [str(root.call_blocking(harness.BUS_NAME, harness.MANAGER_PATH, harness.MANAGER, "StartSession",
                                           "sa{sv}", (flow, {}), timeout=CALL_TIMEOUT))
                    for flow in ("survey", "registration", "onboarding")]
        interfaces, paths = introspect(root)
        # Sessions are not listed under their node (another user must not
        # learn their ids): introspect root's own.
        for path in sessions:
            more, _ = introspect(root, path)
            for key, value in more.items():
                interfaces.setdefault(key, value)
            paths.append(path)
        methods = sum(len(entry["methods"]) for entry in interfaces.values())
        print("busfuzz: %d interfaces, %d methods, %d properties on %d objects" % (
            len(interfaces), methods, sum(len(e["properties"]) for e in interfaces.values()), len(paths)), flush=True)

        start = time.monotonic()
        deadline = start + options.seconds
        results = multiprocessing.Queue()
        workers = [multiprocessing.Process(target=client, args=(flowd.address, uid, options.seed + i, deadline, interfaces,
                                                                  sessions, results, allowed))
                   for i, uid in enumerate(uids * 2)]
        workers.append(multiprocessing.Process(target=reloader, args=(flowd.address, flows, deadline, results)))
        baseline_fds = flowd.fd_count()
        for worker in workers:
            worker.start()
        samples, warm_rss = [], None
        while time.monotonic() < deadline:
            time.sleep(min(options.batch_seconds, max(0.0, deadline - time.monotonic())))
            if not flowd.alive():
                failures.append("flowd died (exit %s)" % flowd.daemon.returncode)
                break
            try:
                flowd.ping(root, timeout=10)
            except dbus.DBusException as error:
                failures.append("flowd did not answer Ping after %.0f s: %s" % (time.monotonic() - start, error))
                break
            rss, fds = flowd.rss_kib(), flowd.fd_count()
            samples.append((time.monotonic() - start, rss, fds))
            if warm_rss is None and time.monotonic() - start >= options.seconds / 4:
                warm_rss = max(s[1] for s in samples)
        totals, violations = Counter(), []
        for _ in workers:
            try:
                who, stats, bad = results.get(timeout=20)
            except Exception:
                failures.append("a client did not report")
                continue
            totals.update(stats)
            violations += bad
        for worker in workers:
            worker.join(timeout=30)
        if flowd.alive():
            try:
                flowd.ping(root, timeout=10)
            except dbus.DBusException as error:
                failures.append("flowd did not answer Ping at the end: %s" % error)
            final_fds = flowd.fd_count()
        else:
            failures.append("flowd died (exit %s); its log ends:\n%s" % (flowd.daemon.returncode, flowd.log_text()[-3000:]))
            final_fds = 0

        calls = sum(v for k, v in totals.items() if k not in ("client-side", "reloads"))
        peak_rss = max((s[1] for s in samples), default=0)
        peak_fds = max((s[2] for s in samples), default=0)
        warm = warm_rss or peak_rss
        print("busfuzz: %d calls (%d refused before sending), %d reloads, in %.0f s" % (
            calls, totals["client-side"], totals["reloads"], time.monotonic() - start))
        for name, count in totals.most_common():
            if name not in ("client-side", "reloads"):
                print("busfuzz:   %7d  %s" % (count, name))
        print("busfuzz: RSS %d KiB after the warm-up, %d KiB at most; descriptors %d before, %d at most, %d after" % (
            warm, peak_rss, baseline_fds, peak_fds, final_fds))
        for violation in violations:
            failures.append("an undocumented error: " + violation)
        # Bounded: later batches may not keep growing. (Sessions accumulate
        # up to the configured limits, so some growth is expected.)
        if peak_rss > 2 * warm + 64 * 1024:
            failures.append("RSS grew from %d KiB after the warm-up to %d KiB" % (warm, peak_rss))
        if final_fds and final_fds > baseline_fds + 8:
            failures.append("descriptors grew from %d to %d after the clients left" % (baseline_fds, final_fds))
    shutil.rmtree(flows, ignore_errors=True)
    if failures:
        for failure in failures:
            print("busfuzz: FAIL: " + failure)
        return 1
    print("busfuzz: every error was documented, flowd answered throughout, memory and descriptors bounded")
    return 0


if __name__ == "__main__":
    sys.exit(main())
