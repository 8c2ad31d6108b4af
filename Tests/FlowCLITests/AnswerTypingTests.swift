import DBus
import FlowCLI
import FlowEngine
import FlowKit
import FlowProtocol
import Testing

@Suite("Typing FIELD=VALUE by the field's type")
struct AnswerTypingTests {
    private func field(_ type: FieldType, id: String = "f", options: [String] = [], other: Bool = false) -> StepField {
        var field = StepField(id: id, type: type, label: id.uppercased())
        field.options = options.map { ChoiceOption(id: $0, label: $0.capitalized) }
        field.other = other
        field.otherLabel = other ? "Something else" : ""
        return field
    }

    private func value(_ text: String, _ field: StepField, locale: String = "en") throws -> DBusValue {
        try AnswerTyping.value(text, for: field, locale: locale)
    }

    private func refusal(_ text: String, _ field: StepField) -> CLIError? {
        do {
            _ = try AnswerTyping.value(text, for: field, locale: "en")
            return nil
        } catch {
            return error
        }
    }

    @Test("FIELD=VALUE splits at the first =; an empty value is allowed; no = is a usage error")
    func assignment() throws {
        #expect(try AnswerTyping.assignment("name=Ada") == ("name", "Ada"))
        #expect(try AnswerTyping.assignment("formula=a=b") == ("formula", "a=b"))
        #expect(try AnswerTyping.assignment("phone=") == ("phone", ""))
        for bad in ["name", "=value", ""] {
            #expect(throws: CLIError.self) { try AnswerTyping.assignment(bad) }
        }
    }

