import CCurl
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// One transfer in flight: the easy handle's options, the bytes received, and the continuation to resume.
///
/// `@unchecked Sendable`: the caller creates it and hands it to the engine through the engine's locked command queue;
/// from then on every mutable field is touched only on the engine thread (curl's callbacks run there too). The one
/// exception, `isCancelled`, is an atomic.
final class CurlTransfer: @unchecked Sendable {
    let request: TransferRequest
    let target: RequestURL
    let isCancelled = Atomic<Bool>(false)
    var continuation: CheckedContinuation<TransferResponse, any Error>?

    // Engine-thread state.
    var easy: UnsafeMutableRawPointer?
    var headerList: UnsafeMutablePointer<curl_slist>?
    let errorBuffer = UnsafeMutablePointer<CChar>.allocate(capacity: Int(CURL_ERROR_SIZE) + 1)
    var body: [UInt8] = []
    var headers = HTTPHeaders()
    var exceededMaxBody = false
    var announcedLength: Int?
    /// The addresses `openSocket` refused, in the order libcurl tried them.
    var refusedAddresses: [(address: String, restriction: NetworkAddress.Restriction?)] = []

    init(request: TransferRequest, target: RequestURL) {
        self.request = request
        self.target = target
        errorBuffer.initialize(repeating: 0, count: Int(CURL_ERROR_SIZE) + 1)
    }

    deinit { errorBuffer.deallocate() }

    /// Appends body bytes; refuses (aborting the transfer) as soon as the maximum size would be exceeded.
    func receive(_ bytes: UnsafeRawBufferPointer) -> Int {
        guard body.count + bytes.count <= request.options.maxBodyBytes else {
            exceededMaxBody = true
            return 0
        }
        if body.isEmpty, let announcedLength, announcedLength <= request.options.maxBodyBytes {
            body.reserveCapacity(announcedLength)
        }
        body.append(contentsOf: bytes)
        return bytes.count
    }

    /// Collects header lines; a status line starts a new response (after a redirect or a 100 Continue).
    func receiveHeader(_ bytes: UnsafeRawBufferPointer) -> Int {
        let line = String(decoding: bytes, as: UTF8.self)
        if line.hasPrefix("HTTP/") {
            headers.removeAll()
            announcedLength = nil
            return bytes.count
        }
        guard let colon = line.firstIndex(of: ":") else { return bytes.count }
        let name = String(line[..<colon]).trimmingWhitespace()
        let value = String(line[line.index(after: colon)...]).trimmingWhitespace()
        headers.append(name: name, value: value)
        // Used to reserve the body buffer and to name the size in a too-large error; libcurl's
        // CURLOPT_MAXFILESIZE_LARGE is what aborts an over-long announced body.
        if name.lowercased() == "content-length", let length = Int(value) { announcedLength = length }
        return bytes.count
    }

    /// libcurl's open-socket callback under `AddressRule.publicOnly`: a socket for an address on the public internet,
    /// `CURL_SOCKET_BAD` for any other (recorded), which libcurl treats as a failed connect to that address.
    func openSocket(purpose: curlsocktype, address: UnsafeMutablePointer<curl_sockaddr>) -> curl_socket_t {
        var bytes = [UInt8](repeating: 0, count: 16)
        let family = tc_sockaddr_address(address, &bytes)
        let parsed: NetworkAddress? = switch family {
        case AF_INET: .ipv4(bytes[0..<4].reduce(UInt32(0)) { $0 << 8 | UInt32($1) })
        case AF_INET6: NetworkAddress(ipv6Bytes: bytes)
        default: nil
        }
        guard purpose == CURLSOCKTYPE_IPCXN, let parsed, parsed.restriction == nil else {
            refusedAddresses.append((parsed?.text ?? "an address of family \(address.pointee.family)", parsed?.restriction))
            return CURL_SOCKET_BAD
        }
        return socket(address.pointee.family, address.pointee.socktype | Int32(SOCK_CLOEXEC.rawValue), address.pointee.protocol)
    }

    /// libcurl's detailed message for a failed transfer (empty when it gave none).
    var errorText: String { String(cString: errorBuffer) }
}
