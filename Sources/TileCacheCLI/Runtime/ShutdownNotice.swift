import Logging
import ServiceLifecycle

/// Says when graceful shutdown begins (SIGINT or SIGTERM): an operator sees the signal was heard while the requests in
/// flight finish. `serve` runs it last in its service group, which shuts services down in reverse order, so it is told
/// first, before the server drains. It returns only then, so the group does not take it for a service that ended early.
struct ShutdownNotice: Service {
    let logger: Logger

    func run() async throws {
        do {
            try await gracefulShutdown()
        } catch {
            return  // cancelled: the group is ending for another reason, which it reports
        }
        logger.info("shutting down: finishing the requests in flight")
    }
}
