"""The generated deploy/kubernetes.yaml, without a cluster (none runs here): every document valid
against the Kubernetes API's own schemas (kubernetes-validate, strict, offline) for every minor from
1.30 to 1.37; linted by checkov (from PyPI, its own venv: kube-linter and kube-score are Go binaries
with no PyPI or npm package); what the Deployment promises checked against the package (the
Dockerfile's port and user, GET /health, the credentials typed-mcp.json lists, each a Secret
reference); and the package's server run as the Deployment runs it (its command, its environment,
and in bubblewrap its securityContext and volumes: user 65534 without capabilities, a read-only root,
/tmp the one writable folder), probed as the kubelet probes it, its peak memory under calls within
the Deployment's request, SIGTERM answered by finishing the call in flight. Spec text that reaches
the file (the base URL) stays one YAML string. Not tested: a real cluster (scheduling, the Service's
endpoints, the autoscaler, the NetworkPolicy), which none of the registries can bring here."""

from __future__ import annotations

import copy
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import kubernetes_validate
import pytest
import yaml

from harness import environment
from harness.demo.process import free_port, running, wait_http
from harness.demo.weather_api import CITIES
from harness.dockerfile import instructions
from harness.pod import bwrap_missing, command_pid, pod_command
from support import INITIALIZE, MCP_HEADERS, REPO, generate

PACKAGE = REPO / "generated" / "weather-mcp"
MANIFEST = PACKAGE / "deploy" / "kubernetes.yaml"
VERSIONS = [f"1.{minor}.0" for minor in range(30, 38)]
MIB = {"Mi": 1, "Gi": 1024}
CHECKOV = Path(os.environ.get("TYPED_MCP_CHECKOV") or REPO / ".venv-checkov" / "bin" / "checkov")


def documents(path: Path = MANIFEST) -> dict[str, dict]:
    return {doc["kind"]: doc for doc in yaml.safe_load_all(path.read_text())}


def container(docs: dict[str, dict]) -> dict:
    (only,) = docs["Deployment"]["spec"]["template"]["spec"]["containers"]
    return only


def mebibytes(quantity: str) -> int:
    return int(quantity[:-2]) * MIB[quantity[-2:]]


@pytest.mark.parametrize("version", VERSIONS)
def test_every_document_is_valid_for_the_kubernetes_version(version):
    docs = documents()
    kinds = ["Deployment", "HorizontalPodAutoscaler", "NetworkPolicy", "PodDisruptionBudget", "Service"]
    assert sorted(docs) == kinds
    for doc in docs.values():
        kubernetes_validate.validate(doc, version, strict=True)  # raises on any error


def test_the_validator_refuses_what_a_cluster_would():
    deployment = documents()["Deployment"]
    for mutate in (
        lambda d: d["spec"]["template"]["spec"]["containers"][0].update(readinesProbe={}),  # a misspelled field
        lambda d: d["spec"].update(replicas="two"),  # a wrong type
        lambda d: d["spec"]["template"]["spec"]["containers"][0]["ports"][0].pop("containerPort"),  # a required one
    ):
        broken = copy.deepcopy(deployment)
        mutate(broken)
        with pytest.raises(kubernetes_validate.ValidationError):
            kubernetes_validate.validate(broken, VERSIONS[-1], strict=True)


def checkov(path: Path) -> dict:
    """checkov's Kubernetes checks on `path`, offline (--skip-download: no guidelines fetched)."""
    args = [str(CHECKOV), "-f", str(path), "--framework", "kubernetes", "--compact", "--skip-download"]
    proc = subprocess.run([*args, "-o", "json"], capture_output=True, text=True, timeout=300)
    assert proc.stdout.startswith("{"), proc.stdout[-2000:] + proc.stderr[-2000:]
    return json.loads(proc.stdout)["results"]


