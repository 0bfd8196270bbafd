/// Order statistics of one cell's samples: median, quartiles (linear interpolation), extremes.
public struct Summary {
    public let median: Double
    public let lowerQuartile: Double
    public let upperQuartile: Double
    public let minimum: Double
    public let maximum: Double

    public init(_ samples: [Double]) {
        let sorted = samples.sorted()
        func quantile(_ q: Double) -> Double {
            guard !sorted.isEmpty else { return .nan }
            let position = q * Double(sorted.count - 1)
            let low = Int(position.rounded(.down))
            let high = min(low + 1, sorted.count - 1)
            return sorted[low] + (sorted[high] - sorted[low]) * (position - Double(low))
        }
        median = quantile(0.5)
        lowerQuartile = quantile(0.25)
        upperQuartile = quantile(0.75)
        minimum = sorted.first ?? .nan
        maximum = sorted.last ?? .nan
    }

    /// Half the interquartile range, relative to the median.
    public var relativeSpread: Double { (upperQuartile - lowerQuartile) / 2 / median }
}
