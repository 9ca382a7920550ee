import HTTPTypes
import NIOHTTP1
import NIOHTTPTypesHTTP1
import Testing
@testable import TileCacheService

/// The HTTP/1 fast path makes the router's `HTTPRequest` itself for a target that starts with `/`, without
/// NIOHTTPTypesHTTP1's `URLComponents` parse (`CachedImageFastPath.Handler.request`): it must be the request that
/// conversion (what Hummingbird's codec calls) makes, for every target and header list.
@Suite("Service: the HTTP/1 fast path's request is the HTTPTypes codec's")
struct FastPathRequestTests {
    static let targets = [
        "/", "/api/v1/elements/26/thumbnail", "/api/v1/elements/26/thumbnail?w=64&format=webp", "/iron.jpg?",
        "//evil.example/x", "/a:b", "/http://x/y", "/%zz?%", "/periodictable/Tiles/026/s7.JPG#frag", "/?q=a b",
        "/unsafe/300x200/smart/http%3A%2F%2Fexample.com%2Fa.jpg", "/\u{e9}t\u{e9}", "/a?b=c?d",
        // Not starting with `/`: the library's own conversion.
        "http://t/api/v1/elements/26/thumbnail", "https://t:8080/x?y", "*", "t:80", "",
    ]
    static let headerLists: [[(String, String)]] = [
        [],
        [("Host", "t")],
        [("Host", "a"), ("host", "b"), ("Accept", "image/avif,image/webp,*/*"), ("Cookie", "a=1; b=2"), ("X-Request-ID", "r")],
        [("Connection", "keep-alive"), ("If-None-Match", "\"x\""), ("Sec-CH-DPR", "2"), ("Origin", "http://app.example")],
    ]

    @Test("the same request as `HTTPRequest(_:secure:splitCookie:)`, for each method, target and header list")
    func sameAsTheConversion() throws {
        for method in [HTTPMethod.GET, .HEAD, .POST, .RAW(value: "PURGE")] {
            for target in Self.targets {
                for headers in Self.headerLists {
                    let head = HTTPRequestHead(version: .http1_1, method: method, uri: target, headers: HTTPHeaders(headers))
                    let reference = try? HTTPRequest(head, secure: false, splitCookie: false)
                    #expect(CachedImageFastPath.Handler.request(head) == reference, "\(method) \(target) \(headers)")
                }
            }
        }
    }
}
