"""The scripted fix tasks: a bug put into a fixture project and the model's replies that fix it.

Each task copies one fixture (``fixtures/python``, ``fixtures/javascript``, ``fixtures/java``),
swaps a passage of it for a buggy one (and may add a stale file), and scripts the tool calls a
model would make: grep and read, then ``edit_file``, ``apply_patch`` or ``write_file``, and
sometimes ``run_command`` to run the tests, back a file up, or delete one. A task with a
``retry`` first makes a wrong fix: only the verify loop's failure report leads to the right one.
"""

from __future__ import annotations

import difflib
import sys
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

__all__ = ["FIXTURES", "Step", "Task", "all_tasks", "verify_command"]

FIXTURES = Path(__file__).resolve().parent / "fixtures"

Step = tuple[str, dict[str, Any]]
"""One tool call of the script: the tool's name and its arguments."""


def verify_command(project: str) -> str | None:
    """Return the test command a fixture is verified with (None: engram discovers it)."""
    if project == "python":
        return f"{sys.executable} -m pytest -q"
    return None  # package.json ``test`` → ``npm test --silent``; Makefile ``test`` → ``make test``


@dataclass(frozen=True)
class Task:
    """One scripted fix task."""

    name: str
    project: str
    bug: tuple[str, str, str] | None
    """The file, its correct passage and the buggy passage put in its place (None: no bug
    in the sources, only ``extra_files``)."""
    steps: tuple[Step, ...]
    answer: str
    retry: tuple[Step, ...] = ()
    """The calls after the verify loop reported the first (wrong) fix failing."""
    retry_answer: str = ""
    extra_files: dict[str, str] = field(default_factory=dict)
    """Files added to the copy before the run (a stale file the fix deletes)."""

    def fixed(self, path: str) -> str:
        """Return the fixture's correct content of ``path``."""
        return (FIXTURES / self.project / path).read_text(encoding="utf-8")

    def buggy(self, path: str) -> str:
        """Return ``path`` as the task's copy starts (the bug swapped in)."""
        text = self.fixed(path)
        if self.bug is None or path != self.bug[0]:
            return text
        file, good, bad = self.bug
        if text.count(good) != 1:
            raise ValueError(f"{self.name}: the passage to break is not in {file} once")
        return text.replace(good, bad)


def _edit(path: str, old: str, new: str) -> Step:
    return ("edit_file", {"path": path, "old_string": old, "new_string": new})


def _diff(path: str, before: str, after: str) -> str:
    return "".join(
        difflib.unified_diff(
            before.splitlines(keepends=True),
            after.splitlines(keepends=True),
            f"a/{path}",
            f"b/{path}",
        )
    )


def _bug_file(task: Task) -> str:
    if task.bug is None:
        raise ValueError(f"{task.name} has no bug to fix")
    return task.bug[0]


def _patch_fix(task: Task, *more: tuple[str, str, str]) -> Task:
    """Return the task with an ``apply_patch`` of its fix (and more files) as its last step."""
    path = _bug_file(task)
    patch = _diff(path, task.buggy(path), task.fixed(path))
    patch += "".join(_diff(p, before, after) for p, before, after in more)
    return replace(task, steps=(*task.steps, ("apply_patch", {"patch": patch})))


def _write_fix(task: Task) -> Task:
    """Return the task with a ``write_file`` of the whole fixed file as its last step."""
    path = _bug_file(task)
    step: Step = ("write_file", {"path": path, "content": task.fixed(path)})
    return replace(task, steps=(*task.steps, step))


def _grep(pattern: str) -> Step:
    return ("grep_code", {"pattern": pattern})


def _read(path: str) -> Step:
    return ("read_file", {"path": path})


def _run(command: str) -> Step:
    return ("run_command", {"command": command})


REGRESSION_TEST = """from shop.pricing import tax


def test_tax_half_cent_rounds_up():
    assert tax(5, 10) == 1
    assert tax(4, 10) == 0
"""
REMOVE_TEST = """

def test_remove_unknown_sku_is_ignored():
    cart = Cart()
    cart.remove("ghost")
    assert cart.count() == 0
"""
LEGACY_TEST = (
    "from shop.pricing import old_discount\n\n\ndef test_old():\n    assert old_discount(1)\n"
)
OLD_LEDGER = (
    "/** Superseded by Account. */\npublic final class OldLedger {\n    Ledger ledger;\n}\n"
)


