"""Rust cases: rustc errors through cargo, cargo test failures and panics, clippy -D warnings, rustfmt --check,
rustdoc -D warnings, Cargo.lock/--locked, offline resolution, manifest errors, a full disk.

A two-crate workspace with no registry dependencies (`stock`, a library with unit, integration and doc tests,
and `stockctl`, a binary using it); every case breaks one thing and runs cargo offline."""

from __future__ import annotations

from gen import case
from ws import Case, block, find, version

ECO = "rust"
RUSTC = version("rustc --version")
CARGO = version("cargo --version")
OFFLINE = {"CARGO_NET_OFFLINE": "true", "CARGO_TERM_COLOR": "never", "RUST_BACKTRACE": "0"}

WS_TOML = """
[workspace]
members = ["crates/stock", "crates/stockctl"]
resolver = "2"
"""
STOCK_TOML = """
[package]
name = "stock"
version = "0.4.1"
edition = "2021"

[dependencies]
"""
CTL_TOML = """
[package]
name = "stockctl"
version = "0.4.1"
edition = "2021"

[dependencies]
stock = { path = "../stock" }
"""
LIB = '''
//! Stock keeping: items, a ledger of moves, and reports.

pub mod item;
pub mod ledger;
pub mod report;

pub use item::{Item, Sku};
pub use ledger::{Ledger, Move};

/// Parse a quantity such as `"12"` or `"+3"`.
///
/// ```
/// assert_eq!(stock::parse_qty("+3"), Ok(3));
/// assert!(stock::parse_qty("x").is_err());
/// ```
pub fn parse_qty(s: &str) -> Result<i64, std::num::ParseIntError> {
    s.trim_start_matches('+').parse()
}
'''
ITEM = '''
use std::fmt;

#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Sku(pub String);

#[derive(Debug, Clone, PartialEq)]
pub struct Item {
    pub sku: Sku,
    pub name: String,
    pub unit_price_cents: u32,
}

impl Item {
    pub fn new(sku: &str, name: &str, unit_price_cents: u32) -> Self {
        Item { sku: Sku(sku.to_string()), name: name.to_string(), unit_price_cents }
    }
}

impl fmt::Display for Item {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.name, self.sku.0)
    }
}
'''
LEDGER = '''
use std::collections::BTreeMap;

use crate::item::Sku;

#[derive(Debug, Clone, PartialEq)]
pub enum Move {
    In(Sku, i64),
    Out(Sku, i64),
    Adjust(Sku, i64),
}

#[derive(Debug, Default)]
pub struct Ledger {
    moves: Vec<Move>,
}

impl Ledger {
    pub fn new() -> Self {
        Ledger { moves: Vec::new() }
    }

    pub fn record(&mut self, m: Move) {
        self.moves.push(m);
    }

    pub fn len(&self) -> usize {
        self.moves.len()
    }

    pub fn is_empty(&self) -> bool {
        self.moves.is_empty()
    }

    pub fn on_hand(&self) -> BTreeMap<Sku, i64> {
        let mut out = BTreeMap::new();
        for m in &self.moves {
            let (sku, delta) = match m {
                Move::In(s, q) => (s, *q),
                Move::Out(s, q) => (s, -*q),
                Move::Adjust(s, q) => (s, *q),
            };
            *out.entry(sku.clone()).or_insert(0) += delta;
        }
        out
    }

    pub fn total_out(&self) -> i64 {
        self.moves.iter().map(|m| if let Move::Out(_, q) = m { *q } else { 0 }).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sku(s: &str) -> Sku {
        Sku(s.to_string())
    }

    #[test]
    fn empty_ledger() {
        assert!(Ledger::new().is_empty());
    }

    #[test]
    fn in_and_out() {
        let mut l = Ledger::new();
        l.record(Move::In(sku("A1"), 10));
        l.record(Move::Out(sku("A1"), 4));
        assert_eq!(l.on_hand()[&sku("A1")], 6);
    }

    #[test]
    fn adjust_negative() {
        let mut l = Ledger::new();
        l.record(Move::In(sku("B2"), 5));
        l.record(Move::Adjust(sku("B2"), -2));
        assert_eq!(l.on_hand()[&sku("B2")], 3);
    }

    #[test]
    fn total_out_sums_outs() {
        let mut l = Ledger::new();
        l.record(Move::Out(sku("A1"), 2));
        l.record(Move::Out(sku("C3"), 3));
        l.record(Move::In(sku("C3"), 9));
        assert_eq!(l.total_out(), 5);
    }
}
'''
REPORT = '''
use crate::item::Item;
use crate::ledger::Ledger;

/// Value of the stock on hand, in cents.
pub fn stock_value(items: &[Item], ledger: &Ledger) -> i64 {
    let on_hand = ledger.on_hand();
    items
        .iter()
        .map(|it| on_hand.get(&it.sku).copied().unwrap_or(0) * it.unit_price_cents as i64)
        .sum()
}

/// One line per item: name, quantity.
pub fn lines(items: &[Item], ledger: &Ledger) -> Vec<String> {
    let on_hand = ledger.on_hand();
    items
        .iter()
        .map(|it| format!("{:<12} {:>5}", it.name, on_hand.get(&it.sku).copied().unwrap_or(0)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ledger::Move;

    #[test]
    fn value_of_one_item() {
        let items = vec![Item::new("A1", "bolt", 25)];
        let mut l = Ledger::new();
        l.record(Move::In(items[0].sku.clone(), 4));
        assert_eq!(stock_value(&items, &l), 100);
    }

    #[test]
    fn lines_are_padded() {
        let items = vec![Item::new("A1", "bolt", 25)];
        let l = Ledger::new();
        assert_eq!(lines(&items, &l), vec!["bolt             0".to_string()]);
    }
}
'''
IT_TEST = '''
use stock::{parse_qty, Item, Ledger, Move};

#[test]
fn round_trip_quantities() {
    for (s, q) in [("1", 1), ("+7", 7), ("-3", -3)] {
        assert_eq!(parse_qty(s).unwrap(), q);
    }
}

#[test]
fn report_after_moves() {
    let items = vec![Item::new("A1", "bolt", 25), Item::new("B2", "nut", 5)];
    let mut l = Ledger::new();
    l.record(Move::In(items[0].sku.clone(), 10));
    l.record(Move::In(items[1].sku.clone(), 20));
    l.record(Move::Out(items[1].sku.clone(), 5));
    assert_eq!(stock::report::stock_value(&items, &l), 10 * 25 + 15 * 5);
}
'''
MAIN = '''
use std::env;
use std::process::ExitCode;

use stock::{parse_qty, Item, Ledger, Move};

fn main() -> ExitCode {
    let args: Vec<String> = env::args().skip(1).collect();
    let items = vec![Item::new("A1", "bolt", 25)];
    let mut ledger = Ledger::new();
    for a in &args {
        match parse_qty(a) {
            Ok(q) if q >= 0 => ledger.record(Move::In(items[0].sku.clone(), q)),
            Ok(q) => ledger.record(Move::Out(items[0].sku.clone(), -q)),
            Err(e) => {
                eprintln!("bad quantity {a:?}: {e}");
                return ExitCode::FAILURE;
            }
        }
    }
    for line in stock::report::lines(&items, &ledger) {
        println!("{line}");
    }
    ExitCode::SUCCESS
}
'''
UNUSED_WARN = "\nfn legacy_scale(q: i64) -> i64 {\n    let factor = 2;\n    q\n}\n"


