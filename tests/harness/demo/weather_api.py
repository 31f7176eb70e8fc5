"""A small but complete REST API: query, path and body parameters, bearer auth, errors, 201/204.

Handlers return `JSONResponse`s built by hand so that the drift modes (set with the environment
variable WEATHER_DEMO_DRIFT) can send what the spec does not promise:
- `extra`: every weather object gains undeclared fields (top level and nested);
- `missing`: weather objects lose the required field `humidity`.
Requests are recorded (raw path, query, selected headers) and exposed at `/_debug/requests`,
outside the spec, so tests can see exactly what reached the API.
"""

from __future__ import annotations

import hashlib
import os
from datetime import datetime, timezone
from itertools import count
from typing import Annotated, Literal

from fastapi import Depends, FastAPI, File, Form, HTTPException, Path, Query, Request, Response, UploadFile
from fastapi.responses import JSONResponse
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from pydantic import AwareDatetime, BaseModel, Field

DEMO_TOKEN_ENV = "WEATHER_DEMO_TOKEN"  # the token the API accepts; default "demo-token"


class WeatherData(BaseModel):
    """Weather at one place and time."""

    temperature: float = Field(description="Temperature in Celsius")
    humidity: float = Field(description="Humidity percentage")
    conditions: str = Field(description="Weather conditions")


class ReportIn(BaseModel):
    """An observation sent by a weather station."""

    city: str = Field(description="City the observation was made in")
    temperature: float = Field(description="Temperature in Celsius")
    humidity: float = Field(ge=0, le=100, description="Humidity percentage")
    conditions: str
    observed_at: AwareDatetime = Field(description="When it was observed (RFC 3339, with a timezone)")
    station: str | None = Field(default=None, description="Station identifier")


class Report(ReportIn):
    """A stored observation."""

    id: int = Field(description="Report identifier")
    received_at: AwareDatetime


class Problem(BaseModel):
    detail: str


class ExportIn(BaseModel):
    """What to export: a city's readings, ready after a number of status polls."""

    city: str = Field(description="City whose readings are exported")
    ready_after: int = Field(default=2, ge=0, le=1000, description="Status polls before the export is ready")


class Export(BaseModel):
    """An export job: `running` until it is ready, then `succeeded` with its readings."""

    id: int = Field(description="Export identifier")
    city: str
    status: Literal["running", "succeeded", "cancelled"]
    readings: list[WeatherData] | None = Field(default=None, description="The readings, once succeeded")


CITIES: dict[str, WeatherData] = {
    "london": WeatherData(temperature=22.5, humidity=45.0, conditions="sunny"),
    "paris": WeatherData(temperature=19.0, humidity=60.0, conditions="cloudy"),
    "tokyo": WeatherData(temperature=27.0, humidity=70.0, conditions="humid"),
    "sydney": WeatherData(temperature=15.5, humidity=55.0, conditions="rain"),
}

app = FastAPI(
    title="Weather API",
    version="1.2.0",
    description="Current weather, forecasts and station reports for a few cities.",
    openapi_url="/v1/openapi.json",
    docs_url=None,
    redoc_url=None,
    servers=[{"url": "http://127.0.0.1:8000", "description": "local demo"}],
)
bearer = HTTPBearer(description="Station token")
_reports: dict[int, dict] = {}
_exports: dict[int, dict] = {}  # id -> the job and its polls left (`_polls`)
EXPORT_RETRY_AFTER = "1"  # seconds a client waits between status polls (the Retry-After it is sent)
_ids = count(1)
REQUESTS: list[dict] = []
NOT_FOUND = {404: {"model": Problem, "description": "Unknown city"}}


@app.middleware("http")
async def record(request: Request, call_next):
    if not request.url.path.startswith("/_debug"):
        REQUESTS.append(
            {
                "method": request.method,
                "raw_path": request.scope.get("raw_path", b"").decode("latin-1"),
                "query": request.scope.get("query_string", b"").decode("latin-1"),
                "authorization": request.headers.get("authorization"),
                "accept": request.headers.get("accept"),
            }
        )
        del REQUESTS[:-50]
    return await call_next(request)


def _drift(data: dict) -> dict:
    mode = os.environ.get("WEATHER_DEMO_DRIFT", "")
    if mode == "extra":
        return {**data, "uv_index": 5, "wind": {"speed_kmh": 12.5, "direction": "NW"}}
    if mode == "missing":
        return {k: v for k, v in data.items() if k != "humidity"}
    return data


