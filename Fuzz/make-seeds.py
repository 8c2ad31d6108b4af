#!/usr/bin/env python3
"""Writes the seed corpus of each fuzz target into Fuzz/corpus/<target>/.

The seeds are small inputs that reach the interesting code at once: real
flow files, configuration files, D-Bus bodies, a session driven to
submitted. libFuzzer grows the working corpus from them (in .build/fuzz/);
inputs that once found a bug are kept next to them (named regression-*) by
hand. Run from the repository root; it only adds or replaces seed-* files.
"""
import os
import struct

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CORPUS = os.path.join(ROOT, "Fuzz", "corpus")


def write(target, name, data):
    directory = os.path.join(CORPUS, target)
    os.makedirs(directory, exist_ok=True)
    if isinstance(data, str):
        data = data.encode()
    with open(os.path.join(directory, "seed-" + name), "wb") as f:
        f.write(data)


def choice(index):
    """What FuzzInput.below(n) reads as `index` (two bytes, big-endian)."""
    return bytes([index >> 8, index & 0xFF])


def string(text, limit):
    """What FuzzInput.string(limit:) reads back as `text`."""
    raw = text.encode()
    assert len(raw) <= limit
    return choice(len(raw)) + raw


# --- fuzz-json and fuzz-flow: JSON documents and the example flows ---------------------
for name, text in {
    "empty-object": "{}",
    "nested": '{"a": [1, -2.5e3, true, null, {"b": "\\u00e9\\n\\ud83d\\ude00"}], "c": ""}',
    "numbers": "[0, -0, 9223372036854775807, -9223372036854775808, 1e308, 1.5, 123456789012345678901234567890]",
    "duplicate-keys": '{"id": 1, "id": 2}',
    "bom": "\ufeff[\"x\"]",
}.items():
    write("json", name, text)
for flow in sorted(os.listdir(os.path.join(ROOT, "flows"))):
    with open(os.path.join(ROOT, "flows", flow), "rb") as f:
        data = f.read()
    write("flow", flow, data)
    if flow in ("survey.json", "consultation.json"):
        write("json", flow, data)
write("flow", "minimal.json", '{"format": 1, "id": "m", "title": "M", "steps": [{"id": "s", "title": "S", '
      '"fields": [{"id": "x", "type": "text", "label": "X", "pattern": "[a-z]+"}]}]}')
write("flow", "bad-type.json", '{"format": 1, "id": "b", "title": "B", "steps": [{"id": "s", "title": "S", '
      '"fields": [{"id": "x", "type": "emial", "label": "X"}]}]}')

# --- fuzz-pattern: a pattern, then a value -----------------------------------------------
for index, (pattern, value) in enumerate([
    ("[a-z][a-z0-9_-]*", "ada_1"),
    ("\\d{3}-\\d{4}", "555-1234"),
    ("(a|b)*c?", "ababc"),
    ("(?:x{2,5}|y+)\\.\\w\\s\\S", "xxx.a b"),
    ("[^\\]\\-]{1,3}$", "abc"),
    ("^.*\\/[A-Z]{2}\\$", "path/AB$"),
    ("(a{1000}){1000}", "a"),
    ("[a-z", "a"),
]):
    write("pattern", "p%d" % index, string(pattern, 200) + value.encode())

# --- fuzz-config: a mode byte (even: a file, odd: a command line), then text ----------------
write("config", "file", b"\x00" + b"""[Daemon]
Bus=system
FlowsDirectory=
FlowsDirectory=/etc/flowd/flows
PluginDirectory=/usr/lib/flowd/plugins
StateDirectory=/var/lib/flowd
Durability=power
Verbose=yes

[Limits]
MaxStringLength=4096
MaxAnswersPerCall=64
MaxListLength=256
MaxSessionsPerUser=64
MaxSessions=50000
IdleTimeout=7d

[Plugins]
CallTimeout=5s
Disable=webhook flowd.command
""")
write("config", "address", b"\x00[Daemon]\nBus=unix:path=/run/x,guid=0123\n; comment\n#x\n")
write("config", "bad", b"\x00[Daemon\nKey\n")
write("config", "argv", b"\x01--system\x00--state-dir\x00/var/lib/flowd\x00--plugin-dir=/x\x00--verbose")
write("config", "argv-bad", b"\x01--address\x00unix:path\x00--bogus")


