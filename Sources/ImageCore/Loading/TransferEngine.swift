import CCurl
public import Logging
import NIOConcurrencyHelpers

#if canImport(Glibc)
import Glibc
import Synchronization
#endif

/// HTTP over one long-lived libcurl multi handle, driven by one dedicated thread.
///
/// The multi handle owns the connection pool, so connections are reused across requests (keep-alive). Requests are
/// submitted from any task; the engine thread adds them to the multi handle within the connection limits and wakes
/// from `curl_multi_poll` through `curl_multi_wakeup`. Cancelling the calling task removes the transfer from the multi
/// handle promptly and frees its easy handle.
///
/// Thread-safety: `perform` may be called from any number of tasks at once. Dropping the last reference stops the
/// thread; transfers still running then fail with `.cancelled`.
public final class TransferEngine: Sendable {
    /// Connection limits and identification.
    public struct Configuration: Sendable, Hashable {
        /// Most connections (and transfers) to one scheme/host/port at once (default 8).
        public var maxConnectionsPerHost = 8
        /// Most connections (and transfers) in total (default 32).
        public var maxTotalConnections = 32
        /// The User-Agent header.
        public var userAgent = "TileCache/\(TileCacheVersion.string) (libcurl)"
        /// Which addresses transfers may connect to (default: any).
        public var addresses = AddressRule.any

        /// The defaults.
        public init() {}
    }

    private let core: EngineCore

    /// Starts an engine (and its thread).
    public init(configuration: Configuration = Configuration(), logger: Logger = Logger(label: "tilecache.transfer")) {
        core = EngineCore(configuration: configuration, logger: logger)
        core.start()
    }

    deinit { core.stop() }

    /// The configuration the engine runs with.
    public var configuration: Configuration { core.configuration }

    /// Performs `request`, returning the final response whatever its status (redirects are followed).
    ///
    /// - Throws: `ImageCoreError` with `.invalidURL`, `.unsupportedScheme`, `.dns`, `.connect`, `.timeout`,
    ///   `.tooLarge`, `.truncated`, `.redirectLoop`, `.transfer` or `.cancelled`; never a non-2xx status.
    public func perform(_ request: TransferRequest) async throws(ImageCoreError) -> TransferResponse {
        let transfer = CurlTransfer(request: request, target: try RequestURL(request.url))
        guard request.addresses == .any || configuration.addresses == .publicOnly else {
            throw ImageCoreError(.forbiddenAddress, subject: request.url,
                                 message: "a transfer limited to public addresses needs an engine that checks them (AddressRule.publicOnly)")
        }
        do {
            return try await withTaskCancellationHandler {
                try await withCheckedThrowingContinuation { continuation in
                    transfer.continuation = continuation
                    core.submit(.start(transfer))
                }
            } onCancel: {
                transfer.isCancelled.store(true, ordering: .releasing)
                core.submit(.cancel(transfer))
            }
        } catch let error as ImageCoreError {
            throw error
        } catch {
            throw ImageCoreError(.cancelled, subject: request.url, message: "request cancelled")
        }
    }

    /// Transfers currently added to the multi handle (for tests and metrics).
    public var activeTransferCount: Int { core.counters.withLockedValue { $0.active } }
    /// Transfers waiting for a connection slot.
    public var queuedTransferCount: Int { core.counters.withLockedValue { $0.queued } }
}

/// The engine's thread and everything it owns.
///
/// `@unchecked Sendable`: `multi`, `active`, `queued`, the per-host counts and the easy-handle pool are touched only on
/// the engine thread; other threads reach the core only through the `commands` mutex, `counters` mutex and
/// `curl_multi_wakeup`, which libcurl documents as callable from any thread.
final class EngineCore: @unchecked Sendable {
    enum Command {
        case start(CurlTransfer)
        case cancel(CurlTransfer)
    }

    struct Commands {
        var pending: [Command] = []
        var stopping = false
    }

    struct Counters { var active = 0; var queued = 0 }

