import Foundation

/// Where a ``PostgresStore`` finds its server: host, port, user, database and password.
///
/// ```swift
/// let settings = PostgresSettings(host: "127.0.0.1", port: 5432, user: "app", database: "app")
/// let fromEnvironment = PostgresSettings.fromEnvironment()   // MIRRORSTORE_POSTGRES_HOST, …
/// ```
public struct PostgresSettings: Sendable, Equatable {
    /// The server's host name or address.
    public var host: String
    /// The server's TCP port.
    public var port: Int
    /// The user to log in as.
    public var user: String
    /// The database to use; its tables are created on open.
    public var database: String
    /// The password, when the server asks for one.
    public var password: String?
    /// How long opening waits for the server before it throws
    /// ``PostgresStoreError/Kind/connectionFailed(host:port:reason:)``.
    public var connectTimeout: Duration
    /// How long a call on an open store (a read, a write block with its own code, the start of
    /// an observation, `close()`) may wait for the server before it throws
    /// ``PostgresStoreError/Kind/timedOut(host:port:timeout:reason:)`` (`close()` returns): a
    /// server lost after opening makes calls fail, and once it answers again the next calls
    /// reconnect. Give it room for the longest write block the app runs.
    public var callTimeout: Duration

    /// Settings for the server at `host:port`.
    public init(
        host: String = "127.0.0.1", port: Int = 5432, user: String, database: String, password: String? = nil,
        connectTimeout: Duration = .seconds(5), callTimeout: Duration = .seconds(30)
    ) {
        self.host = host
        self.port = port
        self.user = user
        self.database = database
        self.password = password
        self.connectTimeout = connectTimeout
        self.callTimeout = callTimeout
    }

    /// Settings from `MIRRORSTORE_POSTGRES_HOST`, `_PORT`, `_USER`, `_DATABASE` and `_PASSWORD`
    /// (what `Scripts/with-postgres.sh` exports), or `nil` when the host or user is not set.
    ///
    /// ```swift
    /// guard let settings = PostgresSettings.fromEnvironment() else { return }   // no server
    /// ```
    public static func fromEnvironment(_ environment: [String: String] = ProcessInfo.processInfo.environment) -> PostgresSettings? {
        guard let host = environment["MIRRORSTORE_POSTGRES_HOST"], !host.isEmpty,
              let user = environment["MIRRORSTORE_POSTGRES_USER"], !user.isEmpty else { return nil }
        return PostgresSettings(
            host: host,
            port: environment["MIRRORSTORE_POSTGRES_PORT"].flatMap { Int($0) } ?? 5432,
            user: user,
            database: environment["MIRRORSTORE_POSTGRES_DATABASE"] ?? user,
            password: environment["MIRRORSTORE_POSTGRES_PASSWORD"])
    }
}
