"""engram nodes package."""