    let configuration: TransferEngine.Configuration
    let logger: Logger
    let commands = NIOLockedValueBox(Commands())
    let counters = NIOLockedValueBox(Counters())
    private let multi: UnsafeMutableRawPointer
    private var active: [UnsafeMutableRawPointer: CurlTransfer] = [:]
    private var queued: [CurlTransfer] = []
    private var activePerOrigin: [String: Int] = [:]
    private var idleHandles: [UnsafeMutableRawPointer] = []

    init(configuration: TransferEngine.Configuration, logger: Logger) {
        CurlGlobal.initialiseOnce()
        self.configuration = configuration
        self.logger = logger
        guard let multi = curl_multi_init() else { fatalError("curl_multi_init failed: out of memory") }
        self.multi = multi
        // The engine admits transfers itself within these limits; the multi handle carries the same ones. libcurl refuses
        // a multi option only when it does not know it (a build mismatch), which no transfer could work around.
        for (option, value, name) in [(CURLMOPT_MAX_HOST_CONNECTIONS, configuration.maxConnectionsPerHost, "CURLMOPT_MAX_HOST_CONNECTIONS"),
                                      (CURLMOPT_MAX_TOTAL_CONNECTIONS, configuration.maxTotalConnections, "CURLMOPT_MAX_TOTAL_CONNECTIONS"),
                                      (CURLMOPT_MAXCONNECTS, configuration.maxTotalConnections, "CURLMOPT_MAXCONNECTS")] {
            let code = tc_multi_setopt_long(multi, option, value)
            precondition(code == CURLM_OK, "libcurl refused \(name): \(String(cString: curl_multi_strerror(code)))")
        }
    }

    func start() {
        let box = Unmanaged.passRetained(self)
        var thread = pthread_t()
        let status = pthread_create(&thread, nil, { argument in
            let core = Unmanaged<EngineCore>.fromOpaque(argument!).takeRetainedValue()
            core.run()
            return nil
        }, box.toOpaque())
        precondition(status == 0, "could not start the transfer engine thread (pthread_create: \(status))")
        pthread_detach(thread)
    }

    func stop() {
        commands.withLockedValue { $0.stopping = true }
        wake()
    }

    func submit(_ command: Command) {
        commands.withLockedValue { $0.pending.append(command) }
        wake()
    }

    /// Interrupts `curl_multi_poll`. Should libcurl refuse, the poll's one-second cap still lets the command through.
    private func wake() {
        checked(curl_multi_wakeup(multi), "curl_multi_wakeup")
    }

    /// Logs a multi-handle call libcurl refused. Such a failure (out of memory, a handle in a bad state) leaves the
    /// engine running: each transfer still ends with its own result or at its deadline.
    private func checked(_ code: CURLMcode, _ call: String) {
        guard code != CURLM_OK else { return }
        logger.error("libcurl refused a multi-handle call", metadata: ["call": "\(call)", "error": "\(String(cString: curl_multi_strerror(code)))"])
    }

    // MARK: - Engine thread

    private func run() {
        while true {
            let (batch, stopping) = commands.withLockedValue { state in
                let batch = state.pending
                state.pending.removeAll(keepingCapacity: true)
                return (batch, state.stopping)
            }
            if stopping {
                shutDown(pendingCommands: batch)
                return
            }
            for command in batch {
                switch command {
                case .start(let transfer): enqueue(transfer)
                case .cancel(let transfer): cancel(transfer)
                }
            }
            admitQueued()
            var running: Int32 = 0
            checked(curl_multi_perform(multi, &running), "curl_multi_perform")
            collectFinished()
            admitQueued()
            counters.withLockedValue { $0 = Counters(active: active.count, queued: queued.count) }
            let polled = curl_multi_poll(multi, nil, 0, 1000, nil)
            if polled != CURLM_OK {
                checked(polled, "curl_multi_poll")
                usleep(10_000)  // not a hot loop while libcurl cannot wait
            }
        }
    }

    private func enqueue(_ transfer: CurlTransfer) {
        if transfer.isCancelled.load(ordering: .acquiring) {
            resume(transfer, with: .failure(cancelled(transfer)))
            return
        }
        queued.append(transfer)
    }

