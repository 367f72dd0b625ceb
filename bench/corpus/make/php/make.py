"""PHP cases: PHPUnit, `php -l`, PHP_CodeSniffer and composer failing on a small project, run here with Debian's
php 8.2, phpunit 9.6, phpcs 3.7 and composer 2.5 (packagist switched off: nothing leaves the machine), wrapped in
the five CI shapes.

    python3 bench/corpus/make/php/make.py [CASE...]
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from kit import Step, cleanup, env, first3, grep, project, version
from maker import Cases, failing, make_all, passing
from record import run, write_case

Made = tuple[list[Step], str, str, str]

CART = '''<?php

declare(strict_types=1);

namespace App;

final class Cart
{
    /** @var array<string, array{price: float, qty: int}> */
    private array $items = [];
    private float $discount = 0.0;

    public function add(string $sku, float $price, int $qty = 1): self
    {
        if ($price < 0) {
            throw new \\InvalidArgumentException("negative price for $sku");
        }
        $this->items[$sku] = ['price' => $price, 'qty' => ($this->items[$sku]['qty'] ?? 0) + $qty];
        return $this;
    }

    public function applyDiscount(int $percent): void
    {
        $this->discount = $percent / 100;
    }

    public function total(): float
    {
        $sum = 0.0;
        foreach ($this->items as $item) {
            $sum += $item['price'] * $item['qty'];
        }
        return round($sum * (1 - $this->discount), 2);
    }

    public function count(): int
    {
        return array_sum(array_column($this->items, 'qty'));
    }
}
'''

MONEY = '''<?php

declare(strict_types=1);

namespace App;

final class Money
{
    private const SYMBOLS = ['EUR' => '€', 'USD' => '$', 'GBP' => '£'];

    public static function format(float $amount, string $currency): string
    {
        $symbol = self::SYMBOLS[$currency] ?? throw new \\DomainException("unknown currency $currency");
        return $symbol . number_format($amount, 2, '.', ',');
    }
}
'''

TEST = '''<?php

declare(strict_types=1);

namespace App\\Tests;

use App\\Cart;
use App\\Money;
use PHPUnit\\Framework\\TestCase;

final class CartTest extends TestCase
{
    public function testStartsEmpty(): void
    {
        $this->assertSame(0.0, (new Cart())->total());
    }

    public function testAddMerges(): void
    {
        $cart = (new Cart())->add('tea', 2.5)->add('tea', 2.5, 2);
        $this->assertSame(3, $cart->count());
        $this->assertSame(7.5, $cart->total());
    }

    public function testDiscount(): void
    {
        $cart = (new Cart())->add('tea', 10.0, 10);
        $cart->applyDiscount(10);
        $this->assertSame(90.0, $cart->total());
    }

    public function testRejectsNegative(): void
    {
        $this->expectException(\\InvalidArgumentException::class);
        (new Cart())->add('bad', -1.0);
    }

    public function testFormat(): void
    {
        $this->assertSame('£1,234.50', Money::format(1234.5, 'GBP'));
    }

    /** @dataProvider currencies */
    public function testSymbols(string $currency, string $expected): void
    {
        $this->assertStringStartsWith($expected, Money::format(1.0, $currency));
    }

    public static function currencies(): array
    {
        return [['EUR', '€'], ['USD', '$'], ['GBP', '£']];
    }
}
'''

PHPUNIT_XML = '''<?xml version="1.0" encoding="UTF-8"?>
<phpunit bootstrap="vendor/autoload.php" colors="false" failOnWarning="true">
  <testsuites>
    <testsuite name="unit">
      <directory>tests</directory>
    </testsuite>
  </testsuites>
</phpunit>
'''

COMPOSER = {"name": "acme/cart", "type": "library", "license": "MIT", "require": {"php": ">=8.1"},
            "repositories": [{"packagist.org": False}], "autoload": {"psr-4": {"App\\": "src/"}},
            "autoload-dev": {"psr-4": {"App\\Tests\\": "tests/"}}}


def files(over: dict[str, str | None]) -> dict[str, str]:
    f: dict[str, str | None] = {"src/Cart.php": CART, "src/Money.php": MONEY, "tests/CartTest.php": TEST,
                                "phpunit.xml": PHPUNIT_XML, "composer.json": json.dumps(COMPOSER, indent=4) + "\n"}
    f.update(over)
    return {k: v for k, v in f.items() if v is not None}


def php_case(name: str, shape: str, over: dict[str, str | None], cmd: str, tool: str, category: str,
             causal: Callable[[list[str]], list[int]], pre: list[str] = (), ctx: str | None = None,
             install: bool = True) -> Made:
    root = project(name, shape, files(over))
    e = env(COMPOSER_HOME=str(Path(env()["HOME"]) / ".composer"))
    o0, _ = run("php --version", cwd=root, env=e)
    steps = [Step("Set up PHP", "php --version", o0)]
    if install:
        steps.append(passing("composer install --no-interaction --no-progress", root, e, title="Install"))
    steps += [passing(p, root, e) for p in pre]
    steps.append(failing(cmd, root, e, tool.title(), causal, ctx=ctx))
    cleanup(root)
    return steps, tool, category, f"{version(tool + ' --version')}, {o0[0].split(' (')[0]}"


CASES: Cases[Callable[[str, str], Made]] = Cases()
case = CASES.case


def phpunit_causal(o: list[str]) -> list[int]:
    """Each numbered failure/error: its title, its message and diff lines, and the project's file:line lines."""
    idx: list[int] = []
    block = False
    for i, t in enumerate(o):
        if re.match(r"^\s*✘ ", t) or re.match(r"^\s*│ \S", t):  # --testdox
            idx.append(i)
            continue
        if re.match(r"^There (was|were) \d+ (failure|error|warning|risky)", t):
            block = True
            continue
        if re.match(r"^(FAILURES!|ERRORS!|WARNINGS!)", t):
            block = False
        if not block or not t.strip():
            continue
        if re.match(r"^\d+\) ", t) or re.match(r"^/\S+/(src|tests)/\S+\.php:\d+$", t) or \
                not t.startswith(("/", "--- Expected", "+++ Actual", "@@")):
            idx.append(i)
    return sorted(set(idx))


