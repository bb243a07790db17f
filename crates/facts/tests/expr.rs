//! Manifest constraints: every operator, with operands that tell it from its neighbours (`<`
//! from `<=`, `==` from `!=`, `&&` from `||`), precedence and associativity, and every error.

use lab_facts::expr::{check_all, eval};

fn constants(name: &str) -> Option<i64> {
    match name {
        "BM" => Some(128),
        "WM" => Some(64),
        "B_M2" => Some(3),
        "ZERO" => Some(0),
        _ => None,
    }
}

fn ev(text: &str) -> i64 {
    eval(text, &constants).unwrap_or_else(|e| panic!("{text}: {e}"))
}

fn err(text: &str) -> String {
    eval(text, &constants).expect_err(text)
}

#[test]
fn comparisons_give_one_or_zero() {
    for (text, want) in [
        ("3 == 3", 1),
        ("3 == 4", 0),
        ("3 != 4", 1),
        ("3 != 3", 0),
        ("3 < 4", 1),
        ("4 < 4", 0),
        ("5 < 4", 0),
        ("3 <= 4", 1),
        ("4 <= 4", 1),
        ("5 <= 4", 0),
        ("5 > 4", 1),
        ("4 > 4", 0),
        ("3 > 4", 0),
        ("5 >= 4", 1),
        ("4 >= 4", 1),
        ("3 >= 4", 0),
        ("-1 < 0", 1),
    ] {
        assert_eq!(ev(text), want, "{text}");
    }
}

#[test]
fn logic_treats_any_nonzero_as_true() {
    for (text, want) in [
        ("1 && 1", 1),
        ("1 && 0", 0),
        ("0 && 1", 0),
        ("0 && 0", 0),
        ("2 && 3", 1),
        ("0 || 0", 0),
        ("0 || 5", 1),
        ("5 || 0", 1),
        ("-1 || 0", 1),
        ("!0", 1),
        ("!5", 0),
        ("!!7", 1),
        ("!(BM < WM)", 1),
    ] {
        assert_eq!(ev(text), want, "{text}");
    }
}

#[test]
fn arithmetic_on_i64_truncates_toward_zero() {
    for (text, want) in [
        ("7 + 3", 10),
        ("7 - 3", 4),
        ("3 - 7", -4),
        ("7 * 3", 21),
        ("7 / 2", 3),
        ("-7 / 2", -3),
        ("7 % 3", 1),
        ("-7 % 3", -1),
        ("6 % 3", 0),
        ("-3", -3),
        ("--3", 3),
        ("BM / WM", 2),
        ("B_M2 * 2", 6),
        ("  BM==128  ", 1),
        ("007", 7),
    ] {
        assert_eq!(ev(text), want, "{text}");
    }
}

#[test]
fn precedence_and_left_associativity() {
    for (text, want) in [
        ("1 + 2 * 3", 7),
        ("2 * 3 + 1", 7),
        ("(1 + 2) * 3", 9),
        ("10 - 3 - 2", 5),
        ("2 - 1 + 1", 2),
        ("100 / 10 / 5", 2),
        ("2 * 6 / 4", 3),
        ("12 / 4 * 3", 9),
        ("17 % 5 * 2", 4),
        ("1 + 6 % 4", 3),
        ("1 < 2 == 1", 1),
        ("2 == 2 < 3", 0),
        ("1 + 1 < 3", 1),
        ("1 + 1 == 2", 1),
        ("3 >= 2 + 2", 0),
        ("0 || 1 && 0", 0),
        ("1 || 0 && 0", 1),
        ("1 == 1 && 2 == 3", 0),
        ("1 == 2 || 3 == 3", 1),
        ("-3 + 10 % 4 * 2", 1),
        ("(BM / WM) * (BM / WM) * 32 == 128", 1),
    ] {
        assert_eq!(ev(text), want, "{text}");
    }
}

#[test]
fn every_error_says_what_is_wrong() {
    for (text, says) in [
        ("9223372036854775807 + 1", "overflow"),
        ("-9223372036854775807 - 2", "overflow"),
        ("4611686018427387904 * 2", "overflow"),
        ("99999999999999999999", "number too large"),
        ("BM / ZERO", "division by zero"),
        ("BM % ZERO", "division by zero"),
        ("BQ + 1", "'BQ' is not a constant"),
        ("(BM", "missing ')'"),
        ("(BM + 1 2", "missing ')'"),
        ("", "not a complete expression"),
        ("1 +", "not a complete expression"),
        (")", "not a complete expression"),
        ("BM WM", "unexpected text after"),
        ("1 2", "unexpected text after"),
        ("1 ? 2 : 3", "unexpected '?'"),
        ("BM $ 2", "unexpected '$'"),
    ] {
        let e = err(text);
        assert!(e.contains(says), "{text}: {e}");
    }
    assert_eq!(ev("9223372036854775807"), i64::MAX);
}

#[test]
fn check_all_names_the_first_constraint_that_fails() {
    assert_eq!(check_all(&["BM > WM", "BM % WM == 0", "5"], &constants), Ok(()));
    assert_eq!(check_all(&[] as &[&str], &constants), Ok(()));
    assert_eq!(check_all(&["BM > WM", "BM < WM", "BM == 0"], &constants), Err("violates BM < WM".into()));
    assert_eq!(check_all(&["BM != 128"], &constants), Err("violates BM != 128".into()));
    assert!(check_all(&["BM > WM", "NOPE == 1"], &constants).unwrap_err().contains("'NOPE'"));
    assert_eq!(check_all(&["BM != 64"], &constants), Ok(()), "!= is not ==");
}
