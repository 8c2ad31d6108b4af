import FlowKit
import FlowdPluginSupport

/// `flowd.date-window`: a date (`YYYY-MM-DD`) within a window relative to
/// today, in the daemon's time zone.
///
/// Options: `minDays` (default 0: today) and `maxDays` (default 30), whole
/// numbers from -36500 to 36500 with `minDays <= maxDays`. `{"minDays": 1,
/// "maxDays": 14}` means "tomorrow up to two weeks from today".
struct DateWindowValidator: FieldValidator, DeclaresOptions {
    static let name = "flowd.date-window"
    static let declaredOptions = [
        PluginOption(name: "minDays", type: .integer),
        PluginOption(name: "maxDays", type: .integer),
    ]

    func validate(_ value: AnswerValue, field: FieldInfo, context: PluginContext) async throws -> String? {
        let (first, last) = try Self.window(context.options, today: LocalCalendar.today())
        guard let text = value.textValue else {
            throw PluginConfigurationError(Self.name, "works on date fields only")
        }
        guard let date = CivilDate(iso: text) else { return DateWindowMessages.format(context.locale) }
        if date < first || date > last {
            return DateWindowMessages.outside(context.locale, ["first": first.description, "last": last.description])
        }
        return nil
    }

    /// "Within the next 30 days": the window in words, relative to today, so
    /// the same on every day. A window that spans today from both sides
    /// (`minDays` < 0 < `maxDays`) is not described.
    func describeRule(field: FieldInfo, context: PluginContext) async throws -> String? {
        let (minDays, maxDays) = try Self.days(context.options)
        let m = DateWindowMessages.self
        let message: LocalizedMessage
        switch (minDays, maxDays) {
        case (0, 0): message = m.today
        case (1, 1): message = m.tomorrow
        case (-1, -1): message = m.yesterday
        case (0, 1): message = m.todayOrTomorrow
        case (-1, 0): message = m.yesterdayOrToday
        case (0, let last) where last > 1: message = m.withinNext
        case (let first, 0) where first < -1: message = m.withinPast
        case (let first, let last) where first == last && first > 1: message = m.inDays
        case (let first, let last) where first == last && first < -1: message = m.daysAgo
        case (let first, _) where first >= 1: message = m.between
        case (_, let last) where last <= -1: message = m.betweenAgo
        default: return nil
        }
        let (near, far) = maxDays <= 0 ? (-maxDays, -minDays) : (minDays, maxDays)
        return message(context.locale, [
            "days": String(max(abs(minDays), abs(maxDays))), "min": String(near), "max": String(far),
        ])
    }

    /// `minDays` and `maxDays` from `values`, checked.
    static func days(_ values: [String: JSONValue]) throws -> (minDays: Int, maxDays: Int) {
        let options = try PluginOptions(values, capability: name, declared: declaredOptions)
        let minDays = try options.integer("minDays", in: -36500...36500) ?? 0
        let maxDays = try options.integer("maxDays", in: -36500...36500) ?? 30
        guard minDays <= maxDays else {
            throw PluginConfigurationError(name, "\"minDays\" must not be greater than \"maxDays\"")
        }
        return (minDays, maxDays)
    }

    /// The first and last allowed day for `options`, counted from `today`.
    static func window(_ values: [String: JSONValue], today: CivilDate) throws -> (CivilDate, CivilDate) {
        let (minDays, maxDays) = try days(values)
        guard let first = today.adding(days: minDays), let last = today.adding(days: maxDays) else {
            throw PluginConfigurationError(name, "the window leaves the calendar (the years 1 to 9999)")
        }
        return (first, last)
    }
}

enum DateWindowMessages {
    static let format = LocalizedMessage([
        "en": "Enter a date as YYYY-MM-DD.",
        "de": "Geben Sie ein Datum als JJJJ-MM-TT ein.",
        "fr": "Saisissez une date au format AAAA-MM-JJ.",
        "es": "Introduzca una fecha con el formato AAAA-MM-DD.",
        "it": "Inserisca una data nel formato AAAA-MM-GG.",
        "pt-BR": "Digite uma data no formato AAAA-MM-DD.",
        "ja": "日付を YYYY-MM-DD の形式で入力してください。",
        "ko": "날짜를 YYYY-MM-DD 형식으로 입력하세요.",
        "zh-Hans": "请按 YYYY-MM-DD 格式输入日期。",
        "zh-Hant": "請以 YYYY-MM-DD 格式輸入日期。",
    ])
    static let outside = LocalizedMessage([
        "en": "Choose a date from {first} to {last}.",
        "de": "Wählen Sie ein Datum vom {first} bis zum {last}.",
        "fr": "Choisissez une date du {first} au {last}.",
        "es": "Elija una fecha del {first} al {last}.",
        "it": "Scelga una data dal {first} al {last}.",
        "pt-BR": "Escolha uma data de {first} a {last}.",
        "ja": "{first} から {last} までの日付を選んでください。",
        "ko": "{first}부터 {last}까지의 날짜를 선택하세요.",
        "zh-Hans": "请选择 {first} 至 {last} 之间的日期。",
        "zh-Hant": "請選擇 {first} 至 {last} 之間的日期。",
    ])

    // Descriptions of the window (`describeRule`): relative to today, so the
    // same on every day. `{days}` is at least 2, `{min}` at least 1.

