"""Search a project's code and engram's memory through LangChain retrievers.

Usage: python examples/retrievers.py [PROJECT] [QUERY]

Code search is hybrid (BM25, embeddings, exact identifiers) once the project is indexed with
``engram index``, and exact search before that. Facts come from the memory store in
``ENGRAM_HOME`` (``engram memory save TEXT`` adds one).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from engram.api import CodeRetriever, MemoryRetriever
from engram.stores.sqlite import open_memory_store


def main() -> None:
    """Print the code locations and the facts that match the query."""
    project = sys.argv[1] if len(sys.argv) > 1 else "."
    query = sys.argv[2] if len(sys.argv) > 2 else "configuration"
    code = CodeRetriever.for_project(project, k=5)
    for doc in code.invoke(query):
        meta = doc.metadata
        print(
            f"code {meta['path']}:{meta['start_line']}-{meta['end_line']} "
            f"{meta['symbol']} score={meta['score']:.4f} ({meta['source']})"
        )
        print("    " + doc.page_content.splitlines()[0] if doc.page_content else "    (empty)")
    home = Path(os.environ.get("ENGRAM_HOME", "~/.engram")).expanduser()
    with open_memory_store(home) as store:
        memory = MemoryRetriever.for_project(store, project, k=5)
        for doc in memory.invoke(query):
            meta = doc.metadata
            print(
                f"fact [{meta['id']}] ({meta['scope']}, score {meta['score']:.3f}): "
                f"{doc.page_content}"
            )


if __name__ == "__main__":
    main()
