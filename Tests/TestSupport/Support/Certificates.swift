/// A self-signed P-256 certificate for 127.0.0.1 (openssl): the paths of `cert.pem` and `key.pem` it writes in `directory`.
///
/// - Throws: `TestFailure` when openssl fails.
public func makeSelfSignedCertificate(in directory: String) async throws -> (certificate: String, key: String) {
    try await runProcess(["/usr/bin/openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                          "-keyout", directory + "/key.pem", "-out", directory + "/cert.pem", "-days", "2", "-subj", "/CN=127.0.0.1",
                          "-addext", "subjectAltName=IP:127.0.0.1"], description: "openssl req")
    return (directory + "/cert.pem", directory + "/key.pem")
}
