"""The store's SQL schema: ordered migrations and the tables every export carries.

Below both the SQLite store (`sqlite.py`, which applies the migrations) and the Parquet
export (`parquet.py`, which copies `TABLES` one file each), so neither imports the other's
module to learn the schema.
"""
from __future__ import annotations

# Ordered migrations: MIGRATIONS[i] takes the schema from version i to i + 1.
_V1 = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS problems (id TEXT PRIMARY KEY, level INTEGER, data TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS candidates (
    id TEXT PRIMARY KEY, problem_id TEXT NOT NULL, parent_id TEXT, generation INTEGER,
    origin TEXT, backend TEXT, data TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS candidates_problem ON candidates(problem_id);
CREATE INDEX IF NOT EXISTS candidates_parent ON candidates(parent_id);
CREATE TABLE IF NOT EXISTS measurements (
    candidate_id TEXT NOT NULL, hardware_key TEXT NOT NULL, problem_id TEXT NOT NULL,
    status TEXT NOT NULL, speedup REAL, data TEXT NOT NULL,
    PRIMARY KEY (candidate_id, hardware_key));
CREATE TABLE IF NOT EXISTS forecasts (
    forecaster TEXT NOT NULL, candidate_id TEXT NOT NULL, hardware_key TEXT NOT NULL,
    relative_to TEXT NOT NULL, problem_id TEXT NOT NULL, data TEXT NOT NULL,
    PRIMARY KEY (forecaster, candidate_id, hardware_key, relative_to));
CREATE TABLE IF NOT EXISTS searches (id TEXT PRIMARY KEY, state TEXT NOT NULL,
    created_at TEXT NOT NULL, data TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS search_events (
    search_id TEXT NOT NULL, seq INTEGER NOT NULL, kind TEXT NOT NULL, payload TEXT NOT NULL,
    created_at TEXT NOT NULL, PRIMARY KEY (search_id, seq));
INSERT OR IGNORE INTO meta(key, value) VALUES ('version', '0');
"""
_V2 = """
CREATE INDEX IF NOT EXISTS measurements_problem_hw ON measurements(problem_id, hardware_key, status);
CREATE INDEX IF NOT EXISTS forecasts_problem ON forecasts(problem_id, hardware_key);
ALTER TABLE measurements ADD COLUMN measured_at TEXT;
UPDATE measurements SET measured_at = json_extract(data, '$.measured_at');
"""
# A measurement is keyed by the contract it was judged by too (precision, tolerance; see
# workbench.problems.contract): the same kernel on the same GPU at fp16 and as written are two
# records. Rows from before read as native / project, which is what they were measured with.
_V3 = """
CREATE TABLE measurements_v3 (
    candidate_id TEXT NOT NULL, hardware_key TEXT NOT NULL, problem_id TEXT NOT NULL,
    status TEXT NOT NULL, speedup REAL, data TEXT NOT NULL, measured_at TEXT,
    precision TEXT NOT NULL DEFAULT 'native', tolerance TEXT NOT NULL DEFAULT 'project',
    PRIMARY KEY (candidate_id, hardware_key, precision, tolerance));
INSERT INTO measurements_v3(candidate_id, hardware_key, problem_id, status, speedup, data, measured_at)
    SELECT candidate_id, hardware_key, problem_id, status, speedup, data, measured_at FROM measurements
    ORDER BY rowid;
DROP TABLE measurements;
ALTER TABLE measurements_v3 RENAME TO measurements;
CREATE INDEX IF NOT EXISTS measurements_problem_hw ON measurements(problem_id, hardware_key, status);
"""
MIGRATIONS: tuple[str, ...] = (_V1, _V2, _V3)
SCHEMA_VERSION = len(MIGRATIONS)

TABLES = ("problems", "candidates", "measurements", "forecasts", "searches", "search_events")
