import MirrorStore

/// A unique array or set, enforced as the file store enforces it: no element may belong to two
/// objects, while one object may repeat an element, and `nil` elements are no value at all.
///
/// PostgreSQL has no unique index across array elements, so each such property has a side table
/// of its elements, one row per distinct element and owner, unique by element:
///
/// ```sql
/// CREATE TABLE "mirrorstore_ue_…" (element bigint NOT NULL,
///     owner bigint NOT NULL REFERENCES "Badge" ("id") ON DELETE CASCADE,
///     CONSTRAINT "mirrorstore_ux_…" UNIQUE (element) DEFERRABLE INITIALLY DEFERRED)
/// ```
///
/// A row trigger on the model's table (`AFTER INSERT OR UPDATE`) replaces the owner's rows in
/// the same statement as the write, and deleting the owner deletes them, so every write path
/// (upserts, updates, deletes, migrations) keeps them, in the write's transaction. The constraint
/// is checked at `COMMIT`, on what the transaction leaves, as the file store checks its unique
/// indexes when a block commits: a block may take an element before it frees it elsewhere (a
/// seeded test compares random blocks with the file store). It decides between writers of
/// several processes too: a transaction committing an element that another one in progress
/// holds waits for it to end, and fails if it committed, which a check by `SELECT` could not do
/// without a table lock. Its SQLSTATE 23505 names `mirrorstore_ux_…`, which is reported as
/// `StoreError.uniqueViolation` on the property, as for any unique index.
struct UniqueElements: Sendable {
    let property: String
    /// `mirrorstore_ue_…`, the side table.
    let sideTable: String
    /// `mirrorstore_ux_…`, its unique constraint, which a violation names.
    let indexName: String
    /// `mirrorstore_ut_…` and `mirrorstore_uf_…`: the trigger and its function.
    let triggerName: String
    let functionName: String
    /// The SQL type of an element in the side table.
    let elementType: String
    /// The function listing the column's elements: `unnest`, or `jsonb_array_elements_text`,
    /// which gives SQL `NULL` for a JSON `null` (a `nil` element).
    let elementsFunction: String
    /// What `x` is kept as: strings in their NFC form, as Swift's `==` and the file store's index
    /// compare them; `jsonb` elements cast to their type.
    let elementExpression: String
    /// The column's quoted name and the table's quoted name and key.
    let column: String
    let table: String
    let key: String
    let keyType: String

    /// The enforcement of `column` (of `table`, whose key is `primaryKey`), or `nil` for a
    /// property the file store's index keys nothing for (decimals, embedded models, nested
    /// containers), which it therefore does not enforce either.
    init?(column mapping: ColumnMapping, typeName: String, table: String, primaryKey: ColumnMapping) {
        let hashed = { (prefix: String) in SQL.shortName(prefix, typeName, mapping.property) }
        var elementKind: PropertyKind
        switch mapping.kind {
        case .list(let element), .set(let element), .optional(.list(let element)), .optional(.set(let element)): elementKind = element
        default: return nil
        }
        if case .optional(let wrapped) = elementKind { elementKind = wrapped }
        let column = mapping.quotedName
        switch mapping.storage {
        case .array(let type):
            elementType = type.sqlType
            elementsFunction = "unnest"
            elementExpression = type == .text ? "normalize(x, NFC)" : "x"
        case .linkArray(_, let keyType, _):
            // Keys as they are: the file store's index keys a link by its target's stored key.
            elementType = keyType.sqlType
            elementsFunction = "unnest"
            elementExpression = "x"
        case .json:
            guard let type = ScalarType(elementKind), let cast = Self.cast(type) else { return nil }
            elementType = type == .bytea ? "text" : type.sqlType
            elementsFunction = "jsonb_array_elements_text"
            elementExpression = cast
        case .scalar, .link:
            return nil
        }
        property = mapping.property
        sideTable = SQL.identifier(hashed("mirrorstore_ue"))
        indexName = hashed("mirrorstore_ux")
        triggerName = hashed("mirrorstore_ut")
        functionName = hashed("mirrorstore_uf")
        self.column = column
        self.table = table
        key = primaryKey.quotedName
        keyType = primaryKey.sqlType
    }

    /// The elements of `row`'s column, each as `x`: `unnest(r."codes") AS e(x)`.
    private func elements(of row: String) -> String { "\(elementsFunction)(\(row).\(column)) AS e(x)" }