def project(c: Case, lock: bool = True, **over: str) -> None:
    files = {"Cargo.toml": WS_TOML, "crates/stock/Cargo.toml": STOCK_TOML, "crates/stockctl/Cargo.toml": CTL_TOML,
             "crates/stock/src/lib.rs": LIB, "crates/stock/src/item.rs": ITEM, "crates/stock/src/ledger.rs": LEDGER,
             "crates/stock/src/report.rs": REPORT, "crates/stock/tests/flows.rs": IT_TEST,
             "crates/stockctl/src/main.rs": MAIN + UNUSED_WARN}
    files.update(over)
    c.files(files)
    if lock:
        c.sh("cargo generate-lockfile --offline", env=OFFLINE)


def made(name: str, extra: str = "") -> str:
    return f"{CARGO}, {RUSTC}{extra} on make/rust/gen.py:{name}, run here"


def toolchain(c: Case) -> None:
    c.step("Toolchain", "rustc --version && cargo --version", env=OFFLINE)


def rerr(out: list[str], limit: int = 5, code: str = "") -> list[int]:
    """rustc's `error[E…]: message`, its ` --> file:line:col` and the excerpt lines up to the next blank."""
    rx = rf"^error(\[{code}\w*\])?: (?!could not compile|aborting)" if code else r"^error(\[E\d+\])?: (?!could not compile|aborting)"
    return block(out, rx, 5, limit, stop=r"^\s*$|^(error|warning)")


