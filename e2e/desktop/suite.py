#!/usr/bin/python3
"""The desktop client's end-to-end suite: flowd-gtk in a real X server (Xvfb),
wired to the real flowd on the suite's private session bus, driven through
AT-SPI only. It drives every shipped flow to submission through the window,
with the seed behaviours on the way (e2e/desktop/README.md).

Usage (run.sh sets up the X server and the buses):
    suite.py --bin BUILD_BIN_DIR --shots DIR [--only NAME]...
Prints one line per test ("ok - name" / "not ok - name: reason") and exits 1
when any failed. Screenshots go to DIR; the programs' output to DIR/logs.
"""
import argparse
import datetime
import glob
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
from atspi_driver import App, Failure, is_sensitive, states, text_of, wait_until  # noqa: E402

TESTS = []


def test(function):
    TESTS.append(function)
    return function


def check(condition, message):
    if not condition:
        raise Failure(message)


# --- flowd, its plugins, the webhook receiver, flowctl ------------------------------------------

class Listener:
    """The web hook receiver support-request submits to (e2e/system's listener, on a
    free loopback port): `fail_once()` makes the next request fail with 503, `hold()`
    keeps requests waiting until `release()`."""

    def __init__(self, work, log):
        self.dir = os.path.join(work, "http")
        os.makedirs(self.dir)
        script = os.path.join(ROOT, "e2e", "system", "fixtures", "http-listener.pl")
        self.process = subprocess.Popen(["/usr/bin/perl", script, "0", self.dir, "3600"], stdout=log, stderr=log)
        ready = os.path.join(self.dir, "ready")
        wait_until(lambda: os.path.exists(ready), "the web hook receiver to listen")
        self.port = int(open(ready).read().split()[1])

    def requests(self):
        return len(glob.glob(os.path.join(self.dir, "request-*")))

    def fail_once(self):
        open(os.path.join(self.dir, "fail"), "w").close()

    def hold(self):
        open(os.path.join(self.dir, "hold"), "w").close()

    def release(self):
        try:
            os.remove(os.path.join(self.dir, "hold"))
        except FileNotFoundError:
            pass

    def stop(self):
        self.release()
        self.process.terminate()
        self.process.wait()


class Flowd:
    """The real flowd on the suite's session bus (the one dbus-run-session made, where
    flowd-gtk and flowctl look by default), with copies of the shipped flows and the
    test flows, the shipped plugins, and a state directory of its own."""

    def __init__(self, bin_dir, work, log_dir, webhook_port):
        self.bin_dir = bin_dir
        self.flows = os.path.join(work, "flows")
        self.plugins = os.path.join(work, "plugins")
        self.state = os.path.join(work, "state")
        self.log_dir = log_dir
        self.starts = 0
        self.process = None
        os.makedirs(self.flows)
        os.makedirs(self.plugins)
        for path in glob.glob(os.path.join(ROOT, "flows", "*.json")):
            text = open(path).read()
            # support-request posts to the receiver on its free port instead of 8080.
            text = text.replace("http://127.0.0.1:8080/", f"http://127.0.0.1:{webhook_port}/")
            open(os.path.join(self.flows, os.path.basename(path)), "w").write(text)
        for path in glob.glob(os.path.join(HERE, "flows", "*.json")):
            shutil.copy(path, self.flows)
        # The shipped plugins under their installed names, not writable by others (the loader checks).
        for plugin in ("Spool", "Command", "Webhook", "Validators", "Providers"):
            target = os.path.join(self.plugins, plugin.lower() + ".so")
            shutil.copy(os.path.join(bin_dir, f"lib{plugin}Plugin.so"), target)
            os.chmod(target, 0o755)
        self.start()

    def start(self):
        self.starts += 1
        self.log = open(os.path.join(self.log_dir, f"flowd-{self.starts}.log"), "w")
        self.process = subprocess.Popen(
            [os.path.join(self.bin_dir, "flowd"), "--flows-dir", self.flows, "--plugin-dir", self.plugins,
             "--state-dir", self.state], stdout=self.log, stderr=self.log)
        wait_until(lambda: self.process.poll() is None and flowctl_ok(self.bin_dir, "flows"),
                   "flowd to serve on the session bus")

    def stop(self):
        if self.process and self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            self.process.wait(timeout=30)
        self.log.close()

    def restart(self):
        self.stop()
        self.start()


def flowctl_ok(bin_dir, *args):
    return subprocess.run([os.path.join(bin_dir, "flowctl"), *args], capture_output=True).returncode == 0


