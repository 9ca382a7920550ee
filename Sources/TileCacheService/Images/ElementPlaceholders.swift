import Catalogue
import ImageCore
import Logging
import NIOConcurrencyHelpers
import NIOCore

/// The element API's placeholders: each element's thumbnail placeholder (`ImagePlaceholder`), the pipeline's
/// placeholder variant of the thumbnail, so it is made once and kept in every tier as the thumbnail is; a page of
/// records asks for its elements' at once.
struct ElementPlaceholders: Sendable {
    let pipeline: ImagePipeline
    let builder: ImageURLBuilder
    let logger: Logger

    /// Placeholders loaded at once for one page of records.
    static let concurrency = 8
    /// How long a page of records waits for placeholders not made yet: past it, the records go out with those found
    /// (the rest `null`), so a slow or unreachable image host never holds the element API up; the loads go on, and the
    /// tiers keep what they make for the next page.
    static let pageWait = Duration.seconds(3)

    /// The thumbnail placeholders of `elements` found within `limit` (see `pageWait`).
    func thumbnails(of elements: [Element], within limit: Duration) async -> [Int: ImagePlaceholder] {
        let found = NIOLockedValueBox([Int: ImagePlaceholder]())
        let waiter = NIOLockedValueBox<CheckedContinuation<Void, Never>?>(nil)
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            waiter.withLockedValue { $0 = continuation }
            /// Resumes the page once: when every placeholder is in, or at the limit, whichever comes first.
            @Sendable func release() { waiter.withLockedValue { $0.take() }?.resume() }
            // Unstructured on purpose: the loads outlive a page that stopped waiting, to fill the tiers.
            Task {
                _ = await thumbnails(of: elements) { number, placeholder in found.withLockedValue { $0[number] = placeholder } }
                release()
            }
            Task {
                try? await Task.sleep(for: limit)
                release()
            }
        }
        return found.withLockedValue { $0 }
    }

    /// The thumbnail placeholders of `elements`, by element number, each also given to `each` as it comes; an element
    /// whose thumbnail cannot be loaded now has none (its keys are `null`: the list never fails for a placeholder).
    func thumbnails(of elements: [Element],
                    each: @escaping @Sendable (Int, ImagePlaceholder) -> Void = { _, _ in }) async -> [Int: ImagePlaceholder] {
        await withTaskGroup(of: (Int, ImagePlaceholder?).self) { group in
            var found: [Int: ImagePlaceholder] = [:]
            var pending = elements[...]
            func start() {
                guard let element = pending.popFirst() else { return }
                group.addTask { (element.number, await thumbnail(of: element)) }
            }
            for _ in 0..<Self.concurrency { start() }
            for await (number, placeholder) in group {
                if let placeholder {
                    found[number] = placeholder
                    each(number, placeholder)
                }
                start()
            }
            return found
        }
    }

    /// `element`'s thumbnail placeholder, or nil (logged) when it cannot be loaded.
    func thumbnail(of element: Element) async -> ImagePlaceholder? {
        let request = ImageRequest(url: builder.url(for: element, kind: .thumbnail)).placeholder
        do {
            return try await ImagesController.image(for: request, from: pipeline, logger: logger).placeholder
        } catch {
            return nil
        }
    }
}
