import FlowKit
import Testing

@testable import FlowEngine

/// Answers piped into texts: `{field}` and `{field|fallback}`.
@Suite struct PipingTests {
    static let flow = #"""
        {"format": 2, "id": "pipe", "title": "Pipe", "steps": [
          {"id": "about", "title": {"en": "About you", "de": "Über Sie"}, "fields": [
            {"id": "name", "type": "text", "label": {"en": "Name", "de": "Name"}},
            {"id": "service", "type": "choice", "label": "Service", "required": true,
             "options": [{"id": "web", "label": {"en": "A website", "de": "Eine Website"}}, {"id": "app", "label": "An app"}],
             "other": true},
            {"id": "kids", "type": "toggle", "label": "Children"}]},
          {"id": "pages", "title": {"en": "{service}, {name|friend}", "de": "{service}, {name|Freund}"},
           "description": {"en": "Children: {kids}", "de": "Kinder: {kids}"},
           "fields": [{"id": "count", "type": "number", "label": {"en": "How many pages should {service} have?", "de": "Wie viele Seiten soll {service} haben?"},
             "help": "{{literal}} and }} stay", "placeholder": "{name|}"}]},
          {"id": "bye", "kind": "content", "title": "Bye", "body": {"en": "{count} pages for {name|you}.", "de": "{count} Seiten für {name|Sie}."}}],
         "review": {"note": {"en": "We will call {name|you}.", "de": "Wir rufen {name|Sie} an."}},
         "submit": {"successMessage": {"en": "Thanks, {name|there}!", "de": "Danke, {name|und tschüss}!"}}}
        """#

    @Test("a piped label, title, description, help and body, in a second language, with fallbacks")
    func pipedInASecondLanguage() throws {
        var s = try Fixture.session(Fixture.flow(Self.flow), locale: "de")
        try s.set(["service": .text("web"), "kids": .bool(true)])
        try s.next()
        var page = s.currentStep()
        #expect(page.title == "Eine Website, Freund", "the option's label in German; the fallback without a name")
        #expect(page.description == "Kinder: Ja")
        #expect(page.fields[0].label == "Wie viele Seiten soll Eine Website haben?")
        #expect(page.fields[0].help == "{literal} and } stay")
        #expect(page.fields[0].placeholder == "", "an empty fallback")
        #expect(page.announcement == "Schritt 2 von 4, Eine Website, Freund")
        // The same session shown in English.
        let english = SessionPresenter(s, locale: "en").step()
        #expect(english.fields[0].label == "How many pages should A website have?")
        try s.back(now: 3)
        try s.set(["name": .text("Ada"), "service": .text("other"), "service.other": .text("Ein Shop")])
        try s.next()
        page = s.currentStep()
        #expect(page.title == "Ein Shop, Ada", "Other's text")
        // The step titles are resolved once per flow and locale; the answers
        // are piped in on every read, so a changed answer shows at once.
        #expect(s.path.map(\.title) == ["Über Sie", "Ein Shop, Ada", "Bye", "Übersicht"])
        #expect(SessionPresenter(s, locale: "en").step().title == "Ein Shop, Ada")
        #expect(SessionPresenter(s, locale: "en").progress().path.map(\.title)[0] == "About you")
        try s.set(["count": .integer(12)])
        try s.next()
        #expect(s.currentStep().body == "12 Seiten für Ada.")
        try s.next()
        #expect(s.currentStep().description == "Wir rufen Ada an.")
        #expect(s.review().note == "Wir rufen Ada an.")
        #expect(s.review().groups[1].title == "Ein Shop, Ada")
        #expect(s.review().groups[1].answers[0].label == "Wie viele Seiten soll Ein Shop haben?")
        _ = try s.beginSubmit(now: 9)
        #expect(s.currentStep().body == "Danke, Ada!")
        #expect(s.announcement == "Danke, Ada!")
    }

    @Test("an answer that is not given, off the path or hidden shows the fallback")
    func fallbacks() throws {
        var s = try Fixture.session(Fixture.flow(Self.flow))
        try s.set(["service": .text("app")])
        try s.next()
        try s.set(["count": .integer(3)])
        try s.next()
        #expect(s.currentStep().body == "3 pages for you.")
        try s.next()
        _ = try s.beginSubmit(now: 9)
        #expect(s.currentStep().body == "Thanks, there!")
    }

    @Test("in a format 1 file braces are plain text")
    func format1IsLiteral() throws {
        let flow = try Fixture.flow(#"""
            {"format": 1, "id": "t", "title": "T", "steps": [
              {"id": "a", "title": "Set {name}", "fields": [{"id": "name", "type": "text", "label": "Use {{ and }} or {name|x}"}]}]}
            """#)
        let s = try Fixture.session(flow)
        #expect(s.currentStep().title == "Set {name}")
        #expect(s.currentStep().fields[0].label == "Use {{ and }} or {name|x}")
        #expect(!flow.pipes)
    }

    @Test("lint: a placeholder names a field answered earlier on a path, never a secure one, and parses")
    func lint() {
        func problems(_ label: String, extra: String = "") -> [String] {
            Fixture.problems(#"""
                {"format": 2, "id": "t", "title": "T", "steps": [
                  {"id": "a", "title": "A", "fields": [
                    {"id": "service", "type": "choice", "label": "S", "options": [{"id": "web", "label": "Web"}, {"id": "app", "label": "App"}]},
                    {"id": "pin", "type": "secure", "label": "PIN"}],
                   "next": [{"if": {"field": "service", "equals": "web"}, "goto": "web"}, {"goto": "app"}]},
                  {"id": "web", "title": "Web", "fields": [{"id": "pages", "type": "number", "label": "P"}], "next": "end"},
                  {"id": "app", "title": "App", "fields": [{"id": "screens", "type": "number", "label": \#(label)}]},
                  {"id": "end", "title": "End", "fields": [{"id": "done", "type": "toggle", "label": "D"}]}]\#(extra)}
                """#).map(\.description)
        }
        #expect(problems(#""{service}: {screens|0}?""#) == [#"bad.json: steps[2].fields[0].label: the placeholder {screens} at position 12 names "screens" on this step; a text can show answers of earlier steps only"#])
        #expect(problems(#""How many, {servce}?""#) == [#"bad.json: steps[2].fields[0].label: the placeholder {servce} at position 11 names the unknown field "servce" (did you mean "service"?)"#])
        #expect(problems(#"{"en": "ok", "de": "{pin}"}"#) == [#"bad.json: steps[2].fields[0].label.de: the placeholder {pin} at position 1 names the secure field "pin"; a secure value is never shown"#])
        #expect(problems(#""{pages} pages""#) == [#"bad.json: steps[2].fields[0].label: the placeholder {pages} at position 1 names "pages" on step "web", which no path to this step passes through"#])
        #expect(problems(#""{done}""#).first?.contains("on the later step \"end\"") == true)
        #expect(problems(#""{ service}""#).first?.contains("at position 1: '{' starts a placeholder") == true)
        #expect(problems(#""{service""#).first?.contains("has no closing '}'") == true)
        #expect(problems(#""{service|a{b}""#).first?.contains("a fallback cannot contain '{'") == true)
        #expect(problems(#""{{service}} is fine""#).isEmpty)
        // Review and the success message come after every step.
        #expect(problems(#""S""#, extra: #", "review": {"note": "{pages|no} pages, {screens|no} screens"}"#).isEmpty)
        #expect(problems(#""S""#, extra: #", "submit": {"successMessage": "{pin}"}"#).first?.contains("secure") == true)
    }
}