class Context:
    def __init__(self, args):
        self.bin = args.bin
        self.binary = os.path.join(args.bin, "flowd-gtk")
        self.shots = args.shots
        self.logs = os.path.join(args.shots, "logs")
        os.makedirs(self.logs, exist_ok=True)
        self.work = tempfile.mkdtemp(prefix="flowd-gtk-suite.")
        self.listener_log = open(os.path.join(self.logs, "listener.log"), "w")
        self.listener = Listener(self.work, self.listener_log)
        self.flowd = Flowd(args.bin, self.work, self.logs, self.listener.port)
        self.apps = []

    def open(self, name, *arguments, env=None):
        """flowd-gtk with `arguments` (a flow, --resume ID, --locale ...), tracing its screens
        (FLOWD_GTK_TRACE=1); English unless `arguments` or `env` say otherwise."""
        full_env = {"FLOWD_GTK_TRACE": "1", "LC_ALL": "", "LC_MESSAGES": "", "LANG": "C.UTF-8"}
        full_env.update(env or {})
        app = App(self.binary, list(arguments), os.path.join(self.logs, name + ".log"), self.shots, full_env)
        self.apps.append(app)
        return app

    def close_all(self):
        for app in self.apps:
            app.stop()
        self.apps = []
        self.listener.release()

    def shutdown(self):
        self.close_all()
        self.flowd.stop()
        self.listener.stop()
        self.listener_log.close()
        shutil.rmtree(self.work, ignore_errors=True)

    # --- flowctl, the second client ---

    def flowctl(self, *args, check_status=True):
        result = subprocess.run([os.path.join(self.bin, "flowctl"), *args], capture_output=True, text=True)
        if check_status and result.returncode != 0:
            raise Failure(f"flowctl {' '.join(args)} failed ({result.returncode}): {result.stderr.strip()}")
        return result

    def json(self, *args):
        return json.loads(self.flowctl(*args, "--json").stdout)

    def sessions(self, flow=None, state=None):
        return [s for s in self.json("sessions")
                if (flow is None or s["flow"] == flow) and (state is None or s["state"] == state)]

    def only_session(self, flow):
        """The one unsettled session of `flow` (a test closes the others)."""
        found = wait_until(lambda: [s for s in self.sessions(flow) if s["state"] != "submitted"],
                           f"a session of {flow}")
        check(len(found) == 1, f"expected one open session of {flow}, found {found}")
        return found[0]["id"]

    def state(self, session):
        return self.json("show", session)["state"]

    def close_sessions(self):
        for s in self.sessions():
            self.flowctl("close", s["id"], check_status=False)


# --- driving the window ------------------------------------------------------------------------

def choose(app, label):
    """Chooses the option `label`: a chip (a toggle button), or a row's radio or check button."""
    def attempt():
        for role in ("radio button", "check box", "toggle button", "push button"):
            found = app.all(role, label)
            if len(found) == 1:
                if role in ("radio button", "check box"):
                    app.click_at(found[0])
                else:
                    app.click(found[0])
                return True
        return False
    wait_until(attempt, f"an option '{label}' to choose")


def chosen(app, label):
    for role in ("radio button", "check box", "toggle button", "push button"):
        found = app.all(role, label)
        if found:
            s = states(found[0])
            return "checked" in s or "pressed" in s
    return False


def type_into(app, name, text, role="text"):
    field = app.find(role, name)
    app.set_text(field, text)
    return field


def wait_description(app, role, name, fragment):
    """Waits for the field's accessible description (its error, help and hints) to hold `fragment`."""
    wait_until(lambda: fragment in (app.find(role, name).description or ""),
               f"'{fragment}' in the description of the {role} '{name}' "
               f"(it is {app.find(role, name).description!r})")


def wait_enabled(app, name, enabled=True):
    wait_until(lambda: is_sensitive(app.one("push button", name)) == enabled,
               f"the button '{name}' to be {'enabled' if enabled else 'dimmed'}")


def cont(app, label="Continue"):
    wait_enabled(app, label)
    app.press("push button", label)


KEPT = "Your answers are kept. Open the form again to continue."


def escape(app):
    """Escape, as a person presses it: while a toast is shown, the first one dismisses it."""
    if app.all("label", KEPT):
        app.key("Escape")
        app.gone("label", KEPT)
    app.key("Escape")


def flow_row(app, title):
    """The start page's row that starts `title` (a session's row may have the same title)."""
    app.find("list item", title)
    return app.all("list item", title)[-1]


def wait_heading(app, title):
    app.find("label", title)


def today(days=0):
    return (datetime.date.today() + datetime.timedelta(days=days)).isoformat()


# --- consultation: branches, errors as the person types, Review, Edit, Not finished -------------

