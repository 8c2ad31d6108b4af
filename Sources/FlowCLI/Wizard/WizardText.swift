import FlowEngine

/// The wizard's own strings: the few that are about the terminal (how to go
/// back or quit, how to resume) and the rule hints of the wizard and `show`
/// (``FieldRules``), which are not in flowd's built-in catalog. Everything
/// else the wizard shows comes from the daemon (labels, errors, "Continue",
/// "Back", "Not given") or from `Strings.builtin` ("Step N of M", yes/no), in
/// the session's language. Same locales as the catalog.
enum WizardText: String, CaseIterable {
    /// How to answer, go back and quit.
    case intro
    /// "{id}" and "{command}": printed on Ctrl-C and on quit.
    case saved
    /// The quit action.
    case quit
    /// The action that asks the step's questions again.
    case change
    /// The review action that opens a step ("1–3: Edit a step").
    case editStep
    /// A number field got something else.
    case enterNumber
    /// "{yes}" and "{no}": a toggle got something else.
    case answerYesNo
    /// "{max}": a choice got something else.
    case chooseOption
    /// "{max}": a multiple choice got something else.
    case chooseOptions
    /// `:back` on the first step.
    case firstStep
    /// Resuming while a submit runs.
    case waiting
    /// Standard input ended.
    case inputEnded
    /// Between two rule hints (", ").
    case ruleSeparator
    /// "{min}" and "{max}": a text's length range.
    case lengthRange
    /// "{min}": a text's least length.
    case lengthMin
    /// "{max}": a text's greatest length.
    case lengthMax
    /// A number must be whole.
    case wholeNumber
    /// "{min}": the fewest options to pick.
    case pickAtLeast
    /// "{max}": the most options to pick.
    case pickAtMost
    /// "{date}": the exclusive lower bound of a date.
    case afterDate
    /// "{date}": the exclusive upper bound of a date.
    case beforeDate
    /// A toggle must be on.
    case mustBeYes