def _city(city: str) -> WeatherData:
    found = CITIES.get(city.lower())
    if found is None:
        raise HTTPException(404, f"unknown city {city!r}")
    return found


def _series(base: WeatherData, temperatures: list[float]) -> JSONResponse:
    """Readings of one place, one per temperature (a forecast's days, a history's hours)."""
    return JSONResponse(
        [_drift({"temperature": t, "humidity": base.humidity, "conditions": base.conditions}) for t in temperatures]
    )


def _authorized(credentials: Annotated[HTTPAuthorizationCredentials, Depends(bearer)]) -> None:
    if credentials.credentials != os.environ.get(DEMO_TOKEN_ENV, "demo-token"):
        raise HTTPException(401, "invalid token")


@app.get(
    "/v1/temperature",
    response_model=int,
    operation_id="get_temperature",
    summary="Get the temperature of a city",
    responses=NOT_FOUND,
)
def get_temperature(city: Annotated[str, Query(description="City name")]) -> JSONResponse:
    """Current temperature in whole degrees Celsius."""
    return JSONResponse(round(_city(city).temperature))


@app.get(
    "/v1/weather/{city}",
    response_model=WeatherData,
    operation_id="get_weather",
    summary="Get current weather for a city",
    responses=NOT_FOUND,
)
def get_weather(city: Annotated[str, Path(description="City name")]) -> JSONResponse:
    return JSONResponse(_drift(_city(city).model_dump()))


@app.get(
    "/v1/forecast",
    response_model=list[WeatherData],
    operation_id="get_forecast",
    summary="Get a multi-day forecast",
    responses=NOT_FOUND,
)
def get_forecast(
    city: Annotated[str, Query(description="City name")],
    days: Annotated[int, Query(ge=1, le=7, description="Number of days")] = 3,
) -> JSONResponse:
    base = _city(city)
    return _series(base, [base.temperature + day for day in range(days)])


@app.get(
    "/v1/temperatures",
    response_model=dict[str, float],
    operation_id="get_temperatures",
    summary="Get temperatures for several cities",
)
def get_temperatures(
    cities: Annotated[list[str], Query(description="City names")],
    units: Annotated[Literal["celsius", "fahrenheit"], Query(description="Temperature unit")] = "celsius",
) -> JSONResponse:
    result = {}
    for city in cities:
        celsius = _city(city).temperature
        result[city] = celsius if units == "celsius" else round(celsius * 9 / 5 + 32, 2)
    return JSONResponse(result)


@app.get(
    "/v1/history/{city}",
    response_model=list[WeatherData],
    operation_id="get_history",
    summary="Get the hourly weather history of a city",
    responses=NOT_FOUND,
)
def get_history(
    city: Annotated[str, Path(description="City name")],
    hours: Annotated[int, Query(ge=1, le=100_000, description="Number of hours, the latest first")] = 24,
) -> JSONResponse:
    """One reading per hour: a big list when many hours are asked for (an answer over a tool's
    inline budget)."""
    base = _city(city)
    return _series(base, [round(base.temperature - (hour % 24) / 4, 2) for hour in range(hours)])


@app.post(
    "/v1/reports",
    response_model=Report,
    status_code=201,
    operation_id="create_report",
    summary="Submit a station report",
    dependencies=[Depends(_authorized)],
)
def create_report(report: ReportIn) -> JSONResponse:
    """Store an observation; needs the station's bearer token."""
    report_id = next(_ids)
    data = report.model_dump(mode="json", exclude_unset=True)
    data.update(id=report_id, received_at=datetime.now(timezone.utc).isoformat())
    _reports[report_id] = data
    return JSONResponse(data, status_code=201)


@app.get(
    "/v1/reports/{report_id}",
    response_model=Report,
    operation_id="get_report",
    summary="Get a stored report",
    responses={404: {"model": Problem}},
)
def get_report(report_id: Annotated[int, Path(description="Report identifier")]) -> JSONResponse:
    if report_id not in _reports:
        raise HTTPException(404, "no such report")
    return JSONResponse(_reports[report_id])


