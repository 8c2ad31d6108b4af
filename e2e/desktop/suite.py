#!/usr/bin/python3
"""The desktop client's end-to-end suite: flowd-gtk in a real X server (Xvfb),
driven through AT-SPI only. Today it drives the built-in fixture screens
(`flowd-gtk --fixture NAME`); once the window is wired to flowd it drives the
shipped flows (docs/desktop.md).

Usage (run.sh sets up the X server and the buses):
    suite.py --bin BUILD_BIN_DIR --shots DIR [--only NAME]...
Prints one line per test ("ok - name" / "not ok - name: reason") and exits 1
when any failed. Screenshots go to DIR; the app's output to DIR/logs.
"""
import argparse
import os
import sys
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from atspi_driver import App, Failure, is_sensitive, states, text_of, wait_until  # noqa: E402

TESTS = []


def test(function):
    TESTS.append(function)
    return function


def flow_row(app, title):
    """The start page's row that starts `title` (an unfinished session's row has the same title)."""
    app.find("list item", title)
    return app.all("list item", title)[-1]


def check(condition, message):
    if not condition:
        raise Failure(message)


class Context:
    def __init__(self, args):
        self.binary = os.path.join(args.bin, "flowd-gtk")
        self.shots = args.shots
        self.logs = os.path.join(args.shots, "logs")
        os.makedirs(self.logs, exist_ok=True)
        self.apps = []

    def open(self, name, fixture, *extra, env=None):
        app = App(self.binary, ["--fixture", fixture, *extra], os.path.join(self.logs, name + ".log"), self.shots, env)
        self.apps.append(app)
        return app

    def close_all(self):
        for app in self.apps:
            app.stop()
        self.apps = []


# --- the start page ----------------------------------------------------------------------------

@test
def start_page_lists_flows_and_unfinished_sessions(ctx):
    app = ctx.open("start", "start")
    app.label_containing("Continue where you left off")
    app.label_containing("Start something new")
    app.find("label", "Book a consultation")
    line = app.label_containing("Step 3 of 4 · Contact details, changed 5 minutes ago")
    check(line is not None, "the session line is missing")
    for title in ("Book a consultation", "Create an account", "Ask for help"):
        app.find("list item", title)
    app.find("push button", "Resume Create an account")
    app.screenshot("start")


@test
def start_page_resume_discard_and_start(ctx):
    app = ctx.open("start-actions", "start")
    resume = app.find("push button", "Resume Book a consultation")
    check("changed 5 minutes ago" in resume.description, f"Resume is not described by its session line: {resume.description!r}")
    app.click(resume)
    app.wait_event("resume 5f0c8e2a9b7d4c1e8f3a6b2d9c0e7f41")
    app.click(app.find("push button", "Discard Create an account"))
    app.wait_event("discard a41d3c9e0b2f48d7a6e51c8b9f0d2e37")
    app.click(flow_row(app, "Ask for help"))
    app.wait_event("start support-request")


# --- a form step -------------------------------------------------------------------------------

