internal import Foundation
internal import ServiceLifecycle
internal import SessionCore

/// When muevald stops, right after the capture server has closed the devices' connections (the service
/// after it in `MuEvalDaemon.run`'s list): the automatic sessions waiting out their reconnect grace stop
/// then, while the automatic reports still follow the stops, as they stopped with their connections
/// before there was a grace (`SessionRegistry.endReconnectGraces`).
struct ReconnectGraceShutdown: Service {
    let registry: SessionRegistry

    func run() async throws {
        try? await gracefulShutdown()
        await registry.endReconnectGraces(now: Date().timeIntervalSince1970)
    }
}
