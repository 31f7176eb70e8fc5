"""The variables a generated package reads, as its `typed-mcp.json`, its MCPB bundle, its MCP Registry
entry and its Kubernetes view list them."""

from __future__ import annotations

from typed_mcp.plan.ir import ApiPlan


def package_environment(api: ApiPlan) -> list[dict[str, str | bool]]:
    """The variables a user sets to run the package: the base URL (with the spec's default, if any;
    `required` without one) and every credential, `secret` where it is one. Installers read it: the
    MCPB bundle's user_config (from typed-mcp.json) and the MCP Registry's server.json."""
    base: dict[str, str | bool] = {"name": f"{api.env_prefix}_BASE_URL", "about": "upstream API base URL"}
    if api.default_base_url:
        base["default"] = api.default_base_url
    else:
        base["required"] = True  # the spec names no server: nothing to call without it
    found = [base]
    for scheme in api.schemes.values():
        about = f"{scheme.kind} credential for security scheme {scheme.key}"
        for index, var in enumerate(scheme.env_vars):
            part = ("username", "password")[index] if scheme.kind == "basic" else ""
            # a username names an account: shown as typed; everything else is a secret
            found.append({"name": var, "about": f"{about} ({part})" if part else about, "secret": part != "username"})
        for index, var in enumerate(scheme.client_env):
            part = "client secret" if index else "client id"
            found.append({"name": var, "about": f"OAuth2 {part} for {scheme.key}", "secret": bool(index)})
    return found