def _python_tasks() -> list[Task]:
    py = "python"
    pytest = f"{sys.executable} -m pytest -q"
    remove = Task(
        "py-remove-unknown",
        py,
        ("shop/cart.py", "self.lines.pop(sku, None)", "self.lines.pop(sku)"),
        (_grep("def remove"), _read("shop/cart.py")),
        "remove() ignores unknown SKUs again; added a test.",
    )
    cart_test = remove.fixed("tests/test_cart.py")
    return [
        Task(
            "py-bulk-threshold",
            py,
            ("shop/pricing.py", "quantity >= BULK_QUANTITY", "quantity > BULK_QUANTITY"),
            (
                _grep("BULK_QUANTITY"),
                _read("shop/pricing.py"),
                _edit("shop/pricing.py", "quantity > BULK_QUANTITY", "quantity >= BULK_QUANTITY"),
            ),
            "The bulk discount starts at 10 units again.",
        ),
        _patch_fix(
            Task(
                "py-slug-case",
                py,
                ("shop/text.py", "title.lower())", "title)"),
                (_read("shop/text.py"),),
                "slugify lower-cases the title first.",
            )
        ),
        Task(
            "py-cart-quantity",
            py,
            ("shop/cart.py", "bulk_price(price, quantity)", "bulk_price(price, 1)"),
            (
                _read("shop/cart.py"),
                _edit("shop/cart.py", "bulk_price(price, 1)", "price * quantity"),
            ),
            "total() multiplies by the quantity now.",
            retry=(
                _read("shop/pricing.py"),
                _edit("shop/cart.py", "price * quantity", "bulk_price(price, quantity)"),
            ),
            retry_answer="total() uses bulk_price with the quantity, so bulk discounts apply.",
        ),
        _write_fix(
            Task(
                "py-truncate-width",
                py,
                ("shop/text.py", "text[: width - 1]", "text[:width]"),
                (_grep("def truncate"), _read("shop/text.py")),
                "truncate keeps the ellipsis within the width.",
            )
        ),
        Task(
            "py-tax-rounding",
            py,
            (
                "shop/pricing.py",
                "(amount_cents * rate_percent + 50) // 100",
                "amount_cents * rate_percent // 100",
            ),
            (
                _grep("def tax"),
                _edit(
                    "shop/pricing.py",
                    "amount_cents * rate_percent // 100",
                    "(amount_cents * rate_percent + 50) // 100",
                ),
                ("write_file", {"path": "tests/test_tax_rounding.py", "content": REGRESSION_TEST}),
                _run(pytest),
            ),
            "tax rounds half up; a regression test covers the half cent.",
        ),
        Task(
            "py-stale-test",
            py,
            None,
            (_run(pytest), _read("tests/test_legacy.py"), _run("rm tests/test_legacy.py")),
            "Deleted the test of the removed old_discount API.",
            extra_files={"tests/test_legacy.py": LEGACY_TEST},
        ),
        _patch_fix(remove, ("tests/test_cart.py", cart_test, cart_test + REMOVE_TEST)),
    ]


def _javascript_tasks() -> list[Task]:
    js = "javascript"
    return [
        Task(
            "js-leap-century",
            js,
            (
                "src/dates.js",
                "(year % 4 === 0 && year % 100 !== 0) || year % 400 === 0",
                "year % 4 === 0",
            ),
            (
                _grep("isLeapYear"),
                _read("src/dates.js"),
                _edit(
                    "src/dates.js",
                    "return year % 4 === 0;",
                    "return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;",
                ),
            ),
            "Centuries are leap years only when divisible by 400.",
        ),
        Task(
            "js-february",
            js,
            ("src/dates.js", "month === 2 && isLeapYear(year)", "month === 2"),
            (
                _read("src/dates.js"),
                _edit("src/dates.js", "if (month === 2)", "if (month === 2 && isLeapYear(month))"),
            ),
            "February has 29 days only in leap years.",
            retry=(_edit("src/dates.js", "isLeapYear(month)", "isLeapYear(year)"),),
            retry_answer="Fixed the leap-year check to use the year.",
        ),
        _patch_fix(
            Task(
                "js-median-even",
                js,
                (
                    "src/stats.js",
                    "sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2",
                    "sorted[middle] : sorted[middle]",
                ),
                (_grep("function median"), _read("src/stats.js")),
                "median averages the two middle values for an even count.",
            )
        ),
        Task(
            "js-median-mutates",
            js,
            ("src/stats.js", "[...values].sort", "values.sort"),
            (
                _read("src/stats.js"),
                _run(
                    "sed -i 's/const sorted = values.sort/const sorted = [...values].sort/' "
                    "src/stats.js"
                ),
            ),
            "median sorts a copy, so the caller's array is left alone.",
        ),
        _write_fix(
            Task(
                "js-word-count",
                js,
                ("src/strings.js", r"split(/\s+/)", "split(' ')"),
                (_grep("wordCount"), _read("src/strings.js")),
                "wordCount splits on any run of whitespace.",
            )
        ),
        Task(
            "js-pad-left",
            js,
            ("src/strings.js", "fill.repeat(width - text.length)", "fill.repeat(width)"),
            (
                _run("cp src/strings.js src/strings.js.orig"),
                _edit("src/strings.js", "fill.repeat(width)", "fill.repeat(width - text.length)"),
                _run("npm test --silent"),
                _run("rm src/strings.js.orig"),
            ),
            "padLeft pads only up to the width.",
        ),
        Task(
            "js-capitalize",
            js,
            ("src/strings.js", "word.slice(1).toLowerCase()", "word.slice(1)"),
            (_grep("capitalize"), _edit("src/strings.js", "word.slice(1);", "word.toLowerCase();")),
            "capitalize lower-cases the rest of the word.",
            retry=(
                _read("src/strings.js"),
                _edit("src/strings.js", "word.toLowerCase();", "word.slice(1).toLowerCase();"),
            ),
            retry_answer="capitalize keeps the first letter once and lower-cases the rest.",
        ),
    ]


