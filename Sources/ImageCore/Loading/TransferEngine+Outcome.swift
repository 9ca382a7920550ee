import CCurl

extension EngineCore {
    /// Turns a finished easy handle into a response or a classified error (engine thread only).
    func outcome(of transfer: CurlTransfer, easy: UnsafeMutableRawPointer, code: CURLcode) -> Result<TransferResponse, ImageCoreError> {
        let url = transfer.request.url
        let detail = transfer.errorText.isEmpty ? String(cString: curl_easy_strerror(code)) : transfer.errorText
        func failure(_ reason: ImageCoreError.Reason, _ message: String, transient: Bool = false) -> Result<TransferResponse, ImageCoreError> {
            var error = ImageCoreError(reason, subject: url, message: message)
            error.isTransientTransport = transient
            return .failure(error)
        }
        let limit = transfer.request.options.maxBodyBytes
        switch code {
        case CURLE_OK:
            break
        case CURLE_FILESIZE_EXCEEDED:
            return failure(.tooLarge, "Content-Length \(transfer.announcedLength.map(String.init) ?? "?") exceeds the maximum of \(limit) bytes")
        case CURLE_WRITE_ERROR where transfer.exceededMaxBody:
            return failure(.tooLarge, "body exceeds the maximum of \(limit) bytes; transfer aborted")
        case CURLE_COULDNT_RESOLVE_HOST, CURLE_COULDNT_RESOLVE_PROXY:
            return failure(.dns, "could not resolve host '\(transfer.target.host)': \(detail)")
        case CURLE_COULDNT_CONNECT where !transfer.refusedAddresses.isEmpty:
            let refused = transfer.refusedAddresses.map { "\($0.address) (\($0.restriction?.rawValue ?? "not an IP connection"))" }
            return failure(.forbiddenAddress, "'\(transfer.target.host)' leads to addresses this service may not connect to: "
                + refused.joined(separator: ", ") + (transfer.errorText.isEmpty ? "" : "; \(transfer.errorText)"))
        case CURLE_COULDNT_CONNECT:
            return failure(.connect, "could not connect: \(detail)")
        case CURLE_RECV_ERROR, CURLE_SEND_ERROR, CURLE_GOT_NOTHING:
            return failure(.connect, "connection failed mid-transfer: \(detail)")
        case CURLE_OPERATION_TIMEDOUT:
            return failure(.timeout, detail)
        case CURLE_TOO_MANY_REDIRECTS:
            return failure(.redirectLoop, "more than \(transfer.request.options.maxRedirects) redirects: \(detail)")
        case CURLE_UNSUPPORTED_PROTOCOL:
            return failure(.unsupportedScheme, "redirect or request to a scheme other than http/https refused: \(detail)")
        case CURLE_URL_MALFORMAT:
            return failure(.invalidURL, detail)
        case CURLE_PARTIAL_FILE:
            return failure(.truncated, "the server closed the connection before the whole body arrived: \(detail)", transient: true)
        default:
            return failure(.transfer, "libcurl error \(code.rawValue): \(detail)")
        }
        // Every answer libcurl gives about the finished transfer is checked; one it cannot give fails the transfer
        // rather than reporting a made-up status or size.
        var refused: (name: String, code: CURLcode)?
        func read(_ code: CURLcode, _ name: String) { if code != CURLE_OK, refused == nil { refused = (name, code) } }
        var status = 0
        read(tc_easy_getinfo_long(easy, CURLINFO_RESPONSE_CODE, &status), "CURLINFO_RESPONSE_CODE")
        var effective: UnsafeMutablePointer<CChar>?
        read(tc_easy_getinfo_string(easy, CURLINFO_EFFECTIVE_URL, &effective), "CURLINFO_EFFECTIVE_URL")
        var redirects = 0, connects = 0
        read(tc_easy_getinfo_long(easy, CURLINFO_REDIRECT_COUNT, &redirects), "CURLINFO_REDIRECT_COUNT")
        read(tc_easy_getinfo_long(easy, CURLINFO_NUM_CONNECTS, &connects), "CURLINFO_NUM_CONNECTS")
        var downloaded: curl_off_t = 0
        read(tc_easy_getinfo_offset(easy, CURLINFO_SIZE_DOWNLOAD_T, &downloaded), "CURLINFO_SIZE_DOWNLOAD_T")
        func time(_ info: CURLINFO, _ name: String) -> Duration {
            var microseconds: curl_off_t = 0
            read(tc_easy_getinfo_offset(easy, info, &microseconds), name)
            return .microseconds(microseconds)
        }
        let timings = TransferTimings(
            dns: time(CURLINFO_NAMELOOKUP_TIME_T, "CURLINFO_NAMELOOKUP_TIME_T"),
            connect: time(CURLINFO_CONNECT_TIME_T, "CURLINFO_CONNECT_TIME_T"),
            firstByte: time(CURLINFO_STARTTRANSFER_TIME_T, "CURLINFO_STARTTRANSFER_TIME_T"),
            total: time(CURLINFO_TOTAL_TIME_T, "CURLINFO_TOTAL_TIME_T"))
        if let refused {
            return failure(.transfer, "libcurl could not report \(refused.name): \(String(cString: curl_easy_strerror(refused.code)))")
        }
        return .success(TransferResponse(
            requestedURL: url, effectiveURL: effective.map { String(cString: $0) } ?? url, status: status,
            headers: transfer.headers, body: transfer.body, timings: timings, redirectCount: redirects,
            newConnections: connects, downloadedBytes: Int(downloaded)))
    }
}