def build(c: Case, name: str, cmd: str = "cargo build --workspace --locked", causal=None,
          tool: str = "cargo", category: str = "build", extra: str = "", pre_build: bool = False) -> None:
    toolchain(c)
    if pre_build:
        c.step("Build", "cargo build --workspace --locked", env=OFFLINE)
    c.step("Test" if "test" in cmd else ("Lint" if "clippy" in cmd or "fmt" in cmd else "Build"), cmd,
           causal=causal or (lambda o: rerr(o)), env=OFFLINE)
    c.write(tool=tool, category=category, made_by=made(name, extra))


# ---------------------------------------------------------------- rustc errors

@case(ECO)
def e0308_mismatched(name: str, shape: str) -> None:
    c = Case(ECO, name, shape, "stock")
    project(c, **{"crates/stock/src/report.rs": REPORT.replace(
        ".unwrap_or(0) * it.unit_price_cents as i64)", ".unwrap_or(0) * it.unit_price_cents)")})
    build(c, name)


@case(ECO)
def e0425_unresolved(name: str, shape: str) -> None:
    c = Case(ECO, name, shape, "stock")
    project(c, **{"crates/stockctl/src/main.rs": (MAIN + UNUSED_WARN).replace(
        "for line in stock::report::lines(&items, &ledger)", "for line in stock::report::lines(&item, &ledger)")})
    build(c, name)


@case(ECO)
def e0382_moved(name: str, shape: str) -> None:
    c = Case(ECO, name, shape, "stock")
    project(c, **{"crates/stock/src/report.rs": REPORT.replace(
        "    let on_hand = ledger.on_hand();\n    items\n        .iter()\n        .map(|it| on_hand.get(&it.sku).copied().unwrap_or(0) * it",
        "    let on_hand = ledger.on_hand();\n    let kept = on_hand;\n    let _ = kept.len();\n    items\n        .iter()\n"
        "        .map(|it| on_hand.get(&it.sku).copied().unwrap_or(0) * it")})
    build(c, name)


@case(ECO)
def e0502_borrow(name: str, shape: str) -> None:
    c = Case(ECO, name, shape, "stock")
    project(c, **{"crates/stock/src/ledger.rs": LEDGER.replace(
        "    pub fn len(&self) -> usize {",
        "    pub fn dedupe(&mut self) {\n        for m in self.moves.iter() {\n            if let Move::Adjust(_, 0) = m {\n"
        "                self.moves.retain(|x| x != m);\n            }\n        }\n    }\n\n    pub fn len(&self) -> usize {")})
    build(c, name)


@case(ECO)
def e0277_trait_bound(name: str, shape: str) -> None:
    c = Case(ECO, name, shape, "stock")
    project(c, **{"crates/stock/src/item.rs": ITEM.replace("#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]",
                                                           "#[derive(Debug, Clone, PartialEq, Eq, Hash)]")})
    build(c, name, causal=lambda o: rerr(o, 4))


@case(ECO)
def several_errors(name: str, shape: str) -> None:
    c = Case(ECO, name, shape, "stock")
    project(c, **{"crates/stock/src/ledger.rs": LEDGER.replace("Move::Adjust(s, q) => (s, *q),\n", "")
                  .replace("pub fn is_empty(&self) -> bool {\n        self.moves.is_empty()",
                           "pub fn is_empty(&self) -> bool {\n        self.moves.len() == 0;")})
    build(c, name, causal=lambda o: rerr(o, 10) + find(o, r"^\s+= note: the matched value is of type"))


@case(ECO)
def e0433_undeclared_crate(name: str, shape: str) -> None:
    c = Case(ECO, name, shape, "stock")
    project(c, **{"crates/stock/src/lib.rs": LIB.replace("pub fn parse_qty(s: &str) -> Result<i64, std::num::ParseIntError> {",
                                                         "pub fn parse_qty(s: &str) -> Result<i64, std::num::ParseIntError> {\n"
                                                         "    let _re = regex::Regex::new(r\"^[+-]?\\d+$\");")})
    build(c, name)