@app.delete(
    "/v1/reports/{report_id}",
    status_code=204,
    operation_id="delete_report",
    summary="Delete a stored report",
    dependencies=[Depends(_authorized)],
    responses={404: {"model": Problem}},
)
def delete_report(report_id: Annotated[int, Path(description="Report identifier")]) -> Response:
    if _reports.pop(report_id, None) is None:
        raise HTTPException(404, "no such report")
    return Response(status_code=204)


def _job(export_id: int) -> dict:
    job = _exports.get(export_id)
    if job is None:
        raise HTTPException(404, "no such export")
    return job


def _export(job: dict) -> dict:
    return {key: value for key, value in job.items() if not key.startswith("_")}


@app.post(
    "/v1/exports",
    response_model=Export,
    status_code=202,
    operation_id="start_export",
    summary="Start exporting a city's readings",
    responses={404: {"model": Problem}},
)
def start_export(export: ExportIn) -> JSONResponse:
    """A long-running job: answers 202 Accepted with the job's status resource in `Location`."""
    _city(export.city)
    export_id = next(_ids)
    job = {"id": export_id, "city": export.city, "status": "running", "_polls": export.ready_after}
    _exports[export_id] = job
    headers = {"location": f"/v1/exports/{export_id}", "retry-after": EXPORT_RETRY_AFTER}
    return JSONResponse(_export(job), status_code=202, headers=headers)


@app.get(
    "/v1/exports/{export_id}",
    response_model=Export,
    operation_id="get_export",
    summary="Get an export job's status",
    responses={202: {"model": Export, "description": "Still running"}, 404: {"model": Problem}},
)
def get_export(export_id: Annotated[int, Path(description="Export identifier")]) -> JSONResponse:
    """202 with Retry-After while the job runs; 200 once it has succeeded (or was cancelled)."""
    job = _job(export_id)
    if job["status"] == "running":
        if job["_polls"] > 0:
            job["_polls"] -= 1
            return JSONResponse(_export(job), status_code=202, headers={"retry-after": EXPORT_RETRY_AFTER})
        base = _city(job["city"])
        job.update(status="succeeded", readings=[_drift(base.model_dump()) for _ in range(3)])
    return JSONResponse(_export(job))


@app.post(
    "/v1/exports/{export_id}/cancel",
    response_model=Export,
    operation_id="cancel_export",
    summary="Cancel a running export job",
    responses={404: {"model": Problem}},
)
def cancel_export(export_id: Annotated[int, Path(description="Export identifier")]) -> JSONResponse:
    job = _job(export_id)
    if job["status"] == "running":
        job["status"] = "cancelled"
    return JSONResponse(_export(job))


class Received(BaseModel):
    """What an upload brought: enough for a caller to prove which bytes arrived."""

    size: int = Field(description="Bytes received")
    sha256: str = Field(description="SHA-256 of the bytes received, in hex")
    content_type: str | None = Field(description="The media type they were sent as")
    filename: str | None = Field(default=None, description="The file name of a multipart file part")
    note: str | None = Field(default=None, description="The note sent beside the file")


def _received(data: bytes, content_type: str | None, **extra: str | None) -> Received:
    return Received(size=len(data), sha256=hashlib.sha256(data).hexdigest(), content_type=content_type, **extra)


@app.post(
    "/v1/attachments",
    response_model=Received,
    operation_id="upload_attachment",
    summary="Attach a file to the station log (multipart)",
)
async def upload_attachment(
    file: Annotated[UploadFile, File(description="The file")],
    note: Annotated[str | None, Form(description="A note about the file")] = None,
) -> Received:
    return _received(await file.read(), file.content_type, filename=file.filename, note=note)


@app.put(
    "/v1/stations/{station}/photo",
    response_model=Received,
    operation_id="put_station_photo",
    summary="Replace a station's photo (raw bytes)",
    openapi_extra={
        "requestBody": {
            "required": True,
            "content": {"application/octet-stream": {"schema": {"type": "string", "format": "binary"}}},
        }
    },
)
async def put_station_photo(
    station: Annotated[str, Path(description="Station identifier")], request: Request
) -> Received:
    return _received(await request.body(), request.headers.get("content-type"))


@app.get("/_debug/requests", include_in_schema=False)
def debug_requests() -> list[dict]:
    return REQUESTS


def main() -> None:
    import argparse

    import uvicorn

    parser = argparse.ArgumentParser(description="Serve the demo Weather API")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    args = parser.parse_args()
    uvicorn.run(app, host=args.host, port=args.port, log_level="warning")


if __name__ == "__main__":
    main()
