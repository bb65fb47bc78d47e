/// An `application/x-www-form-urlencoded` body (a plain HTML form's POST) or query string.
enum FormBody {
    /// Name → value; the first of a repeated name wins. Nil when a value is not valid UTF-8
    /// or a percent escape is malformed.
    static func parse(_ bytes: some Collection<UInt8>) -> [String: String]? {
        var fields: [String: String] = [:]
        for pair in bytes.split(separator: UInt8(ascii: "&"), omittingEmptySubsequences: true) {
            let parts = pair.split(separator: UInt8(ascii: "="), maxSplits: 1, omittingEmptySubsequences: false)
            guard let name = decode(Array(parts[0])), let value = decode(parts.count > 1 ? Array(parts[1]) : []) else { return nil }
            if fields[name] == nil { fields[name] = value }
        }
        return fields
    }

    private static func decode(_ bytes: some Collection<UInt8>) -> String? {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var index = bytes.startIndex
        while index != bytes.endIndex {
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "+"):
                out.append(UInt8(ascii: " "))
            case UInt8(ascii: "%"):
                let high = bytes.index(after: index)
                guard high != bytes.endIndex else { return nil }
                let low = bytes.index(after: high)
                guard low != bytes.endIndex, let h = hexValue(bytes[high]), let l = hexValue(bytes[low]) else { return nil }
                out.append(h << 4 | l)
                index = low
            default:
                out.append(byte)
            }
            index = bytes.index(after: index)
        }
        return String(validating: out, as: UTF8.self)
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
