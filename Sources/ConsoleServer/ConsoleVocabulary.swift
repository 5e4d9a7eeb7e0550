internal import Foundation
internal import MuEvalWire
internal import WireProtocol

/// The event class names the pages use, from the one Swift vocabulary (`EventClass`,
/// `ObserverNote.eventClass`), so that no script or page spells them itself: scripts import them from
/// /assets/vocabulary.js, made here at start-up; page bodies name them as `{{class:userInput}}`.
enum ConsoleVocabulary {
    /// Each class by the name scripts use for it: `EventClass`'s case names, and `observerNote`.
    static let classes: [String: String] = Dictionary(uniqueKeysWithValues:
        EventClass.allCases.map { ("\($0)", $0.rawValue) } + [("observerNote", ObserverNote.eventClass)])

    static let moduleName = "vocabulary.js"

    /// The ES module: `export const EventClass = {userInput: "UserInputEvent", …}`.
    static var module: String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // The names and values are muevald's own constants; JSON quotes them as JavaScript would.
        let object = (try? encoder.encode(classes)).flatMap { String(data: $0, encoding: .utf8) } ?? "{}"
        return """
            // Made by muevald from its Swift vocabulary (EventClass, ObserverNote.eventClass): the event class
            // names every page uses. Not a file in the repository; see ConsoleVocabulary.swift.
            export const EventClass = Object.freeze(\(object));

            """
    }

    /// A page body with its `{{class:NAME}}` placeholders filled.
    static func fill(_ body: String) -> String {
        classes.reduce(body) { text, entry in text.replacingOccurrences(of: "{{class:\(entry.key)}}", with: entry.value) }
    }
}