    static let today = LocalizedMessage([
        "en": "Today", "de": "Heute", "fr": "Aujourd’hui", "es": "Hoy", "it": "Oggi", "pt-BR": "Hoje",
        "ja": "今日", "ko": "오늘", "zh-Hans": "今天", "zh-Hant": "今天",
    ])
    static let tomorrow = LocalizedMessage([
        "en": "Tomorrow", "de": "Morgen", "fr": "Demain", "es": "Mañana", "it": "Domani", "pt-BR": "Amanhã",
        "ja": "明日", "ko": "내일", "zh-Hans": "明天", "zh-Hant": "明天",
    ])
    static let yesterday = LocalizedMessage([
        "en": "Yesterday", "de": "Gestern", "fr": "Hier", "es": "Ayer", "it": "Ieri", "pt-BR": "Ontem",
        "ja": "昨日", "ko": "어제", "zh-Hans": "昨天", "zh-Hant": "昨天",
    ])
    static let todayOrTomorrow = LocalizedMessage([
        "en": "Today or tomorrow", "de": "Heute oder morgen", "fr": "Aujourd’hui ou demain", "es": "Hoy o mañana",
        "it": "Oggi o domani", "pt-BR": "Hoje ou amanhã", "ja": "今日または明日", "ko": "오늘 또는 내일",
        "zh-Hans": "今天或明天", "zh-Hant": "今天或明天",
    ])
    static let yesterdayOrToday = LocalizedMessage([
        "en": "Yesterday or today", "de": "Gestern oder heute", "fr": "Hier ou aujourd’hui", "es": "Ayer u hoy",
        "it": "Ieri o oggi", "pt-BR": "Ontem ou hoje", "ja": "昨日または今日", "ko": "어제 또는 오늘",
        "zh-Hans": "昨天或今天", "zh-Hant": "昨天或今天",
    ])
    static let withinNext = LocalizedMessage([
        "en": "Within the next {days} days",
        "de": "Innerhalb der nächsten {days} Tage",
        "fr": "Dans les {days} prochains jours",
        "es": "En los próximos {days} días",
        "it": "Entro i prossimi {days} giorni",
        "pt-BR": "Nos próximos {days} dias",
        "ja": "今日から {days} 日以内",
        "ko": "오늘부터 {days}일 이내",
        "zh-Hans": "今天起 {days} 天内",
        "zh-Hant": "今天起 {days} 天內",
    ])
    static let withinPast = LocalizedMessage([
        "en": "Within the past {days} days",
        "de": "Innerhalb der letzten {days} Tage",
        "fr": "Dans les {days} derniers jours",
        "es": "En los últimos {days} días",
        "it": "Negli ultimi {days} giorni",
        "pt-BR": "Nos últimos {days} dias",
        "ja": "過去 {days} 日以内",
        "ko": "지난 {days}일 이내",
        "zh-Hans": "过去 {days} 天内",
        "zh-Hant": "過去 {days} 天內",
    ])
    static let inDays = LocalizedMessage([
        "en": "Exactly {days} days from today",
        "de": "Genau {days} Tage ab heute",
        "fr": "Exactement dans {days} jours",
        "es": "Exactamente dentro de {days} días",
        "it": "Esattamente tra {days} giorni",
        "pt-BR": "Exatamente daqui a {days} dias",
        "ja": "ちょうど {days} 日後",
        "ko": "정확히 {days}일 후",
        "zh-Hans": "正好 {days} 天后",
        "zh-Hant": "正好 {days} 天後",
    ])
    static let daysAgo = LocalizedMessage([
        "en": "Exactly {days} days ago",
        "de": "Genau vor {days} Tagen",
        "fr": "Il y a exactement {days} jours",
        "es": "Hace exactamente {days} días",
        "it": "Esattamente {days} giorni fa",
        "pt-BR": "Exatamente há {days} dias",
        "ja": "ちょうど {days} 日前",
        "ko": "정확히 {days}일 전",
        "zh-Hans": "正好 {days} 天前",
        "zh-Hant": "正好 {days} 天前",
    ])
    static let between = LocalizedMessage([
        "en": "Between {min} and {max} days from today",
        "de": "Zwischen {min} und {max} Tagen ab heute",
        "fr": "Entre {min} et {max} jours à partir d’aujourd’hui",
        "es": "Entre {min} y {max} días a partir de hoy",
        "it": "Tra {min} e {max} giorni da oggi",
        "pt-BR": "Entre {min} e {max} dias a partir de hoje",
        "ja": "今日から {min}〜{max} 日後",
        "ko": "오늘부터 {min}~{max}일 후",
        "zh-Hans": "今天起 {min} 至 {max} 天后",
        "zh-Hant": "今天起 {min} 至 {max} 天後",
    ])
    static let betweenAgo = LocalizedMessage([
        "en": "Between {min} and {max} days ago",
        "de": "Vor {min} bis {max} Tagen",
        "fr": "Il y a entre {min} et {max} jours",
        "es": "Hace entre {min} y {max} días",
        "it": "Tra {min} e {max} giorni fa",
        "pt-BR": "Entre {min} e {max} dias atrás",
        "ja": "{min}〜{max} 日前",
        "ko": "{min}~{max}일 전",
        "zh-Hans": "{min} 至 {max} 天前",
        "zh-Hant": "{min} 至 {max} 天前",
    ])
}
