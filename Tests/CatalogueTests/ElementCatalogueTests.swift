import Catalogue
import Testing

@Suite("ElementCatalogue", .timeLimit(.minutes(5)))
struct ElementCatalogueTests {
    let catalogue = ElementCatalogue.standard

    @Test("holds the 118 elements in order with the seed's spellings")
    func elements() {
        #expect(catalogue.elements.count == 118)
        #expect(catalogue.elements.map(\.number) == Array(1...118))
        #expect(catalogue.element(number: 13)?.name == "Aluminium")
        #expect(catalogue.element(number: 16)?.name == "Sulfur")
        #expect(catalogue.element(number: 55)?.name == "Cesium")
        let sodium = catalogue.element(number: 11)!
        #expect(sodium.symbol == "Na" && sodium.atomicMass == 22.989769282 && sodium.phase == "Solid")
        #expect(sodium.xpos == 1 && sodium.ypos == 3)
    }

    @Test("carries every fact of the seed's data set (PeriodicTableJSON of 2018-12-21), with its values")
    func seedFacts() {
        let copernicium = catalogue.element(number: 112)!
        #expect(copernicium.density == 23.7 && copernicium.phase == "Gas")  // the newer data set says 14.0 and Liquid
        #expect(catalogue.elements.filter { $0.color != nil }.map(\.symbol) == ["Co"])
        let sodium = catalogue.element(number: 11)!
        #expect(sodium.shells == [2, 8, 1] && sodium.molarHeat == 28.23 && sodium.source == "https://en.wikipedia.org/wiki/Sodium")
        #expect(sodium.spectralImage == "https://en.wikipedia.org/wiki/File:Sodium_Spectra.jpg" && sodium.summary.hasPrefix("Sodium"))
        #expect(catalogue.elements.allSatisfy { !$0.summary.isEmpty && $0.source.hasPrefix("https://") && $0.shells.reduce(0, +) == $0.number })
    }

    @Test("looks elements up by number, symbol or name, case-insensitively")
    func lookup() {
        #expect(catalogue.element(matching: "26")?.symbol == "Fe")
        #expect(catalogue.element(matching: "fe")?.number == 26)
        #expect(catalogue.element(matching: "GOLD")?.number == 79)
        #expect(catalogue.element(matching: "Unobtainium") == nil)
        #expect(catalogue.element(matching: "119") == nil)
        #expect(catalogue.element(matching: "Caesium")?.number == 55)
        #expect(catalogue.element(matching: "aluminum")?.number == 13)
        #expect(catalogue.element(matching: "SULPHUR")?.number == 16)
        #expect(catalogue.element(number: 55)?.otherSpellings == ["caesium"] && catalogue.element(number: 26)?.otherSpellings == [])
    }

    @Test("builds both URL families and marks 90 and up as expected missing")
    func urls() {
        let builder = ImageURLBuilder()
        let hydrogen = catalogue.element(number: 1)!
        #expect(builder.thumbnailURL(for: hydrogen) == "http://www.theodoregray.com/periodictable/Tiles/001/s7.JPG")
        #expect(builder.fullImageURL(for: hydrogen) == "http://images-of-elements.com/hydrogen.jpg")
        #expect(builder.thumbnailURL(for: catalogue.element(number: 118)!).hasSuffix("/Tiles/118/s7.JPG"))
        let images = builder.images(for: catalogue.elements)
        #expect(images.count == 236)
        #expect(images.filter(\.isKnownMissing).count == 29)
        #expect(images.filter(\.isKnownMissing).allSatisfy { $0.kind == .full && $0.element.number >= 90 })
        #expect(images.first { $0.kind == .full && $0.element.number == 55 }?.alternativeURLs == ["http://images-of-elements.com/caesium.jpg"])
        #expect(images.filter { !$0.alternativeURLs.isEmpty }.map(\.element.number) == [13, 16, 55])
        let custom = ImageURLBuilder(tilesBase: "http://127.0.0.1:9/t/", imagesBase: "http://127.0.0.1:9/i")
        #expect(custom.thumbnailURL(for: hydrogen) == "http://127.0.0.1:9/t/Tiles/001/s7.JPG")
    }

    @Test("reads URLs back: under the builder's bases, or on any host; other spellings and queries; nothing else")
    func urlsBack() {
        let builder = ImageURLBuilder(tilesBase: "http://127.0.0.1:9/periodictable", imagesBase: "http://127.0.0.1:9/images-of-elements")
        let iron = catalogue.element(number: 26)!
        for image in builder.images(for: catalogue.elements) {
            #expect(builder.image(at: image.url) == image, "\(image.url)")
        }
        #expect(builder.image(at: "http://127.0.0.1:9/images-of-elements/caesium.jpg")?.element.number == 55)
        #expect(builder.image(at: "http://127.0.0.1:9/periodictable/Tiles/026/s7.JPG?v=2")?.element == iron)
        for url in ["http://127.0.0.1:9/periodictable/Tiles/26/s7.JPG", "http://127.0.0.1:9/periodictable/Tiles/119/s7.JPG",
                    "http://127.0.0.1:9/periodictable/Tiles/026/s7.jpg", "http://127.0.0.1:9/periodictable/Tiles/026/x/s7.JPG",
                    "http://127.0.0.1:9/images-of-elements/Iron.jpg", "http://127.0.0.1:9/images-of-elements/fe.jpg",
                    "http://127.0.0.1:9/images-of-elements/26.jpg", "http://127.0.0.1:9/images-of-elements/a/iron.jpg",
                    "http://other:9/images-of-elements/iron.jpg", "http://127.0.0.1:9/periodictable/iron.png"] {
            #expect(builder.image(at: url) == nil, "\(url)")
        }
        // On any host: access traces and cache entries.
        #expect(ImageURLBuilder.image(at: "https://cdn.example/x/Tiles/118/s7.JPG")?.element.symbol == "Og")
        #expect(ImageURLBuilder.image(at: "https://cdn.example/sulphur.jpg?t=1")?.kind == .full)
        #expect(ImageURLBuilder.image(at: "https://cdn.example/sulphur.jpg")?.element.number == 16)
        #expect(ImageURLBuilder.image(at: "https://cdn.example/Tiles/1/s7.JPG") == nil)
        #expect(ImageURLBuilder.image(at: "https://cdn.example/notes.txt") == nil)
        #expect(ImageURLBuilder.element(tile: "001")?.symbol == "H" && ImageURLBuilder.element(tile: "1") == nil)
        #expect(ImageURLBuilder.element(tile: "٠٠١") == nil)  // digits of other scripts are not tile numbers
        #expect(ImageURLBuilder.element(photo: "aluminum")?.number == 13 && ImageURLBuilder.element(photo: "Al") == nil)
    }
}
