import ImageCore
import Testing

@Suite("ElementCatalogue")
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

    @Test("looks elements up by number, symbol or name, case-insensitively")
    func lookup() {
        #expect(catalogue.element(matching: "26")?.symbol == "Fe")
        #expect(catalogue.element(matching: "fe")?.number == 26)
        #expect(catalogue.element(matching: "GOLD")?.number == 79)
        #expect(catalogue.element(matching: "Unobtainium") == nil)
        #expect(catalogue.element(matching: "119") == nil)
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
        let custom = ImageURLBuilder(tilesBase: "http://127.0.0.1:9/t/", imagesBase: "http://127.0.0.1:9/i")
        #expect(custom.thumbnailURL(for: hydrogen) == "http://127.0.0.1:9/t/Tiles/001/s7.JPG")
    }
}
