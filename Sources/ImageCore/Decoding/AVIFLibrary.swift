import CAVIF
import Glibc

/// libavif's functions, loaded on first use, as libvips loads its HEIF module: linking libavif would make every
/// `tilecache` process load it and its AV1 codecs (libaom, dav1d, rav1e, libgav1, SVT-AV1) at start, 2.8 ms measured
/// on a 2-core EPYC, for the few that touch an AVIF. The soname is the one the header (`CAVIF`, libavif 0.11) was
/// written for: the structs it lays out change between major versions, so no other is tried.
///
/// Thread-safety: `@unchecked Sendable` because the function pointers are set once, when the library is loaded (a
/// lazily initialised global, which Swift initialises exactly once), and never change; libavif's functions are safe
/// to call from any thread with objects of the caller's own, as AVIFCodec uses them (a decoder or encoder per call).
struct AVIFLibrary: @unchecked Sendable {
    /// The shared object loaded.
    static let soname = "libavif.so.15"

    let decoderCreate: @convention(c) () -> UnsafeMutablePointer<avifDecoder>?
    let decoderDestroy: @convention(c) (UnsafeMutablePointer<avifDecoder>?) -> Void
    let decoderSetIOMemory: @convention(c) (UnsafeMutablePointer<avifDecoder>?, UnsafePointer<UInt8>?, Int) -> avifResult
    let decoderParse: @convention(c) (UnsafeMutablePointer<avifDecoder>?) -> avifResult
    let decoderNextImage: @convention(c) (UnsafeMutablePointer<avifDecoder>?) -> avifResult
    let resultToString: @convention(c) (avifResult) -> UnsafePointer<CChar>?
    let rgbImageSetDefaults: @convention(c) (UnsafeMutablePointer<avifRGBImage>?, UnsafePointer<avifImage>?) -> Void
    let imageYUVToRGB: @convention(c) (UnsafePointer<avifImage>?, UnsafeMutablePointer<avifRGBImage>?) -> avifResult
    let imageCreate: @convention(c) (UInt32, UInt32, UInt32, avifPixelFormat) -> UnsafeMutablePointer<avifImage>?
    let imageDestroy: @convention(c) (UnsafeMutablePointer<avifImage>?) -> Void
    let imageRGBToYUV: @convention(c) (UnsafeMutablePointer<avifImage>?, UnsafePointer<avifRGBImage>?) -> avifResult
    let encoderCreate: @convention(c) () -> UnsafeMutablePointer<avifEncoder>?
    let encoderDestroy: @convention(c) (UnsafeMutablePointer<avifEncoder>?) -> Void
    let encoderWrite: @convention(c) (UnsafeMutablePointer<avifEncoder>?, UnsafePointer<avifImage>?, UnsafeMutablePointer<avifRWData>?) -> avifResult
    let rwDataFree: @convention(c) (UnsafeMutablePointer<avifRWData>?) -> Void

    /// The library, or why it could not be loaded (the message names the package to install).
    static let shared: Result<AVIFLibrary, LoadFailure> = load()

    /// Why libavif could not be used.
    struct LoadFailure: Error {
        var message: String
    }

    /// The library, or `.unsupportedFormat` about `subject` saying why it is missing.
    static func get(subject: String) throws(ImageCoreError) -> AVIFLibrary {
        switch shared {
        case .success(let library): return library
        case .failure(let failure): throw ImageCoreError(.unsupportedFormat, subject: subject, message: failure.message)
        }
    }

