"""Haskell cases: GHC type, scope, parse and -Werror errors in a multi-module `ghc --make` build, a module
that is not installed, HUnit failures and an exception inside a test."""

from __future__ import annotations

from gen import case
from ws import Case, block, find, version

ECO = "haskell"
GHC = version("ghc --version")

TYPES = """
module Shop.Types (Item (..), Basket, emptyBasket, addItem) where

data Item = Item { itemName :: String, itemPrice :: Int, itemQty :: Int }
  deriving (Show, Eq)

type Basket = [Item]

emptyBasket :: Basket
emptyBasket = []

addItem :: Item -> Basket -> Basket
addItem = (:)
"""
PRICING = """
module Shop.Pricing (subtotal, discount, total) where

import Shop.Types

subtotal :: Basket -> Int
subtotal = sum . map (\\i -> itemPrice i * itemQty i)

-- | 10% off above 100.00
discount :: Int -> Int
discount s
  | s > 10000 = s `div` 10
  | otherwise = 0

total :: Basket -> Int
total b = let s = subtotal b in s - discount s
"""
FORMAT = """
module Shop.Format (money, receipt) where

import Data.List (intercalate)
import Shop.Types
import Shop.Pricing

money :: Int -> String
money c = show (c `div` 100) ++ "." ++ pad (c `mod` 100)
  where pad n = if n < 10 then '0' : show n else show n

receipt :: Basket -> String
receipt b = intercalate "\\n" (map line b ++ ["total " ++ money (total b)])
  where line i = itemName i ++ " x" ++ show (itemQty i) ++ " " ++ money (itemPrice i)
"""
MAIN = """
module Main (main) where

import Shop.Types
import Shop.Format

main :: IO ()
main = putStrLn (receipt (addItem (Item "tea" 450 2) emptyBasket))
"""
SPEC = """
module Main (main) where

import Control.Monad (when)
import System.Exit (exitFailure)
import Test.HUnit
import Shop.Types
import Shop.Pricing
import Shop.Format

basket :: Basket
basket = [Item "tea" 450 2, Item "cup" 1200 1]

tests :: Test
tests = TestList
  [ "subtotal" ~: subtotal basket ~?= 2100
  , "no discount below 100" ~: discount 9000 ~?= 0
  , "discount above 100" ~: discount 20000 ~?= 2000
  , "money pads cents" ~: money 305 ~?= "3.05"
  , "total" ~: total [Item "tv" 50000 1] ~?= 45000
  ]

main :: IO ()
main = do
  counts <- runTestTT tests
  when (errors counts + failures counts > 0) exitFailure
"""


def project(c: Case, **over: str) -> None:
    files = {"src/Shop/Types.hs": TYPES, "src/Shop/Pricing.hs": PRICING, "src/Shop/Format.hs": FORMAT,
             "app/Main.hs": MAIN, "test/Spec.hs": SPEC}
    files.update(over)
    c.files(files)


BUILD = "mkdir -p build && ghc --make -Wall -isrc -outputdir build -o build/shop app/Main.hs"
TEST = "ghc --make -isrc -outputdir build -o build/spec test/Spec.hs && ./build/spec"


def made(name: str) -> str:
    return f"{GHC} on make/haskell/gen.py:{name}, run here"


def ghc_errors(o: list[str], limit: int = 5) -> list[int]:
    """`File.hs:l:c: error:` and the message lines under it up to the excerpt's caret."""
    return block(o, r"^\S+\.hs:\d+:\d+(-\d+)?: error:", 3, limit, stop=r"^\s*$|^\S+\.hs:\d+|^\s+\|\s*$")


def run(c: Case, name: str, causal, cmd: str = BUILD, category: str = "build", tool: str = "ghc") -> None:
    c.step("Toolchain", "ghc --version")
    if cmd == TEST:
        c.step("Build", BUILD)
    c.step("Test" if cmd == TEST else "Build", cmd, causal=causal)
    c.write(tool=tool, category=category, made_by=made(name))