@case
def phpunit_assert_same(name: str, shape: str) -> Made:
    return php_case(name, shape, {"src/Cart.php": CART.replace("$percent / 100", "$percent / 10")}, "phpunit",
                    "phpunit", "test", phpunit_causal, ctx=r"^Tests: \d+")


@case
def phpunit_type_error(name: str, shape: str) -> Made:
    return php_case(name, shape, {"src/Cart.php": CART.replace("public function count(): int",
                                                               "public function count(): string")},
                    "phpunit --testdox", "phpunit", "test", phpunit_causal, pre=["php -l src/Cart.php"],
                    ctx=r"^Tests: \d+")


@case
def phpunit_data_provider(name: str, shape: str) -> Made:
    return php_case(name, shape, {"src/Money.php": MONEY.replace("'USD' => '$', ", "")
                                  .replace("number_format($amount, 2, '.', ',')", "number_format($amount, 2)")},
                    "vendor/bin/phpunit || phpunit", "phpunit", "test", phpunit_causal, ctx=r"^Tests: \d+")


@case
def phpunit_exception_expected(name: str, shape: str) -> Made:
    return php_case(name, shape, {"src/Cart.php": CART.replace("if ($price < 0)", "if ($price < -1)")
                                  .replace("'qty' => ($this->items[$sku]['qty'] ?? 0) + $qty", "'qty' => $qty")},
                    "phpunit --colors=never", "phpunit", "test", phpunit_causal, ctx=r"^Tests: \d+")


@case
def php_lint_parse_error(name: str, shape: str) -> Made:
    return php_case(name, shape, {"src/Cart.php": CART.replace("return $this;", "return $this")},
                    "find src tests -name '*.php' -print0 | xargs -0 -n1 php -l", "php", "lint",
                    lambda o: grep(o, r"Parse error: ", r"^Errors parsing "), install=False)


def phpcs_causal(o: list[str]) -> list[int]:
    idx: list[int] = []
    header = -1
    for i, t in enumerate(o):
        if t.startswith("FILE: "):
            header = i
        elif re.match(r"^\s*\d+ \| ERROR \|", t):
            idx += [header, i]
            j = i + 1
            while j < len(o) and re.match(r"^\s+\|\s+\|\s+\S", o[j]):
                idx.append(j)
                j += 1
    return sorted(set(x for x in idx if x >= 0))


