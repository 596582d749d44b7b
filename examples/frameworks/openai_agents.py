"""An OpenAI Agents SDK agent whose workspace is satchel.

    pip install openai-agents
    SATCHEL_DB=/abs/path/satchel.db SATCHEL_DIR=/abs/path/project python3 openai_agents.py

The SDK starts `satchel serve` over stdio (MCPServerStdio) and lists its
tools to the model on every run.
"""

import asyncio
import os

from agents import Agent, Runner
from agents.mcp import MCPServerStdio, MCPServerStreamableHttp


def stdio_server():
    return MCPServerStdio(
        name="satchel",
        params={
            "command": "satchel",
            # Absolute paths: the server's working directory is not ours to choose.
            "args": [
                "serve",
                "--db", os.environ.get("SATCHEL_DB", os.path.abspath("satchel.db")),
                "--dir", os.environ.get("SATCHEL_DIR", os.path.abspath(".")),
                "--agent", "research",
                "--scope", "acme",
            ],
        },
        cache_tools_list=True,
    )


def http_server():
    # satchel serve --http 127.0.0.1:8080, with a token from satchel token create.
    return MCPServerStreamableHttp(
        name="satchel",
        params={
            "url": "http://127.0.0.1:8080/mcp",
            "headers": {"Authorization": "Bearer " + os.environ["SATCHEL_TOKEN"], "X-Satchel-Thread": "draft-2"},
        },
    )


async def main():
    async with stdio_server() as satchel:
        agent = Agent(
            name="Researcher",
            instructions="Keep your notes in the workspace: read_file, write_file and edit_file; checkpoint before risky edits; record findings with store__notes__set.",
            mcp_servers=[satchel],
        )
        result = await Runner.run(agent, "Draft notes/plan.md for researching acme's pricing, then list the commits with history.")
        print(result.final_output)


if __name__ == "__main__":
    asyncio.run(main())