@case(ECO)
def ghc_type_error(name: str, shape: str) -> None:
    c = Case(ECO, name, shape, "shop")
    project(c, **{"src/Shop/Format.hs": FORMAT.replace('" x" ++ show (itemQty i)', '" x" ++ itemQty i')})
    run(c, name, ghc_errors)


@case(ECO)
def ghc_not_in_scope(name: str, shape: str) -> None:
    c = Case(ECO, name, shape, "shop")
    project(c, **{"src/Shop/Pricing.hs": PRICING.replace("total b = let s = subtotal b in s - discount s",
                                                         "total b = let s = subTotal b in s - discount s")})
    run(c, name, ghc_errors)


@case(ECO)
def ghc_parse_error(name: str, shape: str) -> None:
    c = Case(ECO, name, shape, "shop")
    project(c, **{"src/Shop/Types.hs": TYPES.replace("  deriving (Show, Eq)", "  deriving (Show, Eq")})
    run(c, name, ghc_errors)


@case(ECO)
def ghc_werror(name: str, shape: str) -> None:
    c = Case(ECO, name, shape, "shop")
    project(c, **{"src/Shop/Format.hs": FORMAT.replace("import Data.List (intercalate)", "import Data.List (intercalate, sortOn)")})
    run(c, name, lambda o: block(o, r"^\S+\.hs:\d+:\d+(-\d+)?: error: \[-Wunused-imports", 3, 3, stop=r"^\s*$|^\s+\|\s*$"),
        cmd=BUILD + " -Werror")


@case(ECO)
def ghc_missing_package(name: str, shape: str) -> None:
    c = Case(ECO, name, shape, "shop")
    project(c, **{"src/Shop/Format.hs": FORMAT.replace("import Data.List (intercalate)",
                                                       "import Data.List (intercalate)\nimport qualified Data.Aeson as Json")})
    run(c, name, lambda o: block(o, r"Could not find module", 1, 1) + find(o, r"^\S+\.hs:\d+:\d+(-\d+)?: error:", limit=1),
        category="dependency")


@case(ECO)
def hunit_failures(name: str, shape: str) -> None:
    c = Case(ECO, name, shape, "shop")
    project(c, **{"src/Shop/Pricing.hs": PRICING.replace("| s > 10000 = s `div` 10", "| s >= 10000 = s `div` 20")})
    run(c, name, lambda o: find(o, r"### Failure in:", r"^expected: ", r"^ but got: ", limit=3) + find(o, r"^test/Spec\.hs:\d+", limit=3),
        cmd=TEST, category="test", tool="hunit")


@case(ECO)
def hunit_exception(name: str, shape: str) -> None:
    c = Case(ECO, name, shape, "shop")
    project(c, **{"src/Shop/Format.hs": FORMAT.replace("where pad n = if n < 10 then '0' : show n else show n",
                                                       "where pad n = if n < 10 then '0' : show n else take 2 (show (head (filter (> 99) [n])))"),
                  "test/Spec.hs": SPEC.replace('money 305 ~?= "3.05"', 'money 1234 ~?= "12.34"')})
    run(c, name, lambda o: find(o, r"### Error in:", r"Prelude\.head: empty list", limit=2), cmd=TEST, category="test", tool="hunit")


@case(ECO)
def hunit_non_exhaustive(name: str, shape: str) -> None:
    c = Case(ECO, name, shape, "shop")
    project(c, **{"src/Shop/Pricing.hs": PRICING.replace("discount s\n  | s > 10000 = s `div` 10\n  | otherwise = 0",
                                                         "discount s\n  | s > 10000 = s `div` 10\n  | s > 0 = 0")})
    c.files({"test/Spec.hs": SPEC.replace('"no discount below 100" ~: discount 9000 ~?= 0', '"no discount at zero" ~: discount 0 ~?= 0')})
    run(c, name, lambda o: find(o, r"### Error in:", r"Non-exhaustive guards in function discount|Non-exhaustive", limit=1)
        + find(o, r"src/Shop/Pricing\.hs:\(?\d+", limit=1), cmd=TEST, category="test", tool="hunit")
