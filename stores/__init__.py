"""engram stores package."""
