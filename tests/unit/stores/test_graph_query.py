"""Structure queries: fuzzy lookup with ambiguity, relations, impact and paths."""

from __future__ import annotations

from pathlib import Path

import pytest

from engram.stores.relations import GraphQueries, RelationIndex, answer
from engram.stores.relations._index import build_relation_index

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "graph"


@pytest.fixture(scope="module")
def queries() -> GraphQueries:
    graph = RelationIndex()
    build_relation_index(FIXTURES / "python", graph)
    return GraphQueries(graph)


@pytest.fixture(scope="module")
def java() -> GraphQueries:
    graph = RelationIndex()
    build_relation_index(FIXTURES / "java", graph)
    return GraphQueries(graph)


def ids(related) -> set[str]:
    return {r.symbol.id for r in related if r.symbol is not None}


@pytest.mark.parametrize(
    "query",
    [
        "OrderService",
        "service.OrderService",
        "shop.service.OrderService",
        "shop/service.py::OrderService",
        "orderservice",
    ],
)
def test_lookup_forms_find_one_symbol(queries, query):
    match = queries.find(query)
    assert match.found is not None and match.found.id == "shop/service.py::OrderService"


def test_lookup_reports_ambiguity_instead_of_guessing(queries):
    match = queries.find("total")
    assert match.ambiguous and match.found is None
    assert {m.id for m in match.matches} == {
        "shop/models.py::Order.total",
        "shop/models.py::DiscountOrder.total",
    }
    assert queries.find("DiscountOrder.total").found is not None


def test_lookup_suggests_close_names(queries):
    match = queries.find("OrderServce")
    assert not match.matches and "OrderService" in match.suggestions


def test_callers_and_callees(queries):
    callers = queries.related("shop/util.py::fmt_line", "callers", depth=2)
    assert ids(callers) == {
        "shop/util.py::log",
        "shop/service.py::OrderService.place",
        "shop/payments/gateway.py::Gateway.pay",
        "shop/payments/refunds.py::Refund.apply",
    }
    assert {r.depth for r in callers} == {1, 2}
    callees = queries.related("shop/service.py::OrderService.place", "callees")
    assert "shop/repo.py::Repository.save" in ids(callees)


def test_callees_include_unresolved_names(queries):
    callees = queries.related("shop/models.py::Order.add", "callees")
    assert any(r.symbol is None and r.name == "self.items.append" for r in callees)


def test_subclasses_transitive(queries):
    direct = queries.related("shop/repo.py::Repository", "subclasses")
    deep = queries.related("shop/repo.py::Repository", "subclasses", depth=2)
    assert ids(direct) == {"shop/repo.py::SqlRepository"}
    assert ids(deep) == {"shop/repo.py::SqlRepository", "shop/repo.py::MemoryRepository"}


def test_implementations_of_interface_and_of_method(java):
    base = "src/com/acme/"
    impls = java.related(base + "svc/Service.java::Service", "implementations", depth=2)
    assert {
        base + "svc/BaseService.java::BaseService",
        base + "svc/Auditable.java::Auditable",
    } <= ids(impls)
    overrides = java.related(base + "repo/Repository.java::Repository.byId", "implementations", 2)
    assert ids(overrides) == {
        base + "repo/UserRepo.java::UserRepo.byId",
        base + "repo/CachedUserRepo.java::CachedUserRepo.byId",
    }


def test_dependencies_dependents_and_impact(queries):
    deps = queries.related("shop/service.py", "dependencies")
    assert {"shop/repo.py", "shop/models.py", "shop/util.py"} <= ids(deps)
    dependents = queries.related("shop/util.py", "dependents")
    assert ids(dependents) == {
        "shop/service.py",
        "shop/payments/gateway.py",
        "shop/payments/refunds.py",
    }
    impact = queries.related("shop/util.py::fmt_line", "impact", depth=3)
    found = {(r.symbol.id, r.depth) for r in impact if r.symbol}
    assert {
        ("shop/util.py::log", 1),
        ("shop/service.py::OrderService.place", 2),
        ("shop/payments/gateway.py::Gateway.pay", 2),
    } <= found
    assert ("shop/payments/gateway.py::charge", 3) in found
    file_impact = ids(queries.related("shop/models.py", "impact", depth=1))
    assert {
        "shop/cli.py",
        "shop/cli.py::main",
        "shop/service.py::OrderService.place",
    } <= file_impact
    assert not any(i.startswith("shop/models.py") for i in file_impact)


def test_path_between_symbols(queries):
    chain = queries.path("shop/cli.py::main", "shop/util.py::fmt_line")
    assert chain[0].id == "shop/cli.py::main" and chain[-1].id == "shop/util.py::fmt_line"
    assert len(chain) >= 3


def test_answer_explains_problems(queries):
    assert "ambiguous" in answer(queries, "total", "callers").problem
    assert "needs a target" in answer(queries, "main", "path").problem
    with pytest.raises(ValueError):
        answer(queries, "main", "friends")
    assert answer(queries, "main", "impact").depth == 3


def test_path_falls_back_to_undirected_links(queries):
    # No directed chain leads from a callee back to its caller; the undirected one does.
    chain = queries.path("shop/util.py::fmt_line", "shop/repo.py::SqlRepository._connect")
    ids_ = [s.id for s in chain]
    assert (
        ids_[0] == "shop/util.py::fmt_line" and ids_[-1] == "shop/repo.py::SqlRepository._connect"
    )
    g = queries.g
    for a, b in zip(ids_, ids_[1:], strict=False):
        assert g.has_edge(a, b) or g.has_edge(b, a)
    assert queries.path("shop/util.py::fmt_line", "nowhere") == []


def test_a_class_depends_on_what_its_methods_call_and_is_depended_on_through_them(queries):
    deps = ids(queries.related("shop/service.py::OrderService", "dependencies"))
    assert {"shop/models.py::Order", "shop/repo.py::Repository.save", "shop/util.py::log"} <= deps
    assert not any(d.startswith("shop/service.py::OrderService") for d in deps)  # not itself
    dependents = ids(queries.related("shop/models.py::Order", "dependents"))
    assert {"shop/service.py::OrderService.place", "shop/models.py::DiscountOrder"} <= dependents
    # a file keeps to its own edges (its imports), not its members' calls
    assert ids(queries.related("shop/service.py", "dependencies")) == {
        "shop/models.py",
        "shop/repo.py",
        "shop/util.py",
    }
