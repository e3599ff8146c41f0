"""engram studio package."""