    /// `x`, the text of a `jsonb` element, as the value it encodes (see `JSONCoding`); `nil`
    /// for decimals, which the file store's index keys nothing for.
    private static func cast(_ type: ScalarType) -> String? {
        switch type {
        case .boolean: "x::boolean"
        case .bigint: "x::bigint"
        case .unsigned: "x::numeric"
        case .real: "x::real"
        case .double, .date: "x::double precision"
        case .text: "normalize(x, NFC)"
        // Base64 is canonical: equal bytes, equal text. A URL is equal when its text is.
        case .bytea, .url: "x"
        case .uuid: "x::uuid"
        case .decimal: nil
        }
    }

    /// The element that two owners share and sorts first, as a subquery.
    private var firstSharedElement: String {
        "(SELECT element FROM \(sideTable) GROUP BY element HAVING count(*) > 1 ORDER BY element LIMIT 1)"
    }

    /// The condition on the owners' table that selects the first owner of the first element
    /// two owners share, once a transaction has given one element to two.
    var firstSharerCondition: String {
        "\(key) = (SELECT owner FROM \(sideTable) WHERE element = \(firstSharedElement) ORDER BY owner LIMIT 1)"
    }

    /// The query of the position (from 1) of that element in that owner's column, which is
    /// where it is in the owner's record too: a row of one `bigint`.
    var firstSharedPositionQuery: String {
        "SELECT e.ord FROM \(table) AS r, \(elementsFunction)(r.\(column)) WITH ORDINALITY AS e(x, ord) WHERE r.\(firstSharerCondition) AND \(elementExpression) = \(firstSharedElement) ORDER BY e.ord LIMIT 1"
    }

    /// The statements that make the side table, fill it from the rows stored, and keep it: run
    /// when it does not exist (or its owner's table was just made).
    var createStatements: [String] {
        let collation = elementType == "text" ? " COLLATE \"C\"" : ""
        return [
            "CREATE TABLE \(sideTable) (element \(elementType)\(collation) NOT NULL, owner \(keyType) NOT NULL REFERENCES \(table) (\(key)) ON DELETE CASCADE, CONSTRAINT \(SQL.identifier(indexName)) UNIQUE (element) DEFERRABLE INITIALLY DEFERRED)",
            "CREATE INDEX ON \(sideTable) (owner)",
            "INSERT INTO \(sideTable) (element, owner) SELECT DISTINCT \(elementExpression), r.\(key) FROM \(table) AS r, \(elements(of: "r")) WHERE x IS NOT NULL",
        ]
    }

    /// The trigger function's body, as the server keeps it (`pg_proc.prosrc`): an open compares
    /// it with the stored one to know whether the function names the columns as they are now.
    var functionBody: String {
        """

        BEGIN
            IF TG_OP = 'UPDATE' THEN DELETE FROM \(sideTable) WHERE owner = OLD.\(key); END IF;
            INSERT INTO \(sideTable) (element, owner) SELECT DISTINCT \(elementExpression), NEW.\(key) FROM \(elements(of: "NEW")) WHERE x IS NOT NULL;
            RETURN NULL;
        END

        """
    }

    /// The trigger and its function, made or replaced when an open finds either missing or the
    /// function's body not ``functionBody``.
    var triggerStatements: [String] {
        [
            "CREATE OR REPLACE FUNCTION \(SQL.identifier(functionName))() RETURNS trigger LANGUAGE plpgsql AS $mirrorstore$\(functionBody)$mirrorstore$",
            "CREATE OR REPLACE TRIGGER \(SQL.identifier(triggerName)) AFTER INSERT OR UPDATE OF \(column) ON \(table) FOR EACH ROW EXECUTE FUNCTION \(SQL.identifier(functionName))()",
        ]
    }

    /// Drops what `create…` and `trigger…` made, for a property no longer unique: `names` are
    /// the trigger's name and the table's quoted name.
    static func dropStatements(trigger: String, table: String) -> [String] {
        let suffix = trigger.dropFirst("mirrorstore_ut".count)
        return [
            "DROP TRIGGER IF EXISTS \(SQL.identifier(trigger)) ON \(table)",
            "DROP FUNCTION IF EXISTS \(SQL.identifier("mirrorstore_uf" + suffix))()",
            "DROP TABLE IF EXISTS \(SQL.identifier("mirrorstore_ue" + suffix))",
        ]
    }
}
