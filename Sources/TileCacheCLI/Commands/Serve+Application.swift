import Hummingbird

/// Lets `Serve` hold the opaque application type `buildApplication` returns.
protocol ApplicationProtocolRunnable {
    func runService() async throws
}

struct AnyApplication<App: ApplicationProtocol>: ApplicationProtocolRunnable {
    let app: App
    init(_ app: App) { self.app = app }
    func runService() async throws { try await app.runService() }
}
