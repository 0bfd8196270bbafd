import BenchmarkSupport
import MirrorStore

extension Store.Configuration {
    /// The default configuration, encrypted when the run was started with `--encrypted`.
    static var benchmark: Store.Configuration {
        var configuration = Store.Configuration()
        if BenchmarkEncryption.isOn { configuration.encryption = .key(BenchmarkEncryption.key) }
        return configuration
    }
}
