import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing
import TileCacheOrigin
import TestSupport

/// The service fetches only catalogue images from its configured bases: nothing in a request can make it fetch
/// anything else (server-side request forgery) or read a file.
@Suite("service security")
struct ServiceSecurityTests {
    @Test("URLs, paths and odd ids in requests never reach the network or the file system")
    func noRequestForgery() async throws {
        let harness = try await ServiceHarness.start()
        let origin = harness.origin
        try await withService(harness) { client, _ in
            let port = origin.port
            let attempts: [(String, HTTPResponse.Status)] = [
                ("/api/v1/elements/http:%2F%2F127.0.0.1:\(port)%2Fimages-of-elements%2Fgold.jpg/image", .notFound),
                ("/api/v1/elements/..%2F..%2F..%2Fetc%2Fpasswd/thumbnail", .notFound),
                ("/api/v1/elements/26%00/thumbnail", .notFound),
                ("/api/v1/elements/26/thumbnail?url=http://127.0.0.1:\(port)/images-of-elements/gold.jpg", .badRequest),
                ("/api/v1/elements/26/image?src=file:///etc/passwd", .badRequest),
                ("/api/v1/elements/26/thumbnail/../../../../etc/passwd", .notFound),
                ("/%2e%2e/%2e%2e/etc/passwd", .notFound),
            ]
            for (uri, status) in attempts {
                let response = try await client.execute(uri: uri, method: .get)
                #expect(response.status == status, "\(uri)")
                #expect(!String(buffer: response.body).contains("root:"), "\(uri)")
            }
            #expect(origin.statistics.requests == 0)
        }
    }
}
