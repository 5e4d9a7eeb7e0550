public import Foundation
internal import TOMLKit

/// Builds the configuration: defaults, then the config file, then `MUEVAL_*` environment
/// variables, then command-line flags (each later source wins).
public struct ConfigurationLoader {
    public var environment: [String: String]

    public init(environment: [String: String] = ProcessInfo.processInfo.environment) {
        self.environment = environment
    }

    /// - Parameters:
    ///   - file: a TOML file; nil reads none.
    ///   - flags: settings from the command line, by config key (`server.listen`).
    public func load(file: String?, flags: [String: String]) throws -> DaemonConfiguration {
        var configuration = DaemonConfiguration()
        if let file { try applyFile(file, to: &configuration) }
        for option in ConfigurationOption.all {
            for variable in option.environmentVariables.reversed() {
                guard let value = environment[variable] else { continue }
                try apply(option, value, to: &configuration, source: "environment variable \(variable)")
            }
        }
        for (key, value) in flags.sorted(by: { $0.key < $1.key }) {
            guard let option = ConfigurationOption.named(key) else { continue }
            try apply(option, value, to: &configuration, source: "option --\(key.split(separator: ".").last ?? "")")
        }
        return configuration
    }

    private func apply(_ option: ConfigurationOption, _ value: String, to configuration: inout DaemonConfiguration, source: String) throws {
        guard option.apply(value, &configuration) else {
            throw ConfigurationError("\(source): \"\(value)\" is not valid for \(option.key); expected \(option.kind.allowed)")
        }
    }

    private func applyFile(_ path: String, to configuration: inout DaemonConfiguration) throws {
        let text: String
        do {
            text = try String(contentsOfFile: path, encoding: .utf8)
        } catch {
            throw ConfigurationError("\(path): cannot read the config file (\(error.localizedDescription))")
        }
        let table: TOMLTable
        do {
            table = try TOMLTable(string: text)
        } catch let error as TOMLParseError {
            throw ConfigurationError("\(path):\(error.source.begin.line): \(error.description)")
        }
        for section in table.keys {
            guard let sectionTable = table[section]?.table else {
                throw ConfigurationError("\(path): \"\(section)\" must be a [section]; sections are \(Self.sections)")
            }
            // A subsection ([storage.postgres]) holds the keys of the options named "storage.postgres.KEY".
            var entries: [(key: String, value: TOMLValueConvertible?)] = []
            for name in sectionTable.keys {
                if let subsection = sectionTable[name]?.table {
                    entries += subsection.keys.map { ("\(section).\(name).\($0)", subsection[$0]) }
                } else {
                    entries.append(("\(section).\(name)", sectionTable[name]))
                }
            }
            for (key, value) in entries {
                guard let option = ConfigurationOption.named(key), let value else {
                    throw ConfigurationError("\(path): unknown setting \(key) (see config/muevald.toml for every setting)")
                }
                guard let text = Self.text(of: value, for: option.kind) else {
                    throw ConfigurationError("\(path): \(key) must be \(option.kind.allowed)")
                }
                try apply(option, text, to: &configuration, source: "\(path): \(key)")
            }
        }
    }

    private static var sections: String {
        Set(ConfigurationOption.all.map { $0.key.split(separator: ".")[0] }).sorted().joined(separator: ", ")
    }

    /// The value as the text `ConfigurationOption.apply` parses, when its TOML type fits the kind.
    private static func text(of value: TOMLValueConvertible, for kind: ConfigurationOption.Kind) -> String? {
        switch kind {
        case .integer: value.int.map(String.init)
        case .number: value.double.map { String($0) } ?? value.int.map(String.init)
        case .boolean: value.bool.map { String($0) }
        case .stringList:
            value.array.flatMap { array in
                let strings = array.map(\.string)
                return strings.contains(nil) ? nil : strings.compactMap { $0 }.joined(separator: ",")
            }
        case .string, .choice, .hostPort: value.string
        }
    }
}