@pytest.mark.long  # two checkov runs: 37 s alone, 168 s beside other tests at a load average of 15 on 2 cores
@pytest.mark.needs("checkov")
def test_checkov_passes_every_check_it_does_not_skip_for_a_stated_reason(tmp_path):
    assert CHECKOV.is_file(), f"{CHECKOV} is missing: make test builds it (make .venv-checkov/.installed)"
    results = checkov(MANIFEST)
    assert results["failed_checks"] == [] and len(results["passed_checks"]) > 50
    skipped = {check["check_id"]: check["check_result"]["suppress_comment"] for check in results["skipped_checks"]}
    assert sorted(skipped) == ["CKV_K8S_11", "CKV_K8S_21", "CKV_K8S_35", "CKV_K8S_43"], skipped
    assert all(len(reason) > 20 for reason in skipped.values())
    # The control: the same linter fails the Deployment once its container may run as root, privileged.
    docs = documents()
    server = container(docs)
    server["securityContext"] |= {"privileged": True, "runAsNonRoot": False, "allowPrivilegeEscalation": True}
    del docs["Deployment"]["spec"]["template"]["spec"]["securityContext"]["runAsNonRoot"]
    broken = tmp_path / "kubernetes.yaml"
    broken.write_text(yaml.safe_dump_all(docs.values()))
    failed = {check["check_id"] for check in checkov(broken)["failed_checks"]}
    assert {"CKV_K8S_16", "CKV_K8S_20"} <= failed, failed


def test_the_deployment_keeps_what_it_promises():
    docs = documents()
    deployment, service, autoscaler = docs["Deployment"], docs["Service"], docs["HorizontalPodAutoscaler"]
    pod = deployment["spec"]["template"]["spec"]
    server = container(docs)
    steps = {step.keyword: step for step in instructions(PACKAGE / "Dockerfile")}
    # Probes on GET /health, on the port the image listens on.
    (port,) = server["ports"]
    assert str(port["containerPort"]) == steps["EXPOSE"].text == steps["ENV"].pairs()["WEATHER_MCP_PORT"]
    for probe in ("startupProbe", "readinessProbe", "livenessProbe"):
        assert server[probe]["httpGet"] == {"path": "/health", "port": port["name"]}, probe
    # Not root (the image's own user), nothing written to the image, no privilege to gain.
    uid, gid = (int(part) for part in steps["USER"].text.split(":"))
    assert pod["securityContext"]["runAsNonRoot"] and pod["securityContext"]["runAsUser"] == uid
    assert pod["securityContext"]["runAsGroup"] == gid and pod["automountServiceAccountToken"] is False
    context = server["securityContext"]
    assert context["readOnlyRootFilesystem"] and not context["allowPrivilegeEscalation"]
    assert context["capabilities"] == {"drop": ["ALL"]}
    # A rolling update never has fewer ready pods than asked; the Service and the autoscaler reach them.
    assert deployment["spec"]["strategy"]["rollingUpdate"] == {"maxSurge": 1, "maxUnavailable": 0}
    labels = deployment["spec"]["template"]["metadata"]["labels"]
    assert service["spec"]["selector"].items() <= labels.items()
    assert service["spec"]["ports"][0]["targetPort"] == port["name"]
    assert autoscaler["spec"]["scaleTargetRef"]["name"] == deployment["metadata"]["name"]
    assert server["resources"]["requests"]["cpu"] and server["resources"]["requests"]["memory"]
    # Every credential the package reads, and only those, comes from the Secret; the rest is plain.
    manifest = json.loads((PACKAGE / "typed-mcp.json").read_text())
    credentials = [item["name"] for item in manifest["environment"] if not item["name"].endswith("_BASE_URL")]
    env = {item["name"]: item for item in server["env"]}
    secret = {name for name, item in env.items() if "valueFrom" in item}
    # ... and the key that seals links and confirmations, which every replica must share: required.
    assert sorted(secret) == sorted([*credentials, "WEATHER_MCP_LINK_KEY"])
    assert credentials == ["WEATHER_MCP_HTTP_BEARER_TOKEN"]
    for name in secret:
        assert env[name]["valueFrom"]["secretKeyRef"]["name"] == deployment["metadata"]["name"]
        assert env[name]["valueFrom"]["secretKeyRef"].get("optional", False) is (name != "WEATHER_MCP_LINK_KEY")
    assert env["WEATHER_MCP_AUTH"]["value"] in ("forwarded", "oauth")