@test
def every_field_type_has_its_widget(ctx):
    app = ctx.open("every-field", "every-field")
    app.find("label", "Step 2 of 4")
    bar = app.find("level bar", "Step 2 of 4")
    value = bar.queryValue()
    check((value.currentValue, value.maximumValue) == (2, 4), f"the segments show {value.currentValue} of {value.maximumValue}")
    expected = [
        ("text", "Full name"), ("text", "E-mail"), ("password text", "Password"),
        ("text", "About your project (optional)"), ("spin button", "Number of pages"),
        ("text", "Budget in euros (optional)"), ("text", "Start date"), ("push button", "Choose a date"),
        ("text", "Preferred time (optional)"), ("push button", "Choose a time"),
        ("check box", "Send me the newsletter"), ("check box", "I accept the terms"),
        ("radio button", "A website with a shop and a blog"), ("radio button", "Something else"),
        ("text", "What can we help with?: Something else"),
        ("check box", "By e-mail to the address above"),
        ("push button", "Just me"), ("push button", "2–10"), ("push button", "Design"), ("push button", "Other"),
    ]
    for role, name in expected:
        app.find(role, name)
    app.screenshot("every-field-1")
    # Help, hints and "(optional)" are what a screen reader reads with the field.
    check(app.find("text", "Full name").description == "2 to 80 characters", "the name's hint is not its description")
    check("About once a month" in app.find("check box", "Send me the newsletter").description, "the toggle's help is missing")
    # Values from the model: the toggle on, Other chosen with its text, a chip pressed, a check box checked.
    check("checked" in states(app.find("check box", "Send me the newsletter")), "the newsletter toggle is not on")
    check("checked" in states(app.find("radio button", "Something else")), "Other is not chosen")
    check(text_of(app.find("text", "What can we help with?: Something else")) == "A printed brochure", "Other's text is not shown")
    check("pressed" in states(app.find("push button", "2–10")), "the 2–10 chip is not pressed")
    check("checked" in states(app.find("check box", "By e-mail to the address above")), "the e-mail check box is not checked")
    # Continue is dimmed: the step is not valid.
    check(not is_sensitive(app.find("push button", "Continue")), "Continue is not dimmed on an invalid step")

    # Typing and choosing report answers (SetAnswers keys and values).
    app.type(app.find("text", "Full name"), "Grace")
    app.wait_event('answers name="Grace"')
    app.type(app.find("password text", "Password"), "correct horse")
    app.wait_event("answers password=<secure>")
    check("correct horse" not in app.output(), "the secure answer reached the program's output")
    app.type(app.find("spin button", "Number of pages"), "42")
    app.wait_event("answers pages=42")
    app.type(app.find("text", "Budget in euros (optional)"), "12,5")
    app.wait_event("answers budget=12.5")
    app.type(app.find("text", "Start date"), "2025-07-01")
    app.wait_event('answers day="2025-07-01"')
    app.click(app.find("check box", "I accept the terms"))
    app.wait_event("answers terms=true")
    app.click(app.find("radio button", "A desktop app for Linux"))
    app.wait_event('answers service="app"')
    app.gone("text", "What can we help with?: Something else")
    app.screenshot("every-field-2")
    app.click(app.find("check box", "By phone during office hours"))
    app.wait_event("answers channels=[email,phone]")
    app.click(app.find("push button", "Just me"))
    app.wait_event('answers size="solo"')
    check("pressed" not in states(app.find("push button", "2–10")), "two chips of a single choice are pressed")
    app.click(app.find("push button", "Other"))
    app.wait_event("answers topics=[other]")
    other = app.find("text", "Topics: Other")
    app.type(other, "Training")
    app.wait_event('answers topics.other="Training"')
    app.reveal(other)
    app.screenshot("every-field-3")
    # The date picker: a calendar in a popover, on the typed date's month.
    app.click(app.all("push button", "Choose a date")[-1])
    app.find("label", "July")
    app.find("label", "2025")
    app.screenshot("every-field-calendar")


@test
def errors_show_only_for_touched_fields(ctx):
    app = ctx.open("contact", "contact")
    email = app.find("text", "E-mail")
    message = "Please enter a valid email address, like name@example.com."
    check(email.description == "", f"an untouched field shows its error: {email.description!r}")
    check(not app.all("label", message), "the error label is on screen before the field was touched")
    check(not is_sensitive(app.find("push button", "Continue")), "Continue is not dimmed")
    app.type(email, "x")
    app.wait_event('answers email="ada@examplex"')
    wait_until(lambda: message in app.find("text", "E-mail").description, "the error in the e-mail's description")
    app.find("label", message)
    check("invalid" in states(app.find("text", "E-mail")), f"the e-mail is not marked invalid: {states(app.find('text', 'E-mail'))}")
    phone = app.find("text", "Phone (optional)")
    check(phone.description == "Only if you would like a call back.", "the untouched phone shows more than its help")
    app.screenshot("step-error")
    # Enter on a step that cannot continue does nothing.
    app.click_at(app.find("text", "Name"))
    app.key("Return")
    app.key("Escape")
    app.wait_event("close")
    check("continue" not in app.events(), "Enter continued a step that is not valid")


