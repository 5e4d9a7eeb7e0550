internal import DescriptorIO
internal import Glibc

/// A file operation of the replay index that failed, or a file of it that is not what was written.
package struct ReplayIndexError: Error, CustomStringConvertible {
    package let description: String
    init(_ what: String, errno: Int32) { description = "\(what): \(String(cString: strerror(errno)))" }
    init(_ what: String, _ error: DescriptorIOError) { description = "\(what): \(error.reason)" }
    package init(damaged why: String) { description = "the replay index is damaged: \(why)" }
}