@pytest.mark.long  # measured 59-137 s at a load average of 10-18 on 2 cores
@pytest.mark.needs("bwrap")
def test_the_server_runs_as_the_deployment_runs_it():
    missing = bwrap_missing()
    assert missing is None, missing  # make test installs it (Debian: bubblewrap); never skipped
    docs = documents()
    pod = docs["Deployment"]["spec"]["template"]["spec"]
    server = container(docs)
    cmd = next(step for step in instructions(PACKAGE / "Dockerfile") if step.keyword == "CMD").exec_form()
    port, upstream_port = free_port(), free_port()
    upstream = f"http://127.0.0.1:{upstream_port}"
    slow = [sys.executable, str(REPO / "bench" / "load_upstream.py"), "--port", str(upstream_port), "--delay-ms", "100"]
    env = {item["name"]: item["value"] for item in server["env"] if "value" in item}
    env |= {"WEATHER_MCP_BASE_URL": upstream, "WEATHER_MCP_PORT": str(port)}
    # The image's command from this venv, as the pod's user, on a read-only root with /tmp the one
    # writable folder (the manifest's own securityContext and volumes): a server that wrote anywhere
    # else, or needed root, would fail here as it would in the cluster.
    reads = [Path(sys.base_prefix), Path(sys.prefix), PACKAGE / "src"]
    args = pod_command(pod, server, [sys.executable, "-m", "weather_mcp", *cmd[1:]], reads)
    with running(slow, f"{upstream}/_count"):
        sandbox = subprocess.Popen(args, env={**environment(PACKAGE / "src"), **env}, stdout=subprocess.DEVNULL)
        try:
            wait_http(f"http://127.0.0.1:{port}/health", sandbox, timeout=60)
            pid = command_pid(sandbox.pid)
            status = Path(f"/proc/{pid}/status").read_text()
            assert re.search(r"^Uid:\s+65534\s+65534\s+65534\s+65534$", status, re.MULTILINE), status
            assert re.search(r"^CapEff:\s+0+$", status, re.MULTILINE), status
            # The kubelet probes the pod's IP: its Host header is that address.
            health = httpx.get(f"http://127.0.0.1:{port}/health", headers={"host": f"10.1.2.3:{port}"})
            assert health.status_code == 200
            # Clients come through the Service: its name is an allowed Host; another name is refused.
            url = f"http://127.0.0.1:{port}/mcp"
            headers = {**MCP_HEADERS, "mcp-protocol-version": "2025-06-18", "host": docs["Service"]["metadata"]["name"]}
            assert httpx.post(url, json=INITIALIZE, headers=headers).status_code == 200
            assert httpx.post(url, json=INITIALIZE, headers={**headers, "host": "evil.example"}).status_code == 421
            with ThreadPoolExecutor(10) as pool:  # 100 calls, 10 at a time
                answers = list(
                    pool.map(lambda i: httpx.post(url, json=call(i), headers=headers, timeout=60), range(100))
                )
            assert all(answer.status_code == 200 and ok(answer) for answer in answers)
            # What it held at its peak fits the Deployment's memory request.
            status = Path(f"/proc/{pid}/status").read_text()
            peak = int(next(line for line in status.splitlines() if line.startswith("VmHWM:")).split()[1]) / 1024
            assert peak < mebibytes(server["resources"]["requests"]["memory"]), peak
            # SIGTERM (what the container's process gets after the preStop hook) while a call is held
            # upstream: the call is answered, then the server exits (uvicorn re-raises the signal once it
            # has drained; bwrap passes on its status), well within the grace period.
            before = httpx.get(f"{upstream}/_count").json()["count"]
            with ThreadPoolExecutor(1) as pool:
                held = pool.submit(httpx.post, url, json=call(0), headers=headers, timeout=30)
                while httpx.get(f"{upstream}/_count").json()["count"] == before:
                    time.sleep(0.01)
                began = time.monotonic()
                os.kill(pid, signal.SIGTERM)
                assert held.result().status_code == 200 and ok(held.result()), held.result().text
            assert sandbox.wait(timeout=30) in (0, 128 + signal.SIGTERM)
            assert time.monotonic() - began < pod["terminationGracePeriodSeconds"]
        finally:
            if sandbox.poll() is None:
                sandbox.kill()  # --die-with-parent: the server goes with it
                sandbox.wait()


