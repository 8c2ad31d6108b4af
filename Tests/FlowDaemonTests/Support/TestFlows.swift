/// Flow files the daemon tests serve. None names a plugin, so they load on
/// a daemon without any.
enum TestFlows {
    /// trip.json, quick.json and durable.json.
    static let standard: [String: String] = ["trip.json": trip, "quick.json": quick, "durable.json": durable]

    /// A flow with Review: a content step, validation rules, a choice with
    /// Other that branches, an optional branch step, a multiple choice, a
    /// toggle that must be on and a step of secure fields with a step rule.
    /// No submit action, so Submit settles at once.
    ///
    /// Path with `mode` = train: welcome, traveller, mode, extras, account,
    /// review (6). With `mode` = plane, `flight` comes after `mode` (7).
    static let trip = """
        { "format": 1, "id": "trip", "title": {"en": "Plan a trip", "de": "Eine Reise planen"},
          "description": "A test flow with branching and review",
          "steps": [
            {"id": "welcome", "kind": "content", "title": "Welcome", "body": "Plan your trip in a few steps.",
             "icon": "dialog-information"},
            {"id": "traveller", "title": "Traveller",
             "fields": [
               {"id": "name", "type": "text", "label": "Name", "required": true, "minLength": 2, "maxLength": 40},
               {"id": "email", "type": "email", "label": "Email", "required": true}]},
            {"id": "mode", "title": "Mode",
             "fields": [
               {"id": "mode", "type": "choice", "label": "How?", "required": true,
                "options": [{"id": "train", "label": "Train"}, {"id": "plane", "label": "Plane"}], "other": true}],
             "next": [{"if": {"field": "mode", "equals": "plane"}, "goto": "flight"}, {"goto": "extras"}]},
            {"id": "flight", "title": "Flight",
             "fields": [
               {"id": "seat", "type": "choice", "label": "Seat", "required": true,
                "options": [{"id": "window", "label": "Window"}, {"id": "aisle", "label": "Aisle"}]},
               {"id": "bags", "type": "number", "label": "Bags", "integer": true, "minimum": 0, "maximum": 3}]},
            {"id": "extras", "title": "Extras",
             "fields": [
               {"id": "extras", "type": "multichoice", "label": "Extras", "maxSelected": 2,
                "options": [{"id": "wifi", "label": "Wi-Fi"}, {"id": "meal", "label": "Meal"},
                            {"id": "lounge", "label": "Lounge"}]},
               {"id": "terms", "type": "toggle", "label": "I agree", "mustBeOn": true}]},
            {"id": "account", "title": "Account",
             "fields": [
               {"id": "password", "type": "secure", "label": "Password", "required": true, "minLength": 8},
               {"id": "confirm", "type": "secure", "label": "Confirm", "required": true}],
             "rules": [{"equals": ["password", "confirm"], "message": "Passwords do not match."}]}
          ],
          "review": {"title": "Check your trip", "note": "We email you a summary.", "submitTitle": "Book"}
        }
        """

    /// A flow without Review and without a submit action: the last step's
    /// Continue ("Send feedback") settles the session.
    static let quick = """
        { "format": 1, "id": "quick", "title": "Quick feedback", "finishTitle": "Send feedback",
          "steps": [
            {"id": "rating", "title": "Rating",
             "fields": [{"id": "stars", "type": "number", "label": "Stars", "required": true, "integer": true,
                         "minimum": 1, "maximum": 5}]},
            {"id": "comment", "title": "Comment",
             "fields": [{"id": "comment", "type": "multiline", "label": "Comment", "maxLength": 200}]}
          ]
        }
        """

    /// For durability runs: a text field to overwrite many times and a secure
    /// field on the same step, then a second step.
    static let durable = """
        { "format": 1, "id": "durable", "title": "Durable",
          "steps": [
            {"id": "counter", "title": "Counter",
             "fields": [{"id": "n", "type": "text", "label": "N"},
                        {"id": "pin", "type": "secure", "label": "PIN", "required": true}]},
            {"id": "last", "title": "Last", "fields": [{"id": "note", "type": "text", "label": "Note"}]}
          ],
          "review": {}
        }
        """

    /// A flow that does not lint: an unknown field type at `steps[0].fields[0].type`.
    static let misspelledType = """
        { "format": 1, "id": "broken", "title": "Broken",
          "steps": [{"id": "one", "title": "One", "fields": [{"id": "a", "type": "emial", "label": "A"}]}] }
        """

    /// A file that is not JSON.
    static let notJSON = """
        { "format": 1, "id": "garbled", "title" "Garbled" }
        """

    /// A small valid flow with the id `id`.
    static func minimal(id: String, title: String = "Minimal") -> String {
        """
        { "format": 1, "id": "\(id)", "title": "\(title)",
          "steps": [{"id": "only", "title": "Only", "fields": [{"id": "x", "type": "text", "label": "X"}]}] }
        """
    }
}

/// Flows that use the fixture plugin `FixtureTestPlugin` (`test.*`).
enum PluginFlows {
    /// One step (a name and a secure PIN), Review, and `action` with `options` as the submit action.
    static func submitting(id: String, action: String, options: String = "{}", timeoutSeconds: String = "30") -> String {
        """
        { "format": 1, "id": "\(id)", "title": "Submit with \(action)",
          "steps": [
            {"id": "who", "title": "Who",
             "fields": [{"id": "name", "type": "text", "label": "Name", "required": true},
                        {"id": "pin", "type": "secure", "label": "PIN"}]}
          ],
          "review": {"note": "Sent with \(action)."},
          "submit": {"action": "\(action)", "options": \(options), "timeoutSeconds": \(timeoutSeconds)}
        }
        """
    }

    /// Every submit flow the plugin tests use, by file name.
    static let submitFlows: [String: String] = [
        "echo.json": submitting(id: "echo", action: "test.echo-submit"),
        "slow.json": submitting(id: "slow", action: "test.slow-submit", options: "{\"seconds\": 120}", timeoutSeconds: "600"),
        "fail.json": submitting(id: "fail", action: "test.fail-submit"),
        "opaque.json": submitting(id: "opaque", action: "test.opaque-fail-submit"),
        "late.json": submitting(id: "late", action: "test.slow-submit", options: "{\"seconds\": 60}", timeoutSeconds: "0.5"),
        "providers.json": providers,
    ]

    /// A flow with a plugin field validator, a plugin step validator, an
    /// options provider and a prefill provider; no submit action.
    static let providers = """
        { "format": 1, "id": "providers", "title": "Providers",
          "steps": [
            {"id": "numbers", "title": "Numbers",
             "fields": [{"id": "even", "type": "number", "label": "An even number", "required": true,
                         "validators": [{"plugin": "test.even"}]},
                        {"id": "who", "type": "text", "label": "Who", "prefill": "test.prefill"}]},
            {"id": "colour", "title": "Colour",
             "fields": [{"id": "colour", "type": "choice", "label": "Colour", "required": true, "optionsFrom": "test.options"}]},
            {"id": "twice", "title": "Twice",
             "fields": [{"id": "first", "type": "text", "label": "First"}, {"id": "second", "type": "text", "label": "Second"}],
             "rules": [{"plugin": "test.same-answers"}]}
          ]
        }
        """
}
