/// `text` padded with spaces to `width` characters.
public func pad(_ text: String, _ width: Int) -> String {
    let count = text.count
    return count >= width ? text : text + String(repeating: " ", count: width - count)
}

/// A Markdown table with padded columns, readable in a terminal and pasteable into the docs.
public func markdownTable(_ header: [String], _ rows: [[String]]) -> String {
    let widths = header.indices.map { column in
        ([header] + rows).map { $0[column].count }.max() ?? 0
    }
    func line(_ cells: [String]) -> String {
        "| " + zip(cells, widths).map { pad($0, $1) }.joined(separator: " | ") + " |"
    }
    let rule = "|" + widths.map { String(repeating: "-", count: $0 + 2) }.joined(separator: "|") + "|"
    return ([line(header), rule] + rows.map(line)).joined(separator: "\n")
}
