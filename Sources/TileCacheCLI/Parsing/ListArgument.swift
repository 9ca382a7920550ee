import ArgumentParser
import CacheLab
import Foundation

/// One item of a comma-separated option: parsed from its text, or an error naming the item and the reason.
protocol ListItem: Sendable, Equatable {
    init(parsing item: String) throws(InputError)
    /// The item as it would be typed.
    var typed: String { get }
}

/// A comma-separated option value (`--counts 10,50`, `--bytes 1MiB,5MiB`): every item is parsed once, when the
/// command line is, into `Item`s; `none` is the empty list. A repeated item is kept once, where it first appears.
///
/// Declare it with `transform: ListArgument.init(parsing:)` so that a bad item's reason reaches the user;
/// `init?(argument:)` (ArgumentParser's own entry) can only say that the value is invalid.
struct ListArgument<Item: ListItem>: Sendable, Equatable, ExpressibleByArgument, CustomStringConvertible {
    /// The items, in the order given, without repeats.
    let items: [Item]

    /// A list of `items` (a default value).
    init(_ items: [Item]) {
        self.items = items.reduce(into: []) { unique, item in if !unique.contains(item) { unique.append(item) } }
    }

    /// Parses `text`: `none`, or items separated by commas (spaces around them allowed).
    ///
    /// - Throws: `InputError` naming the first item that does not parse, and why; an empty item is one.
    init(parsing text: String) throws(InputError) {
        if text.trimmingCharacters(in: .whitespaces).lowercased() == "none" { self.init([]); return }
        var items: [Item] = []
        for piece in text.split(separator: ",", omittingEmptySubsequences: false) {
            items.append(try Item(parsing: piece.trimmingCharacters(in: .whitespaces)))
        }
        self.init(items)
    }

    init?(argument: String) { try? self.init(parsing: argument) }

    /// The list as it would be typed: `10,25,50`, or `none`.
    var description: String { items.isEmpty ? "none" : items.map(\.typed).joined(separator: ",") }
}

/// A count limit: a positive whole number of entries.
struct CountLimit: ListItem {
    let count: Int

    init(_ count: Int) { self.count = count }

    init(parsing item: String) throws(InputError) {
        guard let count = Int(item), count > 0 else { throw InputError("'\(item)' is not a positive whole number of entries") }
        self.count = count
    }

    var typed: String { String(count) }
}

/// A byte limit: a positive size, e.g. `10MiB`.
struct ByteLimit: ListItem {
    let size: ByteSize

    init(_ size: ByteSize) { self.size = size }

    init(parsing item: String) throws(InputError) {
        size = try ByteSize(parsing: item)
        guard size.bytes > 0 else { throw InputError("'\(item)' is zero bytes") }
    }

    /// The size as it would be typed: `10MiB`.
    var typed: String { size.description.filter { $0 != " " } }
}

/// Both limits at once, `COUNT:BYTES`, e.g. `100:10MiB`.
struct CombinedLimit: ListItem {
    let count: CountLimit
    let bytes: ByteLimit

    init(_ count: Int, _ bytes: ByteSize) { (self.count, self.bytes) = (CountLimit(count), ByteLimit(bytes)) }

    init(parsing item: String) throws(InputError) {
        let parts = item.split(separator: ":", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
        guard parts.count == 2, let count = try? CountLimit(parsing: parts[0]), let bytes = try? ByteLimit(parsing: parts[1]) else {
            throw InputError("'\(item)' is not COUNT:BYTES with both positive, e.g. 100:10MiB")
        }
        (self.count, self.bytes) = (count, bytes)
    }

    var typed: String { "\(count.typed):\(bytes.typed)" }
}

extension CachePolicy: ListItem {
    init(parsing item: String) throws(InputError) {
        guard let policy = CachePolicy(rawValue: item.lowercased()) else {
            throw InputError("'\(item)' is not a policy (use \(CachePolicy.allCases.map(\.rawValue).joined(separator: ", ")))")
        }
        self = policy
    }

    var typed: String { rawValue }
}
