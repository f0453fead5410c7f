import FoundationEssentials
import SQLiteKit
import Synchronization

/// Map tiles from a local MBTiles file (`kiosk.tiles_file`: raster tiles in SQLite, as MapTiler, TileMill or
/// `mb-util` write them), served by the kiosk itself at `/tiles/{z}/{x}/{y}`: a map a driver can read with no
/// network at all, and nothing fetched from outside. MBTiles count rows from the south (TMS); the page asks
/// in the XYZ scheme.
public final class MBTiles: Sendable {
    /// `png`, `jpg` or `webp`: vector tiles (`pbf`) are not drawn by the page.
    public let format: String
    /// The file's `attribution`, shown on the map unless `kiosk.tiles_attribution` says otherwise.
    public let attribution: String
    private let database: Mutex<Database>

    public struct Problem: Error, CustomStringConvertible, Sendable {
        public let description: String
    }

    public init(path: String) throws(Problem) {
        let database: Database
        do {
            database = try Database(path: path, readOnly: true)
            let metadata = try database.rows(sql: "SELECT name, value FROM metadata")
            var values: [String: String] = [:]
            for row in metadata {
                if let name: String = row.value("name"), let value: String = row.value("value") { values[name] = value }
            }
            // A file without a format says nothing: the page takes PNG or JPEG either way.
            let format = (values["format"] ?? "png").lowercased()
            guard ["png", "jpg", "jpeg", "webp"].contains(format) else {
                throw Problem(description: "kiosk.tiles_file: \(path) holds \(format) tiles; the map draws raster tiles (png, jpg, webp)")
            }
            self.format = format == "jpeg" ? "jpg" : format
            attribution = values["attribution"] ?? ""
            _ = try database.rows(sql: "SELECT zoom_level FROM tiles LIMIT 1")
        } catch let problem as Problem {
            throw problem
        } catch {
            throw Problem(description: "kiosk.tiles_file: \(path) is not an MBTiles file: \(error)")
        }
        self.database = Mutex(database)
    }

    public var contentType: String { format == "jpg" ? "image/jpeg" : "image/\(format)" }

    /// Where the page finds the tiles: the kiosk's own `/tiles` route (relative: the page's origin).
    public static let pageTemplate = "tiles/{z}/{x}/{y}"
    static let route = "/tiles/:z/:x/:y"

    /// The tile at `z`/`x`/`y` (XYZ), or nil where the file has none; throws when the file cannot be read.
    public func tile(z: Int, x: Int, y: Int) throws -> [UInt8]? {
        guard (0...24).contains(z), (0..<(1 << z)).contains(x), (0..<(1 << z)).contains(y) else { return nil }
        let row = (1 << z) - 1 - y
        return try database.withLock { database in
            let data = try database.value(
                Data.self, sql: "SELECT tile_data FROM tiles WHERE zoom_level = ? AND tile_column = ? AND tile_row = ?",
                arguments: [Int64(z), Int64(x), Int64(row)])
            return data.flatMap { $0 }.map { [UInt8]($0) }
        }
    }
}
