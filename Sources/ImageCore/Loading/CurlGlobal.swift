import CCurl

/// `curl_global_init` must run once per process before any other libcurl call.
enum CurlGlobal {
    private static let initialised: Bool = curl_global_init(Int(CURL_GLOBAL_ALL)) == CURLE_OK

    static func initialiseOnce() {
        precondition(initialised, "curl_global_init failed")
    }
}

extension Duration {
    /// Whole milliseconds, a part of one rounded up: a timeout handed to libcurl never ends before the time it stands
    /// for. (Rounded down, a transfer cut to a request's deadline timed out up to a millisecond before it, and the
    /// request failed as a plain timeout instead of deadline-exceeded.)
    var milliseconds: Int {
        let (seconds, attoseconds) = components
        let (whole, part) = attoseconds.quotientAndRemainder(dividingBy: 1_000_000_000_000_000)
        return Int(seconds) * 1000 + Int(whole) + (part > 0 ? 1 : 0)
    }
}