    /// Adds queued transfers while the per-origin and total limits allow, so no transfer waits inside libcurl and
    /// each total deadline counts from when its transfer really starts.
    private func admitQueued() {
        guard !queued.isEmpty else { return }
        var index = 0
        while index < queued.count, active.count < configuration.maxTotalConnections {
            let transfer = queued[index]
            let origin = transfer.target.origin
            guard activePerOrigin[origin, default: 0] < configuration.maxConnectionsPerHost else {
                index += 1
                continue
            }
            queued.remove(at: index)
            activate(transfer)
        }
    }

    private func activate(_ transfer: CurlTransfer) {
        guard let easy = idleHandles.popLast() ?? curl_easy_init() else {
            resume(transfer, with: .failure(ImageCoreError(.transfer, subject: transfer.request.url,
                                                            message: "curl_easy_init failed (out of memory?)")))
            return
        }
        transfer.easy = easy
        do {
            try configure(easy, for: transfer)
        } catch {
            release(transfer)
            resume(transfer, with: .failure(error))
            return
        }
        let status = curl_multi_add_handle(multi, easy)
        guard status == CURLM_OK else {
            let message = String(cString: curl_multi_strerror(status))
            release(transfer)
            resume(transfer, with: .failure(ImageCoreError(.transfer, subject: transfer.request.url,
                                                            message: "could not start transfer: \(message)")))
            return
        }
        active[easy] = transfer
        activePerOrigin[transfer.target.origin, default: 0] += 1
    }