# --- fuzz-dbus-args: raw (even mode byte): signature then body; built (odd): generator bytes --
def pad(buf, n):
    return buf + b"\x00" * (-len(buf) % n)


def s(buf, text):
    buf = pad(buf, 4)
    raw = text.encode()
    return buf + struct.pack("<I", len(raw)) + raw + b"\x00"


def variant(buf, sig, value):
    buf += bytes([len(sig)]) + sig.encode() + b"\x00"
    if sig == "s":
        return s(buf, value)
    if sig == "i":
        return pad(buf, 4) + struct.pack("<i", value)
    if sig == "b":
        return pad(buf, 4) + struct.pack("<I", 1 if value else 0)
    if sig == "x":
        return pad(buf, 8) + struct.pack("<q", value)
    if sig == "d":
        return pad(buf, 8) + struct.pack("<d", value)
    if sig == "as":
        buf = pad(buf, 4)
        items = b""
        for item in value:
            items = s(items, item)
        return buf + struct.pack("<I", len(items)) + items
    raise ValueError(sig)


def asv(entries):
    """An a{sv} body (the array starts at offset 0 of the body)."""
    content = b""
    for key, sig, value in entries:
        content = pad(content, 8)
        content = s(content, key)
        content = variant(content, sig, value)
    # The array length counts from the first element, which is 8-aligned (offset 8).
    return struct.pack("<I", len(content)) + b"\x00" * 4 + content


write("dbus-args", "set-answers", b"\x00" + string("a{sv}", 40) + asv([
    ("name", "s", "Ada"), ("stars", "i", 4), ("terms", "b", True), ("big", "x", 2**40),
    ("ratio", "d", 0.5), ("topics", "as", ["a", "b"]),
]))
write("dbus-args", "start-options", b"\x00" + string("a{sv}", 40) + asv([("locale", "s", "pt-BR")]))
write("dbus-args", "wrong-type", b"\x00" + string("a{sv}", 40) + asv([("n", "d", float("inf"))]))
write("dbus-args", "string", b"\x00" + string("s", 40) + struct.pack("<I", 3) + b"abc\x00")
write("dbus-args", "built", b"\x01" + bytes(range(64)))

# --- fuzz-session: a happy path to submitted ------------------------------------------------
# The calls as SessionFuzz reads them: choice(op), then each call's choices.
TEXTS = ["", "A", "Ada Lovelace", "ada@example.org", "not an email", "train", "plane", "window", "wifi", "meal",
         "2024-06-01", "2024-05-31", "2023-02-29", "correct horse", "x\0y", "z" * 5000]
FIELDS = ["name", "email", "mode", "mode.other", "seat", "bags", "extras", "day", "terms", "password", "confirm",
          "nope"]


def set_text(pairs):
    out = choice(0) + choice(len(pairs) - 1)
    for field, text in pairs:
        out += choice(FIELDS.index(field)) + choice(0) + choice(TEXTS.index(text))
    return out


def set_toggle(field):
    return choice(0) + choice(0) + choice(FIELDS.index(field)) + choice(3) + b"\x01"


CONTINUE = choice(2)
happy = (choice(0)  # locale en
         + CONTINUE  # welcome
         + set_text([("name", "Ada Lovelace"), ("email", "ada@example.org")]) + CONTINUE
         + set_text([("mode", "train")]) + CONTINUE
         + set_toggle("terms") + set_text([("day", "2024-06-01")]) + CONTINUE
         + set_text([("password", "correct horse"), ("confirm", "correct horse")]) + CONTINUE
         + CONTINUE)  # Review: submit
write("session", "happy-path", happy + choice(7))  # it succeeds
# A restart while submitting: the secure answers are gone, so the submit that
# follows goes back to their step; entered again, Continue returns to Review.
write("session", "restart", happy + choice(10) + choice(6)
      + set_text([("password", "correct horse"), ("confirm", "correct horse")]) + CONTINUE
      + choice(6) + choice(8) + choice(0) + choice(6) + choice(7))
write("session", "back-and-forth", choice(1) + CONTINUE + choice(4) + CONTINUE
      + set_text([("name", "A")]) + CONTINUE + choice(4) + choice(5) + choice(3) + choice(6))
