"""Small real repositories whose tests pass, for the mutation generator: a Python shop
(functions, a method, a helper reached only through another function) and a Go package."""

from __future__ import annotations

import textwrap
from pathlib import Path

from tests.eval.tasks import git

SHOP = textwrap.dedent(
    '''
    """A tiny shop."""


    def price_with_tax(price, rate):
        return round(price * (1 + rate), 2)


    def discount(price, percent):
        if percent > 100:
            raise ValueError("percent above 100")
        return price - price * percent / 100


    def total(items, rate=0.2):
        subtotal = 0
        for price, quantity in items:
            subtotal += price * quantity
        return price_with_tax(subtotal, rate)


    def clamp(value, low, high):
        if value < low:
            return low
        if value > high:
            return high
        return value


    def label(name, count):
        return f"{count} x {name}"


    class Cart:
        def __init__(self):
            self.items = []

        def add(self, price, quantity=1):
            self.items.append((price, quantity))
            return len(self.items)

        def is_empty(self):
            return len(self.items) == 0

        def lines(self):
            return [label(str(price), quantity) for price, quantity in self.items]
    '''
).lstrip()

SHOP_TESTS = textwrap.dedent(
    """
    import pytest
    from shop import Cart, clamp, discount, label, price_with_tax, total


    def test_price_with_tax():
        assert price_with_tax(10, 0.2) == 12.0


    def test_discount():
        assert discount(200, 10) == 180


    def test_discount_too_big():
        with pytest.raises(ValueError):
            discount(10, 150)


    def test_total():
        assert total([(10, 2), (5, 1)]) == 30.0


    def test_clamp_low():
        assert clamp(-5, 0, 10) == 0


    def test_clamp_high():
        assert clamp(50, 0, 10) == 10


    def test_clamp_inside():
        assert clamp(5, 0, 10) == 5


    def test_label():
        assert label("pen", 3) == "3 x pen"


    def test_cart():
        cart = Cart()
        assert cart.is_empty()
        assert cart.add(3, 2) == 1
        assert not cart.is_empty()
        assert total(cart.items) == 7.2
        assert cart.lines() == ["2 x 3"]
    """
).lstrip()

GO_CALC = textwrap.dedent(
    """
    package calc

    // Add returns the sum.
    func Add(a, b int) int {
    \treturn a + b
    }

    // Max returns the larger.
    func Max(a, b int) int {
    \tif a > b {
    \t\treturn a
    \t}
    \treturn b
    }

    // Positive says whether n is above zero.
    func Positive(n int) bool {
    \treturn n > 0
    }
    """
).lstrip()

GO_TESTS = textwrap.dedent(
    """
    package calc

    import "testing"

    func TestAdd(t *testing.T) {
    \tif got := Add(2, 3); got != 5 {
    \t\tt.Fatalf("Add(2, 3) = %d, want 5", got)
    \t}
    }

    func TestMax(t *testing.T) {
    \tif got := Max(2, 7); got != 7 {
    \t\tt.Fatalf("Max(2, 7) = %d, want 7", got)
    \t}
    \tif got := Max(9, 1); got != 9 {
    \t\tt.Fatalf("Max(9, 1) = %d, want 9", got)
    \t}
    }

    func TestPositive(t *testing.T) {
    \tif !Positive(4) || Positive(-4) {
    \t\tt.Fatal("Positive is wrong")
    \t}
    }
    """
).lstrip()


def _commit(repo: Path) -> Path:
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "passing")
    return repo


def make_shop(root: Path) -> Path:
    repo = root / "shop"
    (repo / "tests").mkdir(parents=True)
    (repo / "shop.py").write_text(SHOP)
    (repo / "tests" / "test_shop.py").write_text(SHOP_TESTS)
    (repo / "pyproject.toml").write_text('[tool.pytest.ini_options]\npythonpath = ["."]\n')
    (repo / ".gitignore").write_text("__pycache__/\n.pytest_cache/\n")
    return _commit(repo)


def make_go_calc(root: Path) -> Path:
    repo = root / "gocalc"
    (repo / "calc").mkdir(parents=True)
    (repo / "go.mod").write_text("module example.com/gocalc\n\ngo 1.19\n")
    (repo / "calc" / "calc.go").write_text(GO_CALC)
    (repo / "calc" / "calc_test.go").write_text(GO_TESTS)
    return _commit(repo)