@test
def content_step_shows_icon_and_text(ctx):
    app = ctx.open("content", "content")
    app.find("label", "Before you start")
    app.label_containing("This takes about two minutes")
    check(app.all("image"), "the content step has no icon")
    check(not app.all("push button", "Back"), "Back shows on the first step")
    app.wait_focus("push button", "Continue")
    app.screenshot("content")


# --- Review and the outcome --------------------------------------------------------------------

@test
def review_groups_not_given_not_finished_and_edit(ctx):
    app = ctx.open("review", "review")
    app.find("label", "Review")
    for title in ("Service", "Day and time", "Contact details"):
        app.find("label", title)
    app.find("list item", "Not finished")
    check(len(app.all("list item", "Day: Not given")) == 1, "the unanswered day does not read 'Not given'")
    app.find("list item", "Phone: Not given")
    app.reveal(app.find("label", "Step 4 of 4"))
    app.screenshot("review")
    app.click(app.find("push button", "Edit Day and time"))
    app.wait_event("edit when")
    app.click(app.find("push button", "Book"))
    app.wait_event("continue")


@test
def submitting_shows_a_spinner_and_cancel(ctx):
    app = ctx.open("submitting", "submitting")
    app.find("label", "Sending…")
    app.screenshot("submitting")
    cancel = app.find("push button", "Cancel")
    app.wait_focus("push button", "Cancel")
    app.click(cancel)
    app.wait_event("cancel")


@test
def success_shows_the_check_and_the_receipt(ctx):
    app = ctx.open("success", "success")
    app.find("label", "Booked")
    app.find("list item", "Booking number: CNS-2025-0612-0930")
    app.screenshot("success")
    app.click(app.find("push button", "Close"))
    app.wait_event("close")
    check(app.wait_exit() == 0, "flowd-gtk did not exit cleanly")


@test
def failure_shows_the_message_under_the_button_and_try_again(ctx):
    app = ctx.open("failure", "failure")
    message = "Couldn't send this. Try again."
    app.find("label", message)
    retry = app.find("push button", "Try again")
    check(message in retry.description, "the retry button is not described by the failure")
    app.screenshot("failure")
    app.click(retry)
    app.wait_event("continue")


# --- navigation, keyboard, announcements ---------------------------------------------------------

@test
def tour_navigates_by_keyboard_and_announces_each_step(ctx):
    app = ctx.open("tour", "tour")
    announcer = app.find("status bar")
    app.click(flow_row(app, "Book a consultation"))
    app.wait_event("start consultation")
    check(app.wait_screen("step:service") == "slide-forward", "step 1 did not slide in forward")
    wait_until(lambda: announcer.name == "Step 1 of 4, Service", f"the announcement of step 1 (it is {announcer.name!r})")
    app.wait_focus("push button", "A website")  # the first field's first chip
    check(not app.all("push button", "Back"), "Back shows on the first step")
    # Alt+C: the mnemonic of "_Continue".
    app.key("c", modifiers=("alt",))
    app.wait_event("continue")
    check(app.wait_screen("step:when") == "slide-forward", "step 2 did not slide in forward")
    wait_until(lambda: announcer.name == "Step 2 of 4, Day and time", "the announcement of step 2")
    app.wait_typing_reaches("day", "2")
    # Alt+Left goes back, sliding in from the other side.
    app.key("Left", modifiers=("alt",))
    app.wait_event("back")
    check(app.wait_screen("step:service") == "slide-back", "Back did not slide in from the start side")
    wait_until(lambda: announcer.name == "Step 1 of 4, Service", "the announcement after Back")
    app.press("push button", "Continue")
    app.wait_screen("step:when")
    app.press("push button", "Continue")
    app.wait_screen("step:contact")
    app.wait_typing_reaches("name")
    # Enter in a field continues.
    app.key("Return")
    app.wait_screen("review")
    wait_until(lambda: announcer.name == "Step 4 of 4, Review", "the announcement of Review")
    # Edit from Review, then Continue reads "Back to review".
    app.press("push button", "Edit Day and time")
    check(app.wait_screen("step:when") == "slide-back", "Edit did not go back")
    app.press("push button", "Back to review")
    app.wait_screen("review")
    # Submit: the spinner, Cancel, a failure, Try again, then success from another thread.
    app.press("push button", "Book")
    app.wait_screen("submitting")
    app.click(app.find("push button", "Cancel"))
    app.wait_event("cancel")
    app.wait_screen("review")
    app.press("push button", "Book")
    app.find("label", "Couldn't send this. Try again.")
    app.click(app.find("push button", "Try again"))
    app.wait_screen("success")
    app.find("label", "Booked")
    app.wait_focus("push button", "Close")
    app.key("Return")
    app.wait_event("close")
    check(app.wait_exit() == 0, "flowd-gtk did not exit cleanly")


