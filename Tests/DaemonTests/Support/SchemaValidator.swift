import Foundation
import SignupProtocol

/// A validator for the JSON Schema subset `schema/signup-protocol-v1.schema.json` uses
/// (`$ref`, `oneOf`, `type`, `properties`, `required`, `additionalProperties`, `enum`,
/// `const`, `items`, `minimum`, `minLength`, `pattern`). Every message a test client
/// receives from the daemon goes through it.
struct SchemaValidator: @unchecked Sendable {
    let root: JSONObject

    /// The protocol schema shipped in the repository.
    static let protocolV1: SchemaValidator = {
        let url = SourceTree.root.appendingPathComponent("schema/signup-protocol-v1.schema.json")
        let bytes = Array(try! Data(contentsOf: url))
        return SchemaValidator(root: try! JSONParser.parse(bytes, maxDepth: 64).objectValue!)
    }()

    /// Problems with `value` against the schema at `pointer` (default: server messages).
    func problems(_ value: JSONValue, against pointer: String = "#/$defs/serverMessage") -> [String] {
        guard let schema = resolve(pointer) else { return ["unresolvable \(pointer)"] }
        return check(value, schema, path: "$")
    }

    private func resolve(_ ref: String) -> JSONObject? {
        var node = JSONValue.object(root)
        for part in ref.dropFirst(2).split(separator: "/") {
            guard let next = node.objectValue?[String(part)] else { return nil }
            node = next
        }
        return node.objectValue
    }

    private func check(_ value: JSONValue, _ schema: JSONObject, path: String) -> [String] {
        if let ref = schema["$ref"]?.stringValue {
            guard let target = resolve(ref) else { return ["\(path): bad $ref \(ref)"] }
            return check(value, target, path: path)
        }
        if let options = schema["oneOf"]?.arrayValue {
            let matches = options.filter { option in option.objectValue.map { check(value, $0, path: path).isEmpty } ?? false }
            return matches.count == 1 ? [] : ["\(path): matches \(matches.count) of oneOf, not exactly 1"]
        }
        var problems: [String] = []
        if let expected = schema["const"], expected != value { problems.append("\(path): \(value) is not \(expected)") }
        if let options = schema["enum"]?.arrayValue, !options.contains(value) { problems.append("\(path): \(value) not in enum") }
        if let type = schema["type"] {
            let types = type.arrayValue?.compactMap(\.stringValue) ?? [type.stringValue ?? ""]
            if !types.contains(where: { Self.has(value, type: $0) }) { problems.append("\(path): not of type \(types)") }
        }
        switch value {
        case .string(let string):
            if let min = schema["minLength"]?.int64Value, string.count < min { problems.append("\(path): shorter than \(min)") }
            if let pattern = schema["pattern"]?.stringValue, let regex = try? Regex(pattern), (try? regex.firstMatch(in: string)) == nil {
                problems.append("\(path): does not match \(pattern)")
            }
        case .number(let text):
            if let min = schema["minimum"]?.int64Value, let number = Int64(text), number < min { problems.append("\(path): below \(min)") }
        case .array(let items):
            if let itemSchema = schema["items"]?.objectValue {
                for (index, item) in items.enumerated() { problems += check(item, itemSchema, path: "\(path)[\(index)]") }
            }
        case .object(let object):
            let properties = schema["properties"]?.objectValue
            for key in schema["required"]?.arrayValue?.compactMap(\.stringValue) ?? [] where object[key] == nil {
                problems.append("\(path): missing \(key)")
            }
            for member in object.members {
                if let propertySchema = properties?[member.key]?.objectValue {
                    problems += check(member.value, propertySchema, path: "\(path).\(member.key)")
                } else if schema["additionalProperties"] == .bool(false) {
                    problems.append("\(path): unexpected member \(member.key)")
                }
            }
        default:
            break
        }
        return problems
    }

    private static func has(_ value: JSONValue, type: String) -> Bool {
        switch (value, type) {
        case (.null, "null"), (.bool, "boolean"), (.string, "string"), (.array, "array"), (.object, "object"), (.number, "number"): true
        case (.number(let text), "integer"): Int64(text) != nil
        default: false
        }
    }
}