@case(ECO)
def e0106_lifetime(name: str, shape: str) -> None:
    c = Case(ECO, name, shape, "stock")
    project(c, **{"crates/stock/src/item.rs": ITEM + "\npub fn longest_name(a: &Item, b: &Item) -> &str {\n"
                  "    if a.name.len() >= b.name.len() { &a.name } else { &b.name }\n}\n"})
    build(c, name, causal=lambda o: block(o, r"^error\[E0106\]", 8, 1, stop=r"^\s*$"))


@case(ECO)
def link_missing_native_lib(name: str, shape: str) -> None:
    c = Case(ECO, name, shape, "stock")
    project(c, **{"crates/stockctl/src/main.rs": MAIN.replace("fn main() -> ExitCode {",
                                                              '#[link(name = "barcode")]\nextern "C" {\n    fn bc_init() -> i32;\n}\n\n'
                                                              "fn main() -> ExitCode {\n    let _ = unsafe { bc_init() };")})
    build(c, name, causal=lambda o: find(o, r"^error: linking with `cc` failed", r"unable to find library -lbarcode|cannot find -lbarcode"))


@case(ECO)
def deny_warnings_rustflags(name: str, shape: str) -> None:
    c = Case(ECO, name, shape, "stock")
    project(c, **{"crates/stock/src/report.rs": "use std::collections::HashMap;\n" + REPORT})
    toolchain(c)
    c.step("Build", 'RUSTFLAGS="-D warnings" cargo build --workspace --locked',
           causal=lambda o: block(o, r"^error: unused import", 4, 3, stop=r"^\s*$"), env=OFFLINE)
    c.write(tool="cargo", category="build", made_by=made(name))


# ---------------------------------------------------------------- tests

def test_step(c: Case, name: str, causal, cmd: str = "cargo test --workspace --locked", context=None,
              category: str = "test") -> None:
    toolchain(c)
    c.step("Build", "cargo build --workspace --locked", env=OFFLINE)
    c.step("Test", cmd, causal=causal, context=context, env=OFFLINE)
    c.write(tool="cargo test", category=category, made_by=made(name))


def panics(o: list[str], limit: int = 5) -> list[int]:
    """The failing test's header in the failures section, its panic line and the assertion's left/right."""
    return (find(o, r"^---- .* stdout ----$", limit=limit) + block(o, r"^thread '.*'( \(\d+\))? panicked at", 3, limit,
                                                                    stop=r"^note:|^\s*$|^----"))


@case(ECO)
def test_assert_eq(name: str, shape: str) -> None:
    c = Case(ECO, name, shape, "stock")
    project(c, **{"crates/stock/src/ledger.rs": LEDGER.replace("Move::Out(s, q) => (s, -*q),", "Move::Out(s, q) => (s, *q),")})
    test_step(c, name, panics, context=lambda o: find(o, r"^test result: FAILED"))


@case(ECO)
def test_unwrap_none(name: str, shape: str) -> None:
    c = Case(ECO, name, shape, "stock")
    project(c, **{"crates/stock/src/report.rs": REPORT.replace(
        ".map(|it| on_hand.get(&it.sku).copied().unwrap_or(0) * it.unit_price_cents as i64)",
        ".map(|it| on_hand.get(&it.sku).copied().unwrap() * it.unit_price_cents as i64)").replace(
        "let items = vec![Item::new(\"A1\", \"bolt\", 25)];\n        let mut l",
        "let items = vec![Item::new(\"A1\", \"bolt\", 25), Item::new(\"Z9\", \"washer\", 2)];\n        let mut l")})
    test_step(c, name, panics)


@case(ECO)
def test_should_panic(name: str, shape: str) -> None:
    c = Case(ECO, name, shape, "stock")
    project(c, **{"crates/stock/src/lib.rs": LIB + '''
#[cfg(test)]
mod tests {
    #[test]
    fn plain() {
        assert_eq!(super::parse_qty("4"), Ok(4));
    }

    #[test]
    #[should_panic(expected = "empty")]
    fn empty_is_rejected() {
        super::parse_qty("").unwrap();
    }
}
'''})
    test_step(c, name, lambda o: panics(o) + find(o, r"panic did not contain expected string",
                                                  r"panic message: ", r"expected substring: "))


