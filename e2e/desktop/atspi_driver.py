"""Drives flowd-gtk through AT-SPI, the way a screen reader or a person with
a keyboard would: finds widgets by role and accessible name, clicks them,
types into them, reads their text, names, descriptions and states, presses
keys, and takes screenshots of the X display.

Needs a running X server (DISPLAY), a session bus with the accessibility bus
(dbus-run-session starts both on demand) and Debian's python3-pyatspi.
Every wait polls with a generous limit and fails with a sentence saying
what did not appear; no test asserts on how long anything took.
"""
import os
import subprocess
import time

import pyatspi

# X keysyms of the keys the suite presses (X11/keysymdef.h).
KEYSYMS = {
    "Return": 0xFF0D, "Escape": 0xFF1B, "Tab": 0xFF09, "Left": 0xFF51, "Right": 0xFF53,
    "Up": 0xFF52, "Down": 0xFF54, "space": 0x20, "BackSpace": 0xFF08,
}
# X modifier masks (X11/X.h): Alt is Mod1.
MODIFIER_MASKS = {"shift": 1 << 0, "control": 1 << 2, "alt": 1 << 3}

WAIT = float(os.environ.get("FLOWD_GTK_E2E_WAIT", "20"))


class Failure(AssertionError):
    """A check that did not hold, in a sentence."""


def wait_until(predicate, what, timeout=WAIT):
    """Polls `predicate` until it returns something truthy; fails with `what`."""
    end = time.monotonic() + timeout
    last_error = None
    while time.monotonic() < end:
        try:
            value = predicate()
            if value:
                return value
        except Exception as error:  # the tree changes under us while a page slides
            last_error = error
        time.sleep(0.1)
    raise Failure(f"gave up waiting for {what}" + (f" (last error: {last_error})" if last_error else ""))


def states(acc):
    return {pyatspi.stateToString(s) for s in acc.getState().getStates()}


def is_showing(acc):
    # GTK 4.8 marks only windows "showing"; "visible" follows the widget's visibility.
    s = states(acc)
    return "visible" in s and "defunct" not in s


def is_sensitive(acc):
    return "sensitive" in states(acc)


def text_of(acc):
    """The text of a label or an input (the Text interface), else its name."""
    try:
        t = acc.queryText()
        return t.getText(0, t.characterCount)
    except NotImplementedError:
        return acc.name