@case
def phpcs_psr12(name: str, shape: str) -> Made:
    bad = CART.replace("    public function count(): int\n    {", "    public function count(): int {").replace(
        "        foreach ($this->items as $item) {", "        foreach ($this->items as $item)  {").replace(
        "return $this;", "return $this ;")
    return php_case(name, shape, {"src/Cart.php": bad}, "phpcs --standard=PSR12 src tests", "phpcs", "lint",
                    phpcs_causal, pre=["phpunit"])


@case
def phpcs_report_full_warnings(name: str, shape: str) -> Made:
    bad = MONEY.replace("    public static function format", "    static public function format").replace(
        "        return $symbol . number_format($amount, 2, '.', ',');",
        "        $unused = 1;\n        return $symbol . number_format($amount, 2, '.', ',') . '' . '' . '' . '' . ''"
        " . '' . '' . '';")
    return php_case(name, shape, {"src/Money.php": bad}, "phpcs --standard=PSR12 --report=full -s src",
                    "phpcs", "lint", phpcs_causal)


@case
def composer_lock_missing_package(name: str, shape: str) -> Made:
    root_files = files({})
    lock_dir = project(name + "-lock", "plain", root_files)
    run("composer update --no-interaction --no-progress", cwd=lock_dir, env=env())
    lock = (lock_dir / "composer.lock").read_text()
    cleanup(lock_dir)
    comp = dict(COMPOSER, require={"php": ">=8.1", "monolog/monolog": "^3.5"})
    return php_case(name, shape, {"composer.json": json.dumps(comp, indent=4) + "\n", "composer.lock": lock},
                    "composer install --no-interaction --no-progress", "composer", "dependency",
                    lambda o: grep(o, r"not present in the lock file|lock file is not up to date",
                                   r"monolog/monolog", limit=2), install=False)


@case
def composer_repo_connection_refused(name: str, shape: str) -> Made:
    comp = dict(COMPOSER, require={"php": ">=8.1", "acme/money": "^1.2"},
                repositories=[{"packagist.org": False}, {"type": "composer", "url": "http://127.0.0.1:9"}],
                config={"secure-http": False})
    return php_case(name, shape, {"composer.json": json.dumps(comp, indent=4) + "\n"},
                    "composer install --no-interaction --no-progress", "composer", "network",
                    lambda o: first3(o, grep(o, r"could not be downloaded|Connection refused|Failed to open stream")),
                    install=False)


@case
def composer_validate_strict(name: str, shape: str) -> Made:
    comp = dict(COMPOSER)
    comp.pop("license")
    comp["require"] = {"php": ">=8.1", "ext-mbstring": "*", "acme/legacy": "dev-master"}
    return php_case(name, shape, {"composer.json": json.dumps(comp, indent=4) + "\n"},
                    "composer validate --strict --no-check-publish", "composer", "config",
                    lambda o: grep(o, r"is valid for simple usage|is invalid", r"^strict errors", r"^- ", limit=6),
                    install=False)



@case
def phpunit_invalid_data_provider(name: str, shape: str) -> Made:
    test = TEST.replace("/** @dataProvider currencies */", "/** @dataProvider currencyTable */")
    return php_case(name, shape, {"tests/CartTest.php": test}, "phpunit", "phpunit", "test",
                    phpunit_causal, ctx=r"^Tests: \d+")


def write(cname: str, fn: Callable[[str, str], Made], shape: str, n: int) -> tuple[str, Path]:
    steps, tool, category, made = fn(cname, shape)
    folder = write_case("php", cname, steps, shape, tool=tool, category=category, seed=400 + n,
                        made_by=f"{made} (Debian packages) on a small generated project (make/php/make.py:{fn.__name__}), "
                                "run here; shape by make/shapes.py", job="test" if category == "test" else "ci")
    return f"{cname} {shape} {tool} {category}", folder


def main(argv: list[str]) -> int:
    return make_all(CASES, argv, shape_from=1, write=write)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