@test
def consultation_to_submission(ctx):
    app = ctx.open("consultation", "consultation")
    check(app.wait_screen("step:service") == "none", "the first step is not the first screen")
    session = ctx.only_session("consultation")
    announcer = app.find("status bar")
    wait_until(lambda: announcer.name == "Step 1 of 4, Service", f"the announcement of step 1 (it is {announcer.name!r})")
    app.find("label", "Step 1 of 4")
    app.find("label", "Book a consultation")  # the header's subtitle: the page's flowTitle
    check(not is_sensitive(app.one("push button", "Continue")), "Continue is not dimmed on an unanswered step")
    check(not app.all("push button", "Back"), "Back shows on the first step")

    # A branch: a website adds the pages step; Back, another answer, and it is gone.
    choose(app, "A website")
    cont(app)
    check(app.wait_screen("step:pages") == "slide-forward", "the pages step did not slide in forward")
    app.find("label", "Step 2 of 5")
    wait_until(lambda: announcer.name == "Step 2 of 5, Website size", f"the announcement of the pages step ({announcer.name!r})")
    app.press("push button", "Back")
    check(app.wait_screen("step:service") == "slide-back", "Back did not slide in from the start side")
    # The slide may still be settling on a loaded machine: the chip's state arrives with it.
    wait_until(lambda: chosen(app, "A website"), "the answer given to show after Back")
    choose(app, "A desktop app")
    cont(app)
    app.wait_screen("step:when")
    app.find("label", "Step 2 of 4")
    radios = wait_until(lambda: app.all("radio button") if len(app.all("radio button")) > 5 else None, "the day and time options")
    app.click_at(radios[0])
    app.click_at(app.all("radio button")[5])
    cont(app)
    app.wait_screen("step:contact")

    # Rules said up front; an error under a field only once it is touched, as the person types.
    type_into(app, "Name", "Ada Lovelace")
    phone = app.find("text", "Phone (optional)")
    check("Digits, spaces and an optional leading +" in phone.description, f"the phone's pattern hint is not said up front: {phone.description!r}")
    email = app.find("text", "Email")
    check("Enter a valid email" not in (email.description or ""), "an untouched field shows its error")
    app.type(email, "ada@")
    wait_description(app, "text", "Email", "Enter a valid email address, like name@example.com.")
    app.find("label", "Enter a valid email address, like name@example.com.")
    check("invalid" in states(app.find("text", "Email")), "the e-mail is not marked invalid")
    check(not is_sensitive(app.one("push button", "Continue")), "Continue is not dimmed with an error")
    # Enter in a field of a step that cannot go on sends the answer and stays.
    app.key("Return")
    wait_until(lambda: ctx.json("show", session)["step"]["fields"][1]["value"] == "ada@", "the typed e-mail to reach flowd")
    app.screenshot("step-error")
    check(ctx.json("show", session)["step"]["id"] == "contact", "Enter continued a step that cannot go on")
    check(app.lines("screen: ")[-1].startswith("step:contact"), "Enter left the step")
    type_into(app, "Email", "ada@example.com")
    wait_until(lambda: "Enter a valid email" not in (app.find("text", "Email").description or ""), "the e-mail's error to go")
    app.type(app.find("text", "Phone (optional)"), "call me")
    wait_description(app, "text", "Phone (optional)", "Enter a phone number using digits, spaces and an optional leading +.")
    type_into(app, "Phone (optional)", "")
    cont(app)
    app.wait_screen("review")
    wait_until(lambda: announcer.name == "Step 4 of 4, Check your booking", f"the announcement of Review ({announcer.name!r})")

    # Review: a group per step, "Not given", the note.
    for title in ("Service", "Day and time", "Contact details"):
        app.find("label", title)
    app.find("list item", "What can we help with?: A desktop app")
    app.find("list item", "Phone: Not given")
    app.label_containing("We send a calendar invite")
    # Review opens at its top (the focus is on the main button, further down).
    top = wait_until(lambda: app.find("label", "Step 4 of 4").queryComponent().getExtents(0), "the progress line's place")
    check(app.VIEW_TOP <= top.y <= app.VIEW_BOTTOM, f"Review does not open at its top (the progress line is at {top.y})")
    app.screenshot("review")

    # Edit, a step made invalid, "Back to review", "Not finished", Submit leads back to the step.
    app.press("push button", "Edit “Contact details”")
    check(app.wait_screen("step:contact") == "slide-back", "Edit did not go back")
    app.find("push button", "Back to review")
    type_into(app, "Name", "")
    wait_description(app, "text", "Name", "This field is required.")
    check(is_sensitive(app.one("push button", "Back to review")), "Back to review is dimmed on a step made invalid")
    app.press("push button", "Back to review")
    app.wait_screen("review")
    app.find("list item", "Not finished")
    app.press("push button", "Book")
    app.wait_screen("step:contact")
    wait_description(app, "text", "Name", "This field is required.")
    type_into(app, "Name", "Ada Lovelace")
    wait_until(lambda: "required" not in (app.find("text", "Name").description or ""), "the name's error to go")
    cont(app, "Back to review")
    app.wait_screen("review")
    app.gone("list item", "Not finished")

    # Submit: the spool action's receipt on the success page.
    app.press("push button", "Book")
    app.wait_screen("success")
    app.find("label", "Booked. Watch your inbox for the invite.")
    wait_until(lambda: any(i.name.startswith("Reference: ") for i in app.all("list item")), "the receipt's reference")
    check(ctx.state(session) == "submitted", "flowd does not have the session submitted")
    app.screenshot("success")
    app.wait_focus("push button", "Close")
    app.key("Return")
    check(app.wait_exit() == 0, "flowd-gtk did not exit with 0 after the form was sent")


# --- the start page, resume and discard, Escape -------------------------------------------------

def to_step(ctx, flow, steps, locale=None):
    """A session of `flow` started and moved along by flowctl: `steps` is a list of
    FIELD=VALUE lists, one per step, each followed by a Continue."""
    session = ctx.flowctl("start", flow, *(["--locale", locale] if locale else [])).stdout.strip()
    for assignments in steps:
        if assignments:
            ctx.flowctl("set", session, *assignments)
        ctx.flowctl("continue", session)
    return session


