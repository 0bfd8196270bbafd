import BenchmarkSupport
import Foundation

// Order statistics and table formatting (the same conventions as the mapping benchmarks).

func median(_ values: [Double]) -> Double { Summary(values).median }

/// A duration in the unit that suits it.
func formatSeconds(_ seconds: Double) -> String {
    switch seconds {
    case ..<1e-6: String(format: "%.0f ns", seconds * 1e9)
    case ..<1e-4: String(format: "%.2f µs", seconds * 1e6)
    case ..<1e-3: String(format: "%.0f µs", seconds * 1e6)
    case ..<1e-1: String(format: "%.2f ms", seconds * 1e3)
    case ..<1: String(format: "%.0f ms", seconds * 1e3)
    default: String(format: "%.2f s", seconds)
    }
}

func formatRatio(_ value: Double) -> String {
    String(format: value >= 10 ? "%.1f×" : "%.2f×", value)
}

func formatBytes(_ bytes: Double) -> String {
    switch abs(bytes) {
    case ..<10_000: String(format: "%.0f B", bytes)
    case ..<10_485_760.0: String(format: "%.1f KiB", bytes / 1024)
    default: String(format: "%.1f MiB", bytes / 1_048_576)
    }
}

func formatCount(_ value: Int) -> String {
    let digits = String(value)
    var result = ""
    for (index, character) in digits.enumerated() {
        if index > 0 && (digits.count - index) % 3 == 0 { result.append(",") }
        result.append(character)
    }
    return result
}

