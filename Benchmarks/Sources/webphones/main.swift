import Glibc
import NIOCore
import NIOPosix

// webphones --port PORT [--phones N] [--addresses K] [--rate R] [--seconds S] ... (Options.usage)
//
// Tests/Load/web_phones.py's phones in Swift with SwiftNIO: the same protocol, drops, resends, draws of the
// same seeded generator, bounds and JSON summary, at a fraction of the CPU, so that on a 2-core machine
// Benchmarks/phones_at_once.py measures muevald rather than its client (`--client swift` there).

let options = Options.parse(Array(CommandLine.arguments.dropFirst()))

// A socket closing under a write must not kill this process; and each phone holds a socket, a silently
// dropped one more until the end: 500 phones need more than the usual 1024 descriptors.
signal(SIGPIPE, SIG_IGN)
var limit = rlimit()
getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
limit.rlim_cur = limit.rlim_max
setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)

// One loop thread for every phone, as web_phones.py's one asyncio thread: no locks, and the least CPU.
let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
let loop = group.next()
let (text, allAcknowledged) = try loop.flatSubmit { [options, loop] in Run(options: options, loop: loop).play() }.wait()

if options.output == "-" {
    print(text)
} else {
    guard let file = fopen(options.output, "w") else {
        printError("webphones: cannot write \(options.output)")
        exit(2)
    }
    fputs(text + "\n", file)
    fclose(file)
}
exit(allAcknowledged ? 0 : 1)