    private static func load() -> Result<AVIFLibrary, LoadFailure> {
        guard let handle = dlopen(soname, RTLD_NOW | RTLD_LOCAL) else {
            let reason = dlerror().map { String(cString: $0) } ?? "not found"
            return .failure(LoadFailure(message: "AVIF needs libavif 0.11 (Debian 12's libavif15), which could not be loaded: \(reason)"))
        }
        var missing: [String] = []
        func symbol<T>(_ name: String, as type: T.Type) -> T? {
            guard let pointer = dlsym(handle, name) else {
                missing.append(name)
                return nil
            }
            return unsafeBitCast(pointer, to: type)
        }
        let library = (
            symbol("avifDecoderCreate", as: (@convention(c) () -> UnsafeMutablePointer<avifDecoder>?).self),
            symbol("avifDecoderDestroy", as: (@convention(c) (UnsafeMutablePointer<avifDecoder>?) -> Void).self),
            symbol("avifDecoderSetIOMemory", as: (@convention(c) (UnsafeMutablePointer<avifDecoder>?, UnsafePointer<UInt8>?, Int) -> avifResult).self),
            symbol("avifDecoderParse", as: (@convention(c) (UnsafeMutablePointer<avifDecoder>?) -> avifResult).self),
            symbol("avifDecoderNextImage", as: (@convention(c) (UnsafeMutablePointer<avifDecoder>?) -> avifResult).self),
            symbol("avifResultToString", as: (@convention(c) (avifResult) -> UnsafePointer<CChar>?).self),
            symbol("avifRGBImageSetDefaults", as: (@convention(c) (UnsafeMutablePointer<avifRGBImage>?, UnsafePointer<avifImage>?) -> Void).self),
            symbol("avifImageYUVToRGB", as: (@convention(c) (UnsafePointer<avifImage>?, UnsafeMutablePointer<avifRGBImage>?) -> avifResult).self),
            symbol("avifImageCreate", as: (@convention(c) (UInt32, UInt32, UInt32, avifPixelFormat) -> UnsafeMutablePointer<avifImage>?).self),
            symbol("avifImageDestroy", as: (@convention(c) (UnsafeMutablePointer<avifImage>?) -> Void).self),
            symbol("avifImageRGBToYUV", as: (@convention(c) (UnsafeMutablePointer<avifImage>?, UnsafePointer<avifRGBImage>?) -> avifResult).self),
            symbol("avifEncoderCreate", as: (@convention(c) () -> UnsafeMutablePointer<avifEncoder>?).self),
            symbol("avifEncoderDestroy", as: (@convention(c) (UnsafeMutablePointer<avifEncoder>?) -> Void).self),
            symbol("avifEncoderWrite", as: (@convention(c) (UnsafeMutablePointer<avifEncoder>?, UnsafePointer<avifImage>?, UnsafeMutablePointer<avifRWData>?) -> avifResult).self),
            symbol("avifRWDataFree", as: (@convention(c) (UnsafeMutablePointer<avifRWData>?) -> Void).self)
        )
        guard missing.isEmpty, let decoderCreate = library.0, let decoderDestroy = library.1, let decoderSetIOMemory = library.2,
              let decoderParse = library.3, let decoderNextImage = library.4, let resultToString = library.5,
              let rgbImageSetDefaults = library.6, let imageYUVToRGB = library.7, let imageCreate = library.8,
              let imageDestroy = library.9, let imageRGBToYUV = library.10, let encoderCreate = library.11,
              let encoderDestroy = library.12, let encoderWrite = library.13, let rwDataFree = library.14 else {
            dlclose(handle)
            return .failure(LoadFailure(message: "\(soname) lacks \(missing.joined(separator: ", ")): not the libavif 0.11 TileCache was built for"))
        }
        // The handle stays open for the life of the process: the functions above point into it.
        return .success(AVIFLibrary(
            decoderCreate: decoderCreate, decoderDestroy: decoderDestroy, decoderSetIOMemory: decoderSetIOMemory,
            decoderParse: decoderParse, decoderNextImage: decoderNextImage, resultToString: resultToString,
            rgbImageSetDefaults: rgbImageSetDefaults, imageYUVToRGB: imageYUVToRGB, imageCreate: imageCreate,
            imageDestroy: imageDestroy, imageRGBToYUV: imageRGBToYUV, encoderCreate: encoderCreate,
            encoderDestroy: encoderDestroy, encoderWrite: encoderWrite, rwDataFree: rwDataFree))
    }
}
