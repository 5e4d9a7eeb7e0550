internal import Foundation
internal import SessionModel

/// The lab's settings checked before the store keeps them: a consent text there is to agree to, and profile
/// fields whose names, labels and choices stay within the limits and on one line.
struct PoolSettingsCheck {
    let limits: PoolLimits

    func consent(_ consent: String) throws(PoolError) {
        guard consent.contains(where: { !$0.isWhitespace }) else { throw .notConfigured }
        guard consent.utf8.count <= limits.maxConsentBytes else { throw .tooLong(what: "the consent text", limit: limits.maxConsentBytes) }
    }

    func fields(_ fields: [PoolField]) throws {
        guard fields.count <= limits.maxFields else { throw PoolError.tooMany(what: "profile fields", limit: limits.maxFields) }
        let check = ProfileCheck(fields: [], limits: limits)
        var names: Set<String> = []
        for field in fields {
            try StudyError.checkName(field.name, as: "profile field name")
            guard names.insert(field.name).inserted else { throw PoolError.duplicateField(field.name) }
            try check.text(field.label, what: "the label of \(field.name)")
            guard field.choices.count <= limits.maxFields else { throw PoolError.tooMany(what: "choices of \(field.name)", limit: limits.maxFields) }
            for choice in field.choices {
                try check.text(choice, what: "a choice of \(field.name)")
                // `|` separates a requirement's alternatives, `,` the choices on the command line.
                guard !choice.contains("|"), !choice.contains(",") else { throw PoolError.badField("\(field.name)=\(field.label):\(choice)") }
            }
        }
    }
}

/// A profile checked against the pool's fields: what an enrolling stranger typed, bounded and on one line.
struct ProfileCheck {
    let fields: [PoolField]
    let limits: PoolLimits

    func checked(_ profile: [String: String]) throws(PoolError) -> [String: String] {
        for name in profile.keys.sorted() where !fields.contains(where: { $0.name == name }) {
            throw .unknownField(name, known: fields.map(\.name))
        }
        var checked: [String: String] = [:]
        for field in fields {
            let value = profile[field.name].map { $0.trimmingCharacters(in: .whitespaces) } ?? ""
            guard !value.isEmpty else { throw .missingField(field.name, label: field.label) }
            if field.isFreeText {
                try text(value, what: "the answer to \"\(field.label)\"")
            } else if !field.choices.contains(value) {
                throw .notAChoice(field: field.name, value: value, choices: field.choices)
            }
            checked[field.name] = value
        }
        return checked
    }

    /// One line of at most `limits.maxProfileText` bytes: no control characters, which a terminal
    /// listing the pool would obey, and none of the characters that break a line or reorder what follows
    /// them, with which an answer could make `pool list` show another tester's answers.
    func text(_ text: String, what: String) throws(PoolError) {
        guard text.utf8.count <= limits.maxProfileText else { throw .tooLong(what: what, limit: limits.maxProfileText) }
        guard !text.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else { throw .controlCharacters(what: what) }
        if let scalar = text.unicodeScalars.first(where: Self.isLayoutControl) {
            throw .layoutCharacter(what: what, scalar: "U+" + String(scalar.value, radix: 16, uppercase: true))
        }
    }

    /// The bidirectional embeddings, overrides, isolates and marks (U+202A–202E, U+2066–2069, U+200E,
    /// U+200F, U+061C) and the line and paragraph separators (U+2028, U+2029).
    static func isLayoutControl(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x202A...0x202E, 0x2066...0x2069, 0x200E, 0x200F, 0x061C, 0x2028, 0x2029: true
        default: false
        }
    }
}
