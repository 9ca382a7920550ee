import Foundation
import ImageCore
import NIOCore

#if canImport(Glibc)
import Glibc
#endif

/// Bad input from the command line or an input file: the message names the input and the reason. Exit code 1,
/// without the usage text (`ValidationError`, thrown by `validate()`, adds it).
public struct InputError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What is wrong, naming the input.
    public var message: String
    /// An error with `message`.
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

/// A failure while a command ran (binding a port, opening a database or a cache directory, writing a file): exit
/// code 1 and the message, never the usage text, which would suggest the command line was wrong.
public struct RuntimeError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What failed and why, naming the address, path or file.
    public var message: String
    /// An error with `message`.
    public init(_ message: String) { self.message = message }
    public var description: String { message }

    /// Why listening on `host:port` failed, in words ("127.0.0.1:8080 is already in use", rather than the socket
    /// call's own text); nil when `error` is not a socket error.
    public init?(listeningOn host: String, port: Int, _ error: any Error) {
        let address = URLAuthority.string(host: host, port: port)
        if error is SocketAddressError.UnknownHost || (error as? SocketAddressError).map({ if case .unknown = $0 { true } else { false } }) == true {
            self.init("""
                cannot listen on \(address): '\(host)' is neither an IP address nor a host name that resolves: give --host \
                an address of this machine, such as 127.0.0.1, 0.0.0.0 or ::1
                """)
            return
        }
        guard let socketError = error as? IOError else { return nil }
        switch socketError.errnoCode {
        case EADDRINUSE:
            self.init("\(address) is already in use (another server is listening there): choose another --port, or stop it")
        case EACCES:
            self.init("\(address): permission denied (ports below 1024 need root): choose a --port above 1023")
        case EADDRNOTAVAIL:
            self.init("\(address): \(host) is not an address of this machine: choose another --host")
        default:
            self.init("cannot listen on \(address): \(socketError)")
        }
    }
}
