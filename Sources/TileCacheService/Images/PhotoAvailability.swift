public import Catalogue
public import ImageCore
import NIOConcurrencyHelpers

/// What the photo host has said about each element's photo: the source of `has_image` beyond the catalogue's
/// known-missing rule (elements 90 and up).
///
/// Every load of a photo feeds it (the image routes' and the start-up prefetch's). Thread-safety: any task.
public final class PhotoAvailability: Sendable {
    /// Elements whose photo the photo host answered 404 for, under every spelling, at the last try.
    private let missing = NIOLockedValueBox(Set<Int>())

    /// Nothing known yet: every photo is taken to exist.
    public init() {}

    /// Whether the photo host's last answer for `element`'s photo was 404 (or 410) under every spelling.
    public func lacksPhoto(_ element: Element) -> Bool { missing.withLockedValue { $0.contains(element.number) } }

    /// Records what a load of `element`'s photo said: success means the host has it, 404 or 410 under every spelling
    /// that it has none; any other failure says nothing.
    public func note(_ element: Element, after error: ImageCoreError?) {
        guard let error else {
            missing.withLockedValue { _ = $0.remove(element.number) }
            return
        }
        if error.isNotFound { missing.withLockedValue { _ = $0.insert(element.number) } }
    }
}