@test
def start_page_lists_flows_and_unfinished_sessions(ctx):
    consultation = to_step(ctx, "consultation", [["service=app"], ["day=" + first_option(ctx, "consultation", "day"),
                                                                    "time=09:00"]])
    registration = to_step(ctx, "registration", [["username=ada", "email=ada@example.com"]])
    app = ctx.open("start")
    check(app.wait_screen("start") == "none", "the start page is not the first screen")
    app.label_containing("Continue where you left off")
    app.label_containing("Start something new")
    for title in ("Book a consultation", "Create an account", "Ask for help", "Customer survey", "Get started",
                  "Enrol this device", "Every field type"):
        app.find("list item", title)
    app.label_containing("Tell us what you need and pick a time that suits you.")
    app.label_containing("Step 3 of 4 · Contact details, changed just now")
    resume = app.find("push button", "Resume Book a consultation")
    check("Step 3 of 4 · Contact details" in resume.description, f"Resume is not described by its session line: {resume.description!r}")
    app.screenshot("start")

    # Discard closes the session in flowd, and the page no longer lists it.
    app.click(app.find("push button", "Discard Create an account"))
    app.gone("push button", "Resume Create an account")
    check(not [s for s in ctx.sessions() if s["id"] == registration], "the discarded session is still in flowd")

    # Resume opens the session where it is; Escape keeps it and says so.
    app.click(app.find("push button", "Resume Book a consultation"))
    check(app.wait_screen("step:contact") == "slide-forward", "the resumed step did not slide in")
    app.find("label", "Step 3 of 4")
    type_into(app, "Name", "Grace Hopper")
    escape(app)
    check(app.wait_screen("start") == "slide-back", "Escape did not go back to the start page")
    app.label_containing(KEPT)
    app.find("push button", "Resume Book a consultation")
    check(ctx.json("show", consultation)["step"]["fields"][0]["value"] == "Grace Hopper",
          "the answer typed just before Escape did not reach flowd")

    # Starting a flow from the list.
    app.click(flow_row(app, "Ask for help"))
    app.wait_screen("step:problem")
    escape(app)
    app.wait_screen("start")
    check(len(ctx.sessions("support-request")) == 1, "the flow started from the start page is not a session in flowd")
    # Escape on the start page closes the window.
    escape(app)
    check(app.wait_exit() == 0, "flowd-gtk did not exit with 0 from the start page")


def first_option(ctx, flow, field):
    """The first option id of `field` on the current step of a fresh session of `flow` (provider options)."""
    session = ctx.flowctl("start", flow).stdout.strip()
    try:
        for _ in range(5):
            step = ctx.json("show", session)["step"]
            for f in step["fields"]:
                if f["id"] == field:
                    return f["options"][0]["id"]
            ctx.flowctl("set", session, "service=app", check_status=False)
            ctx.flowctl("continue", session, check_status=False)
    finally:
        ctx.flowctl("close", session, check_status=False)
    raise Failure(f"no field {field} in {flow}")


@test
def a_flow_opened_from_the_command_line_tells_its_outcome(ctx):
    app = ctx.open("unfinished", "survey")
    app.wait_screen("step:intro")
    session = ctx.only_session("survey")
    # The window's close button: the session is kept, and the window says so on the start page.
    app.click(app.find("push button", "Close"))
    app.wait_screen("start")
    app.label_containing(KEPT)
    app.click(app.find("push button", "Close"))
    check(app.wait_exit() == 1, "closing with the form unfinished did not exit with 1")
    check(ctx.state(session) == "editing", "the session was not kept")
    # --resume opens it again.
    app = ctx.open("resumed", "--resume", session)
    app.wait_screen("step:intro")
    app.find("label", "Thanks for taking part")
    escape(app)
    app.wait_screen("start")
    escape(app)
    check(app.wait_exit() == 1, "closing a resumed, unfinished form did not exit with 1")
    # A session that is not there: a notice, not a crash.
    app = ctx.open("gone", "--resume", "0" * 32)
    app.wait_screen("notice")
    app.find("label", "This form is not available")
    app.find("push button", "Try again")
    escape(app)
    check(app.wait_exit() == 1, "closing the notice of a missing session did not exit with 1")


# --- the other shipped flows, each to submission -------------------------------------------------

def submit_label(ctx, session):
    """The daemon's label of the button that sends the form on the current step."""
    return ctx.json("show", session)["step"]["continueLabel"]


@test
def onboarding_without_review(ctx):
    app = ctx.open("onboarding", "onboarding")
    app.wait_screen("step:plan")
    session = ctx.only_session("onboarding")
    choose(app, "Team")
    cont(app)
    app.wait_screen("step:reminders")
    check(not is_sensitive(app.one("push button", "Continue")), "Continue is not dimmed before a day is chosen")
    choose(app, "Monday")
    choose(app, "Friday")
    cont(app)
    app.wait_screen("step:terms")
    label = submit_label(ctx, session)
    check(not is_sensitive(app.one("push button", label)), f"'{label}' is not dimmed before the terms are accepted")
    choose(app, "I accept the terms of service")
    # The last step of a flow without Review sends it.
    cont(app, label)
    app.wait_screen("success")
    wait_until(lambda: ctx.state(session) == "submitted", "flowd to have the onboarding submitted")
    answers = ctx.json("answers", session)
    check(answers.get("reminderDays") == ["mon", "fri"], f"the answers flowd kept: {answers}")