@case(ECO)
def integration_test_fails(name: str, shape: str) -> None:
    c = Case(ECO, name, shape, "stock")
    project(c, **{"crates/stock/tests/flows.rs": IT_TEST.replace("10 * 25 + 15 * 5", "10 * 25 + 20 * 5")})
    test_step(c, name, panics)


@case(ECO)
def doctest_fails(name: str, shape: str) -> None:
    c = Case(ECO, name, shape, "stock")
    project(c, **{"crates/stock/src/lib.rs": LIB.replace('assert_eq!(stock::parse_qty("+3"), Ok(3));',
                                                         'assert_eq!(stock::parse_qty(" 3"), Ok(3));')})
    test_step(c, name, lambda o: find(o, r"^---- crates/stock/src/lib.rs - parse_qty", r"panicked at", r"^\s+left: ",
                                     r"^\s+right: "))


@case(ECO)
def overflow_panic(name: str, shape: str) -> None:
    c = Case(ECO, name, shape, "stock")
    project(c, **{"crates/stock/src/report.rs": REPORT.replace("unit_price_cents as i64)", "unit_price_cents as i64 * 100_000_000_000)")
                  .replace("Move::In(items[0].sku.clone(), 4)", "Move::In(items[0].sku.clone(), 4_000_000_000)")})
    test_step(c, name, panics)


@case(ECO)
def stack_overflow_abort(name: str, shape: str) -> None:
    c = Case(ECO, name, shape, "stock")
    project(c, **{"crates/stock/src/item.rs": ITEM + '''
pub fn depth(n: u64) -> u64 {
    if n == u64::MAX { 0 } else { 1 + depth(n + 1) }
}

#[cfg(test)]
mod tests {
    #[test]
    fn display() {
        assert_eq!(super::Item::new("A1", "bolt", 1).to_string(), "bolt (A1)");
    }

    #[test]
    fn depth_terminates() {
        assert!(super::depth(0) > 0);
    }
}
'''})
    test_step(c, name, lambda o: find(o, r"has overflowed its stack", r"fatal runtime error: stack overflow",
                                     r"process didn't exit successfully", r"SIGABRT"))


@case(ECO)
def test_returns_err(name: str, shape: str) -> None:
    c = Case(ECO, name, shape, "stock")
    project(c, **{"crates/stock/tests/flows.rs": IT_TEST + '''
#[test]
fn quantities_from_file() -> Result<(), Box<dyn std::error::Error>> {
    let total: i64 = "4\\n+2\\n1O\\n".lines().map(parse_qty).sum::<Result<i64, _>>()?;
    assert_eq!(total, 7);
    Ok(())
}
'''})
    test_step(c, name, lambda o: find(o, r"^---- quantities_from_file stdout ----", r"^Error: ParseIntError",
                                     r"the test returned a termination value with a non-zero status"))


@case(ECO)
def test_compile_error(name: str, shape: str) -> None:
    c = Case(ECO, name, shape, "stock")
    project(c, **{"crates/stock/tests/flows.rs": IT_TEST.replace("Item::new(\"B2\", \"nut\", 5)", "Item::new(\"B2\", \"nut\")")})
    test_step(c, name, lambda o: rerr(o), category="build")


@case(ECO)
def two_unit_failures(name: str, shape: str) -> None:
    c = Case(ECO, name, shape, "stock")
    project(c, **{"crates/stock/src/ledger.rs": LEDGER.replace("Move::Adjust(s, q) => (s, *q),", "Move::Adjust(s, q) => (s, q.abs()),"),
                  "crates/stock/src/report.rs": REPORT.replace('"{:<12} {:>5}"', '"{:<10} {:>5}"')})
    test_step(c, name, panics, context=lambda o: find(o, r"^test result: FAILED"))


# ---------------------------------------------------------------- lint and docs

