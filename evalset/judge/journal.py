"""The judge's journal: every answer is committed to SQLite the moment it arrives.

Keyed by ``(model, prompt_sha256, guideline_sha256, pair_id)``: a run started again with the same model,
template and guideline asks only for the pairs the journal lacks; a change of any of them starts afresh (the old
answers stay in the file under their own key). A pair is either ``judged`` (grade and reason) or ``failed``
(the model's answers were unusable: unparsable or off the scale after the re-asks; the last reason); both are
final for a resumed run. Only what the model said is journaled: a pair that got no answer (connection errors,
timeouts, 429s or 5xx to the end, a 4xx) is not, so the next run asks it again. Journals written before this rule
may hold such pairs as ``failed``; :meth:`Journal.answers` leaves them out (only ``invalid answer ...`` failures
count), so they are asked again too. The journal runs in WAL mode and commits
each answer, so a process killed at any moment (SIGKILL included) loses at most the answers in flight.

Batch jobs submitted with ``--batch`` are recorded too, so a restarted run polls the batch it already submitted
instead of paying for a second one.

A run that stops early says what the journal holds and that the same command resumes from it: Ctrl-C (the
``KeyboardInterrupt`` carries the line), a write the disk refuses (a :class:`~evalset.errors.ServiceError`); a
journal it created that holds nothing then (nothing was asked: a dead endpoint, a disk that refused the first
write) is removed, so that no empty journal is left behind. A run that ends keeps its journal beside its tables.
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
from dataclasses import dataclass

from evalset.errors import InputError, ServiceError

_SCHEMA = """
CREATE TABLE IF NOT EXISTS answers (
    model TEXT NOT NULL, prompt_sha256 TEXT NOT NULL, guideline_sha256 TEXT NOT NULL, pair_id TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('judged', 'failed')),
    grade INTEGER, reason TEXT NOT NULL, attempts INTEGER NOT NULL,
    prompt_tokens INTEGER NOT NULL, completion_tokens INTEGER NOT NULL, answered_at TEXT NOT NULL,
    PRIMARY KEY (model, prompt_sha256, guideline_sha256, pair_id)
);
CREATE TABLE IF NOT EXISTS batches (
    model TEXT NOT NULL, prompt_sha256 TEXT NOT NULL, guideline_sha256 TEXT NOT NULL, batch_id TEXT NOT NULL,
    round INTEGER NOT NULL, pair_ids TEXT NOT NULL, state TEXT NOT NULL,
    PRIMARY KEY (batch_id)
);
"""


FINAL_FAILURE = "invalid answer "  # how the reason of a final failure starts (the model answered, unusably)


@dataclass(frozen=True)
class Answer:
    """One answer: ``status`` is ``judged``, ``failed`` (final) or ``unanswered`` (never journaled); ``grade`` is
    None unless judged."""

    pair_id: str
    status: str
    grade: int | None
    reason: str
    attempts: int
    prompt_tokens: int
    completion_tokens: int
    answered_at: str


class Journal:
    """An open journal for one ``(model, prompt, guideline)`` key; use as a context manager."""

    def __init__(self, path: str | os.PathLike, model: str, prompt_sha256: str, guideline_sha256: str):
        self.path = os.fspath(path)
        self.key = (model, prompt_sha256, guideline_sha256)
        self._created = not os.path.exists(self.path)
        try:
            self._db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")  # durable against a killed process; WAL keeps it atomic
            self._db.executescript(_SCHEMA)
        except sqlite3.DatabaseError as exc:
            if getattr(exc, "sqlite_errorname", None) == "SQLITE_NOTADB":
                raise InputError(f"not a journal (SQLite): {exc}", self.path) from exc
            if isinstance(exc, sqlite3.OperationalError):  # a missing or read-only folder, a full disk
                self._remove_if_new()
                raise ServiceError(f"cannot open the journal {self.path}: {exc}") from exc
            raise

    def __enter__(self) -> Journal:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, traceback: object) -> None:
        held = self._held() if exc is not None else 0  # said only when the run stopped early
        self.close(remove_empty=exc is not None)
        resumes = f"{held:,} answers are in it: the same command resumes from them"
        if isinstance(exc, KeyboardInterrupt):
            raise KeyboardInterrupt(f"{held:,} answers are in the journal {self.path}: the same command resumes "
                                    "from them") from exc
        if isinstance(exc, sqlite3.OperationalError):  # a write refused mid-run: a full disk
            raise ServiceError(f"cannot write the journal {self.path}: {exc}; {resumes} once it can be written") \
                from exc

    def _held(self) -> int:
        """This key's answers in the journal (0 when it cannot be read any more)."""
        try:
            return len(self.answers())
        except sqlite3.Error:
            return 0

    def close(self, remove_empty: bool = False) -> None:
        """Close; with ``remove_empty`` (a run that stopped early) a journal it created and that holds nothing goes
        too, while a run that ends keeps its journal, empty or not, beside the tables it wrote."""
        empty = remove_empty and self._created and self._empty()
        self._db.close()
        if empty:
            self._remove_if_new()

    def _empty(self) -> bool:
        try:
            return not any(self._db.execute(f"SELECT 1 FROM {table} LIMIT 1").fetchone()
                           for table in ("answers", "batches"))
        except sqlite3.Error:
            return False

    def _remove_if_new(self) -> None:
        """Remove the journal's files when this run created them (and the SQLite files beside it)."""
        if self._created:
            for suffix in ("", "-wal", "-shm", "-journal"):
                with contextlib.suppress(OSError):
                    os.unlink(self.path + suffix)

    def answers(self) -> dict[str, Answer]:
        """Every final answer under this key, by pair id (a grade, or answers the model gave that were unusable)."""
        rows = self._db.execute(
            "SELECT pair_id, status, grade, reason, attempts, prompt_tokens, completion_tokens, answered_at "
            "FROM answers WHERE model = ? AND prompt_sha256 = ? AND guideline_sha256 = ? "
            f"AND (status = 'judged' OR reason LIKE '{FINAL_FAILURE}%')", self.key)
        return {row[0]: Answer(*row) for row in rows}

    def record(self, answer: Answer) -> None:
        """Commit one answer (replacing an earlier failure of the same pair when failures are retried)."""
        self._db.execute("INSERT OR REPLACE INTO answers VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                         (*self.key, answer.pair_id, answer.status, answer.grade, answer.reason, answer.attempts,
                          answer.prompt_tokens, answer.completion_tokens, answer.answered_at))

    def forget_failures(self) -> int:
        """Drop this key's failures so that they are asked again; returns how many."""
        cursor = self._db.execute("DELETE FROM answers WHERE model = ? AND prompt_sha256 = ? "
                                  "AND guideline_sha256 = ? AND status = 'failed'", self.key)
        return cursor.rowcount

    def open_batches(self) -> list[tuple[str, int, list[str]]]:
        """Batches submitted under this key and not yet collected: ``(batch_id, round, pair_ids)``."""
        rows = self._db.execute("SELECT batch_id, round, pair_ids FROM batches WHERE model = ? AND "
                                "prompt_sha256 = ? AND guideline_sha256 = ? AND state = 'open' ORDER BY rowid",
                                self.key)
        return [(batch_id, round_, json.loads(pairs)) for batch_id, round_, pairs in rows]

    def record_batch(self, batch_id: str, round_: int, pair_ids: list[str]) -> None:
        self._db.execute("INSERT INTO batches VALUES (?, ?, ?, ?, ?, ?, 'open')",
                         (*self.key, batch_id, round_, json.dumps(pair_ids)))

    def collect_batch(self, batch_id: str, answers: list[Answer]) -> None:
        """Commit a batch's answers and mark it collected, in one transaction."""
        with self._db:
            self._db.execute("BEGIN")
            for answer in answers:
                self.record(answer)
            self._db.execute("UPDATE batches SET state = 'collected' WHERE batch_id = ?", (batch_id,))

