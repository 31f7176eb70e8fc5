"""A small FastAPI app, as ZenML and LNbits are written: its models say `datetime`, which FastAPI
publishes as `format: date-time`, and it stores naive date-times, which it sends without a timezone
(`2026-12-01T09:30:00`). One field, `due_at`, is aware (UTC), so an answer carries both kinds.

Run: `python -m harness.naive.tasks_api --port N` (from tests/); the spec is at `/openapi.json`.
"""

from __future__ import annotations

import argparse
from datetime import datetime, timedelta, timezone
from itertools import count

import uvicorn
from fastapi import FastAPI, HTTPException
from pydantic import BaseModel

app = FastAPI(title="Tasks", version="1.0.0")
# A fixed clock: the answers are the same on every run.
CREATED = datetime(2026, 12, 1, 9, 30, 0)
DUE = datetime(2026, 12, 8, 17, 0, 0, tzinfo=timezone.utc)


class TaskIn(BaseModel):
    title: str


class Task(TaskIn):
    id: int
    created_at: datetime  # naive, as the app stores it
    due_at: datetime | None = None  # aware (UTC)


TASKS: dict[int, Task] = {}
IDS = count(1)


@app.post("/tasks", status_code=201)
def create_task(task: TaskIn) -> Task:
    number = next(IDS)
    created = Task(
        id=number, title=task.title, created_at=CREATED + timedelta(minutes=number), due_at=DUE + timedelta(days=number)
    )
    TASKS[number] = created
    return created


@app.get("/tasks")
def list_tasks() -> list[Task]:
    return list(TASKS.values())


@app.get("/tasks/{task_id}")
def get_task(task_id: int) -> Task:
    if task_id not in TASKS:
        raise HTTPException(404, "no such task")
    return TASKS[task_id]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    args = parser.parse_args()
    uvicorn.run(app, host="127.0.0.1", port=args.port, log_level="warning")


if __name__ == "__main__":
    main()