    private static let table: [String: [WizardText: String]] = [
        "en": [
            .intro: "Answer each question and press Enter. Type :back to go back or :quit to stop; your answers are kept.",
            .saved: "Session {id} is saved. Resume it with: {command}",
            .quit: "Quit", .change: "Change answers", .editStep: "Edit a step",
            .enterNumber: "Enter a number.", .answerYesNo: "Answer {yes} or {no}.",
            .chooseOption: "Choose a number from 1 to {max}.",
            .chooseOptions: "Choose numbers from 1 to {max}, separated by commas.",
            .firstStep: "This is the first step.", .waiting: "A submit is running; waiting for it to end.",
            .inputEnded: "The input ended.",
            .ruleSeparator: ", ", .lengthRange: "{min}–{max} characters",
            .lengthMin: "at least {min} characters", .lengthMax: "at most {max} characters",
            .wholeNumber: "whole number", .pickAtLeast: "pick at least {min}", .pickAtMost: "pick at most {max}",
            .afterDate: "after {date}", .beforeDate: "before {date}", .mustBeYes: "must be yes",
        ],
        "es": [
            .intro: "Responde a cada pregunta y pulsa Intro. Escribe :back para volver o :quit para salir; tus respuestas se guardan.",
            .saved: "La sesión {id} está guardada. Continúala con: {command}",
            .quit: "Salir", .change: "Cambiar respuestas", .editStep: "Editar un paso",
            .enterNumber: "Escribe un número.", .answerYesNo: "Responde {yes} o {no}.",
            .chooseOption: "Elige un número del 1 al {max}.",
            .chooseOptions: "Elige números del 1 al {max}, separados por comas.",
            .firstStep: "Este es el primer paso.", .waiting: "Se está enviando; esperando a que termine.",
            .inputEnded: "La entrada ha terminado.",
            .ruleSeparator: ", ", .lengthRange: "entre {min} y {max} caracteres",
            .lengthMin: "al menos {min} caracteres", .lengthMax: "como máximo {max} caracteres",
            .wholeNumber: "número entero", .pickAtLeast: "elige al menos {min}", .pickAtMost: "elige como máximo {max}",
            .afterDate: "posterior al {date}", .beforeDate: "anterior al {date}", .mustBeYes: "debe ser «sí»",
        ],
        "fr": [
            .intro: "Répondez à chaque question puis appuyez sur Entrée. Tapez :back pour revenir ou :quit pour arrêter ; vos réponses sont conservées.",
            .saved: "La session {id} est enregistrée. Reprenez-la avec : {command}",
            .quit: "Quitter", .change: "Modifier les réponses", .editStep: "Modifier une étape",
            .enterNumber: "Saisissez un nombre.", .answerYesNo: "Répondez {yes} ou {no}.",
            .chooseOption: "Choisissez un nombre de 1 à {max}.",
            .chooseOptions: "Choisissez des nombres de 1 à {max}, séparés par des virgules.",
            .firstStep: "C'est la première étape.", .waiting: "Un envoi est en cours ; attente de la fin.",
            .inputEnded: "L'entrée est terminée.",
            .ruleSeparator: ", ", .lengthRange: "de {min} à {max} caractères",
            .lengthMin: "au moins {min} caractères", .lengthMax: "au plus {max} caractères",
            .wholeNumber: "nombre entier", .pickAtLeast: "choisissez-en au moins {min}", .pickAtMost: "choisissez-en au plus {max}",
            .afterDate: "après le {date}", .beforeDate: "avant le {date}", .mustBeYes: "doit être « oui »",
        ],
        "de": [
            .intro: "Beantworten Sie jede Frage und drücken Sie die Eingabetaste. Mit :back geht es zurück, mit :quit beenden Sie; Ihre Antworten bleiben erhalten.",
            .saved: "Sitzung {id} ist gespeichert. Fortsetzen mit: {command}",
            .quit: "Beenden", .change: "Antworten ändern", .editStep: "Einen Schritt bearbeiten",
            .enterNumber: "Bitte eine Zahl eingeben.", .answerYesNo: "Bitte mit {yes} oder {no} antworten.",
            .chooseOption: "Bitte eine Zahl von 1 bis {max} wählen.",
            .chooseOptions: "Bitte Zahlen von 1 bis {max} wählen, durch Kommas getrennt.",
            .firstStep: "Dies ist der erste Schritt.", .waiting: "Das Senden läuft; warte auf das Ende.",
            .inputEnded: "Die Eingabe ist zu Ende.",
            .ruleSeparator: ", ", .lengthRange: "{min}–{max} Zeichen",
            .lengthMin: "mindestens {min} Zeichen", .lengthMax: "höchstens {max} Zeichen",
            .wholeNumber: "ganze Zahl", .pickAtLeast: "mindestens {min} auswählen", .pickAtMost: "höchstens {max} auswählen",
            .afterDate: "nach dem {date}", .beforeDate: "vor dem {date}", .mustBeYes: "muss „Ja“ sein",
        ],
        "it": [
            .intro: "Rispondi a ogni domanda e premi Invio. Scrivi :back per tornare indietro o :quit per uscire; le risposte restano salvate.",
            .saved: "La sessione {id} è salvata. Riprendila con: {command}",
            .quit: "Esci", .change: "Modifica le risposte", .editStep: "Modifica un passaggio",
            .enterNumber: "Inserisci un numero.", .answerYesNo: "Rispondi {yes} o {no}.",
            .chooseOption: "Scegli un numero da 1 a {max}.",
            .chooseOptions: "Scegli dei numeri da 1 a {max}, separati da virgole.",
            .firstStep: "Questo è il primo passaggio.", .waiting: "Invio in corso; attendo che finisca.",
            .inputEnded: "L'input è terminato.",
            .ruleSeparator: ", ", .lengthRange: "da {min} a {max} caratteri",
            .lengthMin: "almeno {min} caratteri", .lengthMax: "al massimo {max} caratteri",
            .wholeNumber: "numero intero", .pickAtLeast: "scegline almeno {min}", .pickAtMost: "scegline al massimo {max}",
            .afterDate: "dopo il {date}", .beforeDate: "prima del {date}", .mustBeYes: "deve essere «sì»",
        ],
        "pt-BR": [
            .intro: "Responda a cada pergunta e pressione Enter. Digite :back para voltar ou :quit para sair; suas respostas ficam salvas.",
            .saved: "A sessão {id} está salva. Continue com: {command}",
            .quit: "Sair", .change: "Alterar respostas", .editStep: "Editar uma etapa",
            .enterNumber: "Digite um número.", .answerYesNo: "Responda {yes} ou {no}.",
            .chooseOption: "Escolha um número de 1 a {max}.",
            .chooseOptions: "Escolha números de 1 a {max}, separados por vírgulas.",
            .firstStep: "Esta é a primeira etapa.", .waiting: "Um envio está em andamento; aguardando o fim.",
            .inputEnded: "A entrada terminou.",
            .ruleSeparator: ", ", .lengthRange: "de {min} a {max} caracteres",
            .lengthMin: "pelo menos {min} caracteres", .lengthMax: "no máximo {max} caracteres",
            .wholeNumber: "número inteiro", .pickAtLeast: "escolha pelo menos {min}", .pickAtMost: "escolha no máximo {max}",
            .afterDate: "após {date}", .beforeDate: "antes de {date}", .mustBeYes: "deve ser “sim”",
        ],
        "ja": [
            .intro: "各質問に答えて Enter キーを押してください。:back で戻り、:quit で中断します。回答は保存されます。",
            .saved: "セッション {id} は保存されました。再開するには: {command}",
            .quit: "終了", .change: "回答を変更", .editStep: "ステップを編集",
            .enterNumber: "数値を入力してください。", .answerYesNo: "{yes} または {no} で答えてください。",
            .chooseOption: "1 から {max} までの番号を選んでください。",
            .chooseOptions: "1 から {max} までの番号をカンマ区切りで選んでください。",
            .firstStep: "これは最初のステップです。", .waiting: "送信中です。終了を待っています。",
            .inputEnded: "入力が終了しました。",
            .ruleSeparator: "、", .lengthRange: "{min}〜{max} 文字",
            .lengthMin: "{min} 文字以上", .lengthMax: "{max} 文字以内",
            .wholeNumber: "整数", .pickAtLeast: "{min} 個以上選択", .pickAtMost: "{max} 個まで選択",
            .afterDate: "{date} より後", .beforeDate: "{date} より前", .mustBeYes: "「はい」が必要",
        ],
        "ko": [
            .intro: "각 질문에 답하고 Enter 키를 누르세요. :back 으로 돌아가고 :quit 으로 중단합니다. 답변은 저장됩니다.",
            .saved: "세션 {id}이(가) 저장되었습니다. 다시 시작하려면: {command}",
            .quit: "종료", .change: "답변 변경", .editStep: "단계 편집",
            .enterNumber: "숫자를 입력하세요.", .answerYesNo: "{yes} 또는 {no}(으)로 답하세요.",
            .chooseOption: "1부터 {max}까지의 번호를 고르세요.",
            .chooseOptions: "1부터 {max}까지의 번호를 쉼표로 구분해 고르세요.",
            .firstStep: "첫 번째 단계입니다.", .waiting: "제출 중입니다. 끝날 때까지 기다립니다.",
            .inputEnded: "입력이 끝났습니다.",
            .ruleSeparator: ", ", .lengthRange: "{min}–{max}자",
            .lengthMin: "{min}자 이상", .lengthMax: "{max}자 이하",
            .wholeNumber: "정수", .pickAtLeast: "{min}개 이상 선택", .pickAtMost: "{max}개 이하 선택",
            .afterDate: "{date}보다 늦은 날짜", .beforeDate: "{date}보다 이른 날짜", .mustBeYes: "'예'여야 함",
        ],
        "zh-Hans": [
            .intro: "回答每个问题后按 Enter。输入 :back 返回，输入 :quit 退出；您的回答会被保存。",
            .saved: "会话 {id} 已保存。继续请运行：{command}",
            .quit: "退出", .change: "修改回答", .editStep: "编辑某一步",
            .enterNumber: "请输入一个数字。", .answerYesNo: "请回答{yes}或{no}。",
            .chooseOption: "请选择 1 到 {max} 之间的编号。",
            .chooseOptions: "请选择 1 到 {max} 之间的编号，用逗号分隔。",
            .firstStep: "这是第一步。", .waiting: "正在提交，等待完成。",
            .inputEnded: "输入已结束。",
            .ruleSeparator: "，", .lengthRange: "{min}–{max} 个字符",
            .lengthMin: "至少 {min} 个字符", .lengthMax: "最多 {max} 个字符",
            .wholeNumber: "整数", .pickAtLeast: "至少选择 {min} 项", .pickAtMost: "最多选择 {max} 项",
            .afterDate: "晚于 {date}", .beforeDate: "早于 {date}", .mustBeYes: "必须为“是”",
        ],
        "zh-Hant": [
            .intro: "回答每個問題後按 Enter。輸入 :back 返回，輸入 :quit 離開；您的回答會被保存。",
            .saved: "工作階段 {id} 已儲存。繼續請執行：{command}",
            .quit: "離開", .change: "修改回答", .editStep: "編輯某一步",
            .enterNumber: "請輸入一個數字。", .answerYesNo: "請回答{yes}或{no}。",
            .chooseOption: "請選擇 1 到 {max} 之間的編號。",
            .chooseOptions: "請選擇 1 到 {max} 之間的編號，以逗號分隔。",
            .firstStep: "這是第一步。", .waiting: "正在提交，等待完成。",
            .inputEnded: "輸入已結束。",
            .ruleSeparator: "，", .lengthRange: "{min}–{max} 個字元",
            .lengthMin: "至少 {min} 個字元", .lengthMax: "最多 {max} 個字元",
            .wholeNumber: "整數", .pickAtLeast: "至少選擇 {min} 項", .pickAtMost: "最多選擇 {max} 項",
            .afterDate: "晚於 {date}", .beforeDate: "早於 {date}", .mustBeYes: "必須為「是」",
        ],
    ]

    /// The locales with a translation (the same as flowd's catalog).
    static var locales: [String] { Strings.locales.filter { table[$0] != nil } }

    /// The text in `locale` (with the catalog's fallback), placeholders filled.
    func text(_ locale: String, _ arguments: [String: String] = [:]) -> String {
        let catalogLocale = Strings.builtin.catalogLocale(for: locale)
        let template = Self.table[catalogLocale]?[self] ?? Self.table["en"]?[self] ?? rawValue
        return Strings.fill(template, arguments)
    }
}
