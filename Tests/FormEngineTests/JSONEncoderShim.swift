import Foundation

/// Round-trips a value through JSON, as a daemon persisting sessions would.
enum JSONEncoderShim {
    static func roundTrip<T: Codable>(_ value: T) throws -> T {
        try JSONDecoder().decode(T.self, from: JSONEncoder().encode(value))
    }
}
