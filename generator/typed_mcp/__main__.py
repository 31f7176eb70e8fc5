from typed_mcp.cli import main

main()