def _java_tasks() -> list[Task]:
    java = "java"
    return [
        Task(
            "java-format-cents",
            java,
            ("src/Money.java", 'String.format("%02d", absolute % 100)', "(absolute % 100)"),
            (
                _grep("public String format"),
                _read("src/Money.java"),
                _edit(
                    "src/Money.java",
                    '"." + (absolute % 100)',
                    '"." + String.format("%02d", absolute % 100)',
                ),
            ),
            "format pads the cents to two digits.",
        ),
        Task(
            "java-withdraw-all",
            java,
            (
                "src/Account.java",
                "amount.cents() > balance.cents()",
                "amount.cents() >= balance.cents()",
            ),
            (
                _read("src/Account.java"),
                _edit("src/Account.java", ">= balance.cents()", "> balance.cents()"),
            ),
            "Withdrawing the whole balance is allowed again.",
        ),
        Task(
            "java-parse-decimal",
            java,
            (
                "src/Money.java",
                'Long.parseLong((parts[1] + "00").substring(0, 2))',
                "Long.parseLong(parts[1])",
            ),
            (
                _grep("parseLong"),
                _edit(
                    "src/Money.java",
                    "Long.parseLong(parts[1]) :",
                    "Long.parseLong(parts[1]) * 10 :",
                ),
            ),
            "One decimal is read as tenths.",
            retry=(
                _read("src/Money.java"),
                _edit(
                    "src/Money.java",
                    "Long.parseLong(parts[1]) * 10 :",
                    'Long.parseLong((parts[1] + "00").substring(0, 2)) :',
                ),
            ),
            retry_answer="The fraction is padded to two digits before parsing.",
        ),
        _patch_fix(
            Task(
                "java-csv-trailing",
                java,
                (
                    "src/CsvLine.java",
                    "        fields.add(field.toString());\n        return",
                    "        if (field.length() > 0) {\n            fields.add(field.toString());\n"
                    "        }\n        return",
                ),
                (_grep("fields.add"), _read("src/CsvLine.java")),
                "A trailing empty field is kept.",
            )
        ),
        _write_fix(
            Task(
                "java-parse-negative",
                java,
                ("src/Money.java", "negative ? -value : value", "value"),
                (_read("src/Money.java"),),
                "parse keeps the minus sign.",
            )
        ),
        Task(
            "java-history-sign",
            java,
            ("src/Account.java", 'history.add("-" + amount', 'history.add("+" + amount'),
            (
                _run("make test"),
                _read("src/Account.java"),
                _edit(
                    "src/Account.java",
                    'balance = balance.minus(amount);\n        history.add("+"',
                    'balance = balance.minus(amount);\n        history.add("-"',
                ),
            ),
            "Withdrawals are recorded with a minus sign.",
        ),
        Task(
            "java-stale-class",
            java,
            ("src/Money.java", "cents - other.cents", "cents + other.cents"),
            (
                _run("make test"),
                _run("rm src/OldLedger.java"),
                _read("src/Money.java"),
                _edit(
                    "src/Money.java",
                    "return new Money(cents + other.cents);\n    }\n\n    /**",
                    "return new Money(cents - other.cents);\n    }\n\n    /**",
                ),
            ),
            "Removed the class that no longer compiles and fixed minus().",
            extra_files={"src/OldLedger.java": OLD_LEDGER},
        ),
    ]


def all_tasks() -> list[Task]:
    """Return every task, Python, then JavaScript, then Java."""
    return _python_tasks() + _javascript_tasks() + _java_tasks()
