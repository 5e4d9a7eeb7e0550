public import Foundation

/// Why a scenario cannot be played; each message says where and what to change.
public enum ScenarioError: Error, CustomStringConvertible, Equatable {
    case unknownBuiltin(String, available: [String])
    case unreadable(path: String, reason: String)
    case invalid(path: String, reason: String)
    case inconsistent(String)

    public var description: String {
        switch self {
        case .unknownBuiltin(let name, let available):
            "no built-in scenario \"\(name)\" and no such file; built-in scenarios: \(available.joined(separator: ", "))"
        case .unreadable(let path, let reason):
            "cannot read scenario file \(path): \(reason)"
        case .invalid(let path, let reason):
            "scenario file \(path) is not valid JSON for a scenario (docs/SIMULATOR.md): \(reason)"
        case .inconsistent(let reason):
            "scenario is inconsistent: \(reason)"
        }
    }
}

public enum ScenarioLoader {
    /// A built-in scenario by name, or else a scenario file by path.
    public static func load(_ nameOrPath: String) throws(ScenarioError) -> Scenario {
        if let builtin = BuiltinScenarios.named(nameOrPath) { return builtin }
        guard FileManager.default.fileExists(atPath: nameOrPath) else {
            throw .unknownBuiltin(nameOrPath, available: BuiltinScenarios.names)
        }
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: nameOrPath))
        } catch {
            throw .unreadable(path: nameOrPath, reason: "\(error.localizedDescription)")
        }
        return try decode(data, source: nameOrPath)
    }

    public static func decode(_ data: Data, source: String) throws(ScenarioError) -> Scenario {
        let scenario: Scenario
        do {
            scenario = try JSONDecoder().decode(Scenario.self, from: data)
        } catch let error as DecodingError {
            throw .invalid(path: source, reason: describe(error))
        } catch {
            throw .invalid(path: source, reason: "\(error)")
        }
        try validate(scenario)
        return scenario
    }

    /// The scenario as a file would hold it: a starting point for writing one's own.
    public static func encode(_ scenario: Scenario) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        // Encoding plain value types cannot fail.
        return String(decoding: try! encoder.encode(scenario), as: UTF8.self)
    }

    /// Plays the tasks through without generating events, so that an unknown element or view, or a pop from
    /// the root, is reported when the file is loaded rather than in the middle of a run.
    public static func validate(_ scenario: Scenario) throws(ScenarioError) {
        var names = Set<String>()
        for view in scenario.views {
            guard names.insert(view.name).inserted else { throw .inconsistent("two views are named \"\(view.name)\"") }
            var ids = Set<String>()
            for element in view.elements where !ids.insert(element.id).inserted {
                throw .inconsistent("view \"\(view.name)\" has two elements with id \"\(element.id)\"")
            }
        }
        guard scenario.view(named: scenario.initialView) != nil else {
            throw .inconsistent("initialView \"\(scenario.initialView)\" is not among the views (\(scenario.views.map(\.name).joined(separator: ", ")))")
        }
        guard !scenario.tasks.isEmpty else { throw .inconsistent("there are no tasks: add at least one with steps") }
        let device = scenario.deviceModel
        guard device.width > 0, device.height > 0, (1...4).contains(device.scale) else {
            throw .inconsistent("device screen must have a positive size and a scale from 1 to 4")
        }
        var stack = [scenario.view(named: scenario.initialView)!]
        for task in scenario.tasks {
            for (index, step) in task.steps.enumerated() {
                let place = "task \"\(task.name)\", step \(index + 1) (\(step.do.rawValue))"
                let top = stack[stack.count - 1]
                if let id = step.on {
                    guard let element = top.element(id) else {
                        throw .inconsistent("\(place): view \"\(top.name)\" has no element \"\(id)\"; its elements: \(top.elements.map(\.id).joined(separator: ", "))")
                    }
                    if let row = step.row, !(0..<(element.rows?.count ?? 0)).contains(row) {
                        throw .inconsistent("\(place): \"\(id)\" has no row \(row) (rows count from 0)")
                    }
                    if step.do == .type, !element.acceptsText {
                        throw .inconsistent("\(place): \"\(id)\" is a \(element.class), which takes no text")
                    }
                } else if [.tap, .type, .swipe, .scroll, .drag].contains(step.do) {
                    throw .inconsistent("\(place): says which element with \"on\"")
                }
                if step.do == .type, step.text == nil { throw .inconsistent("\(place): says what is typed with \"text\"") }
                if step.do == .say, step.text?.isEmpty != false { throw .inconsistent("\(place): says what is said with \"text\"") }
                if [.custom, .exception].contains(step.do), step.name == nil { throw .inconsistent("\(place): needs a \"name\"") }
                if step.do == .rotate, SensorModel.orientations.contains(step.orientation ?? "") == false {
                    throw .inconsistent("\(place): \"orientation\" is one of \(SensorModel.orientations.joined(separator: ", "))")
                }
                switch step.navigation {
                case .push(let name)?, .modal(let name)?:
                    guard let view = scenario.view(named: name) else { throw .inconsistent("\(place): no view named \"\(name)\"") }
                    stack.append(view)
                case .pop?, .dismiss?:
                    guard stack.count > 1 else { throw .inconsistent("\(place): goes back from the root view \"\(top.name)\"") }
                    stack.removeLast()
                case nil:
                    if step.do == .navigate { throw .inconsistent("\(place): says where with push, modal, pop or dismiss") }
                }
            }
        }
    }

    private static func describe(_ error: DecodingError) -> String {
        func path(_ context: DecodingError.Context) -> String {
            let keys = context.codingPath.map { $0.intValue.map { "[\($0)]" } ?? ".\($0.stringValue)" }.joined()
            return keys.isEmpty ? "the top level" : keys
        }
        switch error {
        case .keyNotFound(let key, let context): return "\(path(context)): \"\(key.stringValue)\" is missing"
        case .typeMismatch(_, let context), .valueNotFound(_, let context), .dataCorrupted(let context):
            return "\(path(context)): \(context.debugDescription)"
        @unknown default: return "\(error)"
        }
    }
}