class App:
    """One flowd-gtk process, its accessible tree and its output (the `screen:` lines)."""

    def __init__(self, binary, args, log_path, shots_dir, env=None):
        self.log_path = log_path
        self.shots_dir = shots_dir
        self._screens_seen = 0
        full_env = dict(os.environ)
        full_env.update(env or {})
        self.log = open(log_path, "w")
        self.process = subprocess.Popen([binary] + args, stdout=self.log, stderr=subprocess.STDOUT, env=full_env)
        self.root = wait_until(self._find_application, f"flowd-gtk (pid {self.process.pid}) on the accessibility bus")

    def _find_application(self):
        if self.process.poll() is not None:
            raise Failure(f"flowd-gtk exited with status {self.process.returncode}: {self.output()}")
        desktop = pyatspi.Registry.getDesktop(0)
        for i in range(desktop.childCount):
            try:
                app = desktop.getChildAtIndex(i)
                if app is not None and app.name == "flowd-gtk" and app.get_process_id() == self.process.pid:
                    return app
            except Exception:
                continue  # an application that just went away (the previous test's)
        return None

    # --- the process ---------------------------------------------------------------------------

    def output(self):
        with open(self.log_path) as f:
            return f.read()

    def lines(self, prefix):
        return [l[len(prefix):] for l in self.output().splitlines() if l.startswith(prefix)]

    def wait_screen(self, identity):
        """Waits for the window to show the screen `identity` (`step:contact`, `review`,
        `start`; the `screen:` lines of FLOWD_GTK_TRACE=1) after the screens already
        waited for; returns the transition it used (`slide-forward`, `slide-back`,
        `crossfade`, `none`)."""
        def found():
            shown = self.lines("screen: ")
            for index in range(self._screens_seen, len(shown)):
                name, _, transition = shown[index].partition(" ")
                if name == identity:
                    self._screens_seen = index + 1
                    return transition
            return None
        return wait_until(found, f"the screen '{identity}' (shown: {self.lines('screen: ')})")

    def wait_exit(self):
        wait_until(lambda: self.process.poll() is not None, "flowd-gtk to exit")
        return self.process.returncode

    def stop(self):
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.log.close()

    # --- finding -------------------------------------------------------------------------------

    def all(self, role, name=None, showing=True):
        """Every accessible of `role` (AT-SPI role name: "push button", "text", "label"),
        named `name` when given, and on screen when `showing`."""
        found = []

        def walk(acc, depth):
            if acc is None or depth > 60:
                return
            try:
                if acc.getRoleName() == role and (name is None or acc.name == name):
                    if not showing or is_showing(acc):
                        found.append(acc)
                for i in range(acc.childCount):
                    walk(acc.getChildAtIndex(i), depth + 1)
            except Exception:
                return

        walk(self.root, 0)
        return found

    def find(self, role, name=None, showing=True, timeout=WAIT):
        """The first accessible of `role` named `name`; waits for it to appear."""
        what = f"a {role}" + (f" named '{name}'" if name is not None else "")
        return wait_until(lambda: (self.all(role, name, showing) or [None])[0], what, timeout)

    def one(self, role, name):
        """The only accessible of `role` named `name` on screen; waits while a page that
        slid out still holds one of the same name (its transition is running)."""
        def single():
            found = self.all(role, name)
            return found[0] if len(found) == 1 else None
        return wait_until(single, f"exactly one {role} named '{name}' (found {len(self.all(role, name))})")

    def press(self, role, name):
        """Clicks the only `role` named `name` on screen. A page that slid out can leave
        an object that vanishes between finding and clicking it: then it looks again."""
        def attempt():
            acc = self.one(role, name)
            try:
                self.click(acc)
            except Failure:
                raise
            except Exception as error:  # the object went away with its page
                raise RuntimeError(f"the {role} '{name}' went away: {error}")
            return True
        wait_until(attempt, f"a click on the {role} '{name}'")

    def gone(self, role, name):
        """Waits until no accessible of `role` named `name` is on screen."""
        wait_until(lambda: not self.all(role, name), f"the {role} '{name}' to disappear")

    def label_containing(self, text):
        """A label on screen whose text contains `text`."""
        return wait_until(
            lambda: next((l for l in self.all("label") if text in text_of(l)), None), f"a label containing '{text}'")

    def focused(self):
        """The accessible that has the keyboard focus, or None."""
        hits = []

        def walk(acc, depth):
            if acc is None or depth > 60 or hits:
                return
            try:
                if "focused" in states(acc):
                    hits.append(acc)
                    return
                for i in range(acc.childCount):
                    walk(acc.getChildAtIndex(i), depth + 1)
            except Exception:
                return

        walk(self.root, 0)
        return hits[0] if hits else None

    def wait_typing_reaches(self, role, name, key="x"):
        """Types one key and waits for it to arrive at the end of the input `role` named
        `name`: the keyboard focus is in that field (an entry row's text input has no
        accessible focus of its own in GTK 4.8, so its focus cannot be read)."""
        acc = self.find(role, name)
        before = text_of(acc)
        self.key(key)

        def arrived():
            # At the end of the text, or in place of it when the focus selected it all.
            text = text_of(self.find(role, name))
            return text != before and text.endswith(key)
        wait_until(arrived, f"a key typed to reach the {role} '{name}' (it holds {text_of(self.find(role, name))!r})")

    def wait_focus(self, role, name):
        def check():
            f = self.focused()
            return f is not None and f.getRoleName() == role and f.name == name
        wait_until(check, f"the focus on the {role} '{name}' (it is on {self._describe(self.focused())})")

    @staticmethod
    def _describe(acc):
        return "nothing" if acc is None else f"{acc.getRoleName()} '{acc.name}'"

    # --- acting --------------------------------------------------------------------------------

    def click(self, acc):
        """Runs the widget's default action (click, toggle, activate) like a pointer click."""
        if not is_sensitive(acc):
            raise Failure(f"the {acc.getRoleName()} '{acc.name}' is dimmed and cannot be clicked")
        action = acc.queryAction()
        names = [action.getName(i) for i in range(action.nActions)]
        for preferred in ("click", "toggle", "activate", "press"):
            if preferred in names:
                action.doAction(names.index(preferred))
                return
        self.click_at(acc)

    # The part of the window pages are drawn in (below the header bar), in window coordinates.
    VIEW_TOP = 60
    VIEW_BOTTOM = 740
    MARGIN_X = 30

    def reveal(self, acc):
        """Scrolls the page with the mouse wheel until `acc` is on screen."""
        component = acc.queryComponent()
        for _ in range(300):
            box = component.getExtents(pyatspi.WINDOW_COORDS)
            if box.y < self.VIEW_TOP:
                button = "b4c"  # wheel up
            elif box.y + box.height > self.VIEW_BOTTOM:
                button = "b5c"  # wheel down
            else:
                return box
            # In the page's margin, outside the column: the wheel scrolls the page,
            # not a text view inside it.
            for _ in range(3):
                pyatspi.Registry.generateMouseEvent(self.MARGIN_X, 400, button)
            time.sleep(0.1)
        raise Failure(f"could not scroll the {acc.getRoleName()} '{acc.name}' into view")

    def click_at(self, acc):
        """A real pointer click in the middle of `acc`, scrolled into view first. For
        the widgets GTK 4.8 gives no AT-SPI action (check and radio buttons, rows), and
        the way to move the focus (it has no AT-SPI grabFocus either). The window sits at
        the screen's origin: Xvfb runs no window manager."""
        box = self.reveal(acc)
        if box.width <= 0 or box.height <= 0:
            raise Failure(f"the {acc.getRoleName()} '{acc.name}' has no area on screen")
        pyatspi.Registry.generateMouseEvent(box.x + box.width // 2, box.y + box.height // 2, "b1c")
        time.sleep(0.05)

    def key(self, name, modifiers=()):
        """Presses a key by its X keysym name ("Return", "Escape", "Left", "Tab", "space",
        or a lowercase letter), with modifiers held ("alt", "control", "shift")."""
        mask = 0
        for m in modifiers:
            mask |= MODIFIER_MASKS[m]
        if mask:
            pyatspi.Registry.generateKeyboardEvent(mask, None, pyatspi.KEY_LOCKMODIFIERS)
        try:
            pyatspi.Registry.generateKeyboardEvent(KEYSYMS.get(name) or ord(name), None, pyatspi.KEY_SYM)
        finally:
            if mask:
                pyatspi.Registry.generateKeyboardEvent(mask, None, pyatspi.KEY_UNLOCKMODIFIERS)
        time.sleep(0.05)

    def type(self, acc, text):
        """Types `text` at the end of the input `acc` (the EditableText interface: GTK
        sees an edit, as from the keyboard, whether or not the input is scrolled into view)."""
        editable = acc.queryEditableText()
        length = acc.queryText().characterCount
        if not editable.insertText(length, text, len(text)):
            raise Failure(f"the {acc.getRoleName()} '{acc.name}' refused the text")

    def set_text(self, acc, text):
        """Replaces the text of the input `acc`."""
        if not acc.queryEditableText().setTextContents(text):
            raise Failure(f"the {acc.getRoleName()} '{acc.name}' refused the text")

    def screenshot(self, name):
        """The whole X screen as `<shots>/<name>.png`."""
        os.makedirs(self.shots_dir, exist_ok=True)
        path = os.path.join(self.shots_dir, name + ".png")
        subprocess.run(["import", "-window", "root", path], check=True)
        return path
