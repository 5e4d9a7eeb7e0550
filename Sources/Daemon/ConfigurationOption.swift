internal import Foundation
internal import TOMLKit

/// One setting: its key in the config file (`section.name`), its environment variable, and how
/// to apply a value. `all` (in DaemonConfiguration.swift) is the single list of settings;
/// config/muevald.toml documents each one.
struct ConfigurationOption: Sendable {
    enum Kind: Sendable {
        case string, integer, number, boolean
        /// A TOML array of strings; comma-separated in the environment.
        case stringList
        case choice([String])
        case hostPort

        var allowed: String {
            switch self {
            case .string: "a string"
            case .integer: "an integer"
            case .number: "a number"
            case .boolean: "true or false"
            case .stringList: "a list of strings"
            case .choice(let choices): "one of " + choices.map { "\"\($0)\"" }.joined(separator: ", ")
            case .hostPort: "\"HOST:PORT\" (port 0-65535; [::1]:PORT for IPv6)"
            }
        }
    }

    let key: String
    let kind: Kind
    /// Whether SIGHUP can apply a change without a restart.
    var reloadable = false
    /// Shorter environment variables that users know from elsewhere (`MUEVAL_SOCKET`, shared with muevalctl).
    var aliases: [String] = []
    /// The value in effect, as the text `apply` reads (for `--check-config` and reloads).
    let current: @Sendable (DaemonConfiguration) -> String
    let apply: @Sendable (String, inout DaemonConfiguration) -> Bool

    /// `MUEVAL_SERVER_LISTEN` for `server.listen`, then the aliases.
    var environmentVariables: [String] { ["MUEVAL_" + key.uppercased().replacingOccurrences(of: ".", with: "_")] + aliases }

    static func named(_ key: String) -> ConfigurationOption? {
        all.first { $0.key == key }
    }
}

extension ConfigurationOption {
    /// A whole number above zero, and at most `maximum` where a larger one would overflow what reads it.
    static func positive<Number: FixedWidthInteger & Sendable>(_ key: String, _ path: WritableKeyPath<DaemonConfiguration, Number> & Sendable,
                                                              maximum: Int = .max, reloadable: Bool = false) -> ConfigurationOption {
        .init(key: key, kind: .integer, reloadable: reloadable, current: { String($0[keyPath: path]) }) { value, config in
            guard let number = Int(value), number > 0, number <= maximum, let typed = Number(exactly: number) else { return false }
            config[keyPath: path] = typed
            return true
        }
    }

    /// A number that `valid` accepts (seconds in a range, mostly).
    static func number(_ key: String, _ path: WritableKeyPath<DaemonConfiguration, Double> & Sendable, reloadable: Bool = false,
                       valid: @escaping @Sendable (Double) -> Bool) -> ConfigurationOption {
        .init(key: key, kind: .number, reloadable: reloadable, current: { String($0[keyPath: path]) }) { value, config in
            guard let number = Double(value), valid(number) else { return false }
            config[keyPath: path] = number
            return true
        }
    }

    static func flag(_ key: String, _ path: WritableKeyPath<DaemonConfiguration, Bool> & Sendable) -> ConfigurationOption {
        .init(key: key, kind: .boolean, current: { String($0[keyPath: path]) }) { value, config in
            guard let flag = Bool(value) else { return false }
            config[keyPath: path] = flag
            return true
        }
    }

    /// A string that may not be empty.
    static func text(_ key: String, _ path: WritableKeyPath<DaemonConfiguration, String> & Sendable) -> ConfigurationOption {
        .init(key: key, kind: .string, current: { $0[keyPath: path] }) { value, config in
            guard !value.isEmpty else { return false }
            config[keyPath: path] = value
            return true
        }
    }

    /// A string whose empty value means none.
    static func optionalText(_ key: String, _ path: WritableKeyPath<DaemonConfiguration, String?> & Sendable, reloadable: Bool = false,
                             aliases: [String] = []) -> ConfigurationOption {
        .init(key: key, kind: .string, reloadable: reloadable, aliases: aliases, current: { $0[keyPath: path] ?? "" }) { value, config in
            config[keyPath: path] = value.isEmpty ? nil : value
            return true
        }
    }
}

extension DaemonConfiguration {
    /// The effective configuration as a TOML file that muevald reads back (`muevald --check-config`),
    /// written by TOMLKit so that any value (quotes, newlines, control characters) stays valid TOML.
    public var rendered: String {
        let document = TOMLTable()
        for option in ConfigurationOption.all {
            let parts = option.key.split(separator: ".", maxSplits: 1).map(String.init)
            let section = document[parts[0]]?.table ?? TOMLTable()
            let value = option.current(self)
            let typed: TOMLValueConvertible = switch option.kind {
            case .integer: Int(value) ?? 0
            case .number: Double(value) ?? 0
            case .boolean: value == "true"
            case .stringList: TOMLArray(value.split(separator: ",").map(String.init))
            case .string, .choice, .hostPort: value
            }
            section[parts[1]] = typed
            document[parts[0]] = section
        }
        // Basic "…" strings on one line, as config/muevald.toml writes them.
        return document.convert(to: .toml, options: [.allowUnicodeStrings, .indentations]) + "\n"
    }

    /// This configuration with what a reload may change taken from `new`; and the settings that
    /// differ, split into those applied and those that need a restart.
    func reloaded(from new: DaemonConfiguration) -> (configuration: DaemonConfiguration, applied: [String], needRestart: [String]) {
        var result = self
        var applied: [String] = []
        var needRestart: [String] = []
        for option in ConfigurationOption.all where option.current(new) != option.current(self) {
            if option.reloadable, option.apply(option.current(new), &result) {
                applied.append(option.key)
            } else {
                needRestart.append(option.key)
            }
        }
        return (result, applied, needRestart)
    }
}
