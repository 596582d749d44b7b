"""A LangChain Deep Agent (and a plain LangGraph agent) whose workspace is satchel.

    pip install deepagents langchain-mcp-adapters langgraph
    SATCHEL_DB=/abs/path/satchel.db SATCHEL_DIR=/abs/path/project python3 langgraph_deepagents.py

langchain-mcp-adapters starts `satchel serve` over stdio and turns its MCP
tools into LangChain tools. Deep Agents has file tools of its own
(read_file, write_file, ...), so satchel's are prefixed with ws_: the
agent's notes then persist, versioned, in satchel.
"""

import asyncio
import os

from langchain_mcp_adapters.client import MultiServerMCPClient

SATCHEL = {
    "satchel": {
        "transport": "stdio",
        "command": "satchel",
        # The client starts the server in a working directory of its own
        # choosing: give the database and the project as absolute paths.
        "args": [
            "serve",
            "--db", os.environ.get("SATCHEL_DB", os.path.abspath("satchel.db")),
            "--dir", os.environ.get("SATCHEL_DIR", os.path.abspath(".")),
            "--agent", "research",
            "--scope", "acme",
            "--tool-prefix", "ws_",
        ],
    },
    # Over HTTP instead (satchel serve --http 127.0.0.1:8080, a token from
    # satchel token create):
    # "satchel": {
    #     "transport": "streamable_http",
    #     "url": "http://127.0.0.1:8080/mcp",
    #     "headers": {"Authorization": "Bearer " + os.environ["SATCHEL_TOKEN"]},
    # },
}

TASK = "Write a plan for researching acme's pricing to notes/plan.md, checkpoint it, then record one finding with store__notes__set."


async def deep_agent(tools):
    from deepagents import create_deep_agent

    agent = create_deep_agent(
        model="anthropic:claude-sonnet-4-6",
        tools=tools,
        system_prompt="Keep your notes in the satchel workspace (the ws_ tools); checkpoint before risky edits.",
    )
    return await agent.ainvoke({"messages": [{"role": "user", "content": TASK}]})


async def langgraph_agent(tools):
    from langgraph.prebuilt import create_react_agent

    agent = create_react_agent("anthropic:claude-sonnet-4-6", tools)
    return await agent.ainvoke({"messages": [{"role": "user", "content": TASK}]})


async def main():
    client = MultiServerMCPClient(SATCHEL)
    tools = await client.get_tools()
    print("satchel tools:", ", ".join(sorted(t.name for t in tools)))
    result = await deep_agent(tools)
    print(result["messages"][-1].content)


if __name__ == "__main__":
    asyncio.run(main())
