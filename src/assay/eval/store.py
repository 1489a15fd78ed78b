"""The results store: SQLite in WAL mode, its schema versioned by `PRAGMA user_version`.

An attempt is written in one transaction when it is complete (its row, stage timings,
evidence, telemetry and score together), keyed by (eval, task, epoch): a crash at any
moment leaves each attempt either wholly recorded or absent, so `--resume` runs exactly
the absent ones, and a second write of the same attempt is refused, never a duplicate.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from assay.errors import AssayError
from assay.eval.record import AttemptRecord
from assay.state_dir import default_cache_dir

#: Each entry migrates the schema from version N to N+1 (its index is N).
MIGRATIONS: tuple[str, ...] = (
    """
    CREATE TABLE evals (
        id TEXT PRIMARY KEY,
        created_at REAL NOT NULL,
        agent TEXT NOT NULL,
        config TEXT NOT NULL
    );
    CREATE TABLE tasks (
        eval_id TEXT NOT NULL REFERENCES evals(id),
        task_id TEXT NOT NULL,
        spec TEXT NOT NULL,
        PRIMARY KEY (eval_id, task_id)
    );
    CREATE TABLE attempts (
        eval_id TEXT NOT NULL REFERENCES evals(id),
        task_id TEXT NOT NULL,
        epoch INTEGER NOT NULL,
        outcome TEXT NOT NULL CHECK (outcome IN ('scored', 'error')),
        status TEXT,
        tries INTEGER NOT NULL,
        error_stage TEXT,
        error_cause TEXT,
        error_message TEXT,
        started_at REAL NOT NULL,
        finished_at REAL NOT NULL,
        PRIMARY KEY (eval_id, task_id, epoch)
    );
    CREATE TABLE stage_timings (
        eval_id TEXT NOT NULL,
        task_id TEXT NOT NULL,
        epoch INTEGER NOT NULL,
        try INTEGER NOT NULL,
        stage TEXT NOT NULL,
        seconds REAL NOT NULL,
        FOREIGN KEY (eval_id, task_id, epoch) REFERENCES attempts(eval_id, task_id, epoch)
    );
    CREATE TABLE evidence (
        eval_id TEXT NOT NULL,
        task_id TEXT NOT NULL,
        epoch INTEGER NOT NULL,
        document TEXT NOT NULL,
        PRIMARY KEY (eval_id, task_id, epoch)
    );
    CREATE TABLE telemetry (
        eval_id TEXT NOT NULL,
        task_id TEXT NOT NULL,
        epoch INTEGER NOT NULL,
        document TEXT NOT NULL,
        PRIMARY KEY (eval_id, task_id, epoch)
    );
    CREATE TABLE scores (
        eval_id TEXT NOT NULL,
        task_id TEXT NOT NULL,
        epoch INTEGER NOT NULL,
        rubric TEXT NOT NULL,
        value REAL NOT NULL,
        detail TEXT NOT NULL,
        PRIMARY KEY (eval_id, task_id, epoch)
    );
    """,
    # 1 -> 2: repositories' knowledge graphs (code units and the tests that exercise each),
    # keyed by the tree they were built from, so an unchanged tree is never measured twice.
    """
    CREATE TABLE graphs (
        tree TEXT NOT NULL,
        language TEXT NOT NULL,
        built_at REAL NOT NULL,
        document TEXT NOT NULL,
        PRIMARY KEY (tree, language)
    );
    CREATE TABLE graph_units (
        tree TEXT NOT NULL,
        language TEXT NOT NULL,
        path TEXT NOT NULL,
        name TEXT NOT NULL,
        start_line INTEGER NOT NULL,
        end_line INTEGER NOT NULL,
        FOREIGN KEY (tree, language) REFERENCES graphs(tree, language)
    );
    CREATE TABLE graph_edges (
        tree TEXT NOT NULL,
        language TEXT NOT NULL,
        path TEXT NOT NULL,
        name TEXT NOT NULL,
        test TEXT NOT NULL,
        direct INTEGER NOT NULL,
        FOREIGN KEY (tree, language) REFERENCES graphs(tree, language)
    );
    """,
)
SCHEMA_VERSION = len(MIGRATIONS)
STORE_FILE = "evals.sqlite"
#: How long a writer waits for another process's transaction before giving up.
BUSY_TIMEOUT_S = 30.0


class StoreError(AssayError):
    """The store cannot be opened or written; the message says which file and why."""


def default_store_path() -> Path:
    return default_cache_dir() / STORE_FILE


@dataclass(frozen=True, slots=True)
class EvalInfo:
    id: str
    created_at: float
    agent: str
    config: dict[str, Any]


class Store:
    """One SQLite file; safe to share between the harness's threads."""

    def __init__(self, path: str | Path | None = None) -> None:
        self.path = Path(path) if path is not None else default_store_path()
        self._lock = threading.Lock()
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(
                self.path, timeout=BUSY_TIMEOUT_S, isolation_level=None, check_same_thread=False
            )
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=FULL")  # a recorded attempt survives power loss
            self._db.execute("PRAGMA foreign_keys=ON")
            self._migrate()
        except (sqlite3.Error, OSError) as exc:
            raise StoreError(f"{self.path}: cannot be used as a store ({exc})") from exc

    def close(self) -> None:
        with self._lock:
            self._db.close()

    # -- schema ----------------------------------------------------------------------------

    def _migrate(self) -> None:
        with self._transaction():
            version = self._db.execute("PRAGMA user_version").fetchone()[0]
            if version > SCHEMA_VERSION:
                raise StoreError(
                    f"{self.path}: store schema {version} is newer than this assay's "
                    f"({SCHEMA_VERSION}); upgrade assay to read it"
                )
            for step in range(version, SCHEMA_VERSION):
                for statement in _statements(MIGRATIONS[step]):
                    self._db.execute(statement)
            if version != SCHEMA_VERSION:
                self._db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")

    @property
    def schema_version(self) -> int:
        return int(self._db.execute("PRAGMA user_version").fetchone()[0])

    @contextmanager
    def _transaction(self) -> Iterator[None]:
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                yield
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")

    # -- writing ---------------------------------------------------------------------------

    def create_eval(
        self, agent: str, config: dict[str, Any], tasks: Sequence[dict[str, Any]]
    ) -> str:
        """A new evaluation with its task specs; returns its id."""
        eval_id = time.strftime("%Y%m%d-%H%M%S-", time.gmtime()) + uuid.uuid4().hex[:6]
        with self._writing(), self._transaction():
            self._db.execute(
                "INSERT INTO evals (id, created_at, agent, config) VALUES (?, ?, ?, ?)",
                (eval_id, time.time(), agent, json.dumps(config)),
            )
            self._db.executemany(
                "INSERT INTO tasks (eval_id, task_id, spec) VALUES (?, ?, ?)",
                [(eval_id, t["id"], json.dumps(t)) for t in tasks],
            )
        return eval_id

    def record_attempt(self, record: AttemptRecord) -> None:
        """Write one complete attempt, atomically; `StoreError` if it is already there."""
        key = (record.eval_id, record.task_id, record.epoch)
        error = record.error
        with self._writing(), self._transaction():
            self._db.execute(
                "INSERT INTO attempts (eval_id, task_id, epoch, outcome, status, tries, "
                "error_stage, error_cause, error_message, started_at, finished_at) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    *key,
                    record.outcome,
                    record.status,
                    record.tries,
                    error.stage if error else None,
                    error.cause if error else None,
                    error.message if error else None,
                    record.started_at,
                    record.finished_at,
                ),
            )
            self._db.executemany(
                "INSERT INTO stage_timings (eval_id, task_id, epoch, try, stage, seconds) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                [(*key, t.attempt_try, t.stage, t.seconds) for t in record.timings],
            )
            self._db.execute(
                "INSERT INTO evidence VALUES (?, ?, ?, ?)",
                (*key, json.dumps(record.evidence, default=str)),
            )
            self._db.execute(
                "INSERT INTO telemetry VALUES (?, ?, ?, ?)", (*key, json.dumps(record.telemetry))
            )
            if record.score is not None:
                self._db.execute(
                    "INSERT INTO scores VALUES (?, ?, ?, ?, ?, ?)",
                    (
                        *key,
                        record.score.rubric,
                        record.score.value,
                        json.dumps(record.score.to_dict()),
                    ),
                )

    @contextmanager
    def _writing(self) -> Iterator[None]:
        try:
            yield
        except sqlite3.IntegrityError as exc:
            raise StoreError(f"{self.path}: already recorded ({exc})") from exc
        except sqlite3.Error as exc:
            raise StoreError(f"{self.path}: write failed ({exc})") from exc

    def save_graph(
        self,
        tree: str,
        language: str,
        document: dict[str, Any],
        units: Sequence[tuple[str, str, int, int]],
        edges: Sequence[tuple[str, str, str, bool]],
    ) -> None:
        """Keep a knowledge graph: its whole document, its units (path, name, first and
        last line) and edges (path, name, test, direct), in one transaction."""
        with self._writing(), self._transaction():
            for table in ("graph_edges", "graph_units", "graphs"):  # a graph of an older format
                self._db.execute(
                    f"DELETE FROM {table} WHERE tree = ? AND language = ?", (tree, language)
                )
            self._db.execute(
                "INSERT INTO graphs (tree, language, built_at, document) VALUES (?, ?, ?, ?)",
                (tree, language, time.time(), json.dumps(document)),
            )
            self._db.executemany(
                "INSERT INTO graph_units VALUES (?, ?, ?, ?, ?, ?)",
                [(tree, language, *unit) for unit in units],
            )
            self._db.executemany(
                "INSERT INTO graph_edges VALUES (?, ?, ?, ?, ?, ?)",
                [(tree, language, p, n, t, int(d)) for p, n, t, d in edges],
            )

    # -- reading ---------------------------------------------------------------------------

    def load_graph(self, tree: str, language: str) -> dict[str, Any] | None:
        """The knowledge graph document kept for `tree` in `language`, if any."""
        rows = self._query(
            "SELECT document FROM graphs WHERE tree = ? AND language = ?", tree, language
        )
        return dict(json.loads(rows[0][0])) if rows else None

    def graph_count(self) -> int:
        """How many knowledge graphs were ever built into this store."""
        return int(self._query("SELECT count(*) FROM graphs")[0][0])

    def get_eval(self, eval_id: str) -> EvalInfo | None:
        row = self._query("SELECT id, created_at, agent, config FROM evals WHERE id = ?", eval_id)
        return _eval_info(row[0]) if row else None

    def latest_eval(self) -> EvalInfo | None:
        row = self._query(
            "SELECT id, created_at, agent, config FROM evals ORDER BY created_at DESC, id DESC "
            "LIMIT 1"
        )
        return _eval_info(row[0]) if row else None

    def task_specs(self, eval_id: str) -> list[dict[str, Any]]:
        rows = self._query("SELECT spec FROM tasks WHERE eval_id = ? ORDER BY task_id", eval_id)
        return [json.loads(r[0]) for r in rows]

    def recorded(self, eval_id: str) -> set[tuple[str, int]]:
        """(task id, epoch) of every attempt already recorded."""
        rows = self._query("SELECT task_id, epoch FROM attempts WHERE eval_id = ?", eval_id)
        return {(r[0], int(r[1])) for r in rows}

    def attempts(self, eval_id: str) -> list[dict[str, Any]]:
        """Every recorded attempt of `eval_id` with its score, evidence and telemetry."""
        rows = self._query(
            "SELECT a.task_id, a.epoch, a.outcome, a.status, a.tries, a.error_stage, "
            "a.error_cause, a.error_message, a.started_at, a.finished_at, s.value, s.rubric, "
            "e.document, t.document FROM attempts a "
            "LEFT JOIN scores s USING (eval_id, task_id, epoch) "
            "LEFT JOIN evidence e USING (eval_id, task_id, epoch) "
            "LEFT JOIN telemetry t USING (eval_id, task_id, epoch) "
            "WHERE a.eval_id = ? ORDER BY a.task_id, a.epoch",
            eval_id,
        )
        names = [
            "task_id",
            "epoch",
            "outcome",
            "status",
            "tries",
            "error_stage",
            "error_cause",
            "error_message",
            "started_at",
            "finished_at",
            "score",
            "rubric",
            "evidence",
            "telemetry",
        ]
        found = []
        for row in rows:
            item = dict(zip(names, row, strict=True))
            item["evidence"] = json.loads(item["evidence"] or "{}")
            item["telemetry"] = json.loads(item["telemetry"] or "{}")
            found.append(item)
        return found

    def stage_timings(self, eval_id: str) -> list[tuple[str, int, int, str, float]]:
        return [
            (r[0], int(r[1]), int(r[2]), r[3], float(r[4]))
            for r in self._query(
                "SELECT task_id, epoch, try, stage, seconds FROM stage_timings "
                "WHERE eval_id = ? ORDER BY task_id, epoch, try",
                eval_id,
            )
        ]

    def _query(self, sql: str, *params: Any) -> list[tuple[Any, ...]]:
        try:
            with self._lock:
                return list(self._db.execute(sql, params).fetchall())
        except sqlite3.Error as exc:
            raise StoreError(f"{self.path}: read failed ({exc})") from exc


def _eval_info(row: tuple[Any, ...]) -> EvalInfo:
    return EvalInfo(id=row[0], created_at=float(row[1]), agent=row[2], config=json.loads(row[3]))


def _statements(script: str) -> list[str]:
    return [s.strip() for s in script.split(";") if s.strip()]