@test
def registration_with_plugin_checks_and_secure_fields(ctx):
    app = ctx.open("registration", "registration")
    app.wait_screen("step:account")
    session = ctx.only_session("registration")
    username = app.find("text", "Username")
    check("Lowercase letters, digits" in username.description, f"the pattern's hint is not said up front: {username.description!r}")
    app.type(username, "Ada")
    wait_description(app, "text", "Username", "starting with a letter")
    type_into(app, "Username", "root")
    type_into(app, "Email", "ada@example.com")
    # The plugin validator's refusal, as the person types.
    wait_description(app, "text", "Username", "already taken")
    wait_enabled(app, "Continue", False)
    app.screenshot("registration-taken")
    type_into(app, "Username", "ada")
    cont(app)
    app.wait_screen("step:password")
    secret = "correct horse battery"
    app.type(app.find("password text", "Password"), secret)
    app.type(app.find("password text", "Repeat the password"), "something else")
    wait_description(app, "password text", "Repeat the password", "The passwords do not match.")
    app.set_text(app.find("password text", "Repeat the password"), secret)
    wait_until(lambda: "do not match" not in (app.find("password text", "Repeat the password").description or ""),
               "the mismatch to go")
    cont(app)
    app.wait_screen("step:terms")
    choose(app, "I accept the terms of use")
    cont(app)
    app.wait_screen("review")
    app.find("list item", "Username: ada")
    app.press("push button", "Create account")
    app.wait_screen("success")
    check(ctx.state(session) == "submitted", "flowd does not have the registration submitted")
    check(secret not in app.output(), "the password reached flowd-gtk's output")


@test
def survey_with_a_content_step_a_branch_and_other(ctx):
    app = ctx.open("survey", "survey")
    app.wait_screen("step:intro")
    session = ctx.only_session("survey")
    app.find("label", "Thanks for taking part")
    app.label_containing("Your answers help us decide what to improve next.")
    check(app.all("image"), "the content step has no icon")
    app.wait_focus("push button", "Continue")
    app.key("Return")
    app.wait_screen("step:satisfaction")
    choose(app, "Dissatisfied")
    cont(app)
    # The branch for the dissatisfied.
    app.wait_screen("step:improve")
    app.type(app.find("text", "What should we do better?"), "Answer the phone.")
    cont(app)
    app.wait_screen("step:features")
    for feature in ("Calendar", "Reminders", "Sharing", "Reports"):
        choose(app, feature)
    wait_description(app, "panel", "Which features do you use? (optional)", "Select no more than 3.")
    check(not is_sensitive(app.one("push button", "Continue")), "Continue is not dimmed with four features")
    choose(app, "Reports")
    cont(app)
    app.wait_screen("step:source")
    choose(app, "Other")
    other = app.find("text", "Where did you hear about us?: Other")
    app.type(other, "A podcast")
    label = submit_label(ctx, session)
    cont(app, label)
    app.wait_screen("success")
    wait_until(lambda: ctx.state(session) == "submitted", "flowd to have the survey submitted")
    answers = ctx.json("answers", session)
    check(answers.get("heardFrom") == "other" and answers.get("heardFrom.other") == "A podcast",
          f"Other and its text did not reach flowd: {answers}")


@test
def device_enrolment_with_a_return_date_for_loans(ctx):
    app = ctx.open("device-enrolment", "device-enrolment")
    app.wait_screen("step:device")
    session = ctx.only_session("device-enrolment")
    type_into(app, "Host name", "not a host name!")
    choose(app, "Laptop")
    wait_until(lambda: "invalid" in states(app.find("text", "Host name")), "the host name's refusal")
    wait_enabled(app, "Continue", False)
    type_into(app, "Host name", "ws-berlin-042")
    wait_until(lambda: "invalid" not in states(app.find("text", "Host name")), "the host name's error to go")
    cont(app)
    app.wait_screen("step:handover")
    type_into(app, "Owner's email", "it@example.com")
    type_into(app, "Handover date", today())
    wait_enabled(app, "Continue")
    check(not app.all("text", "Return date"), "the return date shows before the device is a loan")
    owner = app.find("text", "Owner's email")
    # A loan (visibleIf): the return date appears in place, required; Continue dims until it is given.
    choose(app, "This is a loan (optional)")
    app.find("text", "Return date")
    wait_enabled(app, "Continue", False)
    check(app.find("text", "Owner's email") == owner, "the step was rebuilt instead of showing the new field in place")
    type_into(app, "Return date", today(-1))
    wait_description(app, "text", "Return date", "The return date must be after the handover.")
    type_into(app, "Return date", today(14))
    wait_enabled(app, "Continue")
    cont(app)
    app.wait_screen("review")
    app.find("list item", "This is a loan: Yes")
    app.press("push button", submit_label(ctx, session))
    app.wait_screen("success")
    check(ctx.state(session) == "submitted", "flowd does not have the enrolment submitted")