    @Test("toggles take yes/no words in English and in the session's language")
    func toggles() throws {
        let toggle = field(.toggle)
        for word in ["y", "YES", "true", "1", "on", " yes "] { #expect(try value(word, toggle) == .bool(true), "\(word)") }
        for word in ["n", "No", "false", "0", "off"] { #expect(try value(word, toggle) == .bool(false), "\(word)") }
        #expect(try value("ja", toggle, locale: "de") == .bool(true))
        #expect(try value("nein", toggle, locale: "de") == .bool(false))
        #expect(try value("oui", toggle, locale: "fr") == .bool(true))
        #expect(try value("j", toggle, locale: "de") == .bool(true))
        let error = refusal("maybe", toggle)
        #expect(error?.code == .dataError)
        #expect(error?.message.contains("toggle") == true)
    }

    @Test("numbers: integers go as x, decimals as d, anything else is refused before any call")
    func numbers() throws {
        let number = field(.number)
        #expect(try value("12", number) == .int64(12))
        #expect(try value("-3", number) == .int64(-3))
        #expect(try value("2.5", number) == .double(2.5))
        #expect(try value("1e3", number) == .double(1000))
        for bad in ["twelve", "12abc", "nan", "inf", "0x10", "1,5"] {
            #expect(refusal(bad, number)?.code == .dataError, "\(bad)")
        }
    }

    @Test("a choice takes an option id, a label (any case) or other")
    func choices() throws {
        let choice = field(.choice, options: ["website", "app"], other: true)
        #expect(try value("website", choice) == .string("website"))
        #expect(try value("App", choice) == .string("app"))
        #expect(try value("other", choice) == .string("other"))
        #expect(try value("something else", choice) == .string("other"))
        let error = refusal("desk", choice)
        #expect(error?.code == .dataError)
        #expect(error?.message.contains("website, app, other") == true)
        // Without Other, "other" is not an option.
        #expect(refusal("other", field(.choice, options: ["a"])) != nil)
        // A choice whose options the daemon did not list is left to the daemon.
        #expect(try value("anything", field(.choice)) == .string("anything"))
    }

    @Test("a multiple choice takes a comma-separated list; duplicates and blanks go")
    func multichoice() throws {
        let multi = field(.multichoice, options: ["mon", "tue", "wed"])
        #expect(try value("mon,wed", multi) == .strings(["mon", "wed"]))
        #expect(try value(" mon , Tue,,mon ", multi) == .strings(["mon", "tue"]))
        #expect(refusal("mon,fri", multi)?.code == .dataError)
    }

    @Test("an empty value clears: an empty string, or an empty list for a multiple choice")
    func clearing() throws {
        #expect(try value("", field(.text)) == .string(""))
        #expect(try value("", field(.number)) == .string(""))
        #expect(try value("", field(.toggle)) == .string(""))
        #expect(try value("", field(.multichoice, options: ["a"])) == .strings([]))
    }

    @Test("text, secure, email, date and time go as strings, untouched")
    func strings() throws {
        for type: FieldType in [.text, .multiline, .secure, .email, .date, .time] {
            #expect(try value("  spaced value ", field(type)) == .string("  spaced value "))
        }
    }

    @Test("FIELD.other is the free text of a field that offers Other; unknown fields are named")
    func targets() throws {
        var step = StepPage(id: "service", kind: .form, title: "Service")
        step.fields = [field(.choice, id: "service", options: ["website"], other: true), field(.text, id: "note")]
        let typed = try AnswerTyping.answers(
            [("service", "other"), ("service.other", "A kiosk"), ("note", "x")], step: step, locale: "en")
        #expect(typed == ["service": .string("other"), "service.other": .string("A kiosk"), "note": .string("x")])

        do {
            _ = try AnswerTyping.answers([("nosuch", "1")], step: step, locale: "en")
            Issue.record("an unknown field was accepted")
        } catch {
            #expect(error.code == .dataError)
            #expect(error.message.contains("\"nosuch\" is not a field of step \"service\""))
            #expect(error.message.contains("service, note"))
        }
        // note.other: note offers no Other.
        #expect(throws: CLIError.self) { try AnswerTyping.target("note.other", in: step) }
    }

    @Test("a label on screen can be typed: case and white space aside (U+202F too), times of day as they are said")
    func labelsAsTyped() throws {
        // Time slots as flowd.time-slots labels them in English: a narrow no-break space before AM/PM.
        var time = StepField(id: "time", type: .choice, label: "Time")
        time.options = [("09:30", "9:30\u{202F}AM"), ("12:00", "12:00\u{202F}PM"), ("14:30", "2:30\u{202F}PM")].map {
            ChoiceOption(id: $0.0, label: $0.1)
        }
        for (typed, id) in [
            ("9:30 AM", "09:30"), ("9:30am", "09:30"), ("09:30", "09:30"), ("9:30", "09:30"), ("9:30 a.m.", "09:30"),
            ("2:30 pm", "14:30"), ("2:30PM", "14:30"), ("14:30", "14:30"), ("12:00 PM", "12:00"), ("12pm", "12:00"),
        ] {
            #expect(try value(typed, time) == .string(id), "\(typed)")
        }
        for wrong in ["9", "2:30", "9:3 am", "13:00 pm", "25:00", "9:30 xm"] {
            #expect(refusal(wrong, time) != nil, "\(wrong)")
        }
        // Any label: case and spacing aside.
        var service = StepField(id: "service", type: .choice, label: "Service")
        service.options = [ChoiceOption(id: "app", label: "A desktop\u{00A0}app")]
        #expect(try value("a  Desktop app", service) == .string("app"))
        #expect(try value("A DESKTOP APP", service) == .string("app"))
    }

    @Test("times as French writes them: 14h30, 14 h 30, 9h")
    func frenchTimes() throws {
        var time = StepField(id: "time", type: .choice, label: "Heure")
        time.options = ["09:00", "09:30", "14:30"].map { ChoiceOption(id: $0, label: $0) }
        for (typed, id) in [("14h30", "14:30"), ("14 h 30", "14:30"), ("9h", "09:00"), ("9h30", "09:30"), ("09H30", "09:30")] {
            #expect(try value(typed, time) == .string(id), "\(typed)")
        }
        for wrong in ["h", "14h3", "25h00", "9h300", "h30"] {
            #expect(refusal(wrong, time) != nil, "\(wrong)")
        }
    }

    @Test("what an East Asian input method types: full-width digits and commas, the ideographic comma")
    func fullWidth() throws {
        #expect(AnswerTyping.halfWidth("１２，ａＢ\u{3000}x") == "12,aB x")
        #expect(AnswerTyping.halfWidth("山田　太郎") == "山田 太郎")
        #expect(AnswerTyping.listItems("１、３，5, 7") == ["1", "3", "5", "7"])
        #expect(try value("１２", field(.number)) == .int64(12))
        #expect(try value("２．５", field(.number)) == .double(2.5))
        #expect(try value("ｙｅｓ", field(.toggle)) == .bool(true))
        let days = field(.multichoice, options: ["mon", "tue", "wed"])
        #expect(try value("mon、wed", days) == .strings(["mon", "wed"]))
        #expect(try value("ｍｏｎ，ｔｕｅ", days) == .strings(["mon", "tue"]))
        // Free text keeps what was typed.
        #expect(try value("０３－１２３４", field(.text)) == .string("０３－１２３４"))
    }
}
