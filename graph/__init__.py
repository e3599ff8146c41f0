"""engram graph package."""