@pytest.mark.needs("bwrap")
def test_the_sandbox_refuses_what_the_pod_refuses():
    """The control: in the Deployment's sandbox, a write outside /tmp fails and /tmp takes one; the
    user is the pod's; with readOnlyRootFilesystem false, the same write succeeds."""
    missing = bwrap_missing()
    assert missing is None, missing
    docs = documents()
    pod, server = docs["Deployment"]["spec"]["template"]["spec"], container(docs)
    # A folder anyone may write to, outside /tmp: only the read-only root can refuse the write.
    shared = Path(tempfile.mkdtemp(dir="/var/tmp"))
    shared.chmod(0o777)
    target = shared / "written"
    script = f"id -u; touch {target} || echo refused; touch /tmp/x && echo tmp-ok"
    answer = subprocess.run(pod_command(pod, server, ["sh", "-c", script], []), capture_output=True, text=True)
    assert answer.stdout.split() == ["65534", "refused", "tmp-ok"], answer.stdout + answer.stderr
    assert not target.exists()
    writable = copy.deepcopy(server)
    writable["securityContext"]["readOnlyRootFilesystem"] = False
    try:
        subprocess.run(pod_command(pod, writable, ["sh", "-c", f"touch {target}"], []), check=True)
        assert target.exists()
    finally:
        shutil.rmtree(shared)


def call(index: int) -> dict:
    city = sorted(CITIES)[index % len(CITIES)]
    params = {"name": "get_weather", "arguments": {"city": city}}
    return {"jsonrpc": "2.0", "id": index + 2, "method": "tools/call", "params": params}


def ok(answer: httpx.Response) -> bool:
    return '"isError":false' in answer.text.replace(" ", "")


def test_every_credential_kind_is_a_secret_reference_and_spec_text_stays_one_string(tmp_path):
    base = "https://api.example.com/v1?a=\"b\"&c='d'#: {e} [f] --- \\"
    spec = {
        "openapi": "3.1.0",
        "info": {"title": "Kube Credentials", "version": "2.0.0+local.1"},
        "servers": [{"url": base}],
        "components": {
            "securitySchemes": {
                "key": {"type": "apiKey", "in": "header", "name": "X-Key"},
                "basic": {"type": "http", "scheme": "basic"},
                "machine": {
                    "type": "oauth2",
                    "flows": {"clientCredentials": {"tokenUrl": "https://auth.example.com/token", "scopes": {}}},
                },
            }
        },
        "security": [{"key": []}, {"basic": []}, {"machine": []}],
        "paths": {"/things": {"get": {"operationId": "list_things", "responses": {"200": {"description": "ok"}}}}},
    }
    out = tmp_path / "kube-credentials-mcp"
    generate(spec, out, "kube-credentials-mcp")
    docs = documents(out / "deploy" / "kubernetes.yaml")
    for doc in docs.values():
        kubernetes_validate.validate(doc, VERSIONS[-1], strict=True)
    manifest = json.loads((out / "typed-mcp.json").read_text())
    listed = {item["name"]: item for item in manifest["environment"]}
    env = {item["name"]: item for item in container(docs)["env"]}
    base_url = next(name for name in listed if name.endswith("_BASE_URL"))
    assert env[base_url]["value"] == listed[base_url]["default"]  # the spec's text, one string, as it is
    secret = sorted(name for name, item in env.items() if "valueFrom" in item)
    link_key = "KUBE_CREDENTIALS_MCP_LINK_KEY"
    assert secret == sorted([*(name for name in listed if name != base_url), link_key]) and len(secret) == 7, secret
    labels = docs["Deployment"]["metadata"]["labels"]
    assert labels["app.kubernetes.io/version"] == "2.0.0-local.1"  # a label value: no "+"