    /// Sets every option of `transfer` on `easy`, checking each result: an option libcurl refuses (a URL past its
    /// length limit, a protocol list it does not know, which would silently drop the redirect guard) fails the
    /// transfer with the option's name instead of running it without.
    private func configure(_ easy: UnsafeMutableRawPointer, for transfer: CurlTransfer) throws(ImageCoreError) {
        let request = transfer.request
        let options = request.options
        func check(_ code: CURLcode, _ option: String) throws(ImageCoreError) {
            guard code != CURLE_OK else { return }
            throw ImageCoreError(option == "CURLOPT_URL" ? .invalidURL : .transfer, subject: request.url,
                                 message: "libcurl refused \(option): \(String(cString: curl_easy_strerror(code)))")
        }
        curl_easy_reset(easy)
        try check(tc_easy_setopt_string(easy, CURLOPT_URL, request.url), "CURLOPT_URL")
        try check(tc_easy_setopt_string(easy, CURLOPT_PROTOCOLS_STR, "http,https"), "CURLOPT_PROTOCOLS_STR")
        try check(tc_easy_setopt_string(easy, CURLOPT_REDIR_PROTOCOLS_STR, "http,https"), "CURLOPT_REDIR_PROTOCOLS_STR")
        try check(tc_easy_setopt_long(easy, CURLOPT_FOLLOWLOCATION, request.followsRedirects ? 1 : 0), "CURLOPT_FOLLOWLOCATION")
        try check(tc_easy_setopt_long(easy, CURLOPT_MAXREDIRS, options.maxRedirects), "CURLOPT_MAXREDIRS")
        try check(tc_easy_setopt_long(easy, CURLOPT_NOSIGNAL, 1), "CURLOPT_NOSIGNAL")
        try check(tc_easy_setopt_string(easy, CURLOPT_USERAGENT, configuration.userAgent), "CURLOPT_USERAGENT")
        try check(tc_easy_setopt_long(easy, CURLOPT_CONNECTTIMEOUT_MS, options.connectTimeout.milliseconds), "CURLOPT_CONNECTTIMEOUT_MS")
        try check(tc_easy_setopt_long(easy, CURLOPT_TIMEOUT_MS, options.totalTimeout.milliseconds), "CURLOPT_TIMEOUT_MS")
        try check(tc_easy_setopt_long(easy, CURLOPT_LOW_SPEED_LIMIT, options.lowSpeedLimit), "CURLOPT_LOW_SPEED_LIMIT")
        try check(tc_easy_setopt_long(easy, CURLOPT_LOW_SPEED_TIME, max(1, options.lowSpeedTime.milliseconds / 1000)), "CURLOPT_LOW_SPEED_TIME")
        try check(tc_easy_setopt_offset(easy, CURLOPT_MAXFILESIZE_LARGE, curl_off_t(options.maxBodyBytes)), "CURLOPT_MAXFILESIZE_LARGE")
        try check(tc_easy_setopt_string(easy, CURLOPT_ACCEPT_ENCODING, ""), "CURLOPT_ACCEPT_ENCODING")  // every encoding libcurl decodes
        try check(tc_easy_setopt_long(easy, CURLOPT_NOBODY, request.method == .head ? 1 : 0), "CURLOPT_NOBODY")
        var headers = [request.ifNoneMatch.map { "If-None-Match: \($0)" }, request.ifModifiedSince.map { "If-Modified-Since: \($0)" }]
            .compactMap { $0 }
        switch request.method {
        case .get, .head:
            break
        case .delete:
            try check(tc_easy_setopt_string(easy, CURLOPT_CUSTOMREQUEST, "DELETE"), "CURLOPT_CUSTOMREQUEST")
        case .put:
            // The body as "post fields" (libcurl copies them) sent with the PUT method: its exact length, no read
            // callback. libcurl's `Expect: 100-continue` (bodies over 1 MiB) stays: an empty `Expect:` to remove it
            // would still be signed by curl 7.88's SigV4, and the store would refuse the signature.
            let body = request.body ?? []
            try check(tc_easy_setopt_string(easy, CURLOPT_CUSTOMREQUEST, "PUT"), "CURLOPT_CUSTOMREQUEST")
            try check(tc_easy_setopt_offset(easy, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(body.count)), "CURLOPT_POSTFIELDSIZE_LARGE")
            let copied = body.withUnsafeBytes { bytes in
                tc_easy_setopt_pointer(easy, CURLOPT_COPYPOSTFIELDS, UnsafeMutableRawPointer(mutating: bytes.baseAddress ?? UnsafeRawPointer(transfer.errorBuffer)))
            }
            try check(copied, "CURLOPT_COPYPOSTFIELDS")
            if !request.headers.contains(where: { $0.name.lowercased() == "content-type" }) {
                // Not libcurl's form-urlencoded default (removing the header instead would leave it in a SigV4
                // signature, which curl 7.88 computes before the header list is applied).
                headers.append("Content-Type: application/octet-stream")
            }
        }
        headers += request.headers.map { "\($0.name): \($0.value)" }
        if let signing = request.signing {
            try check(tc_easy_setopt_string(easy, CURLOPT_AWS_SIGV4, signing.provider), "CURLOPT_AWS_SIGV4")
            try check(tc_easy_setopt_string(easy, CURLOPT_USERNAME, signing.accessKeyID), "CURLOPT_USERNAME")
            try check(tc_easy_setopt_string(easy, CURLOPT_PASSWORD, signing.secretAccessKey), "CURLOPT_PASSWORD")
        }
        try check(tc_easy_setopt_pointer(easy, CURLOPT_ERRORBUFFER, transfer.errorBuffer), "CURLOPT_ERRORBUFFER")
        let context = Unmanaged.passUnretained(transfer).toOpaque()
        if configuration.addresses == .publicOnly {
            try check(tc_easy_setopt_string(easy, CURLOPT_PROXY, ""), "CURLOPT_PROXY")
            try check(tc_easy_setopt_pointer(easy, CURLOPT_OPENSOCKETDATA, context), "CURLOPT_OPENSOCKETDATA")
            try check(tc_easy_setopt_opensocket_callback(easy) { context, purpose, address in
                let transfer = Unmanaged<CurlTransfer>.fromOpaque(context!).takeUnretainedValue()
                return transfer.openSocket(purpose: purpose, address: address!)
            }, "CURLOPT_OPENSOCKETFUNCTION")
        }
        try check(tc_easy_setopt_pointer(easy, CURLOPT_WRITEDATA, context), "CURLOPT_WRITEDATA")
        try check(tc_easy_setopt_write_callback(easy, CURLOPT_WRITEFUNCTION) { data, size, count, context in
            let transfer = Unmanaged<CurlTransfer>.fromOpaque(context!).takeUnretainedValue()
            return transfer.receive(UnsafeRawBufferPointer(start: data, count: size * count))
        }, "CURLOPT_WRITEFUNCTION")
        try check(tc_easy_setopt_pointer(easy, CURLOPT_HEADERDATA, context), "CURLOPT_HEADERDATA")
        try check(tc_easy_setopt_write_callback(easy, CURLOPT_HEADERFUNCTION) { data, size, count, context in
            let transfer = Unmanaged<CurlTransfer>.fromOpaque(context!).takeUnretainedValue()
            return transfer.receiveHeader(UnsafeRawBufferPointer(start: data, count: size * count))
        }, "CURLOPT_HEADERFUNCTION")
        // The transfer owns the list from the first append, so `release` frees it whatever fails after.
        for header in headers {
            guard let list = curl_slist_append(transfer.headerList, header) else {
                throw ImageCoreError(.transfer, subject: request.url, message: "could not build the request headers (out of memory)")
            }
            transfer.headerList = list
        }
        if let list = transfer.headerList { try check(tc_easy_setopt_slist(easy, CURLOPT_HTTPHEADER, list), "CURLOPT_HTTPHEADER") }
    }