@case(ECO)
def clippy_deny_warnings(name: str, shape: str) -> None:
    c = Case(ECO, name, shape, "stock")
    project(c, **{"crates/stock/src/report.rs": REPORT.replace(
        "    let on_hand = ledger.on_hand();\n    items\n        .iter()\n        .map(|it| on_hand.get(&it.sku).copied().unwrap_or(0) * it.unit_price_cents as i64)\n        .sum()",
        "    let on_hand = ledger.on_hand();\n    if items.len() == 0 {\n        return 0;\n    }\n    let total = items\n        .iter()\n"
        "        .map(|it| on_hand.get(&it.sku).copied().unwrap_or(0) * it.unit_price_cents as i64)\n        .sum();\n    return total;")})
    toolchain(c)
    c.step("Clippy", "cargo clippy --version\ncargo clippy --workspace --all-targets --locked -- -D warnings",
           causal=lambda o: block(o, r"^error: (?!could not compile)", 5, 5, stop=r"^\s*$|^\s+= help"), env=OFFLINE)
    c.write(tool="clippy", category="lint", made_by=made(name, f", {version('cargo clippy --version')}"))


@case(ECO)
def rustfmt_check(name: str, shape: str) -> None:
    c = Case(ECO, name, shape, "stock")
    project(c)
    c.sh("cargo fmt --all", env=OFFLINE)
    c.files({"crates/stock/src/item.rs": ITEM.replace("Item { sku: Sku(sku.to_string()), name: name.to_string(), unit_price_cents }",
                                                           "Item { sku: Sku(sku.to_string()), name: name.to_string(),\n        unit_price_cents }"),
             "crates/stockctl/src/main.rs": MAIN.replace("use std::env;\nuse std::process::ExitCode;", "use std::process::ExitCode;\nuse std::env;")})
    toolchain(c)
    c.step("Format", "cargo fmt --version\ncargo fmt --all -- --check", causal=lambda o: find(o, r"^Diff in ", limit=10),
           env=OFFLINE)
    c.write(tool="rustfmt", category="lint", made_by=made(name, f", {version('rustfmt --version')}"))


@case(ECO)
def rustdoc_broken_link(name: str, shape: str) -> None:
    c = Case(ECO, name, shape, "stock")
    project(c, **{"crates/stock/src/report.rs": REPORT.replace("/// Value of the stock on hand, in cents.",
                                                               "/// Value of the stock on hand, in cents; see [`Ledger::value_at`].")})
    toolchain(c)
    c.step("Docs", 'RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps --locked',
           causal=lambda o: block(o, r"^error: unresolved link", 4, 3, stop=r"^\s*$"), env=OFFLINE)
    c.write(tool="rustdoc", category="lint", made_by=made(name))


# ---------------------------------------------------------------- dependencies and manifests

@case(ECO)
def locked_lockfile_stale(name: str, shape: str) -> None:
    c = Case(ECO, name, shape, "stock")
    project(c)
    c.files({"crates/stock/Cargo.toml": STOCK_TOML.replace('version = "0.4.1"', 'version = "0.5.0"'),
             "crates/stockctl/Cargo.toml": CTL_TOML.replace('version = "0.4.1"', 'version = "0.5.0"')})
    toolchain(c)
    c.step("Build", "cargo build --workspace --locked", env=OFFLINE,
           causal=lambda o: find(o, r"^error: (the lock file .* needs to be updated|cannot update the lock file .*) .*--locked"))
    c.write(tool="cargo", category="dependency", made_by=made(name))


@case(ECO)
def offline_missing_crate(name: str, shape: str) -> None:
    c = Case(ECO, name, shape, "stock")
    project(c, lock=False, **{"crates/stock/Cargo.toml": STOCK_TOML + 'serde_jsonc = "0.9"\n'})
    toolchain(c)
    c.step("Build", "cargo build --workspace --offline", env=OFFLINE,
           causal=lambda o: block(o, r"^error: no matching package named|^error: failed to (get|select)", 6, 1, stop=r"^\s*$"))
    c.write(tool="cargo", category="dependency", made_by=made(name))


@case(ECO)
def missing_path_dependency(name: str, shape: str) -> None:
    c = Case(ECO, name, shape, "stock")
    project(c, lock=False, **{"crates/stockctl/Cargo.toml": CTL_TOML + 'barcode = { path = "../barcode" }\n'})
    toolchain(c)
    c.step("Build", "cargo build --workspace", env=OFFLINE,
           causal=lambda o: find(o, r"^error: failed to (get|load)", r"failed to read `", r"No such file or directory"))
    c.write(tool="cargo", category="dependency", made_by=made(name))