@test
def support_request_fails_then_retries_and_is_cancelled_while_sending(ctx):
    app = ctx.open("support-request", "support-request")
    app.wait_screen("step:problem")
    session = ctx.only_session("support-request")
    choose(app, "A printer")
    app.type(app.find("text", "What happened?"), "Paper jam")
    wait_description(app, "text", "What happened?", "Enter at least 10 characters.")
    app.type(app.find("text", "What happened?"), " again.")
    choose(app, "I cannot work until this is fixed (optional)")
    cont(app)
    app.wait_screen("step:contact")
    type_into(app, "Name", "Ada Lovelace")
    type_into(app, "Email", "ada@example.com")
    cont(app)
    app.wait_screen("review")

    # The receiver refuses once: the daemon's message under the button, which reads Try again.
    ctx.listener.fail_once()
    app.press("push button", "Send to the help desk")
    message = "The server is busy. Please try again later."
    app.find("label", message)
    retry = app.find("push button", "Try again")
    check(message in retry.description, "Try again is not described by the failure")
    check(ctx.state(session) == "failed", "flowd does not have the submit failed")
    app.screenshot("failure")

    # A slow receiver: the spinner, Cancel, and the session back on Review, not sent.
    ctx.listener.hold()
    app.click(retry)
    app.wait_screen("submitting")
    app.find("label", "Sending…")
    wait_until(lambda: ctx.state(session) == "submitting", "flowd to be submitting")
    app.screenshot("submitting")
    app.press("push button", "Cancel")
    app.wait_screen("review")
    app.label_containing("Not sent")
    wait_until(lambda: ctx.state(session) == "review", "the cancelled submit to leave the session on Review")
    ctx.listener.release()

    before = ctx.listener.requests()
    app.press("push button", "Send to the help desk")
    app.wait_screen("success")
    wait_until(lambda: any(i.name == f"Reference: E2E-WEBHOOK-{before + 1}" for i in app.all("list item")),
               "the receiver's reference on the success page")
    check(ctx.state(session) == "submitted", "flowd does not have the request submitted")


# --- following the session: another client, a restart of flowd ---------------------------------

@test
def a_change_from_another_client_appears(ctx):
    app = ctx.open("second-client", "consultation")
    app.wait_screen("step:service")
    session = ctx.only_session("consultation")
    announcer = app.find("status bar")
    check(not is_sensitive(app.one("push button", "Continue")), "Continue is not dimmed")
    ctx.flowctl("set", session, "service=branding")
    wait_until(lambda: chosen(app, "Branding"), "flowctl's answer to appear in the window")
    wait_enabled(app, "Continue")
    ctx.flowctl("continue", session)
    app.wait_screen("step:when")
    wait_until(lambda: announcer.name == "Step 2 of 4, Day and time", f"the daemon's announcement ({announcer.name!r})")
    # An answer alone, with nothing else changing (Continue stays dimmed
    # until the time is given too): only Revision tells the window.
    day = ctx.json("show", session)["step"]["fields"][0]
    check(day["id"] == "day" and day["options"], f"the day field and its options ({day['id']})")
    option = day["options"][-1]
    ctx.flowctl("set", session, f"day={option['id']}")
    wait_until(lambda: chosen(app, option["label"]), f"flowctl's day {option['label']!r} to appear in the window")
    check(not is_sensitive(app.one("push button", "Continue")), "Continue is not dimmed without a time")
    ctx.flowctl("back", session)
    app.wait_screen("step:service")


@test
def flowd_restarts_and_the_window_follows(ctx):
    app = ctx.open("restart", "consultation")
    app.wait_screen("step:service")
    choose(app, "A website")
    cont(app)
    app.wait_screen("step:pages")
    ctx.flowd.restart()
    app.label_containing("Connected again")
    check(app.process.poll() is None, "flowd-gtk exited when flowd restarted")
    app.type(app.find("spin button", "A website: about how many pages?"), "12")
    # The computed estimate (flow format 2), in words from the daemon.
    wait_until(lambda: any("1,440 €" in text_of(l) for l in app.all("label")), "the estimate worked out from the pages")
    cont(app)
    app.wait_screen("step:when")
    app.find("label", "Step 3 of 5")


# --- keyboard, reduced motion --------------------------------------------------------------------

@test
def keyboard_only_with_announcements(ctx):
    app = ctx.open("keyboard")
    app.wait_screen("start")
    announcer = app.find("status bar")
    app.click(flow_row(app, "Book a consultation"))
    check(app.wait_screen("step:service") == "slide-forward", "step 1 did not slide in forward")
    wait_until(lambda: announcer.name == "Step 1 of 4, Service", f"the announcement of step 1 ({announcer.name!r})")
    app.wait_focus("push button", "A website")  # the first field's first chip
    app.key("space")
    wait_enabled(app, "Continue")
    # Alt+C: the mnemonic of "_Continue".
    app.key("c", modifiers=("alt",))
    check(app.wait_screen("step:pages") == "slide-forward", "Alt+C did not continue")
    app.wait_typing_reaches("spin button", "A website: about how many pages?", "7")
    # Alt+Left goes back.
    app.key("Left", modifiers=("alt",))
    check(app.wait_screen("step:service") == "slide-back", "Alt+Left did not go back")
    wait_until(lambda: announcer.name == "Step 1 of 5, Service", f"the announcement after Back ({announcer.name!r})")
    wait_enabled(app, "Continue")  # and the page that slid out is gone, with its own Alt+C
    app.key("c", modifiers=("alt",))
    app.wait_screen("step:pages")
    # Enter in a single-line input continues (on a chip or a radio button it chooses).
    app.key("Return")
    app.wait_screen("step:when")
    radios = wait_until(lambda: app.all("radio button") if len(app.all("radio button")) > 5 else None, "the options")
    app.click_at(radios[0])
    app.click_at(app.all("radio button")[5])
    wait_enabled(app, "Continue")
    app.key("c", modifiers=("alt",))
    app.wait_screen("step:contact")
    app.wait_typing_reaches("text", "Name", "x")
    type_into(app, "Name", "Ada")
    type_into(app, "Email", "ada@example.com")
    # Enter in a field continues.
    app.key("Return")
    app.wait_screen("review")
    wait_until(lambda: announcer.name == "Step 5 of 5, Check your booking", f"the announcement of Review ({announcer.name!r})")


