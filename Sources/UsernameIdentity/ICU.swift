import CICU

/// Swift faces of the ICU shim: UTF-16 in, String out.
enum ICU {
    typealias Transform = (UnsafePointer<UInt16>?, Int32, UnsafeMutablePointer<UInt16>?, Int32) -> Int32

    /// Runs an ICU string transform, growing the output buffer once if needed. Nil on an ICU error.
    static func apply(_ transform: Transform, to text: String) -> String? {
        let source = Array(text.utf16)
        var capacity = max(source.count * 2, 16)
        for _ in 0..<3 {
            var output = [UInt16](repeating: 0, count: capacity)
            let needed = source.withUnsafeBufferPointer { input in
                output.withUnsafeMutableBufferPointer { out in
                    transform(input.baseAddress, Int32(input.count), out.baseAddress, Int32(out.count))
                }
            }
            if needed < 0 { return nil }
            if Int(needed) <= capacity { return String(decoding: output[..<Int(needed)], as: UTF16.self) }
            capacity = Int(needed)
        }
        return nil
    }

    static func nfc(_ text: String) -> String? { apply(signupd_nfc, to: text) }
    static func nfkcCasefold(_ text: String) -> String? { apply(signupd_nfkc_casefold, to: text) }
    static func skeleton(_ text: String) -> String? { apply(signupd_skeleton, to: text) }
    static func uppercased(_ text: String) -> String? { apply(signupd_to_upper, to: text) }
    static func lowercased(_ text: String) -> String? { apply(signupd_to_lower, to: text) }
    static func strippingDiacritics(_ text: String) -> String? { apply(signupd_strip_diacritics, to: text) }

    /// One of the SIGNUPD_CLASS_ outcomes (cicu.h), negative for ill-formed text.
    static func classify(_ text: String) -> Int32 {
        let units = Array(text.utf16)
        return units.withUnsafeBufferPointer { signupd_classify($0.baseAddress, Int32($0.count)) }
    }

    /// The UTS #39 checks that failed (0: none), negative on an ICU error.
    static func spoofCheck(_ text: String) -> Int32 {
        let units = Array(text.utf16)
        return units.withUnsafeBufferPointer { signupd_spoof_check($0.baseAddress, Int32($0.count)) }
    }

    /// Whether `text` has no right-to-left character or passes the RFC 5893 Bidi Rule.
    static func passesBidiRule(_ text: String) -> Bool {
        let units = Array(text.utf16)
        return units.withUnsafeBufferPointer { signupd_bidi_rule($0.baseAddress, Int32($0.count)) } == 1
    }

    static func version(_ read: (UnsafeMutablePointer<UInt8>?) -> Void) -> String {
        var version: [UInt8] = [0, 0, 0, 0]
        version.withUnsafeMutableBufferPointer { read($0.baseAddress) }
        return "\(version[0]).\(version[1])"
    }
}
