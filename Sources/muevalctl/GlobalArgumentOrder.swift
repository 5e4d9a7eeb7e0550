internal import ArgumentParser

/// Lets the global options come before the command, as users of systemctl, kubectl or `git -C` type
/// them: `muevalctl --socket PATH status` and `muevalctl --json report-config list` become
/// `muevalctl status --socket PATH` and `muevalctl report-config list --json`, which is where
/// ArgumentParser looks for them (every command has `GlobalOptions`).
///
/// Only global options met before the command's name (and its nested subcommand's) move; everything
/// else, from the first argument that is neither, keeps its place and its meaning.
struct GlobalArgumentOrder {
    /// Subcommands by name, nested (`report-config` → `save`, `list`, `show`).
    struct CommandTree: Equatable {
        var subcommands: [String: CommandTree] = [:]
    }

    let commands: CommandTree
    /// Options that take a value, as `--socket PATH` or `--socket=PATH`.
    let options: Set<String>
    let flags: Set<String>

    init(commands: CommandTree, options: Set<String> = ["--socket"], flags: Set<String> = ["--json"]) {
        self.commands = commands
        self.options = options
        self.flags = flags
    }

    /// The tree of `root`'s subcommands, as ArgumentParser names them.
    init(root: ParsableCommand.Type) {
        self.init(commands: Self.tree(root))
    }

    private static func tree(_ command: ParsableCommand.Type) -> CommandTree {
        var tree = CommandTree()
        for subcommand in command.configuration.subcommands {
            tree.subcommands[subcommand._commandName] = Self.tree(subcommand)
        }
        return tree
    }

    /// The arguments (without the program's name) with the leading global options moved after the command path.
    func normalise(_ arguments: [String]) -> [String] {
        var path: [String] = []
        var moved: [String] = []
        var node = commands
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            if flags.contains(argument) || options.contains(where: { argument.hasPrefix($0 + "=") }) {
                moved.append(argument)
                index += 1
            } else if options.contains(argument), index + 1 < arguments.count {
                moved += arguments[index...index + 1]
                index += 2
            } else if let next = node.subcommands[argument] {
                path.append(argument)
                node = next
                index += 1
            } else {
                break
            }
        }
        // Without a command to attach them to, nothing moves: ArgumentParser says what is wrong.
        guard !path.isEmpty else { return arguments }
        return path + moved + arguments[index...]
    }
}