@test
def reduced_motion_crossfades(ctx):
    env = {"XDG_CONFIG_HOME": os.environ["FLOWD_GTK_E2E_REDUCED_MOTION_CONFIG"]}
    app = ctx.open("reduced-motion", "consultation", env=env)
    app.wait_screen("step:service")
    choose(app, "A desktop app")
    cont(app)
    check(app.wait_screen("step:when") == "crossfade", "a step slid in with animations off")
    app.key("Left", modifiers=("alt",))
    check(app.wait_screen("step:service") == "crossfade", "Back slid with animations off")


# --- every field type ---------------------------------------------------------------------------

@test
def every_field_type_has_its_widget(ctx):
    app = ctx.open("every-field", "every-field")
    app.wait_screen("step:everything")
    session = ctx.only_session("every-field")
    bar = app.find("level bar", "Step 1 of 2")
    value = bar.queryValue()
    check((value.currentValue, value.maximumValue) == (1, 2), f"the segments show {value.currentValue} of {value.maximumValue}")
    expected = [
        ("text", "Full name"), ("text", "E-mail"), ("password text", "Password"),
        ("text", "About your project (optional)"), ("spin button", "Number of pages"),
        ("text", "Budget in euros (optional)"), ("text", "Start date"), ("push button", "Choose a date"),
        ("text", "Preferred time (optional)"), ("push button", "Choose a time"),
        ("check box", "Send me the newsletter (optional)"), ("check box", "I accept the terms"),
        ("radio button", "A website with a shop and a blog"), ("radio button", "Something else"),
        ("check box", "By e-mail to the address above"),
        ("push button", "Just me"), ("push button", "2–10"), ("push button", "Design"), ("push button", "Other"),
    ]
    for role, name in expected:
        app.find(role, name)
    app.screenshot("every-field-1")
    check(app.find("text", "Full name").description == "As on your ID.", "the name's help is not its description")
    check(not is_sensitive(app.one("push button", "Continue")), "Continue is not dimmed on an invalid step")

    type_into(app, "Full name", "Grace Hopper")
    app.type(app.find("text", "E-mail"), "grace@example.com")
    secret = "a password of some length"
    app.type(app.find("password text", "Password"), secret)
    app.type(app.find("spin button", "Number of pages"), "42")
    app.type(app.find("text", "Budget in euros (optional)"), "12,5")
    app.type(app.find("text", "Start date"), "2026-07-01")
    app.type(app.find("text", "Preferred time (optional)"), "09:30")
    choose(app, "I accept the terms")
    choose(app, "Something else")
    other = app.find("text", "What can we help with?: Something else")
    app.type(other, "A printed brochure")
    choose(app, "A desktop app for Linux")
    app.gone("text", "What can we help with?: Something else")
    choose(app, "By phone during office hours")
    choose(app, "Just me")
    choose(app, "2–10")
    check(not chosen(app, "Just me"), "two chips of a single choice are pressed")
    choose(app, "Other")
    app.type(app.find("text", "Topics: Other"), "Training")
    app.screenshot("every-field-2")
    # The date picker: a calendar in a popover, on the typed date's month.
    app.click(app.all("push button", "Choose a date")[-1])
    app.find("label", "July")
    escape(app)
    wait_enabled(app, "Continue")
    cont(app)
    app.wait_screen("review")
    app.find("list item", "Number of pages: 42")
    app.find("list item", "Budget in euros: 12.5")
    app.find("list item", "Preferred time: 09:30")
    app.find("list item", "Topics: Training")
    check(secret not in app.output(), "the secure answer reached the program's output")
    answers = ctx.json("answers", session)
    check(answers.get("pages") == 42 and answers.get("size") == "small" and answers.get("channels") == ["phone"],
          f"the answers flowd kept: {answers}")
    check("password" not in answers, "a secure answer came back")


# --- flow format 2: computed values, warnings, fields that appear -----------------------------

WARNING = "More pages later than at launch: we can plan for them from the start."


