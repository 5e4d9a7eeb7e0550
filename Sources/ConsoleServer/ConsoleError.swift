internal import HTTPTypes
internal import Hummingbird

/// What the console refuses, with the status the browser gets and a message a user can act on.
enum ConsoleError: Error, Equatable, CustomStringConvertible, HTTPResponseError {
    case assetsMissing(String)
    /// A setting the console cannot start with.
    case misconfigured(String)
    case badRequest(String)
    case notFound(String)
    /// A tester's code and secret that do not match.
    case forbidden(String)
    case conflict(String)
    case bodyTooLarge(limit: Int)
    /// An address over one of the no-login pages' limits (`VisitorLimits`).
    case tooManyRequests(String)

    var description: String {
        switch self {
        case .assetsMissing(let bundle):
            "the console's pages are missing (looked in \(bundle)); reinstall muevald (`make install` puts them in PREFIX/share/mueval/console)"
        case .badRequest(let message), .notFound(let message), .forbidden(let message), .conflict(let message), .misconfigured(let message), .tooManyRequests(let message): message
        case .bodyTooLarge(let limit): "request body larger than \(limit) bytes (console.max_body_bytes)"
        }
    }

    var status: HTTPResponse.Status {
        switch self {
        case .assetsMissing, .misconfigured: .internalServerError
        case .badRequest: .badRequest
        case .notFound: .notFound
        case .forbidden: .forbidden
        case .conflict: .conflict
        case .bodyTooLarge: .contentTooLarge
        case .tooManyRequests: .tooManyRequests
        }
    }

    func response(from request: Request, context: some RequestContext) throws -> Response {
        ConsoleResponse.error(status, description)
    }
}
