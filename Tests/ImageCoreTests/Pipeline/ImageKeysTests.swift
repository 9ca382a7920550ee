import ImageCore
import Testing
import TestSupport

/// Each key an image gets, pinned with literal values computed outside Swift (Python's hashlib): a test here fails
/// when a derivation changes, because a changed key is a cache flush for every user (their disk entries and shared
/// objects become unreachable, their clients' ETags stop matching).
@Suite("ImageKey: every key, pinned", .timeLimit(.minutes(5)))
struct ImageKeysTests {
    static let tile = "http://www.theodoregray.com/periodictable/Tiles/026/s7.JPG"
    static let photo = "http://images-of-elements.com/gold.jpg"
    static let webp = ImageProcessing(width: 64, height: 64, fit: .cover, format: .webp)

    @Test("an original: its URL is the memory and disk key; the entry and object names are the URL's SHA-256")
    func original() {
        let key = ImageKey(url: Self.tile)
        #expect(key.cacheKey == Self.tile)
        #expect(key.diskEntryName == "16d85394a55b3677db92032caf2d97229aa9c21a72a9743f829b8f63f61251f0.tce")
        #expect(key.sharedObjectName == "objects/16/16d85394a55b3677db92032caf2d97229aa9c21a72a9743f829b8f63f61251f0")
        #expect(key.etagSuffix == "")
        #expect(ImageKey.etag(sourceChecksum: "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824")
                == "\"2cf24dba5fb0a30e26e83b2ac5b9e29e\"")
    }

    @Test("an open source (public addresses only) is kept apart from the same URL a trusted load fetched: its own keys")
    func publicOnly() {
        let key = ImageKey(url: Self.tile, addresses: .publicOnly)
        #expect(key.cacheKey == "public-only:" + Self.tile)
        #expect(key.diskEntryName == "b83494198ed73166c9e294d77fee650be10c0dd2b691d9012c22545e83b1c483.tce")
        #expect(key.sharedObjectName == "objects/b8/b83494198ed73166c9e294d77fee650be10c0dd2b691d9012c22545e83b1c483")
        #expect(ImageKey(url: Self.tile, processing: Self.webp, addresses: .publicOnly).cacheKey == "public-only:" + Self.tile + "#w=64&h=64&fit=cover&f=webp")
        #expect(key.etagSuffix == "" && ImageKey(url: Self.tile).cacheKey == Self.tile)
    }

    @Test("a variant: the URL and its options in a fixed order; the object is the source's name and the ETag suffix")
    func variant() {
        let key = ImageKey(url: Self.photo, processing: Self.webp)
        #expect(key.cacheKey == "http://images-of-elements.com/gold.jpg#w=64&h=64&fit=cover&f=webp")
        #expect(key.diskEntryName == "fbba88ff02b40fbfa4b42ab0f8cbe96b98e2b9a294a97ae8229c692be2a89c2d.tce")
        #expect(key.sharedObjectName == "objects/f3/f3de5ce595c83cf154538a402a6236cee65ea8eec3ae144e773166a8e20ad183-r4w64h64cwebp")
        #expect(key.etagSuffix == "-r4w64h64cwebp")
        #expect(ImageKey.etag(variantOf: "\"2cf24dba5fb0a30e26e83b2ac5b9e29e\"", processing: Self.webp)
                == "\"2cf24dba5fb0a30e26e83b2ac5b9e29e-r4w64h64cwebp\"")
        // Every option reaches the suffix, in its fixed order; the default quality is no option at all.
        let all = ImageProcessing(width: 300, height: 200, fit: .fill, enlarge: true, quality: 90, format: .png)
        #expect(ImageKey(url: Self.photo, processing: all).etagSuffix == "-r4w300h200seq90png")
        #expect(ImageKey(url: Self.photo, processing: all).cacheKey == Self.photo + "#w=300&h=200&fit=fill&enlarge=1&q=90&f=png")
        #expect(ImageKey(url: Self.photo, processing: ImageProcessing(width: 64, quality: ImageProcessing.defaultQuality)).cacheKey
                == Self.photo + "#w=64")
    }

    @Test("a request's key is the key of the URL that served it, processed as asked")
    func servedBy() {
        let request = ImageRequest(url: "http://images-of-elements.com/cesium.jpg", alternatives: ["http://images-of-elements.com/caesium.jpg"],
                                   processing: ImageProcessing(width: 64))
        #expect(request.key(servedBy: "http://images-of-elements.com/caesium.jpg").cacheKey == "http://images-of-elements.com/caesium.jpg#w=64")
    }
}