@test
def format_two_computed_warning_and_visible_if(ctx):
    app = ctx.open("quote", "quote")
    app.wait_screen("step:site")
    session = ctx.only_session("quote")
    # The computed price is a read-only row: nothing to type into.
    app.find("list item", "Estimated price")
    check(not app.all("text", "Estimated price") and not app.all("spin button", "Estimated price"),
          "the computed price can be typed into")
    check(not app.all("spin button", "How many products? (optional)"), "a field hidden by its visibleIf shows")
    pages = app.find("spin button", "Pages at launch")
    app.type(pages, "12")
    wait_until(lambda: app.all("label", "1,440 €"), "the estimate worked out from the pages")
    wait_enabled(app, "Continue")

    # A warning shows under its field, in its description, and Continue stays possible.
    app.type(app.find("spin button", "Pages you plan to add later (optional)"), "20")
    wait_until(lambda: app.all("label", WARNING), "the warning under the field")
    wait_description(app, "spin button", "Pages you plan to add later (optional)", WARNING)
    check(is_sensitive(app.one("push button", "Continue")), "a warning dimmed Continue")
    check("invalid" not in states(app.find("spin button", "Pages you plan to add later (optional)")),
          "a warning marks the field invalid")

    # A shop (visibleIf): the products field appears in place; the rest of the step stays as it is.
    choose(app, "With a shop (optional)")
    products = app.find("spin button", "How many products? (optional)")
    check(app.find("spin button", "Pages at launch") == pages, "the step was rebuilt instead of showing the new field in place")
    above = app.find("check box", "With a shop (optional)").queryComponent().getExtents(0)
    below = products.queryComponent().getExtents(0)
    check(below.y > above.y, f"the products field ({below.y}) is not under the toggle that shows it ({above.y})")
    app.type(products, "40")
    app.screenshot("format2")
    # Off again: the field goes, and so does its answer from what is sent.
    choose(app, "With a shop (optional)")
    app.gone("spin button", "How many products? (optional)")
    # Flips while another client keeps changing the step (clearing and giving the pages, so
    # CanContinue changes and the window re-reads the page all the time): none is lost. GTK applies a click on a switch at the end of its 100 ms slide, and
    # the window re-stating the value the switch still had then ended the slide and dropped the flip.
    stop = threading.Event()

    def second_client():
        n = 0
        while not stop.is_set():
            ctx.flowctl("set", session, "pages=" if n % 2 else "pages=12", check_status=False)
            n += 1
    changes = threading.Thread(target=second_client)
    changes.start()
    try:
        for _ in range(3):
            choose(app, "With a shop (optional)")
            app.find("spin button", "How many products? (optional)")
            choose(app, "With a shop (optional)")
            app.gone("spin button", "How many products? (optional)")
    finally:
        stop.set()
        changes.join()
    ctx.flowctl("set", session, "pages=12")
    wait_until(lambda: app.all("label", "1,440 €"), "the estimate worked out from the pages")
    app.screenshot("format2-shop-off")
    cont(app)
    app.wait_screen("review")
    app.find("list item", "Estimated price: 1,440 €")
    check(not app.all("list item", "How many products?: 40"), "Review lists a hidden field")
    app.press("push button", "Submit")
    app.wait_screen("success")
    answers = ctx.json("answers", session)
    check(answers.get("price") == 1440 and answers.get("later") == 20, f"the answers flowd kept: {answers}")


# --- languages ----------------------------------------------------------------------------------

@test
def german_window(ctx):
    to_step(ctx, "consultation", [["service=app"]], locale="de")
    app = ctx.open("de-start", "--locale", "de")
    app.wait_screen("start")
    app.label_containing("Dort weitermachen, wo Sie aufgehört haben")
    app.find("push button", "Beratung buchen fortsetzen")
    app.label_containing("Schritt 2 von 4 · Tag und Uhrzeit, gerade eben geändert")
    app.find("list item", "Hilfe anfragen")
    app.screenshot("de-start")
    app.click(flow_row(app, "Konto anlegen"))
    app.wait_screen("step:account")
    app.find("label", "Schritt 1 von 4")
    app.find("push button", "Weiter")
    app.screenshot("de-registration")


@test
def japanese_window_on_a_flow_without_japanese(ctx):
    app = ctx.open("ja-survey", "survey", "--locale", "ja")
    app.wait_screen("step:intro")
    app.find("push button", "次へ")
    app.label_containing("ステップ 1/")
    app.find("label", "Thanks for taking part")  # the flow has no Japanese: its texts are English
    app.screenshot("ja-survey")


@test
def locale_from_the_environment(ctx):
    app = ctx.open("env-locale", env={"LC_ALL": "", "LC_MESSAGES": "fr_FR.UTF-8", "LANG": "de_DE.UTF-8"})
    app.wait_screen("start")
    app.label_containing("Commencer quelque chose")
    app.find("list item", "Réserver une consultation")


@test
def right_to_left_layout_mirrors(ctx):
    app = ctx.open("rtl", "consultation", "--locale", "ar")
    app.wait_screen("step:service")
    choose(app, "A desktop app")
    cont(app)
    app.wait_screen("step:when")
    back = app.one("push button", "Back").queryComponent().getExtents(0)
    forward = app.one("push button", "Continue").queryComponent().getExtents(0)
    check(forward.x < back.x, f"Continue ({forward.x}) is not at the start side, left of Back ({back.x}), in a right-to-left locale")
    app.screenshot("rtl-when")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", required=True)
    parser.add_argument("--shots", required=True)
    parser.add_argument("--only", action="append", default=[])
    args = parser.parse_args()
    ctx = Context(args)
    failed = 0
    ran = 0
    started = time.monotonic()
    try:
        for function in TESTS:
            if args.only and not any(o in function.__name__ for o in args.only):
                continue
            ran += 1
            try:
                function(ctx)
                print(f"ok - {function.__name__}", flush=True)
            except Exception as error:
                failed += 1
                detail = str(error) if isinstance(error, Failure) else traceback.format_exc()
                print(f"not ok - {function.__name__}: {detail}", flush=True)
            finally:
                ctx.close_all()
                ctx.close_sessions()
    finally:
        ctx.shutdown()
    print(f"{ran - failed} of {ran} desktop tests passed in {time.monotonic() - started:.0f} s; "
          f"screenshots in {args.shots}", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
