import Foundation
import FormEngine
import Testing

/// PROTOCOL.md's table of message ids is the contract a translating client keys on: it lists
/// every id of the built-in English catalogue and no other, and each id a rule can fail with
/// carries exactly the params the engine sends with it.
@Suite("PROTOCOL.md's message table agrees with the engine")
struct MessageTableTests {
    /// The table's rows, by id (`a.b` / `.c` rows expanded), with the params they list.
    static func table() throws -> [String: Set<String>] {
        let root = SourceTree.root
        let lines = try String(contentsOf: root.appendingPathComponent("PROTOCOL.md"), encoding: .utf8)
            .split(separator: "\n", omittingEmptySubsequences: false)
        let start = try #require(lines.firstIndex(of: "| id | params | en |"), "PROTOCOL.md has no message table")
        var rows: [String: Set<String>] = [:]
        for line in lines[(start + 2)...] {
            guard line.hasPrefix("|") else { break }
            let cells = line.split(separator: "|", omittingEmptySubsequences: false)
            guard cells.count >= 4 else { continue }
            let params = Set(backticked(cells[2]))
            var prefix = ""
            for id in backticked(cells[1]) {
                if id.hasPrefix(".") {
                    rows[prefix + id] = params
                } else {
                    prefix = String(id[..<(id.lastIndex(of: ".") ?? id.endIndex)])
                    rows[id] = params
                }
            }
        }
        return rows
    }

    private static func backticked(_ cell: Substring) -> [String] {
        cell.split(separator: "`", omittingEmptySubsequences: false).enumerated().filter { $0.offset % 2 == 1 }.map { String($0.element) }
    }

    static var english: [String: String] { MessageCatalogues.builtin.byLocale["en"]?.texts ?? [:] }

    @Test("every id of the English catalogue has a row, and every row names a catalogue id")
    func complete() throws {
        let rows = try Self.table()
        let missing = Set(Self.english.keys).subtracting(rows.keys).sorted()
        let stale = Set(rows.keys).subtracting(Self.english.keys).sorted()
        #expect(missing.isEmpty, "PROTOCOL.md's message table lacks \(missing)")
        #expect(stale.isEmpty, "PROTOCOL.md's message table lists ids no catalogue has: \(stale)")
    }

    @Test("each rule failure's row lists exactly the params it is sent with")
    func failureParams() throws {
        let rows = try Self.table()
        var compared = 0
        for (id, params) in MessagePlaceholders.failureParameters where Self.english[id] != nil {
            compared += 1
            #expect(rows[id] == params, "PROTOCOL.md: \(id) lists params \(rows[id].map { $0.sorted() } ?? []), sent with \(params.sorted())")
        }
        #expect(compared > 30)
    }

    @Test("each row lists every placeholder its English text uses")
    func placeholders() throws {
        let rows = try Self.table()
        for (id, text) in Self.english {
            let used = Set(text.split(separator: "{").dropFirst().compactMap { $0.split(separator: "}", maxSplits: 1).first.map(String.init) })
            #expect(used.isSubset(of: rows[id] ?? []), "PROTOCOL.md: \(id)'s text uses \(used.sorted()), the row lists \(rows[id].map { $0.sorted() } ?? [])")
        }
    }
}