@test
def escape_and_the_close_button_keep_the_session(ctx):
    app = ctx.open("escape", "contact")
    app.find("text", "Name")
    app.key("Escape")
    app.wait_event("close")
    check(app.wait_exit() == 0, "Escape did not close the window")
    app = ctx.open("close-button", "contact")
    app.click(app.find("push button", "Close"))
    app.wait_event("close")
    check(app.wait_exit() == 0, "the close button did not close the window")


@test
def reduced_motion_crossfades(ctx):
    env = {"XDG_CONFIG_HOME": os.environ["FLOWD_GTK_E2E_REDUCED_MOTION_CONFIG"]}
    app = ctx.open("reduced-motion", "tour", env=env)
    app.click(flow_row(app, "Book a consultation"))
    check(app.wait_screen("step:service") == "crossfade", "a step slid in with animations off")
    app.press("push button", "Continue")
    check(app.wait_screen("step:when") == "crossfade", "a step slid in with animations off")
    app.key("Left", modifiers=("alt",))
    check(app.wait_screen("step:service") == "crossfade", "Back slid with animations off")


# --- languages ---------------------------------------------------------------------------------

@test
def german_window(ctx):
    app = ctx.open("de-start", "start", "--locale", "de")
    app.label_containing("Dort weitermachen, wo Sie aufgehört haben")
    app.find("push button", "Beratung buchen fortsetzen")
    app.label_containing("Schritt 3 von 4 · Kontaktdaten, vor 5 Minuten geändert")
    app.screenshot("de-start")
    app = ctx.open("de-every-field", "every-field", "--locale", "de")
    app.find("label", "Schritt 2 von 4")
    app.find("push button", "Weiter")
    app.screenshot("de-every-field")
    app = ctx.open("de-review", "failure", "--locale", "de")
    app.find("push button", "Erneut versuchen")
    app.screenshot("de-failure")


@test
def locale_from_the_environment(ctx):
    app = ctx.open("env-locale", "start", env={"LC_ALL": "", "LC_MESSAGES": "fr_FR.UTF-8", "LANG": "de_DE.UTF-8"})
    app.label_containing("Reprendre là où vous en étiez")


@test
def right_to_left_layout_mirrors(ctx):
    app = ctx.open("rtl", "contact", "--locale", "ar")
    back = app.find("push button", "Back").queryComponent().getExtents(0)
    cont = app.find("push button", "Continue").queryComponent().getExtents(0)
    check(cont.x < back.x, f"Continue ({cont.x}) is not at the start side, left of Back ({back.x}), in a right-to-left locale")
    app.screenshot("rtl-contact")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", required=True)
    parser.add_argument("--shots", required=True)
    parser.add_argument("--only", action="append", default=[])
    args = parser.parse_args()
    ctx = Context(args)
    failed = 0
    ran = 0
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
    print(f"{ran - failed} of {ran} desktop tests passed; screenshots in {args.shots}", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
