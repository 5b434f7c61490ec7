"""The MCP server: the project's documents for AI tools (coding assistants, agents), over the
Model Context Protocol's Streamable HTTP transport at /mcp/ (see app.py and tools.py)."""