@case(ECO)
def manifest_parse_error(name: str, shape: str) -> None:
    c = Case(ECO, name, shape, "stock")
    project(c, lock=False)
    c.files({"crates/stock/Cargo.toml": STOCK_TOML.replace('edition = "2021"', 'edition = 2021')})
    toolchain(c)
    c.step("Build", "cargo build --workspace", env=OFFLINE,
           causal=lambda o: block(o, r"^error: invalid type", 4, 1) + find(o, r"^error: failed to load manifest"))
    c.write(tool="cargo", category="config", made_by=made(name))


@case(ECO)
def workspace_member_missing(name: str, shape: str) -> None:
    c = Case(ECO, name, shape, "stock")
    project(c, lock=False, **{"Cargo.toml": WS_TOML.replace('"crates/stockctl"]', '"crates/stockctl", "crates/stockweb"]')})
    toolchain(c)
    c.step("Build", "cargo build --workspace", env=OFFLINE,
           causal=lambda o: find(o, r"^error: failed to load manifest", r"failed to read `", r"No such file or directory"))
    c.write(tool="cargo", category="config", made_by=made(name))


@case(ECO)
def disk_full_target(name: str, shape: str) -> None:
    c = Case(ECO, name, shape, "stock")
    project(c)
    toolchain(c)
    # target/ is a 2 MiB tmpfs in a private mount namespace: a runner whose disk is full
    c.step("Build", "unshare -m bash -c 'mkdir -p target && mount -t tmpfs -o size=2m tmpfs target && "
           "cargo build --workspace --locked'", show="cargo build --workspace --locked", env=OFFLINE,
           causal=lambda o: find(o, r"No space left on device"))
    c.write(tool="cargo", category="infrastructure", made_by=made(name, ", target/ on a full 2 MiB tmpfs"))


@case(ECO)
def build_script_panic(name: str, shape: str) -> None:
    c = Case(ECO, name, shape, "stock")
    project(c, **{"crates/stock/build.rs": 'use std::env;\n\nfn main() {\n    println!("cargo:rerun-if-env-changed=STOCK_SCHEMA");\n'
                  '    let schema = env::var("STOCK_SCHEMA").expect("STOCK_SCHEMA must point at the schema file");\n'
                  '    println!("cargo:rustc-env=STOCK_SCHEMA_PATH={schema}");\n}\n'})
    build(c, name, causal=lambda o: find(o, r"^error: failed to run custom build command for `stock", limit=1)
          + block(o, r"^\s*thread 'main'( \(\d+\))? panicked at", 1, 1))


@case(ECO)
def test_out_of_memory(name: str, shape: str) -> None:
    c = Case(ECO, name, shape, "stock")
    project(c, **{"crates/stock/tests/flows.rs": IT_TEST + '''
#[test]
fn large_ledger() {
    let mut l = Ledger::new();
    let sku = stock::Sku("A1".to_string());
    for i in 0..400_000_000i64 {
        l.record(Move::In(sku.clone(), i % 7));
    }
    assert!(l.len() > 0);
}
'''})
    toolchain(c)
    c.step("Build", "cargo build --workspace --locked", env=OFFLINE)
    # the runner allows 1.5 GB of address space per process: a small CI container
    c.step("Test", "ulimit -v 1500000; cargo test --workspace --locked", show="cargo test --workspace --locked", env=OFFLINE,
           causal=lambda o: find(o, r"memory allocation of \d+ bytes failed", r"SIGABRT", limit=1))
    c.write(tool="cargo test", category="infrastructure", made_by=made(name, ", under ulimit -v 1500000 (the runner's memory limit)"))


@case(ECO)
def no_fail_fast_two_binaries(name: str, shape: str) -> None:
    c = Case(ECO, name, shape, "stock")
    project(c, **{"crates/stock/src/ledger.rs": LEDGER.replace("self.moves.iter().map(|m| if let Move::Out(_, q) = m { *q } else { 0 }).sum()",
                                                              "self.moves.iter().map(|m| if let Move::In(_, q) = m { *q } else { 0 }).sum()"),
                  "crates/stock/tests/flows.rs": IT_TEST.replace('("-3", -3)', '("-3", -3), (" 4", 4)')})
    test_step(c, name, panics, cmd="cargo test --workspace --locked --no-fail-fast",
              context=lambda o: find(o, r"^error: \d+ targets failed:", r"^\s+`-p stock --(lib|test flows)`"))
