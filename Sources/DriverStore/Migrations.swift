import SQLiteKit

/// Frozen SQL: a migration, once shipped, never changes and never refers to app types.
enum Migrations {
    static var migrator: Migrator {
        var migrator = Migrator()
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
        migrator.registerMigration("v2_outbox") { db in
            try db.execute(sql: """
                ALTER TABLE ping ADD COLUMN batch_id TEXT;
                CREATE INDEX ping_batch_id ON ping(batch_id);
                CREATE TABLE outbox_item (
                    id INTEGER PRIMARY KEY AUTOINCREMENT,
                    kind TEXT NOT NULL,
                    task_id TEXT NOT NULL,
                    idempotency_key TEXT NOT NULL UNIQUE,
                    payload BLOB NOT NULL,
                    state TEXT NOT NULL DEFAULT 'pending',
                    attempts INTEGER NOT NULL DEFAULT 0,
                    last_error TEXT,
                    backend_answer TEXT,
                    created_at REAL NOT NULL,
                    finished_at REAL
                );
                CREATE INDEX outbox_item_state_task ON outbox_item(state, task_id, id);
                CREATE TABLE uplink_state (
                    key TEXT PRIMARY KEY NOT NULL,
                    value TEXT NOT NULL
                );
                """)
        }
        migrator.registerMigration("v3_tasks") { db in
            try db.execute(sql: """
                CREATE TABLE task (
                    id TEXT PRIMARY KEY NOT NULL,
                    status TEXT NOT NULL,
                    backend_status TEXT NOT NULL,
                    sync_state TEXT NOT NULL DEFAULT 'synced',
                    pod_type TEXT NOT NULL,
                    pod_state TEXT NOT NULL DEFAULT 'none',
                    failure_reason TEXT,
                    detail BLOB NOT NULL,
                    updated_at REAL NOT NULL
                );
                CREATE TABLE route_stop (
                    position INTEGER PRIMARY KEY NOT NULL,
                    stop_id TEXT NOT NULL
                );
                """)
        }
        migrator.registerMigration("v4_pushes") { db in
            try db.execute(sql: """
                CREATE TABLE push (
                    id INTEGER PRIMARY KEY NOT NULL,
                    kind TEXT NOT NULL,
                    task_id TEXT,
                    message TEXT,
                    title TEXT NOT NULL,
                    interruptive INTEGER NOT NULL,
                    delivered INTEGER NOT NULL DEFAULT 0,
                    received_at REAL NOT NULL
                );
                """)
        }
        migrator.registerMigration("v5_time_source") { db in
            try db.execute(sql: """
                ALTER TABLE ping ADD COLUMN time_source TEXT;
                """)
        }
        migrator.registerMigration("v6_unit_state") { db in
            // One typed row instead of string keys; the values of a unit that ran an earlier release carry over.
            try db.execute(sql: """
                CREATE TABLE unit_state (
                    id INTEGER PRIMARY KEY CHECK (id = 1),
                    last_claimed_ping INTEGER NOT NULL DEFAULT 0,
                    last_push_id INTEGER NOT NULL DEFAULT 0,
                    outbox_owner TEXT,
                    shift_on INTEGER NOT NULL DEFAULT 0,
                    shift_started_at REAL,
                    shift_ended_at REAL
                );
                INSERT INTO unit_state (id, last_claimed_ping, last_push_id, outbox_owner, shift_on, shift_started_at, shift_ended_at)
                SELECT 1,
                    COALESCE((SELECT CAST(value AS INTEGER) FROM uplink_state WHERE key = 'last_claimed_ping'), 0),
                    COALESCE((SELECT CAST(value AS INTEGER) FROM uplink_state WHERE key = 'last_push_id'), 0),
                    (SELECT NULLIF(value, '') FROM uplink_state WHERE key = 'outbox_owner'),
                    COALESCE((SELECT value = '1' FROM uplink_state WHERE key = 'shift_on'), 0),
                    (SELECT CAST(value AS REAL) FROM uplink_state WHERE key = 'shift_started_at'),
                    (SELECT CAST(value AS REAL) FROM uplink_state WHERE key = 'shift_ended_at');
                DROP TABLE uplink_state;
                """)
        }
        migrator.registerMigration("v7_visits") { db in
            try db.execute(sql: """
                CREATE TABLE visit (
                    id TEXT PRIMARY KEY NOT NULL,
                    task_id TEXT NOT NULL,
                    stop_id TEXT NOT NULL,
                    lat REAL NOT NULL,
                    lng REAL NOT NULL,
                    radius REAL NOT NULL,
                    arrived_at REAL NOT NULL,
                    arrival_source TEXT NOT NULL,
                    arrival_distance REAL,
                    time_source TEXT,
                    left_unfinished INTEGER NOT NULL DEFAULT 0,
                    departed_at REAL,
                    dwell_seconds REAL,
                    state TEXT NOT NULL DEFAULT 'open'
                );
                CREATE INDEX visit_state ON visit(state);
                """)
        }
        migrator.registerMigration("v8_travel") { db in
            // The odometer and the trip rules' state (one row), finished trips and idle periods, and each task's
            // odometer readings from its acceptance to its end.
            try db.execute(sql: """
                CREATE TABLE travel_state (
                    id INTEGER PRIMARY KEY CHECK (id = 1),
                    metres REAL NOT NULL DEFAULT 0,
                    bridged_metres REAL NOT NULL DEFAULT 0,
                    gaps INTEGER NOT NULL DEFAULT 0,
                    anchor_time REAL,
                    anchor_lat REAL,
                    anchor_lng REAL,
                    anchor_speed REAL,
                    anchor_error REAL,
                    trip_rules BLOB,
                    shift_started_at REAL,
                    shift_start_metres REAL NOT NULL DEFAULT 0,
                    shift_bridged_start_metres REAL NOT NULL DEFAULT 0,
                    shift_trips INTEGER NOT NULL DEFAULT 0,
                    shift_idle_seconds REAL NOT NULL DEFAULT 0
                );
                CREATE TABLE trip (
                    id TEXT PRIMARY KEY NOT NULL,
                    kind TEXT NOT NULL,
                    started_at REAL NOT NULL,
                    ended_at REAL NOT NULL,
                    metres REAL NOT NULL,
                    start_lat REAL NOT NULL,
                    start_lng REAL NOT NULL,
                    end_lat REAL NOT NULL,
                    end_lng REAL NOT NULL,
                    state TEXT NOT NULL DEFAULT 'queued'
                );
                CREATE INDEX trip_started ON trip(started_at);
                CREATE TABLE task_distance (
                    task_id TEXT PRIMARY KEY NOT NULL,
                    start_metres REAL NOT NULL,
                    end_metres REAL
                );
                """)
        }
        migrator.registerMigration("v9_harsh_events") { db in
            // The shift's count of harsh braking and acceleration events (their reports go through the outbox).
            try db.execute(sql: "ALTER TABLE travel_state ADD COLUMN shift_harsh_events INTEGER NOT NULL DEFAULT 0")
        }
        migrator.registerMigration("v10_remote_config") { db in
            // The fleet's configuration documents as received (signed bytes), at most one on trial and one good;
            // a trial's starts (seconds since boot, in the boot named) decide a rollback.
            try db.execute(sql: """
                CREATE TABLE remote_config (
                    version INTEGER PRIMARY KEY NOT NULL,
                    payload BLOB NOT NULL,
                    signature TEXT NOT NULL,
                    state TEXT NOT NULL,
                    received_at REAL NOT NULL,
                    boot_id TEXT,
                    starts TEXT NOT NULL DEFAULT '[]'
                );
                """)
        }
        migrator.registerMigration("v11_fleet_requests") { db in
            // Requests from the fleet already answered: each is answered once, whatever the push replays.
            try db.execute(sql: """
                CREATE TABLE fleet_request (
                    request_id TEXT PRIMARY KEY NOT NULL,
                    kind TEXT NOT NULL,
                    received_at REAL NOT NULL
                );
                """)
        }
        migrator.registerMigration("v12_ping_ids") { db in
            // A ping's id comes from its writer (above every id so far, and above the last one ever put in a batch:
            // ids never go back, even when the table empties), not from AUTOINCREMENT, whose counter row was one more
            // page written per group commit; and the fix-time index goes (retention walks ids, whose fix times grow
            // with them); the batch index keeps only pings claimed for a batch (a new ping's insert leaves it alone):
            // one page per group commit instead of four.
            try db.execute(sql: """
                CREATE TABLE ping_v12 (
                    id INTEGER PRIMARY KEY,
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
                    recorded_at REAL NOT NULL,
                    batch_id TEXT,
                    time_source TEXT
                );
                INSERT INTO ping_v12 (id, fix_time, latitude, longitude, altitude, speed, track, climb, horizontal_error, vertical_error,
                    fix_mode, satellites, motion, reason, recorded_at, batch_id, time_source)
                SELECT id, fix_time, latitude, longitude, altitude, speed, track, climb, horizontal_error, vertical_error,
                    fix_mode, satellites, motion, reason, recorded_at, batch_id, time_source FROM ping;
                UPDATE unit_state SET last_claimed_ping = max(last_claimed_ping, coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'ping'), 0));
                DROP TABLE ping;
                ALTER TABLE ping_v12 RENAME TO ping;
                CREATE INDEX ping_batch_id ON ping(batch_id) WHERE batch_id IS NOT NULL;
                DELETE FROM sqlite_sequence WHERE name = 'ping';
                """)
        }
        migrator.registerMigration("v13_vehicle") { db in
            // The fault codes the backend was told of (a code that appears or clears is reported against this set), the
            // vehicle's reading at the trip's start, the trips whose odometers disagreed, and each trip's vehicle distance.
            try db.execute(sql: """
                CREATE TABLE vehicle_fault (
                    code TEXT NOT NULL,
                    pending INTEGER NOT NULL,
                    PRIMARY KEY (code, pending)
                );
                ALTER TABLE travel_state ADD COLUMN trip_vehicle_start BLOB;
                ALTER TABLE travel_state ADD COLUMN odometer_disagreements INTEGER NOT NULL DEFAULT 0;
                ALTER TABLE trip ADD COLUMN vehicle_metres REAL;
                ALTER TABLE task_distance ADD COLUMN start_vehicle_km REAL;
                ALTER TABLE task_distance ADD COLUMN end_vehicle_km REAL;
                """)
        }
        migrator.registerMigration("v14_push_cursor") { db in
            // Each driver's push ids count on their own: one cursor per driver (unit_state.last_push_id stays as the
            // cursor of whoever was logged in before this release).
            try db.execute(sql: """
                CREATE TABLE push_cursor (
                    driver_id TEXT PRIMARY KEY NOT NULL,
                    last_push_id INTEGER NOT NULL
                ) WITHOUT ROWID;
                """)
        }
        migrator.registerMigration("v15_set_aside_row") { db in
            // A stored row the daemon could not read is copied here (each column as an SQL literal) before the daemon
            // goes on without it: never overwritten by a fresh default, kept for a person to look at.
            try db.execute(sql: """
                CREATE TABLE set_aside_row (
                    id INTEGER PRIMARY KEY AUTOINCREMENT,
                    table_name TEXT NOT NULL,
                    row_text TEXT NOT NULL,
                    reason TEXT NOT NULL,
                    set_aside_at REAL NOT NULL
                );
                """)
        }
        migrator.registerMigration("v16_answered_offer") { db in
            // The idempotency key of each answer to an offer the backend may make again (a configuration document or a
            // release refused): answered once for good, not again after a restart with a new time in the same key.
            try db.execute(sql: """
                CREATE TABLE answered_offer (
                    idempotency_key TEXT PRIMARY KEY NOT NULL,
                    answered_at REAL NOT NULL
                ) WITHOUT ROWID;
                """)
        }
        return migrator
    }
}
