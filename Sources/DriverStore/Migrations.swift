import GRDB

/// Frozen SQL: a migration, once shipped, never changes and never refers to app types.
enum Migrations {
    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1_pings") { db in
            try db.execute(sql: """
                CREATE TABLE ping (
                    id INTEGER PRIMARY KEY AUTOINCREMENT,
                    fix_time REAL NOT NULL,
                    latitude REAL NOT NULL,
                    longitude REAL NOT NULL,
                    altitude REAL,
                    speed REAL,
                    track REAL,
                    climb REAL,
                    horizontal_error REAL,
                    vertical_error REAL,
                    fix_mode INTEGER NOT NULL,
                    satellites INTEGER,
                    motion TEXT NOT NULL,
                    reason TEXT NOT NULL,
                    recorded_at REAL NOT NULL
                );
                CREATE INDEX ping_fix_time ON ping(fix_time);
                """)
        }
        return migrator
    }
}
