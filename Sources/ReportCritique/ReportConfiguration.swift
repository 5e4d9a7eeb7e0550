public import Foundation
public import SessionAnalysis

/// The report's sections, in the order a configuration lists them.
public enum SectionKind: String, Codable, CaseIterable, Sendable {
    case overview, timeline, heatmaps, navigation, durations, gestures, problems, notes, tasks, fluidity, face

    /// Parses `overview,heatmaps,…`.
    public static func list(_ text: String) throws -> [SectionKind] {
        try text.split(separator: ",").map { name in
            let name = name.trimmingCharacters(in: .whitespaces)
            guard let kind = SectionKind(rawValue: name) else { throw ReportError.unknownSection(name) }
            return kind
        }
    }
}

/// What a report contains and where it goes: the thesis's persistent ReportConfiguration (2.6.2, Figure 2.21).
/// Every field is optional in its JSON, so a saved configuration names only what it changes.
public struct ReportConfiguration: Codable, Sendable, Equatable {
    public var sections: [SectionKind] = SectionKind.allCases
    public var options = AnalysisOptions()
    /// The report directory; the command's `--out` wins over it.
    public var output: String?

    public init(sections: [SectionKind] = SectionKind.allCases, options: AnalysisOptions = AnalysisOptions(), output: String? = nil) {
        self.sections = sections
        self.options = options
        self.output = output
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        sections = try container.decodeIfPresent([SectionKind].self, forKey: .sections) ?? SectionKind.allCases
        options = try container.decodeIfPresent(AnalysisOptions.self, forKey: .options) ?? AnalysisOptions()
        output = try container.decodeIfPresent(String.self, forKey: .output)
    }
}

/// Named report configurations, one JSON file each in `$XDG_CONFIG_HOME/mueval/reports/` (else `~/.config/mueval/reports/`).
public struct ReportConfigurationStore: Sendable {
    public let directory: String

    public init(directory: String = ReportConfigurationStore.defaultDirectory()) {
        self.directory = directory
    }

    public static func defaultDirectory(environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        let base = environment["XDG_CONFIG_HOME"].flatMap { $0.isEmpty ? nil : $0 }
            ?? (environment["HOME"] ?? NSHomeDirectory()) + "/.config"
        return base + "/mueval/reports"
    }

    public func path(of name: String) -> String { directory + "/" + name + ".json" }

    public func save(_ configuration: ReportConfiguration, as name: String) throws {
        try Self.check(name)
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        try encoder.encode(configuration).write(to: URL(fileURLWithPath: path(of: name)), options: .atomic)
    }

    /// Checked as `save` checks it: the name comes from a command line or the console, and must stay a
    /// file in `directory`.
    public func load(_ name: String) throws -> ReportConfiguration {
        try Self.check(name)
        guard let data = FileManager.default.contents(atPath: path(of: name)) else {
            throw ReportError.noSuchConfiguration(name: name, directory: directory)
        }
        do {
            return try JSONDecoder().decode(ReportConfiguration.self, from: data)
        } catch {
            throw ReportError.unreadableConfiguration(path: path(of: name), reason: "\(error)")
        }
    }

    /// A name that is one file in `directory`: no path, no hidden file.
    private static func check(_ name: String) throws(ReportError) {
        guard !name.isEmpty, !name.contains("/"), !name.hasPrefix("."), !name.contains("\0") else { throw .badConfigurationName(name) }
    }

    /// Saved names, sorted.
    public func names() -> [String] {
        let files = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        return files.filter { $0.hasSuffix(".json") }.map { String($0.dropLast(5)) }.sorted()
    }
}

public enum ReportError: Error, CustomStringConvertible, Equatable {
    case unknownSection(String)
    case badConfigurationName(String)
    case noSuchConfiguration(name: String, directory: String)
    case unreadableConfiguration(path: String, reason: String)
    case cannotWrite(path: String, reason: String)
    case missingScreenshot(sha256: String, session: String)
    case cannotRead(path: String, reason: String)

    public var description: String {
        switch self {
        case .unknownSection(let name):
            "unknown report section \"\(name)\"; the sections are \(SectionKind.allCases.map(\.rawValue).joined(separator: ", "))"
        case .badConfigurationName(let name):
            "\"\(name)\" cannot name a report configuration: use letters, digits, - and _"
        case .noSuchConfiguration(let name, let directory):
            "no report configuration \"\(name)\" in \(directory); see `muevalctl report-config list`, or save one with `muevalctl report-config save \(name)`"
        case .unreadableConfiguration(let path, let reason):
            "cannot read the report configuration \(path): \(reason); fix or delete the file"
        case .cannotWrite(let path, let reason):
            "cannot write the report to \(path): \(reason)"
        case .missingScreenshot(let sha, let session):
            "session \(session) names screenshot \(sha) but its file has no such blob; the file may be damaged"
        case .cannotRead(let path, let reason):
            "cannot read the session file \(path): \(reason)"
        }
    }
}
