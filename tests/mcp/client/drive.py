"""The MCP client of tests/mcp: the official Python SDK drives `envdoctor mcp` over stdio.

Usage: python drive.py PLAN.json RESULT.json, with the python of the tests' venv
(scripts/install-test-tools.sh installs mcp and jsonschema there, pinned by
tests/requirements/tools.txt).
PLAN: {"command": "/path/envdoctor", "args": ["mcp"], "env": {...}, "calls": [{"name", "arguments"}]}
RESULT: {"protocolVersion", "serverVersion", "capabilities", "instructions", "tools",
         "calls": [{"name", "result" | "error", "schemaErrors"}]}

The SDK's ClientSession negotiates the protocol version, lists the tools, and validates each
structuredContent of a result that is not isError against its tool's outputSchema itself
(ClientSession.validate_tool_result: jsonschema, the dialect the schema names, else 2020-12; a
result that fails is raised as a RuntimeError, recorded here as the call's error). Each
structuredContent is validated again with jsonschema's Draft202012Validator, MCP's default
dialect and the one the schemas are written in, whatever the result's isError. Everything is
written as the wire spells it (camelCase: structuredContent, isError, inputSchema, annotations'
readOnlyHint), which is what the C++ test reads.
"""

import json
import os
import sys

import anyio
from jsonschema import Draft202012Validator, SchemaError
from mcp import ClientSession, Implementation, StdioServerParameters, stdio_client
from mcp_types import PaginatedRequestParams
from referencing import Registry
from referencing.exceptions import Unresolvable


def wire(model):
    """A model of the SDK as its JSON on the wire: aliases, and no field the server left out."""
    return model.model_dump(mode="json", by_alias=True, exclude_none=True) if model is not None else None


async def list_tools(session):
    """Every tool, page after page (envdoctor gives one page; a client must not assume it)."""
    tools, cursor = [], None
    while True:
        page = await session.list_tools(params=PaginatedRequestParams(cursor=cursor) if cursor else None)
        tools += page.tools
        cursor = page.next_cursor
        if cursor is None:
            return tools


def validator(output_schema):
    """A 2020-12 validator of the schema, or the sentence that says why the schema is none.

    The registry is empty, as the SDK's own: a $ref resolves within the schema document, never by
    fetching its $id's URL.
    """
    if output_schema is None:
        return None, None
    try:
        Draft202012Validator.check_schema(output_schema)
    except SchemaError as e:
        return None, f"invalid outputSchema: {e.message}"
    return Draft202012Validator(output_schema, registry=Registry()), None


def schema_errors(check, structured):
    """jsonschema's errors of one structuredContent as a JSON text, or None when it holds."""
    valid, broken = check
    if broken is not None:
        return broken
    if valid is None:
        return None
    try:
        errors = [{"path": e.json_path, "message": e.message} for e in valid.iter_errors(structured)]
    except Unresolvable as e:
        errors = [{"path": "$", "message": f"unresolvable $ref: {e}"}]
    return json.dumps(errors) if errors else None


async def drive(plan):
    # The server gets the test's whole environment, as a client's configuration would give it; the
    # SDK's default passes only HOME, LOGNAME, PATH, SHELL, TERM and USER (stdio.py,
    # get_default_environment).
    server = StdioServerParameters(
        command=plan["command"], args=plan.get("args", []), env={**os.environ, **plan.get("env", {})}
    )
    async with stdio_client(server, errlog=sys.stderr) as (read, write):
        async with ClientSession(
            read, write, client_info=Implementation(name="envdoctor-test-client", version="1.0.0")
        ) as session:
            initialized = await session.initialize()
            tools = await list_tools(session)
            # One validator per tool: several tools share a schema, and so its $id.
            checks = {tool.name: validator(tool.output_schema) for tool in tools}
            calls = []
            for call in plan["calls"]:
                entry = {"name": call["name"]}
                try:
                    result = await session.call_tool(call["name"], call.get("arguments") or {})
                    entry["result"] = wire(result)
                    if result.structured_content is not None and call["name"] in checks:
                        errors = schema_errors(checks[call["name"]], result.structured_content)
                        if errors is not None:
                            entry["schemaErrors"] = errors
                except Exception as e:  # a JSON-RPC error (MCPError), or what the SDK refused
                    entry["error"] = f"{type(e).__name__}: {e}"
                calls.append(entry)
    # Both contexts are left: the SDK has closed the server's stdin (the shutdown of stdio) and
    # waited for it to exit.
    return {
        "protocolVersion": initialized.protocol_version,
        "serverVersion": wire(initialized.server_info),
        "capabilities": wire(initialized.capabilities),
        "instructions": initialized.instructions,
        "tools": [wire(tool) for tool in tools],
        "calls": calls,
    }


def main():
    with open(sys.argv[1], encoding="utf-8") as f:
        plan = json.load(f)
    result = anyio.run(drive, plan)
    with open(sys.argv[2], "w", encoding="utf-8") as f:
        json.dump(result, f)


if __name__ == "__main__":
    main()
