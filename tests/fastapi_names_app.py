"""A FastAPI app with FastAPI's default operationIds (`generate_unique_id`), for the tool-name tests:
several routers, path parameters, and the same function names on two routes (a real collision):
one function on a global and a per-project route, as ZenML registers its API
(`@router.get("/runs")` and `@router.get("/workspaces/{project_name_or_id}/runs")` on one function).
Run: python tests/fastapi_names_app.py --port PORT."""

from __future__ import annotations

import argparse

from fastapi import APIRouter, FastAPI

app = FastAPI(title="Todo Service REST API", version="1.0.0")
projects = APIRouter(prefix="/projects", tags=["projects"])
tasks = APIRouter(prefix="/projects/{project_id}/tasks", tags=["tasks"])
api = APIRouter(prefix="/api/v1", tags=["pipelines"])


@projects.get("/")
def list_projects() -> list[dict]:
    return []


@projects.post("/")
def create_project(name: str) -> dict:
    return {"name": name}


@projects.get("/{project_id}")
def read_project(project_id: int) -> dict:
    return {"id": project_id}


@projects.delete("/{project_id}")
def delete_project(project_id: int) -> None:
    return None


@tasks.get("/")
def list_tasks(project_id: int) -> list[dict]:
    return []


@tasks.get("/{task_id}")
def read_task(project_id: int, task_id: int) -> dict:
    return {"id": task_id}


@tasks.post("/{task_id}/assignees/{user_id}")
def add_assignee_to_task_for_user_in_project(project_id: int, task_id: int, user_id: int) -> dict:
    return {}


def _admin() -> APIRouter:
    """The same function names as on `projects` (FastAPI names the route after the function)."""
    router = APIRouter(prefix="/admin/projects", tags=["admin"])

    @router.get("/{project_id}/full")
    def read_project(project_id: int) -> dict:
        return {"id": project_id}

    @router.delete("/{project_id}")
    def delete_project(project_id: int) -> None:
        return None

    return router


# One function on a global route and a per-project one (and, for projects, the routes of their old
# name, workspaces), under a versioned prefix: every operationId repeats `api_v1` and the route.
@api.get("/runs")
@api.get("/workspaces/{project_name_or_id}/runs")
def list_runs(project_name_or_id: str | None = None) -> list[dict]:
    return []


@api.post("/runs")
@api.post("/workspaces/{project_name_or_id}/runs")
def get_or_create_pipeline_run(name: str, project_name_or_id: str | None = None) -> dict:
    return {"name": name}


@api.get("/projects/{project_name_or_id}")
@api.get("/workspaces/{project_name_or_id}")
def get_project(project_name_or_id: str) -> dict:
    return {"name": project_name_or_id}


@api.get("/deployments/{deployment_id}")
@api.get("/pipeline_deployments/{deployment_id}")
def get_deployment(deployment_id: str) -> dict:
    return {"id": deployment_id}


@api.get("/work_queues")
@api.get("/work_pools/{work_pool_name}/queues")
def list_work_queues(work_pool_name: str | None = None) -> list[dict]:
    return []


@api.api_route("/info", methods=["GET", "HEAD"])  # one route, two methods, one operationId
def server_info() -> dict:
    return {}


@app.get("/health")
def health_check() -> dict:
    return {"ok": True}


app.include_router(projects)
app.include_router(tasks)
app.include_router(_admin())
app.include_router(api)

if __name__ == "__main__":
    import uvicorn

    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    uvicorn.run(app, host="127.0.0.1", port=parser.parse_args().port, log_level="warning")