    private func collectFinished() {
        var remaining: Int32 = 0
        while let message = curl_multi_info_read(multi, &remaining) {
            guard message.pointee.msg == CURLMSG_DONE, let easy = message.pointee.easy_handle,
                  let transfer = active[easy] else { continue }
            let code = message.pointee.data.result
            let result = outcome(of: transfer, easy: easy, code: code)
            deactivate(transfer)
            resume(transfer, with: result)
        }
    }

    private func cancel(_ transfer: CurlTransfer) {
        if let easy = transfer.easy, active[easy] === transfer {
            deactivate(transfer)
            resume(transfer, with: .failure(cancelled(transfer)))
        } else if let index = queued.firstIndex(where: { $0 === transfer }) {
            queued.remove(at: index)
            resume(transfer, with: .failure(cancelled(transfer)))
        }
        // Otherwise it has finished already, or its start command comes later and will see the flag.
    }

    private func deactivate(_ transfer: CurlTransfer) {
        guard let easy = transfer.easy else { return }
        checked(curl_multi_remove_handle(multi, easy), "curl_multi_remove_handle")
        active[easy] = nil
        let origin = transfer.target.origin
        activePerOrigin[origin, default: 1] -= 1
        if activePerOrigin[origin] == 0 { activePerOrigin[origin] = nil }
        release(transfer)
    }

    /// Frees the header list and returns the easy handle to the pool.
    private func release(_ transfer: CurlTransfer) {
        if let list = transfer.headerList { curl_slist_free_all(list) }
        transfer.headerList = nil
        if let easy = transfer.easy {
            curl_easy_reset(easy)
            if idleHandles.count < configuration.maxTotalConnections { idleHandles.append(easy) } else { curl_easy_cleanup(easy) }
        }
        transfer.easy = nil
    }

    private func resume(_ transfer: CurlTransfer, with result: Result<TransferResponse, ImageCoreError>) {
        guard let continuation = transfer.continuation else { return }
        transfer.continuation = nil
        continuation.resume(with: result.mapError { $0 as any Error })
    }

    private func cancelled(_ transfer: CurlTransfer) -> ImageCoreError {
        ImageCoreError(.cancelled, subject: transfer.request.url, message: "request cancelled")
    }

    private func shutDown(pendingCommands: [Command]) {
        for command in pendingCommands {
            if case .start(let transfer) = command { resume(transfer, with: .failure(cancelled(transfer))) }
        }
        for transfer in Array(active.values) + queued {
            deactivate(transfer)
            resume(transfer, with: .failure(ImageCoreError(.cancelled, subject: transfer.request.url,
                                                            message: "transfer engine shut down")))
        }
        queued.removeAll()
        for easy in idleHandles { curl_easy_cleanup(easy) }
        idleHandles.removeAll()
        checked(curl_multi_cleanup(multi), "curl_multi_cleanup")
    }
}
