public import Foundation

/// The configuration table as data, for muevald.toml(5): `muevald --configuration-reference`
/// prints it and packaging/man/muevald-toml.py joins it with config/muevald.toml's comments, so
/// the manual lists exactly the settings, types, defaults and variables muevald knows.
public enum ConfigurationReference {
    struct Setting: Encodable {
        let key: String
        /// "string", "integer", "number", "boolean", "list": how the default is written in TOML.
        let type: String
        /// What a value may be, as error messages say it.
        let allowed: String
        let defaultValue: String
        let reloadable: Bool
        let environment: [String]
    }

    /// One JSON object per setting, in the table's order.
    public static func json(defaults: DaemonConfiguration = DaemonConfiguration()) throws -> Data {
        let settings = ConfigurationOption.all.map { option in
            Setting(key: option.key, type: option.kind.tomlType, allowed: option.kind.allowed,
                    defaultValue: option.current(defaults), reloadable: option.reloadable,
                    environment: option.environmentVariables)
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        return try encoder.encode(settings)
    }
}

extension ConfigurationOption.Kind {
    var tomlType: String {
        switch self {
        case .string, .choice, .hostPort: "string"
        case .integer: "integer"
        case .number: "number"
        case .boolean: "boolean"
        case .stringList: "list"
        }
    }
}
