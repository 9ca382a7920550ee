/// One chemical element: every fact the seed element API served, in its spellings, plus TileCache's own
/// (`group`, `block`, `electronConfiguration`).
public struct Element: Sendable, Hashable, Codable {
    /// Atomic number, 1...118.
    public var number: Int
    /// Chemical symbol, e.g. `Na`.
    public var symbol: String
    /// English name as the seed API spells it (`Aluminium`, `Sulfur`, `Cesium`).
    public var name: String
    /// Standard atomic weight.
    public var atomicMass: Double
    /// Category, e.g. `alkali metal`.
    public var category: String
    /// Period (row) 1...7.
    public var period: Int
    /// Group (column) 1...18, as the data set numbers it.
    public var group: Int
    /// `Gas`, `Liquid` or `Solid`.
    public var phase: String
    /// Melting point in kelvin, where known.
    public var melt: Double?
    /// Boiling point in kelvin, where known.
    public var boil: Double?
    /// Density (g/cm³ for solids and liquids, g/L for gases), where known.
    public var density: Double?
    /// Who discovered it, where known.
    public var discoveredBy: String?
    /// Who named it, where known.
    public var namedBy: String?
    /// Appearance, where known.
    public var appearance: String?
    /// Colour, where the data set gives one (only Cobalt's, in the seed's data).
    public var color: String?
    /// Molar heat capacity in J/(mol·K), where known.
    public var molarHeat: Double?
    /// The article the facts were taken from (a Wikipedia URL).
    public var source: String
    /// URL of an emission spectrum image, where the data set has one.
    public var spectralImage: String?
    /// A paragraph about the element (from Wikipedia, CC BY-SA 3.0).
    public var summary: String
    /// Electrons per shell, innermost first.
    public var shells: [Int]
    /// Block (`s`, `p`, `d`, `f`).
    public var block: String?
    /// Electron configuration, e.g. `1s2 2s1`.
    public var electronConfiguration: String?
    /// Column in the standard table layout (1...18).
    public var xpos: Int
    /// Row in the standard table layout (1...10; lanthanides and actinides below).
    public var ypos: Int

    /// The atomic number as the thumbnail host writes it: three digits (`001`, `018`, `118`).
    public var paddedNumber: String {
        let digits = String(number)
        return String(repeating: "0", count: max(0, 3 - digits.count)) + digits
    }

    /// Other spellings of the name, lowercased (`caesium` for Cesium); empty for most elements.
    public var otherSpellings: [String] { ElementCatalogue.otherSpellings[name.lowercased()] ?? [] }

    /// Whether the full-size photo host is known to have no photo of this element (atomic numbers 90 and up).
    public var hasKnownMissingPhoto: Bool { number >= ElementCatalogue.firstNumberWithoutPhoto }
}
