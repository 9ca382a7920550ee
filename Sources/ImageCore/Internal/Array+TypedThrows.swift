extension Array where Element == UInt8 {
    /// `withUnsafeBytes` keeping the typed error (the standard library's version rethrows `any Error`).
    func withRawBytes<T>(_ body: (UnsafeRawBufferPointer) throws(ImageCoreError) -> T) throws(ImageCoreError) -> T {
        let result: Result<T, ImageCoreError> = withUnsafeBytes { raw in
            do throws(ImageCoreError) { return .success(try body(raw)) } catch { return .failure(error) }
        }
        return try result.get()
    }
}
